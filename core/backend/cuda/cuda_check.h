#pragma once

// Every CUDA, cuBLAS and cuDNN call goes through one of these checks (DESIGN.md): a failure
// throws fb::DeviceError whose message names the call, its source location and the library's
// own words, e.g.
//   "cudaMalloc(&p, bytes) failed at core/backend/cuda/caching_allocator.cpp:57: out of memory".
// Kernel launches are checked with FB_CUDA_CHECK_LAUNCH() right after the launch.

#include "core/backend/backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

namespace fb::cuda {

[[noreturn]] void throwCallError(const char *call, const char *file, int line,
                                 const std::string &what);

std::string describe(cudaError_t e);
std::string describe(cublasStatus_t s);
std::string describe(cudnnStatus_t s);

inline bool failed(cudaError_t e)
{
    return e != cudaSuccess;
}
inline bool failed(cublasStatus_t s)
{
    return s != CUBLAS_STATUS_SUCCESS;
}
inline bool failed(cudnnStatus_t s)
{
    return s != CUDNN_STATUS_SUCCESS;
}

} // namespace fb::cuda

#define FB_CUDA_CALL_CHECK_(call)                                                                  \
    do {                                                                                           \
        const auto fb_status_ = (call);                                                            \
        if (::fb::cuda::failed(fb_status_))                                                        \
            ::fb::cuda::throwCallError(#call, __FILE__, __LINE__,                                  \
                                       ::fb::cuda::describe(fb_status_));                          \
    } while (0)

#define FB_CUDA_CHECK(call) FB_CUDA_CALL_CHECK_(call)
#define FB_CUBLAS_CHECK(call) FB_CUDA_CALL_CHECK_(call)
#define FB_CUDNN_CHECK(call) FB_CUDA_CALL_CHECK_(call)
// After a <<<...>>> launch: a bad configuration shows here, a fault in the kernel at the next
// synchronizing call.
#define FB_CUDA_CHECK_LAUNCH() FB_CUDA_CALL_CHECK_(cudaGetLastError())
