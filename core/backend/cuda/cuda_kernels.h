#pragma once

// Launchers of our own CUDA kernels (elementwise.cu, loss.cu, optimizer.cu): plain C++
// declarations so that .cpp files call them without nvcc. Every launcher queues its work on
// `stream`, checks the launch (FB_CUDA_CHECK_LAUNCH) and returns without waiting. All pointers
// are device memory unless said otherwise. Semantics are those of the matching Backend op in
// core/backend/backend.h, which the reference backend defines.

#include "core/backend/backend.h"

#include <cuda_runtime.h>

namespace fb::cuda {

// ---- elementwise.cu ----
void fill(float *y, float value, int64_t count, cudaStream_t stream);
void add(const float *a, const float *b, float *y, int64_t count, cudaStream_t stream);
void accumulate(float *y, const float *x, int64_t count, cudaStream_t stream);
void axpby(float *y, const float *x, int64_t count, float a, float b, cudaStream_t stream);
void activationForward(Activation kind, float alpha, const float *x, float *y, int64_t count,
                       cudaStream_t stream);
void activationBackward(Activation kind, float alpha, const float *x, const float *dy, float *dx,
                        int64_t count, cudaStream_t stream);
// mask[i] = keep ? 1/(1-p) : 0, keep = the reference backend's test on mix64(seed + i) with
// seed = mix64(values->seed ^ salt); values is device memory, read when the kernel runs.
void dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                    const StepValues *values, uint64_t salt, cudaStream_t stream);
void mul(const float *a, const float *b, float *y, int64_t count, cudaStream_t stream);
// bf16 mixed precision: y = x rounded to bfloat16 (nearest even), and back (exact). bfloat16
// values are passed as their 16 bits, so that callers need no CUDA headers.
void toBf16(const float *x, uint16_t *y, int64_t count, cudaStream_t stream);
void fromBf16(const uint16_t *x, float *y, int64_t count, cudaStream_t stream);
// y[r, c] += bias[c] for rows x cols (Linear's bias after the cuBLAS product).
void addBiasRows(float *y, const float *bias, int64_t rows, int64_t cols, cudaStream_t stream);
// db[c] = sum over rows of dy[r, c] (Linear's bias gradient), written not added.
void sumRows(const float *dy, float *db, int64_t rows, int64_t cols, cudaStream_t stream);
// dst[i, :] = table[index[i], :] for i < n rows of rowElems floats (a batch gathered from a data
// set resident on the device); index is device memory.
void gatherRows(const float *table, const int64_t *index, float *dst, int64_t n, int64_t rowElems,
                cudaStream_t stream);
void gatherLabels(const int32_t *table, const int64_t *index, int32_t *dst, int64_t n,
                  cudaStream_t stream);

// ---- loss.cu ----
// Softmax cross-entropy over logits[n, classes] against labels[n]. Writes the mean loss to
// *lossOut and the count of rows whose arg-max (first of ties) equals the label to *correctOut
// (both device memory), and dlogits (may be null) = (softmax - onehot) / n.
void softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n, int64_t classes,
                         float smoothing, float *dlogits, float *lossOut, int64_t *correctOut,
                         cudaStream_t stream);
// Mean squared error; dpred (may be null) = 2 (pred - target) / count; *lossOut in device memory.
void mse(const float *pred, const float *target, int64_t count, float *dpred, float *lossOut,
         cudaStream_t stream);

// ---- optimizer.cu: one launch updates every parameter of a group. `slots` is a device array of
// `count` ParamSlot (pointers into device memory), `totalElems` the sum of their counts. The
// learning rate and step come from `values` (device memory), read when the kernel runs; p's lr is
// not used. ----
void sgdSteps(const ParamSlot *slots, int count, int64_t totalElems, const SgdParams &p,
              const StepValues *values, cudaStream_t stream);
void adamSteps(const ParamSlot *slots, int count, int64_t totalElems, const AdamParams &p,
               const StepValues *values, cudaStream_t stream);

} // namespace fb::cuda
