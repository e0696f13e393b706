#pragma once

#include "core/nn/layer.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fb::nn {

struct NamedParameter {
    std::string name; // "conv1.weight"
    Parameter *param;
};

class Model;

// A model compiled for one batch size and mode: every activation and gradient buffer, and every
// kernel, is made once here and reused step after step.
class Plan {
public:
    // Runs the model on x ([batch, ...sample shape], float32) and returns the output.
    const Tensor &forward(const Tensor &x, const StepContext &ctx);
    // Where the loss writes d(loss)/d(output) before backward().
    const Tensor &outputGrad() const { return m_grads[size_t(m_output)]; }
    // Fills every parameter's gradient (overwriting it). `layerDone`, when given, is called with
    // each node's id as soon as its backward pass is done, its parameters' gradients final (a
    // data-parallel step starts summing them across ranks while the earlier layers compute).
    void backward(const StepContext &ctx,
                  const std::function<void(const std::string &node)> &layerDone = {});
    int64_t batch() const { return m_batch; }
    // Bytes of activations, gradients and scratch this plan holds.
    size_t bytes() const { return m_bytes; }
    // Per-layer timing of forward and backward passes (off by default: it adds a clock read per
    // layer and call).
    void setProfiling(bool on) { m_profiling = on; }

private:
    friend class Model;
    struct Step {
        int node;                    // index into the model's nodes
        std::string id;              // that node's id, for errors
        std::vector<int> in;         // value ids (0 = model input)
        std::vector<int> scratchFor; // per input: scratch index, or -1 to write the value's grad
        std::unique_ptr<LayerRun> run;
        bool view = false;
        Shape outShape;
        double forwardSeconds = 0, backwardSeconds = 0;
        int64_t calls = 0;
    };
    Backend *m_backend = nullptr;
    int64_t m_batch = 0;
    int m_output = 0;
    bool m_training = false;
    std::vector<Tensor> m_values; // value v = output of node v-1; value 0 = model input
    std::vector<Tensor> m_grads;  // training only; m_grads[0] unused
    std::vector<Tensor> m_scratch;
    Tensor m_inputNhwc; // the input transposed, for channels-last backends
    std::vector<Step> m_steps;
    size_t m_bytes = 0;
    bool m_profiling = false;
};

// The model part of a pipeline: a static DAG of layers from one input to one output.
class Model {
public:
    Model() = default;
    Model(Model &&) = default;
    Model &operator=(Model &&) = default;

    void setInput(std::string id) { m_inputId = std::move(id); }
    // Layers are added in topological order: inputs name the input node or earlier layers.
    Status addLayer(std::string id, std::unique_ptr<Layer> layer, std::vector<std::string> inputs);
    Status setOutput(const std::string &id);

    // Shape inference for one sample; a mismatch is an error naming the node and both shapes.
    // Then rewrites that keep every result and gradient (see moveActivationsAfterPooling).
    // A layer whose parameters alone need more than the memory limit (setMemoryLimit) is refused,
    // naming it and the sizes, before anything is allocated.
    Status compile(const Shape &inputSample);
    // The host memory the weights may take (they are made there, then moved): the room left on
    // this machine. 0, the default: no check.
    void setMemoryLimit(int64_t bytes) { m_memoryLimit = bytes; }

    // At least the memory a plan for this batch takes (after compile): every parameter and buffer,
    // in training with its gradient and `optimizerCopies` more (momentum: 1, Adam: 2), and every
    // layer's output, in training with its gradient. Kernels' scratch and workspaces come on top,
    // so this is a lower bound. Also the node that takes the most, to name when it cannot fit.
    struct MemoryEstimate {
        double bytes = 0;
        std::string largestNode; // the node whose share is the largest
        double largestBytes = 0;
        std::string largestWhat; // "its output [128, 65536, 28, 28] and its gradient"
    };
    MemoryEstimate estimateMemory(int64_t batch, bool training, int optimizerCopies) const;
    // Whether compile() may rewrite the graph (on by default; tests compare both ways).
    void setRewrites(bool on) { m_rewritesEnabled = on; }
    // What compile() rewrote, for people: "relu1 now runs after pool1 ...".
    const std::vector<std::string> &rewrites() const { return m_rewrites; }
    // Same seed, same weights (PyTorch's default schemes, our own generator). Call it before the
    // weights move to a device.
    void initialize(uint64_t seed);
    // Moves the weights and buffers into the backend's memory (plan() does it too). Throws
    // DeviceError, naming the node, when the device has no room for them.
    void moveTo(Backend &backend);

    std::vector<NamedParameter> parameters();
    std::vector<std::pair<std::string, Tensor>> buffers(); // "bn1.running_mean"
    int64_t parameterCount();
    const Shape &inputSample() const { return m_inputSample; }
    const Shape &outputSample() const { return m_outputSample; }
    // One line per layer: id, type, output shape, parameter count.
    std::string summary();
    // Each layer as compiled, in the order it runs (the model summary's rows).
    struct LayerInfo {
        std::string id, type;
        std::vector<std::string> inputs; // node ids, the input node's included
        Shape outSample;
        int64_t parameters = 0; // trainable numbers
        int64_t buffers = 0;    // saved but not trained (batch norm's running statistics)
        // Per sample; backwardInput is 0 where every input is the model's input, whose gradient
        // the plan never computes.
        LayerCost cost;
    };
    std::vector<LayerInfo> layers();
    // Writes every layer as ONNX operators (Layer::exportTo) reading `input` ([N, ...input
    // sample]); returns the output's name. A layer that cannot be exported is an error naming it.
    Result<std::string> exportTo(ExportGraph &g, const std::string &input) const;

    // The plan for this batch size and mode, made on first use. Throws DeviceError naming the
    // node whose kernel or buffers could not be made (out of GPU memory, a failed library call).
    Plan &plan(Backend &backend, int64_t batch, bool training);
    // Profiles every plan made from now on.
    void setProfiling(bool on) { m_profiling = on; }
    // Where the time went, per layer, over every profiled training plan: a table for people.
    std::string profileReport() const;
    // The same as numbers: seconds per training step, per layer in the order they run (empty
    // before a profiled training step).
    struct LayerTime {
        std::string id, type;
        double forwardSeconds = 0, backwardSeconds = 0;
    };
    std::vector<LayerTime> profile() const;

private:
    struct Node {
        std::string id;
        std::unique_ptr<Layer> layer;
        std::vector<int> inputs; // value ids
        Shape outSample;
        double state = 0; // parameters and buffers (Layer::stateCount)
    };
    int valueOf(const std::string &id) const; // -1 when unknown
    int64_t profiledSteps() const;            // training steps the profiled plans ran
    void moveActivationsAfterPooling();
    std::unique_ptr<Plan> makePlan(Backend &backend, int64_t batch, bool training);

    std::string m_inputId;
    std::vector<Node> m_nodes;
    int m_output = -1; // value id
    Shape m_inputSample, m_outputSample;
    bool m_compiled = false;
    int64_t m_memoryLimit = 0;
    bool m_rewritesEnabled = true;
    std::vector<std::string> m_rewrites;
    std::map<std::pair<int64_t, bool>, std::unique_ptr<Plan>> m_plans;
    Backend *m_planBackend = nullptr;
    bool m_profiling = false;
};

} // namespace fb::nn
