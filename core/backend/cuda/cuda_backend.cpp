#include "core/backend/cuda/cuda_backend.h"

#include "core/backend/cuda/cuda_kernels.h"
#include "core/backend/cuda/cuda_ops.h"

#include <algorithm>
#include <cstring>

namespace fb::cuda {

namespace {

// Uploads are cut into pieces of at most this size, so a whole data set moved to the device
// needs no pinned buffer of its size.
constexpr size_t kStagingBytes = size_t(16) << 20;

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
    m_lossOut = DeviceBuffer(*m_allocator, 2 * sizeof(int64_t));
    m_lossHost = PinnedBuffer(2 * sizeof(int64_t));
}

CudaBackend::~CudaBackend()
{
    // Work still queued may use the handles and buffers below.
    if (m_stream) cudaStreamSynchronize(m_stream->get());
    if (m_ctx.cudnn) cudnnDestroy(m_ctx.cudnn);
    if (m_ctx.cublas) cublasDestroy(m_ctx.cublas);
}

Tensor CudaBackend::empty(const Shape &shape, DType dtype)
{
    const size_t bytes = size_t(shape.numel()) * dtypeSize(dtype);
    CachingAllocator *alloc = m_allocator.get();
    void *p = alloc->allocate(bytes);
    auto storage =
        std::make_shared<Storage>(p, bytes, device(), [alloc](void *q) { alloc->release(q); });
    return Tensor(std::move(storage), shape, dtype);
}

void CudaBackend::copy(void *dst, const void *src, size_t bytes)
{
    if (bytes)
        FB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_ctx.stream));
}

void CudaBackend::upload(void *dst, const void *host, size_t bytes)
{
    // From pageable memory a copy would wait for the host; through the pinned slots the host
    // only waits when both slots are still being copied from.
    DeviceScope scope(m_ctx.device);
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
        FB_CUDA_CHECK(
            cudaMemcpyAsync(to, s.buffer.data(), piece, cudaMemcpyHostToDevice, m_ctx.stream));
        s.done->record(m_ctx.stream);
        s.used = true;
        from += piece;
        to += piece;
        bytes -= piece;
    }
}

void CudaBackend::download(void *host, const void *src, size_t bytes)
{
    if (!bytes) return;
    FB_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, m_ctx.stream));
    m_stream->synchronize();
}

void CudaBackend::fill(float *y, float value, int64_t count)
{
    cuda::fill(y, value, count, m_ctx.stream);
}

void CudaBackend::zero(void *dst, size_t bytes)
{
    if (bytes) FB_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, m_ctx.stream));
}

void CudaBackend::synchronize()
{
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
    return cuda::makeActivation(m_ctx, d);
}

std::unique_ptr<BatchNormKernel> CudaBackend::makeBatchNorm(const BatchNormDesc &d)
{
    DeviceScope scope(m_ctx.device);
    return cuda::makeBatchNorm(m_ctx, d);
}

void CudaBackend::add(const float *a, const float *b, float *y, int64_t count)
{
    cuda::add(a, b, y, count, m_ctx.stream);
}

void CudaBackend::accumulate(float *y, const float *x, int64_t count)
{
    cuda::accumulate(y, x, count, m_ctx.stream);
}

void CudaBackend::axpby(float *y, const float *x, int64_t count, float a, float b)
{
    cuda::axpby(y, x, count, a, b, m_ctx.stream);
}

void CudaBackend::gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                             int64_t rowElems)
{
    cuda::gatherRows(table, index, dst, n, rowElems, m_ctx.stream);
}

void CudaBackend::gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index, int64_t n)
{
    cuda::gatherLabels(table, index, dst, n, m_ctx.stream);
}

LossResult CudaBackend::softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n,
                                            int64_t classes, float *dlogits)
{
    // The loss and the correct count come back in one small copy: the step's only wait for the
    // device, which the runner needs anyway to stop on a NaN loss.
    float *loss = m_lossOut.as<float>();
    auto *correct = reinterpret_cast<int64_t *>(m_lossOut.as<char>() + sizeof(int64_t));
    cuda::softmaxCrossEntropy(logits, labels, n, classes, dlogits, loss, correct, m_ctx.stream);
    download(m_lossHost.data(), m_lossOut.data(), 2 * sizeof(int64_t));
    LossResult r;
    std::memcpy(&r.loss, m_lossHost.data(), sizeof(float));
    std::memcpy(&r.correct, static_cast<char *>(m_lossHost.data()) + sizeof(int64_t),
                sizeof(int64_t));
    return r;
}

float CudaBackend::mse(const float *pred, const float *target, int64_t count, float *dpred)
{
    float *loss = m_lossOut.as<float>();
    cuda::mse(pred, target, count, dpred, loss, m_ctx.stream);
    float out = 0;
    download(m_lossHost.data(), loss, sizeof(float));
    std::memcpy(&out, m_lossHost.data(), sizeof(float));
    return out;
}

void CudaBackend::dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                                 uint64_t seed)
{
    cuda::dropoutForward(x, y, mask, count, p, seed, m_ctx.stream);
}

void CudaBackend::dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count)
{
    cuda::mul(dy, mask, dx, count, m_ctx.stream);
}

void CudaBackend::sgdStep(float *w, const float *g, float *buf, int64_t count, const SgdParams &p,
                          bool firstStep)
{
    sgdSteps({ParamSlot{w, g, buf, nullptr, count}}, p, firstStep);
}

void CudaBackend::adamStep(float *w, const float *g, float *m, float *v, int64_t count,
                           const AdamParams &p, int64_t step)
{
    adamSteps({ParamSlot{w, g, m, v, count}}, p, step);
}

const ParamSlot *CudaBackend::deviceSlots(const std::vector<ParamSlot> &group)
{
    const bool same = group.size() == m_slotsHost.size() &&
                      std::equal(group.begin(), group.end(), m_slotsHost.begin(),
                                 [](const ParamSlot &a, const ParamSlot &b) {
                                     return a.w == b.w && a.g == b.g && a.s0 == b.s0 &&
                                            a.s1 == b.s1 && a.count == b.count;
                                 });
    if (!same) {
        m_slotsHost = group;
        const size_t bytes = group.size() * sizeof(ParamSlot);
        if (m_slotsDevice.bytes() < bytes) m_slotsDevice = DeviceBuffer(*m_allocator, bytes);
        upload(m_slotsDevice.data(), m_slotsHost.data(), bytes);
    }
    return m_slotsDevice.as<ParamSlot>();
}

void CudaBackend::sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, bool firstStep)
{
    if (group.empty()) return;
    int64_t total = 0;
    for (const ParamSlot &s : group)
        total += s.count;
    cuda::sgdSteps(deviceSlots(group), int(group.size()), total, p, firstStep, m_ctx.stream);
}

void CudaBackend::adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step)
{
    if (group.empty()) return;
    int64_t total = 0;
    for (const ParamSlot &s : group)
        total += s.count;
    cuda::adamSteps(deviceSlots(group), int(group.size()), total, p, step, m_ctx.stream);
}

} // namespace fb::cuda
