// Convolution on oneDNN. With channels-last tensors (what the model compiler asks this backend
// for) the primitives read and write our NHWC buffers directly with AVX-512 kernels. With NCHW
// they pick their own blocked layouts through format "any": the direct kernels are several
// times faster than im2col on plain NCHW, and the reorders cost far less than that difference.
// The forward pass keeps its reordered input, so the weight gradient does not reorder it again.

#include "core/backend/cpu/dnnl_kernels.h"

namespace fb::dnnlx {
namespace {

using namespace dnnl;

class DnnlConv final : public ConvKernel {
public:
    explicit DnnlConv(const ConvDesc &d)
        : m_d(d)
    {
        const memory::dims src{d.n, d.c, d.h, d.w}, wei{d.oc, d.c, d.kh, d.kw}, bias{d.oc},
            dst{d.n, d.oc, d.oh(), d.ow()}, strides{d.sh, d.sw}, pad{d.ph, d.pw};
        const auto any = [](const memory::dims &dims) { return plainDesc(dims, tag::any); };
        const tag act = d.channelsLast ? tag::nhwc : tag::nchw;
        const auto srcPlain = plainDesc(src, act), weiPlain = plainDesc(wei, tag::oihw),
                   dstPlain = plainDesc(dst, act), biasPlain = plainDesc(bias, tag::x);
        // Activations: NHWC as they are, or whatever oneDNN likes best for NCHW.
        const auto srcPrim = d.channelsLast ? srcPlain : any(src);
        const auto dstPrim = d.channelsLast ? dstPlain : any(dst);
        const memory::desc noBias;

        convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct,
                                     srcPrim, any(wei), d.bias ? biasPlain : noBias, dstPrim,
                                     strides, pad, pad);
        m_fwdPd = convolution_forward::primitive_desc(fd, engine());
        m_fwd = convolution_forward(m_fwdPd);
        m_fSrc = Arg(srcPlain, m_fwdPd.src_desc(), Arg::Dir::In);
        m_fWei = Arg(weiPlain, m_fwdPd.weights_desc(), Arg::Dir::In);
        m_fDst = Arg(dstPlain, m_fwdPd.dst_desc(), Arg::Dir::Out);

        convolution_backward_data::desc bd(algorithm::convolution_direct, srcPrim, any(wei),
                                           dstPrim, strides, pad, pad);
        m_bdPd = convolution_backward_data::primitive_desc(bd, engine(), m_fwdPd);
        m_bd = convolution_backward_data(m_bdPd);
        m_bdDiffSrc = Arg(srcPlain, m_bdPd.diff_src_desc(), Arg::Dir::Out);
        m_bdWei = Arg(weiPlain, m_bdPd.weights_desc(), Arg::Dir::In);
        m_bdDiffDst = Arg(dstPlain, m_bdPd.diff_dst_desc(), Arg::Dir::In);

        convolution_backward_weights::desc bw(algorithm::convolution_direct, srcPrim, any(wei),
                                              d.bias ? biasPlain : noBias, dstPrim, strides, pad,
                                              pad);
        m_bwPd = convolution_backward_weights::primitive_desc(bw, engine(), m_fwdPd);
        m_bw = convolution_backward_weights(m_bwPd);
        m_bwSrc = Arg(srcPlain, m_bwPd.src_desc(), Arg::Dir::In);
        m_bwDiffWei = Arg(weiPlain, m_bwPd.diff_weights_desc(), Arg::Dir::Out);
        m_bwDiffDst = Arg(dstPlain, m_bwPd.diff_dst_desc(), Arg::Dir::In);
        m_biasDesc = biasPlain;
        m_srcSharable = m_bwPd.src_desc() == m_fwdPd.src_desc() && m_fSrc.reorders();
        m_diffDstSharable = m_bwPd.diff_dst_desc() == m_bdPd.diff_dst_desc();
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, m_fSrc.in(x)},
                                             {DNNL_ARG_WEIGHTS, m_fWei.in(w)},
                                             {DNNL_ARG_DST, m_fDst.out(y)}};
        if (m_d.bias) args[DNNL_ARG_BIAS] = wrap(m_biasDesc, b);
        FB_DNNL_CHECK(m_fwd.execute(stream(), args));
        m_fDst.finish();
        m_lastX = x;
    }

    void backwardData(const float *dy, const float *w, float *dx) override
    {
        FB_DNNL_CHECK(m_bd.execute(stream(), {{DNNL_ARG_DIFF_DST, m_bdDiffDst.in(dy)},
                                              {DNNL_ARG_WEIGHTS, m_bdWei.in(w)},
                                              {DNNL_ARG_DIFF_SRC, m_bdDiffSrc.out(dx)}}));
        m_bdDiffSrc.finish();
        m_lastDy = dy;
    }

    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        // Reuse the layouts already made by forward (same x) and backwardData (same dy).
        const memory &src = m_srcSharable && x == m_lastX ? m_fSrc.prim() : m_bwSrc.in(x);
        const memory &ddst = m_diffDstSharable && dy == m_lastDy && m_bdDiffDst.reorders()
                                 ? m_bdDiffDst.prim()
                                 : m_bwDiffDst.in(dy);
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                             {DNNL_ARG_DIFF_DST, ddst},
                                             {DNNL_ARG_DIFF_WEIGHTS, m_bwDiffWei.out(dw)}};
        if (m_d.bias && db) args[DNNL_ARG_DIFF_BIAS] = wrap(m_biasDesc, db);
        FB_DNNL_CHECK(m_bw.execute(stream(), args));
        m_bwDiffWei.finish();
        m_lastX = nullptr;
        m_lastDy = nullptr;
    }

private:
    ConvDesc m_d;
    convolution_forward::primitive_desc m_fwdPd;
    convolution_forward m_fwd;
    convolution_backward_data::primitive_desc m_bdPd;
    convolution_backward_data m_bd;
    convolution_backward_weights::primitive_desc m_bwPd;
    convolution_backward_weights m_bw;
    Arg m_fSrc, m_fWei, m_fDst, m_bdDiffSrc, m_bdWei, m_bdDiffDst, m_bwSrc, m_bwDiffWei,
        m_bwDiffDst;
    memory::desc m_biasDesc;
    bool m_srcSharable = false, m_diffDstSharable = false;
    const float *m_lastX = nullptr;
    const float *m_lastDy = nullptr;
};

} // namespace

std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d)
{
    return std::make_unique<DnnlConv>(d);
}

} // namespace fb::dnnlx
