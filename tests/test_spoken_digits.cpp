// The spoken-digits demo end to end, as a person meets it: scripts/make_spoken_digits.sh speaks
// the digits in 72 espeak-ng voices, resources/examples/spoken_digits.json trains on the
// voices of the training part, and the model must recognise at least 95% of the digits spoken
// by the voices held out. Then `flowbench-cli infer` on recordings gives exactly the
// evaluation's predictions: the preprocessing saved with the model (decoding, resampling,
// trimming, the log-mel spectrogram, normalize) is the one the run applied.
//
// The recordings are made once per build folder (about a minute) and kept there.

#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <cstring>

namespace {

const QString kSource = FLOWBENCH_SOURCE_DIR;
const QString kData = FLOWBENCH_BINARY_DIR "/spoken_digits";

struct Run {
    int exitCode = -1;
    QString out, err;
};

Run run(const QString &program, const QStringList &args, int timeoutMs = 600000)
{
    QProcess p;
    p.start(program, args);
    p.waitForFinished(timeoutMs);
    Run r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QJsonObject lastLine(const QString &out)
{
    return QJsonDocument::fromJson(out.trimmed().split('\n').last().toUtf8()).object();
}

} // namespace

class TestSpokenDigits : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        for (const char *tool : {"espeak-ng", "sox"})
            if (QStandardPaths::findExecutable(tool).isEmpty())
                QSKIP(qPrintable(
                    QString("%1 is not installed (scripts/deps.sh installs it)").arg(tool)));
        const Run make = run("bash", {kSource + "/scripts/make_spoken_digits.sh", kData});
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));
    }

    void heldOutVoicesAreRecognised()
    {
        QTemporaryDir dir;
        const Run r =
            run(FLOWBENCH_CLI, {"run", kSource + "/resources/examples/spoken_digits.json",
                                "--device", "cpu", "--set", "train_data.path=" + kData, "--set",
                                "test_data.path=" + kData, "--out", dir.filePath("run")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err.right(3000)));
        const QJsonObject summary = lastLine(r.out);
        const double accuracy = summary["test_accuracy"].toDouble();
        qInfo("held-out voices: %.2f%% of their digits recognised", 100 * accuracy);
        QVERIFY2(accuracy >= 0.95, qPrintable(QString::number(accuracy)));
        // 14 of the 72 voices are held out: 420 recordings.
        const QJsonObject eval = QJsonDocument::fromJson([&] {
                                     QFile f(dir.filePath("run/evaluation.json"));
                                     f.open(QIODevice::ReadOnly);
                                     return f.readAll();
                                 }())
                                     .object()["evaluations"]
                                     .toArray()[0]
                                     .toObject();
        QCOMPARE(eval["samples"].toInt(), 420);

        // What mattered (occlusion saliency): the frames where the word is spoken, not the
        // silence around it. Per frame, the saliency summed over the mel bands must be far larger
        // where the waveform is loud than where it is silent.
        QStringList some;
        for (const char *name :
             {"0_en-us-f2_1", "3_en-gb-m4_2", "5_en-029-m1_3", "7_en-gb-x-rp-f4_1",
              "8_en-gb-scotland-m6_2", "9_en-gb-x-gbclan-f1_3"})
            some << kData + "/" + name + ".wav";
        const Run inf =
            run(FLOWBENCH_CLI,
                QStringList{"infer", dir.filePath("run"), "--inputs", "--saliency"} + some);
        QVERIFY2(inf.exitCode == 0, qPrintable(inf.err.right(2000)));
        for (const QString &text : inf.out.trimmed().split('\n')) {
            const QJsonObject line = QJsonDocument::fromJson(text.toUtf8()).object();
            auto floats = [&](const char *key) {
                const QByteArray b = QByteArray::fromBase64(line[key].toString().toLatin1());
                QVector<float> v(b.size() / 4);
                std::memcpy(v.data(), b.constData(), size_t(b.size()));
                return v;
            };
            const QVector<float> saliency = floats("saliency"), wave = floats("waveform");
            QCOMPARE(saliency.size(), 40 * 101);
            QVector<double> loud(101);
            for (int t = 0; t < 101; ++t)
                for (int k = t * 160 - 200; k < t * 160 + 200; ++k)
                    if (k >= 0 && k < wave.size()) loud[t] += std::abs(wave[k]);
            const double peak = *std::max_element(loud.begin(), loud.end());
            double speech = 0, silence = 0;
            int nSpeech = 0, nSilence = 0;
            for (int t = 0; t < 101; ++t) {
                double column = 0;
                for (int m = 0; m < 40; ++m)
                    column += std::abs(saliency[m * 101 + t]);
                if (loud[t] > 0.05 * peak) speech += column, ++nSpeech;
                if (loud[t] < 0.005 * peak) silence += column, ++nSilence;
            }
            QVERIFY(nSpeech > 10 && nSilence > 10);
            const double ratio = (speech / nSpeech) / std::max(silence / nSilence, 1e-9);
            qInfo("%s: saliency per speech frame %.1fx that per silent frame",
                  qPrintable(QFileInfo(line["input"].toString()).fileName()), ratio);
            QVERIFY2(ratio > 5, qPrintable(QString::number(ratio)));
        }
    }

    // One epoch evaluated on every recording, then `infer` on every recording: the same
    // confusion matrix.
    void inferReproducesTheEvaluation()
    {
        QTemporaryDir dir;
        const Run r =
            run(FLOWBENCH_CLI,
                {"run", kSource + "/resources/examples/spoken_digits.json", "--device", "cpu",
                 "--set", "train_data.path=" + kData, "--set", "test_data.path=" + kData, "--set",
                 "test_data.subset=all", "--set", "train.epochs=1", "--out", dir.filePath("run")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err.right(3000)));
        QFile f(dir.filePath("run/evaluation.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray rows = QJsonDocument::fromJson(f.readAll())
                                    .object()["evaluations"]
                                    .toArray()[0]
                                    .toObject()["confusion"]
                                    .toArray();
        QStringList files = QDir(kData).entryList({"*.wav"}, QDir::Files, QDir::Name);
        for (QString &name : files)
            name = kData + "/" + name;
        QCOMPARE(files.size(), 2160);
        const Run inf =
            run(FLOWBENCH_CLI, QStringList{"infer", dir.filePath("run"), "--top", "1"} + files);
        QVERIFY2(inf.exitCode == 0, qPrintable(inf.err.right(2000)));
        int inferred[10][10] = {};
        const QStringList lines = inf.out.trimmed().split('\n');
        QCOMPARE(lines.size(), files.size());
        for (int i = 0; i < lines.size(); ++i) {
            const QJsonObject line = QJsonDocument::fromJson(lines[i].toUtf8()).object();
            const int truth = QFileInfo(files[i]).fileName().left(1).toInt();
            ++inferred[truth][line["top"].toArray()[0].toObject()["index"].toInt()];
        }
        int wrong = 0;
        for (int t = 0; t < 10; ++t)
            for (int p = 0; p < 10; ++p) {
                QVERIFY2(inferred[t][p] == rows[t].toArray()[p].toInt(),
                         qPrintable(QString("true %1 predicted %2: infer %3, evaluation %4")
                                        .arg(t)
                                        .arg(p)
                                        .arg(inferred[t][p])
                                        .arg(rows[t].toArray()[p].toInt())));
                wrong += t != p ? inferred[t][p] : 0;
            }
        qInfo("after one epoch: %d of 2160 recordings misrecognised, the same through infer",
              wrong);
    }
};

QTEST_GUILESS_MAIN(TestSpokenDigits)
#include "test_spoken_digits.moc"
