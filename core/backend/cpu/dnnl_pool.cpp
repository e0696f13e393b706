// Max and average pooling on oneDNN. Max pooling keeps oneDNN's workspace (the winning
// positions) from the forward pass for the backward pass.

#include "core/backend/cpu/dnnl_kernels.h"

namespace fb::dnnlx {
namespace {

using namespace dnnl;

class DnnlPool final : public PoolKernel {
public:
    explicit DnnlPool(const PoolDesc &d)
    {
        const tag t = d.channelsLast ? tag::nhwc : tag::nchw;
        m_src = plainDesc({d.n, d.c, d.h, d.w}, t);
        m_dst = plainDesc({d.n, d.c, d.oh(), d.ow()}, t);
        const auto alg = d.kind == PoolKind::Max ? algorithm::pooling_max
                                                 : algorithm::pooling_avg_include_padding;
        const memory::dims strides{d.sh, d.sw}, kernel{d.kh, d.kw}, pad{d.ph, d.pw};
        pooling_forward::desc fd(prop_kind::forward_training, alg, m_src, m_dst, strides, kernel,
                                 pad, pad);
        auto fpd = pooling_forward::primitive_desc(fd, engine());
        m_fwd = pooling_forward(fpd);
        if (fpd.workspace_desc().get_size() > 0)
            m_workspace = memory(fpd.workspace_desc(), engine());
        pooling_backward::desc bd(alg, m_src, m_dst, strides, kernel, pad, pad);
        m_bwd = pooling_backward(pooling_backward::primitive_desc(bd, engine(), fpd));
    }

    void forward(const float *x, float *y) override
    {
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(m_src, x)},
                                             {DNNL_ARG_DST, wrap(m_dst, y)}};
        if (m_workspace) args[DNNL_ARG_WORKSPACE] = m_workspace;
        FB_DNNL_CHECK(m_fwd.execute(stream(), args));
    }

    void backward(const float *dy, float *dx) override
    {
        std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, wrap(m_dst, dy)},
                                             {DNNL_ARG_DIFF_SRC, wrap(m_src, dx)}};
        if (m_workspace) args[DNNL_ARG_WORKSPACE] = m_workspace;
        FB_DNNL_CHECK(m_bwd.execute(stream(), args));
    }

private:
    memory::desc m_src, m_dst;
    pooling_forward m_fwd;
    pooling_backward m_bwd;
    memory m_workspace;
};

} // namespace

std::unique_ptr<PoolKernel> makePool(const PoolDesc &d)
{
    return std::make_unique<DnnlPool>(d);
}

} // namespace fb::dnnlx
