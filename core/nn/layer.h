#pragma once

#include "core/backend/backend.h"
#include "core/base/export_graph.h"
#include "core/base/result.h"
#include "core/base/rng.h"

#include <memory>
#include <string>
#include <vector>

namespace fb::nn {

// A trainable tensor and its gradient (the gradient exists once a training plan is made).
struct Parameter {
    std::string name; // "weight", "bias"
    Tensor value;
    Tensor grad;
};

// What a step needs besides tensors.
struct StepContext {
    bool training = true;
    uint64_t seed = 0; // the step's seed (StepValues::seed): dropout masks
    uint64_t salt = 0; // the layer's own, mixed into the step's seed by its random ops
};

// A layer made for one batch size: its kernels and scratch memory are created once, when the
// plan is compiled, and reused every step.
class LayerRun {
public:
    virtual ~LayerRun() = default;
    virtual void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                         const StepContext &ctx) = 0;
    // din[i] is null where input i needs no gradient (the data itself). Writes (not adds) din
    // and the parameters' gradients.
    virtual void backward(const std::vector<const Tensor *> &in, const Tensor &out,
                          const Tensor &dout, const std::vector<const Tensor *> &din,
                          const StepContext &ctx) = 0;
};

// What one sample costs a layer, in floating-point operations (docs/summary.md): a multiply-add
// counts as 2, as in the papers that report FLOPs (fvcore and torch.utils.flop_counter count it
// as 1 and call that a FLOP; ours are twice theirs for convolutions and matrix products). The
// backward pass is split in two because the model's first layer needs no gradient for its input
// (the data), and the plan does not compute it.
struct LayerCost {
    double forward = 0;
    double backwardInput = 0;  // d(loss)/d(input) from d(loss)/d(output)
    double backwardParams = 0; // the parameters' gradients
};

class Layer {
public:
    virtual ~Layer() = default;
    virtual std::string type() const = 0;
    virtual int inputCount() const { return 1; }
    // Shape inference on per-sample shapes (no batch dimension). Layers whose parameters depend
    // on the input (Linear's in_features) create them here, once.
    virtual Result<Shape> build(const std::vector<Shape> &inSample) = 0;
    // The numbers build() would make for these inputs (parameters and buffers; 0 for inputs it
    // refuses), without making them: compile() refuses a layer that cannot fit in memory before
    // trying to allocate it.
    virtual double stateCount(const std::vector<Shape> &inSample) const { return 0; }
    // FLOPs for one sample of these shapes (after build()): every layer says what it costs, so the
    // model summary has no layer it cannot count.
    virtual LayerCost cost(const std::vector<Shape> &inSample, const Shape &outSample) const = 0;
    // Writes the layer as ONNX operators (opset 17) that read `inputs` ([N, ...inSample], NCHW)
    // and write `output`, for its inference form (dropout passes through, batch norm uses its
    // running statistics), with its weights as constants (they must be in host memory). Every
    // layer says how, or why it cannot: the export then refuses the model, naming the node.
    virtual Status exportTo(ExportGraph &g, const std::vector<std::string> &inputs,
                            const std::string &output, const std::vector<Shape> &inSample) const = 0;
    virtual std::vector<Parameter *> parameters() { return {}; }
    // Non-trainable state saved with the weights (batch norm's running statistics).
    virtual std::vector<std::pair<std::string, Tensor>> buffers() { return {}; }
    // PyTorch's default initialization for this layer type (on host memory: before moveTo).
    virtual void initialize(Rng &rng) {}
    // Moves parameters and buffers into b's memory (a no-op where they are already); gradients
    // are made again there by the next training plan.
    virtual void moveTo(Backend &b)
    {
        for (Parameter *p : parameters()) {
            if (p->value.device() == b.device()) continue;
            p->value = b.toDevice(p->value);
            p->grad = Tensor();
        }
    }
    // The output aliases the input's storage (Flatten of NCHW data): no copy in the forward pass.
    // Image tensors are stored NHWC when backend.prefersChannelsLast() (see backend.h).
    virtual bool isView(Backend &backend, const Shape &in) const { return false; }
    // Whether isView() can be true on some backend: memory estimates leave such outputs out.
    virtual bool mayBeView() const { return false; }
    // An elementwise function that never decreases (ReLU, leaky ReLU) gives the same result after
    // a max pool as before it, on fewer elements: the model compiler swaps the two.
    virtual bool commutesWithMaxPool() const { return false; }
    virtual bool isMaxPool() const { return false; }
    virtual std::unique_ptr<LayerRun> instantiate(Backend &backend, const std::vector<Shape> &in,
                                                  const Shape &out) = 0;
};

} // namespace fb::nn
