// ONNX export (core/exec/onnx_export.h, `flowbench-cli export`): models trained by the real CLI
// are exported with their preprocessing, and the export's own check (the ONNX checker, then
// OpenCV's dnn module on the run's test set against Flowbench's scores) passes for every layer
// type and every preprocessing stage that has an ONNX form; what cannot be exported is refused
// naming the node, and no file is left behind.

#include "core/exec/onnx_export.h"
#include "core/io/onnx_model.h"
#include "core/nn/layers.h"
#include "core/nn/model.h"
#include "image_folder_fixture.h"
#include "wav_fixture.h"

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>

using namespace fb;

namespace {

const QString kExamples = QString(FLOWBENCH_SOURCE_DIR) + "/resources/examples/";

// Trains a pipeline with the real CLI; fails the test when the run fails.
void train(const QString &pipeline, const QString &out, const QStringList &sets)
{
    QStringList args{"run", pipeline, "--threads", "2", "--out", out};
    for (const QString &s : sets)
        args << "--set" << s;
    QProcess p;
    p.start(FLOWBENCH_CLI, args);
    QVERIFY(p.waitForFinished(300000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().right(2000).constData());
}

// A w x h RGB picture (P6) of one colour with a little texture.
void writePpm(const QString &path, int w, int h, int r, int g, int b, int seed)
{
    QDir().mkpath(QFileInfo(path).path());
    QByteArray bytes = QByteArray("P6\n") + QByteArray::number(w) + " " + QByteArray::number(h) +
                       "\n255\n";
    for (int i = 0; i < w * h; ++i) {
        const int t = (i * 7 + seed * 13) % 31;
        bytes.append(char(std::clamp(r + t, 0, 255)));
        bytes.append(char(std::clamp(g - t, 0, 255)));
        bytes.append(char(std::clamp(b + t / 2, 0, 255)));
    }
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QJsonObject node(const char *id, const char *type, const QJsonObject &params = {})
{
    return QJsonObject{{"id", id}, {"type", type}, {"params", params}};
}

QJsonObject edge(const char *from, const char *to)
{
    return QJsonObject{{"from", from}, {"to", to}};
}

bool exists(const QString &path)
{
    return QFileInfo::exists(path);
}

} // namespace

class TestOnnxExport : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        if (!io::onnxAvailable())
            QSKIP("this build has no ONNX library (libonnx-dev, libprotobuf-dev)");
        // FLOWBENCH_KEEP_TEST_FILES=1 keeps the runs and models to look at.
        m_dir.setAutoRemove(qEnvironmentVariableIsEmpty("FLOWBENCH_KEEP_TEST_FILES"));
        qInfo("files in %s", qPrintable(m_dir.path()));
    }

    // The example that uses the most layer types (conv, 2-D batch norm, SiLU, max pool, global
    // average pool, linear, 1-D batch norm): trained briefly, exported, checked on its test set.
    void gapExampleExportsAndMatches()
    {
        const QString run = m_dir.filePath("gap");
        train(kExamples + "fashion_mnist_cnn_gap.json", run,
              {"train.epochs=1", "train_data.limit=2000", "test_data.limit=500"});
        const QString out = m_dir.filePath("gap.onnx");
        auto r = exec::exportOnnx(run.toStdString(), out.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        QVERIFY(r->checked);
        QCOMPARE(r->samples, int64_t(500));
        QCOMPARE(r->sameTop1, r->samples);
        QVERIFY2(r->maxLogitDifference < 1e-4, qPrintable(QString::number(r->maxLogitDifference)));
        QCOMPARE(r->input, Shape({1, 28, 28}));
        QCOMPARE(r->classNames.size(), size_t(10));
        QVERIFY(r->runtime.find("OpenCV") != std::string::npos);
        QVERIFY(exists(out));
        QVERIFY(!exists(out + ".unchecked"));
        // The class names and the preprocessing travel in the model's metadata (protobuf keeps
        // strings as they are).
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        for (const char *s : {"class_names", "Ankle boot", "preprocessing", "flowbench",
                              "GlobalAveragePool", "BatchNormalization", "Sigmoid"})
            QVERIFY2(bytes.contains(s), s);
    }

    // Every other layer type and every image preprocessing stage with an ONNX form, on RGB
    // pictures: centre crop, per-channel normalization, greyscale, normalization; a convolution
    // without bias, leaky ReLU, padded average pooling, a residual add, GELU (through Erf), max
    // pooling, flatten, tanh, dropout, sigmoid, a linear layer without bias.
    void everyLayerAndStageExportsAndMatches()
    {
        for (int i = 0; i < 24; ++i) {
            writePpm(m_dir.filePath(QString("pics/warm/%1.ppm").arg(i)), 16, 14, 200, 90, 40, i);
            writePpm(m_dir.filePath(QString("pics/cold/%1.ppm").arg(i)), 16, 14, 40, 110, 210, i);
        }
        const QJsonObject source{{"path", m_dir.filePath("pics")}, {"subset", "all"},
                                 {"color", "rgb"}, {"height", 14}, {"width", 16}};
        QJsonArray nodes{
            node("train_data", "image_folder", source),
            node("test_data", "image_folder", source),
            node("crop", "center_crop", {{"height", 12}, {"width", 12}}),
            node("channels", "normalize_channels"),
            node("grey", "grayscale"),
            node("norm", "normalize", {{"mean", 0.1}, {"std", 0.9}}),
            node("crop_t", "center_crop", {{"height", 12}, {"width", 12}}),
            node("channels_t", "normalize_channels"),
            node("grey_t", "grayscale"),
            node("norm_t", "normalize", {{"mean", 0.1}, {"std", 0.9}}),
            node("input", "input"),
            node("conv1", "conv2d", {{"out_channels", 6}, {"kernel_size", 3}, {"padding", 1}}),
            node("leaky", "leaky_relu", {{"negative_slope", 0.1}}),
            node("avg", "avgpool2d", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}),
            node("conv2", "conv2d",
                 {{"out_channels", 6}, {"kernel_size", 3}, {"padding", 1}, {"bias", false}}),
            node("residual", "add"),
            node("gelu", "gelu"),
            node("max", "maxpool2d", {{"kernel_size", 2}}),
            node("flatten", "flatten"),
            node("fc1", "linear", {{"out_features", 16}}),
            node("tanh", "tanh"),
            node("drop", "dropout", {{"p", 0.2}}),
            node("fc2", "linear", {{"out_features", 8}, {"bias", false}}),
            node("sigmoid", "sigmoid"),
            node("fc3", "linear", {{"out_features", 2}}),
            node("loss", "cross_entropy"),
            node("optimizer", "adam", {{"lr", 0.01}}),
            node("train", "train", {{"epochs", 2}, {"batch_size", 8}}),
            node("evaluate", "evaluate", {{"batch_size", 16}}),
        };
        QJsonArray edges{
            edge("train_data.samples", "crop.samples"), edge("crop.samples", "channels.samples"),
            edge("channels.samples", "grey.samples"), edge("grey.samples", "norm.samples"),
            edge("norm.samples", "train.data"), edge("test_data.samples", "crop_t.samples"),
            edge("crop_t.samples", "channels_t.samples"),
            edge("channels_t.samples", "grey_t.samples"), edge("grey_t.samples", "norm_t.samples"),
            edge("norm_t.samples", "evaluate.data"), edge("input.out", "conv1.in"),
            edge("conv1.out", "leaky.in"), edge("leaky.out", "avg.in"), edge("avg.out", "conv2.in"),
            edge("avg.out", "residual.a"), edge("conv2.out", "residual.b"),
            edge("residual.out", "gelu.in"), edge("gelu.out", "max.in"),
            edge("max.out", "flatten.in"), edge("flatten.out", "fc1.in"), edge("fc1.out", "tanh.in"),
            edge("tanh.out", "drop.in"), edge("drop.out", "fc2.in"), edge("fc2.out", "sigmoid.in"),
            edge("sigmoid.out", "fc3.in"), edge("fc3.out", "train.model"),
            edge("loss.loss", "train.loss"), edge("optimizer.optimizer", "train.optimizer"),
            edge("train.trained", "evaluate.model"),
        };
        const QString pipeline = m_dir.filePath("all.json");
        QFile f(pipeline);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(QJsonObject{{"format", "flowbench.pipeline"},
                                          {"version", 1},
                                          {"nodes", nodes},
                                          {"edges", edges}})
                    .toJson());
        f.close();
        const QString run = m_dir.filePath("all");
        train(pipeline, run, {});

        // Through the CLI, as a person runs it: the figures on the last stdout line.
        const QString out = m_dir.filePath("all.onnx");
        QProcess p;
        p.start(FLOWBENCH_CLI, {"export", run, "-o", out});
        QVERIFY(p.waitForFinished(120000));
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 0, err.constData());
        const QJsonObject j =
            QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last())
                .object();
        QCOMPARE(j["status"].toString(), QString("ok"));
        QCOMPARE(j["opset"].toInt(), 17);
        QCOMPARE(j["input"].toArray(), QJsonArray({3, 14, 16}));
        const QJsonObject check = j["check"].toObject();
        QCOMPARE(check["samples"].toInt(), 48);
        QCOMPARE(check["same_top1"].toInt(), 48);
        QVERIFY(check["max_logit_difference"].toDouble() < 1e-4);
        QVERIFY(err.contains("the same top class for 48 of 48"));
        QFile onnx(out);
        QVERIFY(onnx.open(QIODevice::ReadOnly));
        const QByteArray bytes = onnx.readAll();
        for (const char *op : {"Slice", "Sub", "Div", "Conv", "LeakyRelu", "Pad", "AveragePool", "Add",
                               "Erf", "MaxPool", "Flatten", "Gemm", "Tanh", "Identity", "Softmax"})
            QVERIFY2(bytes.contains(op), op);
    }

    // Recordings: the features (log-mel, power spectrogram in dB, MFCC, PCEN) go into the model
    // as ordinary operators (a DFT as a strided Conv, mel weights and the DCT as 1x1 Convs, Log,
    // PCEN's smoothing as Convs along time), so the whole model, features included, is checked in
    // OpenCV against Flowbench's scores.
    void recordingsExportWithTheirFeatures_data()
    {
        QTest::addColumn<QString>("type"); // the feature nodes' type; empty: the example's own
        QTest::newRow("log-mel") << QString();
        QTest::newRow("mfcc") << QString("mfcc");
        QTest::newRow("stft") << QString("stft");
        QTest::newRow("pcen") << QString("pcen"); // mel energies, then a pcen node
    }
    void recordingsExportWithTheirFeatures()
    {
        QFETCH(QString, type);
        if (!exists(m_dir.filePath("tones")))
            for (int i = 0; i < 8; ++i)
                for (const auto &[label, hz] :
                     {std::pair{"low", 220.0}, std::pair{"high", 1760.0}}) {
                    // Different lengths and loudness: trimming and padding differ per file.
                    std::vector<float> tone(size_t(6000 + 1000 * i));
                    for (size_t t = 0; t < tone.size(); ++t)
                        tone[t] = (0.1f + 0.1f * float(i)) *
                                  float(std::sin(2 * M_PI * hz * (1 + 0.01 * i) * double(t) / 16000));
                    fixture::writeWav(
                        m_dir.filePath(QString("tones/%1/%2.wav").arg(label).arg(i)), tone, 1,
                        16000);
                }
        // The spoken-digits example on the tones: its chain with the feature node's type
        // swapped, two classes, every file in both halves. Its per-recording normalization
        // (feature_norm) goes into the ONNX file too, and OpenCV's dnn must run it.
        QFile f(kExamples + "spoken_digits.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        QJsonArray nodes = doc["nodes"].toArray();
        for (int i = 0; i < nodes.size(); ++i) {
            QJsonObject n = nodes[i].toObject();
            const QString id = n["id"].toString();
            QJsonObject params = n["params"].toObject();
            if (id == "train_data" || id == "test_data") {
                params["path"] = m_dir.filePath("tones");
                params["labels"] = "folder";
                params["subset"] = "all";
            }
            if ((id == "logmel" || id == "logmel_test") && !type.isEmpty()) {
                QJsonObject kept{{"n_fft", 256}, {"hop_length", 128}};
                if (type == "mfcc") kept["n_mfcc"] = 13;
                if (type == "pcen")
                    kept["to_db"] = false;
                else
                    n["type"] = type;
                params = kept;
            }
            if (id == "fc2") params["out_features"] = 2;
            n["params"] = params;
            nodes[i] = n;
        }
        if (type == "pcen") {
            // A pcen node after each mel_spectrogram: what read the mel node reads the pcen node.
            QJsonArray edges = doc["edges"].toArray();
            for (const QString mel : {"logmel", "logmel_test"}) {
                for (int i = 0; i < edges.size(); ++i) {
                    QJsonObject e = edges[i].toObject();
                    if (e["from"].toString() == mel + ".samples") e["from"] = mel + "_pcen.samples";
                    edges[i] = e;
                }
                edges.append(
                    QJsonObject{{"from", mel + ".samples"}, {"to", mel + "_pcen.samples"}});
                nodes.append(QJsonObject{
                    {"id", mel + "_pcen"}, {"type", "pcen"}, {"params", QJsonObject{}}});
            }
            doc["edges"] = edges;
        }
        doc["nodes"] = nodes;
        const QString name = type.isEmpty() ? "logmel" : type;
        const QString pipeline = m_dir.filePath(name + ".json");
        QFile out(pipeline);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(doc).toJson());
        out.close();
        const QString run = m_dir.filePath(name + "_run");
        train(pipeline, run, {"train.epochs=2", "train.batch_size=4", "train.device=cpu"});

        const QString onnx = m_dir.filePath(name + ".onnx");
        auto r = exec::exportOnnx(run.toStdString(), onnx.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        QCOMPARE(r->input, Shape({1, 1, 16000})); // one second at 16 kHz, the waveform
        QVERIFY(r->checked);
        QCOMPARE(r->samples, int64_t(16));
        QCOMPARE(r->sameTop1, r->samples);
        QVERIFY2(r->maxLogitDifference < 1e-4, qPrintable(QString::number(r->maxLogitDifference)));
        QFile file(onnx);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        for (const char *op : {"Pad", "Conv", "MaxPool", "Relu", "Reshape"})
            QVERIFY2(bytes.contains(op), op);
        QVERIFY(bytes.contains(type == "pcen" ? "Pow" : "Log"));
        QVERIFY(bytes.contains("\"kind\":\"audio\""));
    }

    // A layer with no ONNX form is refused by the model's export, naming its node: the export
    // then stops before anything is written (exportOnnx returns that error).
    void layerWithoutOnnxFormIsNamed()
    {
        struct Opaque final : nn::Layer {
            std::string type() const override { return "opaque"; }
            Result<Shape> build(const std::vector<Shape> &in) override { return in[0]; }
            nn::LayerCost cost(const std::vector<Shape> &, const Shape &) const override
            {
                return {};
            }
            Status exportTo(ExportGraph &, const std::vector<std::string> &, const std::string &,
                            const std::vector<Shape> &) const override
            {
                return makeError("has no ONNX form");
            }
            std::unique_ptr<nn::LayerRun> instantiate(Backend &, const std::vector<Shape> &,
                                                      const Shape &) override
            {
                return nullptr;
            }
        };
        nn::Model model;
        model.setInput("input");
        QVERIFY(model.addLayer("fc", nn::makeLinear(4, true), {"input"}).ok());
        QVERIFY(model.addLayer("mystery", std::make_unique<Opaque>(), {"fc"}).ok());
        QVERIFY(model.setOutput("mystery").ok());
        QVERIFY(model.compile(Shape{8}).ok());
        auto g = io::OnnxModel::create("test");
        QVERIFY(g.ok());
        auto out = model.exportTo(*g.value(), "input");
        QVERIFY(!out.ok());
        QCOMPARE(out.error().node, std::string("mystery"));
        QCOMPARE(out.error().message, std::string("has no ONNX form"));
    }

    // Bad input: no model there, an output folder that does not exist; never a partial file.
    void badInputIsNamed()
    {
        auto none = exec::exportOnnx(m_dir.filePath("nothing").toStdString(),
                                     m_dir.filePath("x.onnx").toStdString());
        QVERIFY(!none.ok());
        QVERIFY(none.error().str().find("nothing") != std::string::npos);

        const QString run = m_dir.filePath("gap");
        QVERIFY(exists(run + "/model.safetensors")); // from the first test
        const QString nowhere = m_dir.filePath("no/such/folder/m.onnx");
        auto r = exec::exportOnnx(run.toStdString(), nowhere.toStdString());
        QVERIFY(!r.ok());
        QVERIFY2(r.error().str().find("no/such/folder") != std::string::npos,
                 r.error().str().c_str());

        // --no-check writes the file after the ONNX checker alone.
        QProcess p;
        p.start(FLOWBENCH_CLI, {"export", run, "-o", m_dir.filePath("fast.onnx"), "--no-check"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(p.readAllStandardOutput().contains("\"check\":null"));
        QVERIFY(exists(m_dir.filePath("fast.onnx")));
    }
};

QTEST_GUILESS_MAIN(TestOnnxExport)
#include "test_onnx_export.moc"
