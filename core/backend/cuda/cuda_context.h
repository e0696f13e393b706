#pragma once

// What every CUDA kernel of one backend shares: its device, its stream (all work of a backend
// runs in order on it), the library handles bound to that stream, its allocator and the run's
// precision settings. Owned by CudaBackend; kernels keep a reference.

#include "core/backend/cuda/caching_allocator.h"
#include "core/backend/cuda/cuda_check.h"

#include <memory>

namespace fb::cuda {

struct CudaContext {
    int device = 0;
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    cudnnHandle_t cudnn = nullptr;
    CachingAllocator *allocator = nullptr;
    // The arithmetic of convolutions and matrix products made from now on (Backend::
    // setPrecision). Float32 by default: the CPU's results within float rounding.
    Precision precision = Precision::Float32;
    // Only algorithms that give the same bits on every run (Backend::setDeterministic); cuDNN's
    // fastest ones for some passes sum with atomics, in an order that changes between runs.
    bool deterministic = false;
    bool tf32() const { return precision == Precision::Tf32; }
    bool bf16() const { return precision == Precision::Bf16; }
};

// Device memory from the context's allocator, given back when the owner goes.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(CachingAllocator &a, size_t bytes)
        : m_alloc(&a)
        , m_data(bytes ? a.allocate(bytes) : nullptr)
        , m_bytes(bytes)
    {}
    ~DeviceBuffer()
    {
        if (m_alloc) m_alloc->release(m_data);
    }
    DeviceBuffer(DeviceBuffer &&o) noexcept { swap(o); }
    DeviceBuffer &operator=(DeviceBuffer &&o) noexcept
    {
        swap(o);
        return *this;
    }
    void *data() const { return m_data; }
    template <class T> T *as() const { return static_cast<T *>(m_data); }
    size_t bytes() const { return m_bytes; }

private:
    void swap(DeviceBuffer &o) noexcept
    {
        std::swap(m_alloc, o.m_alloc);
        std::swap(m_data, o.m_data);
        std::swap(m_bytes, o.m_bytes);
    }
    CachingAllocator *m_alloc = nullptr;
    void *m_data = nullptr;
    size_t m_bytes = 0;
};

} // namespace fb::cuda
