#pragma once

#include "core/backend/cpu/reference_backend.h"

namespace fb {

// The fast CPU backend: oneDNN primitives for convolution, inner product, pooling, activations
// and batch normalization; the reference kernels for the small ops (loss, optimizer updates),
// which cost little next to those. Falls back to a reference kernel, with a warning, for any
// shape oneDNN cannot make a primitive for.
class CpuBackend : public ReferenceBackend {
public:
    CpuBackend();
    std::string name() const override { return "cpu"; }
    void setThreads(int threads) override;
    bool prefersChannelsLast() const override { return true; }

    std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d) override;
    std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d) override;
    std::unique_ptr<PoolKernel> makePool(const PoolDesc &d) override;
    std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d) override;
    std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d) override;
};

} // namespace fb
