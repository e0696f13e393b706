// Batch norm over features ([F], after a linear layer), PyTorch's BatchNorm1d: each feature
// normalized over the batch while training (running mean and variance kept for evaluation), then
// scaled and shifted. Kernels: the 2-D batch norm's (reference, oneDNN, cuDNN) on an [N, F, 1, 1]
// picture, which is [N, F] in memory; gradient check in test_nn.

#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"
#include "core/nn/layers.h"

namespace fb::exec::nodes {

void addBatchNorm1d(NodeCatalog &c)
{
    c.add(layerNode(
        layer("batchnorm1d", "Batch norm 1D",
              "Normalizes each feature over the batch, then scales and shifts it "
              "(learned); after a linear layer.",
              batchNormParams()),
        [](const NodeParams &p) { return nn::makeBatchNorm1d(p.f("eps"), p.f("momentum")); }));
}

} // namespace fb::exec::nodes
