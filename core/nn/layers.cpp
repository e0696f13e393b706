#include "core/nn/layers.h"

#include "core/nn/layout.h"

#include "core/base/check.h"

#include <cmath>
#include <utility>

namespace fb::nn {

void initUniformFanIn(Tensor &t, int64_t fanIn, Rng &rng)
{
    const float bound = fanIn > 0 ? 1.0f / std::sqrt(float(fanIn)) : 0.0f;
    float *p = t.f32();
    for (int64_t i = 0; i < t.numel(); ++i)
        p[i] = rng.uniform(-bound, bound);
}

namespace {

Parameter makeParam(const char *name, const Shape &shape)
{
    return Parameter{name, Tensor::zeros(shape), {}};
}

// A tensor's values for an exported constant; the export runs on weights in host memory.
std::vector<float> hostValues(const Tensor &t)
{
    FB_ASSERT(t.device().kind == Device::Kind::Cpu, "export reads weights in host memory");
    return std::vector<float>(t.f32(), t.f32() + t.numel());
}

std::vector<int64_t> dimsOf(const Tensor &t)
{
    return t.shape().dims();
}

// A weight (and a bias when there is one) as constants named after the output.
std::vector<std::string> weightInputs(ExportGraph &g, const std::string &x, const std::string &out,
                                      const Parameter &w, const Parameter *b)
{
    std::vector<std::string> in{x, g.constant(out + ".weight", dimsOf(w.value), hostValues(w.value))};
    if (b) in.push_back(g.constant(out + ".bias", dimsOf(b->value), hostValues(b->value)));
    return in;
}

std::string shapeList(const std::vector<Shape> &s)
{
    std::string out;
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? " and " : "") + s[i].str();
    return out;
}

// ---- Layers with weights and an optional bias (Linear, Conv2d): their kernels share one
// calling convention, so one run type drives both. ----

template <class Kernel> class WeightedRun final : public LayerRun {
public:
    WeightedRun(std::unique_ptr<Kernel> kernel, Parameter &w, Parameter *bias)
        : m_kernel(std::move(kernel))
        , m_w(w)
        , m_b(bias)
    {}
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &) override
    {
        m_kernel->forward(in[0]->f32(), m_w.value.f32(), m_b ? m_b->value.f32() : nullptr,
                          out.f32());
    }
    void backward(const std::vector<const Tensor *> &in, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &) override
    {
        if (din[0]) m_kernel->backwardData(dout.f32(), m_w.value.f32(), din[0]->f32());
        m_kernel->backwardWeights(in[0]->f32(), dout.f32(), m_w.grad.f32(),
                                  m_b ? m_b->grad.f32() : nullptr);
    }

private:
    std::unique_ptr<Kernel> m_kernel;
    Parameter &m_w;
    Parameter *m_b;
};

// ---- Linear ----

class Linear final : public Layer {
public:
    Linear(int64_t out, bool bias)
        : m_out(out)
        , m_hasBias(bias)
    {}
    std::string type() const override { return "linear"; }
    Result<Shape> build(const std::vector<Shape> &in) override
    {
        if (in[0].rank() != 1)
            return makeError("linear expects a flat input of shape [features], got " + in[0].str() +
                             "; put a flatten node before it");
        m_in = in[0][0];
        if (!m_w.value.defined() || m_w.value.shape() != Shape{m_out, m_in}) {
            m_w = makeParam("weight", {m_out, m_in});
            if (m_hasBias) m_b = makeParam("bias", {m_out});
        }
        return Shape{m_out};
    }
    double stateCount(const std::vector<Shape> &in) const override
    {
        if (in[0].rank() != 1) return 0;
        return double(m_out) * double(in[0][0]) + (m_hasBias ? double(m_out) : 0);
    }
    LayerCost cost(const std::vector<Shape> &in, const Shape &) const override
    {
        const double macs = double(in[0].numel()) * double(m_out);
        const double bias = m_hasBias ? double(m_out) : 0;
        return {2 * macs + bias, 2 * macs, 2 * macs + bias};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        // y = x W^T + b: Gemm with the weight as stored, [out, in].
        g.node("Gemm", weightInputs(g, in[0], out, m_w, m_hasBias ? &m_b : nullptr), {out},
               {ExportAttribute::integer("transB", 1)});
        return {};
    }
    std::vector<Parameter *> parameters() override
    {
        if (m_hasBias) return {&m_w, &m_b};
        return {&m_w};
    }
    void initialize(Rng &rng) override
    {
        initUniformFanIn(m_w.value, m_in, rng);
        if (m_hasBias) initUniformFanIn(m_b.value, m_in, rng);
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        return std::make_unique<WeightedRun<LinearKernel>>(
            b.makeLinear(LinearDesc{in[0][0], m_in, m_out, m_hasBias}), m_w,
            m_hasBias ? &m_b : nullptr);
    }

private:
    int64_t m_out, m_in = 0;
    bool m_hasBias;
    Parameter m_w, m_b;
};

// ---- Conv2d ----

class Conv2d final : public Layer {
public:
    Conv2d(int64_t oc, int64_t k, int64_t s, int64_t p, bool bias)
        : m_oc(oc)
        , m_k(k)
        , m_s(s)
        , m_p(p)
        , m_hasBias(bias)
    {}
    std::string type() const override { return "conv2d"; }
    Result<Shape> build(const std::vector<Shape> &in) override
    {
        if (in[0].rank() != 3)
            return makeError("conv2d expects an image input of shape [channels, height, width], "
                             "got " +
                             in[0].str());
        m_c = in[0][0];
        const int64_t h = in[0][1], w = in[0][2];
        const int64_t oh = (h + 2 * m_p - m_k) / m_s + 1, ow = (w + 2 * m_p - m_k) / m_s + 1;
        if (h + 2 * m_p < m_k || w + 2 * m_p < m_k || oh < 1 || ow < 1)
            return makeError("kernel " + std::to_string(m_k) + "x" + std::to_string(m_k) +
                             " does not fit the input " + in[0].str() + " with padding " +
                             std::to_string(m_p));
        const Shape ws{m_oc, m_c, m_k, m_k};
        if (!m_w.value.defined() || m_w.value.shape() != ws) {
            m_w = makeParam("weight", ws);
            if (m_hasBias) m_b = makeParam("bias", {m_oc});
        }
        return Shape{m_oc, oh, ow};
    }
    double stateCount(const std::vector<Shape> &in) const override
    {
        if (in[0].rank() != 3) return 0;
        return double(m_oc) * double(in[0][0]) * double(m_k) * double(m_k) +
               (m_hasBias ? double(m_oc) : 0);
    }
    LayerCost cost(const std::vector<Shape> &in, const Shape &out) const override
    {
        // Every output element is a dot product over C x k x k inputs.
        const double macs = double(out.numel()) * double(in[0][0]) * double(m_k * m_k);
        const double bias = m_hasBias ? double(out.numel()) : 0;
        return {2 * macs + bias, 2 * macs, 2 * macs + bias};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        // kernel_shape spelled out: OpenCV's importer needs it.
        g.node("Conv", weightInputs(g, in[0], out, m_w, m_hasBias ? &m_b : nullptr), {out},
               {ExportAttribute::integers("kernel_shape", {m_k, m_k}),
                ExportAttribute::integers("strides", {m_s, m_s}),
                ExportAttribute::integers("pads", {m_p, m_p, m_p, m_p})});
        return {};
    }
    std::vector<Parameter *> parameters() override
    {
        if (m_hasBias) return {&m_w, &m_b};
        return {&m_w};
    }
    void initialize(Rng &rng) override
    {
        const int64_t fanIn = m_c * m_k * m_k;
        initUniformFanIn(m_w.value, fanIn, rng);
        if (m_hasBias) initUniformFanIn(m_b.value, fanIn, rng);
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        const Shape &x = in[0];
        ConvDesc d{x[0], x[1], x[2], x[3], m_oc, m_k, m_k, m_s, m_s, m_p, m_p, m_hasBias};
        d.channelsLast = b.prefersChannelsLast();
        return std::make_unique<WeightedRun<ConvKernel>>(b.makeConv(d), m_w,
                                                         m_hasBias ? &m_b : nullptr);
    }

private:
    int64_t m_oc, m_k, m_s, m_p, m_c = 0;
    bool m_hasBias;
    Parameter m_w, m_b;
};

// ---- Pooling ----

class PoolRun final : public LayerRun {
public:
    PoolRun(Backend &b, const PoolDesc &d)
        : m_kernel(b.makePool(d))
    {}
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &) override
    {
        m_kernel->forward(in[0]->f32(), out.f32());
    }
    void backward(const std::vector<const Tensor *> &, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &) override
    {
        if (din[0]) m_kernel->backward(dout.f32(), din[0]->f32());
    }

private:
    std::unique_ptr<PoolKernel> m_kernel;
};

class Pool2d final : public Layer {
public:
    Pool2d(PoolKind kind, int64_t k, int64_t s, int64_t p)
        : m_kind(kind)
        , m_k(k)
        , m_s(s > 0 ? s : k)
        , m_p(p)
    {}
    std::string type() const override
    {
        return m_kind == PoolKind::Max ? "maxpool2d" : "avgpool2d";
    }
    bool isMaxPool() const override { return m_kind == PoolKind::Max; }
    Result<Shape> build(const std::vector<Shape> &in) override
    {
        if (in[0].rank() != 3)
            return makeError(type() +
                             " expects an image input of shape [channels, height, "
                             "width], got " +
                             in[0].str());
        if (2 * m_p > m_k)
            return makeError("padding " + std::to_string(m_p) +
                             " must be at most half the kernel size " + std::to_string(m_k));
        const int64_t h = in[0][1], w = in[0][2];
        if (h + 2 * m_p < m_k || w + 2 * m_p < m_k)
            return makeError("kernel " + std::to_string(m_k) + " is larger than the input " +
                             in[0].str());
        return Shape{in[0][0], (h + 2 * m_p - m_k) / m_s + 1, (w + 2 * m_p - m_k) / m_s + 1};
    }
    LayerCost cost(const std::vector<Shape> &, const Shape &out) const override
    {
        // k x k comparisons (max) or additions and a division (average) per output; backward, a
        // max pool routes each gradient to one input, an average spreads it over k x k.
        const double window = double(out.numel()) * double(m_k * m_k);
        return {window, m_kind == PoolKind::Max ? double(out.numel()) : window, 0};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        std::vector<ExportAttribute> a{ExportAttribute::integers("kernel_shape", {m_k, m_k}),
                                       ExportAttribute::integers("strides", {m_s, m_s})};
        if (m_kind == PoolKind::Max || m_p == 0) {
            a.push_back(ExportAttribute::integers("pads", {m_p, m_p, m_p, m_p}));
            g.node(m_kind == PoolKind::Max ? "MaxPool" : "AveragePool", {in[0]}, {out}, a);
            return {};
        }
        // Padding counts as zeros in the average (PyTorch's count_include_pad=True): written as
        // an explicit zero Pad before an unpadded AveragePool, the same arithmetic, because
        // OpenCV 4.6's dnn leaves padded cells out of the divisor whatever count_include_pad says
        // (found by the export's own check: logits 0.017 off; onnxruntime agreed with us).
        const std::string padded = g.name(out + ".padded");
        g.node("Pad", {in[0], g.constantInts(out + ".pads", {0, 0, m_p, m_p, 0, 0, m_p, m_p})},
               {padded});
        g.node("AveragePool", {padded}, {out}, a);
        return {};
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        const Shape &x = in[0];
        PoolDesc d{m_kind, x[0], x[1], x[2], x[3], m_k, m_k, m_s, m_s, m_p, m_p};
        d.channelsLast = b.prefersChannelsLast();
        return std::make_unique<PoolRun>(b, d);
    }

private:
    PoolKind m_kind;
    int64_t m_k, m_s, m_p;
};

// Global average pooling: each channel's mean over the whole picture, [C, H, W] -> [C] (PyTorch's
// AdaptiveAvgPool2d(1) then a flatten). The pooling kernels with one window the size of the
// input; their [N, C, 1, 1] output is [N, C] in either layout.
class GlobalAvgPool final : public Layer {
public:
    std::string type() const override { return "global_avg_pool"; }
    Result<Shape> build(const std::vector<Shape> &in) override
    {
        if (in[0].rank() != 3)
            return makeError("global_avg_pool expects an image input of shape [channels, height, "
                             "width], got " +
                             in[0].str());
        return Shape{in[0][0]};
    }
    LayerCost cost(const std::vector<Shape> &in, const Shape &) const override
    {
        // H x W - 1 additions and a division per channel; backward, one share per input.
        return {double(in[0].numel()), double(in[0].numel()), 0};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        const std::string pooled = g.name(out + ".pooled"); // [N, C, 1, 1]
        g.node("GlobalAveragePool", {in[0]}, {pooled});
        g.node("Flatten", {pooled}, {out}, {ExportAttribute::integer("axis", 1)});
        return {};
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        const Shape &x = in[0];
        PoolDesc d{PoolKind::Avg, x[0], x[1], x[2], x[3], x[2], x[3], x[2], x[3]};
        d.channelsLast = b.prefersChannelsLast();
        return std::make_unique<PoolRun>(b, d);
    }
};

// ---- Activations ----

class ActivationRun final : public LayerRun {
public:
    ActivationRun(Backend &b, const ActivationDesc &d)
        : m_kernel(b.makeActivation(d))
    {}
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &) override
    {
        m_kernel->forward(in[0]->f32(), out.f32());
    }
    void backward(const std::vector<const Tensor *> &in, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &) override
    {
        if (din[0]) m_kernel->backward(in[0]->f32(), dout.f32(), din[0]->f32());
    }

private:
    std::unique_ptr<ActivationKernel> m_kernel;
};

class ActivationLayer final : public Layer {
public:
    ActivationLayer(Activation kind, float alpha)
        : m_kind(kind)
        , m_alpha(alpha)
    {}
    // Only these two: the others are monotone too, but the swap is kept to what it was shown
    // on (test_nn reluMaxPoolRewriteKeepsResults).
    bool commutesWithMaxPool() const override
    {
        return m_kind == Activation::Relu || m_kind == Activation::LeakyRelu;
    }
    std::string type() const override
    {
        switch (m_kind) {
        case Activation::Relu:
            return "relu";
        case Activation::LeakyRelu:
            return "leaky_relu";
        case Activation::Sigmoid:
            return "sigmoid";
        case Activation::Tanh:
            return "tanh";
        case Activation::Gelu:
            return "gelu";
        case Activation::Silu:
            return "silu";
        }
        return "activation";
    }
    Result<Shape> build(const std::vector<Shape> &in) override { return in[0]; }
    LayerCost cost(const std::vector<Shape> &in, const Shape &) const override
    {
        // Per element, with exp, tanh and erf as one operation each (docs/summary.md):
        // forward and backward (from the saved input or output and the incoming gradient).
        const auto [fwd, bwd] = [this]() -> std::pair<double, double> {
            switch (m_kind) {
            case Activation::Relu:
                return {1, 1}; // max(x, 0); dy where x > 0
            case Activation::LeakyRelu:
                return {2, 2}; // compare, multiply
            case Activation::Sigmoid:
                return {4, 3}; // 1 / (1 + exp(-x)); dy * s * (1 - s)
            case Activation::Tanh:
                return {1, 3}; // dy * (1 - t * t)
            case Activation::Gelu:
                return {5, 11}; // 0.5 x (1 + erf(x / sqrt 2)); dy * (Phi(x) + x phi(x))
            case Activation::Silu:
                return {5, 9}; // x * sigmoid(x); dy * s * (1 + x (1 - s))
            }
            return {1, 1};
        }();
        const double n = double(in[0].numel());
        return {fwd * n, bwd * n, 0};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        const std::string &x = in[0];
        switch (m_kind) {
        case Activation::Relu:
            g.node("Relu", {x}, {out});
            break;
        case Activation::LeakyRelu:
            g.node("LeakyRelu", {x}, {out}, {ExportAttribute::real("alpha", m_alpha)});
            break;
        case Activation::Sigmoid:
            g.node("Sigmoid", {x}, {out});
            break;
        case Activation::Tanh:
            g.node("Tanh", {x}, {out});
            break;
        case Activation::Silu: { // x * sigmoid(x): opset 17 has no SiLU
            const std::string s = g.name(out + ".sigmoid");
            g.node("Sigmoid", {x}, {s});
            g.node("Mul", {x, s}, {out});
            break;
        }
        case Activation::Gelu: { // 0.5 x (1 + erf(x / sqrt 2)): opset 17 has no Gelu
            const std::string scaled = g.name(out + ".scaled"), erf = g.name(out + ".erf"),
                              plus = g.name(out + ".plus1"), times = g.name(out + ".times_x");
            g.node("Div", {x, g.constant(out + ".sqrt2", {}, {std::sqrt(2.0f)})}, {scaled});
            g.node("Erf", {scaled}, {erf});
            g.node("Add", {erf, g.constant(out + ".one", {}, {1.0f})}, {plus});
            g.node("Mul", {x, plus}, {times});
            g.node("Mul", {times, g.constant(out + ".half", {}, {0.5f})}, {out});
            break;
        }
        }
        return {};
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        return std::make_unique<ActivationRun>(b, ActivationDesc{m_kind, in[0].numel(), m_alpha});
    }

private:
    Activation m_kind;
    float m_alpha;
};

// ---- Flatten: a view of NCHW data. Channels-last images are transposed to NCHW order, so the
// features reach the next layer in PyTorch's order whatever the backend's layout. ----

class FlattenRun final : public LayerRun {
public:
    FlattenRun(Backend &b, bool transpose, Shape in)
        : m_b(b)
        , m_transpose(transpose)
        , m_in(std::move(in))
    {}
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &) override
    {
        if (m_transpose) transposeNhwc(in[0]->f32(), out.f32(), m_in, true);
    }
    void backward(const std::vector<const Tensor *> &, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &) override
    {
        if (!din[0]) return;
        if (m_transpose)
            transposeNhwc(dout.f32(), din[0]->f32(), m_in, false);
        else
            m_b.copy(din[0]->raw(), dout.raw(), dout.bytes());
    }

private:
    Backend &m_b;
    bool m_transpose;
    Shape m_in;
};

class Flatten final : public Layer {
public:
    std::string type() const override { return "flatten"; }
    bool mayBeView() const override { return true; }
    Result<Shape> build(const std::vector<Shape> &in) override { return Shape{in[0].numel()}; }
    LayerCost cost(const std::vector<Shape> &, const Shape &) const override { return {}; }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        g.node("Flatten", {in[0]}, {out}, {ExportAttribute::integer("axis", 1)}); // NCHW order
        return {};
    }
    bool isView(Backend &b, const Shape &in) const override { return !storedTransposed(b, in); }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        return std::make_unique<FlattenRun>(b, storedTransposed(b, in[0]), in[0]);
    }
};

// ---- Dropout. The mask is a function of each element's logical (NCHW) position, so the same
// seed drops the same activations whatever layout the backend stores images in. ----

class DropoutRun final : public LayerRun {
public:
    DropoutRun(Backend &b, const Shape &s, float p)
        : m_b(b)
        , m_p(p)
        , m_shape(s)
        , m_mask(b.empty(s))
        , m_transpose(storedTransposed(b, s))
    {
        if (m_transpose) {
            m_ones = b.empty(s);
            b.fill(m_ones.f32(), 1.0f, m_ones.numel());
            m_maskNchw = b.empty(s);
        }
    }
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &ctx) override
    {
        if (!ctx.training || m_p <= 0) {
            m_b.copy(out.raw(), in[0]->raw(), out.bytes());
            return;
        }
        if (!m_transpose) {
            m_b.dropoutForward(in[0]->f32(), out.f32(), m_mask.f32(), out.numel(), m_p, ctx.seed,
                               ctx.salt);
            return;
        }
        // The NCHW mask (the dropout of ones), moved to NHWC, then y = x * mask.
        m_b.dropoutForward(m_ones.f32(), m_maskNchw.f32(), m_maskNchw.f32(), out.numel(), m_p,
                           ctx.seed, ctx.salt);
        transposeNhwc(m_maskNchw.f32(), m_mask.f32(), m_shape, false);
        m_b.dropoutBackward(in[0]->f32(), m_mask.f32(), out.f32(), out.numel());
    }
    void backward(const std::vector<const Tensor *> &, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &ctx) override
    {
        if (!din[0]) return;
        if (m_p > 0)
            m_b.dropoutBackward(dout.f32(), m_mask.f32(), din[0]->f32(), dout.numel());
        else
            m_b.copy(din[0]->raw(), dout.raw(), dout.bytes());
    }

private:
    Backend &m_b;
    float m_p;
    Shape m_shape;
    Tensor m_mask, m_ones, m_maskNchw;
    bool m_transpose;
};

class Dropout final : public Layer {
public:
    explicit Dropout(float p)
        : m_p(p)
    {}
    std::string type() const override { return "dropout"; }
    Result<Shape> build(const std::vector<Shape> &in) override { return in[0]; }
    LayerCost cost(const std::vector<Shape> &in, const Shape &) const override
    {
        // A multiply by the scaled mask each way (in training; evaluation copies).
        return {double(in[0].numel()), double(in[0].numel()), 0};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        g.node("Identity", {in[0]}, {out}); // inference: every activation passes
        return {};
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        return std::make_unique<DropoutRun>(b, in[0], m_p);
    }

private:
    float m_p;
};

// ---- BatchNorm2d: batch statistics in training (running averages updated as PyTorch does,
// with the unbiased variance), running statistics in evaluation. ----

class BatchNormRun final : public LayerRun {
public:
    BatchNormRun(Backend &b, const BatchNormDesc &d, Parameter &g, Parameter &beta, Tensor &runMean,
                 Tensor &runVar, float momentum)
        : m_kernel(b.makeBatchNorm(d))
        , m_g(g)
        , m_beta(beta)
        , m_runMean(runMean)
        , m_runVar(runVar)
        , m_momentum(momentum)
        , m_b(b)
        , m_mean(b.empty({d.c}))
        , m_var(b.empty({d.c}))
        , m_count(d.n * d.h * d.w)
    {}
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &ctx) override
    {
        if (!ctx.training) {
            m_kernel->forwardInference(in[0]->f32(), m_g.value.f32(), m_beta.value.f32(),
                                       m_runMean.f32(), m_runVar.f32(), out.f32());
            return;
        }
        m_kernel->forwardTraining(in[0]->f32(), m_g.value.f32(), m_beta.value.f32(), out.f32(),
                                  m_mean.f32(), m_var.f32());
        const float unbias = m_count > 1 ? float(m_count) / float(m_count - 1) : 1.0f;
        const int64_t c = m_mean.numel();
        m_b.axpby(m_runMean.f32(), m_mean.f32(), c, 1 - m_momentum, m_momentum);
        m_b.axpby(m_runVar.f32(), m_var.f32(), c, 1 - m_momentum, m_momentum * unbias);
    }
    void backward(const std::vector<const Tensor *> &in, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &) override
    {
        // oneDNN computes dx with dgamma/dbeta in one pass; with no din (batch norm on the
        // model's input) we still need those, so dx goes to a scratch buffer made once here and
        // kept: a training step must not allocate (it may be captured as a CUDA graph).
        float *dx = din[0] ? din[0]->f32() : nullptr;
        if (!dx) {
            if (!m_dxScratch.defined()) m_dxScratch = m_b.empty(in[0]->shape());
            dx = m_dxScratch.f32();
        }
        m_kernel->backward(in[0]->f32(), dout.f32(), m_g.value.f32(), m_mean.f32(), m_var.f32(), dx,
                           m_g.grad.f32(), m_beta.grad.f32());
    }

private:
    std::unique_ptr<BatchNormKernel> m_kernel;
    Parameter &m_g, &m_beta;
    Tensor &m_runMean, &m_runVar;
    float m_momentum;
    Backend &m_b;
    Tensor m_mean, m_var;
    int64_t m_count;
    Tensor m_dxScratch; // dx when nothing needs it (see backward)
};

// Batch norm over channels of images (2d: [C, H, W], statistics over the batch and the
// picture) or over features (1d: [F] after a linear layer, statistics over the batch). The 1d
// form is the 2d one with a 1 x 1 picture: the same kernels, whose [N, F, 1, 1] is [N, F] in
// either layout.
class BatchNorm final : public Layer {
public:
    BatchNorm(float eps, float momentum, bool features)
        : m_eps(eps)
        , m_momentum(momentum)
        , m_features(features)
    {}
    std::string type() const override { return m_features ? "batchnorm1d" : "batchnorm2d"; }
    Result<Shape> build(const std::vector<Shape> &in) override
    {
        if (!m_features && in[0].rank() != 3)
            return makeError("batchnorm2d expects an image input of shape [channels, height, "
                             "width], got " +
                             in[0].str());
        if (m_features && in[0].rank() != 1)
            return makeError("batchnorm1d expects features of shape [features] (after a linear "
                             "layer or a flatten), got " +
                             in[0].str());
        const int64_t c = in[0][0];
        if (!m_g.value.defined() || m_g.value.numel() != c) {
            m_g = makeParam("weight", {c});
            m_beta = makeParam("bias", {c});
            m_runMean = Tensor::zeros({c});
            m_runVar = Tensor::zeros({c});
            reset();
        }
        return in[0];
    }
    double stateCount(const std::vector<Shape> &in) const override
    {
        // weight, bias, running mean and variance
        return in[0].rank() == (m_features ? 1 : 3) ? 4 * double(in[0][0]) : 0;
    }
    LayerCost cost(const std::vector<Shape> &in, const Shape &) const override
    {
        // Per element in training: mean (1), variance (3), normalize (2), scale and shift (2);
        // backward, the two parameters' sums (3) and the input's gradient (5).
        const double n = double(in[0].numel());
        return {8 * n, 5 * n, 3 * n};
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        const std::vector<int64_t> c{m_g.value.numel()};
        if (!m_features) {
            g.node("BatchNormalization",
                   {in[0], g.constant(out + ".weight", c, hostValues(m_g.value)),
                    g.constant(out + ".bias", c, hostValues(m_beta.value)),
                    g.constant(out + ".running_mean", c, hostValues(m_runMean)),
                    g.constant(out + ".running_var", c, hostValues(m_runVar))},
                   {out}, {ExportAttribute::real("epsilon", m_eps)});
            return {};
        }
        // Over features [N, F]: the same arithmetic as one scale and shift per feature, which
        // every runtime reads (BatchNormalization on rank 2 is not everywhere). The division and
        // square root as the kernels do them, in float.
        const std::vector<float> gamma = hostValues(m_g.value), beta = hostValues(m_beta.value),
                                 mean = hostValues(m_runMean), var = hostValues(m_runVar);
        std::vector<float> scale(gamma.size()), shift(gamma.size());
        for (size_t i = 0; i < gamma.size(); ++i) {
            scale[i] = gamma[i] / std::sqrt(var[i] + m_eps);
            shift[i] = beta[i] - mean[i] * scale[i];
        }
        const std::string scaled = g.name(out + ".scaled");
        g.node("Mul", {in[0], g.constant(out + ".scale", c, scale)}, {scaled});
        g.node("Add", {scaled, g.constant(out + ".shift", c, shift)}, {out});
        return {};
    }
    std::vector<Parameter *> parameters() override { return {&m_g, &m_beta}; }
    std::vector<std::pair<std::string, Tensor>> buffers() override
    {
        return {{"running_mean", m_runMean}, {"running_var", m_runVar}};
    }
    void moveTo(Backend &b) override
    {
        Layer::moveTo(b);
        m_runMean = b.toDevice(m_runMean);
        m_runVar = b.toDevice(m_runVar);
    }
    void initialize(Rng &) override { reset(); }
    void reset()
    {
        m_g.value.fill(1.0f);
        m_beta.value.fill(0.0f);
        m_runMean.fill(0.0f);
        m_runVar.fill(1.0f);
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &in,
                                          const Shape &) override
    {
        const Shape &x = in[0];
        BatchNormDesc d{x[0], x[1], m_features ? 1 : x[2], m_features ? 1 : x[3], m_eps};
        d.channelsLast = b.prefersChannelsLast();
        return std::make_unique<BatchNormRun>(b, d, m_g, m_beta, m_runMean, m_runVar, m_momentum);
    }

private:
    float m_eps, m_momentum;
    bool m_features;
    Parameter m_g, m_beta;
    Tensor m_runMean, m_runVar;
};

// ---- Add (residual): both inputs must have the same shape. ----

class AddRun final : public LayerRun {
public:
    explicit AddRun(Backend &b)
        : m_b(b)
    {}
    void forward(const std::vector<const Tensor *> &in, const Tensor &out,
                 const StepContext &) override
    {
        m_b.add(in[0]->f32(), in[1]->f32(), out.f32(), out.numel());
    }
    void backward(const std::vector<const Tensor *> &, const Tensor &, const Tensor &dout,
                  const std::vector<const Tensor *> &din, const StepContext &) override
    {
        for (const Tensor *d : din)
            if (d) m_b.copy(d->raw(), dout.raw(), dout.bytes());
    }

private:
    Backend &m_b;
};

class Add final : public Layer {
public:
    std::string type() const override { return "add"; }
    int inputCount() const override { return 2; }
    Result<Shape> build(const std::vector<Shape> &in) override
    {
        if (in[0] != in[1])
            return makeError("add needs inputs of the same shape, got " + shapeList(in));
        return in[0];
    }
    LayerCost cost(const std::vector<Shape> &in, const Shape &) const override
    {
        return {double(in[0].numel()), 0, 0}; // the gradient passes on unchanged
    }
    Status exportTo(ExportGraph &g, const std::vector<std::string> &in, const std::string &out,
                    const std::vector<Shape> &) const override
    {
        g.node("Add", {in[0], in[1]}, {out});
        return {};
    }
    std::unique_ptr<LayerRun> instantiate(Backend &b, const std::vector<Shape> &,
                                          const Shape &) override
    {
        return std::make_unique<AddRun>(b);
    }
};

} // namespace

std::unique_ptr<Layer> makeLinear(int64_t outFeatures, bool bias)
{
    return std::make_unique<Linear>(outFeatures, bias);
}
std::unique_ptr<Layer> makeConv2d(int64_t oc, int64_t k, int64_t s, int64_t p, bool bias)
{
    return std::make_unique<Conv2d>(oc, k, s, p, bias);
}
std::unique_ptr<Layer> makePool2d(PoolKind kind, int64_t k, int64_t s, int64_t p)
{
    return std::make_unique<Pool2d>(kind, k, s, p);
}
std::unique_ptr<Layer> makeActivation(Activation kind, float alpha)
{
    return std::make_unique<ActivationLayer>(kind, alpha);
}
std::unique_ptr<Layer> makeFlatten()
{
    return std::make_unique<Flatten>();
}
std::unique_ptr<Layer> makeDropout(float p)
{
    return std::make_unique<Dropout>(p);
}
std::unique_ptr<Layer> makeBatchNorm2d(float eps, float momentum)
{
    return std::make_unique<BatchNorm>(eps, momentum, false);
}

std::unique_ptr<Layer> makeBatchNorm1d(float eps, float momentum)
{
    return std::make_unique<BatchNorm>(eps, momentum, true);
}

std::unique_ptr<Layer> makeGlobalAvgPool()
{
    return std::make_unique<GlobalAvgPool>();
}
std::unique_ptr<Layer> makeAdd()
{
    return std::make_unique<Add>();
}

} // namespace fb::nn
