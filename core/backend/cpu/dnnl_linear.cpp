// Fully connected layers on oneDNN's inner product. Plain row-major layouts throughout: the
// primitive runs as a GEMM on them, and PyTorch's [out, in] weight layout is oneDNN's "oi".

#include "core/backend/cpu/dnnl_kernels.h"

namespace fb::dnnlx {
namespace {

using namespace dnnl;

class DnnlLinear final : public LinearKernel {
public:
    explicit DnnlLinear(const LinearDesc &d)
        : m_d(d)
    {
        m_src = plainDesc({d.n, d.in}, tag::nc);
        m_wei = plainDesc({d.out, d.in}, tag::oi);
        m_bias = plainDesc({d.out}, tag::x);
        m_dst = plainDesc({d.n, d.out}, tag::nc);
        const memory::desc noBias;
        inner_product_forward::desc fd(prop_kind::forward_training, m_src, m_wei,
                                       d.bias ? m_bias : noBias, m_dst);
        auto fpd = inner_product_forward::primitive_desc(fd, engine());
        m_fwd = inner_product_forward(fpd);
        inner_product_backward_data::desc bd(m_src, m_wei, m_dst);
        m_bd = inner_product_backward_data(
            inner_product_backward_data::primitive_desc(bd, engine(), fpd));
        inner_product_backward_weights::desc bw(m_src, m_wei, d.bias ? m_bias : noBias, m_dst);
        m_bw = inner_product_backward_weights(
            inner_product_backward_weights::primitive_desc(bw, engine(), fpd));
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(m_src, x)},
                                             {DNNL_ARG_WEIGHTS, wrap(m_wei, w)},
                                             {DNNL_ARG_DST, wrap(m_dst, y)}};
        if (m_d.bias) args[DNNL_ARG_BIAS] = wrap(m_bias, b);
        FB_DNNL_CHECK(m_fwd.execute(stream(), args));
    }

    void backwardData(const float *dy, const float *w, float *dx) override
    {
        FB_DNNL_CHECK(m_bd.execute(stream(), {{DNNL_ARG_DIFF_DST, wrap(m_dst, dy)},
                                              {DNNL_ARG_WEIGHTS, wrap(m_wei, w)},
                                              {DNNL_ARG_DIFF_SRC, wrap(m_src, dx)}}));
    }

    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, wrap(m_src, x)},
                                             {DNNL_ARG_DIFF_DST, wrap(m_dst, dy)},
                                             {DNNL_ARG_DIFF_WEIGHTS, wrap(m_wei, dw)}};
        if (m_d.bias && db) args[DNNL_ARG_DIFF_BIAS] = wrap(m_bias, db);
        FB_DNNL_CHECK(m_bw.execute(stream(), args));
    }

private:
    LinearDesc m_d;
    memory::desc m_src, m_wei, m_bias, m_dst;
    inner_product_forward m_fwd;
    inner_product_backward_data m_bd;
    inner_product_backward_weights m_bw;
};

} // namespace

std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d)
{
    return std::make_unique<DnnlLinear>(d);
}

} // namespace fb::dnnlx
