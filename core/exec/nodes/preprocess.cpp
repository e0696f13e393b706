// Preprocessing: deterministic stages of an image chain (computed once and cached while no
// random stage precedes them).

#include "core/data/transforms.h"
#include "core/exec/node_type.h"
#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"

#include <cmath>

namespace fb::exec::nodes {

void addPreprocessing(NodeCatalog &c)
{
    {
        NodeTypeSpec s;
        s.type = "normalize";
        s.category = "Preprocess";
        s.title = "Normalize";
        s.help = "Pixels arrive in [0,1]; outputs (x - mean) / std.";
        s.inputs = {port("samples", PortType::Samples, "Samples to normalize.")};
        s.outputs = {port("samples", PortType::Samples, "The same samples, normalized.")};
        s.params = {
            floatParam("mean", 0.2860, closed(-kMaxPixelValue, kMaxPixelValue),
                       "Subtracted from every pixel (the Fashion-MNIST mean is 0.2860)."),
            floatParam("std", 0.3530, closed(1e-6, kMaxPixelValue),
                       "Then every pixel is divided by it (the Fashion-MNIST std is 0.3530)."),
        };
        NodeType t = transformNode(std::move(s), [](const NodeParams &p) {
            return std::make_shared<data::Normalize>(p.f("mean"), p.f("std"));
        });
        t.pixelNormalization = [](const NodeParams &p) {
            return std::pair{p.f("mean"), p.f("std")};
        };
        c.add(std::move(t));
    }
    {
        NodeType t = transformNode(
            preprocessing("normalize_channels", "Normalize per channel",
                          "Outputs (x - mean[c]) / std[c] for each channel c (pixels arrive in "
                          "[0,1]).",
                          {numberListParam("mean", "0.485,0.456,0.406",
                                           closed(-kMaxPixelValue, kMaxPixelValue),
                                           "One value per channel, separated by commas, or one "
                                           "for all (ImageNet's RGB means are the default)."),
                           numberListParam("std", "0.229,0.224,0.225", leftOpen(0, kMaxPixelValue),
                                           "One value per channel, or one for all.")}),
            [](const NodeParams &p) {
                // Validation has read both lists (ParamSpec::numberList) before anything is built.
                return std::make_shared<data::ChannelNormalize>(
                    data::parseNumberList(p.s("mean")).value(),
                    data::parseNumberList(p.s("std")).value());
            });
        c.add(std::move(t));
    }
    c.add(transformNode(
        preprocessing(
            "center_crop", "Centre crop", "Cuts the centre window of each sample.",
            {intParam("height", 0, closed(0, kMaxImageSide), "Window height; 0 = the input's."),
             intParam("width", 0, closed(0, kMaxImageSide), "Window width; 0 = the input's.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::CenterCrop>(p.i("height"), p.i("width"));
        }));
    c.add(transformNode(
        preprocessing("grayscale", "Greyscale",
                      "RGB to one grey channel (0.299 R + 0.587 G + 0.114 B, as OpenCV).", {}),
        [](const NodeParams &) { return std::make_shared<data::Grayscale>(); }));
}

} // namespace fb::exec::nodes
