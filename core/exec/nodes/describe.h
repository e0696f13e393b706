#pragma once

// Building blocks for describing the built-in node types (core/exec/nodes): parameter ranges,
// parameters, ports, and the shapes of spec that whole families share.

#include "core/data/transforms.h"
#include "core/exec/job.h"
#include "core/exec/node_type.h"
#include "core/nn/layer.h"
#include "core/graph/node_types.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fb::exec::nodes {

using graph::NodeRole;
using graph::NodeTypeSpec;
using graph::ParamSpec;
using graph::ParamType;
using graph::PortSpec;
using graph::PortType;

// Allowed range of a numeric parameter. Every number has both ends: a value far outside what
// anyone uses (100000 data workers, a std of 1e-50) is a typo or a damaged file, and stopping it
// here with the range in the message beats an abort deep in the engine. Int parameters stay in
// what an int holds (the engine and the inspector's spin boxes use int), float parameters
// within what a float holds (validation rounds them to float, as the engine uses them).
struct Range {
    double min = 0;
    double max = 0;
    bool minExclusive = false;
    bool maxExclusive = false;
};

Range closed(double lo, double hi);   // [lo, hi]
Range halfOpen(double lo, double hi); // [lo, hi)
Range leftOpen(double lo, double hi); // (lo, hi]

// Shared ends, so that the same kind of number has the same range everywhere.
constexpr double kMaxSeed = 2147483647;    // 2^31 - 1: an int, and a spin box's maximum
constexpr double kMaxSamples = 1000000000; // a data set's sample or file count (limit)
constexpr double kMaxImageSide = 4096;     // pixels, as image sources decode them
constexpr double kMaxFeatures = 65536;     // units or channels of one layer
constexpr double kMaxWindow = 64;          // kernel size, stride, padding of a layer
constexpr double kMaxSteps = 1000000000;   // training steps
constexpr double kMaxEpochs = 1000000;     // training epochs
constexpr double kMaxBatch = 65536;        // samples in one batch
constexpr double kMaxPixelValue = 1000000; // a pixel or feature value (mean, fill)

ParamSpec intParam(std::string name, long long def, Range r, std::string help);
ParamSpec floatParam(std::string name, double def, Range r, std::string help);
ParamSpec boolParam(std::string name, bool def, std::string help);
ParamSpec pathParam(std::string name, std::string def, std::string help);
ParamSpec stringParam(std::string name, std::string def, std::string help);
ParamSpec enumParam(std::string name, std::vector<std::string> choices, std::string def,
                    std::string help);
// A string of comma-separated numbers, each in the range (one value per channel).
ParamSpec numberListParam(std::string name, std::string def, Range r, std::string help);
// The same parameter, whose value may not be above the other parameter's.
ParamSpec atMost(ParamSpec p, std::string other);
// The same parameter, marked as saying how a run goes rather than what it computes.
ParamSpec runOnly(ParamSpec p);

PortSpec port(std::string name, PortType type, std::string help);
PortSpec tensorIn(std::string help = "Activations from the previous layer.");
PortSpec tensorOut(std::string help = "Activations for the next layer.");

// A model layer: one tensor in, one tensor out.
NodeTypeSpec layer(std::string type, std::string title, std::string help,
                   std::vector<ParamSpec> params = {});
// A stage of a data chain: samples in, samples out.
NodeTypeSpec chainStage(std::string category, std::string inputHelp, std::string outputHelp,
                        std::string type, std::string title, std::string help,
                        std::vector<ParamSpec> params);
// A random augmentation of sample streams: samples in, the same number of samples out.
NodeTypeSpec augmentation(std::string type, std::string title, std::string help,
                          std::vector<ParamSpec> params);
// A deterministic stage of a data chain (computed once and cached while no random stage
// precedes it).
NodeTypeSpec preprocessing(std::string type, std::string title, std::string help,
                           std::vector<ParamSpec> params);
// A feature stage of an audio chain: waveforms in, an image of features out.
NodeTypeSpec audioFeature(std::string type, std::string title, std::string help,
                          std::vector<ParamSpec> params);

// A node type of this role, described by name, palette category, title and one line of help;
// ports, parameters and hooks are the caller's to add.
NodeType nodeType(NodeRole role, std::string type, std::string category, std::string title,
                  std::string help);

// A layer made from its node's parameters (its spec from layer() above, or its own ports).
NodeType layerNode(NodeTypeSpec spec,
                   std::function<std::unique_ptr<nn::Layer>(const NodeParams &)> make);
// Batch norm's eps and momentum, as PyTorch's BatchNorm1d and BatchNorm2d take them.
std::vector<ParamSpec> batchNormParams();

// A transform whose stage depends on its parameters alone.
NodeType
transformNode(NodeTypeSpec spec,
              std::function<std::shared_ptr<const data::Transform>(const NodeParams &)> make);

} // namespace fb::exec::nodes
