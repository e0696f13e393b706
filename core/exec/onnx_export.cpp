#include "core/exec/onnx_export.h"

#include "core/data/dataset.h"
#include "core/exec/inference.h"
#include "core/exec/job.h"
#include "core/exec/node_type.h"
#include "core/graph/pipeline_file.h"
#include "core/io/onnx_model.h"

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace fb::exec {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kCheckBatch = 256;

// The data the check runs on: the evaluate node's chain of the saved pipeline (the run's test
// set), or else the training data's. Decoded as the data flow does (an image's bytes over 255).
struct CheckData {
    std::string node;
    int64_t count = 0;
    std::vector<float> decoded;
};

Result<CheckData> checkData(const std::string &pipelineText, const Shape &input, int64_t limit)
{
    auto loaded = loadEvaluatedData(pipelineText, true);
    if (!loaded.ok()) return loaded.error();
    const DataSpec &spec = loaded->spec;
    const data::ImageDataset &ds = loaded->data;
    if (Shape{ds.channels, ds.height, ds.width} != input)
        return nodeError(spec.sourceNode, "its samples " +
                                              Shape{ds.channels, ds.height, ds.width}.str() +
                                              " are not the model's input " + input.str());
    CheckData d;
    d.node = spec.sourceNode;
    d.count = limit > 0 ? std::min(limit, ds.count) : ds.count;
    d.decoded.resize(size_t(d.count * ds.sampleSize()));
    for (int64_t i = 0; i < d.count; ++i)
        if (Status st = data::readSample(ds, i, d.decoded.data() + i * ds.sampleSize()); !st.ok())
            return nodeError(spec.sourceNode, st.error().message);
    return d;
}

// Runs the file with OpenCV's dnn module and compares its logits with Flowbench's.
Status runtimeCheck(const std::string &file, Predictor &predictor, const CheckData &data,
                    ExportReport &r)
{
    const Shape &in = predictor.stageShapes().front();
    const int64_t classes = int64_t(predictor.classNames().size());
    cv::dnn::Net net;
    try {
        net = cv::dnn::readNetFromONNX(file);
        net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    } catch (const cv::Exception &e) {
        return makeError("OpenCV's dnn module cannot read the exported model: " + e.msg);
    }
    r.runtime = "OpenCV " + std::string(CV_VERSION) + " dnn";
    for (int64_t first = 0; first < data.count; first += kCheckBatch) {
        const int64_t n = std::min(kCheckBatch, data.count - first);
        std::vector<float> x(data.decoded.begin() + first * in.numel(),
                             data.decoded.begin() + (first + n) * in.numel());
        const std::vector<float> ours = predictor.scores(x, n);
        std::vector<int> dims{int(n)};
        for (int64_t v : in.dims())
            dims.push_back(int(v));
        cv::Mat blob(int(dims.size()), dims.data(), CV_32F, x.data());
        cv::Mat theirs;
        try {
            net.setInput(blob, "input");
            theirs = net.forward("logits");
        } catch (const cv::Exception &e) {
            return makeError("OpenCV's dnn module cannot run the exported model: " + e.msg);
        }
        if (theirs.total() != size_t(n * classes))
            return makeError("OpenCV's dnn module gives " + std::to_string(theirs.total()) +
                             " logits for " + std::to_string(n) + " samples of " +
                             std::to_string(classes) + " classes");
        const float *t = theirs.ptr<float>();
        for (int64_t i = 0; i < n; ++i) {
            const float *a = ours.data() + i * classes, *b = t + i * classes;
            for (int64_t c = 0; c < classes; ++c)
                r.maxLogitDifference =
                    std::max(r.maxLogitDifference, double(std::fabs(a[c] - b[c])));
            if (std::max_element(a, a + classes) - a == std::max_element(b, b + classes) - b)
                ++r.sameTop1;
        }
        r.samples += n;
    }
    r.checked = true;
    r.checkedOn = data.node + " (" + std::to_string(data.count) + " samples)";
    return {};
}

} // namespace

Result<ExportReport> exportOnnx(const std::string &model, const std::string &output,
                                const ExportOptions &options)
{
    auto onnx = io::OnnxModel::create("flowbench");
    if (!onnx.ok()) return onnx.error();
    io::OnnxModel &g = *onnx.value();
    auto predictor = Predictor::open(model, "cpu");
    if (!predictor.ok()) return predictor.error();
    Predictor &p = *predictor.value();

    ExportReport r;
    r.modelFile = p.modelFile();
    r.output = output;
    r.input = p.stageShapes().front();
    r.classNames = p.classNames();
    r.onnxVersion = io::onnxLibraryVersion();
    g.input("input", r.input.prepend(-1).dims(), // -1: the symbolic batch
            p.audio() ? "Recordings, float32 [N, 1, 1, samples]: mono at the sample rate the "
                        "'preprocessing' metadata says, trimmed and padded or cropped to its "
                        "length; the features are computed inside the model"
                      : "Pictures, float32 [N, C, H, W]: RGB (or grey) planes, pixel values "
                        "scaled to [0, 1], decoded and resized as the 'preprocessing' metadata "
                        "says; the rest of the preprocessing is inside the model");
    std::string value = "input";
    for (size_t i = 0; i < p.stages().size(); ++i) {
        const data::Stage &st = p.stages()[i];
        const std::string out = g.name(st.node);
        Status s = st.transform->exportTo(g, value, out, p.stageShapes()[i]);
        if (!s.ok())
            return nodeError(st.node, "cannot be exported to ONNX: " + s.error().message);
        value = out;
    }
    auto logits = p.model().exportTo(g, value);
    if (!logits.ok()) {
        Error e = logits.error();
        e.message = "cannot be exported to ONNX: " + e.message;
        return e;
    }
    const int64_t classes = int64_t(r.classNames.size());
    g.node("Identity", {logits.value()}, {"logits"});
    g.node("Softmax", {"logits"}, {"probabilities"}, {ExportAttribute::integer("axis", 1)});
    g.output("logits", {-1, classes}, "The model's scores, one per class, [N, classes]");
    g.output("probabilities", {-1, classes}, "Softmax of the logits, [N, classes]");
    g.metadata("class_names", json(r.classNames).dump());
    g.metadata("preprocessing", p.preprocessing().dump());
    g.metadata("flowbench_model", fs::path(r.modelFile).filename().string());
    g.documentation("Exported by Flowbench from " + r.modelFile +
                    ". Input 'input' (its doc string says what it holds); outputs 'logits' and "
                    "'probabilities' [N, classes]; class names in the metadata (class_names).");
    r.nodes = g.nodeCount();
    FB_TRY(g.check());

    // Written beside the output, checked there, and only then put in place.
    const std::string unchecked = output + ".unchecked";
    FB_TRY(g.save(unchecked));
    auto discard = [&] {
        std::error_code ec;
        fs::remove(unchecked, ec);
    };
    if (options.check) {
        auto data = checkData(p.savedPipeline(), r.input, options.checkLimit);
        if (!data.ok()) {
            discard();
            Error e = data.error();
            e.message = "cannot check the export on the run's data (export with --no-check to "
                        "skip the check): " + e.message;
            return e;
        }
        Status s = runtimeCheck(unchecked, p, data.value(), r);
        if (s.ok() && (r.sameTop1 != r.samples || r.maxLogitDifference >= r.kTolerance)) {
            char figures[160];
            std::snprintf(figures, sizeof figures,
                          "%lld of %lld samples have the same top class, largest logit "
                          "difference %.3g (required: all, and below %.0e)",
                          (long long)r.sameTop1, (long long)r.samples, r.maxLogitDifference,
                          r.kTolerance);
            s = makeError("the exported model does not give Flowbench's results in " +
                          r.runtime + ": " + figures + "; nothing was written");
        }
        if (!s.ok()) {
            discard();
            return s.error();
        }
    }
    std::error_code ec;
    fs::rename(unchecked, output, ec);
    if (ec) {
        discard();
        return fileError(output, "could not be written: " + ec.message());
    }
    return r;
}

} // namespace fb::exec
