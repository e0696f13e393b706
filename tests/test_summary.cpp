// The model summary (core/exec/summary.h): parameter counts equal PyTorch's for the reference
// models, FLOPs equal a count by hand, shapes come from the sources' parameters and headers with
// no data loaded, errors name the node, every example summarizes, and a measurement times real
// training steps.

#include "core/exec/summary.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/settings.h"
#include "core/graph/validate.h"
#include "core/exec/node_type.h"

#include <QtTest>

#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>

#include <cstdint>
#include <fstream>

using namespace fb;
using namespace fb::exec;

namespace {

const QString kExamples = QString(FLOWBENCH_SOURCE_DIR) + "/resources/examples/";

graph::PipelineDocument load(const QString &path)
{
    auto doc = graph::loadPipeline(path.toStdString());
    if (!doc.ok()) qFatal("%s", doc.error().str().c_str());
    return std::move(doc).value();
}

graph::PipelineDocument example(const char *name)
{
    return load(kExamples + name);
}

void set(graph::PipelineDocument &doc, const std::string &setting)
{
    const Status s = graph::applySetting(doc, setting, nodeTypes());
    if (!s.ok()) qFatal("%s", s.error().str().c_str());
}

const SummaryRow &row(const ModelSummary &s, const std::string &id)
{
    for (const SummaryRow &r : s.rows)
        if (r.id == id) return r;
    qFatal("no row %s", id.c_str());
}

// The CNN example with its training source replaced by one of another type and parameters
// (validated).
graph::PipelineDocument withSource(const std::string &type, const nlohmann::json &params)
{
    QFile f(kExamples + "fashion_mnist_cnn.json");
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read the CNN example");
    nlohmann::json j = nlohmann::json::parse(f.readAll().toStdString());
    for (auto &n : j["nodes"])
        if (n["id"] == "train_data") {
            n["type"] = type;
            n["params"] = params;
        }
    auto doc = graph::parsePipeline(j.dump(), "test");
    if (!doc.ok()) qFatal("%s", doc.error().str().c_str());
    const std::vector<Error> problems = graph::validate(doc.value(), nodeTypes());
    if (!problems.empty()) qFatal("%s", problems.front().str().c_str());
    return std::move(doc).value();
}

// An IDX file of uint8 images [n, h, w] (zeros), as MNIST's.
void writeIdxImages(const QString &path, uint32_t n, uint32_t h, uint32_t w)
{
    std::ofstream f(path.toStdString(), std::ios::binary);
    const unsigned char head[4] = {0, 0, 0x08, 3};
    f.write(reinterpret_cast<const char *>(head), 4);
    for (uint32_t d : {n, h, w}) {
        const unsigned char be[4] = {uint8_t(d >> 24), uint8_t(d >> 16), uint8_t(d >> 8),
                                     uint8_t(d)};
        f.write(reinterpret_cast<const char *>(be), 4);
    }
    f << std::string(size_t(n) * h * w, '\0');
}

// The spoken-digits example with `node` ({id, type, params}) on the wire from `after` to
// `before`, its log-mel node's to_db as given.
graph::PipelineDocument spokenDigitsWith(nlohmann::json node, const std::string &after,
                                         const std::string &before, bool toDb = true)
{
    QFile f(kExamples + "spoken_digits.json");
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read the spoken-digits example");
    nlohmann::json j = nlohmann::json::parse(f.readAll().toStdString());
    for (auto &n : j["nodes"])
        if (n["id"] == "logmel") n["params"]["to_db"] = toDb;
    const std::string id = node["id"];
    node["position"] = {0, 0};
    j["nodes"].push_back(node);
    for (auto &e : j["edges"])
        if (e["from"] == after + ".samples" && e["to"] == before + ".samples")
            e["to"] = id + ".samples";
    j["edges"].push_back({{"from", id + ".samples"}, {"to", before + ".samples"}});
    auto doc = graph::parsePipeline(j.dump(), "test");
    if (!doc.ok()) qFatal("%s", doc.error().str().c_str());
    const std::vector<Error> problems = graph::validate(doc.value(), nodeTypes());
    if (!problems.empty()) qFatal("%s", problems.front().str().c_str());
    return std::move(doc).value();
}

} // namespace

class TestSummary : public QObject {
    Q_OBJECT

private slots:
    // PyTorch's sum(p.numel() for p in model.parameters()) for the reference models of
    // shared/bench/REFERENCE.md: MLP 784-256-128-10 and the CNN (two 3x3 convolutions, 32 and
    // 64 channels, then 3136-128-10).
    void parameterCountsArePyTorchs()
    {
        auto cnn = summarizePipeline(example("fashion_mnist_cnn.json"));
        QVERIFY2(cnn.ok(), cnn.ok() ? "" : cnn.error().str().c_str());
        QCOMPARE(cnn->parameters, int64_t(421642));
        QCOMPARE(row(*cnn, "conv1").parameters, int64_t(32 * 1 * 9 + 32));
        QCOMPARE(row(*cnn, "conv2").parameters, int64_t(64 * 32 * 9 + 64));
        QCOMPARE(row(*cnn, "fc1").parameters, int64_t(3136 * 128 + 128));
        QCOMPARE(row(*cnn, "fc2").parameters, int64_t(128 * 10 + 10));
        QCOMPARE(cnn->buffers, int64_t(0));

        auto mlp = summarizePipeline(example("fashion_mnist_mlp.json"));
        QVERIFY(mlp.ok());
        QCOMPARE(mlp->parameters, int64_t(784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10));

        // Batch norm: weight and bias are trained, the running statistics are saved buffers.
        auto gap = summarizePipeline(example("fashion_mnist_cnn_gap.json"));
        QVERIFY(gap.ok());
        QCOMPARE(gap->parameters, int64_t(23786));
        QCOMPARE(row(*gap, "bn1").parameters, int64_t(2 * 32));
        QCOMPARE(row(*gap, "bn1").buffers, int64_t(2 * 32));
        QCOMPARE(gap->buffers, int64_t(2 * (32 + 64 + 64)));
    }

    // The CNN counted by hand, per sample (a multiply-add is 2 FLOPs; docs/summary.md):
    //   conv1  output 32x28x28 = 25,088; MACs 25,088 x (1 x 3 x 3) = 225,792
    //          forward 2 x 225,792 + 25,088 (bias) = 476,672
    //          backward: no input gradient (the data), weights 2 x 225,792 + bias 25,088
    //   relu1  25,088 each way
    //   pool1  output 32x14x14 = 6,272; forward 6,272 x 4 (2x2 windows); backward 6,272
    //   conv2  output 64x14x14 = 12,544; MACs 12,544 x (32 x 3 x 3) = 3,612,672
    //          forward 7,225,344 + 12,544 = 7,237,888; backward 7,225,344 (input)
    //          + 7,237,888 (weights and bias) = 14,463,232
    //   relu2  12,544 each way; pool2 output 3,136: forward 12,544, backward 3,136
    //   flatten 0
    //   fc1    MACs 3,136 x 128 = 401,408: forward 802,816 + 128 = 802,944;
    //          backward 802,816 + 802,944 = 1,605,760
    //   relu3  128 each way
    //   fc2    MACs 1,280: forward 2,560 + 10 = 2,570; backward 2,560 + 2,570 = 5,130
    // Totals per sample: forward 8,595,466, backward 16,597,962; the example's batch is 128.
    void flopsMatchACountByHand()
    {
        auto s = summarizePipeline(example("fashion_mnist_cnn.json"));
        QVERIFY(s.ok());
        QCOMPARE(s->batch, int64_t(128));
        const double b = 128;
        QCOMPARE(row(*s, "conv1").forwardFlops, b * 476672);
        QCOMPARE(row(*s, "conv1").backwardFlops, b * 476672);
        QCOMPARE(row(*s, "relu1").forwardFlops, b * 25088);
        QCOMPARE(row(*s, "pool1").forwardFlops, b * 25088);
        QCOMPARE(row(*s, "pool1").backwardFlops, b * 6272);
        QCOMPARE(row(*s, "conv2").forwardFlops, b * 7237888);
        QCOMPARE(row(*s, "conv2").backwardFlops, b * 14463232);
        QCOMPARE(row(*s, "flatten").forwardFlops, 0.0);
        QCOMPARE(row(*s, "fc1").forwardFlops, b * 802944);
        QCOMPARE(row(*s, "fc1").backwardFlops, b * 1605760);
        QCOMPARE(row(*s, "fc2").backwardFlops, b * 5130);
        QCOMPARE(s->forwardFlops, b * 8595466);
        QCOMPARE(s->backwardFlops, b * 16597962);
        QCOMPARE(s->dominantLayer, std::string("conv2"));
        QCOMPARE(s->dominantShare, (7237888.0 + 14463232.0) / (8595466.0 + 16597962.0));

        // Activations: each output for the batch in float32 (the flatten's too: a copy on a
        // channels-last device).
        QCOMPARE(row(*s, "conv1").activationBytes, b * 32 * 28 * 28 * 4);
        QCOMPARE(row(*s, "flatten").activationBytes, b * 3136 * 4);
        QCOMPARE(s->inputBytes, b * 28 * 28 * 4);
        // Training memory: weights x 3 (value, gradient, SGD's momentum), every output and its
        // gradient (the flatten's gradient only: its output may be a view), and the batch.
        QCOMPARE(s->trainingBytes, 421642.0 * 4 * 3 + 2 * s->activationBytes -
                                       row(*s, "flatten").activationBytes + s->inputBytes);

        // Another batch size scales every figure; the rows follow the graph as drawn, and the
        // compiler's ReLU-after-pool rewrite is a note.
        auto big = summarizePipeline(example("fashion_mnist_cnn.json"), 512);
        QVERIFY(big.ok());
        QCOMPARE(big->forwardFlops, 512.0 * 8595466);
        QCOMPARE(big->rows[1].id, std::string("relu1"));
        QCOMPARE(big->notes.size(), size_t(2));
        QVERIFY(big->notes[0].find("relu1 runs after pool1") != std::string::npos);
    }

    // Shapes with no data: an image folder that does not exist is sized by its parameters, the
    // audio example's features by its transforms, an IDX source by its file's header alone.
    void shapesNeedNoData()
    {
        auto audio = summarizePipeline(example("spoken_digits.json"));
        QVERIFY2(audio.ok(), audio.ok() ? "" : audio.error().str().c_str());
        QCOMPARE(audio->input, Shape({1, 40, 101})); // 40 mel bands x 101 frames of 1 s

        // The CNN on RGB pictures of 40 x 48 from a folder that is not there.
        auto folder = withSource("image_folder", {{"path", "/nonexistent/pictures"},
                                                  {"color", "rgb"},
                                                  {"height", 40},
                                                  {"width", 48}});
        auto rgb = summarizePipeline(folder);
        QVERIFY2(rgb.ok(), rgb.ok() ? "" : rgb.error().str().c_str());
        QCOMPARE(rgb->input, Shape({3, 40, 48}));
        QCOMPARE(row(*rgb, "conv1").parameters, int64_t(32 * 3 * 9 + 32));
        QCOMPARE(row(*rgb, "fc1").parameters, int64_t(64 * 10 * 12 * 128 + 128));

        // IDX: 20 x 24 pictures, read from the header.
        QTemporaryDir dir;
        const QString images = dir.filePath("images.idx");
        writeIdxImages(images, 3, 20, 24);
        auto idx = withSource("idx_dataset",
                              {{"images", images.toStdString()},
                               {"labels", dir.filePath("labels.idx").toStdString()}});
        auto fromHeader = summarizePipeline(idx);
        QVERIFY2(fromHeader.ok(), fromHeader.ok() ? "" : fromHeader.error().str().c_str());
        QCOMPARE(fromHeader->input, Shape({1, 20, 24}));

        // A header that is not IDX is named, with the source node.
        QFile bad(images);
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("not an IDX file at all");
        bad.close();
        auto refused = summarizePipeline(idx);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().node, std::string("train_data"));
        QVERIFY(refused.error().message.find("not an IDX file") != std::string::npos);
    }

    // vtlp takes its rows' frequencies from the spectrogram before it in the chain: after the
    // log-mel it keeps the features' shape; on waveforms, before any spectrogram, it is refused
    // naming the node and what it needs.
    void vtlpNeedsASpectrogramBeforeIt()
    {
        const nlohmann::json warp = {
            {"id", "warp"}, {"type", "vtlp"}, {"params", {{"max_change", 0.15}}}};
        auto warped = summarizePipeline(spokenDigitsWith(warp, "logmel", "normalize"));
        QVERIFY2(warped.ok(), warped.ok() ? "" : warped.error().str().c_str());
        QCOMPARE(warped->input, Shape({1, 40, 101}));

        auto refused = summarizePipeline(spokenDigitsWith(warp, "beside", "noise"));
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().node, std::string("warp"));
        QVERIFY2(refused.error().message.find("after a stft or mel_spectrogram") !=
                     std::string::npos,
                 refused.error().message.c_str());
    }

    // pcen reads energies from the spectrogram before it in the chain: after the log-mel (in
    // dB) it is refused saying to set to_db false, after mel energies it keeps their shape, and
    // on waveforms it is refused naming what it needs.
    void pcenNeedsEnergiesFromASpectrogram()
    {
        const nlohmann::json agc = {
            {"id", "agc"}, {"type", "pcen"}, {"params", nlohmann::json::object()}};
        auto normalized = summarizePipeline(spokenDigitsWith(agc, "logmel", "normalize", false));
        QVERIFY2(normalized.ok(), normalized.ok() ? "" : normalized.error().str().c_str());
        QCOMPARE(normalized->input, Shape({1, 40, 101}));

        auto inDb = summarizePipeline(spokenDigitsWith(agc, "logmel", "normalize"));
        QVERIFY(!inDb.ok());
        QCOMPARE(inDb.error().node, std::string("agc"));
        QVERIFY2(inDb.error().message.find("to_db false") != std::string::npos,
                 inDb.error().message.c_str());

        auto waveforms = summarizePipeline(spokenDigitsWith(agc, "beside", "noise", false));
        QVERIFY(!waveforms.ok());
        QCOMPARE(waveforms.error().node, std::string("agc"));
        QVERIFY2(waveforms.error().message.find("after a stft or mel_spectrogram") !=
                     std::string::npos,
                 waveforms.error().message.c_str());
    }

    // A layer whose input does not fit is named, with both shapes.
    void mismatchNamesTheLayer()
    {
        graph::PipelineDocument doc = example("fashion_mnist_cnn.json");
        set(doc, "conv2.kernel_size=15");
        set(doc, "conv2.padding=0");
        auto s = summarizePipeline(doc);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().node, std::string("conv2"));
        QVERIFY2(s.error().message.find("[32, 14, 14]") != std::string::npos,
                 s.error().message.c_str());
    }

    // Every shipped example summarizes, and its totals are the sums of its rows.
    void everyExampleSummarizes()
    {
        int count = 0;
        for (QDirIterator it(kExamples, {"*.json"}); it.hasNext();) {
            const QString path = it.next();
            auto s = summarizePipeline(load(path));
            QVERIFY2(s.ok(), qPrintable(path + ": " +
                                        QString::fromStdString(s.ok() ? "" : s.error().str())));
            double fwd = 0, params = 0;
            for (const SummaryRow &r : s->rows) {
                fwd += r.forwardFlops;
                params += double(r.parameters);
            }
            QCOMPARE(fwd, s->forwardFlops);
            QCOMPARE(params, double(s->parameters));
            QVERIFY(s->forwardFlops > 0 && s->backwardFlops > s->forwardFlops);
            const nlohmann::json j = summaryToJson(*s);
            QCOMPARE(j["format"].get<std::string>(), std::string("flowbench.summary"));
            QCOMPARE(j["layers"].size(), s->rows.size());
            QCOMPARE(j["totals"]["parameters"].get<int64_t>(), s->parameters);
            QVERIFY(summaryToText(*s).find("dominant layer") != std::string::npos);
            ++count;
        }
        QVERIFY(count >= 5);
    }

    // A measurement runs real training steps: a time per step, GFLOP/s from the estimate, and on
    // the CPU a time for every layer.
    void measurementTimesTrainingSteps()
    {
        graph::PipelineDocument doc = example("fashion_mnist_mlp.json");
        auto s = summarizePipeline(doc, 32);
        QVERIFY(s.ok());
        const Measurement m = measureTraining(doc, *s, "cpu", 1, 3);
        QVERIFY2(m.error.empty(), m.error.c_str());
        QCOMPARE(m.steps, int64_t(3));
        QCOMPARE(m.threads, 1);
        QVERIFY(m.stepSeconds > 0);
        QCOMPARE(m.gflops, (s->forwardFlops + s->backwardFlops) / m.stepSeconds / 1e9);
        QCOMPARE(m.samplesPerSecond, 32 / m.stepSeconds);
        // Every layer is timed, in the order it runs, and the slowest is the one that took the
        // longest. Which layer that is depends on the machine's load (under ctest -j2 in a fresh
        // Debian a ReLU once came out slowest), so it is not asserted.
        QCOMPARE(m.layerSeconds.size(), s->rows.size());
        double sum = 0, longest = 0;
        std::string slowest;
        for (size_t i = 0; i < s->rows.size(); ++i) {
            QCOMPARE(m.layerSeconds[i].first, s->rows[i].id);
            QVERIFY(m.layerSeconds[i].second >= 0);
            sum += m.layerSeconds[i].second;
            if (m.layerSeconds[i].second > longest) {
                longest = m.layerSeconds[i].second;
                slowest = m.layerSeconds[i].first;
            }
        }
        QVERIFY(sum > 0);
        QCOMPARE(m.slowestLayer, slowest);
        QCOMPARE(m.slowestShare, longest / sum);
        QVERIFY(m.slowestShare > 0 && m.slowestShare <= 1);

        const Measurement none = measureTraining(doc, *s, "cuda:7", 1, 3);
        QVERIFY(!none.error.empty()); // no such GPU here (or anywhere we test)
    }
};

QTEST_GUILESS_MAIN(TestSummary)
#include "test_summary.moc"
