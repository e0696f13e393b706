// Convolution on cuDNN's legacy API. Everything that costs time is settled once, when the plan is
// made: the descriptors, the algorithm of each pass (cudnnFind*AlgorithmEx runs every candidate on
// scratch tensors of the real sizes and times it, as PyTorch's benchmark mode does) and one
// workspace shared by the three passes, which run one after another on the context's stream.
//
// Precision: with ctx.tf32 off the convolution descriptors ask for CUDNN_FMA_MATH, so no algorithm
// rounds its inputs to TF32 and results match the CPU within float rounding. With it on,
// CUDNN_DEFAULT_MATH lets cuDNN use TF32 tensor cores for float data (cuDNN 9 has no separate TF32
// setting); CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION is never taken, as it rounds to FP16/BF16.
//
// Channels-last: x and y are NHWC and the weights stay [oc, c, kh, kw] (an NCHW filter), as the
// layer stores them. cuDNN's support for such mixed layouts varies by algorithm and version, so
// should it offer no algorithm for the mix in some pass, the kernel describes the filter as NHWC
// instead and reorders the weights (small next to the activations) with cudnnTransformTensor
// around each call.
//
// Bias: on NCHW, cudnnAddTensor adds it and cudnnConvolutionBackwardBias reduces its gradient. An
// NHWC y is a row-major [n*oh*ow, oc] matrix, so our own addBiasRows and sumRows do both, each in
// one plain launch.

#include "core/backend/cuda/cuda_kernels.h"
#include "core/backend/cuda/cuda_ops.h"
#include "core/backend/cuda/cudnn_common.h"

#include "core/base/check.h"

#include <algorithm>
#include <string>
#include <vector>

namespace fb::cuda {
namespace {

// The most workspace one pass may use. Algorithms that want more (some FFT variants ask for
// gigabytes) report a failed status in the trials and are passed over.
constexpr size_t kWorkspaceCap = size_t(256) << 20;
// Below this the trials run with no workspace at all (only algorithms that need none).
constexpr size_t kMinTrialWorkspace = size_t(1) << 20;

bool mathAllowed(cudnnMathType_t math, bool tf32)
{
    return tf32 ? math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : math == CUDNN_FMA_MATH;
}

// cuDNN returns the trials sorted by time, fastest first: take the first that ran, fits the
// workspace and keeps the precision asked for.
template <class Perf>
const Perf *fastestUsable(const std::vector<Perf> &perf, int returned, size_t workspace, bool tf32)
{
    for (int i = 0; i < returned && i < int(perf.size()); ++i) {
        const Perf &p = perf[size_t(i)];
        if (p.status == CUDNN_STATUS_SUCCESS && p.memory <= workspace &&
            mathAllowed(p.mathType, tf32))
            return &p;
    }
    return nullptr;
}

// The status of a Find call: "not supported" means this tensor layout mix has no algorithm (the
// caller may try another layout); any other failure throws like every checked call.
bool findRan(cudnnStatus_t s, const char *call, int line, std::string &problem)
{
    if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED) {
        problem = std::string(call) + ": " + describe(s);
        return false;
    }
    if (failed(s)) throwCallError(call, __FILE__, line, describe(s));
    return true;
}
#define FB_FIND_RAN(call, problem) findRan((call), #call, __LINE__, problem)

class CudnnConv final : public ConvKernel {
public:
    CudnnConv(CudaContext &ctx, const ConvDesc &d)
        : m_ctx(ctx)
        , m_d(d)
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0 && d.oc > 0, "empty convolution");
        FB_ASSERT(d.kh > 0 && d.kw > 0 && d.sh > 0 && d.sw > 0, "bad kernel or stride");
        FB_ASSERT(d.ph >= 0 && d.pw >= 0 && d.oh() > 0 && d.ow() > 0, "bad padding");
        setImageDesc(m_xDesc, d.n, d.c, d.h, d.w, d.channelsLast);
        setImageDesc(m_yDesc, d.n, d.oc, d.oh(), d.ow(), d.channelsLast);
        setChannelDesc(m_biasDesc, d.oc);
        setFilter(CUDNN_TENSOR_NCHW);
        setConvolutions();
        checkOutputSize();
        chooseAlgorithms();
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnConvolutionForward(
            m_ctx.cudnn, &one, m_xDesc.get(), x, m_wDesc.get(), filterIn(w), m_fwdConv.get(),
            m_fwdAlgo, m_workspace.data(), m_workspace.bytes(), &zero, m_yDesc.get(), y));
        if (!m_d.bias) return;
        if (m_d.channelsLast) {
            addBiasRows(y, b, m_d.n * m_d.oh() * m_d.ow(), m_d.oc, m_ctx.stream);
        } else {
            // y = 1 * b (broadcast over n, h, w) + 1 * y
            FB_CUDNN_CHECK(
                cudnnAddTensor(m_ctx.cudnn, &one, m_biasDesc.get(), b, &one, m_yDesc.get(), y));
        }
    }

    void backwardData(const float *dy, const float *w, float *dx) override
    {
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnConvolutionBackwardData(
            m_ctx.cudnn, &one, m_wDesc.get(), filterIn(w), m_yDesc.get(), dy, m_bwdDataConv.get(),
            m_bwdDataAlgo, m_workspace.data(), m_workspace.bytes(), &zero, m_xDesc.get(), dx));
    }

    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        const float one = 1.0f, zero = 0.0f;
        void *dwOut = m_filterNhwc ? m_filterScratch.data() : dw;
        FB_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
            m_ctx.cudnn, &one, m_xDesc.get(), x, m_yDesc.get(), dy, m_bwdFilterConv.get(),
            m_bwdFilterAlgo, m_workspace.data(), m_workspace.bytes(), &zero, m_wDesc.get(), dwOut));
        if (m_filterNhwc)
            FB_CUDNN_CHECK(cudnnTransformTensor(m_ctx.cudnn, &one, m_wNhwcDesc.get(), dwOut, &zero,
                                                m_wPlainDesc.get(), dw));
        if (!m_d.bias || !db) return;
        if (m_d.channelsLast) {
            sumRows(dy, db, m_d.n * m_d.oh() * m_d.ow(), m_d.oc, m_ctx.stream);
        } else {
            FB_CUDNN_CHECK(cudnnConvolutionBackwardBias(m_ctx.cudnn, &one, m_yDesc.get(), dy, &zero,
                                                        m_biasDesc.get(), db));
        }
    }

private:
    size_t xBytes() const { return size_t(m_d.n * m_d.c * m_d.h * m_d.w) * sizeof(float); }
    size_t yBytes() const { return size_t(m_d.n * m_d.oc * m_d.oh() * m_d.ow()) * sizeof(float); }
    size_t wBytes() const { return size_t(m_d.oc * m_d.c * m_d.kh * m_d.kw) * sizeof(float); }

    std::string describeShape() const
    {
        auto s = [](int64_t v) { return std::to_string(v); };
        return "x [" + s(m_d.n) + ", " + s(m_d.c) + ", " + s(m_d.h) + ", " + s(m_d.w) + "]" +
               (m_d.channelsLast ? " NHWC" : "") + ", " + s(m_d.oc) + " filters " + s(m_d.kh) +
               "x" + s(m_d.kw) + ", stride " + s(m_d.sh) + "x" + s(m_d.sw) + ", padding " +
               s(m_d.ph) + "x" + s(m_d.pw);
    }

    // The weights as the filter descriptor reads them: the caller's [oc, c, kh, kw] directly, or
    // reordered to [oc, kh, kw, c] in the scratch buffer when the filter is described NHWC.
    const void *filterIn(const float *w)
    {
        if (!m_filterNhwc) return w;
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnTransformTensor(m_ctx.cudnn, &one, m_wPlainDesc.get(), w, &zero,
                                            m_wNhwcDesc.get(), m_filterScratch.data()));
        return m_filterScratch.data();
    }

    void setFilter(cudnnTensorFormat_t format)
    {
        FB_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
            m_wDesc.get(), CUDNN_DATA_FLOAT, format, cudnnInt(m_d.oc, "output channels"),
            cudnnInt(m_d.c, "input channels"), cudnnInt(m_d.kh, "kernel height"),
            cudnnInt(m_d.kw, "kernel width")));
    }

    // One descriptor per pass: each carries the math type its chosen algorithm was timed with
    // (cuDNN picks the kernel from algorithm and math type together).
    void setConvolutions()
    {
        const cudnnMathType_t math = m_ctx.tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
        for (const ConvolutionDesc *c : {&m_fwdConv, &m_bwdDataConv, &m_bwdFilterConv}) {
            FB_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
                c->get(), cudnnInt(m_d.ph, "padding"), cudnnInt(m_d.pw, "padding"),
                cudnnInt(m_d.sh, "stride"), cudnnInt(m_d.sw, "stride"), 1, 1,
                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)); // y = sum x * w, no kernel flip
            FB_CUDNN_CHECK(cudnnSetConvolutionMathType(c->get(), math));
        }
    }

    // cuDNN's idea of the output size must be ours (ConvDesc::oh/ow), or y would be misread.
    void checkOutputSize() const
    {
        int n = 0, c = 0, h = 0, w = 0;
        FB_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(m_fwdConv.get(), m_xDesc.get(),
                                                             m_wDesc.get(), &n, &c, &h, &w));
        FB_ASSERT(n == m_d.n && c == m_d.oc && h == m_d.oh() && w == m_d.ow(),
                  "cuDNN's convolution output size differs from ConvDesc's");
    }

    // As much trial workspace as the cap, or less where the device has less to spare.
    DeviceBuffer trialWorkspace()
    {
        for (size_t bytes = kWorkspaceCap; bytes >= kMinTrialWorkspace; bytes /= 2) {
            try {
                return DeviceBuffer(*m_ctx.allocator, bytes);
            } catch (const DeviceError &) {
                // Try with half: fewer algorithms fit, but some always need little or none.
            }
        }
        return DeviceBuffer();
    }

    void chooseAlgorithms()
    {
        {
            // Scratch tensors of the real sizes. The contents do not matter, but zeros keep
            // garbage NaNs and denormals from skewing the timings. dx reuses x's buffer and dw
            // w's: each trial writes only its own output.
            CachingAllocator &alloc = *m_ctx.allocator;
            DeviceBuffer x(alloc, xBytes()), y(alloc, yBytes()), w(alloc, wBytes());
            FB_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), m_ctx.stream));
            FB_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.bytes(), m_ctx.stream));
            FB_CUDA_CHECK(cudaMemsetAsync(w.data(), 0, w.bytes(), m_ctx.stream));
            const DeviceBuffer ws = trialWorkspace();
            std::string problem;
            bool found = findAll(x.data(), y.data(), w.data(), ws, problem);
            if (!found && m_d.channelsLast) {
                setFilter(CUDNN_TENSOR_NHWC);
                m_filterNhwc = true;
                found = findAll(x.data(), y.data(), w.data(), ws, problem);
            }
            if (!found)
                throw DeviceError("cuDNN has no convolution algorithm for " + describeShape() +
                                  " within " + std::to_string(ws.bytes() >> 20) +
                                  " MiB of workspace" +
                                  (problem.empty() ? "" : " (" + problem + ")"));
            // The trials ran synchronously (Find returns their timings), so their buffers go
            // back to the allocator here, before the real workspace is asked for.
        }
        if (m_filterNhwc) {
            setTransformDescs();
            m_filterScratch = DeviceBuffer(*m_ctx.allocator, wBytes());
        }
        m_workspace = DeviceBuffer(
            *m_ctx.allocator, std::max({m_fwdWorkspace, m_bwdDataWorkspace, m_bwdFilterWorkspace}));
    }

    // The weights as plain tensors of logical size [oc, c, kh, kw] in both layouts, for
    // cudnnTransformTensor between the caller's layout and the NHWC filter's.
    void setTransformDescs()
    {
        setImageDesc(m_wPlainDesc, m_d.oc, m_d.c, m_d.kh, m_d.kw, false);
        setImageDesc(m_wNhwcDesc, m_d.oc, m_d.c, m_d.kh, m_d.kw, true);
    }

    // Times every algorithm of the three passes and keeps the fastest usable one of each, with
    // its math type and workspace. False when some pass has none.
    bool findAll(void *x, void *y, void *w, const DeviceBuffer &ws, std::string &problem)
    {
        setConvolutions(); // a previous attempt may have changed their math types
        const cudnnHandle_t h = m_ctx.cudnn;
        const bool tf32 = m_ctx.tf32;
        int returned = 0, count = 0;

        FB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> fwd(size_t(std::max(count, 1)));
        if (!FB_FIND_RAN(cudnnFindConvolutionForwardAlgorithmEx(
                             h, m_xDesc.get(), x, m_wDesc.get(), w, m_fwdConv.get(), m_yDesc.get(),
                             y, int(fwd.size()), &returned, fwd.data(), ws.data(), ws.bytes()),
                         problem))
            return false;
        const auto *f = fastestUsable(fwd, returned, ws.bytes(), tf32);
        if (!f) return false;
        m_fwdAlgo = f->algo;
        FB_CUDNN_CHECK(cudnnSetConvolutionMathType(m_fwdConv.get(), f->mathType));
        FB_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, m_xDesc.get(), m_wDesc.get(),
                                                               m_fwdConv.get(), m_yDesc.get(),
                                                               m_fwdAlgo, &m_fwdWorkspace));
        m_fwdWorkspace = std::max(m_fwdWorkspace, f->memory);

        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> bd(size_t(std::max(count, 1)));
        if (!FB_FIND_RAN(cudnnFindConvolutionBackwardDataAlgorithmEx(
                             h, m_wDesc.get(), w, m_yDesc.get(), y, m_bwdDataConv.get(),
                             m_xDesc.get(), x, int(bd.size()), &returned, bd.data(), ws.data(),
                             ws.bytes()),
                         problem))
            return false;
        const auto *b = fastestUsable(bd, returned, ws.bytes(), tf32);
        if (!b) return false;
        m_bwdDataAlgo = b->algo;
        FB_CUDNN_CHECK(cudnnSetConvolutionMathType(m_bwdDataConv.get(), b->mathType));
        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
            h, m_wDesc.get(), m_yDesc.get(), m_bwdDataConv.get(), m_xDesc.get(), m_bwdDataAlgo,
            &m_bwdDataWorkspace));
        m_bwdDataWorkspace = std::max(m_bwdDataWorkspace, b->memory);

        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> bf(size_t(std::max(count, 1)));
        if (!FB_FIND_RAN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                             h, m_xDesc.get(), x, m_yDesc.get(), y, m_bwdFilterConv.get(),
                             m_wDesc.get(), w, int(bf.size()), &returned, bf.data(), ws.data(),
                             ws.bytes()),
                         problem))
            return false;
        const auto *g = fastestUsable(bf, returned, ws.bytes(), tf32);
        if (!g) return false;
        m_bwdFilterAlgo = g->algo;
        FB_CUDNN_CHECK(cudnnSetConvolutionMathType(m_bwdFilterConv.get(), g->mathType));
        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
            h, m_xDesc.get(), m_yDesc.get(), m_bwdFilterConv.get(), m_wDesc.get(), m_bwdFilterAlgo,
            &m_bwdFilterWorkspace));
        m_bwdFilterWorkspace = std::max(m_bwdFilterWorkspace, g->memory);
        return true;
    }

    CudaContext &m_ctx;
    ConvDesc m_d;
    TensorDesc m_xDesc, m_yDesc, m_biasDesc;
    FilterDesc m_wDesc;
    ConvolutionDesc m_fwdConv, m_bwdDataConv, m_bwdFilterConv;
    cudnnConvolutionFwdAlgo_t m_fwdAlgo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    cudnnConvolutionBwdDataAlgo_t m_bwdDataAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
    cudnnConvolutionBwdFilterAlgo_t m_bwdFilterAlgo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
    size_t m_fwdWorkspace = 0, m_bwdDataWorkspace = 0, m_bwdFilterWorkspace = 0;
    DeviceBuffer m_workspace;
    // The NHWC-filter fallback: the weights (or their gradient) in [oc, kh, kw, c] order, and
    // the two layouts' descriptors for the reorders.
    bool m_filterNhwc = false;
    DeviceBuffer m_filterScratch;
    TensorDesc m_wPlainDesc, m_wNhwcDesc;
};

} // namespace

std::unique_ptr<ConvKernel> makeConv(CudaContext &ctx, const ConvDesc &d)
{
    return std::make_unique<CudnnConv>(ctx, d);
}

} // namespace fb::cuda
