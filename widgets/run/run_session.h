#pragma once

#include <QElapsedTimer>
#include <QMetaType>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <deque>

class QTimer;

namespace fb::widgets {

// What to run: becomes `CLI run PIPELINE --events - [--out DIR] [--device D] [--threads N]
// [--data-workers N] [--set NODE.PARAM=VALUE]... [--resume DIR]`. Empty or zero fields are left
// out, so the engine's own defaults apply.
struct RunRequest {
    QString cliPath;      // empty: RunSession::defaultCliPath()
    QString pipelinePath; // a pipeline file (the window saves a snapshot of the document)
    QString outDir;       // checkpoints and the trained model; empty: the engine picks runs/...
    QString device = "cpu";
    int threads = 0;      // 0: every core
    int dataWorkers = 0;  // 0: the train node's data_workers parameter
    QStringList settings; // "node.param=value"
    QString resumeDir;    // --resume: continue this run folder from its newest checkpoint
    // Data-parallel training (docs/distributed.md): ranks > 1 or a hostfile makes the child
    // `mpirun -np RANKS [--hostfile FILE | --oversubscribe] CLI run ...`; threads then count per
    // rank. mpirun gives its standard input (the commands) to rank 0, which alone writes events.
    int ranks = 1;
    QString hostfile;   // mpirun's hostfile: the ranks run on its hosts
    QString mpirunPath; // empty: RunSession::defaultMpirunPath()
    bool dataParallel() const { return ranks > 1 || !hostfile.isEmpty(); }
};

// How a run ended.
struct RunOutcome {
    enum Status {
        Ok,      // the summary says "ok"
        Failed,  // the summary says "error" (message and node from it), or the engine did not start
        Stopped, // ended early on request (stop()); a checkpoint was written when there is an
                 // outDir
        Crashed  // killed by a signal, crashed, or exited without a summary line
    } status = Crashed;
    QString message;        // for people: one line, the reason
    QStringList lastOutput; // Crashed, or Failed without a summary: the engine's last stderr lines
                            // (already sent through logLine at their levels as they came)
    QString node;           // the node at fault (Failed), else empty
    nlohmann::json summary; // the engine's summary object (null when there was none)
};

// One run of a pipeline in a `flowbench-cli` child process (DESIGN.md "Running a pipeline"): a
// crash, a sticky CUDA error or running out of memory in the engine never takes the window and
// the user's unsaved work with it. Reads the event stream (docs/events.md) from the child's
// stdout as it comes and sends commands to its stdin. Only light work happens per event on the
// GUI thread: split a line, parse it, emit it.
class RunSession : public QObject {
    Q_OBJECT
public:
    explicit RunSession(QObject *parent = nullptr);
    ~RunSession() override; // a run still going is killed: no orphan keeps training

    // $FLOWBENCH_CLI if set; else flowbench-cli beside this executable; else flowbench-cli on
    // PATH; else empty.
    static QString defaultCliPath();
    // mpirun on the PATH, or empty.
    static QString defaultMpirunPath();
    // The arguments start() passes to the CLI (to show or copy the command line).
    static QStringList arguments(const RunRequest &request);
    // The program start() runs and all its arguments: the CLI's own, or mpirun's before them.
    static QStringList commandLine(const RunRequest &request, const QString &cliPath);

    // Starts the run; false with *error set when a run is going on already, when the CLI cannot
    // be found (the message says where it looked) or when the pipeline file is missing.
    // started() follows once the process runs, then finished() exactly once.
    bool start(const RunRequest &request, QString *error);
    bool isRunning() const { return m_running; }
    bool isPaused() const { return m_paused; } // as acknowledged by the engine

    // Commands on the engine's stdin, each answered by an `ack` event. They act between training
    // steps; sent before training starts, they wait for its first step. Ignored with no run.
    void pause();
    void resume();
    void stop(); // graceful: the current step ends, a checkpoint is written, outcome Stopped
    void checkpointNow();
    void setLearningRate(double lr);
    void kill(); // SIGKILL (every rank of an mpirun job), for tests and as a last resort: Crashed

    qint64 processId() const;
    const RunRequest &request() const { return m_request; }
    // The engine's last stderr lines that were not progress lines (the newest last).
    QStringList stderrTail() const;

signals:
    void started();
    void eventReceived(
        const nlohmann::json &e); // every event line, parsed; the summary as type "summary"
    // Log and error events, failed command acknowledgements, stderr lines that are not progress
    // lines (without the ones that repeat a log or error event) and a crash. level: debug, info,
    // warning or error; node: the node at fault, or empty.
    void logLine(const QString &level, const QString &text, const QString &node);
    void pausedChanged(bool paused);                       // from the engine's acknowledgements
    void finished(const fb::widgets::RunOutcome &outcome); // exactly once per started run

private:
    void sendCommand(nlohmann::json command);
    void readStdout();
    void readStderr();
    void handleLine(const QByteArray &line);
    void handleEvent(nlohmann::json e);
    void handleStderrLine(const QByteArray &raw);
    void rememberEventText(const QString &text);
    void flushStderr(bool all);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void finish(RunOutcome outcome);
    void setPaused(bool paused);
    void killProcess(); // SIGKILL to the child, or to mpirun's whole process group

    struct PendingLine {
        QString level, text;
        qint64 arrivedMs = 0;
    };

    QProcess *m_process = nullptr;
    RunRequest m_request;
    QString m_cliPath;
    bool m_running = false;
    bool m_paused = false;
    bool m_killRequested = false;
    int m_nextCommandId = 1;
    QByteArray m_stdoutBuffer, m_stderrBuffer;
    nlohmann::json m_summary;
    double m_lastT = 0;
    // stderr repeats the engine's log and error messages that also come as events; a stderr line
    // waits briefly so that the event, whichever of the two pipes delivers first, can cancel it.
    std::deque<PendingLine> m_pendingStderr;
    std::deque<QString> m_recentEventTexts;
    QStringList m_stderrTail;
    QElapsedTimer m_clock;
    QTimer *m_stderrTimer = nullptr;
};

} // namespace fb::widgets

Q_DECLARE_METATYPE(fb::widgets::RunOutcome)
