#include "core/nn/model.h"

#include "core/nn/layout.h"

#include "core/base/bytes.h"
#include "core/base/check.h"

#include <chrono>
#include <cstdio>

namespace fb::nn {

int Model::valueOf(const std::string &id) const
{
    if (id == m_inputId) return 0;
    for (size_t i = 0; i < m_nodes.size(); ++i)
        if (m_nodes[i].id == id) return int(i) + 1;
    return -1;
}

Status Model::addLayer(std::string id, std::unique_ptr<Layer> layer,
                       std::vector<std::string> inputs)
{
    // After a rewrite, ids name the reordered nodes; building on them would skip a layer.
    FB_ASSERT(m_rewrites.empty(), "add every layer before compile()");
    if (int(inputs.size()) != layer->inputCount())
        return nodeError(id, layer->type() + " takes " + std::to_string(layer->inputCount()) +
                                 " input(s), got " + std::to_string(inputs.size()));
    Node n{std::move(id), std::move(layer), {}, {}};
    for (const auto &in : inputs) {
        const int v = valueOf(in);
        if (v < 0) return nodeError(n.id, "input '" + in + "' is not an earlier node of the model");
        n.inputs.push_back(v);
    }
    m_nodes.push_back(std::move(n));
    m_compiled = false;
    return {};
}

Status Model::setOutput(const std::string &id)
{
    FB_ASSERT(m_rewrites.empty(), "set the output before compile()");
    m_output = valueOf(id);
    if (m_output <= 0) return nodeError(id, "the model's output must be a layer");
    return {};
}

// A ReLU whose only consumer is a max pooling commutes with it: ReLU is monotonic, so the
// largest input of a window is also the largest output, forward and backward (where the window
// is all negative, both orders give zero output and zero gradient). Pooling first leaves the
// ReLU a quarter of the elements with 2x2 windows, and both are memory-bound passes. The two
// nodes swap places (ids with their layers) so reports show the order that runs.
void Model::moveActivationsAfterPooling()
{
    std::vector<int> consumers(m_nodes.size() + 1, 0);
    for (const auto &n : m_nodes)
        for (int v : n.inputs)
            ++consumers[size_t(v)];
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        const int v = int(i) + 1;
        if (!m_nodes[i].layer->commutesWithMaxPool() || consumers[size_t(v)] != 1 ||
            v == m_output)
            continue;
        for (size_t j = i + 1; j < m_nodes.size(); ++j) {
            if (m_nodes[j].inputs != std::vector<int>{v}) continue;
            if (!m_nodes[j].layer->isMaxPool()) break;
            std::swap(m_nodes[i].layer, m_nodes[j].layer);
            std::swap(m_nodes[i].id, m_nodes[j].id);
            m_rewrites.push_back(m_nodes[j].id + " runs after " + m_nodes[i].id +
                                 " (the same result on fewer elements)");
            break;
        }
    }
}

Status Model::compile(const Shape &inputSample)
{
    if (m_output <= 0) return makeError("the model has no output layer");
    m_inputSample = inputSample;
    std::vector<Shape> shapes{inputSample};
    for (auto &n : m_nodes) {
        std::vector<Shape> in;
        for (int v : n.inputs)
            in.push_back(shapes[size_t(v)]);
        n.state = n.layer->stateCount(in);
        const double stateBytes = n.state * double(sizeof(float));
        if (m_memoryLimit > 0 && stateBytes > double(m_memoryLimit)) {
            char count[32];
            std::snprintf(count, sizeof count, "%.4g", n.state);
            return nodeError(n.id, "is too large for this machine's memory: its " +
                                       std::string(count) + " parameters (for the input " +
                                       in[0].str() + ") need " + humanBytes(stateBytes) +
                                       ", and " + humanBytes(double(m_memoryLimit)) +
                                       " is available. Make the layer smaller");
        }
        auto out = n.layer->build(in);
        if (!out.ok()) {
            std::string from;
            for (size_t i = 0; i < n.inputs.size(); ++i) {
                const int v = n.inputs[i];
                from += (i ? ", " : "") + std::string("'") +
                        (v == 0 ? m_inputId : m_nodes[size_t(v - 1)].id) + "' gives " +
                        shapes[size_t(v)].str();
            }
            return nodeError(n.id, out.error().message + " (input: " + from + ")");
        }
        n.outSample = out.value();
        shapes.push_back(out.value());
    }
    if (m_rewritesEnabled && m_rewrites.empty()) {
        moveActivationsAfterPooling();
        if (!m_rewrites.empty()) return compile(inputSample); // shapes of the new order
    }
    m_outputSample = shapes[size_t(m_output)];
    m_compiled = true;
    m_plans.clear();
    return {};
}

Model::MemoryEstimate Model::estimateMemory(int64_t batch, bool training, int optimizerCopies) const
{
    MemoryEstimate e;
    const double f = double(sizeof(float));
    auto take = [&](const std::string &node, double bytes, std::string what) {
        e.bytes += bytes;
        if (bytes > e.largestBytes) {
            e.largestBytes = bytes;
            e.largestNode = node;
            e.largestWhat = std::move(what);
        }
    };
    const double stateCopies = training ? 2.0 + optimizerCopies : 1.0;
    const std::string gradient = training ? " and its gradient" : "";
    for (const auto &n : m_nodes) {
        // An output that may be a view of its input (flatten) is not counted, so that the figure
        // stays a lower bound.
        const double out = double(n.outSample.numel()) * double(batch) * f;
        const double values = n.layer->mayBeView() ? 0 : out;
        const Shape shape = n.outSample.prepend(batch);
        take(n.id, values + (training ? out : 0), "its output " + shape.str() + gradient);
        if (n.state > 0)
            take(n.id, n.state * f * stateCopies,
                 "its parameters" + std::string(training ? ", their gradients and the "
                                                           "optimizer's state"
                                                         : ""));
    }
    e.bytes += double(m_inputSample.numel()) * double(batch) * f; // the batch itself
    return e;
}

void Model::initialize(uint64_t seed)
{
    Rng rng(seed);
    for (auto &n : m_nodes)
        n.layer->initialize(rng);
}

std::vector<NamedParameter> Model::parameters()
{
    std::vector<NamedParameter> out;
    for (auto &n : m_nodes)
        for (Parameter *p : n.layer->parameters())
            out.push_back({n.id + "." + p->name, p});
    return out;
}

std::vector<std::pair<std::string, Tensor>> Model::buffers()
{
    std::vector<std::pair<std::string, Tensor>> out;
    for (auto &n : m_nodes)
        for (auto &[name, t] : n.layer->buffers())
            out.emplace_back(n.id + "." + name, t);
    return out;
}

int64_t Model::parameterCount()
{
    int64_t count = 0;
    for (auto &p : parameters())
        count += p.param->value.numel();
    return count;
}

std::string Model::summary()
{
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %-12s %-18s %s\n", "node", "type", "output",
                  "parameters");
    out += line;
    std::snprintf(line, sizeof line, "  %-14s %-12s %-18s\n", m_inputId.c_str(), "input",
                  m_inputSample.str().c_str());
    out += line;
    for (auto &n : m_nodes) {
        int64_t count = 0;
        for (Parameter *p : n.layer->parameters())
            count += p->value.numel();
        std::snprintf(line, sizeof line, "  %-14s %-12s %-18s %lld\n", n.id.c_str(),
                      n.layer->type().c_str(), n.outSample.str().c_str(), (long long)count);
        out += line;
    }
    for (const auto &r : m_rewrites)
        out += "  compiled: " + r + "\n";
    return out;
}

std::vector<Model::LayerInfo> Model::layers()
{
    FB_ASSERT(m_compiled, "compile the model before describing its layers");
    std::vector<Shape> shapes{m_inputSample};
    std::vector<LayerInfo> out;
    for (auto &n : m_nodes) {
        LayerInfo info;
        info.id = n.id;
        info.type = n.layer->type();
        std::vector<Shape> in;
        bool fromLayers = false;
        for (int v : n.inputs) {
            info.inputs.push_back(v == 0 ? m_inputId : m_nodes[size_t(v - 1)].id);
            in.push_back(shapes[size_t(v)]);
            fromLayers = fromLayers || v != 0;
        }
        info.outSample = n.outSample;
        for (Parameter *p : n.layer->parameters())
            info.parameters += p->value.numel();
        for (auto &[name, t] : n.layer->buffers())
            info.buffers += t.numel();
        info.cost = n.layer->cost(in, n.outSample);
        if (!fromLayers) info.cost.backwardInput = 0;
        shapes.push_back(n.outSample);
        out.push_back(std::move(info));
    }
    return out;
}

Result<std::string> Model::exportTo(ExportGraph &g, const std::string &input) const
{
    FB_ASSERT(m_compiled, "compile the model before exporting it");
    std::vector<std::string> names{input};
    std::vector<Shape> shapes{m_inputSample};
    for (const auto &n : m_nodes) {
        std::vector<std::string> in;
        std::vector<Shape> inShapes;
        for (int v : n.inputs) {
            in.push_back(names[size_t(v)]);
            inShapes.push_back(shapes[size_t(v)]);
        }
        const std::string out = g.name(n.id);
        Status s = n.layer->exportTo(g, in, out, inShapes);
        if (!s.ok()) return nodeError(n.id, s.error().message);
        names.push_back(out);
        shapes.push_back(n.outSample);
    }
    return names[size_t(m_output)];
}

int64_t Model::profiledSteps() const
{
    int64_t steps = 0;
    for (const auto &[key, plan] : m_plans)
        if (key.second && plan->m_profiling && !plan->m_steps.empty())
            steps += plan->m_steps.front().calls;
    return steps;
}

std::vector<Model::LayerTime> Model::profile() const
{
    const int64_t steps = profiledSteps();
    if (steps == 0) return {};
    std::vector<LayerTime> out(m_nodes.size());
    for (const auto &[key, plan] : m_plans) {
        if (!key.second || !plan->m_profiling) continue;
        for (const auto &s : plan->m_steps) {
            out[size_t(s.node)].forwardSeconds += s.forwardSeconds;
            out[size_t(s.node)].backwardSeconds += s.backwardSeconds;
        }
    }
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        out[i].id = m_nodes[i].id;
        out[i].type = m_nodes[i].layer->type();
        out[i].forwardSeconds /= double(steps);
        out[i].backwardSeconds /= double(steps);
    }
    return out;
}

std::string Model::profileReport() const
{
    const std::vector<LayerTime> times = profile();
    if (times.empty()) return {};
    double total = 0;
    for (const LayerTime &t : times)
        total += t.forwardSeconds + t.backwardSeconds;
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %-12s %12s %12s %7s\n", "node", "type", "forward ms",
                  "backward ms", "share");
    out += line;
    for (const LayerTime &t : times) {
        std::snprintf(line, sizeof line, "  %-14s %-12s %12.3f %12.3f %6.1f%%\n", t.id.c_str(),
                      t.type.c_str(), 1e3 * t.forwardSeconds, 1e3 * t.backwardSeconds,
                      total > 0 ? 100.0 * (t.forwardSeconds + t.backwardSeconds) / total : 0.0);
        out += line;
    }
    std::snprintf(line, sizeof line, "  per training step, averaged over %lld steps: %.3f ms\n",
                  (long long)profiledSteps(), 1e3 * total);
    return out + line;
}

namespace {

// Runs f; a DeviceError from it (a kernel or buffer the device cannot make) becomes this node's
// problem in the user's terms.
template <class F> void atNode(const std::string &id, F &&f)
{
    try {
        f();
    } catch (DeviceError &e) {
        if (e.node().empty()) e.setNode(id);
        throw;
    }
}

} // namespace

void Model::moveTo(Backend &backend)
{
    for (auto &n : m_nodes)
        atNode(n.id, [&] { n.layer->moveTo(backend); });
}

Plan &Model::plan(Backend &backend, int64_t batch, bool training)
{
    FB_ASSERT(m_compiled, "compile the model before making a plan");
    if (m_planBackend != &backend) {
        m_plans.clear();
        moveTo(backend);
        m_planBackend = &backend;
    }
    auto &slot = m_plans[{batch, training}];
    if (!slot) {
        slot = makePlan(backend, batch, training);
        slot->setProfiling(m_profiling);
    }
    return *slot;
}

std::unique_ptr<Plan> Model::makePlan(Backend &backend, int64_t batch, bool training)
{
    auto plan = std::make_unique<Plan>();
    Plan &p = *plan;
    p.m_batch = batch;
    p.m_training = training;
    p.m_output = m_output;
    p.m_backend = &backend;
    const size_t values = m_nodes.size() + 1;
    p.m_values.resize(values);
    p.m_grads.resize(values);
    std::vector<Shape> shapes(values);
    shapes[0] = m_inputSample.prepend(batch);
    // Data arrives NCHW; a channels-last backend gets it transposed once per step (free for
    // one-channel images, whose two layouts are the same bytes).
    const Shape &in = shapes[0];
    if (storedTransposed(backend, in)) {
        p.m_inputNhwc = backend.empty(in);
        p.m_bytes += p.m_inputNhwc.bytes();
    }

    for (size_t i = 0; i < m_nodes.size(); ++i) {
        Node &n = m_nodes[i];
        const int v = int(i) + 1;
        shapes[size_t(v)] = n.outSample.prepend(batch);
        atNode(n.id, [&] {
            Plan::Step step;
            step.node = int(i);
            step.id = n.id;
            step.in = n.inputs;
            step.outShape = shapes[size_t(v)];
            std::vector<Shape> inShapes;
            for (int u : n.inputs)
                inShapes.push_back(shapes[size_t(u)]);
            step.view = n.layer->isView(backend, inShapes[0]);
            step.run = n.layer->instantiate(backend, inShapes, shapes[size_t(v)]);
            if (!step.view) {
                p.m_values[size_t(v)] = backend.empty(shapes[size_t(v)]);
                p.m_bytes += p.m_values[size_t(v)].bytes();
            }
            p.m_steps.push_back(std::move(step));
        });
    }

    if (training) {
        for (auto &n : m_nodes)
            for (Parameter *param : n.layer->parameters())
                if (!param->grad.defined() || param->grad.device() != backend.device())
                    atNode(n.id, [&] { param->grad = backend.empty(param->value.shape()); });
        for (size_t v = 1; v < values; ++v) {
            atNode(m_nodes[v - 1].id, [&] { p.m_grads[v] = backend.empty(shapes[v]); });
            p.m_bytes += p.m_grads[v].bytes();
        }
        // Walk the backward pass once to see which gradients several consumers add to: the
        // first writes the value's gradient, the others write scratch that is then added.
        std::vector<bool> written(values, false);
        written[size_t(m_output)] = true;
        for (auto it = p.m_steps.rbegin(); it != p.m_steps.rend(); ++it) {
            it->scratchFor.assign(it->in.size(), -1);
            for (size_t k = 0; k < it->in.size(); ++k) {
                const int u = it->in[k];
                if (u == 0) continue;
                if (!written[size_t(u)]) {
                    written[size_t(u)] = true;
                } else {
                    it->scratchFor[k] = int(p.m_scratch.size());
                    p.m_scratch.push_back(backend.empty(shapes[size_t(u)]));
                    p.m_bytes += p.m_scratch.back().bytes();
                }
            }
        }
    }
    return plan;
}

const Tensor &Plan::forward(const Tensor &x, const StepContext &ctx)
{
    FB_ASSERT(x.shape()[0] == m_batch, "batch size differs from the plan's");
    if (m_inputNhwc.defined()) {
        transposeNhwc(x.f32(), m_inputNhwc.f32(), x.shape(), false);
        m_values[0] = m_inputNhwc;
    } else {
        m_values[0] = x;
    }
    std::vector<const Tensor *> in;
    StepContext stepCtx = ctx;
    stepCtx.training = m_training && ctx.training;
    for (auto &s : m_steps) {
        const size_t out = size_t(s.node) + 1;
        if (s.view) m_values[out] = m_values[size_t(s.in[0])].reshaped(s.outShape);
        in.clear();
        for (int u : s.in)
            in.push_back(&m_values[size_t(u)]);
        stepCtx.salt = mix64(uint64_t(s.node) + 1);
        atNode(s.id, [&] {
            if (m_profiling) {
                const auto t0 = std::chrono::steady_clock::now();
                s.run->forward(in, m_values[out], stepCtx);
                s.forwardSeconds +=
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                ++s.calls;
            } else {
                s.run->forward(in, m_values[out], stepCtx);
            }
        });
    }
    return m_values[size_t(m_output)];
}

void Plan::backward(const StepContext &ctx,
                    const std::function<void(const std::string &node)> &layerDone)
{
    FB_ASSERT(m_training, "backward needs a training plan");
    std::vector<const Tensor *> in, din;
    StepContext stepCtx = ctx;
    for (auto it = m_steps.rbegin(); it != m_steps.rend(); ++it) {
        const size_t out = size_t(it->node) + 1;
        in.clear();
        din.clear();
        for (size_t k = 0; k < it->in.size(); ++k) {
            const int u = it->in[k];
            in.push_back(&m_values[size_t(u)]);
            if (u == 0)
                din.push_back(nullptr);
            else if (it->scratchFor[k] >= 0)
                din.push_back(&m_scratch[size_t(it->scratchFor[k])]);
            else
                din.push_back(&m_grads[size_t(u)]);
        }
        stepCtx.salt = mix64(uint64_t(it->node) + 1);
        const auto t0 = m_profiling ? std::chrono::steady_clock::now()
                                    : std::chrono::steady_clock::time_point{};
        atNode(it->id, [&] { it->run->backward(in, m_values[out], m_grads[out], din, stepCtx); });
        if (m_profiling)
            it->backwardSeconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        for (size_t k = 0; k < it->in.size(); ++k) {
            if (it->scratchFor[k] < 0) continue;
            const Tensor &g = m_grads[size_t(it->in[k])];
            m_backend->accumulate(g.f32(), m_scratch[size_t(it->scratchFor[k])].f32(), g.numel());
        }
        if (layerDone) layerDone(it->id);
    }
}

} // namespace fb::nn
