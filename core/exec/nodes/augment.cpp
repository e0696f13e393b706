// Image augmentation: random stages, drawn anew every epoch from the run seed, the node, the
// epoch and the sample.

#include "core/data/transforms.h"
#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"

namespace fb::exec::nodes {

void addImageAugmentation(NodeCatalog &c)
{
    c.add(transformNode(
        augmentation("color_jitter", "Brightness/contrast jitter",
                     "Scales brightness and contrast by random factors and clamps to [0,1] "
                     "(before normalize).",
                     {floatParam("brightness", 0.2, closed(0, 1),
                                 "Brightness factor uniform in [1 - brightness, 1 + brightness]."),
                      floatParam("contrast", 0.2, closed(0, 1),
                                 "Contrast factor uniform in [1 - contrast, 1 + contrast].")}),
        [](const NodeParams &p) {
            return std::make_shared<data::ColorJitter>(p.f("brightness"), p.f("contrast"));
        }));
    c.add(transformNode(
        augmentation(
            "random_hflip", "Random flip",
            "Mirrors each sample left to right with probability p (OpenCV). Random: "
            "runs every epoch, with draws seeded by the run seed, the node, the epoch "
            "and the sample.",
            {floatParam("p", 0.5, closed(0, 1), "Probability that a sample is mirrored.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::RandomHorizontalFlip>(p.f("p"));
        }));
    {
        NodeType t = transformNode(
            augmentation(
                "random_affine", "Random affine",
                "Rotates, scales and shifts each sample by random amounts (OpenCV warpAffine, "
                "bilinear); uncovered pixels take the fill value.",
                {floatParam("degrees", 10, closed(0, 180),
                            "Rotation: uniform in [-degrees, degrees]."),
                 floatParam("translate", 0.1, halfOpen(0, 1),
                            "Shift: up to this fraction of the width and of the height."),
                 atMost(floatParam("scale_min", 0.9, closed(0.01, 100), "Smallest zoom factor."),
                        "scale_max"),
                 floatParam("scale_max", 1.1, closed(0.01, 100),
                            "Largest zoom factor (at least scale_min)."),
                 floatParam("fill", 0, closed(-kMaxPixelValue, kMaxPixelValue),
                            "Value of pixels the image no longer covers.")}),
            [](const NodeParams &p) {
                return std::make_shared<data::RandomAffine>(p.f("degrees"), p.f("translate"),
                                                            p.f("scale_min"), p.f("scale_max"),
                                                            p.f("fill"));
            });
        c.add(std::move(t));
    }
    c.add(transformNode(
        augmentation(
            "random_crop", "Random crop",
            "Pads each side with the fill value, then cuts a window at a random place (OpenCV).",
            {intParam("height", 0, closed(0, kMaxImageSide),
                      "Height of the window; 0 = the input's height."),
             intParam("width", 0, closed(0, kMaxImageSide),
                      "Width of the window; 0 = the input's width."),
             intParam("padding", 4, closed(0, 1024), "Pixels added on every side before cropping."),
             floatParam("fill", 0, closed(-kMaxPixelValue, kMaxPixelValue),
                        "Value of the padding pixels.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::RandomCrop>(p.i("height"), p.i("width"), p.i("padding"),
                                                      p.f("fill"));
        }));
}

} // namespace fb::exec::nodes
