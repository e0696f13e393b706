// Convolution on cuDNN's legacy API. Everything that costs time is settled once, when the plan is
// made: the descriptors, the algorithm of each pass (cudnnFind*AlgorithmEx runs every candidate on
// scratch tensors of the real sizes and times it, as PyTorch's benchmark mode does) and one
// workspace shared by the three passes, which run one after another on the context's stream.
//
// Precision (fixed when the kernel is made): under float32 the convolution descriptors ask for
// CUDNN_FMA_MATH, so no algorithm rounds its inputs to TF32 and results match the CPU within float
// rounding. Under tf32, CUDNN_DEFAULT_MATH lets cuDNN use TF32 tensor cores for float data (cuDNN 9
// has no separate TF32 setting); CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION is never taken, as it
// rounds to FP16/BF16 behind the caller's back.
//
// Determinism: the fastest algorithm of a pass may sum with atomics, in an order that changes from
// run to run, and the timings that pick it vary too. Under CudaContext::deterministic the choice
// comes from cuDNN's heuristics (no timing) and only algorithms reported CUDNN_DETERMINISTIC are
// taken, so a run, and a resumed run, gives the same bits every time on the same GPU and cuDNN.
//
// bf16 mixed precision (Precision::Bf16): the convolution itself runs on bfloat16 tensors with
// float32 accumulation (cuDNN's PSEUDO_BFLOAT16_CONFIG: x, w and y bfloat16, the descriptor's
// compute type float). x, w and dy are rounded into bfloat16 buffers made with the kernel; cuDNN
// writes its results (y, dx, dw) in bfloat16, and they are widened back to float32, so the layers
// around see float32 as always (holding bfloat16's precision). The bias stays float32.
// backwardWeights reuses the x rounded by forward and the dy rounded by backwardData, or rounds dy
// itself when the step had no backwardData (a model's first layer).
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
#include "core/backend/cuda/cuda_runtime_types.h"
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

// tensorOps: TF32 or bf16, where tensor-core math is the point; plain float32 keeps to FMA math.
bool mathAllowed(cudnnMathType_t math, bool tensorOps)
{
    return tensorOps ? math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : math == CUDNN_FMA_MATH;
}

// cuDNN returns the trials sorted by time, fastest first: take the first that ran, fits the
// workspace, keeps the precision asked for and, when asked, is deterministic.
template <class Perf>
const Perf *fastestUsable(const std::vector<Perf> &perf, int returned, size_t workspace,
                          bool tensorOps, bool deterministic)
{
    for (int i = 0; i < returned && i < int(perf.size()); ++i) {
        const Perf &p = perf[size_t(i)];
        if (p.status == CUDNN_STATUS_SUCCESS && p.memory <= workspace &&
            mathAllowed(p.mathType, tensorOps) &&
            (!deterministic || p.determinism == CUDNN_DETERMINISTIC))
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
        , m_tf32(ctx.tf32())
        , m_deterministic(ctx.deterministic)
        , m_bf16(ctx.bf16())
        , m_type(m_bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT)
        , m_elem(m_bf16 ? sizeof(uint16_t) : sizeof(float))
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0 && d.oc > 0, "empty convolution");
        FB_ASSERT(d.kh > 0 && d.kw > 0 && d.sh > 0 && d.sw > 0, "bad kernel or stride");
        FB_ASSERT(d.ph >= 0 && d.pw >= 0 && d.oh() > 0 && d.ow() > 0, "bad padding");
        setImageDesc(m_xDesc, d.n, d.c, d.h, d.w, d.channelsLast, m_type);
        setImageDesc(m_yDesc, d.n, d.oc, d.oh(), d.ow(), d.channelsLast, m_type);
        setImageDesc(m_yFloatDesc, d.n, d.oc, d.oh(), d.ow(), d.channelsLast);
        setChannelDesc(m_biasDesc, d.oc);
        setFilter(CUDNN_TENSOR_NCHW);
        setConvolutions();
        checkOutputSize();
        chooseAlgorithms();
        if (m_bf16) {
            CachingAllocator &a = *m_ctx.allocator;
            m_xb = DeviceBuffer(a, xBytes());
            m_dxb = DeviceBuffer(a, xBytes());
            m_yb = DeviceBuffer(a, yBytes());
            m_dyb = DeviceBuffer(a, yBytes());
            m_wb = DeviceBuffer(a, wBytes());
        }
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        const float one = 1.0f, zero = 0.0f;
        m_dyRounded = false;
        const void *xin = rounded(x, m_xb, xCount());
        void *yout = m_bf16 ? m_yb.data() : static_cast<void *>(y);
        FB_CUDNN_CHECK(cudnnConvolutionForward(
            m_ctx.cudnn, &one, m_xDesc.get(), xin, m_wDesc.get(), filterIn(w), m_fwdConv.get(),
            m_fwdAlgo, m_workspace.data(), m_workspace.bytes(), &zero, m_yDesc.get(), yout));
        if (m_bf16) fromBf16(m_yb.as<uint16_t>(), y, int64_t(yCount()), m_ctx.stream);
        if (!m_d.bias) return;
        if (m_d.channelsLast) {
            addBiasRows(y, b, m_d.n * m_d.oh() * m_d.ow(), m_d.oc, m_ctx.stream);
        } else {
            // y = 1 * b (broadcast over n, h, w) + 1 * y
            FB_CUDNN_CHECK(cudnnAddTensor(m_ctx.cudnn, &one, m_biasDesc.get(), b, &one,
                                          m_yFloatDesc.get(), y));
        }
    }

    void backwardData(const float *dy, const float *w, float *dx) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        const float one = 1.0f, zero = 0.0f;
        const void *dyin = rounded(dy, m_dyb, yCount());
        m_dyRounded = m_bf16;
        void *dxout = m_bf16 ? m_dxb.data() : static_cast<void *>(dx);
        FB_CUDNN_CHECK(cudnnConvolutionBackwardData(
            m_ctx.cudnn, &one, m_wDesc.get(), filterIn(w), m_yDesc.get(), dyin, m_bwdDataConv.get(),
            m_bwdDataAlgo, m_workspace.data(), m_workspace.bytes(), &zero, m_xDesc.get(), dxout));
        if (m_bf16) fromBf16(m_dxb.as<uint16_t>(), dx, int64_t(xCount()), m_ctx.stream);
    }

    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        const float one = 1.0f, zero = 0.0f;
        // Under bf16: x as forward rounded it, dy as backwardData did (or now), and the gradient
        // into m_wb (free again: the next forward rounds w anew) before it is widened into dw.
        const void *xin = m_bf16 ? m_xb.data() : static_cast<const void *>(x);
        const void *dyin = m_dyRounded ? m_dyb.data() : rounded(dy, m_dyb, yCount());
        void *plain = m_bf16 ? m_wb.data() : static_cast<void *>(dw);
        void *dwOut = m_filterNhwc ? m_filterScratch.data() : plain;
        FB_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
            m_ctx.cudnn, &one, m_xDesc.get(), xin, m_yDesc.get(), dyin, m_bwdFilterConv.get(),
            m_bwdFilterAlgo, m_workspace.data(), m_workspace.bytes(), &zero, m_wDesc.get(), dwOut));
        if (m_filterNhwc)
            FB_CUDNN_CHECK(cudnnTransformTensor(m_ctx.cudnn, &one, m_wNhwcDesc.get(), dwOut, &zero,
                                                m_wPlainDesc.get(), plain));
        if (m_bf16) fromBf16(m_wb.as<uint16_t>(), dw, int64_t(wCount()), m_ctx.stream);
        if (!m_d.bias || !db) return;
        if (m_d.channelsLast) {
            sumRows(dy, db, m_d.n * m_d.oh() * m_d.ow(), m_d.oc, m_ctx.stream);
        } else {
            FB_CUDNN_CHECK(cudnnConvolutionBackwardBias(m_ctx.cudnn, &one, m_yFloatDesc.get(), dy,
                                                        &zero, m_biasDesc.get(), db));
        }
    }

private:
    size_t xCount() const { return size_t(m_d.n * m_d.c * m_d.h * m_d.w); }
    size_t yCount() const { return size_t(m_d.n * m_d.oc * m_d.oh() * m_d.ow()); }
    size_t wCount() const { return size_t(m_d.oc * m_d.c * m_d.kh * m_d.kw); }
    // Bytes of each as the convolution reads it (float32, or bfloat16 under bf16).
    size_t xBytes() const { return xCount() * m_elem; }
    size_t yBytes() const { return yCount() * m_elem; }
    size_t wBytes() const { return wCount() * m_elem; }

    // A float32 tensor as the convolution reads it: itself, or under bf16 its rounding into
    // `scratch`.
    const void *rounded(const float *t, const DeviceBuffer &scratch, size_t count)
    {
        return productInput(m_bf16, t, scratch, int64_t(count), m_ctx.stream);
    }

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
        const void *plain = rounded(w, m_wb, wCount());
        if (!m_filterNhwc) return plain;
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnTransformTensor(m_ctx.cudnn, &one, m_wPlainDesc.get(), plain, &zero,
                                            m_wNhwcDesc.get(), m_filterScratch.data()));
        return m_filterScratch.data();
    }

    void setFilter(cudnnTensorFormat_t format)
    {
        FB_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
            m_wDesc.get(), m_type, format, cudnnInt(m_d.oc, "output channels"),
            cudnnInt(m_d.c, "input channels"), cudnnInt(m_d.kh, "kernel height"),
            cudnnInt(m_d.kw, "kernel width")));
    }

    // One descriptor per pass: each carries the math type its chosen algorithm was timed with
    // (cuDNN picks the kernel from algorithm and math type together).
    void setConvolutions()
    {
        const cudnnMathType_t math = tensorOps() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
        for (const ConvolutionDesc *c : {&m_fwdConv, &m_bwdDataConv, &m_bwdFilterConv}) {
            FB_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
                c->get(), cudnnInt(m_d.ph, "padding"), cudnnInt(m_d.pw, "padding"),
                cudnnInt(m_d.sh, "stride"), cudnnInt(m_d.sw, "stride"), 1, 1,
                CUDNN_CROSS_CORRELATION,
                CUDNN_DATA_FLOAT)); // y = sum x * w, no kernel flip; float32 sums in every mode
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
        setImageDesc(m_wPlainDesc, m_d.oc, m_d.c, m_d.kh, m_d.kw, false, m_type);
        setImageDesc(m_wNhwcDesc, m_d.oc, m_d.c, m_d.kh, m_d.kw, true, m_type);
    }

    // Times every algorithm of the three passes and keeps the fastest usable one of each, with
    // its math type and workspace. False when some pass has none. Under m_deterministic the
    // candidates come from cuDNN's heuristics instead of trials (the same list on every run, where
    // timings may reorder two close algorithms) and only deterministic ones are taken: PyTorch's
    // benchmark=False with deterministic=True.
    bool findAll(void *x, void *y, void *w, const DeviceBuffer &ws, std::string &problem)
    {
        setConvolutions(); // a previous attempt may have changed their math types
        const cudnnHandle_t h = m_ctx.cudnn;
        const bool tensorOps = this->tensorOps();
        int returned = 0, count = 0;

        FB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> fwd(size_t(std::max(count, 1)));
        if (m_deterministic)
            FB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
                h, m_xDesc.get(), m_wDesc.get(), m_fwdConv.get(), m_yDesc.get(), int(fwd.size()),
                &returned, fwd.data()));
        else if (!FB_FIND_RAN(cudnnFindConvolutionForwardAlgorithmEx(
                                  h, m_xDesc.get(), x, m_wDesc.get(), w, m_fwdConv.get(),
                                  m_yDesc.get(), y, int(fwd.size()), &returned, fwd.data(),
                                  ws.data(), ws.bytes()),
                              problem))
            return false;
        const auto *f = fastestUsable(fwd, returned, ws.bytes(), tensorOps, m_deterministic);
        if (!f) return false;
        m_fwdAlgo = f->algo;
        FB_CUDNN_CHECK(cudnnSetConvolutionMathType(m_fwdConv.get(), f->mathType));
        FB_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, m_xDesc.get(), m_wDesc.get(),
                                                               m_fwdConv.get(), m_yDesc.get(),
                                                               m_fwdAlgo, &m_fwdWorkspace));
        m_fwdWorkspace = std::max(m_fwdWorkspace, f->memory);

        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> bd(size_t(std::max(count, 1)));
        if (m_deterministic)
            FB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                h, m_wDesc.get(), m_yDesc.get(), m_bwdDataConv.get(), m_xDesc.get(), int(bd.size()),
                &returned, bd.data()));
        else if (!FB_FIND_RAN(cudnnFindConvolutionBackwardDataAlgorithmEx(
                                  h, m_wDesc.get(), w, m_yDesc.get(), y, m_bwdDataConv.get(),
                                  m_xDesc.get(), x, int(bd.size()), &returned, bd.data(), ws.data(),
                                  ws.bytes()),
                              problem))
            return false;
        const auto *b = fastestUsable(bd, returned, ws.bytes(), tensorOps, m_deterministic);
        if (!b) return false;
        m_bwdDataAlgo = b->algo;
        FB_CUDNN_CHECK(cudnnSetConvolutionMathType(m_bwdDataConv.get(), b->mathType));
        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
            h, m_wDesc.get(), m_yDesc.get(), m_bwdDataConv.get(), m_xDesc.get(), m_bwdDataAlgo,
            &m_bwdDataWorkspace));
        m_bwdDataWorkspace = std::max(m_bwdDataWorkspace, b->memory);

        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> bf(size_t(std::max(count, 1)));
        if (m_deterministic)
            FB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                h, m_xDesc.get(), m_yDesc.get(), m_bwdFilterConv.get(), m_wDesc.get(),
                int(bf.size()), &returned, bf.data()));
        else if (!FB_FIND_RAN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                                  h, m_xDesc.get(), x, m_yDesc.get(), y, m_bwdFilterConv.get(),
                                  m_wDesc.get(), w, int(bf.size()), &returned, bf.data(), ws.data(),
                                  ws.bytes()),
                              problem))
            return false;
        const auto *g = fastestUsable(bf, returned, ws.bytes(), tensorOps, m_deterministic);
        if (!g) return false;
        m_bwdFilterAlgo = g->algo;
        FB_CUDNN_CHECK(cudnnSetConvolutionMathType(m_bwdFilterConv.get(), g->mathType));
        FB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
            h, m_xDesc.get(), m_yDesc.get(), m_bwdFilterConv.get(), m_wDesc.get(), m_bwdFilterAlgo,
            &m_bwdFilterWorkspace));
        m_bwdFilterWorkspace = std::max(m_bwdFilterWorkspace, g->memory);
        return true;
    }

    bool tensorOps() const { return m_tf32 || m_bf16; }

    CudaContext &m_ctx;
    ConvDesc m_d;
    // The precision the kernel was made with, and the convolution's data type and element size.
    bool m_tf32, m_deterministic, m_bf16;
    cudnnDataType_t m_type;
    size_t m_elem;
    // x, y and w as the convolution reads them (m_type); y in float32 for the bias ops.
    TensorDesc m_xDesc, m_yDesc, m_yFloatDesc, m_biasDesc;
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
    // bf16: the rounded x, dy and w (w's buffer also takes dw before it is widened), and the
    // convolution's bfloat16 outputs y and dx.
    DeviceBuffer m_xb, m_dxb, m_yb, m_dyb, m_wb;
    bool m_dyRounded = false; // m_dyb holds this step's dy (a backwardData call rounded it)
};

} // namespace

std::unique_ptr<ConvKernel> makeConv(CudaContext &ctx, const ConvDesc &d)
{
    return std::make_unique<CudnnConv>(ctx, d);
}

} // namespace fb::cuda
