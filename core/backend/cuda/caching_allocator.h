#pragma once

// Device memory that is cached instead of freed (PyTorch's CUDACachingAllocator idea, much
// simplified): cudaMalloc and cudaFree synchronize the device and cost tens of microseconds, and
// a run frees and asks for the same sizes again (plans per batch size, evaluation batches).
// Freed blocks go to a free list keyed by size; a request takes the smallest cached block that
// is large enough and not more than twice the size. When cudaMalloc fails, every cached block
// is released and the request tried once more before it is reported.
//
// Kernels run on one compute stream per backend, so a block freed while kernels still use it is
// only reused by work queued after them on that stream: stream order keeps it safe. The one
// other stream, uploadAhead's copy stream, writes only into the feed's batch slots, and keeps
// this safe by two rules (CudaBackend::uploadAhead, DeviceFeed::put): every call ends with the
// compute stream waiting for its copies, even when it throws, and a slot whose memory is fresh
// from this allocator is written only after synchronize().

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fb::cuda {

class CachingAllocator {
public:
    explicit CachingAllocator(int device, std::string deviceName);
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator &) = delete;
    CachingAllocator &operator=(const CachingAllocator &) = delete;

    // Throws DeviceError naming the bytes asked for, those in use and those free on the device.
    void *allocate(size_t bytes);
    void release(void *p);

    static size_t roundedSize(size_t bytes);

private:
    // Gives every cached block back to the driver; under m_mutex.
    void emptyCache();

    int m_device;
    std::string m_deviceName;
    std::mutex m_mutex;
    std::multimap<size_t, void *> m_free;
    std::unordered_map<void *, size_t> m_live;
    size_t m_inUse = 0; // bytes handed out (rounded sizes), for the out-of-memory message
};

} // namespace fb::cuda
