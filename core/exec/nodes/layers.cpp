// The model's layers, and its input. Each makes its nn::Layer from its parameters; the kernels
// behind them are in core/nn and core/backend.

#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"
#include "core/nn/layers.h"

namespace fb::exec::nodes {

namespace {

NodeType activation(std::string type, std::string title, std::string help, Activation kind)
{
    return layerNode(layer(std::move(type), std::move(title), std::move(help)),
                     [kind](const NodeParams &) { return nn::makeActivation(kind); });
}

NodeType pool(std::string type, std::string title, std::string help, PoolKind kind)
{
    return layerNode(
        layer(std::move(type), std::move(title), std::move(help),
              {intParam("kernel_size", 2, closed(1, kMaxWindow),
                        "Height and width of the pooling window."),
               intParam("stride", 0, closed(0, kMaxWindow),
                        "Step between windows; 0 = same as kernel_size."),
               intParam("padding", 0, closed(0, kMaxWindow), "Rows/columns added on every side.")}),
        [kind](const NodeParams &p) {
            return nn::makePool2d(kind, p.i("kernel_size"), p.i("stride"), p.i("padding"));
        });
}

} // namespace

void addModelLayers(NodeCatalog &c)
{
    {
        NodeType t =
            nodeType(NodeRole::Input, "input", "Model", "Input",
                     "The model's input; its shape comes from the data wired to the Train node.");
        t.spec.outputs = {port("out", PortType::Tensor, "A batch of input samples.")};
        c.add(std::move(t));
    }
    c.add(layerNode(
        layer("linear", "Linear", "Fully connected layer: out = in x W^T + b.",
              {intParam("out_features", 128, closed(1, kMaxFeatures), "Number of output features."),
               boolParam("bias", true, "Learn an additive bias per output feature.")}),
        [](const NodeParams &p) { return nn::makeLinear(p.i("out_features"), p.b("bias")); }));
    c.add(layerNode(
        layer(
            "conv2d", "Conv 2D", "2-D convolution over NCHW images.",
            {intParam("out_channels", 32, closed(1, kMaxFeatures),
                      "Number of output channels (filters)."),
             intParam("kernel_size", 3, closed(1, kMaxWindow), "Height and width of each filter."),
             intParam("stride", 1, closed(1, kMaxWindow), "Step between filter positions."),
             intParam("padding", 0, closed(0, kMaxWindow),
                      "Zero rows/columns added on every side."),
             boolParam("bias", true, "Learn an additive bias per output channel.")}),
        [](const NodeParams &p) {
            return nn::makeConv2d(p.i("out_channels"), p.i("kernel_size"), p.i("stride"),
                                  p.i("padding"), p.b("bias"));
        }));
    c.add(
        pool("maxpool2d", "Max pool 2D", "Keeps the largest value in each window.", PoolKind::Max));
    c.add(
        pool("avgpool2d", "Average pool 2D", "Averages the values in each window.", PoolKind::Avg));
    c.add(activation("relu", "ReLU", "max(0, x), elementwise.", Activation::Relu));
    c.add(layerNode(
        layer("leaky_relu", "Leaky ReLU", "x for x > 0, negative_slope * x otherwise.",
              {floatParam("negative_slope", 0.01, closed(0, 1), "Slope for negative inputs.")}),
        [](const NodeParams &p) {
            return nn::makeActivation(Activation::LeakyRelu, p.f("negative_slope"));
        }));
    c.add(activation("sigmoid", "Sigmoid", "1 / (1 + exp(-x)), elementwise.", Activation::Sigmoid));
    c.add(activation("tanh", "Tanh", "Hyperbolic tangent, elementwise.", Activation::Tanh));
    c.add(activation("gelu", "GELU",
                     "Gaussian error linear unit (tanh approximation), elementwise.",
                     Activation::Gelu));
    c.add(layerNode(layer("flatten", "Flatten",
                          "Folds all axes but the batch into one: N x C x H x W -> "
                          "N x (C*H*W)."),
                    [](const NodeParams &) { return nn::makeFlatten(); }));
    c.add(layerNode(
        layer("dropout", "Dropout",
              "While training, zeroes each value with probability p and scales the rest by "
              "1/(1-p); passes values through unchanged when evaluating.",
              {floatParam("p", 0.5, halfOpen(0, 1), "Probability of zeroing a value.")}),
        [](const NodeParams &p) { return nn::makeDropout(p.f("p")); }));
    c.add(layerNode(
        layer("batchnorm2d", "Batch norm 2D",
              "Normalizes each channel over the batch, then scales and shifts it (learned).",
              batchNormParams()),
        [](const NodeParams &p) { return nn::makeBatchNorm2d(p.f("eps"), p.f("momentum")); }));
    {
        NodeTypeSpec s;
        s.type = "add";
        s.category = "Model";
        s.title = "Add";
        s.help = "Elementwise a + b, e.g. a residual connection; shapes must match.";
        s.inputs = {port("a", PortType::Tensor, "First operand."),
                    port("b", PortType::Tensor, "Second operand, same shape as a.")};
        s.outputs = {tensorOut("a + b.")};
        c.add(layerNode(std::move(s), [](const NodeParams &) { return nn::makeAdd(); }));
    }
}

} // namespace fb::exec::nodes
