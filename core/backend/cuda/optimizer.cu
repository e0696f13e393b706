// The optimizers of the CUDA backend: one launch updates every parameter of a group (a
// multi-tensor apply, as PyTorch's foreach optimizers), so a model of a hundred tensors costs one
// launch per step rather than a hundred.
//
// Layout of the work: the group's tensors are treated as one concatenated array, and the grid
// runs a single grid-stride loop over it. A thread walks the slots in order; within a slot it
// updates the elements of its stride class, and what is left of its stride carries into the next
// slot. So every thread gets the same share of the elements however uneven the tensor sizes are
// (a 4M-element weight next to a 10-element bias), with no prefix array and no division. The
// slot table is read once per block into shared memory, in chunks.
//
// Arithmetic: each step is the reference's float expression (core/backend/cpu/reference_ops.cpp,
// PyTorch's formulas) with every operation explicitly rounded (__fmul_rn, ...): nvcc would
// otherwise fuse products into FMAs, which the reference does not, and the GPU's trajectory would
// drift from the CPU's by an ulp per step.

#include "core/backend/cuda/cuda_kernels.h"

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/device_math.cuh"
#include "core/base/check.h"

#include <cmath>

namespace fb::cuda {
namespace {

constexpr int kOptThreads = 256;
// Slots staged in shared memory at a time (40 bytes each); at most one per thread, so a block
// loads a chunk in one pass.
constexpr int kSlotChunk = 128;
static_assert(kSlotChunk <= kOptThreads);
// Every thread walks the whole slot table, so the grid is kept to about one wave of the largest
// GPUs: enough threads to saturate memory, few enough that the walk stays cheap.
constexpr int64_t kOptMaxBlocks = 2048;

// ParamSlot without its default member initializers, which __shared__ variables may not have.
struct SlotView {
    float *w;
    const float *g;
    float *s0;
    float *s1;
    int64_t count;
};

// Calls step(slot, i) for each element i of each slot that falls to this thread in a grid-stride
// loop over the concatenation of all slots. Every thread of the block must call it (it
// synchronizes the block); count is the same for all of them, so the barriers never diverge.
template <class Step>
__device__ inline void forEachElement(const ParamSlot *slots, int count, Step step)
{
    __shared__ SlotView chunk[kSlotChunk];
    const int64_t stride = dev::gridThreads();
    // This thread's next element, relative to the start of the current slot; it stays in
    // [0, stride) between slots.
    int64_t e = dev::globalThread();
    for (int base = 0; base < count; base += kSlotChunk) {
        const int m = min(kSlotChunk, count - base);
        __syncthreads(); // the previous chunk is no longer read
        if (int(threadIdx.x) < m) {
            const ParamSlot s = slots[base + threadIdx.x];
            chunk[threadIdx.x] = SlotView{s.w, s.g, s.s0, s.s1, s.count};
        }
        __syncthreads();
        for (int j = 0; j < m; ++j) {
            const int64_t n = chunk[j].count;
            if (e < n) {
                const SlotView s = chunk[j];
                for (; e < n; e += stride)
                    step(s, e);
            }
            e -= n; // the first element of the next slot that this thread's stride lands on
        }
    }
}

// The step's learning rate and number come from `values` in device memory, read when the kernel
// runs, so a step captured as a CUDA graph updates with each replay's own (Backend::setStepValues).
struct SgdArgs {
    float momentum;
    float oneMinusDampening;
    float weightDecay;
    bool nesterov;
};

// s0 is the momentum buffer; it is never touched (and may be null) when momentum is 0.
__global__ void __launch_bounds__(kOptThreads)
    sgdKernel(const ParamSlot *slots, int count, SgdArgs a, const StepValues *values)
{
    const float lr = values->lr;
    const bool firstStep = values->optimizerStep == 1;
    forEachElement(slots, count, [&](const SlotView &s, int64_t i) {
        const float w = s.w[i];
        float grad = s.g[i];
        if (a.weightDecay != 0.0f) grad = __fadd_rn(grad, __fmul_rn(a.weightDecay, w));
        if (a.momentum != 0.0f) {
            // PyTorch starts the buffer at the first gradient, without dampening.
            const float buf = firstStep ? grad
                                        : __fadd_rn(__fmul_rn(a.momentum, s.s0[i]),
                                                    __fmul_rn(a.oneMinusDampening, grad));
            s.s0[i] = buf;
            grad = a.nesterov ? __fadd_rn(grad, __fmul_rn(a.momentum, buf)) : buf;
        }
        s.w[i] = __fsub_rn(w, __fmul_rn(lr, grad));
    });
}

struct AdamArgs {
    float beta1, beta2;
    float oneMinusBeta1, oneMinusBeta2;
    float eps;
    float weightDecay;
    bool decoupled;
};

// s0 is the first moment, s1 the second.
__global__ void __launch_bounds__(kOptThreads)
    adamKernel(const ParamSlot *slots, int count, AdamArgs a, const StepValues *values)
{
    // The step's scalars, once per block: in double, as PyTorch computes them in Python floats,
    // then rounded once to float (the reference's very expressions; the device's double pow is
    // within 2 ulp of the host's, far below that rounding). forEachElement's first barrier
    // publishes them to the block.
    __shared__ float stepSize, bias2Sqrt, decay;
    if (threadIdx.x == 0) {
        const double step = double(values->optimizerStep);
        const double lr = double(values->lr);
        const double bias1 = 1.0 - pow(double(a.beta1), step);
        const double bias2 = 1.0 - pow(double(a.beta2), step);
        stepSize = float(lr / bias1);                    // lr / (1 - beta1^step)
        bias2Sqrt = float(sqrt(bias2));                  // sqrt(1 - beta2^step)
        decay = float(1.0 - lr * double(a.weightDecay)); // AdamW's shrink factor
    }
    forEachElement(slots, count, [&](const SlotView &s, int64_t i) {
        float w = s.w[i];
        float grad = s.g[i];
        if (a.weightDecay != 0.0f) {
            if (a.decoupled)
                w = __fmul_rn(w, decay); // AdamW: shrink the weight, keep decay out of moments
            else
                grad = __fadd_rn(grad, __fmul_rn(a.weightDecay, w)); // Adam: L2 joins the grad
        }
        const float m = __fadd_rn(__fmul_rn(a.beta1, s.s0[i]), __fmul_rn(a.oneMinusBeta1, grad));
        const float v = __fadd_rn(__fmul_rn(a.beta2, s.s1[i]),
                                  __fmul_rn(__fmul_rn(a.oneMinusBeta2, grad), grad));
        const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), bias2Sqrt), a.eps);
        s.s0[i] = m;
        s.s1[i] = v;
        s.w[i] = __fsub_rn(w, __fdiv_rn(__fmul_rn(stepSize, m), denom));
    });
}

} // namespace

void sgdSteps(const ParamSlot *slots, int count, int64_t totalElems, const SgdParams &p,
              const StepValues *values, cudaStream_t stream)
{
    if (count <= 0 || totalElems <= 0) return;
    const SgdArgs a{p.momentum, 1.0f - p.dampening, p.weightDecay, p.nesterov};
    // totalElems only sizes the grid; the loop covers every slot's count whatever it says.
    const unsigned blocks = dev::gridFor(totalElems, kOptThreads, kOptMaxBlocks);
    sgdKernel<<<blocks, kOptThreads, 0, stream>>>(slots, count, a, values);
    FB_CUDA_CHECK_LAUNCH();
}

void adamSteps(const ParamSlot *slots, int count, int64_t totalElems, const AdamParams &p,
               const StepValues *values, cudaStream_t stream)
{
    if (count <= 0 || totalElems <= 0) return;
    AdamArgs a{};
    a.beta1 = p.beta1;
    a.beta2 = p.beta2;
    a.oneMinusBeta1 = 1.0f - p.beta1;
    a.oneMinusBeta2 = 1.0f - p.beta2;
    a.eps = p.eps;
    a.weightDecay = p.weightDecay;
    a.decoupled = p.decoupled;
    const unsigned blocks = dev::gridFor(totalElems, kOptThreads, kOptMaxBlocks);
    adamKernel<<<blocks, kOptThreads, 0, stream>>>(slots, count, a, values);
    FB_CUDA_CHECK_LAUNCH();
}

} // namespace fb::cuda
