// flowbench-cli sweep and lr-find through the real binary (docs/runs.md): one ordinary run per
// combination, K at a time, each named after its values and tagged with the sweep; the record
// lists them with their results; random draws repeat with their seed; bad ranges are refused
// before anything runs; a stopped sweep stops its runs with their checkpoints. The learning-rate
// range test suggests a rate and changes nothing.

#include "cli_process.h"

#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>

#include <cmath>
#include <csignal>

namespace {

const QString kData = "/usr/share/datasets/fashion-mnist";
const QString kMlp =
    QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");

QStringList small(int epochs = 1)
{
    return {"--set",     "train_data.limit=1500",
            "--set",     "test_data.limit=500",
            "--set",     QString("train.epochs=%1").arg(epochs),
            "--threads", "2"};
}

QStringList runFolders(const QString &root)
{
    return QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        if (!QFile::exists(kData + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
    }

    void gridOfOrdinaryRuns()
    {
        QTemporaryDir dir;
        const CliResult r =
            runCli(QStringList{"sweep", kMlp, "--set-range", "optimizer.lr=0.02,0.1", "--set-range",
                               "train.batch_size=64,128", "--parallel", "2", "--out", dir.path(),
                               "--name", "grid", "--json"} +
                   small());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.summary["status"].toString(), QString("done"));
        QCOMPARE(runFolders(dir.path()), (QStringList{"grid-01", "grid-02", "grid-03", "grid-04"}));
        const QJsonObject record = readJson(dir.filePath("grid.sweep.json"));
        QCOMPARE(record["format"].toString(), QString("flowbench.sweep"));
        QCOMPARE(record["status"].toString(), QString("done"));
        const QJsonArray trials = record["trials"].toArray();
        QCOMPARE(trials.size(), 4);
        // The first range varies slowest.
        const QStringList names{"lr=0.02 batch_size=64", "lr=0.02 batch_size=128",
                                "lr=0.1 batch_size=64", "lr=0.1 batch_size=128"};
        double best = -1;
        QString bestDir;
        for (int i = 0; i < 4; ++i) {
            const QJsonObject t = trials[i].toObject();
            QCOMPARE(t["name"].toString(), names[i]);
            QCOMPARE(t["status"].toString(), QString("ok"));
            QVERIFY(t["test_accuracy"].toDouble() > 0.3);
            QCOMPARE(t["params"].toObject()["optimizer.lr"].toDouble(), i < 2 ? 0.02 : 0.1);
            // An ordinary run: its own run.json, named and tagged, and the pipeline as run.
            const QString run = dir.filePath(t["dir"].toString());
            const QJsonObject runFile = readJson(run + "/run.json");
            QCOMPARE(runFile["name"].toString(), names[i]);
            QCOMPARE(runFile["tags"].toArray().first().toString(), QString("grid"));
            const QJsonObject pipeline = readJson(run + "/pipeline.json");
            for (const auto &n : pipeline["nodes"].toArray())
                if (n.toObject()["id"].toString() == "train")
                    QCOMPARE(n.toObject()["params"].toObject()["batch_size"].toInt(),
                             i % 2 ? 128 : 64);
            QVERIFY(QFile::exists(run + "/manifest.json"));
            if (t["test_accuracy"].toDouble() > best) {
                best = t["test_accuracy"].toDouble();
                bestDir = run;
            }
        }
        QCOMPARE(QDir(r.summary["best"].toString()).absolutePath(), QDir(bestDir).absolutePath());
        // For people: a table, best first.
        const CliResult again =
            runCli(QStringList{"sweep", kMlp, "--set-range", "optimizer.lr=0.05", "--out",
                               dir.path(), "--name", "one"} +
                   small());
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.out.contains("best: lr=0.05"), qPrintable(again.out));
        // A name that is taken is refused.
        QCOMPARE(runCli(QStringList{"sweep", kMlp, "--set-range", "optimizer.lr=0.05", "--out",
                                    dir.path(), "--name", "one"} +
                        small())
                     .exitCode,
                 2);
    }

    void randomDrawsRepeatWithTheirSeed()
    {
        QTemporaryDir dir;
        auto drawn = [&](const QString &name, const QString &seed) {
            const CliResult r =
                runCli(QStringList{"sweep", kMlp, "--set-range", "optimizer.lr=0.01,0.02,0.05,0.1",
                                   "--set-range", "fc1.out_features=32,64", "--random", "2",
                                   "--seed", seed, "--out", dir.path(), "--name", name, "--json"} +
                       small());
            QStringList names;
            for (const auto &t : r.summary["trials"].toArray())
                names << t.toObject()["name"].toString();
            return names;
        };
        const QStringList a = drawn("a", "7"), b = drawn("b", "7");
        QCOMPARE(a.size(), 2);
        QCOMPARE(a, b);
        QVERIFY(a[0] != a[1]);
    }

    void badRangesAreRefusedBeforeAnythingRuns()
    {
        QTemporaryDir dir;
        CliResult r = runCli(QStringList{"sweep", kMlp, "--set-range", "optimizer.lr=0.1,-1",
                                         "--out", dir.path(), "--json"} +
                             small());
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("trial 2 (lr=-1)") && r.err.contains("optimizer"),
                 qPrintable(r.err));
        QCOMPARE(r.summary["error"].toObject()["node"].toString(), QString("optimizer.lr"));
        QVERIFY(runFolders(dir.path()).isEmpty());
        QVERIFY(QDir(dir.path()).entryList({"*.sweep.json"}).isEmpty());
        r = runCli({"sweep", kMlp, "--set-range", "nope.lr=1", "--out", dir.path()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("nope"));
        QCOMPARE(runCli({"sweep", kMlp, "--set-range", "optimizer.lr"}).exitCode, 2);
        QCOMPARE(runCli({"sweep", kMlp}).exitCode, 2); // nothing to sweep
        QCOMPARE(runCli({"sweep", "--help"}).exitCode, 0);
    }

    void lrFindSuggestsAndChangesNothing()
    {
        QTemporaryDir dir;
        QProcess p;
        p.setWorkingDirectory(dir.path());
        p.start(FLOWBENCH_CLI, {"lr-find", kMlp, "--set", "train_data.limit=3000", "--min", "1e-5",
                                "--max", "10", "--steps", "80", "--threads", "2", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject r =
            QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last())
                .object();
        QCOMPARE(r["status"].toString(), QString("ok"));
        QCOMPARE(r["optimizer"].toString(), QString("optimizer"));
        QCOMPARE(r["current_lr"].toDouble(), 0.05);
        const QJsonArray points = r["points"].toArray();
        QVERIFY(points.size() >= 20 && points.size() <= 80);
        // The rate grows geometrically from --min: the same ratio at every step.
        const double ratio = std::pow(10.0 / 1e-5, 1.0 / 79);
        QVERIFY(std::abs(points[0].toArray()[0].toDouble() - 1e-5) < 1e-9);
        for (int i = 1; i < points.size(); ++i)
            QVERIFY(
                std::abs(points[i].toArray()[0].toDouble() / points[i - 1].toArray()[0].toDouble() -
                         ratio) < 1e-3);
        // A rate of 10 is far too high for this MLP: the test ends where the loss diverges.
        QVERIFY(r["diverged_at"].isDouble());
        const double suggested = r["suggested_lr"].toDouble();
        QVERIFY2(suggested > 1e-4 && suggested <= r["lowest_loss_lr"].toDouble(),
                 qPrintable(QString::number(suggested)));
        QVERIFY(QDir(dir.path()).isEmpty()); // no run folder, nothing written

        QCOMPARE(runCli({"lr-find", kMlp, "--min", "1", "--max", "0.1"}).exitCode, 2);
        QCOMPARE(runCli({"lr-find", kMlp, "--steps", "3"}).exitCode, 2);
        QCOMPARE(runCli({"lr-find", kMlp, "--set", "optimizer.lr=-1"}).exitCode, 2);
        const CliResult text = runCli(
            {"lr-find", kMlp, "--set", "train_data.limit=2000", "--steps", "40", "--threads", "2"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("suggested learning rate: ") &&
                     text.out.contains("optimizer.lr is 0.05 now; nothing was changed"),
                 qPrintable(text.out));
    }

    // SIGTERM (the window's Stop Sweep, or Ctrl-C) stops every run after its step, with a
    // checkpoint; runs not started yet are not started.
    void stoppedSweepStopsItsRuns()
    {
        QTemporaryDir dir;
        QProcess p;
        p.start(FLOWBENCH_CLI,
                QStringList{"sweep", kMlp, "--set-range", "optimizer.lr=0.01,0.02,0.05", "--out",
                            dir.path(), "--name", "s", "--json"} +
                    small(200));
        QByteArray err;
        QTRY_VERIFY_WITH_TIMEOUT((err += p.readAllStandardError()).contains("started 1/3"), 30000);
        // Training, not still loading: its event log has a progress line.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                QFile f(dir.filePath("s-01/events.jsonl"));
                return f.open(QIODevice::ReadOnly) && f.readAll().contains("\"progress\"");
            }(),
            60000);
        ::kill(pid_t(p.processId()), SIGTERM);
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        const QJsonObject record = readJson(dir.filePath("s.sweep.json"));
        QCOMPARE(record["status"].toString(), QString("stopped"));
        const QJsonArray trials = record["trials"].toArray();
        QVERIFY2(trials[0].toObject()["status"].toString() == "stopped",
                 qPrintable(QJsonDocument(trials[0].toObject()).toJson() + [&] {
                     QFile f(dir.filePath("s-01/cli-output.txt"));
                     f.open(QIODevice::ReadOnly);
                     return f.readAll().right(1500);
                 }()));
        QCOMPARE(trials[2].toObject()["status"].toString(), QString("not run"));
        QVERIFY(!QDir(dir.filePath("s-01/checkpoints")).isEmpty());
        QCOMPARE(readJson(dir.filePath("s-01/run.json"))["status"].toString(), QString("stopped"));
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "test_sweep.moc"
