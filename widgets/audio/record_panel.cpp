#include "widgets/audio/record_panel.h"

#include "core/data/audio_files.h"
#include "core/data/utterances.h"
#include "widgets/audio/pcm.h"
#include "widgets/audio/spectrogram_image.h"
#include "widgets/files/atomic_write.h"

#include <nlohmann/json.hpp>

#include <QAudioSource>
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMediaDevices>
#include <QMimeData>
#include <QProgressBar>
#include <QProgressDialog>
#include <QPushButton>
#include <QSoundEffect>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <map>
#include <set>

namespace fb::widgets {

namespace {

const QString kBackground = QStringLiteral("background");
const QString kUnknown = QStringLiteral("unknown");
// A take or a file longer than this is cut into several clips; a shorter one is one clip.
constexpr double kOneClipSeconds = 1.5;

} // namespace

QString clipNamePart(const QString &name)
{
    QString out;
    for (const QChar c : name.trimmed().toLower()) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            out += c;
        else if ((c == '-' || c == ' ' || c == '_' || c == '.') && !out.isEmpty() &&
                 !out.endsWith('-'))
            out += '-';
    }
    while (out.endsWith('-'))
        out.chop(1);
    return out.left(32);
}

RecordPanel::RecordPanel(QWidget *parent)
    : QWidget(parent)
    , m_folder(new QLineEdit)
    , m_speaker(new QLineEdit)
    , m_newClass(new QLineEdit)
    , m_chooseFolder(new QPushButton(tr("Choose…")))
    , m_addClass(new QPushButton(tr("Add")))
    , m_removeClass(new QPushButton(tr("Remove")))
    , m_hold(new QPushButton(tr("Hold to record")))
    , m_long(new QPushButton(tr("Record a long take")))
    , m_import(new QPushButton(tr("Import files…")))
    , m_train(new QPushButton(tr("Train on this")))
    , m_play(new QPushButton(tr("Play")))
    , m_delete(new QPushButton(tr("Delete")))
    , m_relabel(new QComboBox)
    , m_classes(new QListWidget)
    , m_clipList(new QListWidget)
    , m_status(new QLabel)
    , m_detail(new QLabel)
    , m_detailTitle(new QLabel)
    , m_level(new QProgressBar)
    , m_player(new QSoundEffect(this))
{
    setAcceptDrops(true);
    m_folder->setObjectName("recordFolder");
    m_folder->setToolTip(tr("The folder of clips: {class}_{speaker}_{take}.wav, what the "
                            "spoken-digits example's audio_folder reads"));
    m_speaker->setObjectName("recordSpeaker");
    m_speaker->setMaximumWidth(140);
    m_speaker->setToolTip(tr("Whose voice: part of every clip's name, so that training can hold "
                             "out whole speakers"));
    const QString user = clipNamePart(qEnvironmentVariable("USER"));
    m_speaker->setText(user.isEmpty() ? QStringLiteral("me") : user);
    m_newClass->setObjectName("recordNewClass");
    m_newClass->setPlaceholderText(tr("a word, e.g. seven"));
    m_removeClass->setObjectName("recordRemoveClass");
    m_removeClass->setEnabled(false);
    m_classes->setObjectName("recordClasses");
    m_classes->setMaximumWidth(200);
    m_clipList->setObjectName("recordClips");
    m_clipList->setViewMode(QListView::IconMode);
    m_clipList->setIconSize(QSize(101, 40));
    m_clipList->setGridSize(QSize(118, 70));
    m_clipList->setResizeMode(QListView::Adjust);
    m_clipList->setMovement(QListView::Static);
    m_clipList->setSelectionMode(QAbstractItemView::SingleSelection);
    m_hold->setObjectName("recordHold");
    m_long->setObjectName("recordLong");
    m_long->setCheckable(true);
    // As wide as its widest text, so that it stays under the pointer when the text changes.
    int wide = 0;
    for (const QString &t : {tr("Record a long take"), tr("Record background"), tr("Stop and cut")})
        wide = std::max(wide, m_long->fontMetrics().horizontalAdvance(t));
    m_long->setMinimumWidth(wide + 24);
    m_import->setObjectName("recordImport");
    m_train->setObjectName("recordTrain");
    m_train->setToolTip(tr("A pipeline from the spoken-digits example, reading this folder, "
                           "with one output per class; it opens and starts training"));
    m_play->setObjectName("recordPlay");
    m_delete->setObjectName("recordDelete");
    m_delete->setToolTip(tr("Move the clip to the trash"));
    m_relabel->setObjectName("recordRelabel");
    m_relabel->setToolTip(tr("Move the clip to another class"));
    m_status->setObjectName("recordStatus");
    m_status->setWordWrap(true);
    // Two lines always: a message that shrinks to one must not move the buttons under the
    // pointer in the middle of a take.
    m_status->setMinimumHeight(2 * m_status->fontMetrics().lineSpacing() + 2);
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_detail->setObjectName("recordDetail");
    m_detail->setMinimumSize(202, 120);
    m_detail->setAlignment(Qt::AlignCenter);
    m_detailTitle->setObjectName("recordDetailTitle");
    m_level->setObjectName("recordLevel");
    m_level->setRange(-60, 0);
    m_level->setValue(-60);
    m_level->setFormat(tr("%v dB"));
    m_level->setMaximumWidth(160);
    m_level->setToolTip(tr("The microphone's level while recording (a word should reach -20 dB)"));

    // The microphone: 16 kHz mono when the device takes it; anything else is converted.
    m_input = QMediaDevices::defaultAudioInput();
    if (!m_input.isNull()) {
        m_format = m_input.preferredFormat();
        QAudioFormat wanted = m_format;
        wanted.setSampleRate(kRate);
        wanted.setChannelCount(1);
        wanted.setSampleFormat(QAudioFormat::Int16);
        if (m_input.isFormatSupported(wanted)) m_format = wanted;
    }
    for (QPushButton *b : {m_hold, m_long}) {
        b->setEnabled(canRecord());
        b->setToolTip(recordTip());
    }

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Folder:")));
    top->addWidget(m_folder, 1);
    top->addWidget(m_chooseFolder);
    top->addWidget(new QLabel(tr("Speaker:")));
    top->addWidget(m_speaker);
    top->addWidget(m_import);
    top->addWidget(m_train);
    auto *left = new QVBoxLayout;
    left->addWidget(new QLabel(tr("Classes")));
    left->addWidget(m_classes, 1);
    auto *add = new QHBoxLayout;
    add->addWidget(m_newClass, 1);
    add->addWidget(m_addClass);
    add->addWidget(m_removeClass);
    left->addLayout(add);
    auto *takeRow = new QHBoxLayout;
    takeRow->addWidget(m_hold);
    takeRow->addWidget(m_long);
    takeRow->addWidget(m_level);
    takeRow->addStretch(1);
    auto *detail = new QVBoxLayout;
    detail->addWidget(m_detailTitle);
    detail->addWidget(m_detail, 1);
    auto *clipButtons = new QHBoxLayout;
    clipButtons->addWidget(m_play);
    clipButtons->addWidget(m_relabel, 1);
    clipButtons->addWidget(m_delete);
    detail->addLayout(clipButtons);
    auto *middle = new QHBoxLayout;
    middle->addWidget(m_clipList, 1);
    middle->addLayout(detail);
    auto *right = new QVBoxLayout;
    right->addLayout(takeRow);
    right->addLayout(middle, 1);
    auto *body = new QHBoxLayout;
    body->addLayout(left);
    body->addLayout(right, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_status);
    layout->addLayout(body, 1);

    connect(m_chooseFolder, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("The folder of clips"), folder());
        if (!dir.isEmpty()) setFolder(dir);
    });
    connect(m_folder, &QLineEdit::editingFinished, this, [this] { rescan(); });
    auto addTyped = [this] {
        QString why;
        if (addClass(m_newClass->text(), &why))
            m_newClass->clear();
        else
            setStatus(why);
    };
    connect(m_addClass, &QPushButton::clicked, this, addTyped);
    connect(m_newClass, &QLineEdit::returnPressed, this, addTyped);
    connect(m_classes, &QListWidget::currentRowChanged, this, &RecordPanel::showClass);
    connect(m_removeClass, &QPushButton::clicked, this, [this] {
        QString why;
        if (!removeClass(currentClass(), &why)) setStatus(why);
    });
    connect(m_hold, &QPushButton::pressed, this, [this] {
        if (recording()) return; // a long take is running: it ends with its own button
        QString why;
        if (!startTake(&why))
            setStatus(why);
        else
            m_long->setEnabled(false); // one take at a time
    });
    connect(m_hold, &QPushButton::released, this, [this] {
        if (m_long->isChecked()) return;
        stopTake();
        m_long->setEnabled(canRecord());
    });
    connect(m_long, &QPushButton::toggled, this, [this](bool on) {
        if (on) {
            QString why;
            if (!startTake(&why)) {
                setStatus(why);
                const QSignalBlocker block(m_long);
                m_long->setChecked(false);
            }
        } else {
            stopTake();
        }
        m_hold->setEnabled(canRecord() && !m_long->isChecked()); // one take at a time
        labelTakeButtons();
    });
    connect(m_import, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Recordings to import into %1").arg(currentClass()), {},
            tr("Recordings (%1);;All files (*)").arg(recordingPatterns().join(' ')));
        if (!files.isEmpty()) importPaths(files);
    });
    connect(m_train, &QPushButton::clicked, this, [this] {
        QString why;
        const QString pipeline = writePipeline(&why);
        if (pipeline.isEmpty()) {
            setStatus(why);
            return;
        }
        emit trainRequested(pipeline);
    });
    connect(m_clipList, &QListWidget::currentRowChanged, this, [this](int row) {
        const QList<int> shown = shownClips();
        showClip(row >= 0 && row < shown.size() ? shown[row] : -1);
    });
    auto selected = [this] {
        const QList<int> shown = shownClips();
        const int row = m_clipList->currentRow();
        return row >= 0 && row < shown.size() ? shown[row] : -1;
    };
    connect(m_play, &QPushButton::clicked, this, [this, selected] { play(selected()); });
    connect(m_clipList, &QListWidget::itemDoubleClicked, this,
            [this, selected] { play(selected()); });
    connect(m_delete, &QPushButton::clicked, this, [this, selected] {
        QString why;
        if (selected() >= 0 && !removeClip(selected(), &why)) setStatus(why);
    });
    connect(m_relabel, &QComboBox::activated, this, [this, selected](int i) {
        QString why;
        const int clip = selected();
        if (clip >= 0 && m_relabel->itemText(i) != m_clips[clip].label &&
            !relabel(clip, m_relabel->itemText(i), &why))
            setStatus(why);
    });

    setFolder(defaultFolder());
    labelTakeButtons();
    setStatus(tr("Add the words to recognise, pick one, and record it: hold the button for one "
                 "word, or record a long take saying it again and again (each word becomes a "
                 "1-second clip). Record background noise too. Dropped audio files and folders "
                 "are imported."));
}

void RecordPanel::labelTakeButtons()
{
    const QString c = recording() ? m_takeClass : currentClass();
    m_hold->setText(c == kBackground ? tr("Hold to record noise") : tr("Hold to record"));
    if (m_long->isChecked())
        m_long->setText(tr("Stop and cut"));
    else
        m_long->setText(c == kBackground ? tr("Record background") : tr("Record a long take"));
}

RecordPanel::~RecordPanel()
{
    if (m_source) m_source->stop();
}

QString RecordPanel::defaultFolder()
{
    return QDir::homePath() + QStringLiteral("/.local/share/flowbench/recordings/my_words");
}

void RecordPanel::setFolder(const QString &dir)
{
    m_folder->setText(QDir::cleanPath(dir));
    rescan();
}

QString RecordPanel::folder() const
{
    QString f = m_folder->text().trimmed();
    if (f.startsWith(QStringLiteral("~/"))) f = QDir::homePath() + f.mid(1);
    return QDir::cleanPath(f);
}

void RecordPanel::setSpeaker(const QString &name)
{
    m_speaker->setText(name);
}

QString RecordPanel::speaker() const
{
    const QString s = clipNamePart(m_speaker->text());
    return s.isEmpty() ? QStringLiteral("me") : s;
}

QStringList RecordPanel::classes() const
{
    return m_words + QStringList{kBackground, kUnknown};
}

bool RecordPanel::addClass(const QString &name, QString *why)
{
    const QString label = clipNamePart(name);
    if (label.isEmpty()) {
        if (why)
            *why = name.trimmed().isEmpty()
                       ? tr("Type the word to add first.")
                       : tr("'%1' has no letters or digits to name a class by.").arg(name);
        return false;
    }
    bool saved = true;
    if (!classes().contains(label)) {
        m_words << label;
        m_words.sort();
        // Kept in the folder, so that a class with no clips yet is still there next time.
        saved = saveClassList();
    }
    refreshClasses();
    selectClass(label);
    if (!saved)
        setStatus(tr("'%1' is added, but could not be saved in %2: it will be gone when the "
                     "folder is opened again unless it has clips by then.")
                      .arg(label, folder()));
    return true;
}

bool RecordPanel::removeClass(const QString &name, QString *why)
{
    const QString label = clipNamePart(name);
    if (label == kBackground || label == kUnknown) {
        if (why) *why = tr("'%1' is always there: every model of words needs it.").arg(label);
        return false;
    }
    if (!m_words.contains(label)) {
        if (why) *why = tr("There is no class '%1'.").arg(name);
        return false;
    }
    if (const int n = clipCount(label)) {
        if (why)
            *why = tr("'%1' has %n clip(s): delete them or move them to another class first.",
                      nullptr, n)
                       .arg(label);
        return false;
    }
    m_words.removeAll(label);
    const bool saved = saveClassList();
    refreshClasses();
    setStatus(saved ? tr("'%1' removed.").arg(label)
                    : tr("'%1' removed, but %2 could not be written: it comes back when the "
                         "folder is opened again.")
                          .arg(label, QDir(folder()).filePath(kClassListFile)));
    emit clipsChanged();
    return true;
}

int RecordPanel::clipCount(const QString &label) const
{
    return int(std::count_if(m_clips.begin(), m_clips.end(),
                             [&](const Clip &c) { return c.label == label; }));
}

void RecordPanel::keepWhenEmptied(const QString &label)
{
    if (m_words.contains(label) && clipCount(label) == 0) saveClassList();
}

void RecordPanel::updateRemoveClass()
{
    const QString c = currentClass();
    const bool word = c != kBackground && c != kUnknown && !c.isEmpty();
    const int n = word ? clipCount(c) : 0;
    m_removeClass->setEnabled(word && n == 0 && !recording());
    m_removeClass->setToolTip(
        !word ? tr("Background and unknown are always there")
        : n ? tr("'%1' has %n clip(s): delete them or move them to another class first", nullptr, n)
                  .arg(c)
            : tr("Remove the class '%1' (it has no clips)").arg(c));
}

bool RecordPanel::saveClassList() const
{
    const QString dir = folder();
    if (!QDir().mkpath(dir)) return false;
    return bool(writeFileAtomically(QDir(dir).filePath(kClassListFile),
                                    (m_words.join('\n') + '\n').toStdString(), "the class list"));
}

void RecordPanel::selectClass(const QString &name)
{
    const int row = int(classes().indexOf(name));
    if (row >= 0) m_classes->setCurrentRow(row);
}

QString RecordPanel::currentClass() const
{
    return classes().value(std::max(0, m_classes->currentRow()));
}

bool RecordPanel::canRecord() const
{
    return !m_input.isNull();
}

QString RecordPanel::recordTip() const
{
    if (m_input.isNull())
        return tr("No microphone: this machine has no audio input device (Qt Multimedia lists "
                  "none); import recordings instead");
    return tr("Records from %1").arg(m_input.description());
}

QString RecordPanel::status() const
{
    return m_status->text();
}

void RecordPanel::setStatus(const QString &text)
{
    m_status->setText(text);
}

bool RecordPanel::startTake(QString *why)
{
    if (m_source) return true;
    if (!canRecord()) {
        if (why) *why = recordTip();
        return false;
    }
    m_recorded.clear();
    m_source = new QAudioSource(m_input, m_format, this);
    QIODevice *io = m_source->start();
    if (!io) {
        if (why) *why = tr("The microphone could not be opened (%1)").arg(m_input.description());
        m_source->deleteLater();
        m_source = nullptr;
        return false;
    }
    m_takeTime.start();
    m_io = io;
    // The take belongs to the class it started with: the class list waits until it ends.
    m_takeClass = currentClass();
    m_classes->setEnabled(false);
    m_newClass->setEnabled(false);
    m_addClass->setEnabled(false);
    m_removeClass->setEnabled(false);
    m_import->setEnabled(false);
    connect(io, &QIODevice::readyRead, this, [this, io] {
        const QByteArray fresh = io->readAll();
        m_recorded += fresh;
        // The level of what just came, for the meter.
        const int bytes = std::max(1, m_format.bytesPerSample());
        float peak = 0;
        for (qsizetype i = 0; i + bytes <= fresh.size(); i += bytes)
            peak = std::max(peak, std::abs(m_format.normalizedSampleValue(fresh.constData() + i)));
        // Peak level, falling back slowly (about 20 dB a second), as a meter does.
        const int now = int(std::max(-60.0, 20.0 * std::log10(std::max(peak, 1e-6f))));
        m_level->setValue(std::max(now, m_level->value() - 2));
        setStatus(tr("Recording '%1' for %2 s…")
                      .arg(m_takeClass)
                      .arg(double(m_takeTime.elapsed()) / 1000.0, 0, 'f', 1));
    });
    setStatus(currentClass() == kBackground
                  ? tr("Recording background noise: keep quiet, let the room be heard.")
                  : tr("Recording '%1': say it, pause, say it again…").arg(currentClass()));
    return true;
}

std::vector<float> RecordPanel::takeSamples(data::FlatPeaks &flat) const
{
    std::vector<float> mono = monoFromPcm(m_recorded, m_format);
    // Flat tops counted in the take as the microphone gave it, before any resampling.
    flat.push(mono.data(), mono.size());
    if (m_format.sampleRate() == kRate) return mono;
    auto at = data::monoAt(mono, 1, m_format.sampleRate(), "microphone", kRate);
    return at.ok() ? at.value() : std::vector<float>{};
}

void RecordPanel::stopTake()
{
    if (!m_source) return;
    // What the device still holds, then the take.
    if (m_io) m_recorded += m_io->readAll();
    m_io = nullptr;
    m_source->stop();
    m_source->deleteLater();
    m_source = nullptr;
    m_level->setValue(-60);
    for (QWidget *w : std::initializer_list<QWidget *>{m_classes, m_newClass, m_addClass, m_import})
        w->setEnabled(true);
    updateRemoveClass();
    if (m_long->isChecked()) {
        const QSignalBlocker block(m_long);
        m_long->setChecked(false);
    }
    labelTakeButtons();
    data::FlatPeaks flat;
    const std::vector<float> x = takeSamples(flat);
    if (x.empty()) {
        setStatus(tr("Nothing was recorded: hold the button while you speak."));
        return;
    }
    const QString label = m_takeClass;
    const QString tooLoud =
        flat.share() >= data::FlatPeaks::kClipped
            ? QLatin1Char(' ') + tr("The take is clipped, cut off flat at its loudest: too loud "
                                    "for the microphone. Turn its input gain down or speak "
                                    "farther from it, and record again.")
            : QString();
    const int saved = addTake(x, label, speaker());
    if (saved > 0)
        setStatus(tr("%n clip(s) of '%1' saved from a %2 s take.", nullptr, saved)
                      .arg(label)
                      .arg(double(x.size()) / kRate, 0, 'f', 1) +
                  tooLoud);
    else if (m_lastMessage.isEmpty())
        setStatus(label == kBackground
                      ? tr("The take was shorter than one second: record background for longer.")
                      : tr("No word was heard in the take (%1 s): speak louder or closer to "
                           "the microphone.")
                            .arg(double(x.size()) / kRate, 0, 'f', 1));
    else
        setStatus(m_lastMessage);
}

int RecordPanel::nextTake(const QString &label, const QString &who) const
{
    int take = 0;
    for (const Clip &c : m_clips)
        if (c.label == label && c.speaker == who) take = std::max(take, c.take);
    return take + 1;
}

int RecordPanel::addTake(const std::vector<float> &x, const QString &label, const QString &who)
{
    const int saved = saveClips(x, label, who);
    if (saved > 0) {
        refreshClasses();
        selectClass(label);
        refreshClips();
        m_clipList->setCurrentRow(m_clipList->count() - 1);
        emit clipsChanged();
    }
    return saved;
}

int RecordPanel::saveClips(const std::vector<float> &x, const QString &label, const QString &who)
{
    m_lastMessage.clear();
    std::vector<std::vector<float>> clips;
    if (label == kBackground) {
        clips = data::cutWindows(x, kClipSamples);
    } else if (double(x.size()) <= kOneClipSeconds * kRate) {
        // One word: centred on what was said (all of it, from the first sound to the last).
        const auto words = data::findUtterances(x, kRate);
        if (!words.empty())
            clips.push_back(
                data::clipAround(x, (words.front().start + words.back().end) / 2, kClipSamples));
    } else {
        clips = data::cutUtterances(x, kRate, kClipSamples);
    }
    if (clips.empty()) return 0;
    const QString dir = folder();
    if (!QDir().mkpath(dir)) {
        m_lastMessage = tr("Could not make the folder %1").arg(dir);
        return 0;
    }
    if (!classes().contains(label)) {
        m_words << label;
        m_words.sort();
        // Kept as a typed one is, so that it stays when its clips are all deleted.
        saveClassList();
    }
    int take = nextTake(label, who), saved = 0;
    for (const auto &clip : clips) {
        QString path;
        do {
            path = QStringLiteral("%1/%2_%3_%4.wav").arg(dir, label, who).arg(take++);
        } while (QFileInfo::exists(path));
        const Status ok = data::writeWav(path.toStdString(), clip, kRate);
        if (!ok) {
            m_lastMessage = QString::fromStdString(ok.error().str());
            break;
        }
        m_clips.push_back({path, label, who, take - 1});
        ++saved;
    }
    return saved;
}

int RecordPanel::importPaths(const QStringList &paths)
{
    // (file, class) pairs: a folder's files in subfolders take the subfolder's name.
    QList<QPair<QString, QString>> files;
    const QStringList patterns = recordingPatterns();
    for (const QString &p : paths) {
        const QFileInfo info(p);
        if (info.isDir()) {
            QDirIterator it(p, QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QFileInfo f(it.next());
                if (!QDir::match(patterns, f.fileName())) continue;
                // Speech Commands' own spellings name the fixed classes too.
                QString sub = clipNamePart(f.dir().dirName());
                if (sub == QStringLiteral("background-noise") || sub == QStringLiteral("noise") ||
                    sub == QStringLiteral("silence"))
                    sub = kBackground;
                if (sub == QStringLiteral("unknown") || sub == QStringLiteral("other"))
                    sub = kUnknown;
                const bool nested =
                    QDir::cleanPath(f.absolutePath()) != QDir::cleanPath(info.absoluteFilePath());
                files.append({f.filePath(), nested && !sub.isEmpty() ? sub : currentClass()});
            }
        } else {
            files.append({p, currentClass()});
        }
    }
    std::sort(files.begin(), files.end());
    int saved = 0;
    QStringList bad;
    // A big folder takes a while: progress, and a way out (the clips saved so far stay).
    QProgressDialog progress(tr("Importing recordings…"), tr("Stop"), 0, int(files.size()), this);
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(800);
    QString lastLabel;
    QStringList clipped; // files cut off flat at their loudest (recorded too loud)
    for (int i = 0; i < files.size(); ++i) {
        const auto &[path, label] = files[i];
        progress.setValue(i);
        if (progress.wasCanceled()) {
            bad << tr("stopped after %1 of %2 files").arg(i).arg(files.size());
            break;
        }
        data::FlatPeaks flat;
        auto x = data::readRecording(path.toStdString(), kRate, &flat);
        if (!x.ok()) {
            bad << QString::fromStdString(x.error().str());
            continue;
        }
        if (flat.share() >= data::FlatPeaks::kClipped) clipped << QFileInfo(path).fileName();
        QString who = clipNamePart(QFileInfo(path).completeBaseName());
        if (who.isEmpty()) who = QStringLiteral("import");
        who = QStringLiteral("file-") + who.left(24);
        m_lastMessage.clear();
        const int n = saveClips(x.value(), label, who);
        if (n == 0 && !m_lastMessage.isEmpty())
            bad << m_lastMessage;
        else if (n == 0)
            bad << tr("%1: no word heard in it").arg(path);
        saved += n;
        if (n > 0) lastLabel = label;
    }
    progress.setValue(int(files.size()));
    // The list is drawn once, at the end, on the last class that got clips.
    refreshClasses();
    if (!lastLabel.isEmpty()) selectClass(lastLabel);
    refreshClips();
    if (saved > 0) emit clipsChanged();
    auto some = [](const QStringList &l) {
        return l.mid(0, 3).join(QStringLiteral("; ")) +
               (l.size() > 3 ? QStringLiteral("; …") : QString());
    };
    QString text;
    if (files.isEmpty())
        text = tr("No recordings to import there (WAV, FLAC, OGG, AIFF, AU).");
    else if (bad.isEmpty())
        text = tr("%n clip(s) imported from %1 file(s).", nullptr, saved).arg(files.size());
    else
        text = tr("%n clip(s) imported; %1 file(s) could not be used: %2", nullptr, saved)
                   .arg(bad.size())
                   .arg(some(bad));
    // A clipped recording teaches a model less and is heard worse (the spoken-digits example
    // named 16 to 32 points fewer of a never-heard voice's digits clipped:
    // bench/results/clipping-20261207.md).
    if (!clipped.isEmpty())
        text += QLatin1Char(' ') +
                tr("%n file(s) clipped, cut off flat at the loudest (recorded too loud; a model "
                   "learns less from them): %1",
                   nullptr, int(clipped.size()))
                    .arg(some(clipped));
    setStatus(text);
    return saved;
}

void RecordPanel::rescan()
{
    m_clips.clear();
    m_pictures.clear(); // the files may have changed outside the panel
    // The words: those of the folder's class list and its clips' (and, while the folder is the
    // same, those added here that could not be saved in it).
    std::set<QString> labels;
    if (folder() == m_scanned) labels.insert(m_words.begin(), m_words.end());
    m_scanned = folder();
    QFile list(QDir(m_scanned).filePath(kClassListFile));
    if (list.open(QIODevice::ReadOnly | QIODevice::Text)) {
        for (const QString &line : QString::fromUtf8(list.readAll()).split('\n')) {
            const QString label = clipNamePart(line);
            if (!label.isEmpty()) labels.insert(label);
        }
    }
    const data::FilePattern pattern("{label}_{speaker}_{index}");
    QDirIterator it(folder(), {"*.wav"}, QDir::Files);
    while (it.hasNext()) {
        const QFileInfo f(it.next());
        std::string label, who;
        if (!pattern.match(f.completeBaseName().toStdString(), label, who)) continue;
        bool number = false;
        const int take = f.completeBaseName().section('_', -1).toInt(&number);
        m_clips.push_back({f.filePath(), QString::fromStdString(label), QString::fromStdString(who),
                           number ? take : 0});
        labels.insert(QString::fromStdString(label));
    }
    std::sort(m_clips.begin(), m_clips.end(), [](const Clip &a, const Clip &b) {
        return std::tie(a.label, a.speaker, a.take) < std::tie(b.label, b.speaker, b.take);
    });
    labels.erase(kBackground);
    labels.erase(kUnknown);
    m_words = QStringList(labels.begin(), labels.end());
    refreshClasses();
    refreshClips();
    emit clipsChanged();
}

void RecordPanel::refreshClasses()
{
    // The class shown, by the name its row holds: classes() may already have a new word before
    // it, which moves the rest down a row.
    const QListWidgetItem *shown = m_classes->currentItem();
    const QString current = shown ? shown->data(Qt::UserRole).toString() : QString();
    std::map<QString, int> counts;
    for (const Clip &c : m_clips)
        ++counts[c.label];
    const QSignalBlocker block(m_classes);
    m_classes->clear();
    for (const QString &c : classes()) {
        auto *item = new QListWidgetItem(QStringLiteral("%1  (%2)").arg(c).arg(counts[c]));
        item->setData(Qt::UserRole, c);
        item->setToolTip(c == kBackground
                             ? tr("Noise of the room and the microphone, no words: recorded "
                                  "continuously and cut into 1-second windows")
                         : c == kUnknown ? tr("Other words, which the model must not mistake for "
                                              "yours")
                                         : tr("%n clip(s) of '%1'", nullptr, counts[c]).arg(c));
        m_classes->addItem(item);
    }
    const int row = int(classes().indexOf(current));
    m_classes->setCurrentRow(row >= 0 ? row : 0);
    m_relabel->clear();
    m_relabel->addItems(classes());
    // Its signal was blocked: where the class shown is another one now (there was none
    // before), its clips and buttons follow here.
    if (currentClass() != current)
        showClass();
    else
        updateRemoveClass(); // the count may have changed (showClass does it otherwise)
}

void RecordPanel::showClass()
{
    refreshClips();
    labelTakeButtons();
    updateRemoveClass();
}

QList<int> RecordPanel::shownClips() const
{
    QList<int> shown;
    const QString c = currentClass();
    for (int i = 0; i < m_clips.size(); ++i)
        if (m_clips[i].label == c) shown << i;
    return shown;
}

const RecordPanel::Picture &RecordPanel::pictureOf(const QString &path)
{
    // Each clip is read and drawn once, not again at every change of class or list.
    auto it = m_pictures.find(path);
    if (it == m_pictures.end()) {
        Picture p;
        auto x = data::readRecording(path.toStdString(), kRate);
        if (x.ok())
            p.image = spectrogramImage(x.value(), kRate);
        else
            p.error = QString::fromStdString(x.error().str());
        it = m_pictures.insert(path, p);
    }
    return *it;
}

void RecordPanel::refreshClips()
{
    const QSignalBlocker block(m_clipList);
    m_clipList->clear();
    for (int i : shownClips()) {
        const Clip &c = m_clips[i];
        const Picture &p = pictureOf(c.path);
        auto *item = new QListWidgetItem(QIcon(QPixmap::fromImage(p.image.scaled(101, 40))),
                                         QStringLiteral("%1 %2").arg(c.speaker).arg(c.take));
        item->setToolTip(p.error.isEmpty() ? c.path : p.error);
        m_clipList->addItem(item);
    }
    showClip(-1);
}

void RecordPanel::showClip(int clip)
{
    const bool any = clip >= 0 && clip < m_clips.size();
    for (QWidget *w : std::initializer_list<QWidget *>{m_play, m_delete, m_relabel})
        w->setEnabled(any);
    if (!any) {
        m_detail->clear();
        m_detailTitle->setText(
            tr("%n clip(s) of '%1'", nullptr, int(shownClips().size())).arg(currentClass()));
        return;
    }
    const Clip &c = m_clips[clip];
    m_detailTitle->setText(QFileInfo(c.path).fileName());
    const Picture &p = pictureOf(c.path);
    if (!p.error.isEmpty()) {
        m_detail->setText(p.error);
        return;
    }
    m_detail->setPixmap(QPixmap::fromImage(p.image.scaled(202, 120)));
    m_relabel->setCurrentIndex(int(classes().indexOf(c.label)));
}

bool RecordPanel::relabel(int clip, const QString &label, QString *why)
{
    if (clip < 0 || clip >= m_clips.size()) return false;
    const QString to = clipNamePart(label);
    if (to.isEmpty() || !classes().contains(to)) {
        if (why) *why = tr("There is no class '%1'; add it first.").arg(label);
        return false;
    }
    Clip c = m_clips[clip];
    const int take = nextTake(to, c.speaker);
    const QString path = QStringLiteral("%1/%2_%3_%4.wav")
                             .arg(QFileInfo(c.path).absolutePath(), to, c.speaker)
                             .arg(take);
    if (QFileInfo::exists(path) || !QFile::rename(c.path, path)) {
        if (why) *why = tr("Could not rename %1 to %2").arg(c.path, path);
        return false;
    }
    m_clips[clip] = {path, to, c.speaker, take};
    m_pictures.insert(path, m_pictures.take(c.path)); // the same sound under its new name
    keepWhenEmptied(c.label);
    refreshClasses();
    refreshClips();
    setStatus(tr("%1 is now a clip of '%2'.").arg(QFileInfo(c.path).fileName(), to));
    emit clipsChanged();
    return true;
}

bool RecordPanel::removeClip(int clip, QString *why)
{
    if (clip < 0 || clip >= m_clips.size()) return false;
    const QString path = m_clips[clip].path;
    // To the trash, where the desktop has one, so a slip of the finger loses nothing.
    QFile file(path);
    // Where there is none (no trash on that disk), the clip stays: a delete that cannot be
    // undone is the person's to make, in their file manager.
    if (!file.moveToTrash()) {
        if (why)
            *why = tr("Could not move %1 to the trash (%2); it is still there. Delete it in a "
                      "file manager if you mean to.")
                       .arg(path, file.errorString());
        return false;
    }
    m_trashed = file.fileName(); // where it went: QFile follows the move
    m_pictures.remove(path);
    const QString label = m_clips[clip].label;
    m_clips.removeAt(clip);
    keepWhenEmptied(label);
    const int row = m_clipList->currentRow();
    refreshClasses();
    refreshClips();
    m_clipList->setCurrentRow(std::min(row, m_clipList->count() - 1));
    setStatus(tr("%1 moved to the trash (%2).").arg(QFileInfo(path).fileName(), m_trashed));
    emit clipsChanged();
    return true;
}

void RecordPanel::play(int clip)
{
    if (clip < 0 || clip >= m_clips.size()) return;
    m_player->setSource(QUrl::fromLocalFile(m_clips[clip].path));
    m_player->play();
}

QString RecordPanel::writePipeline(QString *why)
{
    auto refuse = [why](const QString &text) {
        if (why) *why = text;
        return QString();
    };
    std::map<QString, int> counts;
    std::map<QString, std::set<QString>> speakersOf; // per class
    for (const Clip &c : m_clips) {
        ++counts[c.label];
        speakersOf[c.label].insert(c.speaker);
    }
    // Whole speakers held out only where every class has enough of them that the training side
    // keeps some of each (a fifth of the speakers is held out).
    size_t fewest = SIZE_MAX;
    for (const auto &[label, who] : speakersOf)
        fewest = std::min(fewest, who.size());
    // Labels that are all whole numbers are class numbers, 0 to the largest (audio_folder).
    bool numbers = true;
    int largest = -1;
    for (const auto &[label, n] : counts) {
        bool ok = false;
        const int v = label.toInt(&ok);
        numbers = numbers && ok && v >= 0;
        largest = std::max(largest, v);
    }
    const int outputs = numbers ? largest + 1 : int(counts.size());
    int words = 0;
    for (const auto &[label, n] : counts)
        words += label != kBackground && label != kUnknown;
    if (words == 0 || counts.size() < 2)
        return refuse(tr("Record at least one word and one other class (background noise, other "
                         "words or a second word) before training."));
    for (const auto &[label, n] : counts)
        if (n < 5)
            return refuse(tr("'%1' has %n clip(s): record at least 5 of each class (20 or more "
                             "make a better model).",
                             nullptr, n)
                              .arg(label));
    QFile in(m_template);
    if (!in.open(QIODevice::ReadOnly))
        return refuse(tr("The pipeline template %1 cannot be read").arg(m_template));
    const QByteArray text = in.readAll();
    auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array())
        return refuse(tr("The pipeline template %1 is not a pipeline").arg(m_template));
    // The template's own nodes, by id (resources/examples/spoken_digits.json): its two
    // sources read the folder, and its output layer gives as many classes as have clips.
    int found = 0;
    for (auto &node : doc["nodes"]) {
        if (!node.is_object() || !node.contains("params") || !node["params"].is_object()) continue;
        const std::string id = node.value("id", "");
        auto &params = node["params"];
        if (id == "train_data" || id == "test_data") {
            params["path"] = folder().toStdString();
            params["labels"] = "pattern";
            params["pattern"] = "{label}_{speaker}_{index}";
            params["validation_speakers"] = "";
            // Five or more speakers in every class: whole speakers are held out, so validation
            // measures voices the model did not hear; fewer: a random fifth of the clips.
            params["split_by_speaker"] = fewest >= 5;
            ++found;
        }
        if (id == "fc2") {
            params["out_features"] = outputs;
            ++found;
        }
    }
    const bool sized = found == 3;
    if (!sized)
        return refuse(tr("The pipeline template %1 lacks the nodes train_data, test_data and fc2 "
                         "of the spoken-digits example")
                          .arg(m_template));
    doc["description"] = tr("Keyword spotting on the clips recorded in %1 (%2 classes), made by "
                            "the Record panel from the spoken-digits example")
                             .arg(folder())
                             .arg(counts.size())
                             .toStdString();
    const QString path = folder() + QStringLiteral("/pipeline.json");
    if (const Status ok = writeFileAtomically(path, doc.dump(2) + "\n", "the pipeline"); !ok)
        return refuse(QString::fromStdString(ok.error().str()));
    return path;
}

void RecordPanel::dragEnterEvent(QDragEnterEvent *e)
{
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void RecordPanel::dropEvent(QDropEvent *e)
{
    QStringList paths;
    for (const QUrl &u : e->mimeData()->urls())
        if (u.isLocalFile()) paths << u.toLocalFile();
    if (paths.isEmpty()) return;
    e->acceptProposedAction();
    importPaths(paths);
}

} // namespace fb::widgets
