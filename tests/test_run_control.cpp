// A live run through the real flowbench-cli: the event stream's schema (version 3), the commands
// on stdin and their acknowledgements, checkpoints every N steps, exact resume after a stop and
// after SIGKILL, the preprocessing cache, the bottleneck report and the evaluation (confusion
// matrix, per-class figures, misclassified images).

#include "core/data/dataset.h"
#include "core/exec/evaluation.h"
#include "core/exec/job.h"

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

QByteArray pixelsOf(const QJsonObject &sample)
{
    return QByteArray::fromBase64(sample["pixels"].toString().toLatin1(),
                                  QByteArray::AbortOnBase64DecodingErrors);
}

bool near(double a, double b)
{
    return std::abs(a - b) < 1e-6;
}

// What every `evaluation` event must satisfy on `test`, the evaluate node's data: the matrix
// counts every sample once under its true label, its trace over its total is the accuracy,
// precision and recall are its ratios, and each misclassified sample is a real mistake whose
// image is the test image (the chain only normalizes, so it comes back exactly).
void checkEvaluation(const QJsonObject &e, bool withGallery, const fb::data::ImageDataset &test)
{
    for (const char *k : {"node", "epoch", "epochs", "samples", "loss", "accuracy", "classes",
                          "confusion", "per_class", "misclassified_total"})
        QVERIFY2(e.contains(k), k);
    QCOMPARE(e["node"].toString(), QString("evaluate"));
    QCOMPARE(e["samples"].toInteger(), test.count);
    const QJsonArray classes = e["classes"].toArray();
    const int k = int(classes.size());
    QCOMPARE(k, 10);
    QCOMPARE(classes[0].toString(), QString("T-shirt/top"));
    QCOMPARE(classes[6].toString(), QString("Shirt"));
    QCOMPARE(classes[9].toString(), QString("Ankle boot"));

    const QJsonArray rows = e["confusion"].toArray();
    QCOMPARE(int(rows.size()), k);
    QVector<qint64> rowSum(k), colSum(k), labelCount(k);
    qint64 total = 0, trace = 0;
    for (int t = 0; t < k; ++t) {
        const QJsonArray row = rows[t].toArray();
        QCOMPARE(int(row.size()), k);
        for (int p = 0; p < k; ++p) {
            const qint64 v = row[p].toInteger(-1);
            QVERIFY(v >= 0);
            rowSum[t] += v;
            colSum[p] += v;
            total += v;
            if (t == p) trace += v;
        }
    }
    for (int32_t label : test.labels)
        ++labelCount[label];
    QCOMPARE(rowSum, labelCount);
    QCOMPARE(total, test.count);
    QVERIFY(near(e["accuracy"].toDouble(), float(double(trace) / double(total))));
    QCOMPARE(e["misclassified_total"].toInteger(), total - trace);

    const QJsonArray perClass = e["per_class"].toArray();
    QCOMPARE(int(perClass.size()), k);
    for (int c = 0; c < k; ++c) {
        const QJsonObject m = perClass[c].toObject();
        QCOMPARE(m["class"].toString(), classes[c].toString());
        QCOMPARE(m["support"].toInteger(), rowSum[c]);
        const qint64 hits = rows[c].toArray()[c].toInteger();
        if (colSum[c] == 0)
            QVERIFY(m["precision"].isNull());
        else
            QVERIFY(near(m["precision"].toDouble(), double(hits) / double(colSum[c])));
        if (rowSum[c] == 0)
            QVERIFY(m["recall"].isNull());
        else
            QVERIFY(near(m["recall"].toDouble(), double(hits) / double(rowSum[c])));
    }

    if (!withGallery) {
        QVERIFY(!e.contains("misclassified"));
        return;
    }
    QCOMPARE(e["pixel_scale"].toString(), QString("undo_normalize"));
    const QJsonArray gallery = e["misclassified"].toArray();
    QCOMPARE(qint64(gallery.size()), std::min<qint64>(64, total - trace));
    qint64 lastIndex = -1;
    for (const auto &x : gallery) {
        const QJsonObject m = x.toObject();
        const qint64 index = m["index"].toInteger(-1);
        const int truth = m["true_class"].toInt(-1), predicted = m["predicted_class"].toInt(-1);
        QVERIFY(index > lastIndex && index < test.count); // the first ones, in test order
        lastIndex = index;
        QVERIFY(truth >= 0 && truth < k && predicted >= 0 && predicted < k);
        QVERIFY(truth != predicted);
        QCOMPARE(truth, test.labels[size_t(index)]);
        QVERIFY(rows[truth].toArray()[predicted].toInteger() >= 1);
        // The arg-max of a softmax over k classes is at least 1/k.
        const double prob = m["probability"].toDouble();
        QVERIFY2(prob >= 1.0 / k - 1e-6 && prob <= 1.0, qPrintable(QString::number(prob)));
        QCOMPARE(m["height"].toInt(), 28);
        QCOMPARE(m["width"].toInt(), 28);
        QCOMPARE(m["channels"].toInt(), 1);
        const QByteArray pixels = pixelsOf(m);
        QCOMPARE(pixels.size(), 28 * 28);
        QCOMPARE(pixels, QByteArray(reinterpret_cast<const char *>(test.sample(index)), 28 * 28));
    }
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
        QCOMPARE(start["version"].toInt(), 6);
        for (const char *k : {"pipeline", "device", "threads", "data_workers", "epochs",
                              "first_epoch", "first_step", "steps_per_epoch", "train_samples",
                              "parameters", "out_dir", "flowbench", "libraries"})
            QVERIFY2(start.contains(k), k);
        QVERIFY(start["libraries"].toObject()["onednn"].toString().startsWith("2."));
        QVERIFY(start["libraries"].toObject()["opencv"].toString().startsWith("4."));
        auto test = fb::data::loadFashionMnist(kData.toStdString(), "test", 500);
        QVERIFY(test.ok());
        QMap<QString, int> count;
        double lastT = 0;
        QStringList chain;
        QJsonObject lastEpoch, lastEvaluation;
        for (const QJsonObject &e : ev) {
            const QString type = e["type"].toString();
            ++count[type];
            if (e.contains("status")) continue; // the summary line of the CLI contract
            QVERIFY2(e.contains("t"), qPrintable(type));
            QVERIFY(e["t"].toDouble() >= lastT);
            lastT = e["t"].toDouble();
            if (type == "progress") {
                for (const char *k : {"epoch", "epochs", "step", "total_steps", "loss",
                                      "recent_loss", "recent_accuracy", "accuracy", "lr",
                                      "samples_per_s", "data_wait_share", "eta_s"})
                    QVERIFY2(e.contains(k), k);
                QCOMPARE(e["total_steps"].toInt(), 32);
                QVERIFY(e["recent_accuracy"].toDouble() >= 0 &&
                        e["recent_accuracy"].toDouble() <= 1);
            } else if (type == "dataflow") {
                QCOMPARE(e["consumer"].toString(), QString("train"));
                for (const char *k :
                     {"workers", "wait_share", "total_wait_share", "bottleneck", "edges", "stages",
                      "cached_samples", "cache_samples", "source_disk_share", "source_decode_share",
                      "bottleneck_cause"})
                    QVERIFY2(e.contains(k), k);
                // Fashion-MNIST is held in memory: nothing is read from a disk cache or decoded
                // on the workers, and nothing is the source's fault.
                QCOMPARE(e["source_disk_share"].toDouble(), 0.0);
                QCOMPARE(e["source_decode_share"].toDouble(), 0.0);
                QCOMPARE(e["bottleneck_cause"].toString(), QString());
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
            } else if (type == "epoch") {
                lastEpoch = e;
            } else if (type == "evaluation") {
                // After its epoch's event, with the same figures; the gallery only at the end.
                QCOMPARE(e["epoch"].toInt(), lastEpoch["epoch"].toInt());
                QCOMPARE(e["epochs"].toInt(), 2);
                const QJsonObject summary = lastEpoch["evaluations"].toArray()[0].toObject();
                QCOMPARE(e["accuracy"].toDouble(), summary["accuracy"].toDouble());
                QCOMPARE(e["loss"].toDouble(), summary["loss"].toDouble());
                checkEvaluation(e, e["epoch"].toInt() == 2, test.value());
                if (QTest::currentTestFailed()) return;
                lastEvaluation = e;
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
        QCOMPARE(count["evaluation"], 2);
        QVERIFY(count["checkpoint"] >= 6); // steps 5..30 and the epoch ends
        // keep_checkpoints (3 by default) prunes the older ones.
        QCOMPARE(checkpointDirs(dir.path()).size(), 3);
        const QJsonObject summary = run.summary();
        QCOMPARE(summary["status"].toString(), QString("ok"));
        QVERIFY(summary.contains("bottleneck") && summary.contains("data_wait_share"));
        QCOMPARE(summary["stopped"].toBool(), false);
        // The summary's test accuracy is the last matrix's trace over its total.
        QVERIFY(near(summary["test_accuracy"].toDouble(), lastEvaluation["accuracy"].toDouble()));

        // evaluation.json holds the last evaluation exactly as the stream sent it.
        QFile file(dir.path() + "/evaluation.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject saved = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(saved["format"].toString(), QString("flowbench.evaluation"));
        QCOMPARE(saved["version"].toInt(), 1);
        QCOMPARE(saved["epoch"].toInt(), 2);
        QCOMPARE(saved["evaluations"].toArray().size(), 1);
        QJsonObject streamed = lastEvaluation;
        streamed.remove("t");
        QCOMPARE(saved["evaluations"].toArray()[0].toObject(), streamed);
        QVERIFY(!QDir(dir.path())
                     .entryList(QDir::Hidden | QDir::Files)
                     .contains(".evaluation.json.tmp"));
    }

    // The counting itself, on numbers small enough to check by hand.
    void evaluationTallyCountsAndKeepsTheFirstMistakes()
    {
        using namespace fb::exec;
        QCOMPARE(base64(reinterpret_cast<const uint8_t *>("Man"), 3), std::string("TWFu"));
        QCOMPARE(base64(reinterpret_cast<const uint8_t *>("Ma"), 2), std::string("TWE="));
        QCOMPARE(base64(reinterpret_cast<const uint8_t *>("M"), 1), std::string("TQ=="));
        QByteArray bytes;
        for (int i = 0; i < 1000; ++i)
            bytes.append(char((i * 37) & 255));
        QCOMPARE(QByteArray::fromStdString(
                     base64(reinterpret_cast<const uint8_t *>(bytes.constData()), 1000)),
                 bytes.toBase64());

        // Three classes, 2x2 images; the chain normalized with mean 0.5 and std 0.25.
        InputPixels undo;
        undo.undoNormalize = true;
        undo.normalize = {{0.5f, 0.25f}};
        EvaluationTally tally({"a", "b", "c"}, fb::Shape{1, 2, 2}, undo);
        const float scores[] = {3, 1, 0,  // true a, predicted a
                                0, 1, 3,  // true b, predicted c
                                1, 1, 0,  // true a: a tie goes to the first, a
                                0, 2, 1}; // true c, predicted b
        const int32_t labels[] = {0, 1, 0, 2};
        float inputs[16];
        for (int i = 0; i < 16; ++i)
            inputs[i] = (float(i * 16) / 255.0f - 0.5f) / 0.25f;
        tally.add(scores, labels, inputs, 4, 100);
        const EvaluationDetail &d = tally.detail();
        QCOMPARE(d.total(), 4);
        QCOMPARE(d.correct(), 2);
        QCOMPARE(d.count(0, 0), 2);
        QCOMPARE(d.count(1, 2), 1);
        QCOMPARE(d.count(2, 1), 1);
        QCOMPARE(d.misclassifiedTotal, 2);
        QCOMPARE(int(d.misclassified.size()), 2);
        const MisclassifiedSample &m = d.misclassified[0];
        QCOMPARE(m.index, 101);
        QCOMPARE(m.trueClass, 1);
        QCOMPARE(m.predicted, 2);
        QVERIFY(near(m.probability, std::exp(3.0) / (1 + std::exp(1.0) + std::exp(3.0))));
        QCOMPARE(m.pixels, (std::vector<uint8_t>{64, 80, 96, 112})); // sample 1's bytes
        QCOMPARE(d.misclassified[1].index, 103);
        const std::vector<ClassMetrics> pc = d.perClass();
        QVERIFY(near(pc[0].precision, 1.0) && near(pc[0].recall, 1.0));
        QCOMPARE(pc[1].precision, 0.0); // the one predicted b was a c
        QCOMPARE(pc[1].recall, 0.0);    // the one b was predicted c
        QCOMPARE(pc[1].support, 1);
        QCOMPARE(pc[1].predicted, 1);

        // Other chains: each image stretched to 0..255; only the first 64 mistakes are kept.
        EvaluationTally stretched({"a", "b"}, fb::Shape{1, 2, 2}, InputPixels{});
        std::vector<float> wrong(200, 0.0f), images(100 * 4);
        std::vector<int32_t> truth(100, 0);
        for (int i = 0; i < 100; ++i) {
            wrong[size_t(i * 2 + 1)] = 1.0f; // every sample predicted b, all of class a
            const float px[] = {-1, 0, 1, 3};
            std::copy(px, px + 4, images.begin() + i * 4);
        }
        stretched.add(wrong.data(), truth.data(), images.data(), 100, 0);
        QCOMPARE(stretched.detail().misclassifiedTotal, 100);
        QCOMPARE(int(stretched.detail().misclassified.size()), 64);
        QCOMPARE(stretched.detail().misclassified.back().index, 63);
        QCOMPARE(stretched.detail().misclassified[0].pixels,
                 (std::vector<uint8_t>{0, 64, 128, 255}));
        QCOMPARE(stretched.detail().perClass()[0].precision, -1.0); // nothing predicted a
        QCOMPARE(stretched.detail().perClass()[0].recall, 0.0);
        QCOMPARE(stretched.detail().perClass()[1].precision, 0.0);
        QCOMPARE(stretched.detail().perClass()[1].recall, -1.0); // no sample of b

        // Audio features: stretched too, and drawn with their first row at the bottom.
        fb::exec::DataSpec audio;
        audio.samples = fb::exec::DataSpec::SampleKind::Audio; // what audio_folder says
        const InputPixels spectrogram = InputPixels::forChain(audio);
        QVERIFY(spectrogram.flipRows && !spectrogram.undoNormalize);
        EvaluationTally flipped({"a", "b"}, fb::Shape{1, 2, 2}, spectrogram);
        flipped.add(wrong.data(), truth.data(), images.data(), 1, 0);
        QCOMPARE(flipped.detail().misclassified[0].pixels, (std::vector<uint8_t>{128, 255, 0, 64}));
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
