#include "core/backend/cuda/cuda_backend.h"

#include "core/backend/cuda/cuda_kernels.h"
#include "core/backend/cuda/cuda_ops.h"

#include "core/base/check.h"

#include <algorithm>
#include <cstring>

namespace fb::cuda {

namespace {

// Uploads are cut into pieces of at most this size, so a whole data set moved to the device
// needs no pinned buffer of its size.
constexpr size_t kStagingBytes = size_t(16) << 20;
// cuBLAS's guidance for Hopper (4 MiB suffices before it); given once, so that products captured
// into a CUDA graph never ask for memory.
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

// The loss and the correct count as softmaxCrossEntropy leaves them: a float, then an int64_t.
constexpr size_t kLossBytes = 2 * sizeof(int64_t);

LossResult decodeLoss(const void *host)
{
    LossResult r;
    std::memcpy(&r.loss, host, sizeof(float));
    std::memcpy(&r.correct, static_cast<const char *>(host) + sizeof(int64_t), sizeof(int64_t));
    return r;
}

class CudaPendingLoss final : public PendingLoss {
public:
    CudaPendingLoss(const Event &arrived, const void *host, int device)
        : m_arrived(arrived)
        , m_host(host)
        , m_device(device)
    {}
    LossResult wait() override
    {
        DeviceScope scope(m_device);
        m_arrived.synchronize();
        return decodeLoss(m_host);
    }

private:
    const Event &m_arrived;
    const void *m_host;
    int m_device;
};

class CudaCapturedStep final : public CapturedWork {
public:
    CudaCapturedStep(cudaGraph_t graph, cudaStream_t stream, int device)
        : m_graph(graph)
        , m_stream(stream)
        , m_device(device)
    {}
    void replay() override
    {
        DeviceScope scope(m_device);
        m_graph.launch(m_stream);
    }

private:
    Graph m_graph;
    cudaStream_t m_stream;
    int m_device;
};

} // namespace

CudaBackend::CudaBackend(int device)
{
    int count = 0;
    FB_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        throw DeviceError("there is no GPU cuda:" + std::to_string(device) + " (this machine has " +
                          std::to_string(count) + ")");
    m_ctx.device = device;
    DeviceScope scope(device);
    cudaDeviceProp prop{};
    FB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    m_deviceName = prop.name;
    m_allocator = std::make_unique<CachingAllocator>(device, m_deviceName);
    m_stream = std::make_unique<Stream>();
    m_ctx.stream = m_stream->get();
    m_ctx.allocator = m_allocator.get();
    FB_CUBLAS_CHECK(cublasCreate(&m_ctx.cublas));
    FB_CUBLAS_CHECK(cublasSetStream(m_ctx.cublas, m_ctx.stream));
    FB_CUDNN_CHECK(cudnnCreate(&m_ctx.cudnn));
    FB_CUDNN_CHECK(cudnnSetStream(m_ctx.cudnn, m_ctx.stream));
    for (Staging &s : m_staging)
        s.done = std::make_unique<Event>();
    m_lossOut = DeviceBuffer(*m_allocator, kLossBytes);
    m_lossHost = PinnedBuffer(kLossBytes);
    m_lossRing = PinnedBuffer(kLossReads * kLossBytes);
    for (auto &e : m_lossArrived)
        e = std::make_unique<Event>();
    m_stepDevice = DeviceBuffer(*m_allocator, sizeof(StepValues));
    m_cublasWorkspace = DeviceBuffer(*m_allocator, kCublasWorkspaceBytes);
    FB_CUBLAS_CHECK(
        cublasSetWorkspace(m_ctx.cublas, m_cublasWorkspace.data(), m_cublasWorkspace.bytes()));
}

CudaBackend::~CudaBackend()
{
    // Work still queued may use the handles and buffers below.
    abortCapture();
    if (m_stream) cudaStreamSynchronize(m_stream->get());
    if (m_copyStream) cudaStreamSynchronize(m_copyStream->get());
    if (m_ctx.cudnn) cudnnDestroy(m_ctx.cudnn);
    if (m_ctx.cublas) cublasDestroy(m_ctx.cublas);
}

Tensor CudaBackend::empty(const Shape &shape, DType dtype)
{
    refuseWhileCapturing("allocating device memory");
    const size_t bytes = size_t(shape.numel()) * dtypeSize(dtype);
    CachingAllocator *alloc = m_allocator.get();
    void *p = alloc->allocate(bytes);
    auto storage =
        std::make_shared<Storage>(p, bytes, device(), [alloc](void *q) { alloc->release(q); });
    return Tensor(std::move(storage), shape, dtype);
}

void CudaBackend::copy(void *dst, const void *src, size_t bytes)
{
    DeviceScope scope(m_ctx.device);
    if (bytes)
        FB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_ctx.stream));
}

void CudaBackend::upload(void *dst, const void *host, size_t bytes)
{
    refuseWhileCapturing("an upload");
    DeviceScope scope(m_ctx.device);
    stage(dst, host, bytes, m_ctx.stream);
}

void CudaBackend::uploadAhead(std::span<const HostCopy> copies)
{
    refuseWhileCapturing("an upload");
    DeviceScope scope(m_ctx.device);
    if (!m_copyStream) {
        m_copyStream = std::make_unique<Stream>();
        m_consumed = std::make_unique<Event>();
        m_copied = std::make_unique<Event>();
    }
    const cudaStream_t copyStream = m_copyStream->get();
    // The destinations were last used by work queued before the previous call (the caller's
    // double buffering): wait for that work only, not for the steps queued since, which the
    // copies overlap.
    if (m_consumedRecorded) m_consumed->waitOn(copyStream);
    m_consumed->record(m_ctx.stream);
    m_consumedRecorded = true;
    // Whatever happens to the copies, later compute work is ordered after those queued, so
    // memory freed by an unwinding run is never reused while the copy engine still writes it.
    struct Join {
        CudaBackend &b;
        cudaStream_t copyStream;
        ~Join()
        {
            if (cudaEventRecord(b.m_copied->get(), copyStream) == cudaSuccess)
                cudaStreamWaitEvent(b.m_ctx.stream, b.m_copied->get(), 0);
            else
                cudaStreamSynchronize(copyStream);
        }
    } join{*this, copyStream};
    for (const HostCopy &c : copies)
        stage(c.dst, c.host, c.bytes, copyStream);
}

void CudaBackend::stage(void *dst, const void *host, size_t bytes, cudaStream_t stream)
{
    // From pageable memory a copy would wait for the host; through the pinned slots the host
    // only waits when both slots are still being copied from.
    const char *from = static_cast<const char *>(host);
    char *to = static_cast<char *>(dst);
    while (bytes > 0) {
        const size_t piece = std::min(bytes, kStagingBytes);
        Staging &s = m_staging[m_nextStaging];
        m_nextStaging = (m_nextStaging + 1) % 2;
        if (s.used) s.done->synchronize();
        if (s.buffer.bytes() < piece)
            s.buffer = PinnedBuffer(std::min(kStagingBytes, std::max(piece, size_t(1) << 20)));
        std::memcpy(s.buffer.data(), from, piece);
        FB_CUDA_CHECK(cudaMemcpyAsync(to, s.buffer.data(), piece, cudaMemcpyHostToDevice, stream));
        s.done->record(stream);
        s.used = true;
        from += piece;
        to += piece;
        bytes -= piece;
    }
}

void CudaBackend::download(void *host, const void *src, size_t bytes)
{
    DeviceScope scope(m_ctx.device);
    if (!bytes) return;
    refuseWhileCapturing("a download");
    FB_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, m_ctx.stream));
    m_stream->synchronize();
}

void CudaBackend::fill(float *y, float value, int64_t count)
{
    DeviceScope scope(m_ctx.device);
    cuda::fill(y, value, count, m_ctx.stream);
}

void CudaBackend::zero(void *dst, size_t bytes)
{
    DeviceScope scope(m_ctx.device);
    if (bytes) FB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, m_ctx.stream));
}

void CudaBackend::synchronize()
{
    DeviceScope scope(m_ctx.device);
    if (m_copyStream) m_copyStream->synchronize();
    m_stream->synchronize();
}

std::unique_ptr<ConvKernel> CudaBackend::makeConv(const ConvDesc &d)
{
    DeviceScope scope(m_ctx.device);
    return cuda::makeConv(m_ctx, d);
}

std::unique_ptr<LinearKernel> CudaBackend::makeLinear(const LinearDesc &d)
{
    DeviceScope scope(m_ctx.device);
    return cuda::makeLinear(m_ctx, d);
}

std::unique_ptr<PoolKernel> CudaBackend::makePool(const PoolDesc &d)
{
    DeviceScope scope(m_ctx.device);
    return cuda::makePool(m_ctx, d);
}

std::unique_ptr<ActivationKernel> CudaBackend::makeActivation(const ActivationDesc &d)
{
    DeviceScope scope(m_ctx.device);
    return cuda::makeActivation(m_ctx, d);
}

std::unique_ptr<BatchNormKernel> CudaBackend::makeBatchNorm(const BatchNormDesc &d)
{
    DeviceScope scope(m_ctx.device);
    return cuda::makeBatchNorm(m_ctx, d);
}

void CudaBackend::add(const float *a, const float *b, float *y, int64_t count)
{
    DeviceScope scope(m_ctx.device);
    cuda::add(a, b, y, count, m_ctx.stream);
}

void CudaBackend::accumulate(float *y, const float *x, int64_t count)
{
    DeviceScope scope(m_ctx.device);
    cuda::accumulate(y, x, count, m_ctx.stream);
}

void CudaBackend::axpby(float *y, const float *x, int64_t count, float a, float b)
{
    DeviceScope scope(m_ctx.device);
    cuda::axpby(y, x, count, a, b, m_ctx.stream);
}

void CudaBackend::gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                             int64_t rowElems)
{
    DeviceScope scope(m_ctx.device);
    cuda::gatherRows(table, index, dst, n, rowElems, m_ctx.stream);
}

void CudaBackend::gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index, int64_t n)
{
    DeviceScope scope(m_ctx.device);
    cuda::gatherLabels(table, index, dst, n, m_ctx.stream);
}

LossResult CudaBackend::softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n,
                                            int64_t classes, float *dlogits, float smoothing)
{
    DeviceScope scope(m_ctx.device);
    // The loss and the correct count come back in one small copy: the step's only wait for the
    // device, which the runner needs anyway to stop on a NaN loss.
    float *loss = m_lossOut.as<float>();
    auto *correct = reinterpret_cast<int64_t *>(m_lossOut.as<char>() + sizeof(int64_t));
    cuda::softmaxCrossEntropy(logits, labels, n, classes, smoothing, dlogits, loss, correct,
                              m_ctx.stream);
    // A captured step cannot wait: its result is read with latestLoss() after the replay.
    if (m_capturing) return {};
    return latestLoss();
}

LossResult CudaBackend::latestLoss()
{
    DeviceScope scope(m_ctx.device);
    download(m_lossHost.data(), m_lossOut.data(), kLossBytes);
    return decodeLoss(m_lossHost.data());
}

std::unique_ptr<PendingLoss> CudaBackend::readLatestLoss()
{
    refuseWhileCapturing("a download");
    DeviceScope scope(m_ctx.device);
    const int slot = m_nextLossRead;
    m_nextLossRead = (m_nextLossRead + 1) % kLossReads;
    void *host = static_cast<char *>(m_lossRing.data()) + size_t(slot) * kLossBytes;
    FB_CUDA_CHECK(
        cudaMemcpyAsync(host, m_lossOut.data(), kLossBytes, cudaMemcpyDeviceToHost, m_ctx.stream));
    m_lossArrived[slot]->record(m_ctx.stream);
    return std::make_unique<CudaPendingLoss>(*m_lossArrived[slot], host, m_ctx.device);
}

float CudaBackend::mse(const float *pred, const float *target, int64_t count, float *dpred)
{
    DeviceScope scope(m_ctx.device);
    float *loss = m_lossOut.as<float>();
    cuda::mse(pred, target, count, dpred, loss, m_ctx.stream);
    float out = 0;
    download(m_lossHost.data(), loss, sizeof(float));
    std::memcpy(&out, m_lossHost.data(), sizeof(float));
    return out;
}

void CudaBackend::dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                                 uint64_t stepSeed, uint64_t salt)
{
    DeviceScope scope(m_ctx.device);
    StepValues wanted = m_stepHost;
    wanted.seed = stepSeed;
    cuda::dropoutForward(x, y, mask, count, p, stepValues(wanted, "dropout"), salt, m_ctx.stream);
}

void CudaBackend::dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count)
{
    DeviceScope scope(m_ctx.device);
    cuda::mul(dy, mask, dx, count, m_ctx.stream);
}

void CudaBackend::sgdStep(float *w, const float *g, float *buf, int64_t count, const SgdParams &p,
                          int64_t step)
{
    DeviceScope scope(m_ctx.device);
    sgdSteps({ParamSlot{w, g, buf, nullptr, count}}, p, step);
}

void CudaBackend::adamStep(float *w, const float *g, float *m, float *v, int64_t count,
                           const AdamParams &p, int64_t step)
{
    DeviceScope scope(m_ctx.device);
    adamSteps({ParamSlot{w, g, m, v, count}}, p, step);
}

const ParamSlot *CudaBackend::deviceSlots(const std::vector<ParamSlot> &group)
{
    const auto sameSlots = [](const ParamSlot &x, const ParamSlot &y) {
        return x.w == y.w && x.g == y.g && x.s0 == y.s0 && x.s1 == y.s1 && x.count == y.count;
    };
    for (const SlotTable &t : m_slotTables)
        if (std::equal(group.begin(), group.end(), t.host.begin(), t.host.end(), sameSlots))
            return t.device.as<ParamSlot>();
    refuseWhileCapturing("a new optimizer group");
    SlotTable t;
    t.host = group;
    const size_t bytes = group.size() * sizeof(ParamSlot);
    t.device = DeviceBuffer(*m_allocator, bytes);
    upload(t.device.data(), t.host.data(), bytes);
    m_slotTables.push_back(std::move(t));
    return m_slotTables.back().device.as<ParamSlot>();
}

CudaBackend::GroupUpdate CudaBackend::prepareUpdate(const std::vector<ParamSlot> &group, float lr,
                                                    int64_t step, const char *op)
{
    GroupUpdate u;
    for (const ParamSlot &s : group)
        u.totalElems += s.count;
    StepValues wanted = m_stepHost;
    wanted.lr = lr;
    wanted.optimizerStep = step;
    u.values = stepValues(wanted, op);
    u.slots = deviceSlots(group);
    return u;
}

void CudaBackend::sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, int64_t step)
{
    DeviceScope scope(m_ctx.device);
    FB_ASSERT(step >= 1, "SGD steps count from 1");
    if (group.empty()) return;
    const GroupUpdate u = prepareUpdate(group, p.lr, step, "SGD");
    cuda::sgdSteps(u.slots, int(group.size()), u.totalElems, p, u.values, m_ctx.stream);
}

void CudaBackend::adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step)
{
    DeviceScope scope(m_ctx.device);
    FB_ASSERT(step >= 1, "Adam steps count from 1");
    if (group.empty()) return;
    const GroupUpdate u = prepareUpdate(group, p.lr, step, "Adam");
    cuda::adamSteps(u.slots, int(group.size()), u.totalElems, p, u.values, m_ctx.stream);
}

void CudaBackend::refuseWhileCapturing(const char *what) const
{
    if (m_capturing)
        throw DeviceError(std::string(what) +
                          " while a training step is being captured as a CUDA graph; the step "
                          "runs uncaptured instead");
}

const StepValues *CudaBackend::stepValues(const StepValues &wanted, const char *op)
{
    if (m_capturing) {
        if (!m_stepWritten || wanted != m_stepHost)
            throw DeviceError(std::string("a captured ") + op +
                              " step was called with values other than the step's "
                              "(Backend::setStepValues); the step runs uncaptured instead");
    } else if (!m_stepWritten || wanted != m_stepHost) {
        setStepValues(wanted);
    }
    return m_stepDevice.as<StepValues>();
}

void CudaBackend::setStepValues(const StepValues &v)
{
    DeviceScope scope(m_ctx.device);
    refuseWhileCapturing("setting the step's values");
    // Through the pinned staging, in stream order: kernels queued before read the old values,
    // kernels queued after (or a replay) the new ones.
    upload(m_stepDevice.data(), &v, sizeof v);
    m_stepHost = v;
    m_stepWritten = true;
}

void CudaBackend::beginCapture()
{
    refuseWhileCapturing("starting another capture");
    DeviceScope scope(m_ctx.device);
    // Thread-local mode: a call from this thread that cannot be captured (an allocation, a wait)
    // fails at once instead of corrupting the capture; other threads are not affected.
    FB_CUDA_CHECK(cudaStreamBeginCapture(m_ctx.stream, cudaStreamCaptureModeThreadLocal));
    m_capturing = true;
}

std::unique_ptr<CapturedWork> CudaBackend::endCapture()
{
    FB_ASSERT(m_capturing, "endCapture without beginCapture");
    DeviceScope scope(m_ctx.device);
    m_capturing = false;
    cudaGraph_t graph = nullptr;
    const cudaError_t e = cudaStreamEndCapture(m_ctx.stream, &graph);
    if (e != cudaSuccess) {
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError(); // an invalidated capture is not a sticky error: clear it
        throwCallError("cudaStreamEndCapture(m_ctx.stream, &graph)", __FILE__, __LINE__,
                       describe(e));
    }
    return std::make_unique<CudaCapturedStep>(graph, m_ctx.stream, m_ctx.device);
}

void CudaBackend::abortCapture() noexcept
{
    if (!m_capturing) return;
    m_capturing = false;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(m_ctx.stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
}

} // namespace fb::cuda
