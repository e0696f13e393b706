#pragma once

#include "core/nn/layer.h"

namespace fb::nn {

// Every layer type the pipeline's model nodes can make. Hyper-parameters mirror the node
// registry (core/graph) and PyTorch's modules of the same name.

std::unique_ptr<Layer> makeLinear(int64_t outFeatures, bool bias);
std::unique_ptr<Layer> makeConv2d(int64_t outChannels, int64_t kernel, int64_t stride,
                                  int64_t padding, bool bias);
// stride 0 means "same as the kernel", as PyTorch's default.
std::unique_ptr<Layer> makePool2d(PoolKind kind, int64_t kernel, int64_t stride, int64_t padding);
std::unique_ptr<Layer> makeActivation(Activation kind, float alpha = 0.01f);
std::unique_ptr<Layer> makeFlatten();
std::unique_ptr<Layer> makeDropout(float p);
std::unique_ptr<Layer> makeBatchNorm2d(float eps, float momentum);
std::unique_ptr<Layer> makeBatchNorm1d(float eps, float momentum); // over features [F]
std::unique_ptr<Layer> makeGlobalAvgPool(); // [C, H, W] -> [C], each channel's mean
std::unique_ptr<Layer> makeAdd();

// Uniform(-1/sqrt(fanIn), 1/sqrt(fanIn)): PyTorch's kaiming_uniform_(a=sqrt(5)) for weights,
// and its bias default, reduce to this bound.
void initUniformFanIn(Tensor &t, int64_t fanIn, Rng &rng);

} // namespace fb::nn
