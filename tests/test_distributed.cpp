// Data-parallel training as a user starts it: `mpirun -np 2 flowbench-cli run ...` on this
// machine (Open MPI over shared memory and loopback), compared with one process. Skipped (exit
// 77) where the build has no MPI or mpirun is not installed.
#include <csignal>

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/types.h>
#include <unistd.h>

#include "tests/cli_process.h"

namespace {

const QString kMlp = QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");
const QString kCnn = QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");

// Open MPI refuses to start as root unless told twice; this machine's tests run as root.
QProcessEnvironment mpiEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    return env;
}

QStringList mpirunArgs(int ranks, const QStringList &cliArgs)
{
    // --oversubscribe: more ranks than this machine's cores is allowed (a 1-core runner).
    QStringList a{"--oversubscribe", "-np", QString::number(ranks), FLOWBENCH_CLI};
    return a + cliArgs;
}

CliResult runMpi(int ranks, const QStringList &cliArgs, int timeoutMs = 300000)
{
    return runProgram(QStandardPaths::findExecutable("mpirun"), mpirunArgs(ranks, cliArgs), {},
                      timeoutMs, mpiEnvironment());
}

// Every step's loss of a run folder (losses.csv), by step.
QMap<int, double> losses(const QString &dir)
{
    QMap<int, double> m;
    QFile f(dir + "/losses.csv");
    if (!f.open(QIODevice::ReadOnly)) return m;
    f.readLine(); // header
    while (!f.atEnd()) {
        const QList<QByteArray> parts = f.readLine().trimmed().split(',');
        if (parts.size() == 2) m[parts[0].toInt()] = parts[1].toDouble();
    }
    return m;
}

QList<QJsonObject> events(const QString &dir, const QString &type)
{
    QList<QJsonObject> list;
    QFile f(dir + "/events.jsonl");
    if (!f.open(QIODevice::ReadOnly)) return list;
    while (!f.atEnd()) {
        const QJsonObject o = QJsonDocument::fromJson(f.readLine()).object();
        if (o["type"].toString() == type) list << o;
    }
    return list;
}

QByteArray fileBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The pids of the running flowbench-cli processes whose command line holds `marker` (a run's
// unique output folder), with their MPI rank from the environment mpirun gave them.
QMap<int, pid_t> ranksOf(const QString &marker)
{
    QMap<int, pid_t> found;
    for (const QString &entry : QDir("/proc").entryList(QDir::Dirs)) {
        bool isPid = false;
        const pid_t pid = pid_t(entry.toInt(&isPid));
        if (!isPid) continue;
        QByteArray cmd = fileBytes("/proc/" + entry + "/cmdline");
        cmd.replace('\0', ' ');
        if (!cmd.contains("flowbench-cli") || !cmd.contains(marker.toUtf8())) continue;
        for (const QByteArray &var : fileBytes("/proc/" + entry + "/environ").split('\0'))
            if (var.startsWith("OMPI_COMM_WORLD_RANK="))
                found[var.mid(int(strlen("OMPI_COMM_WORLD_RANK="))).toInt()] = pid;
    }
    return found;
}

} // namespace

class TestDistributed : public QObject {
    Q_OBJECT

private slots:
    void devicesSaysWhatIsBuilt()
    {
        const CliResult devices = runCli({"devices", "--json"});
        QCOMPARE(devices.exitCode, 0);
        const QJsonObject d = QJsonDocument::fromJson(devices.out.toUtf8()).object();
        QVERIFY(d.contains("mpi") && d.contains("nccl"));
        QVERIFY(d["mpi"].toString().contains("MPI"));
        QVERIFY(runCli({"devices"}).out.contains("MPI: " + d["mpi"].toString()));
    }

    // Two ranks compute what one process computes on the same global batch, up to the order of
    // float sums: every step's loss within 1e-4 (relative). 2049 samples in batches of 128 end
    // on a batch of one sample, so rank 1's share of it is empty (a padding sample that weighs
    // nothing). Rank 0 alone writes the run: one folder, one event stream, one summary line.
    void twoRanksTrainWhatOneProcessTrains()
    {
        QTemporaryDir dir;
        const QStringList common{"run", kMlp, "--threads", "1", "--set", "train_data.limit=2049",
                                 "--set", "test_data.limit=500", "--set", "train.epochs=2"};
        const CliResult one = runCli(common + QStringList{"--out", dir.path() + "/one"});
        QCOMPARE(one.exitCode, 0);
        const CliResult two = runMpi(2, common + QStringList{"--out", dir.path() + "/two"});
        QVERIFY2(two.exitCode == 0, qPrintable(two.err.right(3000)));
        QCOMPARE(two.summary["status"].toString(), QStringLiteral("ok"));
        QCOMPARE(two.summary["steps"].toInt(), 34); // 17 batches x 2 epochs, as one process
        QCOMPARE(two.out.count("\"status\""), 1);    // one summary: rank 0's

        const QMap<int, double> a = losses(dir.path() + "/one"), b = losses(dir.path() + "/two");
        QCOMPARE(a.size(), 34);
        QCOMPARE(b.keys(), a.keys());
        double worst = 0;
        for (int step : a.keys())
            worst = std::max(worst, std::abs(a[step] - b[step]) / std::max(std::abs(a[step]), 1e-3));
        QVERIFY2(worst < 1e-4, qPrintable(QString("largest relative loss difference %1").arg(worst)));
        qInfo("largest relative loss difference, 2 ranks against 1 process: %g", worst);
        QVERIFY(std::abs(two.summary["test_accuracy"].toDouble() -
                         one.summary["test_accuracy"].toDouble()) < 0.01);

        // The stream says it ran on 2 ranks, how much of each step went to the sums, and that
        // after every epoch every rank held the same weights.
        const QList<QJsonObject> start = events(dir.path() + "/two", "run_start");
        QCOMPARE(start.size(), 1);
        QCOMPARE(start[0]["ranks"].toInt(), 2);
        const QList<QJsonObject> progress = events(dir.path() + "/two", "progress");
        QVERIFY(!progress.isEmpty());
        for (const QJsonObject &p : progress) {
            QVERIFY(p.contains("comm_share"));
            const double comm = p["comm_share"].toDouble();
            QVERIFY(comm >= 0 && comm <= 1);
            QVERIFY(p["rank_wait_share"].toDouble() >= 0 && p["allreduce_share"].toDouble() >= 0);
            // Each rank's own compute rate, and its share in collectives.
            QCOMPARE(p["rank_samples_per_s"].toArray().size(), 2);
            QCOMPARE(p["rank_comm_share"].toArray().size(), 2);
            for (const QJsonValue &v : p["rank_comm_share"].toArray())
                QVERIFY(v.toDouble() >= 0 && v.toDouble() <= 1);
        }
        // By the end, both ranks have trained and report a rate; rank 0's slot is its own totals
        // now (the exchanged ones are a step old): its comm_share, to the events' rounding.
        for (const QJsonValue &v : progress.last()["rank_samples_per_s"].toArray())
            QVERIFY(v.toDouble() > 0);
        QVERIFY(std::abs(progress.last()["rank_comm_share"].toArray()[0].toDouble() -
                         progress.last()["comm_share"].toDouble()) < 2e-4);
        // The summary says what bounded the steps, and which rank was the slowest.
        QVERIFY2(QStringList({"compute", "all-reduce", "other ranks"})
                     .contains(two.summary["bottleneck_cause"].toString()),
                 qPrintable(two.summary["bottleneck_cause"].toString()));
        QVERIFY(two.summary["slowest_rank"].toInt(-1) == 0 ||
                two.summary["slowest_rank"].toInt(-1) == 1);
        QVERIFY(!one.summary.contains("bottleneck_cause"));
        QVERIFY(!events(dir.path() + "/one", "progress").first().contains("comm_share"));
        const QList<QJsonObject> epochs = events(dir.path() + "/two", "epoch");
        QCOMPARE(epochs.size(), 2);
        for (const QJsonObject &e : epochs)
            QVERIFY(QRegularExpression("^[0-9a-f]{16}$")
                        .match(e["weights_digest"].toString())
                        .hasMatch());
        QVERIFY(epochs[0]["weights_digest"] != epochs[1]["weights_digest"]);
        QVERIFY(QFile::exists(dir.path() + "/two/model.safetensors"));
        QCOMPARE(readJson(dir.path() + "/two/run.json")["status"].toString(), QStringLiteral("ok"));
    }

    // The whole job killed (SIGKILL to every process), then resumed with the same number of
    // ranks: it ends exactly where the uninterrupted 2-rank run ends, bit for bit. Resuming
    // with another number of ranks is refused, saying how.
    // `mpirun -np 1` is a data-parallel job of one rank (the path of a larger job: on a machine
    // with one GPU, the way to run NCCL's): it trains exactly what one process trains, and says
    // where its time went as a larger job does.
    void oneRankUnderMpirunIsTheDataParallelPath()
    {
        QTemporaryDir dir;
        const QStringList common{"run",       kMlp,
                                 "--threads", "1",
                                 "--set",     "train_data.limit=1000",
                                 "--set",     "test_data.limit=200",
                                 "--set",     "train.epochs=1"};
        const CliResult alone = runCli(common + QStringList{"--out", dir.path() + "/alone"});
        QCOMPARE(alone.exitCode, 0);
        QVERIFY(!alone.summary.contains("bottleneck_cause"));
        const CliResult one = runMpi(1, common + QStringList{"--out", dir.path() + "/one"});
        QVERIFY2(one.exitCode == 0, qPrintable(one.err.right(3000)));
        QCOMPARE(one.summary["bottleneck_cause"].toString(), QStringLiteral("compute"));
        QVERIFY2(one.err.contains("on other ranks"), qPrintable(one.err.right(2000)));
        QCOMPARE(events(dir.path() + "/one", "run_start").first()["ranks"].toInt(), 1);
        const QMap<int, double> a = losses(dir.path() + "/alone"), b = losses(dir.path() + "/one");
        QCOMPARE(a.size(), 8);
        QCOMPARE(b, a); // the same bits: a share of 1, a sum over one rank
    }

    void resumeAfterTheJobIsKilled()
    {
        QTemporaryDir dir;
        const QStringList common{"run",   kCnn,
                                 "--threads", "1",
                                 "--set", "train_data.limit=1536",
                                 "--set", "test_data.limit=200",
                                 "--set", "train.epochs=4",
                                 "--set", "train.checkpoint_steps=4"};
        const QString whole = dir.path() + "/whole", killed = dir.path() + "/killed";
        const CliResult uninterrupted = runMpi(2, common + QStringList{"--out", whole});
        QVERIFY2(uninterrupted.exitCode == 0, qPrintable(uninterrupted.err.right(3000)));

        // The job in a process group of its own, to kill every process of it at once.
        QProcess job;
        job.setProcessEnvironment(mpiEnvironment());
        job.setChildProcessModifier([] { ::setsid(); });
        job.start(QStandardPaths::findExecutable("mpirun"),
                  mpirunArgs(2, common + QStringList{"--out", killed}));
        QVERIFY(job.waitForStarted());
        QElapsedTimer t;
        t.start();
        // Killed once a few checkpoints are whole, in the middle of training.
        while (QDir(killed + "/checkpoints").entryList({"step-*"}, QDir::Dirs).size() < 2 &&
               t.elapsed() < 120000 && job.state() == QProcess::Running)
            QTest::qWait(20);
        QVERIFY2(job.state() == QProcess::Running, "the job ended before it could be killed");
        ::kill(-pid_t(job.processId()), SIGKILL);
        QVERIFY(job.waitForFinished(30000));
        // Every rank is gone with it.
        for (int i = 0; i < 100 && !ranksOf(killed).isEmpty(); ++i)
            QTest::qWait(50);
        QVERIFY(ranksOf(killed).isEmpty());

        // With one process: refused before anything is trained, naming the way that works.
        const CliResult alone = runCli(common + QStringList{"--resume", killed, "--out",
                                                            dir.path() + "/alone"});
        QCOMPARE(alone.exitCode, 2);
        QVERIFY2(alone.summary["error"].toObject()["message"].toString().contains("mpirun -np 2"),
                 qPrintable(alone.out));

        const CliResult resumed = runMpi(2, common + QStringList{"--resume", killed, "--out", killed});
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err.right(3000)));
        QCOMPARE(losses(killed), losses(whole));
        QCOMPARE(fileBytes(killed + "/model.safetensors"), fileBytes(whole + "/model.safetensors"));
        QVERIFY(!fileBytes(whole + "/model.safetensors").isEmpty());
    }

    // A rank that dies stops the whole job within seconds, never a hang, and the error names
    // the rank and its host.
    void aDeadRankStopsTheJob()
    {
        QTemporaryDir dir;
        const QString out = dir.path() + "/dies";
        QProcess job;
        job.setProcessEnvironment(mpiEnvironment());
        job.setChildProcessModifier([] { ::setsid(); });
        job.start(QStandardPaths::findExecutable("mpirun"),
                  mpirunArgs(2, {"run", kCnn, "--threads", "1", "--set", "train_data.limit=20000",
                                 "--set", "train.epochs=50", "--out", out}));
        QVERIFY(job.waitForStarted());
        QElapsedTimer t;
        t.start();
        while (events(out, "progress").size() < 3 && t.elapsed() < 120000 &&
               job.state() == QProcess::Running)
            QTest::qWait(50);
        const QMap<int, pid_t> ranks = ranksOf(out);
        QVERIFY2(ranks.contains(1), "rank 1 was not found running");
        ::kill(ranks[1], SIGKILL);
        t.restart();
        const bool ended = job.waitForFinished(30000);
        if (!ended) ::kill(-pid_t(job.processId()), SIGKILL);
        QVERIFY2(ended, "the job did not stop within 30 s of a rank's death");
        QVERIFY2(t.elapsed() < 15000, qPrintable(QString("stopped after %1 ms").arg(t.elapsed())));
        QVERIFY(job.exitCode() != 0);
        const QString said = QString::fromUtf8(job.readAllStandardError() + job.readAllStandardOutput());
        QVERIFY2(said.contains("rank 1"), qPrintable(said.right(2000)));
        qInfo("a rank killed: the job stopped in %lld ms, saying: %s", (long long)t.elapsed(),
              qPrintable(said.right(600)));
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        QVERIFY2(said.contains(QString::fromUtf8(host)), qPrintable(said.right(2000)));
        for (int i = 0; i < 100 && !ranksOf(out).isEmpty(); ++i)
            QTest::qWait(50);
        QVERIFY(ranksOf(out).isEmpty()); // rank 0 went with it
        // The run stays resumable: its folder says so, and its checkpoints are whole.
        QVERIFY(QFile::exists(out + "/run.json"));
    }
};

// Without MPI in the build, or without mpirun, CTest reports the test as skipped (exit 77), not
// passed: what ran is what the summary says.
int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const CliResult devices = runCli({"devices", "--json"});
    const QJsonObject d = QJsonDocument::fromJson(devices.out.toUtf8()).object();
    if (devices.exitCode == 0 && d["mpi"].isNull()) {
        std::printf("SKIP: this build has no MPI (apt install libopenmpi-dev, build again)\n");
        return 77;
    }
    if (QStandardPaths::findExecutable("mpirun").isEmpty()) {
        std::printf("SKIP: mpirun is not installed (apt install openmpi-bin)\n");
        return 77;
    }
    TestDistributed t;
    return QTest::qExec(&t, argc, argv);
}
#include "test_distributed.moc"
