#include "core/exec/inference.h"

#include "core/exec/listen_options.h"
#include "core/exec/node_type.h"

#include "core/backend/backend.h"
#include "core/base/check.h"
#include "core/base/json_nesting.h"
#include "core/data/audio_files.h"
#include "core/data/image_files.h"
#include "core/data/transforms.h"
#include "core/graph/node_types.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/validate.h"
#include "core/io/run_folder.h"
#include "core/io/safetensors.h"
#include "core/nn/loss.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>

namespace fb::exec {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

// Inputs go through the model this many at a time.
constexpr size_t kChunk = 256;

double msSince(Clock::time_point t)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

data::ImageFilesOptions decodeOptions(const json &pre)
{
    data::ImageFilesOptions o;
    o.height = pre.at("height").get<int64_t>();
    o.width = pre.at("width").get<int64_t>();
    o.colour = pre.at("color").get<std::string>() == "rgb";
    o.resize = pre.at("resize").get<std::string>() == "pad"
                   ? data::ImageFilesOptions::Resize::Pad
                   : data::ImageFilesOptions::Resize::Stretch;
    return o;
}

// The saved preprocessing is checked as a pipeline file's nodes are (a model file may be damaged
// or made by hand): the decode settings against the ranges of the source node that made them,
// every transform against its node type's description, before anything is built from them.
// Without this a std of 0 or an unknown transform type ended `infer` in an assertion, and a
// huge saved height built gigabytes of model before the shape check.
Status checkSavedPreprocessing(const json &pre, const std::string &file)
{
    const graph::NodeTypeRegistry &registry = nodeTypes();
    auto damaged = [&](const std::string &why) {
        return fileError(file, "its saved preprocessing is damaged: " + why);
    };
    if (!pre.is_object()) return damaged("not an object");
    const std::string kind = pre.contains("kind") && pre["kind"].is_string()
                                 ? pre["kind"].get<std::string>()
                                 : std::string();
    const char *source = kind == "audio" ? "audio_folder" : "image_folder";
    const graph::NodeTypeSpec *sourceSpec = registry.find(source);
    const std::vector<const char *> keys =
        kind == "audio" ? std::vector<const char *>{"sample_rate", "seconds", "trim_db"}
                        : std::vector<const char *>{"height", "width"};
    for (const char *key : keys) {
        const graph::ParamSpec *ps = sourceSpec ? sourceSpec->param(key) : nullptr;
        if (!pre.contains(key)) return damaged(std::string("'") + key + "' is missing");
        if (ps)
            if (Status s = graph::checkParamValue(*ps, pre[key], "preprocessing"); !s)
                return damaged(s.error().message);
    }
    if (kind == "image")
        for (const char *key : {"color", "resize"})
            if (!pre.contains(key) || !pre[key].is_string())
                return damaged(std::string("'") + key + "' is missing or not text");
    if (!pre.contains("transforms")) return {};
    if (!pre["transforms"].is_array()) return damaged("'transforms' is not a list");
    for (const json &t : pre["transforms"]) {
        if (!t.is_object() || !t.contains("node") || !t["node"].is_string() ||
            !t.contains("type") || !t["type"].is_string() || !t.contains("params") ||
            !t["params"].is_object())
            return damaged("a transform without its node, type and params");
        const std::string node = t["node"].get<std::string>();
        const std::string type = t["type"].get<std::string>();
        const NodeType *kind = nodeCatalog().find(type);
        if (!kind || kind->spec.role != NodeRole::Transform)
            return damaged("'" + type + "' (node '" + node + "') is not a transform");
        const graph::NodeTypeSpec *spec = &kind->spec;
        for (const graph::ParamSpec &ps : spec->params) {
            if (!t["params"].contains(ps.name))
                return damaged("node '" + node + "' has no '" + ps.name + "'");
            if (Status s = graph::checkParamValue(ps, t["params"][ps.name], node); !s)
                return damaged(s.error().message);
        }
    }
    return {};
}

// The log-odds of class k from one row of scores: s_k - log sum_{j != k} exp(s_j). Unlike the
// probability it does not saturate, so covering a patch of an input the model is sure about
// still shows.
double logOdds(const float *row, int64_t classes, int32_t k)
{
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c)
        if (c != k) top = std::max(top, double(row[c]));
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
        if (c != k) sum += std::exp(double(row[c]) - top);
    return double(row[k]) - (top + std::log(sum));
}

// Occlusion patches: the plane is cut into at most this many cells a side.
constexpr int64_t kOcclusionGrid = 12;

} // namespace

json savedPreprocessing(const TrainingJob &job, const Shape &sourceSample)
{
    const DataSpec &spec = job.evaluations.empty() ? job.trainData : job.evaluations[0].data;
    const bool files = spec.fromImageFiles;
    json pre;
    if (spec.samples == DataSpec::SampleKind::Audio)
        pre = {{"kind", "audio"},
               {"sample_rate", spec.audioFiles.sampleRate},
               {"seconds", spec.audioFiles.seconds},
               {"trim_db", spec.audioFiles.trimDb},
               {"transforms", json::array()}};
    else
        pre = {{"kind", "image"},
               {"channels", sourceSample[0]},
               {"height", sourceSample[1]},
               {"width", sourceSample[2]},
               {"color", sourceSample[0] == 3 ? "rgb" : "grey"},
               {"resize", files && spec.imageFiles.resize == data::ImageFilesOptions::Resize::Pad
                              ? "pad"
                              : "stretch"},
               {"transforms", json::array()}};
    const std::vector<data::Stage> stages = buildStages(spec);
    for (size_t i = 0; i < stages.size(); ++i)
        if (!stages[i].transform->random())
            pre["transforms"].push_back({{"node", spec.transforms[i].node},
                                         {"type", spec.transforms[i].type},
                                         {"params", spec.transforms[i].params}});
    return pre;
}

std::map<std::string, std::string> inferenceMetadata(const graph::PipelineDocument &doc,
                                                     const TrainingJob &job,
                                                     const Shape &sourceSample,
                                                     const std::vector<std::string> &classNames,
                                                     const std::vector<int64_t> &classCounts)
{
    std::map<std::string, std::string> meta{
        {"pipeline", graph::serializePipeline(doc)},
        {"preprocessing", savedPreprocessing(job, sourceSample)
                              .dump(-1, ' ', false, json::error_handler_t::replace)},
        {"class_names", json(classNames).dump(-1, ' ', false, json::error_handler_t::replace)}};
    if (!classCounts.empty()) meta["class_counts"] = json(classCounts).dump();
    return meta;
}

std::vector<double> softmax(const float *row, int64_t classes)
{
    const float top = *std::max_element(row, row + classes);
    std::vector<double> p(static_cast<size_t>(classes));
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
        sum += p[size_t(c)] = std::exp(double(row[c]) - double(top));
    for (double &v : p)
        v /= sum;
    return p;
}

struct Predictor::State {
    std::string file;
    json preprocessing;
    std::vector<std::string> classNames;
    bool audio = false;
    data::ImageFilesOptions decode;      // images
    data::AudioFilesOptions decodeAudio; // recordings
    std::vector<data::Stage> stages;
    std::vector<Shape> shapes; // shapes[i]: the sample entering stage i; back(): the model's input
    nn::Model model;
    Backend *backend = nullptr;
    std::string pipeline; // the saved pipeline's text
    std::vector<double> speeds{1.0}; // each recording's hearings (setWarps)
    std::vector<double> logShares;   // the training labels' class shares (nn::logClassShares)
    double balance = 0;              // setBalance

    // One decoded sample through every stage, in place.
    void preprocess(std::vector<float> &a) const
    {
        std::vector<float> b;
        const uint64_t seed = 0;
        for (size_t st = 0; st < stages.size(); ++st) {
            const data::Transform &t = *stages[st].transform;
            if (t.inPlace()) {
                t.apply(a.data(), a.data(), 1, shapes[st], &seed);
            } else {
                b.resize(size_t(shapes[st + 1].numel()));
                t.apply(a.data(), b.data(), 1, shapes[st], &seed);
                std::swap(a, b);
            }
        }
    }
};

Predictor::Predictor(std::unique_ptr<State> s)
    : m_s(std::move(s))
{}

Predictor::~Predictor() = default;

const std::vector<std::string> &Predictor::classNames() const
{
    return m_s->classNames;
}
const Shape &Predictor::sampleShape() const
{
    return m_s->shapes.back();
}
const json &Predictor::preprocessing() const
{
    return m_s->preprocessing;
}
const std::string &Predictor::modelFile() const
{
    return m_s->file;
}

void Predictor::setThreads(int threads)
{
    m_s->backend->setThreads(threads);
}

bool Predictor::audio() const
{
    return m_s->audio;
}

Status Predictor::setWarps(const std::vector<double> &warps)
{
    if (std::string why = warpsProblem(warps); !why.empty()) return makeError(why);
    const std::vector<double> speeds = hearingSpeeds(warps);
    if (!m_s->audio && speeds.size() > 1)
        return makeError("--warp is for models of recordings; " + m_s->file + " reads pictures");
    m_s->speeds = speeds;
    return {};
}

const std::vector<double> &Predictor::speeds() const
{
    return m_s->speeds;
}

Status Predictor::setBalance(double b)
{
    if (!(b >= 0 && b <= 1))
        return makeError("--balance must be from 0 (as trained) to 1 (every class alike)");
    m_s->balance = b;
    return {};
}

void Predictor::setCropToSound(bool on)
{
    m_s->decodeAudio.cropToSound = on;
}

bool Predictor::knowsClassShares() const
{
    return !m_s->logShares.empty();
}

Result<std::unique_ptr<Predictor>> Predictor::open(const std::string &path,
                                                   const std::string &deviceName)
{
    auto fileResult = io::modelFileOf(path);
    if (!fileResult.ok()) return fileResult.error();
    auto s = std::make_unique<State>();
    s->file = fileResult.value();
    auto file = io::readSafetensors(s->file);
    if (!file.ok()) return file.error();
    const auto &meta = file->metadata;
    const auto format = meta.find("format");
    const bool checkpoint = format != meta.end() && format->second == "flowbench.checkpoint";
    if (format == meta.end() || (!checkpoint && format->second != "flowbench.model"))
        return fileError(s->file, "not a Flowbench model or checkpoint");
    for (const char *key : {"pipeline", "preprocessing", "class_names"})
        if (!meta.count(key))
            return fileError(s->file, std::string("has no saved '") + key +
                                          "' (written by an older Flowbench): train it again");
    // Checked before parsing, as every JSON Flowbench reads (json_nesting.h).
    for (const char *key : {"preprocessing", "class_names"})
        FB_TRY(checkJsonNesting(meta.at(key), s->file + " (saved " + key + ")"));
    try {
        s->preprocessing = json::parse(meta.at("preprocessing"));
        FB_TRY(checkSavedPreprocessing(s->preprocessing, s->file));
        s->classNames = json::parse(meta.at("class_names")).get<std::vector<std::string>>();
        // Optional: models saved before 2026-12-07 have none.
        if (const auto counts = meta.find("class_counts"); counts != meta.end()) {
            FB_TRY(checkJsonNesting(counts->second, s->file + " (saved class_counts)"));
            const json n = json::parse(counts->second, nullptr, false);
            if (!n.is_array() || n.size() != s->classNames.size() ||
                !std::all_of(n.begin(), n.end(),
                             [](const json &v) { return v.is_number_integer(); }))
                return fileError(s->file,
                                 "its saved class_counts is damaged: it should hold one whole "
                                 "number for each of its " +
                                     std::to_string(s->classNames.size()) + " classes");
            s->logShares = nn::logClassShares(n.get<std::vector<int64_t>>());
        }
        const std::string kind = s->preprocessing.value("kind", "");
        s->audio = kind == "audio";
        if (s->audio) {
            s->decodeAudio.sampleRate = s->preprocessing.at("sample_rate").get<int64_t>();
            s->decodeAudio.seconds = s->preprocessing.at("seconds").get<double>();
            s->decodeAudio.trimDb = s->preprocessing.at("trim_db").get<double>();
            // A person's take, longer than the window and noisy, cropped around its word.
            s->decodeAudio.cropToSound = true;
        } else if (kind == "image") {
            s->decode = decodeOptions(s->preprocessing);
        } else {
            return fileError(s->file, "its input kind '" + kind + "' is not one this build reads");
        }
    } catch (const json::exception &e) {
        return fileError(s->file, std::string("its saved preprocessing is damaged: ") + e.what());
    }
    s->pipeline = meta.at("pipeline");
    auto doc = graph::parsePipeline(meta.at("pipeline"), s->file + " (saved pipeline)");
    if (!doc.ok()) return doc.error();
    if (const std::vector<Error> problems = graph::validate(doc.value(), nodeTypes());
        !problems.empty())
        return fileError(s->file, "its saved pipeline is damaged: " + problems.front().str());
    auto job = readTrainingJob(doc.value());
    if (!job.ok()) return job.error();

    // The saved chain, as the run built it.
    DataSpec spec;
    spec.audioFiles.sampleRate = s->decodeAudio.sampleRate; // what the spectrograms assume
    for (const json &t : s->preprocessing["transforms"])
        spec.transforms.push_back(
            {t["node"].get<std::string>(), t["type"].get<std::string>(), t["params"]});
    s->stages = buildStages(spec);
    s->shapes.push_back(s->audio
                            ? Shape{1, 1, s->decodeAudio.samples()}
                            : Shape{s->decode.colour ? 3 : 1, s->decode.height, s->decode.width});
    for (const data::Stage &st : s->stages) {
        auto out = st.transform->outputShape(s->shapes.back());
        if (!out.ok()) return nodeError(st.node, out.error().message);
        s->shapes.push_back(out.value());
    }
    auto model = buildModel(job.value(), s->shapes.back());
    if (!model.ok()) return model.error();
    s->model = std::move(model).value();
    s->model.initialize(0);
    auto load = [&](const std::string &name, Tensor &t) -> Status {
        const Tensor *src = file->find(checkpoint ? "model." + name : name);
        if (!src) return fileError(s->file, "tensor '" + name + "' is missing");
        if (src->shape() != t.shape())
            return fileError(s->file, "tensor '" + name + "' has shape " + src->shape().str() +
                                          ", the model needs " + t.shape().str());
        // Weights that are not numbers predict nothing ("probability": null for every class).
        if (!src->allFinite())
            return fileError(s->file, "tensor '" + name +
                                          "' holds NaN or infinite values: the model is broken "
                                          "(a diverged run, or a damaged file)");
        t.copyFrom(*src);
        return {};
    };
    for (auto &p : s->model.parameters())
        FB_TRY(load(p.name, p.param->value));
    for (auto &[name, b] : s->model.buffers())
        FB_TRY(load(name, b));
    const int32_t outputs = int32_t(s->model.outputSample()[0]);
    if (int32_t(s->classNames.size()) != outputs)
        return fileError(s->file, "names " + std::to_string(s->classNames.size()) +
                                      " classes but the model has " + std::to_string(outputs) +
                                      " outputs");

    auto device = Device::parse(deviceName);
    if (!device.ok()) return makeError(device.error().message);
    auto backend = backendFor(device.value());
    if (!backend.ok()) return backend.error();
    s->backend = backend.value();
    try {
        s->model.moveTo(*s->backend);
    } catch (const DeviceError &e) {
        return makeError(e.what());
    }
    return std::unique_ptr<Predictor>(new Predictor(std::move(s)));
}

// The model's scores for n samples in host memory, [n, classes] on the host.
static Tensor scoresOf(nn::Model &model, Backend &backend, const float *samples, int64_t n,
                       const Shape &sample)
{
    Tensor batch = Tensor::empty(sample.prepend(n));
    std::copy_n(samples, n * sample.numel(), batch.f32());
    nn::StepContext ctx;
    ctx.training = false;
    nn::Plan &plan = model.plan(backend, n, false);
    return backend.toHost(plan.forward(backend.toDevice(batch), ctx));
}

// Occlusion saliency of one sample for class `cls` (Zeiler and Fergus 2014): every patch of a
// grid over the [h, w] plane, in turn, is covered with `cover` in all channels; the cell's value
// is how much the class's log-odds drop. All patches go through the model in one batch.
static std::vector<float> occlusion(nn::Model &model, Backend &backend, const std::vector<float> &x,
                                    const Shape &s, int32_t cls, int64_t classes, float cover)
{
    const int64_t c = s[0], h = s[1], w = s[2], plane = h * w;
    const int64_t ph = (h + kOcclusionGrid - 1) / kOcclusionGrid,
                  pw = (w + kOcclusionGrid - 1) / kOcclusionGrid;
    const int64_t gh = (h + ph - 1) / ph, gw = (w + pw - 1) / pw, patches = gh * gw;
    std::vector<float> batch(size_t((patches + 1) * s.numel()));
    for (int64_t p = 0; p <= patches; ++p) {
        float *dst = batch.data() + p * s.numel();
        std::copy(x.begin(), x.end(), dst);
        if (p == patches) break; // the last copy stays whole: the baseline
        const int64_t y0 = (p / gw) * ph, x0 = (p % gw) * pw;
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t y = y0; y < std::min(h, y0 + ph); ++y)
                std::fill_n(dst + ch * plane + y * w + x0, std::min(w, x0 + pw) - x0, cover);
    }
    const Tensor scores = scoresOf(model, backend, batch.data(), patches + 1, s);
    const double base = logOdds(scores.f32() + patches * classes, classes, cls);
    std::vector<float> map(static_cast<size_t>(plane));
    for (int64_t p = 0; p < patches; ++p) {
        const float drop = float(base - logOdds(scores.f32() + p * classes, classes, cls));
        const int64_t y0 = (p / gw) * ph, x0 = (p % gw) * pw;
        for (int64_t y = y0; y < std::min(h, y0 + ph); ++y)
            std::fill_n(map.data() + y * w + x0, std::min(w, x0 + pw) - x0, drop);
    }
    return map;
}

std::vector<Result<Prediction>> Predictor::predictFiles(const std::vector<std::string> &paths,
                                                        int topK, bool saliency)
{
    std::vector<Result<Prediction>> out;
    out.reserve(paths.size());
    const Shape &sample = m_s->shapes.back();
    const int64_t classes = int64_t(m_s->classNames.size());
    const size_t k = size_t(std::clamp<int64_t>(topK, 1, classes));
    // Each input's hearings are rows of the batch one after another (setWarps; a model of
    // pictures is always heard once).
    const std::vector<double> &speeds = m_s->speeds;
    const size_t hearings = speeds.size(), numel = size_t(sample.numel());
    // At most kChunk rows a forward pass, however many hearings: the memory a batch takes.
    const size_t perChunk = std::max<size_t>(1, kChunk / hearings);
    for (size_t first = 0; first < paths.size(); first += perChunk) {
        const size_t count = std::min(perChunk, paths.size() - first);
        std::vector<Prediction> preds(count);
        std::vector<std::optional<Error>> errors(count);
        std::vector<size_t> rows; // inputs of this chunk that decoded, in order
        std::vector<float> x(count * hearings * numel);
        for (size_t i = 0; i < count; ++i) {
            const auto start = Clock::now();
            // As the data flow does: a recording's samples as they are, an image's bytes to
            // [0, 1]; then each stage in turn.
            std::vector<float> a;
            if (m_s->audio) {
                data::FlatPeaks flat;
                auto wave = data::decodeAudioFile(paths[first + i], m_s->decodeAudio, &flat);
                if (!wave.ok()) {
                    errors[i] = wave.error();
                    continue;
                }
                a = std::move(wave).value();
                preds[i].clipped = flat.share();
                preds[i].waveform = a;
            } else {
                auto pixels = data::decodeImageFile(paths[first + i], m_s->decode);
                if (!pixels.ok()) {
                    errors[i] = pixels.error();
                    continue;
                }
                a.resize(pixels->size());
                for (size_t j = 0; j < a.size(); ++j)
                    a[j] = float(pixels.value()[j]) / 255.0f;
            }
            float *dst = x.data() + rows.size() * hearings * numel;
            for (size_t h = 1; h < hearings; ++h) {
                std::vector<float> heard = data::stretchedAroundMiddle(a, speeds[h]);
                m_s->preprocess(heard);
                std::copy(heard.begin(), heard.end(), dst + h * numel);
            }
            m_s->preprocess(a);
            std::copy(a.begin(), a.end(), dst);
            preds[i].sample = std::move(a);
            preds[i].milliseconds = msSince(start);
            rows.push_back(i);
        }
        if (!rows.empty()) {
            const auto start = Clock::now();
            const int64_t n = int64_t(rows.size());
            const Tensor scores =
                scoresOf(m_s->model, *m_s->backend, x.data(), n * int64_t(hearings), sample);
            const double share = msSince(start) / double(n);
            for (int64_t r = 0; r < n; ++r) {
                const float *rows0 = scores.f32() + r * int64_t(hearings) * classes;
                // Finite weights can still overflow on an input (found by fuzz_model: weights
                // of 2e37 gave infinite scores and NaN probabilities): no prediction then.
                if (!std::all_of(rows0, rows0 + int64_t(hearings) * classes,
                                 [](float v) { return std::isfinite(v); })) {
                    errors[rows[size_t(r)]] =
                        fileError(paths[first + rows[size_t(r)]],
                                  std::string("the model's scores for it") +
                                      (hearings > 1 ? " (or one of its --warp hearings)" : "") +
                                      " are not numbers (NaN or infinite): its weights overflow "
                                      "on this input; is the model damaged?");
                    continue;
                }
                // Heard once, the scores rank the classes, as the evaluation's arg-max does;
                // heard several ways, the mean of the hearings' probabilities.
                std::vector<double> p = softmax(rows0, classes), rank(rows0, rows0 + classes);
                if (hearings > 1) {
                    for (size_t h = 1; h < hearings; ++h) {
                        const std::vector<double> q =
                            softmax(rows0 + int64_t(h) * classes, classes);
                        for (size_t c = 0; c < q.size(); ++c)
                            p[c] += q[c];
                    }
                    for (double &v : p)
                        v /= double(hearings);
                    rank = p;
                }
                if (m_s->balance > 0 && !m_s->logShares.empty()) {
                    // p_c / share_c^b, summed to 1 again (setBalance).
                    double sum = 0;
                    for (size_t c = 0; c < p.size(); ++c)
                        sum += p[c] *= std::exp(-m_s->balance * m_s->logShares[c]);
                    for (double &v : p)
                        v /= sum;
                    rank = p;
                }
                std::vector<int32_t> order(static_cast<size_t>(classes));
                for (int32_t c = 0; c < int32_t(classes); ++c)
                    order[size_t(c)] = c;
                // Most probable first; ties keep the lower class first, as the evaluation's
                // arg-max does.
                std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
                    return rank[size_t(a)] > rank[size_t(b)];
                });
                Prediction &pred = preds[rows[size_t(r)]];
                for (size_t j = 0; j < k; ++j)
                    pred.top.push_back(
                        {order[j], m_s->classNames[size_t(order[j])], float(p[size_t(order[j])])});
                pred.milliseconds += share;
                if (saliency) {
                    // Pictures are covered with their mean grey, a recording's features with
                    // silence (their lowest value): covering with anything louder adds sound.
                    const std::vector<float> &v = pred.sample;
                    const float cover = m_s->audio
                                            ? *std::min_element(v.begin(), v.end())
                                            : float(std::accumulate(v.begin(), v.end(), 0.0) /
                                                    double(std::max<size_t>(v.size(), 1)));
                    pred.saliency = occlusion(m_s->model, *m_s->backend, pred.sample, sample,
                                              order[0], classes, cover);
                }
            }
        }
        for (size_t i = 0; i < count; ++i) {
            if (errors[i])
                out.emplace_back(*errors[i]);
            else
                out.emplace_back(std::move(preds[i]));
        }
    }
    return out;
}

std::vector<float> Predictor::scores(const std::vector<float> &decoded, int64_t n)
{
    const Shape &in = m_s->shapes.front(), &sample = m_s->shapes.back();
    FB_ASSERT(int64_t(decoded.size()) == n * in.numel(), "decoded samples of the wrong size");
    std::vector<float> x(size_t(n * sample.numel()));
    for (int64_t i = 0; i < n; ++i) {
        std::vector<float> a(decoded.begin() + i * in.numel(),
                             decoded.begin() + (i + 1) * in.numel());
        m_s->preprocess(a);
        std::copy(a.begin(), a.end(), x.begin() + i * sample.numel());
    }
    const Tensor t = scoresOf(m_s->model, *m_s->backend, x.data(), n, sample);
    return std::vector<float>(t.f32(), t.f32() + t.numel());
}

const std::vector<data::Stage> &Predictor::stages() const
{
    return m_s->stages;
}
const std::vector<Shape> &Predictor::stageShapes() const
{
    return m_s->shapes;
}
const nn::Model &Predictor::model() const
{
    return m_s->model;
}
const std::string &Predictor::savedPipeline() const
{
    return m_s->pipeline;
}

} // namespace fb::exec
