#pragma once

// The heavy kernels of the CUDA backend, one file per op family (ggml/llm.c style):
// cudnn_conv.cpp, cublas_linear.cpp, cudnn_pool.cpp, cudnn_batchnorm.cpp and activation kernels
// in elementwise.cu. Each is made once per layer and batch size (cuDNN descriptors, algorithm
// choice and workspace happen here, at plan time) and runs on the context's stream.

#include "core/backend/cuda/cuda_context.h"
#include "core/backend/cuda/cuda_kernels.h"

namespace fb::cuda {

// A float32 input of a convolution or matrix product as the library reads it: the tensor itself,
// or under bf16 mixed precision its rounding to bfloat16, queued into `scratch` (count elements).
inline const void *productInput(bool bf16, const float *t, const DeviceBuffer &scratch,
                                int64_t count, cudaStream_t stream)
{
    if (!bf16) return t;
    toBf16(t, scratch.as<uint16_t>(), count, stream);
    return scratch.data();
}

std::unique_ptr<ConvKernel> makeConv(CudaContext &ctx, const ConvDesc &d);
std::unique_ptr<LinearKernel> makeLinear(CudaContext &ctx, const LinearDesc &d);
std::unique_ptr<PoolKernel> makePool(CudaContext &ctx, const PoolDesc &d);
std::unique_ptr<ActivationKernel> makeActivation(CudaContext &ctx, const ActivationDesc &d);
std::unique_ptr<BatchNormKernel> makeBatchNorm(CudaContext &ctx, const BatchNormDesc &d);

} // namespace fb::cuda
