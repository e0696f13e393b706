#pragma once

// A node type as one unit: its description (graph::NodeTypeSpec: ports, parameters, help) and
// what it does in a run, registered together in one call, the way QtNodes registers a model with
// its creator. The built-in types live in core/exec/nodes/, one file per family (the way ggml
// keeps one file per op family); adding a type is one new file there plus one line in
// core/exec/nodes/catalog.cpp. Nothing outside that folder chooses behaviour by comparing type
// names: the rest of the engine asks the node's NodeType (test_node_types checks both).

#include "core/base/result.h"
#include "core/graph/document.h"
#include "core/graph/node_types.h"
#include "core/tensor/shape.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fb::data {
struct ImageDataset;
class Transform;
} // namespace fb::data

namespace fb::nn {
class Layer;
class Loss;
class Optimizer;
} // namespace fb::nn

namespace fb::exec {

struct DataSpec;
struct OptimizerSpec;
struct TrainingJob;

using graph::NodeRole; // each role has the hooks it needs (NodeType below)

// A node's parameters, every one of its type's with the default filled in where the document has
// none, read in the type the engine uses them in (validation has checked each against its range
// in that type).
class NodeParams {
public:
    NodeParams(std::string node, nlohmann::json values);
    // Every parameter of the node's type, from the document.
    static NodeParams of(const graph::PipelineDocument &doc, const graph::NodeTypeSpec &spec,
                         const std::string &node, const graph::NodeTypeRegistry &registry);

    const std::string &node() const { return m_node; }
    const nlohmann::json &values() const { return m_values; }
    const nlohmann::json &get(const char *name) const;
    int64_t i(const char *name) const { return get(name).get<int64_t>(); }
    float f(const char *name) const { return get(name).get<float>(); }
    double d(const char *name) const { return get(name).get<double>(); }
    bool b(const char *name) const { return get(name).get<bool>(); }
    std::string s(const char *name) const { return get(name).get<std::string>(); }
    std::string path(const char *name) const; // "~/" expanded, as graph::expandHome

private:
    std::string m_node;
    nlohmann::json m_values;
};

struct NodeType {
    graph::NodeTypeSpec spec; // spec.role says which hooks it has

    // Source: reads its parameters into the data chain's description (paths, options, what its
    // samples are), and loads the data set so described.
    std::function<Status(const NodeParams &, DataSpec &)> readSource;
    std::function<Result<data::ImageDataset>(const DataSpec &)> loadSource;
    // Source: the shape of one sample ([channels, height, width]) without loading the data, from
    // the parameters or at most a file's header: the model summary infers every shape from it.
    std::function<Result<Shape>(const DataSpec &)> sampleShape;

    // Transform: the data-flow stage (the chain's source is described in the DataSpec: the
    // audio features take its sample rate).
    std::function<std::shared_ptr<const data::Transform>(const NodeParams &, const DataSpec &)>
        makeTransform;
    // Transform, optional: for a stage that maps pixels p to (p - mean) / std, that pair, so a
    // picture of its output can be shown as the source's pixels again.
    std::function<std::pair<float, float>(const NodeParams &)> pixelNormalization;

    // Layer: the layer, made from the node's parameters; its inputs are the type's input ports,
    // in order.
    std::function<Result<std::unique_ptr<nn::Layer>>(const NodeParams &)> makeLayer;

    // Loss: made from the node's parameters.
    std::function<std::unique_ptr<nn::Loss>(const NodeParams &)> makeLoss;

    // Optimizer: reads its parameters (with the learning-rate schedule), then makes it.
    std::function<void(const NodeParams &, OptimizerSpec &)> readOptimizer;
    std::function<std::unique_ptr<nn::Optimizer>(const OptimizerSpec &)> makeOptimizer;

    // Train: reads how the run goes (epochs, batch size, seed, device, ...).
    std::function<void(const NodeParams &, TrainingJob &)> readTrain;

    // The hooks a type of this role must have and lacks ("makeLayer", ...); empty when whole.
    std::vector<std::string> missingHooks() const;
};

class NodeCatalog {
public:
    // Adds a type (its description and behaviour together), or replaces the one of that name.
    void add(NodeType type);
    const NodeType *find(std::string_view type) const;
    const std::vector<NodeType> &all() const { return m_types; }
    // The descriptions alone, in the same order: what the graph layer validates against.
    const graph::NodeTypeRegistry &registry() const { return m_registry; }

private:
    std::vector<NodeType> m_types;
    graph::NodeTypeRegistry m_registry;
};

// Every node type this build knows, in palette order (category by category).
const NodeCatalog &nodeCatalog();
// Their descriptions: the registry for graph::validate, the editor, the inspector and the CLI.
const graph::NodeTypeRegistry &nodeTypes();

} // namespace fb::exec
