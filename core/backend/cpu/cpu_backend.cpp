#include "core/backend/cpu/cpu_backend.h"

#include "core/backend/cpu/dnnl_kernels.h"
#include "core/base/log.h"

#include <omp.h>

namespace fb {

CpuBackend::CpuBackend() = default;

void CpuBackend::setThreads(int threads)
{
    ReferenceBackend::setThreads(threads);
    // Debian's oneDNN runs on the OpenMP runtime, so its thread count is OpenMP's.
    if (threads > 0) omp_set_num_threads(threads);
}

namespace {

template <class Fast, class Fallback>
auto makeOr(const char *what, Fast fast, Fallback fallback) -> decltype(fallback())
{
    try {
        return fast();
    } catch (const dnnl::error &e) {
        // Out of memory is not a shape oneDNN lacks: the reference kernel would need the memory
        // as well, so it is the node's error, as on the GPU.
        if (e.status == dnnl_out_of_memory)
            throw DeviceError(std::string("out of memory on the CPU making the oneDNN ") + what +
                              " primitive");
        logWarning(std::string("oneDNN has no ") + what + " primitive for this shape (" + e.what() +
                   "); using the reference kernel");
        return fallback();
    }
}

} // namespace

std::unique_ptr<ConvKernel> CpuBackend::makeConv(const ConvDesc &d)
{
    return makeOr(
        "convolution", [&] { return dnnlx::makeConv(d); },
        [&] { return ReferenceBackend::makeConv(d); });
}

std::unique_ptr<LinearKernel> CpuBackend::makeLinear(const LinearDesc &d)
{
    return makeOr(
        "inner product", [&] { return dnnlx::makeLinear(d); },
        [&] { return ReferenceBackend::makeLinear(d); });
}

std::unique_ptr<PoolKernel> CpuBackend::makePool(const PoolDesc &d)
{
    return makeOr(
        "pooling", [&] { return dnnlx::makePool(d); },
        [&] { return ReferenceBackend::makePool(d); });
}

std::unique_ptr<ActivationKernel> CpuBackend::makeActivation(const ActivationDesc &d)
{
    return makeOr(
        "eltwise", [&] { return dnnlx::makeActivation(d); },
        [&] { return ReferenceBackend::makeActivation(d); });
}

std::unique_ptr<BatchNormKernel> CpuBackend::makeBatchNorm(const BatchNormDesc &d)
{
    return makeOr(
        "batch normalization", [&] { return dnnlx::makeBatchNorm(d); },
        [&] { return ReferenceBackend::makeBatchNorm(d); });
}

} // namespace fb
