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
    c.add(layerNode(layer("global_avg_pool", "Global average pool",
                          "Each channel's mean over the whole picture: C x H x W -> C."),
                    [](const NodeParams &) { return nn::makeGlobalAvgPool(); }));
}

} // namespace fb::exec::nodes
