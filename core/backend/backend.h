#pragma once

#include "core/tensor/tensor.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

namespace fb {

// ---- Op descriptions. Every tensor is dense, row-major, float32 unless said otherwise. ----
// Image tensors are [n, c, h, w] (NCHW) unless an op's channelsLast is set: then they are stored
// [n, h, w, c] (NHWC). Only backends whose prefersChannelsLast() is true are asked for that.

// y[n, oc, oh, ow] = sum_{c,i,j} x[n, c, oh*sh - ph + i, ow*sw - pw + j] * w[oc, c, i, j] + b[oc]
struct ConvDesc {
    int64_t n, c, h, w;     // input
    int64_t oc, kh, kw;     // output channels, kernel
    int64_t sh = 1, sw = 1; // stride
    int64_t ph = 0, pw = 0; // zero padding, both sides
    bool bias = true;
    bool channelsLast = false; // x and y stored NHWC; weights stay [oc, c, kh, kw]
    // 0 when the filter is larger than the padded input (see PoolDesc).
    int64_t oh() const { return h + 2 * ph < kh ? 0 : (h + 2 * ph - kh) / sh + 1; }
    int64_t ow() const { return w + 2 * pw < kw ? 0 : (w + 2 * pw - kw) / sw + 1; }
};

// y[n, out] = x[n, in] * w[out, in]^T + b[out]   (PyTorch's weight layout)
struct LinearDesc {
    int64_t n, in, out;
    bool bias = true;
};

enum class PoolKind : uint8_t { Max, Avg };

// Max pooling ignores padding cells; average pooling counts them (PyTorch's default
// count_include_pad=True).
struct PoolDesc {
    PoolKind kind = PoolKind::Max;
    int64_t n, c, h, w;
    int64_t kh, kw;
    int64_t sh, sw;
    int64_t ph = 0, pw = 0;
    bool channelsLast = false;
    // 0 when the window is larger than the padded input (C++ division truncates towards zero,
    // so the plain formula would say 1 there).
    int64_t oh() const { return h + 2 * ph < kh ? 0 : (h + 2 * ph - kh) / sh + 1; }
    int64_t ow() const { return w + 2 * pw < kw ? 0 : (w + 2 * pw - kw) / sw + 1; }
};

// GELU is the exact (erf) form, as PyTorch's default.
enum class Activation : uint8_t { Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Silu };

struct ActivationDesc {
    Activation kind = Activation::Relu;
    int64_t count = 0;
    float alpha = 0.01f; // LeakyReLU negative slope
};

// Per-channel batch normalization over (n, h, w) of x[n, c, h, w].
struct BatchNormDesc {
    int64_t n, c, h, w;
    float eps = 1e-5f;
    bool channelsLast = false;
};

// A device failure that ends a step: out of memory, a failed CUDA/cuBLAS/cuDNN call. The message
// names the call (or the sizes asked for) and its source location; the model compiler adds the
// node whose kernel or buffers were being made. The runner turns it into a run error naming that
// node, so nothing else of the user's work is lost.
class DeviceError : public std::runtime_error {
public:
    explicit DeviceError(const std::string &message, size_t requestedBytes = 0)
        : std::runtime_error(message)
        , m_requested(requestedBytes)
    {}
    size_t requestedBytes() const { return m_requested; } // 0 unless an allocation failed
    const std::string &node() const { return m_node; }
    void setNode(std::string node) { m_node = std::move(node); }

private:
    size_t m_requested;
    std::string m_node;
};

// ---- Kernels: made once per layer and batch size (shape inference and kernel choice happen at
// compile time), then called every step. Outputs are overwritten, never accumulated.
// As in a training step, backwardWeights gets the x of the latest forward call and the dy of the
// latest backwardData call, unchanged since: fast kernels reuse the layouts they made for them.
// ----

class ConvKernel {
public:
    virtual ~ConvKernel() = default;
    virtual void forward(const float *x, const float *w, const float *b, float *y) = 0;
    virtual void backwardData(const float *dy, const float *w, float *dx) = 0;
    // db may be null when the op has no bias.
    virtual void backwardWeights(const float *x, const float *dy, float *dw, float *db) = 0;
};

class LinearKernel {
public:
    virtual ~LinearKernel() = default;
    virtual void forward(const float *x, const float *w, const float *b, float *y) = 0;
    virtual void backwardData(const float *dy, const float *w, float *dx) = 0;
    virtual void backwardWeights(const float *x, const float *dy, float *dw, float *db) = 0;
};

// Max pooling keeps what it needs of the last forward call (the winning positions, or pointers to
// that call's x and y, which stay unchanged until backward) inside the kernel.
class PoolKernel {
public:
    virtual ~PoolKernel() = default;
    virtual void forward(const float *x, float *y) = 0;
    virtual void backward(const float *dy, float *dx) = 0;
};

class ActivationKernel {
public:
    virtual ~ActivationKernel() = default;
    virtual void forward(const float *x, float *y) = 0;
    // Gradient from the op's input x; x, dy and dx do not alias.
    virtual void backward(const float *x, const float *dy, float *dx) = 0;
};

class BatchNormKernel {
public:
    virtual ~BatchNormKernel() = default;
    // Normalizes with the batch's statistics and writes them: mean[c] and biased variance var[c].
    virtual void forwardTraining(const float *x, const float *gamma, const float *beta, float *y,
                                 float *mean, float *var) = 0;
    // Normalizes with the given (running) statistics.
    virtual void forwardInference(const float *x, const float *gamma, const float *beta,
                                  const float *mean, const float *var, float *y) = 0;
    // Backward of forwardTraining, with the statistics it wrote. A backend may keep its own form
    // of them (cuDNN saves the inverse standard deviation) from that latest call instead.
    virtual void backward(const float *x, const float *dy, const float *gamma, const float *mean,
                          const float *var, float *dx, float *dgamma, float *dbeta) = 0;
};

struct SgdParams {
    float lr = 0.01f;
    float momentum = 0.0f;
    float dampening = 0.0f;
    float weightDecay = 0.0f;
    bool nesterov = false;
};

struct AdamParams {
    float lr = 1e-3f;
    float beta1 = 0.9f;
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weightDecay = 0.0f;
    bool decoupled = false; // AdamW
};

struct LossResult {
    float loss = 0.0f;   // mean over the batch
    int64_t correct = 0; // rows whose arg-max equals the label (classification losses)
};

// One parameter of an optimizer's group: its value, gradient and state buffers (s0: SGD's momentum
// buffer or Adam's first moment; s1: Adam's second moment), all in the backend's memory.
struct ParamSlot {
    float *w = nullptr;
    const float *g = nullptr;
    float *s0 = nullptr;
    float *s1 = nullptr;
    int64_t count = 0;
};

// The arithmetic of convolutions and matrix products (the train node's `precision`; docs/gpu.md).
// Everything else (activations, batch norm, losses, optimizer state, the weights themselves)
// stays float32 under each.
enum class Precision : uint8_t {
    Float32, // float32 products and sums: the CPU's results within rounding
    Tf32,    // inputs rounded to TF32 (10-bit mantissa) on tensor cores, float32 sums
    Bf16,    // inputs rounded to bfloat16 (8-bit mantissa) on tensor cores, float32 sums/outputs
};
// "float32", "tf32", "bf16"; parsePrecision is false for any other text.
const char *precisionName(Precision p);
bool parsePrecision(const std::string &text, Precision &out);

// What a training step reads that changes from one step to the next, besides its data. Plain
// data with the same layout on host and device.
struct StepValues {
    float lr = 0.0f;           // the optimizer's learning rate for this step
    int64_t optimizerStep = 1; // the update this step makes, counting from 1
    uint64_t seed = 0;         // the step's dropout seed (each layer mixes in its own salt)
    bool operator==(const StepValues &) const = default;
};

// One host-to-device copy of Backend::uploadAhead.
struct HostCopy {
    void *dst = nullptr;        // device memory
    const void *host = nullptr; // host memory, free to reuse when uploadAhead returns
    size_t bytes = 0;
};

// A loss result on its way back from the device (Backend::readLatestLoss).
class PendingLoss {
public:
    virtual ~PendingLoss() = default;
    // Waits for the step it was asked after, then gives its result. Call once.
    virtual LossResult wait() = 0;
};

// Work recorded once by a backend that can capture (see Backend::beginCapture).
class CapturedWork {
public:
    virtual ~CapturedWork() = default;
    // Queues the recorded work again, reading the step values set since.
    virtual void replay() = 0;
};

enum class OpKind : uint8_t {
    Conv,
    Linear,
    Pool,
    Activation,
    BatchNorm,
    Add,
    SoftmaxCrossEntropy,
    Mse,
    Dropout,
    Sgd,
    Adam
};

// One backend per device kind (DESIGN.md): memory, kernels, and the small ops of training. No
// op ever branches on the device kind; a backend that lacks an op says so through supports().
class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    virtual Device device() const = 0;
    virtual bool supports(OpKind op) const = 0;
    // Worker threads for this backend's kernels.
    virtual void setThreads(int threads) = 0;
    // Whether image activations should be stored NHWC for this backend's kernels (oneDNN's
    // AVX-512 convolutions and pooling run on NHWC without reorders; on NCHW they reorder or
    // fall back to im2col). The model compiler decides the layout once per plan.
    virtual bool prefersChannelsLast() const { return false; }

    // ---- Memory. Every pointer handed to this backend's kernels and ops is in its device's
    // memory (host memory for the CPU backends). Work on a device runs in order on one stream;
    // only download() and synchronize() wait for it. ----
    // Uninitialized memory on this device; throws DeviceError when it cannot be had.
    virtual Tensor empty(const Shape &shape, DType dtype = DType::F32) = 0;
    // Device to device.
    virtual void copy(void *dst, const void *src, size_t bytes) = 0;
    // Host to device. The host memory may be reused as soon as this returns.
    virtual void upload(void *dst, const void *host, size_t bytes) = 0;
    // Device to host, after the work queued before it.
    virtual void download(void *host, const void *src, size_t bytes) = 0;
    // Host to device alongside the work already queued: a GPU's copy engine moves the bytes on a
    // second stream while the steps before compute, and work queued after this call waits for
    // them. For double-buffered batches: no destination may be used by work queued after the
    // previous uploadAhead() call (each call writes the buffers the one before did not), and
    // memory allocated since work still queued freed it needs synchronize() first (the copy does
    // not wait for that work). The default uploads in order.
    virtual void uploadAhead(std::span<const HostCopy> copies);
    virtual void fill(float *y, float value, int64_t count) = 0;
    virtual void zero(void *dst, size_t bytes) = 0;
    // Waits until the device has done all the work queued so far.
    virtual void synchronize() {}
    // The native stream the backend queues its work on (a cudaStream_t), for a library that
    // queues its own work in the same order (NCCL's collectives); null where work runs at once.
    virtual void *nativeStream() { return nullptr; }
    // The arithmetic of convolutions and matrix products made from now on. False when the
    // backend has no such arithmetic (the CPU backends compute float32 whatever is asked).
    virtual bool setPrecision(Precision p) { return p == Precision::Float32; }
    // Kernels made from now on give bit-identical results on every run (on a GPU: only cuDNN
    // algorithms that are deterministic, some slower). The CPU backends always are, for a given
    // thread count, and ignore it.
    virtual void setDeterministic(bool) {}

    // Tensor helpers built on the above. toDevice/toHost return the tensor itself when it is
    // already where it is asked for (no copy).
    Tensor toDevice(const Tensor &t);
    Tensor toHost(const Tensor &t);

    virtual std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d) = 0;
    virtual std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d) = 0;
    virtual std::unique_ptr<PoolKernel> makePool(const PoolDesc &d) = 0;
    virtual std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d) = 0;
    virtual std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d) = 0;

    // y = a + b
    virtual void add(const float *a, const float *b, float *y, int64_t count) = 0;
    // y += x
    virtual void accumulate(float *y, const float *x, int64_t count) = 0;
    // y = a*y + b*x (batch norm's running statistics)
    virtual void axpby(float *y, const float *x, int64_t count, float a, float b) = 0;
    // dst[i, :] = table[index[i], :] for n rows of rowElems floats; index in this backend's
    // memory. A batch gathered from a data set kept resident in device memory.
    virtual void gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                            int64_t rowElems) = 0;
    virtual void gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index,
                              int64_t n) = 0;

    // Softmax cross-entropy of logits[n, classes] against int32 labels[n], mean over the batch.
    // With label smoothing s (PyTorch's label_smoothing) the target is (1 - s) onehot + s / classes
    // rather than onehot. dlogits (may be null) receives the gradient of the mean loss:
    // (softmax - target) / n.
    virtual LossResult softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n,
                                           int64_t classes, float *dlogits,
                                           float smoothing = 0.0f) = 0;
    // Mean squared error over all count elements; dpred (may be null) = 2 (pred - target) / count.
    virtual float mse(const float *pred, const float *target, int64_t count, float *dpred) = 0;

    // Inverted dropout: mask[i] = (keep ? 1 / (1 - p) : 0) with keep decided by
    // mix64(mix64(stepSeed ^ salt) + i), so a mask is the same on every device and thread count;
    // y = x * mask. stepSeed is the step's (StepValues::seed), salt the layer's own.
    virtual void dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                                uint64_t stepSeed, uint64_t salt) = 0;
    virtual void dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count) = 0;

    // PyTorch's SGD: g' = g + wd*w; buf = (step == 1) ? g' : momentum*buf + (1-dampening)*g';
    // update = nesterov ? g' + momentum*buf : buf (plain g' when momentum is 0); w -= lr*update.
    // buf may be null when momentum is 0. step counts from 1.
    virtual void sgdStep(float *w, const float *g, float *buf, int64_t count, const SgdParams &p,
                         int64_t step) = 0;
    // PyTorch's Adam/AdamW with bias correction; step counts from 1.
    virtual void adamStep(float *w, const float *g, float *m, float *v, int64_t count,
                          const AdamParams &p, int64_t step) = 0;
    // One update of a whole parameter group: the same result as sgdStep/adamStep on each slot.
    // A GPU backend fuses them into one kernel launch; the default loops.
    virtual void sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, int64_t step);
    virtual void adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step);

    // ---- Step capture (CUDA graphs). A backend that canCapture() records the work queued between
    // beginCapture() and endCapture() without running it; replaying the result runs that work
    // again with the same pointers and sizes. What changes from step to step goes through
    // setStepValues(), which such a backend keeps in device memory for its kernels to read at run
    // time: the learning rate and step of sgdSteps/adamSteps and the stepSeed of dropoutForward.
    // While capturing, those ops must be called with the values last set (checked), and nothing
    // may allocate, upload or download (the loss ops then return no result: read it with
    // latestLoss() after the replay). ----
    virtual bool canCapture() const { return false; }
    // Sets the values the next step's ops read; never while capturing.
    virtual void setStepValues(const StepValues &) {}
    // Throws DeviceError where the backend cannot capture or the device refuses.
    virtual void beginCapture();
    virtual std::unique_ptr<CapturedWork> endCapture();
    // Ends a capture that an op's exception cut short, discarding what it recorded; a no-op when
    // none is open. Never throws.
    virtual void abortCapture() noexcept {}
    // The result of the latest softmaxCrossEntropy, after the work queued before this call.
    virtual LossResult latestLoss() = 0;
    // The same result without waiting for it now: a GPU queues its copy to the host and returns,
    // so the host can queue the next step while this one runs. At most two may be outstanding
    // (older ones must have been waited for). The default reads latestLoss() at once.
    virtual std::unique_ptr<PendingLoss> readLatestLoss();
};

// A compute device as people see it in the device picker and `flowbench-cli devices`.
struct ComputeDevice {
    Device device;
    std::string name;        // "NVIDIA H100 80GB HBM3", or the CPU's model name
    int64_t memoryBytes = 0; // total device memory (0 for the CPU)
    int computeMajor = 0;    // CUDA compute capability
    int computeMinor = 0;
    int multiprocessors = 0; // SMs for a GPU, logical cores for the CPU
};

struct DeviceList {
    std::vector<ComputeDevice> devices; // the CPU first, then every usable GPU
    // Why no GPU can be used, when none can: "this build has no CUDA backend", the driver's
    // answer, ... Empty when at least one GPU is listed.
    std::string gpuProblem;
};

DeviceList listDevices();
// The device "auto" means: the first GPU when there is one, else the CPU.
Device defaultDevice();

// The backend for a device: "cpu" is oneDNN with the reference kernels for the small ops. Null
// with a reason when the device is not available in this build or on this machine.
Result<Backend *> backendFor(Device device);
// The plain reference kernels: the oracle every other backend is tested against.
Backend &referenceBackend();

// The compute libraries this build runs on, as (name, version), for run logs and bug reports.
std::vector<std::pair<std::string, std::string>> backendLibraryVersions();

} // namespace fb
