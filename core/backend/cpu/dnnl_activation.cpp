// Element-wise activations on oneDNN's eltwise primitive, over the tensor as a flat vector.

#include "core/backend/cpu/dnnl_kernels.h"

namespace fb::dnnlx {
namespace {

using namespace dnnl;

algorithm algorithmFor(Activation a)
{
    switch (a) {
    case Activation::Relu:
    case Activation::LeakyRelu:
        return algorithm::eltwise_relu;
    case Activation::Sigmoid:
        return algorithm::eltwise_logistic;
    case Activation::Tanh:
        return algorithm::eltwise_tanh;
    case Activation::Gelu:
        return algorithm::eltwise_gelu_erf;
    case Activation::Silu: // swish with alpha 1: x * sigmoid(1 * x)
        return algorithm::eltwise_swish;
    }
    return algorithm::eltwise_relu;
}

class DnnlActivation final : public ActivationKernel {
public:
    explicit DnnlActivation(const ActivationDesc &d)
    {
        m_md = plainDesc({d.count}, tag::x);
        const float alpha = d.kind == Activation::LeakyRelu ? d.alpha
                            : d.kind == Activation::Silu    ? 1.0f
                                                            : 0.0f;
        const auto alg = algorithmFor(d.kind);
        eltwise_forward::desc fd(prop_kind::forward_training, alg, m_md, alpha, 0.0f);
        auto fpd = eltwise_forward::primitive_desc(fd, engine());
        m_fwd = eltwise_forward(fpd);
        eltwise_backward::desc bd(alg, m_md, m_md, alpha, 0.0f);
        m_bwd = eltwise_backward(eltwise_backward::primitive_desc(bd, engine(), fpd));
    }

    void forward(const float *x, float *y) override
    {
        FB_DNNL_CHECK(m_fwd.execute(
            stream(), {{DNNL_ARG_SRC, wrap(m_md, x)}, {DNNL_ARG_DST, wrap(m_md, y)}}));
    }

    void backward(const float *x, const float *dy, float *dx) override
    {
        FB_DNNL_CHECK(m_bwd.execute(stream(), {{DNNL_ARG_SRC, wrap(m_md, x)},
                                               {DNNL_ARG_DIFF_DST, wrap(m_md, dy)},
                                               {DNNL_ARG_DIFF_SRC, wrap(m_md, dx)}}));
    }

private:
    memory::desc m_md;
    eltwise_forward m_fwd;
    eltwise_backward m_bwd;
};

} // namespace

std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d)
{
    return std::make_unique<DnnlActivation>(d);
}

} // namespace fb::dnnlx
