#include "core/exec/job.h"

#include "core/graph/node_types.h"

#include "core/data/audio_transforms.h"

#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/nn/layers.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace fb::exec {

using graph::PipelineDocument;
using nlohmann::json;

namespace {

struct Params {
    const PipelineDocument &doc;
    std::string node;
    json get(const char *name) const { return doc.param(node, name); }
    int64_t i(const char *name) const { return get(name).get<int64_t>(); }
    float f(const char *name) const { return get(name).get<float>(); }
    bool b(const char *name) const { return get(name).get<bool>(); }
    std::string s(const char *name) const { return get(name).get<std::string>(); }
};

const graph::Edge *inputEdge(const PipelineDocument &doc, const std::string &node, const char *port)
{
    return doc.edgeInto(node, port);
}

Result<DataSpec> readData(const PipelineDocument &doc, const std::string &consumer,
                          const char *port)
{
    const graph::Edge *e = inputEdge(doc, consumer, port);
    if (!e) return nodeError(consumer + "." + port, "no data is connected");
    DataSpec spec;
    std::string id = e->fromNode;
    std::set<std::string> seen;
    while (true) {
        if (!seen.insert(id).second) return nodeError(id, "the data chain loops");
        const graph::Node *n = doc.node(id);
        if (!n) return nodeError(id, "missing node");
        Params p{doc, id};
        // A transform: a node that takes samples (data sources take nothing; train and evaluate
        // take "data"). buildStages knows each of them.
        const graph::NodeTypeSpec *type = graph::NodeTypeRegistry::builtin().find(n->type);
        const bool transform =
            type && std::any_of(type->inputs.begin(), type->inputs.end(),
                                [](const auto &in) { return in.name == "samples"; });
        if (transform) {
            json params = json::object();
            for (const auto &ps : type->params)
                params[ps.name] = doc.param(id, ps.name);
            if (n->type == "normalize_channels")
                for (const char *list : {"mean", "std"})
                    if (auto v = data::parseNumberList(params[list].get<std::string>()); !v.ok())
                        return nodeError(id + "." + list, v.error().message);
            spec.transforms.insert(spec.transforms.begin(), {id, n->type, params});
            const graph::Edge *up = inputEdge(doc, id, "samples");
            if (!up) return nodeError(id + ".samples", "no data is connected");
            id = up->fromNode;
            continue;
        }
        spec.sourceNode = id;
        spec.sourceType = n->type;
        spec.limit = p.i("limit");
        if (n->type == "fashion_mnist") {
            spec.path = graph::expandHome(p.s("path"));
            spec.split = p.s("split");
        } else if (n->type == "idx_dataset") {
            spec.images = graph::expandHome(p.s("images"));
            spec.labels = graph::expandHome(p.s("labels"));
        } else if (n->type == "image_folder" || n->type == "image_list") {
            spec.path = graph::expandHome(p.s("path"));
            data::ImageFilesOptions &o = spec.imageFiles;
            o.subset = p.s("subset");
            o.validationFraction = p.f("validation_fraction");
            o.splitSeed = uint64_t(p.i("split_seed"));
            o.colour = p.s("color") == "rgb";
            o.height = p.i("height");
            o.width = p.i("width");
            o.resize = p.s("resize") == "pad" ? data::ImageFilesOptions::Resize::Pad
                                              : data::ImageFilesOptions::Resize::Stretch;
            o.limit = spec.limit;
        } else if (n->type == "audio_folder") {
            spec.path = graph::expandHome(p.s("path"));
            data::AudioFilesOptions &o = spec.audioFiles;
            o.labels = p.s("labels") == "pattern" ? data::AudioFilesOptions::Labels::Pattern
                                                  : data::AudioFilesOptions::Labels::Folder;
            o.pattern = p.s("pattern");
            o.sampleRate = p.i("sample_rate");
            o.seconds = p.f("seconds");
            o.trimDb = p.f("trim_db");
            o.subset = p.s("subset");
            o.validationFraction = p.f("validation_fraction");
            o.splitSeed = uint64_t(p.i("split_seed"));
            o.splitBySpeaker = p.b("split_by_speaker");
            o.limit = spec.limit;
        } else {
            return nodeError(id,
                             "a '" + n->type + "' node cannot feed samples to '" + consumer + "'");
        }
        return spec;
    }
}

nn::LrSchedule readSchedule(const Params &p, float base)
{
    nn::LrSchedule s;
    const std::string kind = p.s("schedule");
    s.kind = kind == "step"     ? nn::LrSchedule::Kind::Step
             : kind == "cosine" ? nn::LrSchedule::Kind::Cosine
                                : nn::LrSchedule::Kind::Constant;
    s.base = base;
    s.warmupSteps = p.i("warmup_steps");
    s.stepEpochs = p.i("step_epochs");
    s.gamma = p.f("gamma");
    s.minLr = p.f("min_lr");
    return s;
}

const std::set<std::string> &layerTypes()
{
    static const std::set<std::string> types{
        "linear", "conv2d", "maxpool2d", "avgpool2d", "relu",        "leaky_relu", "sigmoid",
        "tanh",   "gelu",   "flatten",   "dropout",   "batchnorm2d", "add"};
    return types;
}

std::vector<std::string> inputPortsOf(const std::string &type)
{
    if (type == "add") return {"a", "b"};
    return {"in"};
}

} // namespace

Result<TrainingJob> readTrainingJob(const PipelineDocument &doc)
{
    TrainingJob job;
    std::vector<std::string> trains;
    for (const auto &n : doc.nodes())
        if (n.type == "train") trains.push_back(n.id);
    if (trains.empty()) return makeError("the pipeline has no 'train' node");
    if (trains.size() > 1)
        return nodeError(trains[1], "only one 'train' node per pipeline is supported");
    job.trainNode = trains[0];
    Params tp{doc, job.trainNode};
    job.epochs = tp.i("epochs");
    job.batchSize = tp.i("batch_size");
    job.seed = uint64_t(tp.i("seed"));
    job.shuffle = tp.b("shuffle");
    job.checkpointEvery = tp.i("checkpoint_every");
    job.checkpointSteps = tp.i("checkpoint_steps");
    job.keepCheckpoints = tp.i("keep_checkpoints");
    job.dataWorkers = int(tp.i("data_workers"));
    job.device = tp.s("device");
    job.precision = tp.s("precision");
    job.deterministic = tp.b("deterministic");

    auto data = readData(doc, job.trainNode, "data");
    if (!data.ok()) return data.error();
    job.trainData = data.value();

    // The model: everything upstream of train.model back to one input node.
    const graph::Edge *me = doc.edgeInto(job.trainNode, "model");
    if (!me) return nodeError(job.trainNode + ".model", "no model is connected");
    job.outputNode = me->fromNode;
    std::map<std::string, TrainingJob::LayerNode> found;
    std::vector<std::string> stack{job.outputNode};
    std::vector<std::string> inputs;
    while (!stack.empty()) {
        const std::string id = stack.back();
        stack.pop_back();
        if (found.count(id) || std::find(inputs.begin(), inputs.end(), id) != inputs.end())
            continue;
        const graph::Node *n = doc.node(id);
        if (!n) return nodeError(id, "missing node");
        if (n->type == "input") {
            inputs.push_back(id);
            continue;
        }
        if (!layerTypes().count(n->type))
            return nodeError(id, "a '" + n->type + "' node cannot be part of the model");
        TrainingJob::LayerNode ln{id, n->type, {}, n->params};
        for (const auto &port : inputPortsOf(n->type)) {
            const graph::Edge *e = doc.edgeInto(id, port);
            if (!e) return nodeError(id + "." + port, "input is not connected");
            ln.inputs.push_back(e->fromNode);
            stack.push_back(e->fromNode);
        }
        found[id] = ln;
    }
    if (inputs.empty())
        return nodeError(job.outputNode, "the model has no 'input' node upstream of it");
    if (inputs.size() > 1)
        return nodeError(inputs[1], "the model has more than one 'input' node ('" + inputs[0] +
                                        "' and '" + inputs[1] + "'); only one is supported");
    job.inputNode = inputs[0];

    // Topological order (Kahn), ties broken by document order so runs are reproducible.
    std::set<std::string> done{job.inputNode};
    while (done.size() < found.size() + 1) {
        bool progressed = false;
        for (const auto &n : doc.nodes()) {
            auto it = found.find(n.id);
            if (it == found.end() || done.count(n.id)) continue;
            if (std::all_of(it->second.inputs.begin(), it->second.inputs.end(),
                            [&](const std::string &u) { return done.count(u) > 0; })) {
                job.layers.push_back(it->second);
                done.insert(n.id);
                progressed = true;
            }
        }
        if (!progressed) return nodeError(job.outputNode, "the model contains a cycle");
    }

    const graph::Edge *le = doc.edgeInto(job.trainNode, "loss");
    if (!le) return nodeError(job.trainNode + ".loss", "no loss is connected");
    job.lossNode = le->fromNode;
    job.lossType = doc.node(le->fromNode)->type;

    const graph::Edge *oe = doc.edgeInto(job.trainNode, "optimizer");
    if (!oe) return nodeError(job.trainNode + ".optimizer", "no optimizer is connected");
    OptimizerSpec &o = job.optimizer;
    o.node = oe->fromNode;
    o.type = doc.node(o.node)->type;
    Params op{doc, o.node};
    if (o.type == "sgd") {
        o.sgd.lr = op.f("lr");
        o.sgd.momentum = op.f("momentum");
        o.sgd.nesterov = op.b("nesterov");
        o.sgd.weightDecay = op.f("weight_decay");
        o.schedule = readSchedule(op, o.sgd.lr);
    } else if (o.type == "adam" || o.type == "adamw") {
        o.adam.lr = op.f("lr");
        o.adam.beta1 = op.f("beta1");
        o.adam.beta2 = op.f("beta2");
        o.adam.eps = op.f("eps");
        o.adam.weightDecay = op.f("weight_decay");
        o.adam.decoupled = o.type == "adamw";
        o.schedule = readSchedule(op, o.adam.lr);
    } else {
        return nodeError(o.node, "'" + o.type + "' is not an optimizer");
    }

    for (const auto &n : doc.nodes()) {
        if (n.type != "evaluate") continue;
        const graph::Edge *em = doc.edgeInto(n.id, "model");
        if (!em || em->fromNode != job.trainNode) continue;
        auto ed = readData(doc, n.id, "data");
        if (!ed.ok()) return ed.error();
        job.evaluations.push_back({n.id, ed.value(), Params{doc, n.id}.i("batch_size")});
    }
    return job;
}

namespace {

Result<std::unique_ptr<nn::Layer>> makeLayer(const TrainingJob::LayerNode &n)
{
    const json &p = n.params;
    auto num = [&](const char *k, double def) {
        return p.contains(k) && p[k].is_number() ? p[k].get<double>() : def;
    };
    auto flag = [&](const char *k, bool def) {
        return p.contains(k) && p[k].is_boolean() ? p[k].get<bool>() : def;
    };
    const std::string &t = n.type;
    if (t == "linear") return nn::makeLinear(int64_t(num("out_features", 128)), flag("bias", true));
    if (t == "conv2d")
        return nn::makeConv2d(int64_t(num("out_channels", 32)), int64_t(num("kernel_size", 3)),
                              int64_t(num("stride", 1)), int64_t(num("padding", 0)),
                              flag("bias", true));
    if (t == "maxpool2d" || t == "avgpool2d")
        return nn::makePool2d(t == "maxpool2d" ? PoolKind::Max : PoolKind::Avg,
                              int64_t(num("kernel_size", 2)), int64_t(num("stride", 0)),
                              int64_t(num("padding", 0)));
    if (t == "relu") return nn::makeActivation(Activation::Relu);
    if (t == "leaky_relu")
        return nn::makeActivation(Activation::LeakyRelu, float(num("negative_slope", 0.01)));
    if (t == "sigmoid") return nn::makeActivation(Activation::Sigmoid);
    if (t == "tanh") return nn::makeActivation(Activation::Tanh);
    if (t == "gelu") return nn::makeActivation(Activation::Gelu);
    if (t == "flatten") return nn::makeFlatten();
    if (t == "dropout") return nn::makeDropout(float(num("p", 0.5)));
    if (t == "batchnorm2d")
        return nn::makeBatchNorm2d(float(num("eps", 1e-5)), float(num("momentum", 0.1)));
    if (t == "add") return nn::makeAdd();
    return nodeError(n.id, "'" + t + "' is not a layer");
}

} // namespace

Result<nn::Model> buildModel(const TrainingJob &job, const Shape &inputSample)
{
    nn::Model model;
    // The weights are made in host memory first: a layer too large for it is refused by name.
    model.setMemoryLimit(hostMemoryAvailable());
    model.setInput(job.inputNode);
    for (const auto &n : job.layers) {
        auto layer = makeLayer(n);
        if (!layer.ok()) return layer.error();
        FB_TRY(model.addLayer(n.id, std::move(layer).value(), n.inputs));
    }
    FB_TRY(model.setOutput(job.outputNode));
    FB_TRY(model.compile(inputSample));
    return model;
}

std::vector<data::Stage> buildStages(const DataSpec &spec)
{
    std::vector<data::Stage> stages;
    for (const auto &t : spec.transforms) {
        const json &p = t.params;
        std::shared_ptr<const data::Transform> tr;
        if (t.type == "normalize")
            tr = std::make_shared<data::Normalize>(p["mean"].get<float>(), p["std"].get<float>());
        else if (t.type == "random_hflip")
            tr = std::make_shared<data::RandomHorizontalFlip>(p["p"].get<float>());
        else if (t.type == "random_affine")
            tr = std::make_shared<data::RandomAffine>(
                p["degrees"].get<float>(), p["translate"].get<float>(), p["scale_min"].get<float>(),
                p["scale_max"].get<float>(), p["fill"].get<float>());
        else if (t.type == "random_crop")
            tr = std::make_shared<data::RandomCrop>(
                p["height"].get<int64_t>(), p["width"].get<int64_t>(), p["padding"].get<int64_t>(),
                p["fill"].get<float>());
        else if (t.type == "stft" || t.type == "mel_spectrogram" || t.type == "mfcc") {
            data::SpectrogramOptions o;
            o.kind = t.type == "stft"              ? data::SpectrogramOptions::Kind::Power
                     : t.type == "mel_spectrogram" ? data::SpectrogramOptions::Kind::Mel
                                                   : data::SpectrogramOptions::Kind::Mfcc;
            o.sampleRate = spec.audioFiles.sampleRate; // the rate the source resampled to
            o.nFft = p["n_fft"].get<int64_t>();
            o.hop = p["hop_length"].get<int64_t>();
            o.topDb = p["top_db"].get<double>();
            if (p.contains("to_db")) o.toDb = p["to_db"].get<bool>();
            if (p.contains("n_mels")) {
                o.nMels = p["n_mels"].get<int64_t>();
                o.fMin = p["f_min"].get<double>();
                o.fMax = p["f_max"].get<double>();
            }
            if (p.contains("n_mfcc")) o.nMfcc = p["n_mfcc"].get<int64_t>();
            tr = std::make_shared<data::Spectrogram>(o);
        } else if (t.type == "center_crop")
            tr = std::make_shared<data::CenterCrop>(p["height"].get<int64_t>(),
                                                    p["width"].get<int64_t>());
        else if (t.type == "grayscale")
            tr = std::make_shared<data::Grayscale>();
        else if (t.type == "color_jitter")
            tr = std::make_shared<data::ColorJitter>(p["brightness"].get<float>(),
                                                     p["contrast"].get<float>());
        else if (t.type == "normalize_channels")
            // Lists readData checked before the job was made.
            tr = std::make_shared<data::ChannelNormalize>(
                data::parseNumberList(p["mean"].get<std::string>()).value(),
                data::parseNumberList(p["std"].get<std::string>()).value());
        else if (t.type == "add_noise")
            tr = std::make_shared<data::AddNoise>(p["snr_min"].get<float>(),
                                                  p["snr_max"].get<float>(), p["p"].get<float>());
        else if (t.type == "time_shift")
            tr = std::make_shared<data::TimeShift>(p["max_shift"].get<float>());
        else if (t.type == "spec_augment")
            tr = std::make_shared<data::SpecAugment>(
                p["freq_masks"].get<int64_t>(), p["freq_width"].get<int64_t>(),
                p["time_masks"].get<int64_t>(), p["time_width"].get<int64_t>());
        FB_ASSERT(tr, "readTrainingJob accepted an unknown transform");
        stages.push_back({t.node, std::move(tr)});
    }
    return stages;
}

std::unique_ptr<nn::Loss> buildLoss(const TrainingJob &job)
{
    return job.lossType == "mse" ? nn::makeMse() : nn::makeCrossEntropy();
}

std::unique_ptr<nn::Optimizer> buildOptimizer(const OptimizerSpec &spec)
{
    if (spec.type == "sgd") return nn::makeSgd(spec.sgd);
    return nn::makeAdam(spec.adam);
}

} // namespace fb::exec
