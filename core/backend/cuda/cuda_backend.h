#pragma once

// The GPU backend (DESIGN.md): cuDNN for convolution, pooling and batch normalization, cuBLAS
// for matrix products, our own kernels for the rest. One backend per GPU; all its work runs in
// order on one stream; uploads go through pinned staging buffers, so the host copies into them
// and goes on while the copy engine moves the bytes. A training step can be captured as a CUDA
// graph and replayed (see Backend::beginCapture): the values that change per step live in a small
// device block that the optimizer and dropout kernels read when they run.

#include "core/backend/cuda/cuda_context.h"
#include "core/backend/cuda/cuda_runtime_types.h"

#include <vector>

namespace fb::cuda {

class CudaBackend final : public Backend {
public:
    // Throws DeviceError when the device cannot be opened.
    explicit CudaBackend(int device);
    ~CudaBackend() override;

    std::string name() const override { return "cuda"; }
    Device device() const override { return Device::cuda(m_ctx.device); }
    bool supports(OpKind) const override { return true; }
    void setThreads(int) override {} // host threads only queue work here
    bool setPrecision(Precision p) override
    {
        m_ctx.precision = p;
        return true;
    }
    void setDeterministic(bool on) override { m_ctx.deterministic = on; }

    Tensor empty(const Shape &shape, DType dtype = DType::F32) override;
    void copy(void *dst, const void *src, size_t bytes) override;
    void upload(void *dst, const void *host, size_t bytes) override;
    void download(void *host, const void *src, size_t bytes) override;
    void uploadAhead(std::span<const HostCopy> copies) override;
    void fill(float *y, float value, int64_t count) override;
    void zero(void *dst, size_t bytes) override;
    void synchronize() override;

    std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d) override;
    std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d) override;
    std::unique_ptr<PoolKernel> makePool(const PoolDesc &d) override;
    std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d) override;
    std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d) override;

    void add(const float *a, const float *b, float *y, int64_t count) override;
    void accumulate(float *y, const float *x, int64_t count) override;
    void axpby(float *y, const float *x, int64_t count, float a, float b) override;
    void gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                    int64_t rowElems) override;
    void gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index, int64_t n) override;

    LossResult softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n,
                                   int64_t classes, float *dlogits,
                                   float smoothing = 0.0f) override;
    float mse(const float *pred, const float *target, int64_t count, float *dpred) override;

    void dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                        uint64_t stepSeed, uint64_t salt) override;
    void dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count) override;

    void sgdStep(float *w, const float *g, float *buf, int64_t count, const SgdParams &p,
                 int64_t step) override;
    void adamStep(float *w, const float *g, float *m, float *v, int64_t count, const AdamParams &p,
                  int64_t step) override;
    void sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, int64_t step) override;
    void adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step) override;

    void *nativeStream() override { return m_stream->get(); }
    bool canCapture() const override { return true; }
    void setStepValues(const StepValues &v) override;
    void beginCapture() override;
    std::unique_ptr<CapturedWork> endCapture() override;
    void abortCapture() noexcept override;
    LossResult latestLoss() override;
    std::unique_ptr<PendingLoss> readLatestLoss() override;

private:
    // Copies host bytes into the pinned staging slots and queues their upload on `stream`.
    void stage(void *dst, const void *host, size_t bytes, cudaStream_t stream);
    // The device block holding `wanted`, for a kernel to read. Outside a capture it is written
    // when it differs; inside one it must already hold them (a replay reads what
    // setStepValues set), else DeviceError.
    const StepValues *stepValues(const StepValues &wanted, const char *op);
    // What one fused optimizer launch takes: the group's slot table and element count, and the
    // step's values (lr and step) in device memory.
    struct GroupUpdate {
        const ParamSlot *slots = nullptr;
        int64_t totalElems = 0;
        const StepValues *values = nullptr;
    };
    GroupUpdate prepareUpdate(const std::vector<ParamSlot> &group, float lr, int64_t step,
                              const char *op);
    // Throws DeviceError naming `what` while a capture is open (it would wait for the device,
    // or allocate).
    void refuseWhileCapturing(const char *what) const;
    // The group's slots in device memory, uploaded the first time a group is seen (its pointers
    // stay the same step after step). Tables are kept for the backend's life: a captured step
    // may still read any of them, and a run has one group per optimizer.
    const ParamSlot *deviceSlots(const std::vector<ParamSlot> &group);

    std::string m_deviceName;
    std::unique_ptr<CachingAllocator> m_allocator;
    std::unique_ptr<Stream> m_stream;
    CudaContext m_ctx;
    // Pinned staging for uploads: the host's bytes are copied here so that the copy engine can
    // read them while the host goes on; two slots, each reused once its last copy is done.
    struct Staging {
        PinnedBuffer buffer;
        std::unique_ptr<Event> done;
        bool used = false;
    };
    Staging m_staging[2];
    int m_nextStaging = 0;
    // uploadAhead's copy stream. `m_consumed` marks, on the compute stream, the work queued
    // before the latest uploadAhead (what may still read the buffers the next one writes);
    // `m_copied` marks the end of the latest copies, for the compute stream to wait on.
    std::unique_ptr<Stream> m_copyStream;
    std::unique_ptr<Event> m_consumed, m_copied;
    bool m_consumedRecorded = false;
    // Loss results: written by the kernels, read back with one small copy. Pipelined reads
    // (readLatestLoss) go to a ring of pinned slots, each with the event that says it arrived.
    DeviceBuffer m_lossOut;
    PinnedBuffer m_lossHost;
    static constexpr int kLossReads = 4;
    PinnedBuffer m_lossRing;
    std::unique_ptr<Event> m_lossArrived[kLossReads];
    int m_nextLossRead = 0;
    struct SlotTable {
        std::vector<ParamSlot> host;
        DeviceBuffer device;
    };
    std::vector<SlotTable> m_slotTables;
    // The step's values in device memory, and what was last written there.
    DeviceBuffer m_stepDevice;
    StepValues m_stepHost;
    bool m_stepWritten = false;
    bool m_capturing = false;
    // cuBLAS's workspace, given to it up front so that captured products allocate nothing.
    DeviceBuffer m_cublasWorkspace;
};

// The usable GPUs of this machine, or why there are none.
DeviceList listCudaDevices();
void appendCudaLibraryVersions(std::vector<std::pair<std::string, std::string>> &out);

} // namespace fb::cuda
