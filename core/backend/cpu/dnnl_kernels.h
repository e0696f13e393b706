#pragma once

#include "core/backend/backend.h"
#include "core/backend/cpu/dnnl_common.h"

#include <memory>

namespace fb::dnnlx {

// Factories of the oneDNN kernels; each throws dnnl::error when oneDNN cannot make the primitive
// (the backend then falls back to the reference kernel and says so).
std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d);
std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d);
std::unique_ptr<PoolKernel> makePool(const PoolDesc &d);
std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d);
std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d);

} // namespace fb::dnnlx
