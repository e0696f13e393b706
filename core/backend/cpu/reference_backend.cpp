#include "core/backend/cpu/reference_backend.h"

#include "core/base/bytes.h"
#include "core/base/check.h"

#include <algorithm>
#include <cstring>

namespace fb {

std::string ReferenceBackend::name() const
{
    return "cpu-reference";
}

Device ReferenceBackend::device() const
{
    return Device::cpu();
}

bool ReferenceBackend::supports(OpKind) const
{
    return true;
}

void ReferenceBackend::setThreads(int threads)
{
    m_threads = threads < 1 ? 1 : threads;
}

Tensor ReferenceBackend::empty(const Shape &shape, DType dtype)
{
    // As on the GPU: a buffer that cannot be had is a DeviceError with the size, which the model
    // turns into an error naming the node (a bare bad_alloc would lose it).
    try {
        return Tensor::empty(shape, dtype);
    } catch (const std::bad_alloc &) {
        const double bytes = double(shape.numel()) * double(dtypeSize(dtype));
        throw DeviceError("out of memory on the CPU: asked for " + humanBytes(bytes) + " (" +
                              shape.str() + "), " + humanBytes(double(hostMemoryAvailable())) +
                              " available. Try a smaller batch size",
                          size_t(bytes));
    }
}

void ReferenceBackend::copy(void *dst, const void *src, size_t bytes)
{
    if (bytes) std::memcpy(dst, src, bytes);
}

// Host memory is this backend's memory: moving data in and out is a copy.
void ReferenceBackend::upload(void *dst, const void *host, size_t bytes)
{
    copy(dst, host, bytes);
}

void ReferenceBackend::download(void *host, const void *src, size_t bytes)
{
    copy(host, src, bytes);
}

void ReferenceBackend::fill(float *y, float value, int64_t count)
{
    std::fill_n(y, count, value);
}

void ReferenceBackend::zero(void *dst, size_t bytes)
{
    if (bytes) std::memset(dst, 0, bytes);
}

std::unique_ptr<ConvKernel> ReferenceBackend::makeConv(const ConvDesc &d)
{
    // The oracle keeps one layout; prefersChannelsLast() is false, so no plan asks for another.
    FB_ASSERT(!d.channelsLast, "the reference kernels use NCHW");
    return makeReferenceConv(d);
}

std::unique_ptr<LinearKernel> ReferenceBackend::makeLinear(const LinearDesc &d)
{
    return makeReferenceLinear(d);
}

std::unique_ptr<PoolKernel> ReferenceBackend::makePool(const PoolDesc &d)
{
    FB_ASSERT(!d.channelsLast, "the reference kernels use NCHW");
    return makeReferencePool(d);
}

std::unique_ptr<ActivationKernel> ReferenceBackend::makeActivation(const ActivationDesc &d)
{
    return makeReferenceActivation(d);
}

std::unique_ptr<BatchNormKernel> ReferenceBackend::makeBatchNorm(const BatchNormDesc &d)
{
    FB_ASSERT(!d.channelsLast, "the reference kernels use NCHW");
    return makeReferenceBatchNorm(d);
}

} // namespace fb
