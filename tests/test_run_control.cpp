// A live run through the real flowbench-cli: the event stream's schema (version 2), the commands
// on stdin and their acknowledgements, checkpoints every N steps, exact resume after a stop and
// after SIGKILL, the preprocessing cache and the bottleneck report.

#include <QtTest>

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <functional>

namespace {

const QString kData = "/usr/share/datasets/fashion-mnist";
const QString kSource = FLOWBENCH_SOURCE_DIR;

QString example(const char *name)
{
    return kSource + "/resources/examples/" + name;
}

// A running flowbench-cli with `--events -`: its events as they arrive, commands to its stdin.
class LiveRun {
public:
    explicit LiveRun(QStringList args)
    {
        args << "--events"
             << "-";
        m_p.setProgram(FLOWBENCH_CLI);
        m_p.setArguments(args);
        m_p.start();
    }
    ~LiveRun()
    {
        if (m_p.state() != QProcess::NotRunning) {
            m_p.kill();
            m_p.waitForFinished(10000);
        }
    }

    void send(const QJsonObject &command)
    {
        m_p.write(QJsonDocument(command).toJson(QJsonDocument::Compact) + "\n");
        m_p.waitForBytesWritten(5000);
    }

    // Waits until an event after the previous match satisfies `pred`; returns it.
    std::optional<QJsonObject> waitFor(const std::function<bool(const QJsonObject &)> &pred,
                                       int timeoutMs = 120000)
    {
        QElapsedTimer t;
        t.start();
        while (true) {
            for (; m_cursor < events.size(); ++m_cursor)
                if (pred(events[m_cursor])) return events[m_cursor++];
            if (t.elapsed() > timeoutMs || m_p.state() == QProcess::NotRunning) {
                read();
                for (; m_cursor < events.size(); ++m_cursor)
                    if (pred(events[m_cursor])) return events[m_cursor++];
                return std::nullopt;
            }
            m_p.waitForReadyRead(100);
            read();
        }
    }

    std::optional<QJsonObject> waitForType(const QString &type, int timeoutMs = 120000)
    {
        return waitFor([&](const QJsonObject &e) { return e["type"].toString() == type; },
                       timeoutMs);
    }

    int finish(int timeoutMs = 300000)
    {
        m_p.closeWriteChannel();
        m_p.waitForFinished(timeoutMs);
        read();
        err += QString::fromUtf8(m_p.readAllStandardError());
        return m_p.exitStatus() == QProcess::NormalExit ? m_p.exitCode() : -1;
    }

    void killHard() // SIGKILL: no chance to clean up
    {
        m_p.kill();
        m_p.waitForFinished(10000);
        read();
    }

    QJsonObject summary() const
    {
        for (auto it = events.rbegin(); it != events.rend(); ++it)
            if (it->contains("status")) return *it;
        return {};
    }

    QList<QJsonObject> events;
    QString err;

private:
    void read()
    {
        m_buffer += m_p.readAllStandardOutput();
        int nl;
        while ((nl = m_buffer.indexOf('\n')) >= 0) {
            const QByteArray line = m_buffer.left(nl);
            m_buffer.remove(0, nl + 1);
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (!o.isEmpty()) events << o;
        }
        err += QString::fromUtf8(m_p.readAllStandardError());
    }

    QProcess m_p;
    QByteArray m_buffer;
    qsizetype m_cursor = 0;
};

struct CliResult {
    int exitCode = -1;
    QString err;
    QJsonObject summary;
};

CliResult cli(const QStringList &args)
{
    QProcess p;
    p.setProgram(FLOWBENCH_CLI);
    p.setArguments(args);
    p.start();
    p.closeWriteChannel();
    p.waitForFinished(300000);
    CliResult r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.err = QString::fromUtf8(p.readAllStandardError());
    const QStringList lines = QString::fromUtf8(p.readAllStandardOutput()).trimmed().split('\n');
    if (!lines.isEmpty()) r.summary = QJsonDocument::fromJson(lines.last().toUtf8()).object();
    return r;
}

// The augmented CNN on 2000 samples (16 steps per epoch): random crops, flips and affine
// warps, so exact resume must restore the augmentation's draws too.
QStringList augmentedRun(const QString &outDir, int epochs, int checkpointSteps = 0)
{
    return {"run",       example("fashion_mnist_cnn_augmented.json"),
            "--threads", "2",
            "--set",     "train_data.limit=2000",
            "--set",     "test_data.limit=500",
            "--set",     QString("train.epochs=%1").arg(epochs),
            "--set",     QString("train.checkpoint_steps=%1").arg(checkpointSteps),
            "--out",     outDir};
}

bool isAck(const QJsonObject &e, const QString &id)
{
    return e["type"].toString() == "ack" && e["id"].toString() == id;
}

QStringList checkpointDirs(const QString &outDir)
{
    return QDir(outDir + "/checkpoints").entryList({"step-*"}, QDir::Dirs, QDir::Name);
}

} // namespace

class TestRunControl : public QObject {
    Q_OBJECT

    QJsonObject m_reference; // summary of an uninterrupted augmented run of 3 epochs
    QTemporaryDir m_referenceDir;

private slots:
    void initTestCase()
    {
        if (!QFile::exists(kData + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        CliResult r = cli(augmentedRun(m_referenceDir.path(), 3));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        m_reference = r.summary;
        QCOMPARE(m_reference["steps"].toInt(), 48);
    }

    void eventStreamFollowsTheSchema()
    {
        QTemporaryDir dir;
        LiveRun run(augmentedRun(dir.path(), 2, 5));
        QCOMPARE(run.finish(), 0);
        const QList<QJsonObject> &ev = run.events;
        QVERIFY(ev.size() > 5);
        const QJsonObject start = ev.first();
        QCOMPARE(start["type"].toString(), QString("run_start"));
        QCOMPARE(start["version"].toInt(), 2);
        for (const char *k : {"pipeline", "device", "threads", "data_workers", "epochs",
                              "first_epoch", "first_step", "steps_per_epoch", "train_samples",
                              "parameters", "out_dir", "flowbench", "libraries"})
            QVERIFY2(start.contains(k), k);
        QVERIFY(start["libraries"].toObject()["onednn"].toString().startsWith("2."));
        QVERIFY(start["libraries"].toObject()["opencv"].toString().startsWith("4."));
        QMap<QString, int> count;
        double lastT = 0;
        QStringList chain;
        for (const QJsonObject &e : ev) {
            const QString type = e["type"].toString();
            ++count[type];
            if (e.contains("status")) continue; // the summary line of the CLI contract
            QVERIFY2(e.contains("t"), qPrintable(type));
            QVERIFY(e["t"].toDouble() >= lastT);
            lastT = e["t"].toDouble();
            if (type == "progress") {
                for (const char *k :
                     {"epoch", "epochs", "step", "total_steps", "loss", "recent_loss", "accuracy",
                      "lr", "samples_per_s", "data_wait_share", "eta_s"})
                    QVERIFY2(e.contains(k), k);
                QCOMPARE(e["total_steps"].toInt(), 32);
            } else if (type == "dataflow") {
                QCOMPARE(e["consumer"].toString(), QString("train"));
                for (const char *k : {"workers", "wait_share", "total_wait_share", "bottleneck",
                                      "edges", "stages", "cached_samples", "cache_samples"})
                    QVERIFY2(e.contains(k), k);
                chain.clear();
                for (const auto &x : e["edges"].toArray()) {
                    const QJsonObject edge = x.toObject();
                    for (const char *k : {"batches_per_s", "bytes_per_s", "queued", "capacity",
                                          "consumer_wait_s", "cached"})
                        QVERIFY2(edge.contains(k), k);
                    QVERIFY(edge["queued"].toInt() <= edge["capacity"].toInt());
                    chain << edge["from"].toString();
                    if (chain.size() == e["edges"].toArray().size()) chain << edge["to"].toString();
                }
            } else if (type == "hardware") {
                QVERIFY(e["cpu_percent"].toDouble() >= 0 && e["cpu_percent"].toDouble() <= 100);
                QVERIFY(e["gpus"].isArray());
            } else if (type == "checkpoint") {
                QVERIFY(e["step"].toInt() % 5 == 0 || e["reason"].toString() == "epoch");
                QVERIFY(QFile::exists(e["dir"].toString() + "/checkpoint.safetensors") ||
                        !checkpointDirs(dir.path()).isEmpty()); // older ones are pruned
            }
        }
        QCOMPARE(chain, QStringList({"train_data", "random_crop", "random_flip", "random_affine",
                                     "normalize", "train"}));
        QVERIFY(count["progress"] >= 2);
        // About 10 a second at most (plus one at each epoch's end).
        QVERIFY2(count["progress"] <= int(lastT * 10) + 2 + 2,
                 qPrintable(QString::number(count["progress"])));
        QVERIFY(count["hardware"] >= 1 && count["hardware"] <= int(lastT * 2) + 3);
        QCOMPARE(count["epoch"], 2);
        QVERIFY(count["checkpoint"] >= 6); // steps 5..30 and the epoch ends
        // keep_checkpoints (3 by default) prunes the older ones.
        QCOMPARE(checkpointDirs(dir.path()).size(), 3);
        const QJsonObject summary = run.summary();
        QCOMPARE(summary["status"].toString(), QString("ok"));
        QVERIFY(summary.contains("bottleneck") && summary.contains("data_wait_share"));
        QCOMPARE(summary["stopped"].toBool(), false);
    }

    void commandsAreAcknowledged()
    {
        QTemporaryDir dir;
        LiveRun run(augmentedRun(dir.path(), 50));
        QVERIFY(run.waitForType("run_start"));
        run.send({{"command", "pause"}, {"id", "p1"}});
        auto paused = run.waitFor([](const QJsonObject &e) { return isAck(e, "p1"); });
        QVERIFY2(paused, qPrintable(run.err));
        QVERIFY((*paused)["ok"].toBool());
        // While paused, no step is taken.
        const int before = int(run.events.size());
        QTest::qWait(700);
        QVERIFY(!run.waitFor([](const QJsonObject &e) { return e["type"] == "progress"; }, 100));
        QVERIFY(run.events.size() >= before);

        run.send({{"command", "set_lr"}, {"lr", 0.01}, {"id", "l1"}});
        auto lr = run.waitFor([](const QJsonObject &e) { return isAck(e, "l1"); });
        QVERIFY(lr && (*lr)["ok"].toBool());
        run.send({{"command", "set_lr"}, {"lr", -1}, {"id", "l2"}});
        auto badLr = run.waitFor([](const QJsonObject &e) { return isAck(e, "l2"); });
        QVERIFY(badLr && !(*badLr)["ok"].toBool());
        run.send({{"command", "jump"}, {"id", "j1"}});
        auto unknown = run.waitFor([](const QJsonObject &e) { return isAck(e, "j1"); });
        QVERIFY(unknown && !(*unknown)["ok"].toBool());
        QVERIFY((*unknown)["message"].toString().contains("unknown command 'jump'"));

        run.send({{"command", "checkpoint"}, {"id", "c1"}});
        auto cp = run.waitFor([](const QJsonObject &e) {
            return e["type"] == "checkpoint" && e["reason"] == "command";
        });
        QVERIFY(cp);
        QVERIFY(QFile::exists((*cp)["dir"].toString() + "/checkpoint.safetensors"));
        QVERIFY(run.waitFor([](const QJsonObject &e) { return isAck(e, "c1"); }));

        run.send({{"command", "resume"}, {"id", "r1"}});
        QVERIFY(run.waitFor([](const QJsonObject &e) { return isAck(e, "r1"); }));
        auto after = run.waitForType("progress");
        QVERIFY(after);
        QCOMPARE(float((*after)["lr"].toDouble()), 0.01f);

        run.send({{"command", "stop"}, {"id", "s1"}});
        QVERIFY(run.waitFor([](const QJsonObject &e) { return isAck(e, "s1"); }));
        QCOMPARE(run.finish(), 0);
        auto stopCp = run.waitFor([](const QJsonObject &e) {
            return e["type"] == "checkpoint" && e["reason"] == "stop";
        });
        QVERIFY(stopCp);
        const QJsonObject s = run.summary();
        QCOMPARE(s["status"].toString(), QString("ok"));
        QCOMPARE(s["stopped"].toBool(), true);
        QCOMPARE(s["steps"].toInt(), (*stopCp)["step"].toInt());
        QVERIFY(s["steps"].toInt() < 50 * 16);
    }

    void pausedRunGoesOnWhenCommandsEnd()
    {
        // The window that paused the run went away (its pipe closed): the run must not hang.
        QTemporaryDir dir;
        LiveRun run(augmentedRun(dir.path(), 1));
        QVERIFY(run.waitForType("run_start"));
        run.send({{"command", "pause"}, {"id", "p"}});
        QVERIFY(run.waitFor([](const QJsonObject &e) { return isAck(e, "p"); }));
        QCOMPARE(run.finish(60000), 0); // closes stdin
        QVERIFY(run.waitFor([](const QJsonObject &e) {
            return e["type"] == "log" && e["message"].toString().contains("resuming");
        }));
        QCOMPARE(run.summary()["steps"].toInt(), 16);
        QCOMPARE(run.summary()["stopped"].toBool(), false);
    }

    void stoppedRunResumesExactly()
    {
        QTemporaryDir dir;
        {
            LiveRun run(augmentedRun(dir.path(), 3));
            // Stop in the middle of the second epoch.
            QVERIFY(run.waitFor([](const QJsonObject &e) {
                return e["type"] == "progress" && e["step"].toInt() >= 20;
            }));
            run.send({{"command", "stop"}});
            QCOMPARE(run.finish(), 0);
            QVERIFY(run.summary()["stopped"].toBool());
            const int stoppedAt = run.summary()["steps"].toInt();
            QVERIFY2(stoppedAt > 16 && stoppedAt < 48 && stoppedAt % 16 != 0,
                     qPrintable(QString::number(stoppedAt)));
        }
        // Resumed with a different number of data workers: the batches do not depend on it.
        QStringList resume = augmentedRun(dir.path(), 3);
        resume << "--resume" << dir.path() << "--data-workers"
               << "2";
        CliResult r = cli(resume);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.summary["steps"].toInt(), 48);
        QCOMPARE(r.summary["final_loss"].toDouble(), m_reference["final_loss"].toDouble());
        QCOMPARE(r.summary["test_accuracy"].toDouble(), m_reference["test_accuracy"].toDouble());
    }

    void killedRunResumesExactly()
    {
        QTemporaryDir dir;
        {
            LiveRun run(augmentedRun(dir.path(), 3, 3));
            // SIGKILL soon after a mid-epoch checkpoint in the second epoch.
            auto cp = run.waitFor([](const QJsonObject &e) {
                return e["type"] == "checkpoint" && e["step"].toInt() >= 21;
            });
            QVERIFY(cp);
            run.killHard();
        }
        QVERIFY(!checkpointDirs(dir.path()).isEmpty());
        QStringList resume = augmentedRun(dir.path(), 3, 3);
        resume << "--resume" << dir.path();
        CliResult r = cli(resume);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("resuming from"), qPrintable(r.err));
        QCOMPARE(r.summary["final_loss"].toDouble(), m_reference["final_loss"].toDouble());
        QCOMPARE(r.summary["test_accuracy"].toDouble(), m_reference["test_accuracy"].toDouble());
    }

    void deterministicPreprocessingIsCached()
    {
        QTemporaryDir dir;
        LiveRun run({"run", example("fashion_mnist_cnn.json"), "--threads", "2", "--set",
                     "train_data.limit=1000", "--set", "test_data.limit=200", "--set",
                     "train.epochs=2", "--out", dir.path()});
        QCOMPARE(run.finish(), 0);
        QJsonObject last;
        for (const auto &e : run.events)
            if (e["type"] == "dataflow") last = e;
        QCOMPARE(last["cache_samples"].toInt(), 1000);
        QCOMPARE(last["cached_samples"].toInt(), 1000);
        bool normalizeCached = false;
        for (const auto &s : last["stages"].toArray())
            if (s.toObject()["node"] == "normalize")
                normalizeCached = s.toObject()["cached"].toBool();
        QVERIFY(normalizeCached);
    }

    void slowDataStageIsNamedTheBottleneck()
    {
        // A model that costs almost nothing behind a chain with four affine warps on one worker:
        // the data limits the speed, and the report must say which stage.
        QTemporaryDir dir;
        QFile f(example("fashion_mnist_mlp.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        QJsonArray nodes = doc["nodes"].toArray(), edges = doc["edges"].toArray();
        nodes.append(QJsonObject{{"id", "warp"}, {"type", "random_affine"}});
        for (int i = 0; i < edges.size(); ++i) {
            QJsonObject e = edges[i].toObject();
            if (e["from"] == "train_data.samples") {
                e["from"] = "warp.samples";
                edges[i] = e;
            }
        }
        edges.append(QJsonObject{{"from", "train_data.samples"}, {"to", "warp.samples"}});
        doc["nodes"] = nodes;
        doc["edges"] = edges;
        const QString path = dir.path() + "/slow.json";
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(doc).toJson());
        out.close();
        CliResult r = cli({"run", path, "--threads", "1", "--data-workers", "1", "--set",
                           "train_data.limit=20000", "--set", "test_data.limit=100", "--set",
                           "fc1.out_features=8", "--set", "fc2.out_features=8", "--set",
                           "train.batch_size=512", "--out", dir.path() + "/run"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.summary["bottleneck"].toString(), QString("warp"));
        QVERIFY2(r.summary["data_wait_share"].toDouble() > 0.2,
                 qPrintable(QJsonDocument(r.summary).toJson()));
        QVERIFY(r.err.contains("bottleneck: warp"));
    }
};

QTEST_GUILESS_MAIN(TestRunControl)
#include "test_run_control.moc"
