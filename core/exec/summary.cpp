#include "core/exec/summary.h"

#include "core/backend/backend.h"
#include "core/base/bytes.h"
#include "core/base/rng.h"
#include "core/exec/job.h"
#include "core/exec/node_type.h"
#include "core/exec/train_step.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <thread>

namespace fb::exec {

using nlohmann::json;

namespace {

// One sample's shape as it leaves the data chain: the source's, then each transform's.
Result<Shape> chainShape(const DataSpec &spec)
{
    const NodeType *source = nodeCatalog().find(spec.sourceType);
    if (!source || !source->sampleShape)
        return nodeError(spec.sourceNode, "'" + spec.sourceType + "' is not a data source");
    Result<Shape> shape = source->sampleShape(spec);
    if (!shape.ok()) {
        Error e = shape.error();
        if (e.node.empty()) e.node = spec.sourceNode;
        return e;
    }
    Shape s = shape.value();
    for (const data::Stage &stage : buildStages(spec)) {
        auto out = stage.transform->outputShape(s);
        if (!out.ok()) return nodeError(stage.node, out.error().message);
        s = out.value();
    }
    return s;
}

// "3.22 GFLOP", "12 FLOP"
std::string flopsText(double flops)
{
    const std::string n = humanFlops(flops);
    return n + (std::isdigit(static_cast<unsigned char>(n.back())) ? " FLOP" : "FLOP");
}

json shapeJson(const Shape &s)
{
    json a = json::array();
    for (int64_t d : s.dims())
        a.push_back(d);
    return a;
}

// The mean, as the per-layer profile averages: on the CPU the layers' times then add up to the
// step's (a median would not, on a busy machine).
double mean(const std::vector<double> &v)
{
    double sum = 0;
    for (double x : v)
        sum += x;
    return v.empty() ? 0 : sum / double(v.size());
}

} // namespace

Result<ModelSummary> summarizePipeline(const graph::PipelineDocument &doc, int64_t batch)
{
    auto jobResult = readTrainingJob(doc);
    if (!jobResult.ok()) return jobResult.error();
    const TrainingJob &job = jobResult.value();
    auto input = chainShape(job.trainData);
    if (!input.ok()) return input.error();

    ModelSummary s;
    s.inputNode = job.inputNode;
    s.sourceNode = job.trainData.sourceNode;
    s.input = input.value();
    s.batch = batch > 0 ? batch : job.batchSize;
    s.precision = job.precision;

    // The rows follow the graph as drawn; what the compiler changes when the model runs (a ReLU
    // moved after its max pool) is a note, since it changes neither a result nor a parameter.
    auto drawn = buildModel(job, s.input, false);
    if (!drawn.ok()) return drawn.error();
    nn::Model &model = drawn.value();
    const double b = double(s.batch);
    for (const nn::Model::LayerInfo &l : model.layers()) {
        SummaryRow r;
        r.id = l.id;
        r.type = l.type;
        r.inputs = l.inputs;
        r.output = l.outSample;
        r.parameters = l.parameters;
        r.buffers = l.buffers;
        r.forwardFlops = b * l.cost.forward;
        r.backwardFlops = b * (l.cost.backwardInput + l.cost.backwardParams);
        // Counted for every layer: a flatten is a view of NCHW data, but a copy where the device
        // keeps pictures channels-last (the CPU's oneDNN path).
        r.activationBytes = b * double(l.outSample.numel()) * sizeof(float);
        s.parameters += r.parameters;
        s.buffers += r.buffers;
        s.forwardFlops += r.forwardFlops;
        s.backwardFlops += r.backwardFlops;
        s.activationBytes += r.activationBytes;
        s.rows.push_back(std::move(r));
    }
    const double total = s.forwardFlops + s.backwardFlops;
    for (SummaryRow &r : s.rows) {
        r.share = total > 0 ? (r.forwardFlops + r.backwardFlops) / total : 0;
        if (r.share > s.dominantShare) {
            s.dominantShare = r.share;
            s.dominantLayer = r.id;
        }
    }
    s.inputBytes = b * double(s.input.numel()) * sizeof(float);
    s.trainingBytes = model.estimateMemory(s.batch, true, job.optimizer.stateCopies).bytes;

    // The same model compiled as a run compiles it, for its rewrites (the weights stay).
    model.setRewrites(true);
    if (model.compile(s.input).ok())
        for (const std::string &r : model.rewrites())
            s.notes.push_back("when it runs, " + r);
    return s;
}

std::vector<std::string> measurableDevices()
{
    std::vector<std::string> out{"cpu"};
    const Device d = defaultDevice();
    if (d.kind != Device::Kind::Cpu) out.push_back(d.str());
    return out;
}

Measurement measureTraining(const graph::PipelineDocument &doc, const ModelSummary &summary,
                            const std::string &deviceName, int threads, int steps,
                            bool perLayerWanted)
{
    Measurement m;
    m.device = deviceName;
    try {
        auto device = Device::parse(deviceName);
        if (!device.ok()) {
            m.error = device.error().message;
            return m;
        }
        auto backendResult = backendFor(device.value());
        if (!backendResult.ok()) {
            m.error = backendResult.error().message;
            return m;
        }
        Backend &backend = *backendResult.value();
        for (const ComputeDevice &d : listDevices().devices)
            if (d.device == device.value()) m.name = d.name;
        auto job = readTrainingJob(doc);
        if (!job.ok()) {
            m.error = job.error().message;
            return m;
        }
        Precision precision = Precision::Float32;
        if (parsePrecision(job->precision, precision)) backend.setPrecision(precision);
        if (device->kind == Device::Kind::Cpu) {
            m.threads =
                threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
            backend.setThreads(m.threads);
        }
        auto built = buildModel(job.value(), summary.input);
        if (!built.ok()) {
            m.error = built.error().message;
            return m;
        }
        nn::Model &model = built.value();
        model.initialize(job->seed);
        // Per-layer times only where the host clock sees the kernels finish.
        const bool perLayer = perLayerWanted && device->kind == Device::Kind::Cpu;
        auto loss = buildLoss(job.value());
        auto optimizer = buildOptimizer(job->optimizer);
        optimizer->attach(model.parameters());
        model.moveTo(backend);
        optimizer->moveTo(backend);

        // Random pixels in [0, 1) and labels over the model's outputs: the arithmetic of a step
        // does not depend on the values (ReLU's branches aside).
        const int64_t classes = std::max<int64_t>(1, model.outputSample().numel());
        data::Batch batch;
        Tensor x = Tensor::empty(summary.input.prepend(summary.batch));
        Tensor y = Tensor::empty(Shape{summary.batch}, DType::I32);
        Rng rng(job->seed + 1);
        float *xs = x.f32();
        for (int64_t i = 0; i < x.numel(); ++i)
            xs[i] = rng.uniform();
        int32_t *ys = y.data<int32_t>();
        for (int64_t i = 0; i < summary.batch; ++i)
            ys[i] = int32_t(rng.next() % uint64_t(classes));
        batch.x = backend.toDevice(x);
        batch.y = backend.toDevice(y);

        TrainStep step(backend, model, *loss, *optimizer, !perLayer);
        const float lr = job->optimizer.schedule.base;
        const int warmup = 3;
        for (int i = 0; i < warmup; ++i)
            step.run(batch, lr, uint64_t(i));
        backend.synchronize();
        // Profile only the timed steps: the first made the plan and chose the kernels.
        if (perLayer) model.plan(backend, summary.batch, true).setProfiling(true);
        std::vector<double> times;
        for (int i = 0; i < steps; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            step.run(batch, lr, uint64_t(warmup + i));
            backend.synchronize();
            times.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        m.steps = steps;
        m.stepSeconds = mean(times);
        if (m.stepSeconds > 0) {
            m.samplesPerSecond = double(summary.batch) / m.stepSeconds;
            m.gflops = (summary.forwardFlops + summary.backwardFlops) / m.stepSeconds / 1e9;
        }
        if (perLayer) {
            double sum = 0;
            for (const nn::Model::LayerTime &t : model.profile()) {
                const double sec = t.forwardSeconds + t.backwardSeconds;
                m.layerSeconds.emplace_back(t.id, sec);
                sum += sec;
                if (sec > m.slowestShare) {
                    m.slowestShare = sec;
                    m.slowestLayer = t.id;
                }
            }
            m.slowestShare = sum > 0 ? m.slowestShare / sum : 0;
        }
    } catch (const DeviceError &e) {
        m.error = (e.node().empty() ? "" : e.node() + ": ") + std::string(e.what());
    } catch (const std::bad_alloc &) {
        m.error = "out of memory";
    }
    return m;
}

json summaryToJson(const ModelSummary &s)
{
    json rows = json::array();
    for (const SummaryRow &r : s.rows)
        rows.push_back({{"id", r.id},
                        {"type", r.type},
                        {"inputs", r.inputs},
                        {"output", shapeJson(r.output)},
                        {"parameters", r.parameters},
                        {"buffers", r.buffers},
                        {"forward_flops", r.forwardFlops},
                        {"backward_flops", r.backwardFlops},
                        {"activation_bytes", r.activationBytes},
                        {"share", r.share}});
    json measured = json::array();
    for (const Measurement &m : s.measurements) {
        json j{{"device", m.device}, {"name", m.name}};
        if (!m.error.empty()) {
            j["error"] = m.error;
        } else {
            j["threads"] = m.threads;
            j["steps"] = m.steps;
            j["step_s"] = m.stepSeconds;
            j["samples_per_s"] = m.samplesPerSecond;
            j["gflops"] = m.gflops;
            json layers = json::array();
            for (const auto &[id, sec] : m.layerSeconds)
                layers.push_back({{"id", id}, {"seconds", sec}});
            j["layers"] = layers;
            j["slowest"] = m.slowestLayer.empty()
                               ? json(nullptr)
                               : json{{"node", m.slowestLayer}, {"share", m.slowestShare}};
        }
        measured.push_back(j);
    }
    return json{{"format", "flowbench.summary"},
                {"version", 1},
                {"input", {{"node", s.inputNode}, {"source", s.sourceNode},
                           {"shape", shapeJson(s.input)}}},
                {"batch", s.batch},
                {"precision", s.precision},
                {"layers", rows},
                {"totals",
                 {{"parameters", s.parameters},
                  {"buffers", s.buffers},
                  {"forward_flops", s.forwardFlops},
                  {"backward_flops", s.backwardFlops},
                  {"activation_bytes", s.activationBytes},
                  {"input_bytes", s.inputBytes},
                  {"training_bytes", s.trainingBytes}}},
                {"dominant", s.dominantLayer.empty()
                                 ? json(nullptr)
                                 : json{{"node", s.dominantLayer}, {"share", s.dominantShare}}},
                {"notes", s.notes},
                {"measured", measured}};
}

std::string summaryToText(const ModelSummary &s)
{
    std::string out;
    char line[512];
    auto add = [&](const char *node, const char *type, const std::string &shape,
                   const std::string &params, const std::string &fwd, const std::string &bwd,
                   const std::string &mem, const std::string &share) {
        std::snprintf(line, sizeof line, "  %-16s %-16s %-16s %11s %12s %12s %11s %6s\n", node,
                      type, shape.c_str(), params.c_str(), fwd.c_str(), bwd.c_str(), mem.c_str(),
                      share.c_str());
        out += line;
    };
    auto pct = [](double share) {
        char b[16];
        std::snprintf(b, sizeof b, "%.1f%%", 100 * share);
        return std::string(b);
    };
    std::snprintf(line, sizeof line,
                  "Model: input %s from '%s', batch %lld; FLOPs and memory for one training step "
                  "of the batch\n\n",
                  s.input.str().c_str(), s.sourceNode.c_str(), (long long)s.batch);
    out += line;
    add("node", "type", "output", "parameters", "fwd FLOPs", "bwd FLOPs", "activations", "share");
    add(s.inputNode.c_str(), "input", s.input.str(), "", "", "", humanBytes(s.inputBytes), "");
    for (const SummaryRow &r : s.rows)
        add(r.id.c_str(), r.type.c_str(), r.output.str(), groupedDigits(r.parameters),
            humanFlops(r.forwardFlops), humanFlops(r.backwardFlops),
            humanBytes(r.activationBytes), pct(r.share));
    add("total", "", "", groupedDigits(s.parameters), humanFlops(s.forwardFlops),
        humanFlops(s.backwardFlops), humanBytes(s.activationBytes), "");
    out += "\n";
    std::snprintf(line, sizeof line,
                  "  parameters: %s trainable (%s), %s more saved and not trained\n",
                  groupedDigits(s.parameters).c_str(),
                  humanBytes(double(s.parameters) * sizeof(float)).c_str(),
                  groupedDigits(s.buffers).c_str());
    out += line;
    std::snprintf(line, sizeof line,
                  "  FLOPs per step: %s (%s per sample; a multiply-add counts 2)\n",
                  flopsText(s.forwardFlops + s.backwardFlops).c_str(),
                  flopsText((s.forwardFlops + s.backwardFlops) / double(s.batch)).c_str());
    out += line;
    if (!s.dominantLayer.empty()) {
        std::snprintf(line, sizeof line, "  dominant layer: %s, %s of the step's FLOPs\n",
                      s.dominantLayer.c_str(), pct(s.dominantShare).c_str());
        out += line;
    }
    std::snprintf(line, sizeof line,
                  "  training memory: at least %s (weights, gradients, optimizer state, "
                  "activations and their gradients, the batch)\n",
                  humanBytes(s.trainingBytes).c_str());
    out += line;
    for (const std::string &n : s.notes)
        out += "  " + n + "\n";
    for (const Measurement &m : s.measurements) {
        std::string who = m.device;
        if (!m.name.empty()) who += " (" + m.name + ")";
        if (m.threads > 0) who += ", " + std::to_string(m.threads) + " threads";
        if (!m.error.empty()) {
            out += "  measured on " + who + ": could not run: " + m.error + "\n";
            continue;
        }
        std::snprintf(line, sizeof line,
                      "  measured on %s: %.2f ms per step (mean of %lld), %.0f samples/s, "
                      "%.1f GFLOP/s achieved\n",
                      who.c_str(), 1e3 * m.stepSeconds, (long long)m.steps, m.samplesPerSecond,
                      m.gflops);
        out += line;
        if (!m.slowestLayer.empty()) {
            std::snprintf(line, sizeof line, "    slowest layer: %s, %s of the measured time\n",
                          m.slowestLayer.c_str(), pct(m.slowestShare).c_str());
            out += line;
        }
    }
    return out;
}

} // namespace fb::exec
