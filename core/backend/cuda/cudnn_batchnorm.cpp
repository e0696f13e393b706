// Batch normalization on cuDNN (CUDNN_BATCHNORM_SPATIAL: one mean and variance per channel over
// n, h and w), NCHW or NHWC as the plan stores its images.
//
// Training asks cuDNN for no running averages (resultRunningMean/Variance both null, which cuDNN
// allows when both are): the layer keeps those itself from the statistics the kernel hands back.
// cuDNN saves the batch mean and the inverse standard deviation 1/sqrt(var + eps) in the kernel's
// own buffers; batchNormStatsFromSaved (batchnorm_stats.cu) turns them into the caller's mean and
// biased variance, and backward() reuses the saved pair of the latest forwardTraining call (so
// cuDNN need not recompute them), as backend.h allows.

#include "core/backend/cuda/batchnorm_stats.h"
#include "core/backend/cuda/cuda_ops.h"
#include "core/backend/cuda/cuda_runtime_types.h"
#include "core/backend/cuda/cudnn_common.h"

#include "core/base/check.h"

#include <algorithm>

namespace fb::cuda {
namespace {

constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;

class CudnnBatchNorm final : public BatchNormKernel {
public:
    CudnnBatchNorm(CudaContext &ctx, const BatchNormDesc &d)
        : m_ctx(ctx)
        , m_channels(d.c)
        // cuDNN rejects an epsilon below CUDNN_BN_MIN_EPSILON (0.0 in cuDNN 9's headers).
        , m_eps(std::max(double(d.eps), double(CUDNN_BN_MIN_EPSILON)))
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0, "empty batch normalization");
        setImageDesc(m_xDesc, d.n, d.c, d.h, d.w, d.channelsLast);
        // [1, c, 1, 1] for gamma, beta, mean and variance, whatever the layout of x.
        FB_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(m_paramDesc.get(), m_xDesc.get(), kMode));
        m_saveMean = DeviceBuffer(*ctx.allocator, size_t(d.c) * sizeof(float));
        m_saveInvStd = DeviceBuffer(*ctx.allocator, size_t(d.c) * sizeof(float));
    }

    void forwardTraining(const float *x, const float *gamma, const float *beta, float *y,
                         float *mean, float *var) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        const float one = 1.0f, zero = 0.0f;
        // The average factor only weighs the running averages, which are not asked for.
        const double unusedFactor = 1.0;
        FB_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
            m_ctx.cudnn, kMode, &one, &zero, m_xDesc.get(), x, m_xDesc.get(), y, m_paramDesc.get(),
            gamma, beta, unusedFactor, nullptr, nullptr, m_eps, m_saveMean.data(),
            m_saveInvStd.data()));
        batchNormStatsFromSaved(m_saveMean.as<float>(), m_saveInvStd.as<float>(), mean, var,
                                m_channels, m_eps, m_ctx.stream);
        m_haveSaved = true;
    }

    void forwardInference(const float *x, const float *gamma, const float *beta, const float *mean,
                          const float *var, float *y) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
            m_ctx.cudnn, kMode, &one, &zero, m_xDesc.get(), x, m_xDesc.get(), y, m_paramDesc.get(),
            gamma, beta, mean, var, m_eps));
    }

    // mean and var are ignored: the saved mean and inverse standard deviation of the latest
    // forwardTraining call hold the same statistics in the form cuDNN wants.
    void backward(const float *x, const float *dy, const float *gamma, const float *mean,
                  const float *var, float *dx, float *dgamma, float *dbeta) override
    {
        DeviceScope scope(m_ctx.device); // its stream and handles belong to it
        FB_ASSERT(m_haveSaved, "batch normalization backward before any training forward");
        // Both the data and the parameter gradients are overwritten (alpha 1, beta 0).
        const float one = 1.0f, zero = 0.0f;
        FB_CUDNN_CHECK(cudnnBatchNormalizationBackward(
            m_ctx.cudnn, kMode, &one, &zero, &one, &zero, m_xDesc.get(), x, m_xDesc.get(), dy,
            m_xDesc.get(), dx, m_paramDesc.get(), gamma, dgamma, dbeta, m_eps, m_saveMean.data(),
            m_saveInvStd.data()));
    }

private:
    CudaContext &m_ctx;
    int64_t m_channels;
    double m_eps;
    TensorDesc m_xDesc, m_paramDesc;
    DeviceBuffer m_saveMean, m_saveInvStd;
    bool m_haveSaved = false;
};

} // namespace

std::unique_ptr<BatchNormKernel> makeBatchNorm(CudaContext &ctx, const BatchNormDesc &d)
{
    return std::make_unique<CudnnBatchNorm>(ctx, d);
}

} // namespace fb::cuda
