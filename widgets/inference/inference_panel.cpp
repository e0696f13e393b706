#include "widgets/inference/inference_panel.h"
#include "widgets/inference/tune_dialog.h"

#include "widgets/audio/pcm.h"
#include "widgets/audio/spectrogram_image.h"
#include "widgets/plots/plot_style.h"

#include <nlohmann/json.hpp>

#include "core/base/json_nesting.h"
#include "core/data/audio_files.h"
#include "core/io/run_folder.h"
#include "core/exec/listen_options.h"
#include "core/io/tuned_setting.h"
#include "widgets/run/event_fields.h"
#include <qcustomplot.h>

#include <QAudioSource>
#include <QCheckBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QMediaDevices>
#include <QTemporaryDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QDir>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QListWidget>
#include <QMimeData>
#include <QPainter>
#include <QPointer>
#include <QProcess>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fb::widgets {

namespace {

// An input's [c, h, w] as `infer --inputs` gives it; empty when it is missing or not a sane
// picture's shape (each side 1 to 16384, c 1 to 4), so nothing below sizes an image from it.
std::vector<int64_t> shapeOf(const nlohmann::json &j)
{
    const auto it = j.find("input_shape");
    if (it == j.end() || !it->is_array() || it->size() != 3) return {};
    std::vector<int64_t> shape;
    for (const auto &d : *it) {
        if (!d.is_number_integer()) return {};
        shape.push_back(d.get<int64_t>());
    }
    if (shape[0] < 1 || shape[0] > 4 || shape[1] < 1 || shape[1] > 16384 || shape[2] < 1 ||
        shape[2] > 16384)
        return {};
    return shape;
}

QVector<float> floatsOf(const std::string &base64)
{
    const QByteArray bytes = QByteArray::fromBase64(QByteArray::fromStdString(base64));
    QVector<float> v(bytes.size() / int(sizeof(float)));
    if (!v.isEmpty()) // memcpy from or to null is undefined even for 0 bytes (found by UBSan)
        std::memcpy(v.data(), bytes.constData(), size_t(v.size()) * sizeof(float));
    return v;
}

// [c, h, w] floats as a picture, stretched from their minimum to their maximum. A recording's
// features are drawn with their first row (the lowest frequencies) at the bottom.
QImage pictureOf(const QVector<float> &v, const std::vector<int64_t> &shape, bool audio)
{
    if (shape.size() != 3 || v.isEmpty()) return {};
    const int c = int(shape[0]), h = int(shape[1]), w = int(shape[2]);
    if (qsizetype(c) * h * w != v.size()) return {};
    // Over the finite values only: a NaN or an infinity (a broken model's input) shows black.
    float lo = 0, hi = 0;
    bool any = false;
    for (float x : v)
        if (std::isfinite(x)) {
            lo = any ? std::min(lo, x) : x;
            hi = any ? std::max(hi, x) : x;
            any = true;
        }
    const float scale = hi > lo ? 255.0f / (hi - lo) : 0.0f;
    auto byte = [&](int ch, int y, int x) {
        const float value = v[(ch * h + y) * w + x];
        return std::isfinite(value) ? std::clamp(int((value - lo) * scale + 0.5f), 0, 255) : 0;
    };
    QImage img(w, h, c == 3 ? QImage::Format_RGB32 : QImage::Format_Grayscale8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            if (c == 3) {
                img.setPixel(x, y, qRgb(byte(0, y, x), byte(1, y, x), byte(2, y, x)));
            } else {
                img.scanLine(y)[x] = uchar(byte(0, y, x));
            }
        }
    return audio ? img.mirrored(false, true) : img;
}

// Occlusion saliency [h, w] as a red overlay: opaque where covering the cell dropped the
// prediction most, clear where it did not drop it. Mirrored like the picture for recordings.
QImage overlayOf(const QVector<float> &map, const std::vector<int64_t> &shape, bool audio)
{
    if (shape.size() != 3 || map.size() != qsizetype(shape[1] * shape[2])) return {};
    const int h = int(shape[1]), w = int(shape[2]);
    float top = 0;
    for (float v : map)
        if (std::isfinite(v)) top = std::max(top, v);
    QImage img(w, h, QImage::Format_ARGB32);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const float m = map[y * w + x];
            const float v = top > 0 && std::isfinite(m) ? std::clamp(m / top, 0.0f, 1.0f) : 0.0f;
            img.setPixel(x, y, qRgba(255, 40, 0, int(200 * v)));
        }
    return audio ? img.mirrored(false, true) : img;
}

// The complete lines at the front of `pending` (taken out of it), each a JSON object. The
// answers come from another process: every field is then read without throwing (a missing or
// mistyped one reads as empty), so nothing reaches the event loop; a line too deeply nested to
// parse safely, or not an object, is dropped.
std::vector<nlohmann::json> takeJsonLines(QByteArray &pending)
{
    std::vector<nlohmann::json> out;
    while (true) {
        const int nl = int(pending.indexOf('\n'));
        if (nl < 0) break;
        const QByteArray line = pending.left(nl);
        pending.remove(0, nl + 1);
        if (!checkJsonNesting(std::string_view(line.constData(), size_t(line.size())), "").ok())
            continue;
        auto j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
        if (j.is_object()) out.push_back(std::move(j));
    }
    return out;
}

} // namespace

InferencePanel::InferencePanel(QWidget *parent)
    : QWidget(parent)
    , m_model(new QLineEdit)
    , m_choose(new QPushButton(tr("Choose…")))
    , m_open(new QPushButton(tr("Open files…")))
    , m_showSaliency(new QCheckBox(tr("Show what mattered")))
    , m_record(new QPushButton(tr("Hold to record")))
    , m_listenButton(new QPushButton(tr("Listen")))
    , m_threshold(new QDoubleSpinBox)
    , m_average(new QSpinBox)
    , m_with(new QLineEdit)
    , m_addWith(new QPushButton(tr("Add…")))
    , m_warp(new QCheckBox(tr("±8% speed too")))
    , m_balance(new QCheckBox(tr("Balance classes")))
    , m_tune(new QPushButton(tr("Tune…")))
    , m_stripTimer(new QTimer(this))
    , m_strip(new QLabel)
    , m_status(new QLabel)
    , m_title(new QLabel)
    , m_preview(new QLabel)
    , m_latency(new QLabel)
    , m_history(new QListWidget)
    , m_bars(new QCustomPlot)
    , m_wave(new QCustomPlot)
    , m_process(new QProcess(this))
{
    setAcceptDrops(true);
    m_model->setObjectName("inferenceModel");
    m_model->setPlaceholderText(tr("a run folder, model.safetensors or a checkpoint"));
    m_model->setToolTip(tr("The trained model to try; a finished run fills it in"));
    m_open->setObjectName("inferenceOpen");
    m_status->setObjectName("inferenceStatus");
    m_status->setWordWrap(true);
    m_status->setText(tr("Drop image or audio files here to see what the model predicts."));
    m_blockFlat = std::make_unique<fb::data::FlatPeaks>();
    m_clipped = new QLabel;
    m_clipped->setObjectName("inferenceClipped");
    m_clipped->setWordWrap(true);
    m_clipped->setToolTip(
        tr("A recording driven past what its microphone or input can take is cut off flat at "
           "its loudest, and its words are heard less well: the spoken-digits example named 16 "
           "to 32 points fewer of a new voice's digits clipped 6 to 12 dB (docs/audio.md)"));
    m_clipped->hide();
    m_title->setObjectName("inferenceTitle");
    m_latency->setObjectName("inferenceLatency");
    m_preview->setObjectName("inferencePreview");
    m_preview->setMinimumSize(160, 120);
    m_preview->setAlignment(Qt::AlignCenter);
    m_preview->setToolTip(tr("The input as the model sees it, after the preprocessing it was "
                             "trained with"));
    m_showSaliency->setObjectName("inferenceSaliency");
    m_showSaliency->setChecked(true);
    m_showSaliency->setToolTip(
        tr("Red: the parts of the input that the prediction rests on, found by covering each "
           "patch in turn and measuring how much the predicted class loses (occlusion)"));
    connect(m_showSaliency, &QCheckBox::toggled, this,
            [this] { showResult(m_history->currentRow()); });
    // The microphone, where the machine has one: 16 kHz mono when the device takes it (the
    // model's saved preprocessing resamples whatever it gets).
    m_record->setObjectName("inferenceRecord");
    m_input = QMediaDevices::defaultAudioInput();
    if (!m_input.isNull()) {
        m_format = m_input.preferredFormat();
        QAudioFormat wanted = m_format;
        wanted.setSampleRate(16000);
        wanted.setChannelCount(1);
        wanted.setSampleFormat(QAudioFormat::Int16);
        if (m_input.isFormatSupported(wanted)) m_format = wanted;
    }
    m_record->setEnabled(canRecord());
    m_record->setToolTip(recordTip());
    connect(m_record, &QPushButton::pressed, this, &InferencePanel::startRecording);
    connect(m_record, &QPushButton::released, this, &InferencePanel::stopRecording);
    // Listen mode: the microphone heard continuously by one engine process.
    m_listenButton->setObjectName("inferenceListen");
    m_listenButton->setCheckable(true);
    m_listenButton->setEnabled(canRecord());
    m_listenButton->setToolTip(
        canRecord() ? tr("Listen continuously: the model hears the microphone a window at a "
                         "time and marks each word it detects")
                    : recordTip());
    m_read = new QFutureWatcher<FileRead>(this);
    connect(m_read, &QFutureWatcher<FileRead>::finished, this, &InferencePanel::fileRead);
    connect(m_listenButton, &QPushButton::toggled, this, [this](bool on) {
        if (!on && (!m_readPath.isEmpty() || !m_file.isEmpty()))
            return stopListening(); // a recording read or heard
        if (on == (m_listenSource != nullptr)) return;
        if (on) {
            QString why;
            if (!startListening(&why)) {
                m_status->setText(why);
                const QSignalBlocker block(m_listenButton);
                m_listenButton->setChecked(false);
            }
        } else {
            stopListening();
        }
    });
    // How it detects: the engine's defaults (exec::ListenOptions, header-only: the window does
    // not link the engine; test_record_panel checks that the two agree through its summary).
    const fb::exec::ListenOptions defaults;
    m_threshold->setObjectName("inferenceListenThreshold");
    m_threshold->setRange(0.05, 0.99);
    m_threshold->setSingleStep(0.05);
    m_threshold->setDecimals(2);
    m_threshold->setValue(defaults.threshold);
    m_threshold->setToolTip(
        tr("A word is detected when its probability, averaged over the last windows, reaches "
           "this. Higher: fewer false alarms and more words missed. The default, %1, suits "
           "listening all day; lower finds more words of someone speaking to it")
            .arg(defaults.threshold));
    m_average->setObjectName("inferenceListenAverage");
    m_average->setRange(1, 20);
    m_average->setValue(defaults.average);
    m_ownThreshold = defaults.threshold;
    m_ownAverage = defaults.average;
    m_average->setToolTip(tr("Windows (0.1 s apart) whose probabilities are averaged before the "
                             "threshold"));
    m_with->setObjectName("inferenceListenWith");
    m_with->setPlaceholderText(tr("other trained runs to listen together (optional)"));
    m_with->setToolTip(
        tr("Runs of the same classes, trained apart (another seed or data set), separated by "
           "';': each hears every window and their probabilities are averaged, which raises "
           "fewer false alarms at the same words found"));
    m_addWith->setObjectName("inferenceListenAddWith");
    m_addWith->setToolTip(tr("Add a trained run to listen together with the model"));
    connect(m_addWith, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Choose a run to listen together with the model"), model());
        if (!dir.isEmpty()) setListenWith(listenWith() << dir);
    });
    m_warp->setObjectName("inferenceListenWarp");
    m_warp->setChecked(true);
    m_warp->setToolTip(
        tr("Hear every window, and every recording you drop or open, also played 8% faster and "
           "8% slower (a higher and a lower voice) and average the three: found more words at "
           "fewer false alarms on voices the model never heard, and named more of their digits "
           "right, for a few times the work (still milliseconds)"));
    m_balance->setObjectName("inferenceBalance");
    m_balance->setChecked(true);
    m_balance->setToolTip(
        tr("For recordings: take the training data's class shares halfway out of the "
           "probabilities, so that a class the data set has many of (such as 'unknown') does not "
           "win for that alone; the spoken-digits example then names more digits of voices it "
           "never heard, and a few more other words a digit. Off: as trained, as the "
           "evaluation reads the model"));
    m_tune->setObjectName("inferenceListenTune");
    m_tune->setToolTip(
        tr("Hear a recording of your own with its labels (Audacity: File > Export > Export "
           "Labels) and see how many of its words the model finds, how many false alarms an "
           "hour it raises, and which threshold and windows suit it best"));
    connect(m_tune, &QPushButton::clicked, this, [this] {
        // One dialog asks for the recording, its labels and the budget (TuneDialog); it opens
        // with the last ones.
        auto *dialog = new TuneDialog(m_tuneRecording, m_tuneLabels, m_tuneBudget, this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        // Streams of held-out recordings go where the panel's recordings go (removed with it).
        if (!m_recordings) m_recordings = new QTemporaryDir;
        dialog->setHeldOutSource(m_cli, model(),
                                 m_recordings->isValid() ? m_recordings->path() : QString());
        connect(dialog, &QDialog::accepted, this, [this, dialog] {
            m_tuneRecording = dialog->recording();
            m_tuneLabels = dialog->labels();
            m_tuneBudget = dialog->budget();
            QString why;
            m_tuneAsks = true;
            if (!tuneOn(m_tuneRecording, m_tuneLabels, &why, m_tuneBudget)) {
                m_tuneAsks = false;
                m_status->setText(why);
            }
        });
        dialog->open();
    });
    m_strip->setObjectName("inferenceListenStrip");
    m_strip->setMinimumSize(400, 120);
    // The picture follows the label's width; the label must not hold the panel at the
    // picture's size.
    m_strip->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    m_strip->setAlignment(Qt::AlignCenter);
    m_strip->setToolTip(tr("The last 5 seconds the microphone heard (log-mel spectrogram, low "
                           "frequencies at the bottom, now at the right) and the words detected "
                           "in them"));
    m_strip->hide();
    m_stripTimer->setInterval(100);
    connect(m_stripTimer, &QTimer::timeout, this, &InferencePanel::drawStrip);
    m_history->setObjectName("inferenceHistory");
    m_history->setMaximumWidth(240);
    m_bars->setObjectName("inferenceBars");
    m_bars->setMinimumHeight(140);
    m_bars->yAxis->setRange(0, 1);
    m_bars->yAxis->setLabel(tr("probability"));
    m_wave->setObjectName("inferenceWave");
    m_wave->setMinimumHeight(90);
    m_wave->xAxis->setLabel(tr("seconds"));
    m_wave->addGraph();
    m_wave->hide();
    applyPlotPalette(m_bars, palette());
    applyPlotPalette(m_wave, palette());

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Model:")));
    top->addWidget(m_model, 1);
    top->addWidget(m_choose);
    top->addWidget(m_open);
    top->addWidget(m_record);
    top->addWidget(m_listenButton);
    top->addWidget(m_showSaliency);
    top->addWidget(m_balance);
    auto *detector = new QHBoxLayout;
    detector->addWidget(new QLabel(tr("Listen: threshold")));
    detector->addWidget(m_threshold);
    detector->addWidget(new QLabel(tr("over")));
    detector->addWidget(m_average);
    detector->addWidget(new QLabel(tr("windows, together with")));
    detector->addWidget(m_with, 1);
    detector->addWidget(m_addWith);
    detector->addWidget(m_warp);
    detector->addWidget(m_tune);
    auto *right = new QVBoxLayout;
    auto *heading = new QHBoxLayout;
    heading->addWidget(m_title, 1);
    heading->addWidget(m_latency);
    right->addLayout(heading);
    auto *middle = new QHBoxLayout;
    middle->addWidget(m_preview);
    middle->addWidget(m_bars, 1);
    right->addLayout(middle, 1);
    right->addWidget(m_strip);
    right->addWidget(m_wave);
    auto *body = new QHBoxLayout;
    body->addWidget(m_history);
    body->addLayout(right, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(detector);
    layout->addWidget(m_status);
    layout->addWidget(m_clipped);
    layout->addLayout(body, 1);

    // The user's hand on the row makes it their own setting; the hearing changed, the model's
    // tuned setting applies or not.
    connect(m_threshold, &QDoubleSpinBox::valueChanged, this, [this] {
        if (!m_settingRow) m_thresholdTuned = false;
    });
    connect(m_average, &QSpinBox::valueChanged, this, [this] {
        if (!m_settingRow) m_averageTuned = false;
    });
    connect(m_warp, &QCheckBox::toggled, this, [this] { takeTunedSetting(); });
    connect(m_with, &QLineEdit::editingFinished, this, [this] {
        if (m_with->isModified()) takeTunedSetting();
        m_with->setModified(false);
    });
    // A model typed in takes its tuned setting as a chosen one does.
    connect(m_model, &QLineEdit::editingFinished, this, [this] {
        if (m_model->isModified()) takeTunedSetting();
        m_model->setModified(false);
    });
    connect(m_choose, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Choose a trained run"), model());
        if (!dir.isEmpty()) setModel(dir);
    });
    connect(m_open, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Files to try"), {},
            tr("Images and recordings (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.tif *.tiff *.webp "
               "%1);;All files (*)")
                .arg(recordingPatterns().join(' ')));
        if (!files.isEmpty()) predictFiles(files);
    });
    connect(m_history, &QListWidget::currentRowChanged, this, [this](int row) { showResult(row); });
    connect(m_process, &QProcess::readyReadStandardOutput, this, &InferencePanel::readLines);
    connect(m_process, &QProcess::finished, this,
            [this](int code, QProcess::ExitStatus) { finishBatch(code); });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return;
        m_status->setText(tr("Could not start %1: %2").arg(m_cli, m_process->errorString()));
        emit predicted();
    });
}

bool InferencePanel::canRecord() const
{
    return !m_input.isNull();
}

QString InferencePanel::recordTip() const
{
    if (m_input.isNull())
        return tr("No microphone: this machine has no audio input device (Qt Multimedia lists "
                  "none)");
    return tr("Hold to record from %1, release to see what the model hears")
        .arg(m_input.description());
}

void InferencePanel::startRecording()
{
    if (!canRecord() || m_source) return;
    m_recorded.clear();
    m_source = new QAudioSource(m_input, m_format, this);
    QIODevice *io = m_source->start();
    if (!io) {
        m_status->setText(tr("The microphone could not be opened (%1)").arg(m_input.description()));
        m_source->deleteLater();
        m_source = nullptr;
        return;
    }
    connect(io, &QIODevice::readyRead, this, [this, io] { m_recorded += io->readAll(); });
    m_status->setText(tr("Recording… release the button to predict."));
}

void InferencePanel::stopRecording()
{
    if (!m_source) return;
    m_source->stop();
    m_source->deleteLater();
    m_source = nullptr;
    if (m_recorded.isEmpty()) {
        m_status->setText(tr("Nothing was recorded; hold the button while you speak."));
        return;
    }
    if (!m_recordings) m_recordings = new QTemporaryDir;
    const QString path = m_recordings->filePath(QString("recording-%1.wav").arg(++m_takes));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(wavFromPcm(m_recorded, m_format)) < 0) {
        m_status->setText(tr("Could not keep the recording in %1").arg(path));
        return;
    }
    f.close();
    predictFiles({path}, false); // a take is one prediction, however long it was held
}

InferencePanel::~InferencePanel()
{
    // The microphones first, while the panel is whole. One stopped a moment ago (listening
    // whose engine failed at once) may still wait for its deleteLater: with Qt 6.4's PulseAudio
    // backend, deleting it from here or among QWidget's children crashed in ~QAudioSource
    // (test_record_panel), and delivering its pending deleteLater did not.
    for (QAudioSource *source : findChildren<QAudioSource *>(Qt::FindDirectChildrenOnly)) {
        QPointer<QAudioSource> alive(source);
        QCoreApplication::sendPostedEvents(source, QEvent::DeferredDelete);
        if (alive) {
            source->stop();
            delete source;
        }
    }
    m_listenSource = m_source = nullptr;
    if (m_listen) {
        m_listen->disconnect(this);
        m_listen->kill();
        m_listen->waitForFinished(3000);
    }
    if (m_tuneProcess) {
        m_tuneProcess->disconnect(this);
        m_tuneProcess->kill();
        m_tuneProcess->waitForFinished(3000);
    }
    delete m_recordings;
}

namespace {
constexpr double kStripSeconds = 5.0;
// A recording longer than this, dropped or opened alone, is listened to whole (listenToFile);
// a shorter one is predicted as one window.
constexpr double kListenFileSeconds = 3.0;
// A listened recording's samples are kept for the strip's picture up to this long (19 MB at
// 16 kHz; read in another thread before listening starts, since decoding takes a while: 5.5 s
// for an MP3 of 10 minutes on 2 cores); a longer one is listened to without the picture.
constexpr double kStripFileSeconds = 300.0;
constexpr int kStripFileRate = 16000;

// A listen child's environment. One thread: a window is a small forward pass every hop, and a
// team of threads woken for each costs more than it gives (p50 10 ms a window with the default
// team on 2 cores, beside the window's own work, against 2 ms with one thread;
// test_record_panel).
QProcessEnvironment oneThread()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!env.contains("OMP_NUM_THREADS")) env.insert("OMP_NUM_THREADS", "1");
    return env;
}
} // namespace

bool InferencePanel::listening() const
{
    return !m_readPath.isEmpty() || (m_listen && m_listen->state() != QProcess::NotRunning);
}

bool InferencePanel::startListening(QString *why)
{
    auto refuse = [why](const QString &text) {
        if (why) *why = text;
        return false;
    };
    if (m_listenSource) return true;
    // After Stop, the child still hears the last windows before it ends.
    if (listening()) return refuse(tr("Still finishing the last listening; a moment."));
    if (!canRecord()) return refuse(recordTip());
    if (const QString busyWith = whyNotListen(); !busyWith.isEmpty()) return refuse(busyWith);
    m_file.clear();
    m_fileSamples.clear();
    m_fileNow = 0;
    // The child: it loads the model once, then hears every window of what arrives on stdin.
    if (!startListenChild({"--stdin", "--rate", QString::number(m_format.sampleRate())}, why))
        return false;
    m_listenSource = new QAudioSource(m_input, m_format, this);
    m_listenIo = m_listenSource->start();
    if (!m_listenIo) {
        delete m_listenSource;
        m_listenSource = nullptr;
        m_listenFailed = true; // the child's summary of nothing must not hide the reason
        m_listen->closeWriteChannel();
        return refuse(tr("The microphone could not be opened (%1)").arg(m_input.description()));
    }
    connect(m_listenIo, &QIODevice::readyRead, this, &InferencePanel::takeListenAudio);
    m_title->setText(tr("Listening…"));
    m_status->setText(tr("Listening to %1. Say a word the model knows; press Stop listening "
                         "to stop.")
                          .arg(m_input.description()));
    m_strip->setToolTip(tr("The last 5 seconds the microphone heard (log-mel spectrogram, low "
                           "frequencies at the bottom, now at the right) and the words detected "
                           "in them"));
    showListening();
    return true;
}

bool InferencePanel::listenToFile(const QString &path, QString *why)
{
    auto refuse = [why](const QString &text) {
        if (why) *why = text;
        return false;
    };
    if (listening()) return refuse(tr("Listening; stop listening to try files."));
    if (const QString busyWith = whyNotListen(); !busyWith.isEmpty()) return refuse(busyWith);
    if (busy()) return refuse(tr("Still predicting the previous files; a moment."));
    const auto seconds = fb::data::recordingSeconds(path.toStdString());
    if (!seconds.ok()) return refuse(QString::fromStdString(seconds.error().str()));
    if (seconds.value() > kStripFileSeconds) return startFileChild(path, seconds.value(), {}, why);
    // Read for the strip in another thread, then heard (fileRead). What was heard last stays
    // until then: a recording that cannot be read leaves it as it was.
    m_readPath = path;
    m_readSeconds = seconds.value();
    m_readStopped = false;
    m_readTitle = m_title->text();
    m_read->setFuture(QtConcurrent::run([file = path.toStdString()] {
        FileRead r;
        auto read = fb::data::readRecording(file, kStripFileRate);
        if (read.ok())
            r.samples = std::move(read).value();
        else
            r.error = QString::fromStdString(read.error().str());
        return r;
    }));
    m_title->setText(tr("Reading %1…").arg(QFileInfo(path).fileName().toHtmlEscaped()));
    m_status->setText(tr("Reading %1 (%2 s) before listening to it.")
                          .arg(QFileInfo(path).fileName())
                          .arg(m_readSeconds, 0, 'f', 1));
    showListenRow(true);
    return true;
}

void InferencePanel::fileRead()
{
    const QString path = m_readPath;
    if (path.isEmpty()) return;
    FileRead read = m_read->result();
    m_readPath.clear();
    const QString name = QFileInfo(path).fileName();
    QString why;
    if (m_readStopped) {
        m_readStopped = false;
        m_title->setText(m_readTitle); // the last recording's, whose detections stay
        m_status->setText(tr("%1: stopped before listening to it.").arg(name));
        showNotListening();
        emit listeningStopped();
        return;
    }
    if (!read.error.isEmpty()) {
        m_title->setText(m_readTitle); // the last recording's, whose detections stay
        m_status->setText(read.error);
    } else if (startFileChild(path, m_readSeconds, std::move(read.samples), &why)) {
        return;
    } else {
        m_title->clear(); // nothing of the last recording is left either
        m_status->setText(why);
    }
    showNotListening();
    emit predicted(); // nothing to wait for: the status says why
}

bool InferencePanel::startFileChild(const QString &path, double seconds, std::vector<float> samples,
                                    QString *why)
{
    m_fileSamples = std::move(samples);
    m_file = path;
    m_fileSeconds = seconds;
    m_fileNow = 0;
    m_fileStopped = false;
    // The child reads the file itself, as fast as it can hear it.
    if (!startListenChild({path}, why)) {
        // Nothing of the last recording is left to show either (its detections went with the
        // child's start).
        m_file.clear();
        m_fileSamples.clear();
        m_history->clear();
        m_strip->hide();
        return false;
    }
    const QString name = QFileInfo(path).fileName();
    m_title->setText(tr("Listening to %1…").arg(name.toHtmlEscaped()));
    m_status->setText(tr("Listening to %1 (%2 s): the model hears all of it, a window at a "
                         "time, as Listen mode hears the microphone.")
                          .arg(name)
                          .arg(m_fileSeconds, 0, 'f', 1));
    m_strip->setToolTip(tr("%1 up to where the model has heard it (log-mel spectrogram, low "
                           "frequencies at the bottom), and the words detected; choose a "
                           "detection in the list to see the seconds around it")
                            .arg(name));
    showListening();
    return true;
}

QString InferencePanel::whyNotListen() const
{
    if (model().isEmpty())
        return tr("Choose a trained model first (a run folder of a model trained on "
                  "recordings).");
    if (m_source) return tr("Recording a clip; listen when it is done.");
    if (tuningNow()) return tr("Tuning; listen when it is done.");
    return {};
}

void InferencePanel::showListening()
{
    m_history->clear();
    m_results.clear();
    m_preview->hide();
    m_wave->hide();
    m_strip->setVisible(m_file.isEmpty() || !m_fileSamples.empty());
    m_stripTimer->start();
    showListenRow(true);
}

void InferencePanel::showListenRow(bool listening)
{
    m_record->setEnabled(!listening && canRecord());
    {
        const QSignalBlocker block(m_listenButton);
        m_listenButton->setChecked(listening);
    }
    m_listenButton->setText(listening ? tr("Stop listening") : tr("Listen"));
    // Listening, it stops, with or without a microphone (a recording heard).
    m_listenButton->setEnabled(listening || canRecord());
    setListenSettingsEnabled(!listening); // read once, at the start
}

bool InferencePanel::startListenChild(const QStringList &source, QString *why)
{
    auto refuse = [why](const QString &text) {
        if (why) *why = text;
        return false;
    };
    if (m_listen) m_listen->deleteLater(); // this may run in a slot of its signals
    m_listen = new QProcess(this);
    m_listenFailed = false;
    m_summarised = false;
    m_windowShown = true;
    m_listenDropped = 0;
    m_listenRemainder.clear();
    m_listenPending.clear();
    m_heard.clear();
    m_windowMs.clear();
    m_ring.clear();
    m_heardSamples = 0;
    m_stripTop = -1e30f;
    *m_blockFlat = fb::data::FlatPeaks();
    m_blockFill = 0;
    m_clippedSeconds = 0;
    showClipped({});
    connect(m_listen, &QProcess::readyReadStandardOutput, this, &InferencePanel::readListenLines);
    connect(m_listen, &QProcess::finished, this,
            [this](int code, QProcess::ExitStatus) { listenEnded(code); });
    connect(m_listen, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) listenEnded(-1);
    });
    m_listen->setProcessEnvironment(oneThread());
    const QStringList args =
        QStringList{"listen", model()} + source +
        QStringList{"--windows", "--threshold", QString::number(listenThreshold()), "--average",
                    QString::number(listenAverage())} +
        hearingArgs();
    m_listen->start(m_cli, args);
    if (!m_listen->waitForStarted(10000))
        return refuse(tr("Could not start %1: %2").arg(m_cli, m_listen->errorString()));
    return true;
}

void InferencePanel::takeListenAudio()
{
    if (!m_listenIo || !m_listen) return;
    // Whole frames only; a frame cut between two reads waits for the rest.
    m_listenRemainder += m_listenIo->readAll();
    qsizetype used = 0;
    const std::vector<float> mono = monoFromPcm(m_listenRemainder, m_format, &used);
    m_listenRemainder.remove(0, used);
    const qsizetype frames = qsizetype(mono.size());
    m_ring.insert(m_ring.end(), mono.begin(), mono.end());
    const QByteArray pcm = int16FromFloats(mono.data(), mono.size());
    watchClipping(mono);
    m_heardSamples += frames;
    const size_t keep = size_t(kStripSeconds * m_format.sampleRate());
    if (m_ring.size() > keep + keep / 2)
        m_ring.erase(m_ring.begin(), m_ring.end() - std::ptrdiff_t(keep));
    // The engine slower than the microphone (an overloaded machine): rather than a backlog
    // that makes every detection later than the last, the audio beyond a second is dropped,
    // and the status says so.
    if (m_listen->bytesToWrite() > qint64(m_format.sampleRate()) * 2) {
        m_listenDropped += frames;
        m_status->setText(tr("The model hears slower than real time: %1 s of sound skipped so far.")
                              .arg(double(m_listenDropped) / m_format.sampleRate(), 0, 'f', 1));
        return;
    }
    m_listen->write(pcm);
}

void InferencePanel::watchClipping(const std::vector<float> &mono)
{
    // A second at a time rather than the whole stream so far (as the child's summary counts):
    // a minute of quiet would otherwise hide a second too loud. A second counts when its flat
    // peaks reach the share that makes a recording clipped (data::FlatPeaks::kClipped) and its
    // peak is -12 dBFS or louder: an input clips near its full scale, and a quiet second's slow
    // hum can sit a few samples on its own small peak.
    const size_t second = size_t(std::max(1, m_format.sampleRate()));
    size_t at = 0;
    while (at < mono.size()) {
        const size_t n = std::min(mono.size() - at, second - m_blockFill);
        m_blockFlat->push(mono.data() + at, n);
        at += n;
        m_blockFill += n;
        if (m_blockFill < second) break;
        if (m_blockFlat->share() >= fb::data::FlatPeaks::kClipped && m_blockFlat->peak() >= 0.25f) {
            ++m_clippedSeconds;
            const double end = double(m_heardSamples + int64_t(at)) / double(second);
            showClipped(tr("Clipping: %n second(s) of what the microphone heard cut off flat at "
                           "the loudest, the last at %1 s.",
                           nullptr, m_clippedSeconds)
                            .arg(end, 0, 'f', 1) +
                        micTooLoud());
        }
        *m_blockFlat = fb::data::FlatPeaks();
        m_blockFill = 0;
    }
}

QString InferencePanel::micTooLoud() const
{
    return QLatin1Char(' ') + tr("Clipped words are heard less well: turn the input gain down or "
                                 "speak farther from the microphone.");
}

void InferencePanel::showClipped(const QString &text)
{
    m_clipped->setText(text);
    m_clipped->setVisible(!text.isEmpty());
}

QString InferencePanel::clippedWarning() const
{
    return m_clipped->text();
}

void InferencePanel::stopListening()
{
    if (!m_readPath.isEmpty()) {
        // Still being read: it is not listened to once read (fileRead).
        m_readStopped = true;
        return;
    }
    if (!m_file.isEmpty()) {
        // A recording: the child is ended where it is; what it heard so far stays listed.
        // After its summary the child is only ending: what it said stands.
        if (listening() && !m_summarised) {
            m_fileStopped = true;
            m_listen->kill();
        }
        return;
    }
    if (m_listenSource) {
        if (m_listenIo) takeListenAudio();
        m_listenSource->stop();
        m_listenSource->deleteLater();
        m_listenSource = nullptr;
        m_listenIo = nullptr;
    }
    // The end of the stream: the child hears the last windows, prints its summary and ends.
    if (listening()) m_listen->closeWriteChannel();
    m_stripTimer->stop();
    drawStrip();
}

void InferencePanel::setListenSettingsEnabled(bool on)
{
    for (QWidget *w : std::initializer_list<QWidget *>{m_threshold, m_average, m_with, m_addWith,
                                                       m_warp, m_tune})
        w->setEnabled(on);
}

QStringList InferencePanel::hearingArgs() const
{
    QStringList args;
    for (const QString &other : listenWith())
        args << "--with" << other;
    if (!listenWarp())
        args << "--warp"
             << "0"; // on: the engine's default (ListenOptions::warps)
    return args;
}

QString InferencePanel::tuneRecording() const
{
    const bool passing = m_recordings && !m_tuneRecording.isEmpty() &&
                         m_tuneRecording.startsWith(m_recordings->path() + "/");
    return passing ? QString() : m_tuneRecording;
}

QString InferencePanel::tuneLabels() const
{
    return tuneRecording().isEmpty() && !m_tuneRecording.isEmpty() ? QString() : m_tuneLabels;
}

void InferencePanel::setTuneChoices(const QString &recording, const QString &labels, double budget)
{
    m_tuneRecording = recording;
    m_tuneLabels = labels;
    if (budget > 0) m_tuneBudget = budget;
}

bool InferencePanel::tuningNow() const
{
    return m_tuneProcess && m_tuneProcess->state() != QProcess::NotRunning;
}

bool InferencePanel::tuneOn(const QString &recording, const QString &labels, QString *why,
                            double budget)
{
    auto refuse = [why](const QString &reason) {
        if (why) *why = reason;
        return false;
    };
    if (model().isEmpty()) return refuse(tr("Choose a trained run first."));
    if (m_cli.isEmpty()) return refuse(tr("flowbench-cli was not found: tuning needs it."));
    if (listening()) return refuse(tr("Stop listening first."));
    if (tuningNow()) return refuse(tr("Already tuning."));
    if (!(budget > 0))
        return refuse(tr("A budget of false alarms an hour must be above 0: no recording can "
                         "tell 0 from none."));
    if (m_tuneProcess) m_tuneProcess->deleteLater(); // this may run in a slot of its signals
    m_tuneProcess = new QProcess(this);
    m_tuning = Tuning{};
    connect(m_tuneProcess, &QProcess::finished, this,
            [this](int code, QProcess::ExitStatus) { tuneEnded(code); });
    connect(m_tuneProcess, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) tuneEnded(-1);
    });
    m_tuneProcess->setProcessEnvironment(oneThread());
    // How far it has heard: the child's progress lines (a long recording takes minutes).
    connect(m_tuneProcess, &QProcess::readyReadStandardOutput, this, [this, name = QFileInfo(recording).fileName()] {
        while (m_tuneProcess->canReadLine()) {
            const QByteArray line = m_tuneProcess->readLine();
            m_tuneOut += line;
            const nlohmann::json o = nlohmann::json::parse(line.toStdString(), nullptr, false);
            if (o.is_object() && o.value("kind", "") == "progress" && o.value("of", 0.0) > 0)
                m_status->setText(tr("Tuning on %1: %2% heard (%3 of %4 s)…")
                                      .arg(name)
                                      .arg(int(100 * o.value("seconds", 0.0) / o.value("of", 1.0)))
                                      .arg(o.value("seconds", 0.0), 0, 'f', 0)
                                      .arg(o.value("of", 0.0), 0, 'f', 0));
        }
    });
    m_tuneOut.clear();
    QStringList args{"listen",    model(),    recording,  "--progress",
                     "--truth",   labels,     "--sweep",
                     "--threshold", QString::number(listenThreshold()),
                     "--average", QString::number(listenAverage()),
                     "--budget",  QString::number(budget)};
    args << hearingArgs();
    // The row waits before the child starts: a start that fails at once ends the tuning
    // (tuneEnded) inside start(), and must find the row to give back.
    setListenSettingsEnabled(false);
    m_listenButton->setEnabled(false);
    m_status->setText(tr("Tuning on %1 with %2…")
                          .arg(QFileInfo(recording).fileName(), QFileInfo(labels).fileName()));
    m_tuneProcess->start(m_cli, args);
    return true;
}

void InferencePanel::tuneEnded(int exitCode)
{
    setListenSettingsEnabled(true);
    m_listenButton->setEnabled(canRecord());
    const bool asks = m_tuneAsks;
    m_tuneAsks = false;
    Tuning t;
    const QByteArray out =
        m_tuneOut + (m_tuneProcess ? m_tuneProcess->readAllStandardOutput() : QByteArray());
    m_tuneOut.clear();
    const QString err =
        m_tuneProcess ? QString::fromUtf8(m_tuneProcess->readAllStandardError()) : QString();
    const QByteArray lastLine = out.trimmed().split('\n').last();
    const nlohmann::json summary = nlohmann::json::parse(lastLine.toStdString(), nullptr, false);
    if (exitCode != 0 || !summary.is_object() || summary.value("status", "") != "ok" ||
        !summary.contains("score")) {
        QString reason;
        if (summary.is_object() && summary.contains("error"))
            reason = QString::fromStdString(
                summary["error"].value("message", std::string("the engine failed")));
        if (reason.isEmpty()) reason = err.trimmed().section('\n', 0, 0);
        if (reason.isEmpty())
            reason = exitCode < 0 ? tr("could not start %1").arg(m_cli)
                                  : tr("the engine failed (exit %1)").arg(exitCode);
        t.text = tr("Tuning failed: %1").arg(reason);
    } else {
        const nlohmann::json &s = summary["score"];
        t.ok = true;
        t.keywords = s.value("keywords", 0);
        t.found = s.value("found", 0);
        t.falseAlarms = s.value("false_alarms", 0);
        t.perHour = s.value("false_alarms_per_hour", 0.0);
        const double away = s.value("other_seconds", 0.0);
        t.text = tr("At threshold %1 over %2 windows: %3 of %4 words found at their time, %5 "
                    "false alarm(s) in %6 away from them (%7 an hour).")
                     .arg(listenThreshold())
                     .arg(listenAverage())
                     .arg(t.found)
                     .arg(t.keywords)
                     .arg(t.falseAlarms)
                     .arg(durationText(away))
                     .arg(t.perHour, 0, 'f', 1);
        const nlohmann::json best = summary.value("best", nlohmann::json::object());
        const double budget = best.value("budget", 2.0);
        const double one = best.value("one_false_alarm_per_hour", 0.0);
        if (best.contains("threshold") && one > budget) {
            // One false alarm more or less is more than the budget: no setting is shown to
            // keep to it, however many the sweep found (0.5 finds every word of a short file).
            t.text += QLatin1Char(' ') +
                      tr("Only %1 of the recording lie away from the words, so one false alarm "
                         "there is %2 an hour: too little to choose a setting for %3 an hour. "
                         "Record at least %4 of other words, noise and silence beside your "
                         "words, label the words, and tune again.")
                          .arg(durationText(away))
                          .arg(one, 0, 'f', 1)
                          .arg(budget)
                          .arg(durationText(fb::io::secondsToTell(budget)));
        } else if (best.contains("threshold")) {
            t.hasBest = true;
            t.bestAverage = best.value("average", 0);
            t.bestThreshold = best.value("threshold", 0.0);
            t.bestFound = best.value("found", 0);
            if (best.contains("setting") && best["setting"].is_object())
                t.setting = QByteArray::fromStdString(best["setting"].dump());
            t.modelFile = QString::fromStdString(best.value("model_file", std::string()));
            t.text += QLatin1Char(' ') +
                      tr("Best within %1 false alarms an hour: threshold %2 over %3 windows, %4 "
                         "of %5 found (%6 an hour).")
                          .arg(budget)
                          .arg(t.bestThreshold)
                          .arg(t.bestAverage)
                          .arg(t.bestFound)
                          .arg(t.keywords)
                          .arg(best.value("false_alarms_per_hour", 0.0), 0, 'f', 1);
            // A best that finds few words is the budget speaking, not a setting to listen at.
            if (t.keywords > 0 && 2 * t.bestFound < t.keywords)
                t.text += QLatin1Char(' ') +
                          tr("That is only %1% of the words: within %2 an hour the model must be "
                             "surer than it is of most of them. This recording's other words "
                             "may lie nearer yours than everyday speech does; more false alarms "
                             "an hour find more.")
                              .arg(int(100.0 * t.bestFound / t.keywords))
                              .arg(budget);
        } else {
            t.text += QLatin1Char(' ') +
                      tr("No setting keeps to %1 false alarms an hour.").arg(budget);
        }
    }
    m_tuning = t;
    m_status->setText(t.text);
    if (model() != m_lookedAt) takeTunedSetting(); // chosen while tuning
    emit tuned();
    if (!asks) return;
    // The message waits for the event loop: not inside the child's finished().
    QTimer::singleShot(0, this, [this, t] {
        auto *box = new QMessageBox(QMessageBox::Information, tr("Tuned"), t.text,
                                    QMessageBox::NoButton, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        if (t.ok && t.hasBest) {
            // Used, it is kept with the model (useTunedSetting); the row's own setting, when it
            // is the best, can be kept so too.
            const bool same = t.bestAverage == listenAverage() &&
                              std::abs(t.bestThreshold - listenThreshold()) <= 1e-9;
            QPushButton *use = box->addButton(same ? tr("Keep it with the model")
                                                   : tr("Use threshold %1 over %2 windows")
                                                         .arg(t.bestThreshold)
                                                         .arg(t.bestAverage),
                                              QMessageBox::AcceptRole);
            use->setToolTip(tr("Kept beside the model file (listen.json): this model then listens "
                               "at it here and in flowbench-cli listen"));
            box->addButton(same ? tr("Close") : tr("Keep mine"), QMessageBox::RejectRole);
            connect(use, &QPushButton::clicked, this, &InferencePanel::useTunedSetting);
        } else {
            box->addButton(QMessageBox::Ok);
        }
        box->open();
    });
}

void InferencePanel::setRowTuned(double threshold, int average)
{
    if (!m_thresholdTuned) m_ownThreshold = listenThreshold();
    if (!m_averageTuned) m_ownAverage = listenAverage();
    m_settingRow = true;
    setListenThreshold(threshold);
    setListenAverage(average);
    m_settingRow = false;
    m_thresholdTuned = m_averageTuned = true;
}

void InferencePanel::setRowOwn()
{
    m_settingRow = true;
    if (m_thresholdTuned) setListenThreshold(m_ownThreshold);
    if (m_averageTuned) setListenAverage(m_ownAverage);
    m_settingRow = false;
    m_thresholdTuned = m_averageTuned = false;
}

bool InferencePanel::useTunedSetting()
{
    if (!m_tuning.ok || !m_tuning.hasBest) return false;
    // A model chosen since the tuning began keeps the row; the setting is still kept with the
    // model it was tuned for.
    auto now = fb::io::modelFileOf(model().toStdString());
    const bool forThisModel = now.ok() && QString::fromStdString(*now) == m_tuning.modelFile;
    if (forThisModel) setRowTuned(m_tuning.bestThreshold, m_tuning.bestAverage);
    // Kept beside the model, so that it listens at it again, here and from the command line.
    m_kept.clear();
    QString why;
    const nlohmann::json j = nlohmann::json::parse(m_tuning.setting.toStdString(), nullptr, false);
    auto setting = fb::io::tunedSettingFromJson(j, "the engine's tuned setting");
    if (m_tuning.modelFile.isEmpty() || !setting.ok()) {
        why = setting.ok() ? tr("the engine did not say which model file it tuned")
                           : QString::fromStdString(setting.error().str());
    } else {
        const auto written = fb::io::writeTunedSetting(m_tuning.modelFile.toStdString(), *setting);
        if (written.ok())
            m_kept =
                QString::fromStdString(fb::io::tunedSettingPath(m_tuning.modelFile.toStdString()));
        else
            why = QString::fromStdString(written.error().str());
    }
    m_statusTuned = true;
    if (!forThisModel)
        m_status->setText(
            m_kept.isEmpty()
                ? tr("Threshold %1 over %2 windows could not be kept with the model it was tuned "
                     "for: %3")
                      .arg(m_tuning.bestThreshold)
                      .arg(m_tuning.bestAverage)
                      .arg(why)
                : tr("Threshold %1 over %2 windows kept with the model it was tuned for (%3); the "
                     "row stays as it is for the model chosen since.")
                      .arg(m_tuning.bestThreshold)
                      .arg(m_tuning.bestAverage)
                      .arg(m_kept));
    else
        m_status->setText(
            m_kept.isEmpty()
                ? tr("Listening at threshold %1 over %2 windows; the setting could not be kept "
                     "with the model: %3")
                      .arg(m_tuning.bestThreshold)
                      .arg(m_tuning.bestAverage)
                      .arg(why)
                : tr("Listening at threshold %1 over %2 windows, kept with the model (%3): "
                     "Listen here and flowbench-cli listen use it for this model.")
                      .arg(m_tuning.bestThreshold)
                      .arg(m_tuning.bestAverage)
                      .arg(m_kept));
    return true;
}

bool InferencePanel::takeTunedSetting()
{
    // The row is in use: it stays as it is, and is looked at again when listening or tuning
    // ends (listenEnded, tuneEnded: m_lookedAt is then another model).
    if (listening() || tuningNow()) return false;
    m_lookedAt = model();
    // Whatever the reason the row takes none, a tuned setting of another model leaves it.
    auto none = [this](const QString &why) {
        const bool hadTuned = m_thresholdTuned || m_averageTuned;
        setRowOwn();
        if (!why.isEmpty()) {
            m_status->setText(why);
            m_statusTuned = true;
        } else if (hadTuned) {
            m_status->setText(tr("This model has no tuned setting: the row is back at yours, "
                                 "threshold %1 over %2 windows.")
                                  .arg(listenThreshold())
                                  .arg(listenAverage()));
            m_statusTuned = true;
        } else if (m_statusTuned) { // what it said was of another model's setting
            m_status->setText(tr("This model has no tuned setting."));
        }
        return false;
    };
    if (model().isEmpty()) return none({});
    auto file = fb::io::modelFileOf(model().toStdString());
    if (!file.ok()) return none({}); // said when it is tried or listened to
    auto tuned = fb::io::readTunedSetting(*file);
    const QString path = QString::fromStdString(fb::io::tunedSettingPath(*file));
    if (!tuned.ok())
        return none(tr("This model's tuned setting is not used: %1")
                        .arg(QString::fromStdString(tuned.error().str())));
    if (!*tuned) return none({});
    const fb::io::TunedSetting &t = **tuned;
    // The hearing as Listen mode has it: these models, the engine's ±8% hearings or none, the
    // detector's other options at the engine's defaults, described as the engine does.
    std::vector<std::string> files{*file};
    for (const QString &other : listenWith()) {
        auto f = fb::io::modelFileOf(other.toStdString());
        files.push_back(f.ok() ? *f : other.toStdString());
    }
    auto heard = fb::io::modelsHeard(files);
    QString differs = heard.ok() ? QString() : QString::fromStdString(heard.error().str());
    fb::io::TunedSetting hearing = heard.ok() ? *heard : fb::io::TunedSetting{};
    fb::exec::ListenOptions row;
    if (!listenWarp()) row.warps.clear();
    fb::exec::describeDetector(hearing, row);
    if (differs.isEmpty())
        differs = QString::fromStdString(fb::io::hearingDiffers(t, hearing))
                      // the row's names for what the engine calls by its options
                      .replace("(--warp)", tr("(the ±8% speed box)"))
                      .replace("(--with)", tr("(the runs listening together)"));
    // The row holds thresholds of 0.05 to 0.99 in hundredths and 1 to 20 windows; a setting
    // made by hand outside them would be listened to at another.
    if (differs.isEmpty() &&
        (t.threshold < m_threshold->minimum() || t.threshold > m_threshold->maximum() ||
         std::abs(std::round(t.threshold * 100) / 100 - t.threshold) > 1e-9 ||
         t.average < m_average->minimum() || t.average > m_average->maximum()))
        differs = tr("its threshold %1 over %2 windows is not one the row holds (0.05 to 0.99, "
                     "1 to 20 windows)")
                      .arg(t.threshold)
                      .arg(t.average);
    if (!differs.isEmpty())
        return none(tr("This model's tuned setting (%1) is not used: %2").arg(path, differs));
    setRowTuned(t.threshold, t.average);
    m_status->setText(tr("Listening at this model's tuned setting: %1 (%2)")
                          .arg(QString::fromStdString(fb::io::describeTuned(t)), path));
    m_statusTuned = true;
    return true;
}

void InferencePanel::setListenThreshold(double probability)
{
    m_threshold->setValue(probability);
}

double InferencePanel::listenThreshold() const
{
    return m_threshold->value();
}

void InferencePanel::setListenAverage(int windows)
{
    m_average->setValue(windows);
}

int InferencePanel::listenAverage() const
{
    return m_average->value();
}

void InferencePanel::setListenWith(const QStringList &models)
{
    m_with->setText(models.join("; "));
    m_with->setModified(false);
    takeTunedSetting(); // the hearing changed
}

void InferencePanel::setListenWarp(bool on)
{
    m_warp->setChecked(on);
}

bool InferencePanel::listenWarp() const
{
    return m_warp->isChecked();
}

void InferencePanel::setBalanceClasses(bool on)
{
    m_balance->setChecked(on);
}

bool InferencePanel::balanceClasses() const
{
    return m_balance->isChecked();
}

QStringList InferencePanel::listenWith() const
{
    QStringList models;
    for (const QString &part : m_with->text().split(';'))
        if (!part.trimmed().isEmpty()) models << part.trimmed();
    return models;
}

double InferencePanel::windowMsPercentile(double q) const
{
    if (m_windowMs.empty()) return 0;
    std::vector<double> v = m_windowMs;
    const size_t k = std::min(v.size() - 1, size_t(std::ceil(q * double(v.size()))) - (q > 0));
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
    return v[k];
}

void InferencePanel::readListenLines()
{
    m_listenPending += m_listen->readAllStandardOutput();
    for (const nlohmann::json &j : takeJsonLines(m_listenPending)) {
        const std::string kind = eventString(j, "kind");
        if (kind == "window") {
            // (The last windows reach past the end, padded with silence.)
            if (!m_file.isEmpty())
                m_fileNow = std::min(m_fileSeconds, std::max(m_fileNow, eventNumber(j, "end", 0)));
            const double ms = eventNumber(j, "ms", qQNaN());
            if (std::isfinite(ms)) m_windowMs.push_back(ms);
            // Shown at the strip's next tick (drawStrip): a recording's windows come a hundred
            // times a second, and a percentile and a replot for each cost the window more than
            // the child's hearing of it.
            m_topClasses.clear();
            m_topValues.clear();
            if (const auto top = j.find("top"); top != j.end() && top->is_array())
                for (const auto &c : *top) {
                    if (!c.is_object()) continue;
                    const double p = eventNumber(c, "probability", qQNaN());
                    if (!std::isfinite(p)) continue;
                    m_topClasses << QString::fromStdString(eventString(c, "class"));
                    m_topValues << std::clamp(p, 0.0, 1.0);
                }
            m_windowShown = false;
        } else if (kind == "detection") {
            Heard h;
            h.label = QString::fromStdString(eventString(j, "class"));
            h.time = eventNumber(j, "time");
            h.probability = eventNumber(j, "probability");
            m_heard << h;
            auto *item = new QListWidgetItem(tr("%1  at %2 s (%3%)")
                                                 .arg(h.label)
                                                 .arg(h.time, 0, 'f', 1)
                                                 .arg(100.0 * h.probability, 0, 'f', 0));
            m_history->addItem(item);
            m_history->scrollToBottom();
            m_title->setText(tr("Heard <b>%1</b> at %2 s (%3%)")
                                 .arg(h.label.toHtmlEscaped())
                                 .arg(h.time, 0, 'f', 1)
                                 .arg(100.0 * h.probability, 0, 'f', 0));
            drawStrip(); // the mark at once, not at the next tick
            emit detected(h.label, h.time);
        } else if (kind == "summary") {
            m_summarised = true;
            if (eventString(j, "status") == "ok" && !m_listenFailed) {
                // How it heard, as the engine reports it: the models and the detector.
                const auto found = j.find("detector");
                const nlohmann::json detector =
                    found != j.end() && found->is_object() ? *found : nlohmann::json{};
                const int models = int(eventNumber(j, "models", 1));
                QString how = tr("threshold %1 over %2 windows")
                                  .arg(eventNumber(detector, "threshold"), 0, 'f', 2)
                                  .arg(int(eventNumber(detector, "average")));
                // Each warp w: the window heard 1 - w and 1 + w times as fast too
                // (exec::ListenOptions::speeds()). A flowbench-cli older than "warps" says only
                // "warp", one w.
                fb::exec::ListenOptions heardAt;
                heardAt.warps.clear();
                const auto warps = detector.find("warps");
                for (const auto &w :
                     warps != detector.end() && warps->is_array()
                         ? *warps
                         : nlohmann::json::array({eventNumber(detector, "warp", 0)}))
                    if (w.is_number()) heardAt.warps.push_back(w.get<double>());
                std::vector<double> speeds = heardAt.speeds();
                std::sort(speeds.begin(), speeds.end());
                if (speeds.size() > 1) {
                    QStringList at;
                    for (double f : speeds)
                        at << (f == 1.0 ? QStringLiteral("1") : QString::number(f, 'f', 2));
                    how += tr(", each window heard at %1 and %2 times its speed")
                               .arg(at.mid(0, at.size() - 1).join(QStringLiteral(", ")), at.last());
                }
                m_status->setText(
                    (m_file.isEmpty() ? QString() : QFileInfo(m_file).fileName() + ": ") +
                    tr("Listened for %1 s: %n word(s) detected; a window took %2 ms at p50 and "
                       "%3 ms at p99.",
                       nullptr, int(m_heard.size()))
                        .arg(eventNumber(j, "seconds"), 0, 'f', 1)
                        .arg(windowMsPercentile(0.5), 0, 'f', 2)
                        .arg(windowMsPercentile(0.99), 0, 'f', 2) +
                    " " +
                    (models == 1 ? tr("1 model listening, %1.").arg(how)
                                 : tr("%1 models listening, %2.").arg(models).arg(how)));
                // The whole stream clipped (listen's "clipped", from its share on): a recording
                // is said to be; the microphone, when no second of it was already.
                const double clipped = eventNumber(j, "clipped", 0);
                if (clipped > 0 && !m_file.isEmpty())
                    showClipped(tr("%1 is clipped: %2% of its samples are cut off flat at the "
                                   "loudest (recorded too loud). Clipped words are heard less "
                                   "well: record it again quieter.")
                                    .arg(QFileInfo(m_file).fileName())
                                    .arg(100.0 * clipped, 0, 'f', 1));
                else if (clipped > 0 && m_clippedSeconds == 0)
                    showClipped(tr("Clipping: %1% of what the microphone heard is cut off flat "
                                   "at the loudest.")
                                    .arg(100.0 * clipped, 0, 'f', 1) +
                                micTooLoud());
            }
        }
    }
}

void InferencePanel::listenEnded(int exitCode)
{
    if (m_listen) readListenLines();
    if (m_listenSource) {
        m_listenSource->stop();
        m_listenSource->deleteLater();
        m_listenSource = nullptr;
        m_listenIo = nullptr;
    }
    m_stripTimer->stop();
    if (m_fileStopped) {
        m_fileStopped = false;
        m_title->setText(tr("%1: stopped").arg(QFileInfo(m_file).fileName().toHtmlEscaped()));
        m_status->setText(tr("%1: stopped at %2 of %3 s; %n word(s) detected before.", nullptr,
                             int(m_heard.size()))
                              .arg(QFileInfo(m_file).fileName())
                              .arg(m_fileNow, 0, 'f', 1)
                              .arg(m_fileSeconds, 0, 'f', 1));
    } else if (exitCode != 0) {
        // The model could not be opened, or is not one for recordings: stderr says why.
        m_title->clear();
        const QString err =
            m_listen ? QString::fromUtf8(m_listen->readAllStandardError()).trimmed() : QString();
        const QString last = err.section('\n', -1).trimmed();
        m_status->setText(
            exitCode < 0 ? tr("Could not start %1").arg(m_cli)
                         : tr("Listening stopped: %1")
                               .arg(last.isEmpty() ? tr("the engine failed (exit %1)").arg(exitCode)
                                                   : last));
    }
    drawStrip(); // the last window, and where a recording's listening ended
    showNotListening();
    emit listeningStopped();
}

void InferencePanel::showNotListening()
{
    showListenRow(false);
    if (model() != m_lookedAt) takeTunedSetting(); // chosen while listening
}

void InferencePanel::drawStrip()
{
    if (!m_windowShown && !m_windowMs.empty()) {
        // The newest window: its latency and top classes.
        m_windowShown = true;
        m_latency->setText(tr("%1 ms a window (p99 %2 ms, %3 windows)")
                               .arg(m_windowMs.back(), 0, 'f', 2)
                               .arg(windowMsPercentile(0.99), 0, 'f', 2)
                               .arg(m_windowMs.size()));
        drawBars(m_topClasses, m_topValues);
    }
    if (!m_file.isEmpty()) {
        // A recording: the seconds up to where the child has heard it (or a chosen detection).
        if (listening() && !m_summarised) // (the summary may come before the child ends)
            m_status->setText(tr("Listening to %1: %2 of %3 s heard…")
                                  .arg(QFileInfo(m_file).fileName())
                                  .arg(m_fileNow, 0, 'f', 1)
                                  .arg(m_fileSeconds, 0, 'f', 1));
        if (m_fileSamples.empty()) return;
        const size_t end =
            std::min(m_fileSamples.size(), size_t(std::max(0.0, m_fileNow) * kStripFileRate));
        paintStrip(m_fileSamples.data(), end, kStripFileRate, m_fileNow);
        return;
    }
    const int rate = m_format.sampleRate();
    if (rate <= 0) return;
    paintStrip(m_ring.data(), m_ring.size(), rate, double(m_heardSamples) / rate);
}

void InferencePanel::paintStrip(const float *samples, size_t end, int rate, double now)
{
    const size_t keep = size_t(kStripSeconds * rate);
    std::vector<float> last(keep, 0.0f); // silence before the first sound
    const size_t have = std::min(keep, end);
    std::copy(samples + (end - have), samples + end, last.end() - std::ptrdiff_t(have));
    int frames = 0;
    const std::vector<float> db = logMel(last, rate, &frames);
    if (db.empty()) return;
    float top = -1e30f;
    for (float v : db)
        if (std::isfinite(v)) top = std::max(top, v);
    // The brightest level follows the loudest seen, slowly forgetting it: quiet stays dark.
    m_stripTop = std::max(top, m_stripTop - 0.5f);
    const QImage levels = levelsImage(db, 40, frames, m_stripTop, 80.0f);
    QImage shown = levels.scaled(std::max(400, m_strip->width() - 4), 120, Qt::IgnoreAspectRatio,
                                 Qt::SmoothTransformation);
    QPainter painter(&shown);
    const double from = now - kStripSeconds;
    QFont font = painter.font();
    font.setBold(true);
    painter.setFont(font);
    // Light text on a dark shadow, readable on bright and dark parts of the picture alike.
    auto label = [&painter](int x, int y, const QString &text, const QColor &colour) {
        painter.setPen(QColor(0, 0, 0));
        painter.drawText(x + 1, y + 1, text);
        painter.setPen(colour);
        painter.drawText(x, y, text);
    };
    for (const Heard &h : m_heard) {
        if (h.time < from) continue;
        const int x = int((h.time - from) / kStripSeconds * shown.width());
        painter.setPen(QPen(QColor(120, 255, 140), 2));
        painter.drawLine(x, 0, x, shown.height());
        label(x + 4, 16, h.label, QColor(120, 255, 140));
    }
    // Live: seconds before now; a recording: seconds into it.
    const bool live = m_file.isEmpty();
    const QString left = live ? tr("-%1 s").arg(kStripSeconds, 0, 'f', 0)
                              : tr("%1 s").arg(std::max(0.0, from), 0, 'f', 1);
    const QString right = live ? tr("now") : tr("%1 s").arg(now, 0, 'f', 1);
    // A recording's start inside the picture (silence before it): the label is where 0 s is.
    const int leftX = live || from >= 0 ? 4 : int((0.0 - from) / kStripSeconds * shown.width()) + 4;
    label(leftX, shown.height() - 4, left, QColor(230, 230, 230));
    label(shown.width() - 4 - painter.fontMetrics().horizontalAdvance(right), shown.height() - 4,
          right, QColor(230, 230, 230));
    painter.end();
    m_stripImage = shown;
    m_strip->setPixmap(QPixmap::fromImage(shown));
}

void InferencePanel::setModel(const QString &path)
{
    m_model->setText(path);
    takeTunedSetting();
}

QString InferencePanel::model() const
{
    return m_model->text().trimmed();
}

bool InferencePanel::busy() const
{
    return m_process->state() != QProcess::NotRunning;
}

QString InferencePanel::status() const
{
    return m_status->text();
}

void InferencePanel::predictFiles(const QStringList &files, bool listenToLong)
{
    if (files.isEmpty()) return;
    if (model().isEmpty()) {
        m_status->setText(tr("Choose a trained model first (a run folder), or finish a run."));
        emit predicted();
        return;
    }
    if (busy()) {
        m_status->setText(tr("Still predicting the previous files; drop these again in a moment."));
        return;
    }
    if (listening()) {
        m_status->setText(tr("Listening; stop listening to try files."));
        return;
    }
    // One recording longer than a few windows: the model listens to all of it, as Listen mode
    // listens to the microphone. Predicted once, only its middle second would be heard.
    if (listenToLong && files.size() == 1 &&
        QDir::match(recordingPatterns(), QFileInfo(files[0]).fileName())) {
        const auto seconds = fb::data::recordingSeconds(files[0].toStdString());
        if (seconds.ok() && seconds.value() > kListenFileSeconds) {
            QString why;
            if (!listenToFile(files[0], &why)) {
                m_status->setText(why);
                emit predicted(); // nothing to wait for: the status says why
            }
            return;
        }
    }
    if (m_strip->isVisible() || !m_file.isEmpty()) {
        // From Listen mode's detections back to predictions of files.
        m_strip->hide();
        m_preview->show();
        m_history->clear();
        m_results.clear();
        m_file.clear();
        m_fileSamples.clear();
        showClipped({}); // Listen mode's; a clip's own is marked in the list
    }
    m_pending.clear();
    m_batchStart = int(m_results.size());
    m_batchModel = model();
    // A model other than one that answered before: from now on every entry names its model.
    const bool several = std::any_of(m_results.begin(), m_results.end(),
                                     [this](const Result &r) { return r.model != m_batchModel; });
    const bool relabel = several && !m_historyNamesModels;
    m_historyNamesModels = several;
    for (int i = 0; relabel && i < m_results.size() && i < m_history->count(); ++i)
        labelHistoryItem(i);
    m_status->setText(tr("Predicting %n file(s)…", nullptr, int(files.size())));
    QStringList args{"infer", m_batchModel, "--top", "5", "--inputs", "--saliency"};
    // A recording is heard as Listen mode hears a window: also 8% faster and slower (infer's
    // default) unless the box says not.
    if (!listenWarp())
        args << "--warp"
             << "0";
    // Balanced halfway (infer's default for recordings) unless the box says not.
    if (!balanceClasses())
        args << "--balance"
             << "0";
    m_process->start(m_cli, args + files);
}

void InferencePanel::readLines()
{
    m_pending += m_process->readAllStandardOutput();
    for (const nlohmann::json &j : takeJsonLines(m_pending)) {
        if (!j.contains("input")) continue;
        Result r;
        r.input = QString::fromStdString(eventString(j, "input"));
        r.error = QString::fromStdString(eventString(j, "error"));
        if (const auto top = j.find("top"); top != j.end() && top->is_array())
            for (const auto &c : *top) {
                if (!c.is_object()) continue;
                r.classes << QString::fromStdString(eventString(c, "class"));
                const double p = eventNumber(c, "probability", qQNaN());
                r.probabilities << p;
            }
        if (r.error.isEmpty() && r.classes.isEmpty())
            r.error = tr("the engine gave no prediction for it");
        if (r.error.isEmpty() && std::any_of(r.probabilities.begin(), r.probabilities.end(),
                                             [](double p) { return !std::isfinite(p); }))
            r.error = tr("the model gave no usable probabilities (not numbers): its weights may "
                         "be damaged");
        r.milliseconds = eventNumber(j, "ms");
        r.audio = eventString(j, "kind") == "audio";
        const std::vector<int64_t> shape = shapeOf(j);
        if (j.contains("sample"))
            r.view = pictureOf(floatsOf(eventString(j, "sample")), shape, r.audio);
        if (j.contains("saliency"))
            r.saliency = overlayOf(floatsOf(eventString(j, "saliency")), shape, r.audio);
        if (j.contains("waveform")) r.waveform = floatsOf(eventString(j, "waveform"));
        r.sampleRate = int(std::clamp(eventNumber(j, "sample_rate"), 0.0, 1e6));
        r.clipped = std::clamp(eventNumber(j, "clipped"), 0.0, 1.0);
        r.model = m_batchModel;
        m_results << r;
        m_history->addItem(new QListWidgetItem);
        labelHistoryItem(int(m_results.size()) - 1);
        m_history->setCurrentRow(m_history->count() - 1);
    }
}

namespace {

// A model's short name for the list: a run folder's name, or a file's folder and name
// ("ru-s1/model", "checkpoints/epoch-3").
QString modelName(const QString &path)
{
    const QFileInfo f(QDir::cleanPath(path)); // "runs/x/" is "x"
    if (f.isDir() || f.suffix().isEmpty()) return f.fileName();
    return f.dir().dirName() + "/" + f.completeBaseName();
}

} // namespace

void InferencePanel::labelHistoryItem(int i)
{
    const Result &r = m_results[i];
    QString text =
        QFileInfo(r.input).fileName() +
        (r.error.isEmpty() ? QStringLiteral(": ") + r.classes.value(0) : tr(": unreadable"));
    if (r.clipped > 0) text += tr(" (clipped)");
    if (m_historyNamesModels) text += QStringLiteral(" (%1)").arg(modelName(r.model));
    m_history->item(i)->setText(text);
    m_history->item(i)->setToolTip(
        (r.error.isEmpty() ? r.input : r.error) +
        (r.clipped > 0 ? tr("\nclipped: %1% of its samples cut off flat at its loudest (recorded "
                            "too loud)")
                             .arg(100 * r.clipped, 0, 'f', 1)
                       : QString()) +
        tr("\nmodel: %1").arg(r.model));
}

void InferencePanel::finishBatch(int exitCode)
{
    readLines();
    const int got = int(m_results.size()) - m_batchStart;
    const QString err = QString::fromUtf8(m_process->readAllStandardError()).trimmed();
    if (exitCode == 2 || got == 0) {
        // The model could not be opened: stderr's last line says why.
        m_status->setText(tr("No prediction: %1").arg(err.section('\n', -1)));
    } else {
        int failed = 0, clipped = 0;
        for (int i = m_batchStart; i < m_results.size(); ++i) {
            failed += !m_results[i].error.isEmpty();
            clipped += m_results[i].clipped > 0;
        }
        QString text = failed ? tr("%1 predicted; %2 could not be read (see the list)")
                                    .arg(got - failed)
                                    .arg(failed)
                              : tr("%n file(s) predicted. Drop more to compare.", nullptr, got);
        // A clipped recording is heard much worse (the spoken-digits example lost 16 to 32
        // points of its digits): say so, and what to do.
        if (clipped > 0)
            text += tr(" %n clipped: cut off flat at the loudest, recorded too loud for the "
                       "microphone or its input gain, and heard less well; record again quieter.",
                       nullptr, clipped);
        m_status->setText(text);
    }
    emit predicted();
}

void InferencePanel::drawBars(const QStringList &classes, const QVector<double> &values)
{
    // The top classes, most probable first.
    m_bars->clearPlottables();
    auto *bars = new QCPBars(m_bars->xAxis, m_bars->yAxis);
    bars->setName(tr("probability"));
    bars->setBrush(isDarkPalette(palette()) ? QColor(0x5e, 0xaa, 0xf0) : QColor(60, 120, 200));
    bars->setPen(Qt::NoPen);
    QVector<double> keys;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int i = 0; i < classes.size(); ++i) {
        keys << i + 1;
        ticker->addTick(i + 1, classes[i]);
    }
    bars->setData(keys, values.mid(0, classes.size()));
    m_bars->xAxis->setTicker(ticker);
    m_bars->xAxis->setRange(0.4, double(std::max<qsizetype>(1, classes.size())) + 0.6);
    m_bars->replot();
}

void InferencePanel::showResult(int index)
{
    if (!m_file.isEmpty()) {
        // A detection in a listened recording: the strip shows the seconds around it.
        if (index >= 0 && index < m_heard.size() && !listening()) {
            const Heard &h = m_heard[index];
            m_fileNow = std::min(m_fileSeconds, h.time + kStripSeconds / 2);
            m_title->setText(
                tr("%1: <b>%2</b> at %3 s (%4%)")
                    .arg(QFileInfo(m_file).fileName().toHtmlEscaped(), h.label.toHtmlEscaped())
                    .arg(h.time, 0, 'f', 1)
                    .arg(100.0 * h.probability, 0, 'f', 0));
            drawStrip();
        }
        return;
    }
    if (index < 0 || index >= m_results.size()) return;
    const Result &r = m_results[index];
    if (!r.error.isEmpty()) {
        m_title->setText(QFileInfo(r.input).fileName() + QStringLiteral(": ") + r.error);
        m_latency->clear();
        m_preview->clear();
        m_bars->clearPlottables();
        m_bars->replot();
        m_wave->hide();
        return;
    }
    m_title->setText(
        QStringLiteral("<b>%1</b> — %2 (%3%)")
            .arg(QFileInfo(r.input).fileName().toHtmlEscaped(), r.classes.value(0).toHtmlEscaped())
            .arg(100.0 * r.probabilities.value(0), 0, 'f', 1));
    m_latency->setText(tr("%1 ms").arg(r.milliseconds, 0, 'f', 2));
    if (!r.view.isNull()) {
        const QSize box(256, 160);
        const QSize size = r.view.size().scaled(box, Qt::KeepAspectRatio);
        const auto mode = r.audio ? Qt::SmoothTransformation : Qt::FastTransformation;
        QImage shown =
            r.view.convertToFormat(QImage::Format_ARGB32).scaled(size, Qt::IgnoreAspectRatio, mode);
        if (m_showSaliency->isChecked() && !r.saliency.isNull()) {
            QPainter painter(&shown);
            painter.drawImage(QRect(QPoint(0, 0), size),
                              r.saliency.scaled(size, Qt::IgnoreAspectRatio, mode));
        }
        m_preview->setPixmap(QPixmap::fromImage(shown));
    }
    drawBars(r.classes, QVector<double>(r.probabilities.begin(), r.probabilities.end()));
    m_wave->setVisible(r.audio && !r.waveform.isEmpty());
    if (m_wave->isVisible()) {
        QVector<double> t(r.waveform.size()), y(r.waveform.size());
        for (int i = 0; i < r.waveform.size(); ++i) {
            t[i] = double(i) / std::max(1, r.sampleRate);
            y[i] = r.waveform[i];
        }
        m_wave->graph(0)->setData(t, y, true);
        m_wave->rescaleAxes();
        m_wave->replot();
    }
}

void InferencePanel::changeEvent(QEvent *e)
{
    QWidget::changeEvent(e);
    if (e->type() == QEvent::PaletteChange || e->type() == QEvent::StyleChange) {
        applyPlotPalette(m_bars, palette());
        applyPlotPalette(m_wave, palette());
        m_bars->replot();
        m_wave->replot();
    }
}

void InferencePanel::dragEnterEvent(QDragEnterEvent *e)
{
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void InferencePanel::dropEvent(QDropEvent *e)
{
    QStringList files;
    for (const QUrl &u : e->mimeData()->urls())
        if (u.isLocalFile()) files << u.toLocalFile();
    if (files.isEmpty()) return;
    e->acceptProposedAction();
    predictFiles(files);
}

} // namespace fb::widgets
