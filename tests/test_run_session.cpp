// A run in a real flowbench-cli child process, as the window starts it: its events, commands and
// their acknowledgements, the outcomes (finished, stopped, failed, killed, no summary), the run
// record saved and opened again, and what RunRecord::load says about files that are not whole.

#include "widgets/log/log_view.h"
#include "widgets/plots/live_plots.h"
#include "widgets/run/run_record.h"
#include "widgets/run/run_session.h"

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QProcess>
#include <QStandardPaths>

#include <signal.h>

#include <cmath>
#include <functional>
#include <map>

using namespace fb::widgets;
using nlohmann::json;

namespace {

const QString kData = "/usr/share/datasets/fashion-mnist";
const QString kSource = FLOWBENCH_SOURCE_DIR;

QString cnnExample()
{
    return kSource + "/resources/examples/fashion_mnist_cnn.json";
}

// Everything a session says, as it says it.
struct Watcher {
    explicit Watcher(RunSession &session)
    {
        QObject::connect(&session, &RunSession::started, [this] { ++started; });
        QObject::connect(&session, &RunSession::eventReceived, [this](const json &e) {
            events.push_back(e);
            if (e.contains("type") && e["type"].is_string()) ++count[e["type"].get<std::string>()];
        });
        QObject::connect(&session, &RunSession::logLine,
                         [this](const QString &level, const QString &text, const QString &node) {
                             logs << QStringList{level, text, node};
                         });
        QObject::connect(&session, &RunSession::pausedChanged,
                         [this](bool paused) { pausedChanges << paused; });
        QObject::connect(&session, &RunSession::finished, [this](const RunOutcome &o) {
            outcome = o;
            ++finished;
        });
    }

    // The first event after index `from` that satisfies `pred`, or -1.
    int find(const std::function<bool(const json &)> &pred, int from = 0) const
    {
        for (int i = from; i < int(events.size()); ++i)
            if (pred(events[std::size_t(i)])) return i;
        return -1;
    }
    static auto ofType(const char *type)
    {
        return [type](const json &e) { return e.value("type", "") == type; };
    }
    static auto ack(const char *command)
    {
        return [command](const json &e) {
            return e.value("type", "") == "ack" && e.value("command", "") == command;
        };
    }
    bool logged(const QString &level, const QString &part) const
    {
        for (const QStringList &l : logs)
            if (l[0] == level && l[1].contains(part)) return true;
        return false;
    }

    int started = 0, finished = 0;
    std::vector<json> events;
    std::map<std::string, int> count;
    QList<QStringList> logs;
    QList<bool> pausedChanges;
    RunOutcome outcome;
};

// A short run: 1000 training samples (8 steps of 128), 300 test samples.
RunRequest smallRun(const QString &outDir, int epochs = 1)
{
    RunRequest r;
    r.cliPath = FLOWBENCH_CLI;
    r.pipelinePath = cnnExample();
    r.outDir = outDir;
    r.threads = 2;
    r.settings = {"train_data.limit=1000", "test_data.limit=300",
                  QString("train.epochs=%1").arg(epochs)};
    return r;
}

// A run long enough to be paused, stopped or killed in the middle: steps never run out first.
RunRequest longRun(const QString &outDir)
{
    RunRequest r = smallRun(outDir, 200);
    r.settings = {"train_data.limit=512", "test_data.limit=128", "train.epochs=200"};
    return r;
}

// A stand-in for the CLI: a shell script, for what the real one never does.
QString script(const QTemporaryDir &dir, const QString &name, const QString &body)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(("#!/bin/sh\n" + body + "\n").toUtf8());
    f.close();
    f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
    return path;
}

void writeFile(const QString &path, const QByteArray &content)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
}

constexpr int kRunTimeoutMs = 120000;

// Processes of process group `group` that still run (zombies, already dead, are not counted).
int livingInGroup(pid_t group)
{
    int living = 0;
    for (const QString &pid : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile f("/proc/" + pid + "/stat");
        if (!f.open(QIODevice::ReadOnly)) continue;
        // "pid (comm) state ppid pgrp ...": the command may hold spaces, the last ')' ends it.
        const QByteArray stat = f.readAll();
        const QList<QByteArray> rest = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
        if (rest.size() > 2 && rest[2].toLongLong() == group && rest[0] != "Z") ++living;
    }
    return living;
}

} // namespace

class TestRunSession : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(FLOWBENCH_CLI).isExecutable(), FLOWBENCH_CLI);
        m_haveData = QFile::exists(kData + "/train-images-idx3-ubyte.gz");
    }

    void missingCliIsRefused()
    {
        RunSession session;
        Watcher w(session);
        RunRequest r;
        r.cliPath = "/nonexistent/bin/flowbench-cli";
        r.pipelinePath = cnnExample();
        QString error;
        QVERIFY(!session.start(r, &error));
        QVERIFY2(error.contains("/nonexistent/bin/flowbench-cli"), qPrintable(error));
        QVERIFY(!session.isRunning());
        QCOMPARE(w.finished, 0); // nothing started, nothing to finish

        // With no path given, $FLOWBENCH_CLI is where it looks first, and says so.
        qputenv("FLOWBENCH_CLI", "/nonexistent/env/flowbench-cli");
        QCOMPARE(RunSession::defaultCliPath(), QString("/nonexistent/env/flowbench-cli"));
        r.cliPath.clear();
        QVERIFY(!session.start(r, &error));
        QVERIFY2(error.contains("/nonexistent/env/flowbench-cli") &&
                     error.contains("FLOWBENCH_CLI"),
                 qPrintable(error));
        qunsetenv("FLOWBENCH_CLI");

        r.cliPath = FLOWBENCH_CLI;
        r.pipelinePath = "/nonexistent/pipeline.json";
        QVERIFY(!session.start(r, &error));
        QVERIFY2(error.contains("/nonexistent/pipeline.json"), qPrintable(error));
    }

    void argumentsFollowTheRequest()
    {
        RunRequest r;
        r.pipelinePath = "p.json";
        r.outDir = "out";
        r.device = "cpu";
        r.threads = 3;
        r.dataWorkers = 2;
        r.settings = {"train.epochs=2", "train_data.limit=10"};
        QCOMPARE(RunSession::arguments(r),
                 QStringList({"run", "p.json", "--events", "-", "--out", "out", "--device", "cpu",
                              "--threads", "3", "--data-workers", "2", "--set", "train.epochs=2",
                              "--set", "train_data.limit=10"}));
        r.threads = r.dataWorkers = 0; // zero: the engine's defaults, not passed
        r.outDir.clear();
        QCOMPARE(RunSession::arguments(r).join(' '),
                 QString("run p.json --events - --device cpu --set train.epochs=2 "
                         "--set train_data.limit=10"));

        // One process: the CLI itself. Several, or a hostfile: mpirun starts the CLI.
        QCOMPARE(RunSession::commandLine(r, "/bin/cli"),
                 QStringList("/bin/cli") + RunSession::arguments(r));
        r.ranks = 3;
        r.mpirunPath = "/usr/bin/mpirun";
        QCOMPARE(RunSession::commandLine(r, "/bin/cli"),
                 QStringList({"/usr/bin/mpirun", "-np", "3", "--oversubscribe", "/bin/cli"}) +
                     RunSession::arguments(r));
        r.hostfile = "/etc/hosts.mpi";
        QCOMPARE(RunSession::commandLine(r, "/bin/cli").mid(0, 6),
                 QStringList(
                     {"/usr/bin/mpirun", "-np", "3", "--hostfile", "/etc/hosts.mpi", "/bin/cli"}));
        // Without mpirun, or with a hostfile that is not there, the run is refused, said why.
        RunSession session;
        QString error;
        r.cliPath = FLOWBENCH_CLI;
        r.pipelinePath = cnnExample();
        r.mpirunPath = "/nonexistent/mpirun";
        QVERIFY(!session.start(r, &error));
        QVERIFY2(error.contains("mpirun") && error.contains("openmpi-bin"), qPrintable(error));
        r.mpirunPath = QStandardPaths::findExecutable("sh"); // any program: the file is missing
        QVERIFY(!session.start(r, &error));
        QVERIFY2(error.contains("/etc/hosts.mpi"), qPrintable(error));
        QVERIFY(!session.isRunning());
    }

    // The window's data-parallel run: mpirun starts 2 ranks, rank 0's events come back, the
    // plots show each rank's throughput and the all-reduce's share; kill() ends every rank.
    void dataParallelRun()
    {
        if (!m_haveData) QSKIP("Fashion-MNIST is not installed");
        if (QStandardPaths::findExecutable("mpirun").isEmpty())
            QSKIP("mpirun is not installed (scripts/deps.sh installs openmpi-bin)");
        QProcess devices;
        devices.start(FLOWBENCH_CLI, {"devices", "--json"});
        QVERIFY(devices.waitForFinished(60000));
        if (json::parse(devices.readAllStandardOutput().toStdString()).value("mpi", "").empty())
            QSKIP("this build has no MPI");

        QTemporaryDir dir;
        RunSession session;
        Watcher w(session);
        RunRequest r = smallRun(dir.path());
        r.settings = {"train_data.limit=2000", "test_data.limit=300", "train.epochs=1"};
        r.pipelinePath = kSource + "/resources/examples/fashion_mnist_mlp.json";
        r.threads = 1;
        r.ranks = 2;
        QString error;
        QVERIFY2(session.start(r, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(w.finished, 1, kRunTimeoutMs);
        QVERIFY2(w.outcome.status == RunOutcome::Ok,
                 qPrintable(w.outcome.message + " | " + w.outcome.lastOutput.join(" | ")));
        // One run: one start, one summary, from rank 0 alone.
        QCOMPARE(w.count["run_start"], 1);
        QCOMPARE(w.count["summary"], 1);
        QCOMPARE(w.events.front().value("ranks", 0), 2);
        const json &s = w.outcome.summary;
        QVERIFY2(s.contains("bottleneck_cause"), s.dump().c_str());
        const std::string cause = s["bottleneck_cause"].get<std::string>();
        QVERIFY2(cause == "compute" || cause == "all-reduce" || cause == "other ranks",
                 cause.c_str());
        QVERIFY(s["slowest_rank"] == 0 || s["slowest_rank"] == 1);
        LivePlots plots;
        for (const json &e : w.events)
            plots.addEvent(e);
        const int progress = w.count["progress"];
        QVERIFY(progress >= 1);
        for (const char *series :
             {"rank_samples_per_s:0", "rank_samples_per_s:1", "allreduce_share", "rank_wait_share"})
            QVERIFY2(plots.pointCount(series) == progress, series);
        json last; // the last progress event
        for (const json &e : w.events)
            if (e.value("type", "") == "progress") last = e;
        QCOMPARE(last["rank_samples_per_s"].size(), std::size_t(2));
        for (const json &v : last.value("rank_samples_per_s", json::array()))
            QVERIFY(v.get<double>() > 0);
        // Rank 0's slot is its own totals now (not the exchanged ones, a step old): the same
        // share as its comm_share, to the events' rounding.
        QVERIFY2(std::abs(last["rank_comm_share"][0].get<double>() -
                          last["comm_share"].get<double>()) < 2e-4,
                 last.dump().c_str());

        // kill(): mpirun and both ranks end (no rank left training on its own).
        Watcher w2(session);
        r.settings = {"train_data.limit=512", "test_data.limit=128", "train.epochs=200"};
        r.outDir = dir.filePath("killed");
        QVERIFY2(session.start(r, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(w2.count["progress"] >= 1, kRunTimeoutMs);
        const pid_t group = pid_t(session.processId());
        session.kill();
        QTRY_COMPARE_WITH_TIMEOUT(w2.finished, 1, kRunTimeoutMs);
        QCOMPARE(w2.outcome.status, RunOutcome::Crashed);
        QTRY_COMPARE_WITH_TIMEOUT(livingInGroup(group), 0, 10000); // the whole group is gone
    }

    void completeRun()
    {
        if (!m_haveData)
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        QTemporaryDir dir;
        RunSession session;
        RunRecord record;
        LogView log;
        connect(&session, &RunSession::eventReceived, &record, &RunRecord::addEvent);
        connect(&session, &RunSession::logLine, &log, &LogView::addLine);
        Watcher w(session);
        QString error;
        QVERIFY2(session.start(smallRun(dir.path()), &error), qPrintable(error));
        QVERIFY(session.isRunning());
        // A second run while one goes on is refused.
        QVERIFY(!session.start(smallRun(dir.path()), &error));
        QVERIFY(!error.isEmpty());

        QTRY_COMPARE_WITH_TIMEOUT(w.finished, 1, kRunTimeoutMs);
        QVERIFY(!session.isRunning());
        QCOMPARE(w.started, 1);
        QVERIFY2(w.outcome.status == RunOutcome::Ok, qPrintable(w.outcome.message));
        QCOMPARE(QString::fromStdString(w.outcome.summary.value("status", "")), QString("ok"));
        const double accuracy = w.outcome.summary.value("test_accuracy", -1.0);
        QVERIFY(accuracy > 0 && accuracy <= 1);

        QCOMPARE(w.events.front().value("type", ""), std::string("run_start"));
        QCOMPARE(w.events.front().value("version", 0), RunRecord::kStreamVersion);
        QVERIFY(w.count["progress"] >= 1);
        QCOMPARE(w.count["epoch"], 1); // the per-epoch metrics (train and validation)
        QVERIFY(w.count["hardware"] >= 1);
        QCOMPARE(w.count["summary"], 1);
        // The summary line of stdout becomes the last event, as in a saved stream.
        QCOMPARE(w.events.back().value("type", ""), std::string("summary"));
        const json &progress = w.events[std::size_t(w.find(Watcher::ofType("progress")))];
        for (const char *k : {"step", "total_steps", "recent_loss", "accuracy", "lr"})
            QVERIFY2(progress.contains(k), k);
        QCOMPARE(progress["total_steps"].get<int>(), 8);
        const json &epoch = w.events[std::size_t(w.find(Watcher::ofType("epoch")))];
        QCOMPARE(epoch["evaluations"].size(), std::size_t(1));

        // stderr: the engine's messages reach the log; progress lines do not.
        QVERIFY(!w.logs.isEmpty());
        for (const QStringList &l : w.logs)
            QVERIFY2(!l[1].startsWith("epoch 1/1  step"), qPrintable(l[1]));
        QVERIFY2(w.logged("info", "epoch 1/1 done"), qPrintable(w.logs.last().join(" | ")));
        QCOMPARE(log.lineCount(), int(w.logs.size()));
        QVERIFY(log.text().contains("epoch 1/1 done"));

        // The record holds every event, and reads back as it was saved.
        QCOMPARE(record.events().size(), w.events.size());
        const QString path = dir.filePath("run.jsonl");
        const fb::Status saved = record.save(path);
        QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().str().c_str());
        auto loaded = RunRecord::load(path);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().str().c_str());
        QVERIFY(loaded.value() == record.events());

        // A replay of the log plots what the run said.
        LivePlots plots;
        plots.addEvents(loaded.value());
        QCOMPARE(plots.pointCount("train_loss"), w.count["progress"]);
        QCOMPARE(plots.pointCount("val_accuracy"), 1);
        QCOMPARE(plots.pointCount("cpu"), w.count["hardware"]);
    }

    void pauseResumeAndStop()
    {
        if (!m_haveData) QSKIP("Fashion-MNIST is not installed");
        QTemporaryDir dir;
        RunSession session;
        Watcher w(session);
        QString error;
        QVERIFY2(session.start(longRun(dir.path()), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(w.count["progress"] >= 1 || w.finished, kRunTimeoutMs);
        QVERIFY(!w.finished);

        session.pause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.pausedChanges.isEmpty() || w.finished, kRunTimeoutMs);
        QCOMPARE(w.pausedChanges, QList<bool>{true});
        QVERIFY(session.isPaused());
        const int ackIndex = w.find(Watcher::ack("pause"));
        QVERIFY(ackIndex >= 0);
        QVERIFY(w.events[std::size_t(ackIndex)].value("ok", false));
        // While paused, no step is trained.
        const int progressBefore = w.count["progress"];
        QTest::qWait(700);
        QCOMPARE(w.count["progress"], progressBefore);

        // A checkpoint and a new learning rate, both while paused.
        session.checkpointNow();
        session.setLearningRate(0.001);
        QTRY_VERIFY_WITH_TIMEOUT(w.find(Watcher::ack("set_lr")) >= 0, kRunTimeoutMs);
        const int checkpoint = w.find([](const json &e) {
            return e.value("type", "") == "checkpoint" && e.value("reason", "") == "command";
        });
        QVERIFY(checkpoint >= 0);
        QVERIFY(w.logged("info", "checkpoint written at step"));

        session.resume();
        QTRY_COMPARE_WITH_TIMEOUT(w.pausedChanges, (QList<bool>{true, false}), kRunTimeoutMs);
        QVERIFY(!session.isPaused());
        QTRY_VERIFY_WITH_TIMEOUT(w.count["progress"] > progressBefore, kRunTimeoutMs);
        const int lrProgress = w.find(Watcher::ofType("progress"), w.find(Watcher::ack("resume")));
        QVERIFY(lrProgress >= 0);
        // The engine keeps the rate as a float.
        QVERIFY(std::abs(w.events[std::size_t(lrProgress)].value("lr", 0.0) - 0.001) < 1e-7);

        session.stop();
        QTRY_COMPARE_WITH_TIMEOUT(w.finished, 1, kRunTimeoutMs);
        QVERIFY2(w.outcome.status == RunOutcome::Stopped, qPrintable(w.outcome.message));
        QVERIFY(w.outcome.summary.value("stopped", false));
        QVERIFY(w.find([](const json &e) {
            return e.value("type", "") == "checkpoint" && e.value("reason", "") == "stop";
        }) >= 0);
        const QStringList checkpoints =
            QDir(dir.filePath("checkpoints")).entryList({"step-*"}, QDir::Dirs);
        QVERIFY(!checkpoints.isEmpty());
        QVERIFY(QFile::exists(
            dir.filePath("checkpoints/" + checkpoints.last() + "/checkpoint.safetensors")));
        // Commands with no run are ignored, not a crash.
        session.pause();
        session.stop();
        QVERIFY(!session.isRunning());
    }

    void killedRunCrashed()
    {
        if (!m_haveData) QSKIP("Fashion-MNIST is not installed");
        QTemporaryDir dir;
        RunSession session;
        Watcher w(session);
        QString error;
        QVERIFY2(session.start(longRun(dir.path()), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(w.count["progress"] >= 1 || w.finished, kRunTimeoutMs);
        QVERIFY(session.processId() > 0);
        // As the kernel's out-of-memory killer would: from outside, no warning.
        QCOMPARE(::kill(pid_t(session.processId()), SIGKILL), 0);
        QTRY_COMPARE_WITH_TIMEOUT(w.finished, 1, kRunTimeoutMs);
        QCOMPARE(w.outcome.status, RunOutcome::Crashed);
        QVERIFY2(w.outcome.message.contains("signal 9") && w.outcome.message.contains("SIGKILL"),
                 qPrintable(w.outcome.message));
        QVERIFY(!w.outcome.message.contains('\n'));
        // The outcome is the window's to report: the session logs the engine's own lines only.
        QVERIFY(!w.logged("error", "signal 9"));
        QVERIFY(!session.isRunning());

        // kill() does the same from the window.
        Watcher w2(session);
        QVERIFY2(session.start(longRun(dir.path()), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(w2.started, 1, kRunTimeoutMs);
        session.kill();
        QTRY_COMPARE_WITH_TIMEOUT(w2.finished, 1, kRunTimeoutMs);
        QCOMPARE(w2.outcome.status, RunOutcome::Crashed);
        QVERIFY2(w2.outcome.message.contains("SIGKILL"), qPrintable(w2.outcome.message));
    }

    void failedRunNamesTheNode()
    {
        QTemporaryDir dir;
        RunSession session;
        Watcher w(session);
        RunRequest r = smallRun(dir.path());
        r.settings << "conv1.out_channels=0"; // below the parameter's range
        QString error;
        QVERIFY2(session.start(r, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(w.finished, 1, kRunTimeoutMs);
        QVERIFY2(w.outcome.status == RunOutcome::Failed, qPrintable(w.outcome.message));
        QVERIFY2(w.outcome.node.startsWith("conv1"), qPrintable(w.outcome.node));
        QVERIFY(!w.outcome.message.isEmpty());
        QCOMPARE(w.count["run_start"], 0);
        QVERIFY(w.count["error"] >= 1);
        // The error reaches the log once, with its node: stderr's copy of it is not repeated.
        int errors = 0, mentions = 0;
        for (const QStringList &l : w.logs) {
            mentions += l[1].contains("out of range");
            if (l[0] == "error") {
                ++errors;
                QVERIFY2(l[2].startsWith("conv1"), qPrintable(l.join(" | ")));
            }
        }
        QCOMPARE(errors, w.count["error"]);
        QCOMPARE(mentions, errors);
    }

    void streamOddities()
    {
        QTemporaryDir dir;
        // Lines split across writes, a line that is not JSON, a failed command's stderr, and an
        // exit with no summary.
        const QString cli = script(dir, "fake-cli", R"(
printf '{"type":"run_start","version":2,"t":0}\n{"type":"log","lev'
sleep 0.3
printf 'el":"warning","message":"split line"}\nnot json at all\n'
echo 'warning: split line' >&2
printf '{"type":"log","level":"warning","message":"skipped 1 of 3 files","node":"train_data"}\n'
echo "warning: node 'train_data': skipped 1 of 3 files" >&2
echo 'epoch 1/1  step 3/8  loss 2.0' >&2
echo 'something broke' >&2
exit 3)");
        RunSession session;
        Watcher w(session);
        RunRequest r;
        r.cliPath = cli;
        r.pipelinePath = cnnExample();
        QString error;
        QVERIFY2(session.start(r, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(w.finished, 1, 20000);
        QCOMPARE(w.count["run_start"], 1);
        QCOMPARE(w.count["log"], 2);
        QVERIFY(w.logged("warning", "split line"));
        // A message about a node: shown once, with its node, not again from stderr (the crash
        // report quotes stderr's tail, so only warnings count).
        int skipped = 0;
        for (const QStringList &l : w.logs)
            if (l[0] != "error" && l[1].contains("skipped 1 of 3 files")) {
                ++skipped;
                QCOMPARE(l, (QStringList{"warning", "skipped 1 of 3 files", "train_data"}));
            }
        QCOMPARE(skipped, 1);
        QVERIFY(w.logged("info", "not json at all"));
        QVERIFY(w.logged("info", "something broke"));
        int splitLines = 0;
        for (const QStringList &l : w.logs)
            splitLines += l[1] == "split line";
        QCOMPARE(splitLines, 1); // stderr's copy of the log event is dropped
        QVERIFY(!w.logged("info", "step 3/8"));
        QCOMPARE(w.outcome.status, RunOutcome::Crashed);
        QVERIFY2(w.outcome.message.contains("exited with code 3 without a summary"),
                 qPrintable(w.outcome.message));
        QVERIFY2(w.outcome.lastOutput.join('\n').contains("something broke"),
                 qPrintable(w.outcome.lastOutput.join('\n')));

        // A summary line without a newline at the very end still counts.
        const QString ok = script(dir, "ok-cli", R"(
printf '{"type":"run_start","version":2,"t":0}\n'
printf '{"status":"error","error":{"node":"fc1","message":"bad shape"},"epochs":0}')");
        Watcher w2(session);
        r.cliPath = ok;
        QVERIFY2(session.start(r, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(w2.finished, 1, 20000);
        QCOMPARE(w2.outcome.status, RunOutcome::Failed);
        QCOMPARE(w2.outcome.node, QString("fc1"));
        QCOMPARE(w2.outcome.message, QString("bad shape"));
        QCOMPARE(w2.events.back().value("type", ""), std::string("summary"));

        // An executable file that is no program: the engine cannot start, and says why.
        const QString garbage = dir.filePath("garbage-cli");
        writeFile(garbage, QByteArray("\x7f"
                                      "ELF not really a program",
                                      24));
        QFile::setPermissions(garbage, QFile::permissions(garbage) | QFileDevice::ExeOwner);
        Watcher w3(session);
        r.cliPath = garbage;
        QVERIFY2(session.start(r, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(w3.finished, 1, 20000);
        QCOMPARE(w3.started, 0);
        QCOMPARE(w3.outcome.status, RunOutcome::Failed);
        QVERIFY2(w3.outcome.message.contains("could not be started") &&
                     w3.outcome.message.contains("garbage-cli"),
                 qPrintable(w3.outcome.message));
        QVERIFY(!session.isRunning());
    }

    void loadReportsFileAndLine()
    {
        QTemporaryDir dir;
        const QByteArray start = R"({"type":"run_start","version":2,"t":0})"
                                 "\n";
        const QByteArray progress = R"({"type":"progress","step":1,"t":0.1})"
                                    "\n";

        const QString corrupt = dir.filePath("corrupt.jsonl");
        writeFile(corrupt, start + progress + "{\"type\": \"progress\", oops}\n" + progress);
        auto r = RunRecord::load(corrupt);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().line, 3);
        QCOMPARE(QString::fromStdString(r.error().file), corrupt);
        const QString text = QString::fromStdString(r.error().str());
        QVERIFY2(text.startsWith(corrupt + ":3: "), qPrintable(text));

        // A run killed while writing: its last line is cut short, and the rest reads.
        const QString truncated = dir.filePath("truncated.jsonl");
        // (A plain string: moc misreads a raw string that ends in the middle of a quoted word.)
        writeFile(truncated, start + progress + "{\"type\":\"progress\",\"st");
        auto t = RunRecord::load(truncated);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().str().c_str());
        QCOMPARE(t.value().size(), std::size_t(2));

        const QString empty = dir.filePath("empty.jsonl");
        writeFile(empty, "");
        auto e = RunRecord::load(empty);
        QVERIFY(!e.ok());
        QVERIFY(QString::fromStdString(e.error().str()).contains(empty));

        const QString noStart = dir.filePath("nostart.jsonl");
        writeFile(noStart, progress + progress);
        auto n = RunRecord::load(noStart);
        QVERIFY(!n.ok());
        QVERIFY(QString::fromStdString(n.error().str()).contains("run_start"));

        const QString newer = dir.filePath("newer.jsonl");
        writeFile(newer, R"({"type":"run_start","version":99,"t":0})"
                         "\n");
        auto v = RunRecord::load(newer);
        QVERIFY(!v.ok());
        QCOMPARE(v.error().line, 1);
        QVERIFY(QString::fromStdString(v.error().message).contains("99"));

        const QString notObject = dir.filePath("array.jsonl");
        writeFile(notObject, start + "[1, 2]\n");
        auto a = RunRecord::load(notObject);
        QVERIFY(!a.ok());
        QCOMPARE(a.error().line, 2);

        auto missing = RunRecord::load(dir.filePath("missing.jsonl"));
        QVERIFY(!missing.ok());
        QVERIFY(QString::fromStdString(missing.error().str()).contains("missing.jsonl"));
    }

    void saveIsAtomicAndNamesTheFile()
    {
        QTemporaryDir dir;
        RunRecord record;
        QSignalSpy added(&record, &RunRecord::eventAdded);
        QSignalSpy cleared(&record, &RunRecord::cleared);
        record.addEvent({{"type", "run_start"}, {"version", 2}, {"t", 0}});
        record.addEvent(
            {{"type", "log"}, {"level", "info"}, {"message", "h\xc3\xa9llo"}, {"t", 1}});
        QCOMPARE(added.count(), 2);
        const QString path = dir.filePath("a.jsonl");
        QVERIFY(record.save(path).ok());
        auto loaded = RunRecord::load(path);
        QVERIFY(loaded.ok());
        QVERIFY(loaded.value() == record.events());

        const QString bad = dir.filePath("no/such/folder/run.jsonl");
        const fb::Status s = record.save(bad);
        QVERIFY(!s.ok());
        QVERIFY(QString::fromStdString(s.error().str()).contains(bad));

        record.clear();
        QCOMPARE(cleared.count(), 1);
        QVERIFY(record.events().empty());
        record.setEvents(loaded.value());
        QCOMPARE(record.events().size(), std::size_t(2));
        QCOMPARE(cleared.count(), 2);
    }

    void logViewFiltersFindsAndLinks()
    {
        LogView log;
        log.resize(700, 300);
        log.show();
        QVERIFY(QTest::qWaitForWindowExposed(&log));
        QSignalSpy activated(&log, &LogView::nodeActivated);
        log.addLine("info", "loading data");
        log.addLine("debug", "cache: 0 of 1000 samples");
        log.addLine("warning", "the learning rate is high");
        log.addLine("error", "kernel_size must be odd", "conv1.kernel_size");
        log.addLine("error", "engine crashed.\nIts last output:\nline a");
        QCOMPARE(log.lineCount(), 7); // a message of three lines is three rows
        QCOMPARE(log.visibleLineCount(), 7);
        const QString text = log.text();
        QVERIFY2(text.contains("error    conv1.kernel_size: kernel_size must be odd"),
                 qPrintable(text));
        QVERIFY(text.contains("Its last output:"));

        log.setMinimumLevel("warning");
        QCOMPARE(log.visibleLineCount(), 5);
        log.setMinimumLevel("error");
        QCOMPARE(log.visibleLineCount(), 4);
        log.setMinimumLevel("debug");
        log.setFindText("KERNEL");
        QCOMPARE(log.visibleLineCount(), 1);
        QCOMPARE(log.lineCount(), 7); // filtering hides, never removes

        // Clicking the node of a line asks the window to select that node.
        auto *view = log.findChild<QTableView *>();
        QVERIFY(view);
        const QModelIndex node = view->model()->index(0, 2);
        QCOMPARE(node.data().toString(), QString("conv1.kernel_size"));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(node).center());
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().first().toString(), QString("conv1"));
        // A line without a node links nowhere.
        log.setFindText("");
        const QModelIndex plain = view->model()->index(0, 2);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(plain).center());
        QCOMPARE(activated.count(), 1);

        // The view follows new lines until the user scrolls up.
        for (int i = 0; i < 300; ++i)
            log.addLine("info", QString("line %1").arg(i));
        QCOMPARE(log.lineCount(), 307);
        QScrollBar *bar = view->verticalScrollBar();
        QTRY_VERIFY(bar->maximum() > 0 && bar->value() == bar->maximum());
        bar->setValue(10); // the user reads something older
        for (int i = 0; i < 50; ++i)
            log.addLine("info", QString("more %1").arg(i));
        QCOMPARE(log.lineCount(), 357);
        QCoreApplication::processEvents();
        QCOMPARE(bar->value(), 10);
        bar->setValue(bar->maximum()); // back at the bottom: following again
        log.addLine("info", "newest");
        QCOMPARE(log.lineCount(), 358);
        QTRY_COMPARE(bar->value(), bar->maximum());

        // The newest lines are kept, and the log says how many older ones went.
        log.setMaximumLines(100);
        QCOMPARE(log.lineCount(), 100);
        for (int i = 0; i < 250; ++i)
            log.addLine("info", QString("flood %1").arg(i));
        QCOMPARE(log.lineCount(), 100);
        QCOMPARE(log.droppedLineCount(), 358 + 250 - 100);
        QVERIFY(log.text().endsWith("flood 249"));
        QVERIFY(!log.text().contains("flood 149\n"));
        log.clear();
        QCOMPARE(log.lineCount(), 0);
        QCOMPARE(log.droppedLineCount(), 0);
    }

private:
    bool m_haveData = false;
};

QTEST_MAIN(TestRunSession)
#include "test_run_session.moc"
