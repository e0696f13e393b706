#include "core/backend/cpu/reference_backend.h"

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
    return Tensor::empty(shape, dtype);
}

void ReferenceBackend::copy(void *dst, const void *src, size_t bytes)
{
    if (bytes) std::memcpy(dst, src, bytes);
}

std::unique_ptr<ConvKernel> ReferenceBackend::makeConv(const ConvDesc &d)
{
    return makeReferenceConv(d);
}

std::unique_ptr<LinearKernel> ReferenceBackend::makeLinear(const LinearDesc &d)
{
    return makeReferenceLinear(d);
}

std::unique_ptr<PoolKernel> ReferenceBackend::makePool(const PoolDesc &d)
{
    return makeReferencePool(d);
}

std::unique_ptr<ActivationKernel> ReferenceBackend::makeActivation(const ActivationDesc &d)
{
    return makeReferenceActivation(d);
}

std::unique_ptr<BatchNormKernel> ReferenceBackend::makeBatchNorm(const BatchNormDesc &d)
{
    return makeReferenceBatchNorm(d);
}

} // namespace fb
