// Activations on the GPU through our own element-wise kernels (elementwise.cu), for every kind.
// cuDNN's activation functions lack GELU and leaky ReLU, and an activation is one memory-bound
// pass either way: an element-wise kernel runs it as fast as cuDNN would, with one code path and
// the reference's exact formulas (erf GELU, the gradient from the input x).

#include "core/backend/cuda/cuda_kernels.h"
#include "core/backend/cuda/cuda_ops.h"
#include "core/backend/cuda/cuda_runtime_types.h"

#include "core/base/check.h"

namespace fb::cuda {
namespace {

class CudaActivation final : public ActivationKernel {
public:
    CudaActivation(CudaContext &ctx, const ActivationDesc &d)
        : m_ctx(ctx)
        , m_d(d)
    {
        FB_ASSERT(d.count >= 0, "negative activation size");
    }

    void forward(const float *x, float *y) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        if (m_d.count == 0) return;      // no launch with an empty grid
        activationForward(m_d.kind, m_d.alpha, x, y, m_d.count, m_ctx.stream);
    }

    void backward(const float *x, const float *dy, float *dx) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        if (m_d.count == 0) return;
        activationBackward(m_d.kind, m_d.alpha, x, dy, dx, m_d.count, m_ctx.stream);
    }

private:
    CudaContext &m_ctx;
    ActivationDesc m_d;
};

} // namespace

std::unique_ptr<ActivationKernel> makeActivation(CudaContext &ctx, const ActivationDesc &d)
{
    return std::make_unique<CudaActivation>(ctx, d);
}

} // namespace fb::cuda
