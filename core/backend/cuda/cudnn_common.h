#pragma once

// What the cuDNN kernels share: owners of the legacy API's descriptors (host-side objects, made
// once per kernel at plan time and destroyed with it) and helpers that describe our dense float32
// image tensors. The legacy API (cudnnConvolutionForward, cudnnPoolingForward, ...) is deprecated
// in cuDNN 9 but present and stable; it warns only when CUDNN_WARN_DEPRECATED is defined.

#include "core/backend/cuda/cuda_check.h"

#include <climits>
#include <cstdint>
#include <string>
#include <utility>

namespace fb::cuda {

// The four descriptor kinds, each with its own create and destroy call (named in the check's
// message, so a failure says which one).
struct TensorDescTraits {
    using Handle = cudnnTensorDescriptor_t;
    static void create(Handle *d) { FB_CUDNN_CHECK(cudnnCreateTensorDescriptor(d)); }
    static void destroy(Handle d) { cudnnDestroyTensorDescriptor(d); }
};
struct FilterDescTraits {
    using Handle = cudnnFilterDescriptor_t;
    static void create(Handle *d) { FB_CUDNN_CHECK(cudnnCreateFilterDescriptor(d)); }
    static void destroy(Handle d) { cudnnDestroyFilterDescriptor(d); }
};
struct ConvolutionDescTraits {
    using Handle = cudnnConvolutionDescriptor_t;
    static void create(Handle *d) { FB_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(d)); }
    static void destroy(Handle d) { cudnnDestroyConvolutionDescriptor(d); }
};
struct PoolingDescTraits {
    using Handle = cudnnPoolingDescriptor_t;
    static void create(Handle *d) { FB_CUDNN_CHECK(cudnnCreatePoolingDescriptor(d)); }
    static void destroy(Handle d) { cudnnDestroyPoolingDescriptor(d); }
};

// Owns one descriptor. The destructor ignores the status of the destroy call: a destructor must
// not throw, and destroying fails only for a handle that was never created (never the case here).
template <class Traits> class CudnnDescriptor {
public:
    using Handle = typename Traits::Handle;
    CudnnDescriptor() { Traits::create(&m_handle); }
    ~CudnnDescriptor()
    {
        if (m_handle) Traits::destroy(m_handle);
    }
    CudnnDescriptor(const CudnnDescriptor &) = delete;
    CudnnDescriptor &operator=(const CudnnDescriptor &) = delete;
    CudnnDescriptor(CudnnDescriptor &&o) noexcept
        : m_handle(std::exchange(o.m_handle, nullptr))
    {}
    CudnnDescriptor &operator=(CudnnDescriptor &&o) noexcept
    {
        std::swap(m_handle, o.m_handle);
        return *this;
    }
    Handle get() const { return m_handle; }

private:
    Handle m_handle = nullptr;
};

using TensorDesc = CudnnDescriptor<TensorDescTraits>;
using FilterDesc = CudnnDescriptor<FilterDescTraits>;
using ConvolutionDesc = CudnnDescriptor<ConvolutionDescTraits>;
using PoolingDesc = CudnnDescriptor<PoolingDescTraits>;

// cuDNN's 4-d descriptors take int sizes. A layer too large for them is the user's model, not a
// programming error, so it ends the step with a DeviceError naming the size.
inline int cudnnInt(int64_t v, const char *what)
{
    if (v < 0 || v > INT_MAX)
        throw DeviceError(std::string("cuDNN cannot describe ") + what + " = " + std::to_string(v) +
                          " (its descriptors take 32-bit sizes)");
    return int(v);
}

inline cudnnTensorFormat_t imageFormat(bool channelsLast)
{
    return channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

// A dense image tensor of logical size [n, c, h, w], stored NCHW, or NHWC when channelsLast
// (cuDNN derives the strides from the format; the sizes stay in n, c, h, w order); float32 unless
// another type is given (bfloat16 under bf16 mixed precision).
inline void setImageDesc(const TensorDesc &t, int64_t n, int64_t c, int64_t h, int64_t w,
                         bool channelsLast, cudnnDataType_t type = CUDNN_DATA_FLOAT)
{
    FB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.get(), imageFormat(channelsLast), type,
                                              cudnnInt(n, "batch size"), cudnnInt(c, "channels"),
                                              cudnnInt(h, "height"), cudnnInt(w, "width")));
}

// Per-channel vector [1, c, 1, 1]: a bias broadcast over n, h and w. Its strides are the same in
// either format (the channel stride is 1), so NCHW describes it for both.
inline void setChannelDesc(const TensorDesc &t, int64_t c)
{
    FB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                              cudnnInt(c, "channels"), 1, 1));
}

} // namespace fb::cuda
