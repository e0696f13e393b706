// Batch normalization on oneDNN, with separate scale (gamma) and shift (beta) tensors.

#include "core/backend/cpu/dnnl_kernels.h"

#include <vector>

namespace fb::dnnlx {
namespace {

using namespace dnnl;

class DnnlBatchNorm final : public BatchNormKernel {
public:
    explicit DnnlBatchNorm(const BatchNormDesc &d)
        : m_unusedShift(size_t(d.c), 0.0f)
    {
        m_data = plainDesc({d.n, d.c, d.h, d.w}, d.channelsLast ? tag::nhwc : tag::nchw);
        m_chan = plainDesc({d.c}, tag::x);
        const auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
        batch_normalization_forward::desc td(prop_kind::forward_training, m_data, d.eps, flags);
        auto tpd = batch_normalization_forward::primitive_desc(td, engine());
        m_train = batch_normalization_forward(tpd);
        batch_normalization_forward::desc id(prop_kind::forward_inference, m_data, d.eps,
                                             flags | normalization_flags::use_global_stats);
        m_infer =
            batch_normalization_forward(batch_normalization_forward::primitive_desc(id, engine()));
        batch_normalization_backward::desc bd(prop_kind::backward, m_data, m_data, d.eps, flags);
        m_bwd = batch_normalization_backward(
            batch_normalization_backward::primitive_desc(bd, engine(), tpd));
    }

    void forwardTraining(const float *x, const float *gamma, const float *beta, float *y,
                         float *mean, float *var) override
    {
        FB_DNNL_CHECK(m_train.execute(stream(), {{DNNL_ARG_SRC, wrap(m_data, x)},
                                                 {DNNL_ARG_DST, wrap(m_data, y)},
                                                 {DNNL_ARG_SCALE, wrap(m_chan, gamma)},
                                                 {DNNL_ARG_SHIFT, wrap(m_chan, beta)},
                                                 {DNNL_ARG_MEAN, wrap(m_chan, mean)},
                                                 {DNNL_ARG_VARIANCE, wrap(m_chan, var)}}));
    }

    void forwardInference(const float *x, const float *gamma, const float *beta, const float *mean,
                          const float *var, float *y) override
    {
        FB_DNNL_CHECK(m_infer.execute(stream(), {{DNNL_ARG_SRC, wrap(m_data, x)},
                                                 {DNNL_ARG_DST, wrap(m_data, y)},
                                                 {DNNL_ARG_SCALE, wrap(m_chan, gamma)},
                                                 {DNNL_ARG_SHIFT, wrap(m_chan, beta)},
                                                 {DNNL_ARG_MEAN, wrap(m_chan, mean)},
                                                 {DNNL_ARG_VARIANCE, wrap(m_chan, var)}}));
    }

    void backward(const float *x, const float *dy, const float *gamma, const float *mean,
                  const float *var, float *dx, float *dgamma, float *dbeta) override
    {
        FB_DNNL_CHECK(m_bwd.execute(stream(), {{DNNL_ARG_SRC, wrap(m_data, x)},
                                               {DNNL_ARG_DIFF_DST, wrap(m_data, dy)},
                                               {DNNL_ARG_SCALE, wrap(m_chan, gamma)},
                                               {DNNL_ARG_MEAN, wrap(m_chan, mean)},
                                               {DNNL_ARG_VARIANCE, wrap(m_chan, var)},
                                               {DNNL_ARG_SHIFT, wrap(m_chan, m_unusedShift.data())},
                                               {DNNL_ARG_DIFF_SRC, wrap(m_data, dx)},
                                               {DNNL_ARG_DIFF_SCALE, wrap(m_chan, dgamma)},
                                               {DNNL_ARG_DIFF_SHIFT, wrap(m_chan, dbeta)}}));
    }

private:
    memory::desc m_data, m_chan;
    // oneDNN 2.6's backward pass asks for the shift although the gradients do not depend on it.
    std::vector<float> m_unusedShift;
    batch_normalization_forward m_train, m_infer;
    batch_normalization_backward m_bwd;
};

} // namespace

std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d)
{
    return std::make_unique<DnnlBatchNorm>(d);
}

} // namespace fb::dnnlx
