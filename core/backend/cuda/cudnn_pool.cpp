// Pooling on cuDNN. Max pooling uses CUDNN_POOLING_MAX_DETERMINISTIC (padding cells never win, and
// the backward pass gives the same gradient on every run) with NaN propagation, as the reference
// does; average pooling uses CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING (divide by kh*kw always,
// PyTorch's count_include_pad=True).
//
// cudnnPoolingBackward finds each window's winner again from the forward's x and y, which the
// PoolKernel interface does not pass to backward(): the kernel keeps the pointers of the latest
// forward() call. backend.h guarantees those buffers are unchanged until the backward pass.

#include "core/backend/cuda/cuda_ops.h"
#include "core/backend/cuda/cuda_runtime_types.h"
#include "core/backend/cuda/cudnn_common.h"

#include "core/base/check.h"

namespace fb::cuda {
namespace {

class CudnnPool final : public PoolKernel {
public:
    CudnnPool(CudaContext &ctx, const PoolDesc &d)
        : m_ctx(ctx)
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0, "empty pooling input");
        FB_ASSERT(d.kh > 0 && d.kw > 0 && d.sh > 0 && d.sw > 0, "bad pooling window or stride");
        // Padding narrower than the window means every window holds at least one real cell.
        FB_ASSERT(d.ph >= 0 && d.pw >= 0 && d.ph < d.kh && d.pw < d.kw, "bad pooling padding");
        FB_ASSERT(d.oh() > 0 && d.ow() > 0, "pooling window larger than the input");
        setImageDesc(m_xDesc, d.n, d.c, d.h, d.w, d.channelsLast);
        setImageDesc(m_yDesc, d.n, d.c, d.oh(), d.ow(), d.channelsLast);
        const cudnnPoolingMode_t mode = d.kind == PoolKind::Max
                                            ? CUDNN_POOLING_MAX_DETERMINISTIC
                                            : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
        FB_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
            m_pool.get(), mode, CUDNN_PROPAGATE_NAN, cudnnInt(d.kh, "pooling window"),
            cudnnInt(d.kw, "pooling window"), cudnnInt(d.ph, "pooling padding"),
            cudnnInt(d.pw, "pooling padding"), cudnnInt(d.sh, "pooling stride"),
            cudnnInt(d.sw, "pooling stride")));
        // cuDNN's output size must be PoolDesc's, or y would be misread.
        int n = 0, c = 0, h = 0, w = 0;
        FB_CUDNN_CHECK(
            cudnnGetPooling2dForwardOutputDim(m_pool.get(), m_xDesc.get(), &n, &c, &h, &w));
        FB_ASSERT(n == d.n && c == d.c && h == d.oh() && w == d.ow(),
                  "cuDNN's pooling output size differs from PoolDesc's");
    }

    void forward(const float *x, float *y) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnPoolingForward(m_ctx.cudnn, m_pool.get(), &one, m_xDesc.get(), x, &zero,
                                           m_yDesc.get(), y));
        m_lastX = x;
        m_lastY = y;
    }

    void backward(const float *dy, float *dx) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        // Average pooling needs neither x nor y in principle, but cuDNN's call takes both.
        FB_ASSERT(m_lastX && m_lastY, "pooling backward before any forward");
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnPoolingBackward(m_ctx.cudnn, m_pool.get(), &one, m_yDesc.get(), m_lastY,
                                            m_yDesc.get(), dy, m_xDesc.get(), m_lastX, &zero,
                                            m_xDesc.get(), dx));
    }

private:
    CudaContext &m_ctx;
    TensorDesc m_xDesc, m_yDesc;
    PoolingDesc m_pool;
    const float *m_lastX = nullptr;
    const float *m_lastY = nullptr;
};

} // namespace

std::unique_ptr<PoolKernel> makePool(CudaContext &ctx, const PoolDesc &d)
{
    return std::make_unique<CudnnPool>(ctx, d);
}

} // namespace fb::cuda
