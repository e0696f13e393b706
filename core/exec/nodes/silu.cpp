// SiLU (swish): x * sigmoid(x), the activation of EfficientNet and of most recent convolutional
// and transformer blocks. Kernels: the reference and CUDA element-wise activations, oneDNN's
// eltwise_swish with alpha 1; backward s(x) * (1 + x * (1 - s(x))). Gradient checks:
// test_reference_kernels, test_backend_ops (oneDNN and CUDA against the reference).

#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"
#include "core/nn/layers.h"

namespace fb::exec::nodes {

void addSilu(NodeCatalog &c)
{
    c.add(layerNode(layer("silu", "SiLU", "x * sigmoid(x) (also called swish), elementwise."),
                    [](const NodeParams &) { return nn::makeActivation(Activation::Silu); }));
}

} // namespace fb::exec::nodes
