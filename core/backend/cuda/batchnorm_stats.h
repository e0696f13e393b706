#pragma once

// The one own kernel of the cuDNN batch normalization (cudnn_batchnorm.cpp): cuDNN's training pass
// saves the batch mean and the inverse standard deviation 1/sqrt(var + eps), while the
// BatchNormKernel interface hands the caller the mean and the biased variance. A plain C++
// declaration, so that the .cpp calls it without nvcc.

#include <cstdint>

#include <cuda_runtime.h>

namespace fb::cuda {

// mean[c] = saveMean[c]; var[c] = max(0, 1 / saveInvStd[c]^2 - eps) for c < channels, with eps the
// epsilon cuDNN normalized with. Queued on `stream`, launch checked, no wait. Device pointers.
void batchNormStatsFromSaved(const float *saveMean, const float *saveInvStd, float *mean,
                             float *var, int64_t channels, double eps, cudaStream_t stream);

} // namespace fb::cuda
