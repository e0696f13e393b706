#include "widgets/inference/tune_dialog.h"

#include "widgets/audio/pcm.h"

#include "core/data/audio_files.h"
#include "core/io/tuned_setting.h"

#include <nlohmann/json.hpp>

#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace fb::widgets {

namespace {

// A path field with its Choose… button, in one row of the form.
QWidget *withChooser(QLineEdit *edit, QPushButton *choose)
{
    auto *row = new QWidget;
    auto *h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(edit, 1);
    h->addWidget(choose);
    return row;
}

// The labels of the same name beside a recording (.txt, as Audacity exports them, or .tsv), or
// "" where there are none.
QString besideLabels(const QString &recording)
{
    const QFileInfo rec(recording);
    if (recording.isEmpty() || rec.completeBaseName().isEmpty()) return {};
    for (const char *ext : {".txt", ".tsv"}) {
        const QString candidate = rec.dir().filePath(rec.completeBaseName() + ext);
        if (QFileInfo(candidate).isFile()) return candidate;
    }
    return {};
}

} // namespace

TuneDialog::TuneDialog(const QString &recordingFile, const QString &labelsFile, double budget,
                       QWidget *parent)
    : QDialog(parent)
    , m_recording(new QLineEdit)
    , m_labels(new QLineEdit)
    , m_budget(new QDoubleSpinBox)
    , m_hint(new QLabel)
    , m_problem(new QLabel)
    , m_buttons(new QDialogButtonBox)
{
    setWindowTitle(tr("Tune"));
    setObjectName("tuneDialog");
    auto *intro = new QLabel(
        tr("Hear a recording of your own at every threshold and number of windows, and find the "
           "setting that finds the most of its words at their time within the false alarms an "
           "hour you allow. The recording should hold your words with other words, noise and "
           "silence between them, as the model will hear them; its labels say which word was "
           "said when (in Audacity: File > Export > Export Labels). Or take the run's own "
           "held-out recordings, one after another (From held-out…). The models listening "
           "together and the ±8% box are heard as they are set."));
    intro->setWordWrap(true);

    m_recording->setObjectName("tuneRecording");
    m_recording->setPlaceholderText(tr("a WAV, FLAC, OGG or MP3 file"));
    m_labels->setObjectName("tuneLabels");
    m_labels->setPlaceholderText(tr("START<tab>END<tab>WORD a line, in seconds"));
    auto *chooseRecording = new QPushButton(tr("Choose…"));
    auto *chooseLabels = new QPushButton(tr("Choose…"));
    connect(chooseRecording, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Choose a recording to tune on"), QFileInfo(recording()).absolutePath(),
            tr("Recordings (%1);;All files (*)").arg(recordingPatterns().join(' ')));
        if (!path.isEmpty()) setRecording(path);
    });
    connect(chooseLabels, &QPushButton::clicked, this, [this] {
        const QString from = !labels().isEmpty() ? labels() : recording();
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Choose its labels (Audacity's exported labels)"),
            QFileInfo(from).absolutePath(), tr("Labels (*.txt *.tsv);;All files (*)"));
        if (!path.isEmpty()) setLabels(path);
    });

    m_budget->setObjectName("tuneBudget");
    m_budget->setRange(0.1, 10000);
    m_budget->setDecimals(1);
    m_budget->setSingleStep(0.5);
    m_budget->setToolTip(
        tr("How often the model may take something for one of your words where none was said. "
           "Fewer false alarms cost words found: the setting that keeps to fewer asks the model "
           "to be surer."));
    auto *budgetRow = new QWidget;
    auto *bh = new QHBoxLayout(budgetRow);
    bh->setContentsMargins(0, 0, 0, 0);
    bh->addWidget(m_budget);
    bh->addWidget(new QLabel(tr("false alarms an hour")));
    bh->addStretch(1);

    // Or the run's own held-out recordings, one after another (flowbench-cli held-out-stream).
    m_fromHeldOut = new QPushButton(tr("From held-out…"));
    m_fromHeldOut->setObjectName("tuneFromHeldOut");
    connect(m_fromHeldOut, &QPushButton::clicked, this, [this] { makeHeldOut(); });
    setHeldOutSource({}, {}, {});
    auto *recordingRow = withChooser(m_recording, chooseRecording);
    recordingRow->layout()->addWidget(m_fromHeldOut);

    auto *form = new QFormLayout;
    form->addRow(tr("Recording:"), recordingRow);
    form->addRow(tr("Labels:"), withChooser(m_labels, chooseLabels));
    form->addRow(tr("At most:"), budgetRow);

    m_hint->setObjectName("tuneHint");
    m_hint->setWordWrap(true);
    m_problem->setObjectName("tuneProblem");
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet("color: #c0392b");

    m_start = m_buttons->addButton(tr("Tune"), QDialogButtonBox::AcceptRole);
    m_start->setObjectName("tuneStart");
    m_buttons->addButton(QDialogButtonBox::Cancel);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *v = new QVBoxLayout(this);
    v->addWidget(intro);
    v->addLayout(form);
    v->addWidget(m_hint);
    v->addWidget(m_problem);
    v->addStretch(1);
    v->addWidget(m_buttons);
    resize(640, sizeHint().height());

    connect(m_recording, &QLineEdit::textChanged, this, [this] {
        // Labels named after the recording come with it, unless the user chose others: labels
        // empty, filled in before, or beside the recording before are the recording's.
        const QString now = besideLabels(recording());
        if (labels().isEmpty() || labels() == m_filledLabels ||
            labels() == besideLabels(m_recordingBefore)) {
            m_labels->setText(now);
            m_filledLabels = now;
        }
        m_recordingBefore = recording();
        check();
    });
    connect(m_labels, &QLineEdit::textChanged, this, [this] { check(); });
    connect(m_budget, &QDoubleSpinBox::valueChanged, this, [this] { check(); });

    setBudget(budget);
    setLabels(labelsFile);
    setRecording(recordingFile);
    check();
}

QString TuneDialog::recording() const
{
    return m_recording->text().trimmed();
}
QString TuneDialog::labels() const
{
    return m_labels->text().trimmed();
}
double TuneDialog::budget() const
{
    return m_budget->value();
}
void TuneDialog::setRecording(const QString &path)
{
    m_recording->setText(path);
}
void TuneDialog::setLabels(const QString &path)
{
    m_labels->setText(path);
    m_filledLabels.clear();
}
void TuneDialog::setBudget(double falseAlarmsPerHour)
{
    m_budget->setValue(falseAlarmsPerHour);
}
QString TuneDialog::problem() const
{
    return m_problem->text();
}
QString TuneDialog::hint() const
{
    return m_hint->text();
}

void TuneDialog::check()
{
    if (recording() != m_secondsOf) {
        m_secondsOf = recording();
        m_seconds = -1;
        m_unreadable.clear();
        if (!m_secondsOf.isEmpty()) {
            const auto seconds = fb::data::recordingSeconds(m_secondsOf.toStdString());
            if (seconds.ok())
                m_seconds = seconds.value();
            else
                m_unreadable = QString::fromStdString(seconds.error().str());
        }
    }
    QString problem = m_unreadable;
    if (recording().isEmpty())
        problem = tr("Choose a recording of your words.");
    else if (problem.isEmpty() && labels().isEmpty())
        problem = tr("Choose its labels: which word was said when.");
    else if (problem.isEmpty() && !QFileInfo(labels()).isFile())
        problem = tr("%1: no such file.").arg(labels());

    // What the budget needs of the recording, said before minutes go into hearing it.
    const double needed = fb::io::secondsToTell(budget());
    QString hint = tr("To tell %1 false alarms an hour from none, at least %2 of the recording "
                      "must lie away from your words: one false alarm there is then %1 an hour.")
                       .arg(budget())
                       .arg(durationText(needed));
    if (m_seconds >= 0) {
        hint = tr("%1 lasts %2.").arg(QFileInfo(recording()).fileName(), durationText(m_seconds)) +
               QLatin1Char(' ') + hint;
        if (!m_heldOut.isEmpty() && recording() == m_heldOut)
            hint = m_heldOutNote + QLatin1Char(' ') + hint;
        if (m_seconds < needed)
            hint += QLatin1Char(' ') + tr("This one is shorter: it gives the score at the row's "
                                          "setting, and no setting to keep.");
    }
    m_hint->setText(hint);
    if (!m_making.isEmpty()) problem = tr("Wait for the held-out recordings to be joined.");
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    m_start->setEnabled(problem.isEmpty());
}

TuneDialog::~TuneDialog()
{
    stopChild();
}

void TuneDialog::done(int result)
{
    stopChild(); // closed while the stream is made: it is not wanted
    QDialog::done(result);
}

void TuneDialog::stopChild()
{
    // Before the widgets its slots use go: ~QProcess would wait for the child and report its end
    // to a dialog half destroyed. The part it wrote goes with it.
    if (!m_child) return;
    m_child->disconnect(this);
    m_child->kill();
    m_child->waitForFinished(5000);
    delete m_child;
    if (!m_making.isEmpty()) QFile::remove(m_making + ".part");
    m_making.clear();
}

void TuneDialog::setHeldOutSource(const QString &cli, const QString &model, const QString &folder)
{
    m_cli = cli;
    m_model = model;
    m_folder = folder;
    const QString why = model.isEmpty()    ? tr("Choose a trained run first.")
                        : cli.isEmpty()    ? tr("flowbench-cli was not found.")
                        : folder.isEmpty() ? tr("No folder to write it in.")
                                           : QString();
    m_fromHeldOut->setEnabled(why.isEmpty() && m_making.isEmpty());
    m_fromHeldOut->setToolTip(
        why.isEmpty()
            ? tr("The run's held-out recordings (voices and words it never trained on) one after "
                 "another with silence between them, as one recording and its labels: nothing to "
                 "record or label. Easier to hear than a room: it measures voices and words, not "
                 "a microphone")
            : why);
}

bool TuneDialog::makeHeldOut()
{
    if (!m_fromHeldOut->isEnabled()) return false;
    const QString name = QFileInfo(m_model).fileName().isEmpty()
                             ? QStringLiteral("run")
                             : QFileInfo(m_model).completeBaseName();
    m_making = QDir(m_folder).filePath(name + "-held-out.wav");
    QDir().mkpath(m_folder);
    auto *child = new QProcess(this);
    m_child = child;
    m_fromHeldOut->setEnabled(false);
    check(); // Tune waits for it
    m_hint->setText(
        tr("Joining the held-out recordings of %1…").arg(QFileInfo(m_model).fileName()));
    connect(child, &QProcess::finished, this, [this, child](int code, QProcess::ExitStatus) {
        m_child.clear();
        child->deleteLater();
        const QByteArray out = child->readAllStandardOutput().trimmed();
        const nlohmann::json summary =
            nlohmann::json::parse(out.split('\n').last().toStdString(), nullptr, false);
        const QString made = m_making;
        m_making.clear();
        setHeldOutSource(m_cli, m_model, m_folder);
        if (code == 0 && summary.is_object() && summary.value("status", "") == "ok") {
            m_heldOut = made;
            m_heldOutNote =
                tr("The %1 recordings %2 held out, one after another with silence between "
                   "them (%3 labelled, %4 of noise).")
                    .arg(QString::number(summary.value("recordings", 0)),
                         QFileInfo(m_model).fileName(),
                         QString::number(summary.value("labelled", 0)),
                         QString::number(summary.value("noises", 0)));
            setLabels(QString::fromStdString(summary.value("labels", std::string())));
            m_filledLabels = labels(); // the stream's: another recording brings its own
            m_secondsOf.clear();       // made again at the same path: read its length again
            setRecording(made);
            check();
            emit heldOutMade(true);
            return;
        }
        QString why;
        if (summary.is_object() && summary.contains("error") && summary["error"].is_object())
            why = QString::fromStdString(summary["error"].value("message", std::string()));
        if (why.isEmpty())
            why = QString::fromUtf8(child->readAllStandardError()).trimmed().section('\n', -1);
        check();
        m_problem->setText(tr("No stream of held-out recordings: %1").arg(why));
        m_problem->setVisible(true);
        emit heldOutMade(false);
    });
    connect(child, &QProcess::errorOccurred, this, [this, child](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return;
        m_child.clear();
        child->deleteLater();
        m_making.clear();
        setHeldOutSource(m_cli, m_model, m_folder);
        m_problem->setText(tr("No stream of held-out recordings: could not start %1").arg(m_cli));
        m_problem->setVisible(true);
        emit heldOutMade(false);
    });
    child->start(m_cli, {"held-out-stream", m_model, m_making});
    return true;
}

QString durationText(double seconds)
{
    return seconds < 120 ? QObject::tr("%1 s").arg(seconds, 0, 'f', 0)
                         : QObject::tr("%1 min").arg(std::round(seconds / 6.0) / 10.0);
}

} // namespace fb::widgets
