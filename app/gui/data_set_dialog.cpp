#include "app/gui/data_set_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace fb::app {

namespace {

constexpr int kKeptStderrLines = 12;
constexpr int kKillAfterMs = 5000; // after Cancel, if the child has not stopped by then

} // namespace

DataSetDialog::DataSetDialog(QWidget *parent)
    : QDialog(parent)
    , m_text(new QLabel)
    , m_bar(new QProgressBar)
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Cancel))
{
    setObjectName(QStringLiteral("data_set_dialog"));
    m_text->setObjectName(QStringLiteral("text"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse); // the folder can be copied
    m_text->setFixedWidth(520); // wrapped lines need a width to wrap at
    m_bar->setObjectName(QStringLiteral("progress"));
    m_bar->setRange(0, 0); // busy until the first count
    m_bar->setFormat(QStringLiteral("%v of %m"));
    m_bar->setTextVisible(false);
    auto *layout = new QVBoxLayout(this);
    // The dialog takes the height its text needs as the text changes (a wrapped folder name, a
    // failure's reasons), rather than clipping it.
    layout->setSizeConstraint(QLayout::SetFixedSize);
    layout->addWidget(m_text);
    layout->addWidget(m_bar);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &DataSetDialog::reject);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &DataSetDialog::accept);
}

DataSetDialog::~DataSetDialog()
{
    // The child must not outlive the dialog: stopped as Cancel stops it, killed if it lingers.
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->disconnect(this);
        m_process->terminate();
        if (!m_process->waitForFinished(3000)) {
            m_process->kill();
            m_process->waitForFinished(1000);
        }
    }
}

QString DataSetDialog::text() const
{
    return m_text->text();
}

bool DataSetDialog::start(const QString &cli, const QStringList &arguments, const QString &folder,
                          QString *why)
{
    if (isWorking()) {
        if (why) *why = tr("The data set is being made already.");
        return false;
    }
    if (m_process) m_process->deleteLater();
    m_folder = QDir::toNativeSeparators(folder);
    m_made = m_total = 0;
    m_stderr.clear();
    m_stderrTail.clear();
    m_cancelRequested = false;
    m_state = State::Working;
    m_bar->setRange(0, 0);
    m_bar->setTextVisible(false);
    m_bar->show();
    m_buttons->setStandardButtons(QDialogButtonBox::Cancel);
    m_text->setText(tr("Making the recordings in %1…").arg(m_folder));

    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardError, this, &DataSetDialog::readStderr);
    connect(m_process, &QProcess::finished, this, &DataSetDialog::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, &DataSetDialog::onError);
    m_process->start(cli, arguments);
    return true;
}

void DataSetDialog::cancel()
{
    if (!isWorking() || m_cancelRequested) return;
    m_cancelRequested = true;
    m_text->setText(tr("Stopping: the recordings being made are finished…"));
    m_buttons->button(QDialogButtonBox::Cancel)->setEnabled(false);
    m_process->terminate();
    QTimer::singleShot(kKillAfterMs, m_process, [p = m_process] {
        if (p->state() != QProcess::NotRunning) p->kill();
    });
}

void DataSetDialog::reject()
{
    if (isWorking())
        cancel();
    else
        QDialog::reject();
}

void DataSetDialog::readStderr()
{
    // "made 340 of 19870" every few seconds ("stopped with 340 of 19870 made" at a cancel);
    // "making 13305 recordings in ..." says the total first.
    static const QRegularExpression made(QStringLiteral("(?:made|with) (\\d+) of (\\d+)"));
    static const QRegularExpression making(QStringLiteral("making (\\d+) recordings"));
    m_stderr += m_process->readAllStandardError();
    int end;
    while ((end = m_stderr.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(m_stderr.left(end)).trimmed();
        m_stderr.remove(0, end + 1);
        if (line.isEmpty()) continue;
        m_stderrTail << line;
        while (m_stderrTail.size() > kKeptStderrLines)
            m_stderrTail.removeFirst();
        if (const auto m = made.match(line); m.hasMatch()) {
            m_made = m.captured(1).toInt();
            m_total = m.captured(2).toInt();
            showProgress();
        } else if (const auto m = making.match(line); m.hasMatch() && m_total == 0) {
            m_total = m.captured(1).toInt();
            showProgress();
        }
    }
}

void DataSetDialog::showProgress()
{
    if (m_cancelRequested || m_total <= 0) return;
    m_bar->setRange(0, m_total);
    m_bar->setValue(std::min(m_made, m_total));
    m_bar->setTextVisible(true);
    m_text->setText(tr("Made %1 of %2 recordings in %3").arg(m_made).arg(m_total).arg(m_folder));
    emit progressed(m_made, m_total);
}

void DataSetDialog::onFinished(int exitCode, QProcess::ExitStatus status)
{
    readStderr();
    // The CLI's contract: its last stdout line is one JSON object.
    const QList<QByteArray> lines = m_process->readAllStandardOutput().trimmed().split('\n');
    const QJsonObject last = QJsonDocument::fromJson(lines.last()).object();
    if (status == QProcess::NormalExit && exitCode == 0 &&
        last.value(QStringLiteral("status")).toString() == QLatin1String("ok")) {
        m_folder = QDir::toNativeSeparators(last.value(QStringLiteral("path")).toString(m_folder));
        m_made = m_total = last.value(QStringLiteral("recordings")).toInt();
        QString message = tr("Done: %1 recordings in %2.").arg(m_made).arg(m_folder);
        if (!m_doneNote.isEmpty()) message += QLatin1Char(' ') + m_doneNote;
        end(State::Done, message);
        return;
    }
    if (m_cancelRequested) {
        end(State::Cancelled,
            tr("Cancelled with %1 of %2 recordings made in %3. They are kept: making the data "
               "set again makes only the rest.")
                .arg(m_made)
                .arg(m_total)
                .arg(m_folder));
        return;
    }
    QString why = last.value(QStringLiteral("error")).toObject().value("message").toString();
    if (why.isEmpty())
        why = status == QProcess::CrashExit ? tr("flowbench-cli crashed") : m_stderrTail.join('\n');
    end(State::Failed, tr("The data set could not be made: %1").arg(why));
}

void DataSetDialog::onError(QProcess::ProcessError error)
{
    if (error != QProcess::FailedToStart) return; // the others end in finished()
    end(State::Failed, tr("flowbench-cli could not be started: %1").arg(m_process->errorString()));
}

void DataSetDialog::end(State state, const QString &message)
{
    m_state = state;
    m_text->setText(message);
    if (m_total > 0) {
        m_bar->setRange(0, m_total);
        m_bar->setValue(std::min(m_made, m_total));
        m_bar->setTextVisible(true);
    } else {
        m_bar->hide(); // nothing was counted: no bar to show
    }
    m_buttons->setStandardButtons(QDialogButtonBox::Close); // rejected(): reject() closes now
    emit ended(state, message);
}

} // namespace fb::app
