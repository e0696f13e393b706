#include "widgets/run/run_session.h"

#include "core/base/json_nesting.h"

#include "widgets/run/event_fields.h"

#include "widgets/run/run_record.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <exception>
#include <utility>

#include <sys/types.h>
#include <unistd.h>

namespace fb::widgets {

using nlohmann::json;

namespace {

constexpr int kStderrTailLines = 20;
constexpr int kStderrTailInMessage = 8;
constexpr qint64 kStderrHoldMs = 250; // how long a stderr line waits for its event twin
constexpr std::size_t kRecentTexts = 128;

QString str(const json &e, const char *key)
{
    return QString::fromStdString(eventString(e, key));
}

QString signalName(int sig)
{
    switch (sig) {
    case SIGKILL:
        return "SIGKILL";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGPIPE:
        return "SIGPIPE";
    default:
        return {};
    }
}

// The CLI's stderr as a person sees it on a terminal: drop what a carriage return overwrote and
// the terminal's escape sequences (the progress bar), keep the text.
QString visibleText(const QByteArray &raw)
{
    QByteArray line = raw;
    if (line.endsWith('\r')) line.chop(1);
    const qsizetype cr = line.lastIndexOf('\r');
    if (cr >= 0) line = line.mid(cr + 1);
    QByteArray out;
    out.reserve(line.size());
    for (qsizetype i = 0; i < line.size(); ++i) {
        if (line[i] == '\033') { // ESC [ parameters final-letter
            ++i;
            if (i < line.size() && line[i] == '[') {
                ++i;
                while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i])))
                    ++i;
            }
            continue;
        }
        out += line[i];
    }
    return QString::fromUtf8(out).trimmed();
}

// The CLI's progress lines ("epoch 2/5  step 10/16  loss ...") and bars ("[####....] ..."):
// the progress events say the same, and a log full of them would bury the messages.
bool isProgressLine(const QString &text)
{
    static const QRegularExpression progress(R"(^epoch \d+/\d+\s+step \d+/\d+)");
    static const QRegularExpression bar(R"(^\[[#.]+\])");
    return progress.match(text).hasMatch() || bar.match(text).hasMatch();
}

} // namespace

RunSession::RunSession(QObject *parent)
    : QObject(parent)
    , m_stderrTimer(new QTimer(this))
{
    m_stderrTimer->setInterval(int(kStderrHoldMs));
    connect(m_stderrTimer, &QTimer::timeout, this, [this] { flushStderr(false); });
    m_clock.start();
}

RunSession::~RunSession()
{
    if (m_process) {
        m_process->disconnect(this);
        if (m_process->state() != QProcess::NotRunning) {
            killProcess();
            m_process->waitForFinished(3000);
        }
    }
}

QString RunSession::defaultCliPath()
{
    const QString env = qEnvironmentVariable("FLOWBENCH_CLI");
    if (!env.isEmpty()) return env;
    const QFileInfo beside(QCoreApplication::applicationDirPath() + "/flowbench-cli");
    if (beside.isFile() && beside.isExecutable()) return beside.absoluteFilePath();
    return QStandardPaths::findExecutable("flowbench-cli");
}

QString RunSession::defaultMpirunPath()
{
    return QStandardPaths::findExecutable(QStringLiteral("mpirun"));
}

QStringList RunSession::commandLine(const RunRequest &r, const QString &cliPath)
{
    if (!r.dataParallel()) return QStringList{cliPath} + arguments(r);
    QStringList line{r.mpirunPath.isEmpty() ? defaultMpirunPath() : r.mpirunPath, "-np",
                     QString::number(std::max(r.ranks, 1))};
    // On this machine alone, more ranks than cores is allowed (the person asked for them).
    if (r.hostfile.isEmpty())
        line << "--oversubscribe";
    else
        line << "--hostfile" << r.hostfile;
    return line + QStringList{cliPath} + arguments(r);
}

QStringList RunSession::arguments(const RunRequest &r)
{
    QStringList args{"run", r.pipelinePath, "--events", "-"};
    if (!r.outDir.isEmpty()) args << "--out" << r.outDir;
    if (!r.device.isEmpty()) args << "--device" << r.device;
    if (r.threads > 0) args << "--threads" << QString::number(r.threads);
    if (r.dataWorkers > 0) args << "--data-workers" << QString::number(r.dataWorkers);
    for (const QString &s : r.settings)
        args << "--set" << s;
    if (!r.resumeDir.isEmpty()) args << "--resume" << r.resumeDir;
    return args;
}

bool RunSession::start(const RunRequest &request, QString *error)
{
    auto refuse = [&](const QString &message) {
        if (error) *error = message;
        return false;
    };
    if (m_running) return refuse(tr("A run is going on already; stop it first."));

    QString cli = request.cliPath;
    if (cli.isEmpty()) {
        cli = defaultCliPath();
        if (cli.isEmpty())
            return refuse(
                tr("flowbench-cli was not found: looked at $FLOWBENCH_CLI (not set), "
                   "beside this program (%1) and on the PATH.")
                    .arg(QDir::toNativeSeparators(QCoreApplication::applicationDirPath())));
    }
    const QFileInfo cliInfo(cli);
    if (!cliInfo.isFile() || !cliInfo.isExecutable()) {
        const QString where =
            !request.cliPath.isEmpty()
                ? tr("the path given")
                : (qEnvironmentVariableIsSet("FLOWBENCH_CLI") ? tr("$FLOWBENCH_CLI")
                                                              : tr("the path found"));
        return refuse(tr("flowbench-cli was not found at %1 (%2): no such executable file.")
                          .arg(QDir::toNativeSeparators(cli), where));
    }
    if (request.pipelinePath.isEmpty()) return refuse(tr("No pipeline file to run."));
    if (request.dataParallel()) {
        const QString mpirun =
            request.mpirunPath.isEmpty() ? defaultMpirunPath() : request.mpirunPath;
        if (mpirun.isEmpty() || !QFileInfo(mpirun).isExecutable())
            return refuse(tr("Training on %1 processes needs Open MPI's mpirun, which was not "
                             "found: install openmpi-bin (scripts/deps.sh does).")
                              .arg(std::max(request.ranks, 1)));
        if (!request.hostfile.isEmpty() && !QFileInfo(request.hostfile).isFile())
            return refuse(tr("The hostfile %1 does not exist.")
                              .arg(QDir::toNativeSeparators(request.hostfile)));
    }
    if (!QFileInfo::exists(request.pipelinePath))
        return refuse(tr("The pipeline file %1 does not exist.")
                          .arg(QDir::toNativeSeparators(request.pipelinePath)));

    if (m_process) {
        m_process->disconnect(this);
        m_process->deleteLater();
    }
    m_request = request;
    m_cliPath = cliInfo.absoluteFilePath();
    m_running = true;
    m_paused = false;
    m_killRequested = false;
    m_stdoutBuffer.clear();
    m_stderrBuffer.clear();
    m_summary = json();
    m_lastT = 0;
    m_pendingStderr.clear();
    m_recentEventTexts.clear();
    m_stderrTail.clear();

    m_process = new QProcess(this);
    QStringList line = commandLine(request, m_cliPath);
    m_process->setProgram(line.takeFirst());
    m_process->setArguments(line);
    if (request.dataParallel()) {
        // mpirun and the ranks it starts here form one process group, so that kill() ends them
        // all (a SIGKILL to mpirun alone would leave its ranks training).
        m_process->setChildProcessModifier([] { ::setpgid(0, 0); });
        // Open MPI refuses to run as root unless told twice; a root session (a container)
        // asked for the run, so it is allowed.
        if (::geteuid() == 0) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
            env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
            m_process->setProcessEnvironment(env);
        }
    }
    connect(m_process, &QProcess::started, this, &RunSession::started);
    connect(m_process, &QProcess::readyReadStandardOutput, this, &RunSession::readStdout);
    connect(m_process, &QProcess::readyReadStandardError, this, &RunSession::readStderr);
    connect(m_process, &QProcess::finished, this, &RunSession::onFinished);
    connect(m_process, &QProcess::errorOccurred, this, &RunSession::onError);
    m_process->start(QIODevice::ReadWrite); // stdin stays open: it carries the commands
    return true;
}

qint64 RunSession::processId() const
{
    return m_process ? m_process->processId() : 0;
}

QStringList RunSession::stderrTail() const
{
    return m_stderrTail;
}

void RunSession::sendCommand(json command)
{
    if (!m_running || !m_process || m_process->state() == QProcess::NotRunning) return;
    command["id"] = "window-" + std::to_string(m_nextCommandId++);
    const std::string line = command.dump() + "\n";
    m_process->write(line.data(), qint64(line.size()));
}

void RunSession::pause()
{
    sendCommand({{"command", "pause"}});
}

void RunSession::resume()
{
    sendCommand({{"command", "resume"}});
}

void RunSession::stop()
{
    sendCommand({{"command", "stop"}});
}

void RunSession::checkpointNow()
{
    sendCommand({{"command", "checkpoint"}});
}

void RunSession::setLearningRate(double lr)
{
    sendCommand({{"command", "set_lr"}, {"lr", lr}});
}

void RunSession::kill()
{
    if (!m_process || m_process->state() == QProcess::NotRunning) return;
    m_killRequested = true;
    killProcess();
}

void RunSession::killProcess()
{
    if (m_request.dataParallel() && m_process->processId() > 0)
        ::kill(-pid_t(m_process->processId()), SIGKILL); // the whole job's group
    else
        m_process->kill();
}

void RunSession::readStdout()
{
    if (!m_process) return;
    m_stdoutBuffer += m_process->readAllStandardOutput();
    // One pass over the chunk, one erase at the end: a burst of lines costs O(bytes).
    qsizetype from = 0, nl;
    while ((nl = m_stdoutBuffer.indexOf('\n', from)) >= 0) {
        handleLine(m_stdoutBuffer.mid(from, nl - from));
        from = nl + 1;
    }
    m_stdoutBuffer.remove(0, from);
}

void RunSession::readStderr()
{
    if (!m_process) return;
    m_stderrBuffer += m_process->readAllStandardError();
    qsizetype from = 0, nl;
    while ((nl = m_stderrBuffer.indexOf('\n', from)) >= 0) {
        handleStderrLine(m_stderrBuffer.mid(from, nl - from));
        from = nl + 1;
    }
    m_stderrBuffer.remove(0, from);
}

void RunSession::handleLine(const QByteArray &raw)
{
    QByteArray line = raw.trimmed();
    if (line.isEmpty()) return;
    // Nothing may throw into the event loop: parse without exceptions, and guard the rest.
    const bool tooDeep =
        !checkJsonNesting(std::string_view(line.constData(), size_t(line.size())), "").ok();
    json e = tooDeep ? json(json::value_t::discarded)
                     : json::parse(line.constBegin(), line.constEnd(), nullptr, false);
    if (e.is_discarded() || !e.is_object()) {
        // Something else wrote to stdout (a library, a debug print): a message, not a crash.
        emit logLine("info", QString::fromUtf8(line), {});
        return;
    }
    try {
        handleEvent(std::move(e));
    } catch (const std::exception &ex) {
        emit logLine("warning", tr("An event could not be read: %1").arg(ex.what()), {});
    }
}

void RunSession::handleEvent(json e)
{
    auto type = e.find("type");
    if (type == e.end() || !type->is_string()) {
        if (!e.contains("status")) {
            emit logLine("info", QString::fromStdString(e.dump()), {});
            return;
        }
        // The summary object of the CLI contract, the last stdout line: it has no type of its
        // own on stdout; give it the one it has in a saved stream.
        e["type"] = "summary";
        if (!e.contains("t")) e["t"] = m_lastT;
        m_summary = e;
        emit eventReceived(e);
        return;
    }
    m_lastT = eventNumber(e, "t", m_lastT);
    const std::string &kind = type->get_ref<const std::string &>();
    if (kind == "summary") {
        m_summary = e;
    } else if (kind == "log") {
        QString level = str(e, "level");
        if (level.isEmpty()) level = "info";
        const QString message = str(e, "message"), node = str(e, "node");
        rememberEventText(message);
        // The CLI's stderr twin of a message about a node names it first.
        if (!node.isEmpty()) rememberEventText(QString("node '%1': ").arg(node) + message);
        emit logLine(level, message, node);
    } else if (kind == "error") {
        const QString message = str(e, "message"), node = str(e, "node"), file = str(e, "file");
        // The CLI prints the same error on stderr as Error::str(): "node 'n': file: message".
        QString where;
        if (!node.isEmpty()) where += QString("node '%1': ").arg(node);
        if (!file.isEmpty()) where += file + ": ";
        rememberEventText(message);
        rememberEventText(where + message);
        emit logLine("error", file.isEmpty() ? message : file + ": " + message, node);
    } else if (kind == "ack") {
        const QString command = str(e, "command"), message = str(e, "message");
        const bool ok = eventFlag(e, "ok");
        if (ok && command == "pause") setPaused(true);
        if (ok && (command == "resume" || command == "stop")) setPaused(false);
        rememberEventText(command.isEmpty() ? message : command + ": " + message);
        if (ok)
            emit logLine("info", message, {});
        else
            emit logLine("warning",
                         command.isEmpty() ? message : tr("%1: %2").arg(command, message), {});
    } else if (kind == "checkpoint") {
        // One asked for with checkpointNow() is told by its acknowledgement already.
        if (str(e, "reason") != "command")
            emit logLine("info",
                         tr("Checkpoint at step %1 written to %2")
                             .arg(qint64(eventNumber(e, "step")))
                             .arg(QDir::toNativeSeparators(str(e, "dir"))),
                         {});
    } else if (kind == "run_start") {
        const double version = eventNumber(e, "version", 0);
        if (version > RunRecord::kStreamVersion)
            emit logLine("warning",
                         tr("The engine writes event stream version %1; this window reads "
                            "version %2, so some of the run may not show.")
                             .arg(version)
                             .arg(RunRecord::kStreamVersion),
                         {});
    }
    emit eventReceived(e);
}

void RunSession::rememberEventText(const QString &text)
{
    if (text.isEmpty()) return;
    // The twin on stderr came first: take it back before it is shown.
    for (auto it = m_pendingStderr.begin(); it != m_pendingStderr.end(); ++it)
        if (it->text == text) {
            m_pendingStderr.erase(it);
            return;
        }
    m_recentEventTexts.push_back(text);
    if (m_recentEventTexts.size() > kRecentTexts) m_recentEventTexts.pop_front();
}

void RunSession::handleStderrLine(const QByteArray &raw)
{
    QString text = visibleText(raw);
    if (text.isEmpty() || isProgressLine(text)) return;
    m_stderrTail << text;
    while (m_stderrTail.size() > kStderrTailLines)
        m_stderrTail.removeFirst();

    QString level = "info";
    static const struct {
        const char *prefix, *level;
    } prefixes[] = {{"error: ", "error"}, {"warning: ", "warning"}, {"debug: ", "debug"}};
    for (const auto &p : prefixes)
        if (text.startsWith(QLatin1String(p.prefix))) {
            level = p.level;
            text = text.mid(qsizetype(qstrlen(p.prefix)));
            break;
        }
    // The event twin came first: this line says nothing new.
    for (auto it = m_recentEventTexts.begin(); it != m_recentEventTexts.end(); ++it)
        if (*it == text) {
            m_recentEventTexts.erase(it);
            return;
        }
    m_pendingStderr.push_back({level, text, m_clock.elapsed()});
    if (!m_stderrTimer->isActive()) m_stderrTimer->start();
}

void RunSession::flushStderr(bool all)
{
    const qint64 now = m_clock.elapsed();
    while (!m_pendingStderr.empty() &&
           (all || now - m_pendingStderr.front().arrivedMs >= kStderrHoldMs)) {
        const PendingLine line = m_pendingStderr.front();
        m_pendingStderr.pop_front();
        emit logLine(line.level, line.text, {});
    }
    if (m_pendingStderr.empty()) m_stderrTimer->stop();
}

void RunSession::setPaused(bool paused)
{
    if (m_paused == paused) return;
    m_paused = paused;
    emit pausedChanged(paused);
}

void RunSession::onError(QProcess::ProcessError error)
{
    if (error != QProcess::FailedToStart || !m_running) return;
    RunOutcome outcome;
    outcome.status = RunOutcome::Failed;
    outcome.message = tr("The engine (%1) could not be started: %2")
                          .arg(QDir::toNativeSeparators(m_cliPath), m_process->errorString());
    emit logLine("error", outcome.message, {});
    finish(std::move(outcome));
}

void RunSession::onFinished(int exitCode, QProcess::ExitStatus status)
{
    if (!m_running) return;
    try {
        // What the process wrote last, including a final line without its newline.
        readStdout();
        if (!m_stdoutBuffer.isEmpty()) handleLine(std::exchange(m_stdoutBuffer, {}));
        readStderr();
        if (!m_stderrBuffer.isEmpty()) handleStderrLine(std::exchange(m_stderrBuffer, {}));
    } catch (const std::exception &ex) {
        emit logLine("warning",
                     tr("The end of the event stream could not be read: %1").arg(ex.what()), {});
    }
    flushStderr(true);

    RunOutcome outcome;
    outcome.summary = m_summary;
    const QStringList tail = m_stderrTail.mid(qMax(0, m_stderrTail.size() - kStderrTailInMessage));
    if (status == QProcess::CrashExit) {
        // On Unix, Qt 6 reports the signal's number as the exit code of a crashed process.
        const int sig = exitCode;
        const QString name = signalName(sig);
        QString what = sig > 0 ? tr("The engine process was killed by signal %1%2")
                                     .arg(sig)
                                     .arg(name.isEmpty() ? QString() : " (" + name + ")")
                               : tr("The engine process crashed");
        if (m_killRequested)
            what += tr(" on request.");
        else if (sig == SIGKILL)
            what += tr("; perhaps the system ran out of memory.");
        else
            what += ".";
        outcome.status = RunOutcome::Crashed;
        outcome.message = what;
        outcome.lastOutput = tail;
    } else if (!m_summary.is_object()) {
        outcome.status = RunOutcome::Crashed;
        outcome.message = tr("The engine exited with code %1 without a summary.").arg(exitCode);
        outcome.lastOutput = tail;
    } else if (str(m_summary, "status") == "ok") {
        const qint64 steps = qint64(eventNumber(m_summary, "steps"));
        if (eventFlag(m_summary, "stopped")) {
            outcome.status = RunOutcome::Stopped;
            outcome.message = m_request.outDir.isEmpty()
                                  ? tr("Stopped after step %1.").arg(steps)
                                  : tr("Stopped after step %1; a checkpoint is in %2.")
                                        .arg(steps)
                                        .arg(QDir::toNativeSeparators(str(m_summary, "out_dir")));
        } else {
            outcome.status = RunOutcome::Ok;
            const qint64 epochs = qint64(eventNumber(m_summary, "epochs"));
            outcome.message = tr("Finished %1 %2 (%3 steps) in %4 s.")
                                  .arg(epochs)
                                  .arg(epochs == 1 ? tr("epoch") : tr("epochs"))
                                  .arg(steps)
                                  .arg(eventNumber(m_summary, "wall_s"), 0, 'f', 1);
        }
    } else {
        outcome.status = RunOutcome::Failed;
        const auto err = m_summary.find("error");
        if (err != m_summary.end() && err->is_object()) {
            const QString file = str(*err, "file");
            const int line = int(eventNumber(*err, "line"));
            QString where = file;
            if (!file.isEmpty() && line > 0) where += ":" + QString::number(line);
            outcome.message = (where.isEmpty() ? QString() : where + ": ") + str(*err, "message");
            outcome.node = str(*err, "node");
        }
        if (outcome.message.isEmpty()) {
            outcome.message = tr("The run failed (exit code %1).").arg(exitCode);
            outcome.lastOutput = tail;
        }
    }
    finish(std::move(outcome));
}

void RunSession::finish(RunOutcome outcome)
{
    m_running = false;
    m_stderrTimer->stop();
    setPaused(false);
    emit finished(outcome);
}

} // namespace fb::widgets
