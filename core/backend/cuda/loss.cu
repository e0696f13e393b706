// The losses of the CUDA backend: softmax cross-entropy and mean squared error, each with its
// gradient, as the reference backend defines them (core/backend/cpu/reference_ops.cpp).
//
// Each runs as ONE block. The launchers get no scratch memory for per-block partial sums, and
// atomics would make the loss depend on the order blocks finish; one block that owns the whole
// sum gives the same bits on every run. The inputs are one batch (rows x classes or a target
// tensor), small enough that one SM streams them in well under a millisecond, and the step waits
// for the loss anyway.

#include "core/backend/cuda/cuda_kernels.h"

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/device_math.cuh"

#include <cmath>
#include <cstdint>

namespace fb::cuda {
namespace {

using dev::kFullMask;
using dev::kWarp;

constexpr int kLossThreads = 1024;
constexpr int kLossWarps = kLossThreads / kWarp;

// The larger of two (value, index) candidates, the lower index on ties: with every lane's own
// candidate being its first maximum, this gives the row's first maximum, as the reference's
// sequential scan does.
__device__ inline void keepBest(float &best, int64_t &bestK, float v, int64_t k)
{
    if (v > best || (v == best && k < bestK)) {
        best = v;
        bestK = k;
    }
}

// One warp per row, rows strided over the block's 32 warps. Per row: the first arg-max and the
// row maximum, the sum of exp(x - max) (float per lane: at most classes/32 terms, each <= 1),
// logsumexp in double as the reference, then the gradient. Labels outside [0, classes) cannot be
// asserted on the device: such a row adds 0 to the loss, is not correct, and gets a zero
// gradient (the host-side data checks are what reject such labels).
__global__ void __launch_bounds__(kLossThreads)
    softmaxCrossEntropyKernel(const float *logits, const int32_t *labels, int64_t n,
                              int64_t classes, float smoothing, float *dlogits, float *lossOut,
                              int64_t *correctOut)
{
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const float invN = 1.0f / float(n);
    double loss = 0.0;     // this warp's rows; lane 0's copy is the one used
    long long correct = 0; // likewise

    // r depends only on the warp, so each warp runs this loop in step and every shuffle below has
    // all 32 lanes.
    for (int64_t r = warp; r < n; r += kLossWarps) {
        const float *row = logits + r * classes;
        const int32_t label = labels[r];
        const bool valid = label >= 0 && label < classes;

        float best = -INFINITY;
        int64_t bestK = INT64_MAX; // a lane with no column loses every tie
        if (lane < classes) {
            best = row[lane];
            bestK = lane;
        }
        for (int64_t k = lane + kWarp; k < classes; k += kWarp)
            if (row[k] > best) {
                best = row[k];
                bestK = k;
            }
        for (int offset = kWarp / 2; offset > 0; offset /= 2)
            keepBest(best, bestK, __shfl_xor_sync(kFullMask, best, offset),
                     __shfl_xor_sync(kFullMask, bestK, offset));
        // With NaN logits lanes may disagree (NaN compares false); lane 0's answer is the row's.
        const float maxLogit = __shfl_sync(kFullMask, best, 0);

        float sumExp = 0.0f;
        for (int64_t k = lane; k < classes; k += kWarp)
            sumExp += expf(row[k] - maxLogit);
        sumExp = dev::warpSum(sumExp);
        const double logSum = log(double(sumExp));
        const double logSumExp = double(maxLogit) + logSum;
        // Label smoothing's target (1 - s) onehot + s / classes needs the row's sum of logits.
        const float spread = smoothing / float(classes);
        double sumLogits = 0.0;
        if (smoothing != 0.0f) {
            for (int64_t k = lane; k < classes; k += kWarp)
                sumLogits += double(row[k]);
            sumLogits = dev::warpSum(sumLogits);
        }

        if (lane == 0 && valid) {
            loss += logSumExp - (1.0 - double(smoothing)) * double(row[label]) -
                    double(spread) * sumLogits;
            if (bestK == label) ++correct;
        }
        if (dlogits) {
            // Every lane has read all it needs of this row: dlogits may even alias logits.
            __syncwarp();
            float *drow = dlogits + r * classes;
            // p = exp((x - max) - log(sum)) in float rather than exp(x - lse), so that no
            // rounding grows with the size of the logits: a rounding of the exponent d costs p a
            // relative |d| 2^-24 (at most 2^-24 / e absolute), and log(sum) <= log(classes).
            const float logSumF = float(logSum);
            for (int64_t k = lane; k < classes; k += kWarp) {
                const float p = expf((row[k] - maxLogit) - logSumF);
                const float target = (k == label ? 1.0f - smoothing : 0.0f) + spread;
                drow[k] = valid ? (p - target) * invN : 0.0f;
            }
        }
    }

    // Fixed-order sums over the warps' totals, so the result is the same on every run.
    const double total = dev::blockSum(loss);
    const long long totalCorrect = dev::blockSum(correct);
    if (threadIdx.x == 0) {
        *lossOut = n > 0 ? float(total / double(n)) : 0.0f;
        *correctOut = totalCorrect;
    }
}

// A block-stride loop over all elements: each thread sums its squares in double, as the
// reference does, and the block adds them in a fixed order. The difference itself is taken in
// float (one rounding, 2^-24 relative): double arithmetic per element would cost far more than
// it gives on GPUs with slow FP64.
__global__ void __launch_bounds__(kLossThreads)
    mseKernel(const float *pred, const float *target, int64_t count, float *dpred, float *lossOut)
{
    // 2 / count once: the reference divides per element in double; the rounding of the factor
    // and of the product keep dpred within a few ulp of it.
    const float gradScale = float(2.0 / double(count));
    double sum = 0.0;
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
        const float diff = pred[i] - target[i];
        sum += double(diff) * double(diff);
        if (dpred) dpred[i] = diff * gradScale;
    }
    const double total = dev::blockSum(sum);
    if (threadIdx.x == 0) *lossOut = float(total / double(count));
}

} // namespace

void softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n, int64_t classes,
                         float smoothing, float *dlogits, float *lossOut, int64_t *correctOut,
                         cudaStream_t stream)
{
    // The reference asserts on an empty batch; on the device the outputs are read back by the
    // caller, so they get defined zeros rather than stale bytes.
    if (n <= 0 || classes <= 0) {
        FB_CUDA_CHECK(cudaMemsetAsync(lossOut, 0, sizeof(float), stream));
        FB_CUDA_CHECK(cudaMemsetAsync(correctOut, 0, sizeof(int64_t), stream));
        return;
    }
    softmaxCrossEntropyKernel<<<1, kLossThreads, 0, stream>>>(logits, labels, n, classes, smoothing,
                                                              dlogits, lossOut, correctOut);
    FB_CUDA_CHECK_LAUNCH();
}

void mse(const float *pred, const float *target, int64_t count, float *dpred, float *lossOut,
         cudaStream_t stream)
{
    if (count <= 0) {
        FB_CUDA_CHECK(cudaMemsetAsync(lossOut, 0, sizeof(float), stream));
        return;
    }
    mseKernel<<<1, kLossThreads, 0, stream>>>(pred, target, count, dpred, lossOut);
    FB_CUDA_CHECK_LAUNCH();
}

} // namespace fb::cuda
