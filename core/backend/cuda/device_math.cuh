#pragma once

// Device helpers shared by our own kernels (elementwise.cu, loss.cu, optimizer.cu): the launch
// shape of a grid-stride loop, warp and block sums, and the device twin of fb::mix64.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace fb::cuda::dev {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Threads per block of the element-wise kernels: a multiple of the warp that every GPU since
// Kepler runs at full occupancy.
constexpr int kThreads = 256;
// The most blocks a grid-stride launch asks for: a few waves on the largest GPUs we build for
// (132 SMs x 8 blocks of 256 on an H100), so that big tensors keep every SM busy while each
// thread still walks several elements. A fixed cap rather than a device query keeps the launch
// path free of driver calls.
constexpr int64_t kMaxBlocks = 4096;

// Blocks for a grid-stride loop over `count` elements (count > 0).
inline unsigned gridFor(int64_t count, int threads = kThreads, int64_t maxBlocks = kMaxBlocks)
{
    return unsigned(std::clamp<int64_t>((count + threads - 1) / threads, 1, maxBlocks));
}

// This thread's first index and the stride of a 1-D grid-stride loop, in 64 bits: counts past
// 2^31 elements (a large data set resident on the device) must not wrap.
__device__ inline int64_t globalThread()
{
    return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridThreads()
{
    return int64_t(gridDim.x) * blockDim.x;
}

// splitmix64's finalizer, bit for bit fb::mix64 (core/base/rng.cpp): dropout masks must be the
// same on every backend. Only integer operations, so no compiler flag can change the result.
__host__ __device__ constexpr uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
// splitmix64's published first output for seed 0 is this very function of 0.
static_assert(mix64(0) == 0xE220A8397B1DCDAFull, "mix64 differs from splitmix64");

// Sums over the 32 lanes of a warp; every lane gets the same bits (each butterfly step adds the
// same two values, and addition is commutative). All 32 lanes must call it.
template <class T> __device__ inline T warpSum(T v)
{
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// Sums one value per thread over a block of a multiple of 32 threads, in a fixed order (so the
// same inputs give the same bits on every run); the result is valid in thread 0. Every thread of
// the block must call it, outside divergent code: it synchronizes the block.
template <class T> __device__ inline T blockSum(T v)
{
    __shared__ T partial[kWarp]; // one per warp; blocks have at most 1024 threads
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warpSum(v);
    // A second call in the same kernel must not overwrite what warp 0 still reads of the first.
    __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int warps = int(blockDim.x) / kWarp;
        v = warpSum(lane < warps ? partial[lane] : T(0));
    }
    return v;
}

} // namespace fb::cuda::dev
