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
    NodeType t = nodeType(NodeRole::Layer, "batchnorm1d", "Model", "Batch norm 1D",
                          "Normalizes each feature over the batch, then scales and shifts it "
                          "(learned); after a linear layer.");
    t.spec.inputs = {tensorIn()};
    t.spec.outputs = {tensorOut()};
    t.spec.params = {
        floatParam("eps", 1e-5, leftOpen(0, 1), "Added to the variance for numerical stability."),
        floatParam("momentum", 0.1, closed(0, 1),
                   "Weight of the current batch in the running mean and variance.")};
    t.makeLayer = [](const NodeParams &p) -> Result<std::unique_ptr<nn::Layer>> {
        return nn::makeBatchNorm1d(p.f("eps"), p.f("momentum"));
    };
    c.add(std::move(t));
}

} // namespace fb::exec::nodes
