// Global average pooling: [C, H, W] -> [C], each channel's mean over the whole picture (PyTorch's
// AdaptiveAvgPool2d(1) followed by a flatten), the usual end of a convolutional network before its
// last linear layer, whatever the picture's size. Kernels: average pooling (reference, oneDNN,
// cuDNN) with one window the size of the input; gradient check in test_nn.

#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"
#include "core/nn/layers.h"

namespace fb::exec::nodes {

void addGlobalAvgPool(NodeCatalog &c)
{
    NodeType t = nodeType(NodeRole::Layer, "global_avg_pool", "Model", "Global average pool",
                          "Each channel's mean over the whole picture: C x H x W -> C.");
    t.spec.inputs = {tensorIn()};
    t.spec.outputs = {tensorOut()};
    t.makeLayer = [](const NodeParams &) -> Result<std::unique_ptr<nn::Layer>> {
        return nn::makeGlobalAvgPool();
    };
    c.add(std::move(t));
}

} // namespace fb::exec::nodes
