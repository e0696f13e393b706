// Run folders made by flowbench-cli run, end to end through the real binary (docs/runs.md):
// every run keeps its event log, run.json, manifest and every step's loss; `reproduce` runs it
// again and checks the losses bit for bit, or names the first step and the manifest keys that
// differ.

#include "cli_process.h"

#include <QtTest>

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

namespace {

const QString kData = "/usr/share/datasets/fashion-mnist";
const QString kSource = FLOWBENCH_SOURCE_DIR;

CliResult cli(const QStringList &args, const QByteArray &stdinText = {})
{
    return runCli(args, stdinText);
}

QStringList smallRun(const QString &outDir, int epochs = 2)
{
    return {"run",       kSource + "/resources/examples/fashion_mnist_mlp.json",
            "--threads", "2",
            "--set",     "train_data.limit=2000",
            "--set",     "test_data.limit=500",
            "--set",     QString("train.epochs=%1").arg(epochs),
            "--out",     outDir};
}

QStringList lines(const QString &path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
}

QByteArray sha256(const QString &path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex();
}

} // namespace

class TestReproduce : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        if (QByteArray(QTest::currentTestFunction()) != "reproduceRefusesWhatIsNotARun" &&
            !QFile::exists(kData + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
    }

    void everyRunKeepsItsFolder()
    {
        QTemporaryDir dir;
        const QString out = dir.path() + "/r1";
        const CliResult r = cli(smallRun(out));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));

        const QJsonObject run = readJson(out + "/run.json");
        QCOMPARE(run["format"].toString(), QString("flowbench.run"));
        QCOMPARE(run["status"].toString(), QString("ok"));
        QCOMPARE(run["name"].toString(), QString("r1"));
        QCOMPARE(run["pipeline"].toString(), QString("fashion_mnist_mlp"));
        QCOMPARE(run["device"].toString(), QString("cpu"));
        QCOMPARE(run["steps"].toInt(), r.summary["steps"].toInt());
        QCOMPARE(run["epochs_done"].toInt(), 2);
        QCOMPARE(run["test_accuracy"].toDouble(), r.summary["test_accuracy"].toDouble());
        QVERIFY(run["best_test_accuracy"].toDouble() >= run["test_accuracy"].toDouble());
        QVERIFY(!run.contains("pid")); // ended

        // The event log, saved as it streamed: from run_start to the summary.
        const QStringList events = lines(out + "/events.jsonl");
        QVERIFY(events.size() > 5);
        QCOMPARE(QJsonDocument::fromJson(events.first().toUtf8()).object()["type"].toString(),
                 QString("run_start"));
        const QJsonObject summary = QJsonDocument::fromJson(events.last().toUtf8()).object();
        QCOMPARE(summary["type"].toString(), QString("summary"));
        QCOMPARE(summary["steps"].toInt(), r.summary["steps"].toInt());
        QVERIFY(events.filter("\"evaluation\"").size() >= 1); // reopened runs show it

        // Every step's loss: one line each.
        QCOMPARE(lines(out + "/losses.csv").size(), 1 + r.summary["steps"].toInt());

        // The manifest, checked against digests computed here with Qt's own SHA-256.
        const QJsonObject m = readJson(out + "/manifest.json");
        QCOMPARE(m["format"].toString(), QString("flowbench.manifest"));
        QCOMPARE(m["pipeline"]["sha256"].toString().toUtf8(), sha256(out + "/pipeline.json"));
        const QJsonArray files = m["data"].toObject()["train_data"].toObject()["files"].toArray();
        QCOMPARE(files.size(), 2);
        for (const auto &f : files) {
            const QString path = f.toObject()["path"].toString();
            QVERIFY2(path.startsWith(kData), qPrintable(path));
            QCOMPARE(f.toObject()["sha256"].toString().toUtf8(), sha256(path));
            QCOMPARE(qint64(f.toObject()["bytes"].toDouble()), QFileInfo(path).size());
        }
        QCOMPARE(m["data"].toObject()["train_data"].toObject()["samples"].toInt(), 2000);
        QVERIFY(m["data"].toObject().contains("test_data"));
        QCOMPARE(m["threads"].toInt(), 2);
        QCOMPARE(m["device"].toObject()["name"].toString(), QString("cpu"));
        QVERIFY(!m["device"].toObject()["model"].toString().isEmpty());
        for (const char *key : {"flowbench", "flowbench_commit", "onednn", "opencv", "qt"})
            QVERIFY2(!m["software"].toObject()[key].toString().isEmpty(), key);
        QVERIFY(m["os"].toString().contains("Linux"));
        QVERIFY(m.contains("seed"));
        QCOMPARE(m["precision"].toString(), QString("float32"));
    }

    void reproduceIsBitIdentical()
    {
        QTemporaryDir dir;
        const QString out = dir.path() + "/r";
        QVERIFY(cli(smallRun(out)).exitCode == 0);
        const CliResult r = cli({"reproduce", out, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QCOMPARE(r.summary["status"].toString(), QString("identical"));
        QCOMPARE(r.summary["steps_compared"].toInt(), lines(out + "/losses.csv").size() - 1);
        QVERIFY(r.summary["first_difference"].isNull());
        QCOMPARE(r.summary["manifest_differences"].toArray().size(), 0);
        QVERIFY(QFile::exists(r.summary["out_dir"].toString() + "/losses.csv"));

        // For people: the verdict in words.
        const CliResult text = cli({"reproduce", out});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.startsWith("identical: all"), qPrintable(text.out));
    }

    // A changed loss and a changed manifest are both named.
    void reproduceNamesWhatDiffers()
    {
        QTemporaryDir dir;
        const QString out = dir.path() + "/r";
        QVERIFY(cli(smallRun(out)).exitCode == 0);
        QStringList losses = lines(out + "/losses.csv");
        losses[7] = "7,0.125"; // step 7
        QFile f(out + "/losses.csv");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write((losses.join('\n') + '\n').toUtf8());
        f.close();
        QJsonObject m = readJson(out + "/manifest.json");
        QJsonObject software = m["software"].toObject();
        software["onednn"] = "0.0.1";
        m["software"] = software;
        QVERIFY(writeJson(out + "/manifest.json", m));

        const CliResult r = cli({"reproduce", out, "--json"});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.summary["status"].toString(), QString("different"));
        QCOMPARE(r.summary["first_difference"].toObject()["step"].toInt(), 7);
        QCOMPARE(r.summary["first_difference"].toObject()["original"].toString(), QString("0.125"));
        bool named = false;
        for (const auto &d : r.summary["manifest_differences"].toArray())
            named = named || (d.toObject()["key"].toString() == "software.onednn" &&
                              d.toObject()["original"].toString() == "\"0.0.1\"");
        QVERIFY2(named, qPrintable(r.out));
        const CliResult text = cli({"reproduce", out});
        QVERIFY2(text.out.contains("step 7 is the first"), qPrintable(text.out));
        QVERIFY(text.out.contains("software.onednn: \"0.0.1\" -> \""));
    }

    // A stopped run is reproduced up to its stop; a resumed one as the uninterrupted run it
    // equals (exact resume), its folder holding both parts.
    void stoppedAndResumedRunsReproduce()
    {
        QTemporaryDir dir;
        const QString stopped = dir.path() + "/stopped";
        QStringList args = smallRun(stopped, 20); // 320 steps: it is still going at the stop
        args << "--events"
             << "-";
        QProcess p;
        p.start(FLOWBENCH_CLI, args);
        // Stop once it has trained a few steps (the window's Stop does the same).
        QByteArray seen;
        QTRY_VERIFY_WITH_TIMEOUT((seen += p.readAllStandardOutput()).contains("\"progress\""),
                                 60000);
        p.write("{\"command\": \"stop\"}\n");
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(readJson(stopped + "/run.json")["status"].toString(), QString("stopped"));
        const int steps = lines(stopped + "/losses.csv").size() - 1;
        QVERIFY2(steps >= 1 && steps < 320, qPrintable(QString::number(steps)));
        CliResult r = cli({"reproduce", stopped, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QCOMPARE(r.summary["steps_compared"].toInt(), steps);
        QCOMPARE(r.summary["reproduced_steps"].toInt(), steps);

        const QString resumed = dir.path() + "/resumed";
        QVERIFY(cli(smallRun(resumed, 1)).exitCode == 0);
        QStringList more = smallRun(resumed, 2);
        more << "--resume" << resumed;
        QVERIFY(cli(more).exitCode == 0);
        const QJsonObject run = readJson(resumed + "/run.json");
        QCOMPARE(run["resumes"].toInt(), 1);
        QCOMPARE(run["epochs_done"].toInt(), 2);
        QCOMPARE(lines(resumed + "/events.jsonl").filter("\"run_start\"").size(), 2);
        QCOMPARE(lines(resumed + "/losses.csv").size() - 1, 32);
        r = cli({"reproduce", resumed, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QCOMPARE(r.summary["steps_compared"].toInt(), 32);
        QVERIFY(r.summary["notes"].toArray().first().toString().contains("resumed at step 16"));
    }

    void reproduceRefusesWhatIsNotARun()
    {
        QTemporaryDir dir;
        CliResult r = cli({"reproduce", dir.path() + "/nothing"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("is not a folder"));
        r = cli({"reproduce", dir.path(), "--json"});
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.summary["status"].toString(), QString("error"));
        QVERIFY(r.err.contains("has no manifest.json"));
        r = cli({"reproduce"});
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(cli({"reproduce", "--help"}).exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestReproduce)
#include "test_reproduce.moc"
