#include "core/backend/cuda/caching_allocator.h"

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_runtime_types.h"

#include "core/base/bytes.h"

namespace fb::cuda {

namespace {

std::string gib(size_t bytes)
{
    return humanBytes(double(bytes));
}

} // namespace

CachingAllocator::CachingAllocator(int device, std::string deviceName)
    : m_device(device)
    , m_deviceName(std::move(deviceName))
{}

CachingAllocator::~CachingAllocator()
{
    std::lock_guard lock(m_mutex);
    emptyCache();
    // Blocks still live belong to tensors that outlive the backend (static lifetime at exit);
    // the driver frees them with the context.
}

size_t CachingAllocator::roundedSize(size_t bytes)
{
    // 512-byte steps below 1 MiB (cuDNN and cuBLAS like 256-byte alignment), 2 MiB steps above,
    // so that slightly different sizes share blocks.
    constexpr size_t kSmall = 512, kLarge = size_t(2) << 20;
    if (bytes == 0) bytes = 1;
    if (bytes < (size_t(1) << 20)) return (bytes + kSmall - 1) / kSmall * kSmall;
    return (bytes + kLarge - 1) / kLarge * kLarge;
}

void *CachingAllocator::allocate(size_t bytes)
{
    const size_t size = roundedSize(bytes);
    std::lock_guard lock(m_mutex);
    auto it = m_free.lower_bound(size);
    if (it != m_free.end() && it->first <= 2 * size) {
        void *p = it->second;
        const size_t blockSize = it->first;
        m_free.erase(it);
        m_live[p] = blockSize;
        m_inUse += blockSize;
        return p;
    }
    DeviceScope scope(m_device);
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // out of memory is not sticky: clear it and retry with the cache freed
        emptyCache();
        e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        size_t freeBytes = 0, totalBytes = 0;
        cudaMemGetInfo(&freeBytes, &totalBytes);
        throw DeviceError("out of GPU memory on cuda:" + std::to_string(m_device) + " (" +
                              m_deviceName + "): asked for " + gib(bytes) + ", this run holds " +
                              gib(m_inUse) + ", the device has " + gib(freeBytes) + " free of " +
                              gib(totalBytes) + " (" + describe(e) + "). Try a smaller batch size",
                          bytes);
    }
    m_live[p] = size;
    m_inUse += size;
    return p;
}

void CachingAllocator::release(void *p)
{
    if (!p) return;
    std::lock_guard lock(m_mutex);
    auto it = m_live.find(p);
    if (it == m_live.end()) return; // not ours: never happens unless a Storage was forged
    m_inUse -= it->second;
    m_free.emplace(it->second, p);
    m_live.erase(it);
}

void CachingAllocator::emptyCache()
{
    if (m_free.empty()) return;
    // By hand rather than DeviceScope: this runs in the destructor too, which must not throw.
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(m_device);
    for (auto &[size, p] : m_free)
        cudaFree(p);
    cudaSetDevice(previous);
    m_free.clear();
}

} // namespace fb::cuda
