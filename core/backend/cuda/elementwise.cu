// Element-wise kernels of the CUDA backend: fills and sums, activations, dropout, Linear's bias
// and the device-side batch gather. All are memory-bound grid-stride loops with 64-bit indices;
// the reference backend (core/backend/cpu/reference_ops.cpp, reference_activation.cpp) defines
// what each computes. None of them assumes its output is distinct from its inputs unless the op's
// contract says so: each element is read before the same thread writes it.

#include "core/backend/cuda/cuda_kernels.h"

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/device_math.cuh"
#include "core/base/check.h"

#include <cuda_bf16.h>

namespace fb::cuda {
namespace {

using dev::globalThread;
using dev::gridFor;
using dev::gridThreads;
using dev::kThreads;

__global__ void fillKernel(float *y, float value, int64_t count)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = value;
}

__global__ void addKernel(const float *a, const float *b, float *y, int64_t count)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = a[i] + b[i];
}

__global__ void accumulateKernel(float *y, const float *x, int64_t count)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] += x[i];
}

// bf16 mixed precision: float32 to bfloat16 rounds to nearest even (as PyTorch's .to(bfloat16));
// bfloat16 to float32 is exact.
__global__ void toBf16Kernel(const float *x, __nv_bfloat16 *y, int64_t count)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = __float2bfloat16_rn(x[i]);
}

__global__ void fromBf16Kernel(const __nv_bfloat16 *x, float *y, int64_t count)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = __bfloat162float(x[i]);
}

__global__ void mulKernel(const float *a, const float *b, float *y, int64_t count)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = a[i] * b[i];
}

__global__ void axpbyKernel(float *y, const float *x, int64_t count, float a, float b)
{
    // Explicitly rounded products: nvcc would fuse a*y + b*x into an FMA, which the reference's
    // plain float expression does not do, and batch norm's running statistics should agree.
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = __fadd_rn(__fmul_rn(a, y[i]), __fmul_rn(b, x[i]));
}

// ---- Activations. The reference computes in double; float with CUDA's accurate (not fast-math)
// expf/tanhf/erff stays within a few ulp of it, and ReLU/LeakyReLU are bit-identical (a float
// times a float is exact in double). The kind is a template argument so that each of the six
// kernels is a plain loop; the two directions make twelve small kernels in all. ----

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;

template <Activation K> __device__ inline float activationValue(float x, float alpha)
{
    if constexpr (K == Activation::Relu) {
        return x > 0.0f ? x : 0.0f;
    } else if constexpr (K == Activation::LeakyRelu) {
        return x > 0.0f ? x : x * alpha;
    } else if constexpr (K == Activation::Sigmoid) {
        return 1.0f / (1.0f + expf(-x));
    } else if constexpr (K == Activation::Tanh) {
        return tanhf(x);
    } else if constexpr (K == Activation::Silu) { // x * sigmoid(x)
        return x / (1.0f + expf(-x));
    } else { // exact GELU: x * Phi(x)
        return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
    }
}

// d value / dx. At exactly 0 ReLU's slope is 0 and LeakyReLU's alpha, as the reference (both
// test x > 0, PyTorch's choice).
template <Activation K> __device__ inline float activationSlope(float x, float alpha)
{
    if constexpr (K == Activation::Relu) {
        return x > 0.0f ? 1.0f : 0.0f;
    } else if constexpr (K == Activation::LeakyRelu) {
        return x > 0.0f ? 1.0f : alpha;
    } else if constexpr (K == Activation::Sigmoid) {
        const float s = 1.0f / (1.0f + expf(-x));
        return s * (1.0f - s);
    } else if constexpr (K == Activation::Tanh) {
        const float t = tanhf(x);
        return 1.0f - t * t;
    } else if constexpr (K == Activation::Silu) { // s(x) * (1 + x * (1 - s(x)))
        const float s = 1.0f / (1.0f + expf(-x));
        return s * (1.0f + x * (1.0f - s));
    } else { // d/dx [x * Phi(x)] = Phi(x) + x * phi(x)
        const float cdf = 0.5f * (1.0f + erff(x * kInvSqrt2));
        const float pdf = kInvSqrt2Pi * expf(-0.5f * x * x);
        return cdf + x * pdf;
    }
}

template <Activation K>
__global__ void activationForwardKernel(const float *x, float *y, int64_t count, float alpha)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        y[i] = activationValue<K>(x[i], alpha);
}

// dy * slope rather than a select, so that signs of zero and NaNs in dy come out as the
// reference's.
template <Activation K>
__global__ void activationBackwardKernel(const float *x, const float *dy, float *dx, int64_t count,
                                         float alpha)
{
    for (int64_t i = globalThread(); i < count; i += gridThreads())
        dx[i] = dy[i] * activationSlope<K>(x[i], alpha);
}

template <Activation K>
void launchActivationForward(float alpha, const float *x, float *y, int64_t count,
                             cudaStream_t stream)
{
    activationForwardKernel<K><<<gridFor(count), kThreads, 0, stream>>>(x, y, count, alpha);
    FB_CUDA_CHECK_LAUNCH();
}

template <Activation K>
void launchActivationBackward(float alpha, const float *x, const float *dy, float *dx,
                              int64_t count, cudaStream_t stream)
{
    activationBackwardKernel<K><<<gridFor(count), kThreads, 0, stream>>>(x, dy, dx, count, alpha);
    FB_CUDA_CHECK_LAUNCH();
}

// ---- Dropout ----

__global__ void dropoutForwardKernel(const float *x, float *y, float *mask, int64_t count, float p,
                                     float scale, const StepValues *values, uint64_t salt)
{
    const uint64_t seed = dev::mix64(values->seed ^ salt);
    for (int64_t i = globalThread(); i < count; i += gridThreads()) {
        // The top 24 bits as a float in [0, 1), exactly as the reference: the conversion and the
        // power-of-two scale are exact, so the keep test is bit-identical on every device.
        const float u = float(dev::mix64(seed + uint64_t(i)) >> 40) * (1.0f / 16777216.0f);
        const float m = u >= p ? scale : 0.0f;
        const float v = x[i]; // read before the writes: y may be x
        mask[i] = m;
        y[i] = v * m;
    }
}

// ---- Rows of a row-major matrix. A flat grid-stride loop keeps every thread busy whatever the
// shape (a bias of 10 or of 4096); the column is carried along incrementally so that the loop
// does no 64-bit division (tens of instructions each on the GPU), only one per thread to start.

__global__ void addBiasRowsKernel(float *y, const float *bias, int64_t total, int64_t cols)
{
    int64_t i = globalThread();
    const int64_t stride = gridThreads();
    int64_t c = i % cols;
    const int64_t strideCols = stride % cols;
    for (; i < total; i += stride) {
        y[i] += bias[c];
        c += strideCols; // both terms are below cols, so one wrap is enough
        if (c >= cols) c -= cols;
    }
}

// Column sums, deterministic: a block takes 32 adjacent columns (one per lane, so each row's
// read is one coalesced segment) and kSumRowsY row-strided partial sums per column, which one
// thread per column then adds in a fixed order. No atomics, so the same dy gives the same db.
constexpr int kSumRowsY = 16;

__global__ void sumRowsKernel(const float *dy, float *db, int64_t rows, int64_t cols)
{
    __shared__ float partial[kSumRowsY][dev::kWarp + 1]; // +1: no bank conflicts in the sum
    const int tx = threadIdx.x, ty = threadIdx.y;
    // The column-chunk loop is the same for every thread of the block, so the barriers inside
    // it are never divergent.
    for (int64_t c0 = int64_t(blockIdx.x) * dev::kWarp; c0 < cols;
         c0 += int64_t(gridDim.x) * dev::kWarp) {
        const int64_t c = c0 + tx;
        float sum = 0.0f;
        if (c < cols)
            for (int64_t r = ty; r < rows; r += kSumRowsY)
                sum += dy[r * cols + c];
        partial[ty][tx] = sum;
        __syncthreads();
        if (ty == 0 && c < cols) {
            float total = 0.0f;
            for (int k = 0; k < kSumRowsY; ++k)
                total += partial[k][tx];
            db[c] = total;
        }
        __syncthreads(); // the next chunk overwrites partial
    }
}

// Row gather; the row index and the column advance together as addBiasRows's column does.
// index[] values are trusted: the loader drew them from [0, table rows), and the kernel is not
// told the table's size to check them.
__global__ void gatherRowsKernel(const float *table, const int64_t *index, float *dst,
                                 int64_t total, int64_t rowElems)
{
    int64_t i = globalThread();
    const int64_t stride = gridThreads();
    int64_t r = i / rowElems, c = i % rowElems;
    const int64_t strideRows = stride / rowElems, strideCols = stride % rowElems;
    for (; i < total; i += stride) {
        dst[i] = table[index[r] * rowElems + c];
        r += strideRows;
        c += strideCols;
        if (c >= rowElems) {
            c -= rowElems;
            ++r;
        }
    }
}

__global__ void gatherLabelsKernel(const int32_t *table, const int64_t *index, int32_t *dst,
                                   int64_t n)
{
    for (int64_t i = globalThread(); i < n; i += gridThreads())
        dst[i] = table[index[i]];
}

} // namespace

void fill(float *y, float value, int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    fillKernel<<<gridFor(count), kThreads, 0, stream>>>(y, value, count);
    FB_CUDA_CHECK_LAUNCH();
}

void add(const float *a, const float *b, float *y, int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    addKernel<<<gridFor(count), kThreads, 0, stream>>>(a, b, y, count);
    FB_CUDA_CHECK_LAUNCH();
}

void accumulate(float *y, const float *x, int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    accumulateKernel<<<gridFor(count), kThreads, 0, stream>>>(y, x, count);
    FB_CUDA_CHECK_LAUNCH();
}

void axpby(float *y, const float *x, int64_t count, float a, float b, cudaStream_t stream)
{
    if (count <= 0) return;
    axpbyKernel<<<gridFor(count), kThreads, 0, stream>>>(y, x, count, a, b);
    FB_CUDA_CHECK_LAUNCH();
}

void activationForward(Activation kind, float alpha, const float *x, float *y, int64_t count,
                       cudaStream_t stream)
{
    if (count <= 0) return;
    switch (kind) {
    case Activation::Relu:
        return launchActivationForward<Activation::Relu>(alpha, x, y, count, stream);
    case Activation::LeakyRelu:
        return launchActivationForward<Activation::LeakyRelu>(alpha, x, y, count, stream);
    case Activation::Sigmoid:
        return launchActivationForward<Activation::Sigmoid>(alpha, x, y, count, stream);
    case Activation::Tanh:
        return launchActivationForward<Activation::Tanh>(alpha, x, y, count, stream);
    case Activation::Gelu:
        return launchActivationForward<Activation::Gelu>(alpha, x, y, count, stream);
    case Activation::Silu:
        return launchActivationForward<Activation::Silu>(alpha, x, y, count, stream);
    }
    FB_ASSERT(false, "unknown activation kind");
}

void activationBackward(Activation kind, float alpha, const float *x, const float *dy, float *dx,
                        int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    switch (kind) {
    case Activation::Relu:
        return launchActivationBackward<Activation::Relu>(alpha, x, dy, dx, count, stream);
    case Activation::LeakyRelu:
        return launchActivationBackward<Activation::LeakyRelu>(alpha, x, dy, dx, count, stream);
    case Activation::Sigmoid:
        return launchActivationBackward<Activation::Sigmoid>(alpha, x, dy, dx, count, stream);
    case Activation::Tanh:
        return launchActivationBackward<Activation::Tanh>(alpha, x, dy, dx, count, stream);
    case Activation::Gelu:
        return launchActivationBackward<Activation::Gelu>(alpha, x, dy, dx, count, stream);
    case Activation::Silu:
        return launchActivationBackward<Activation::Silu>(alpha, x, dy, dx, count, stream);
    }
    FB_ASSERT(false, "unknown activation kind");
}

void dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                    const StepValues *values, uint64_t salt, cudaStream_t stream)
{
    FB_ASSERT(p >= 0.0f && p <= 1.0f, "dropout probability outside [0, 1]");
    if (count <= 0) return;
    // Computed on the host in float, as the reference does; never used when p == 1 (nothing is
    // kept), so its infinity does no harm.
    const float scale = 1.0f / (1.0f - p);
    dropoutForwardKernel<<<gridFor(count), kThreads, 0, stream>>>(x, y, mask, count, p, scale,
                                                                  values, salt);
    FB_CUDA_CHECK_LAUNCH();
}

void toBf16(const float *x, uint16_t *y, int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    toBf16Kernel<<<gridFor(count), kThreads, 0, stream>>>(x, reinterpret_cast<__nv_bfloat16 *>(y),
                                                          count);
    FB_CUDA_CHECK_LAUNCH();
}

void fromBf16(const uint16_t *x, float *y, int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    fromBf16Kernel<<<gridFor(count), kThreads, 0, stream>>>(
        reinterpret_cast<const __nv_bfloat16 *>(x), y, count);
    FB_CUDA_CHECK_LAUNCH();
}

void mul(const float *a, const float *b, float *y, int64_t count, cudaStream_t stream)
{
    if (count <= 0) return;
    mulKernel<<<gridFor(count), kThreads, 0, stream>>>(a, b, y, count);
    FB_CUDA_CHECK_LAUNCH();
}

void addBiasRows(float *y, const float *bias, int64_t rows, int64_t cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    const int64_t total = rows * cols;
    addBiasRowsKernel<<<gridFor(total), kThreads, 0, stream>>>(y, bias, total, cols);
    FB_CUDA_CHECK_LAUNCH();
}

void sumRows(const float *dy, float *db, int64_t rows, int64_t cols, cudaStream_t stream)
{
    if (cols <= 0) return;
    // rows == 0 still launches: db is written, and the sum of no rows is 0.
    const unsigned blocks = gridFor(cols, dev::kWarp);
    sumRowsKernel<<<blocks, dim3(dev::kWarp, kSumRowsY), 0, stream>>>(dy, db, rows, cols);
    FB_CUDA_CHECK_LAUNCH();
}

void gatherRows(const float *table, const int64_t *index, float *dst, int64_t n, int64_t rowElems,
                cudaStream_t stream)
{
    if (n <= 0 || rowElems <= 0) return;
    const int64_t total = n * rowElems;
    gatherRowsKernel<<<gridFor(total), kThreads, 0, stream>>>(table, index, dst, total, rowElems);
    FB_CUDA_CHECK_LAUNCH();
}

void gatherLabels(const int32_t *table, const int64_t *index, int32_t *dst, int64_t n,
                  cudaStream_t stream)
{
    if (n <= 0) return;
    gatherLabelsKernel<<<gridFor(n), kThreads, 0, stream>>>(table, index, dst, n);
    FB_CUDA_CHECK_LAUNCH();
}

} // namespace fb::cuda
