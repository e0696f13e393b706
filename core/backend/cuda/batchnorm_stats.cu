// See batchnorm_stats.h. One thread per channel: a layer has at most a few thousand channels, so
// this is a single small launch next to the normalization itself.

#include "core/backend/cuda/batchnorm_stats.h"

#include "core/backend/cuda/cuda_check.h"

namespace fb::cuda {
namespace {

constexpr int kStatsThreads = 256;

__global__ void statsFromSavedKernel(const float *saveMean, const float *saveInvStd, float *mean,
                                     float *var, int64_t channels, double eps)
{
    const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    mean[c] = saveMean[c];
    // In double: 1/istd^2 is var + eps, and subtracting eps cancels digits when var is small
    // next to it. The clamp keeps a constant channel's rounding residue from going negative.
    const double istd = saveInvStd[c];
    var[c] = float(fmax(0.0, 1.0 / (istd * istd) - eps));
}

} // namespace

void batchNormStatsFromSaved(const float *saveMean, const float *saveInvStd, float *mean,
                             float *var, int64_t channels, double eps, cudaStream_t stream)
{
    if (channels <= 0) return;
    const unsigned blocks = unsigned((channels + kStatsThreads - 1) / kStatsThreads);
    statsFromSavedKernel<<<blocks, kStatsThreads, 0, stream>>>(saveMean, saveInvStd, mean, var,
                                                               channels, eps);
    FB_CUDA_CHECK_LAUNCH();
}

} // namespace fb::cuda
