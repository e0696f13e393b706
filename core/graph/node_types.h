#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.h"

namespace fb::graph {

// What a node is for in a pipeline. The engine gives each role its hooks (exec::NodeType); the
// window finds the Train node by it.
enum class NodeRole {
    Source,    // makes samples from files
    Transform, // samples in, samples out (preprocessing, augmentation, audio features)
    Input,     // where the model starts
    Layer,     // a part of the model
    Loss,
    Optimizer,
    Train,
    Evaluate,
};

// "source", "transform", "input", "layer", "loss", "optimizer", "train", "evaluate".
std::string_view nodeRoleName(NodeRole role);
bool nodeRoleFromName(std::string_view name, NodeRole &role);

// What flows along a wire. Few and visible: the canvas gives each its own colour and shape.
enum class PortType { Samples, Tensor, Loss, Optimizer, Model, Metrics };

// "samples", "tensor", "loss", "optimizer", "model", "metrics".
std::string_view portTypeName(PortType type);

enum class ParamType { Int, Float, Bool, String, Enum, Path };

// "int", "float", "bool", "string", "enum", "path".
std::string_view paramTypeName(ParamType type);

// A path parameter's value as the engine reads it: "~/x" is the user's home folder, as shells
// and file dialogs say it (the examples' data made on this machine lives under
// ~/.local/share/flowbench). The window compares paths with it too.
std::string expandHome(std::string path);

struct PortSpec {
    std::string name;
    PortType type = PortType::Tensor;
    std::string help;
    bool optional = false;
};

struct ParamSpec {
    std::string name;
    ParamType type = ParamType::Int;
    nlohmann::json defaultValue;
    double min = -std::numeric_limits<double>::infinity();
    double max = std::numeric_limits<double>::infinity();
    bool minExclusive = false;
    bool maxExclusive = false;
    std::vector<std::string> choices; // for Enum
    std::string help;
    // How a run goes, not what it computes (epochs, device, checkpointing): changing it continues
    // the same run, so the pipeline's hash leaves it out.
    bool runOnly = false;
    // Int or Float: the value may not be above that of this other parameter of the node
    // (random_affine's scale_min and scale_max).
    std::string atMost;
    // String: a comma-separated list of numbers, each of them in [min, max] (per-channel means).
    bool numberList = false;

    bool hasRange() const;
    // ">= 1", "> 0", "[0, 1]", "[0, 1)", ... ; empty when unbounded.
    std::string rangeText() const;
};

// One node type, described once: the inspector, validation, the palette, the CLI's `nodes`
// listing and the docs are all generated from this. Pure data: the built-in types, each
// described together with what it does in a run, are registered in core/exec/nodes
// (exec::nodeTypes()), and the window reads them back from JSON (nodeTypesFromJson).
struct NodeTypeSpec {
    std::string type;     // "conv2d"
    std::string category; // "Model"
    std::string title;    // "Conv 2D"
    std::string help;     // one line
    NodeRole role = NodeRole::Layer;
    std::vector<PortSpec> inputs;
    std::vector<PortSpec> outputs;
    std::vector<ParamSpec> params;

    const PortSpec *input(std::string_view name) const;
    const PortSpec *output(std::string_view name) const;
    const ParamSpec *param(std::string_view name) const;
};

class NodeTypeRegistry {
public:
    // Adds a type, or replaces the one with the same name (keeping its place).
    void add(NodeTypeSpec spec);
    const NodeTypeSpec *find(std::string_view type) const;
    const std::vector<NodeTypeSpec> &all() const { return m_types; }

private:
    std::vector<NodeTypeSpec> m_types;
};

// A JSON value as text for messages: compact, invalid UTF-8 replaced rather than thrown on, and
// cut to about maxLength characters so a stray array cannot flood a one-line error.
std::string jsonText(const nlohmann::json &value, size_t maxLength = 80);

// Human text for `flowbench-cli nodes`: one block per type (blank line between), grouped by
// category.
std::string describeNodeTypes(const NodeTypeRegistry &registry);

// For `flowbench-cli nodes --json`, and resources/node_types.json, from which the window reads
// the node types (it does not link the engine, which registers them: core/exec/nodes):
// {"format": "flowbench.node-types", "version": 2, "node_types": [{"type", "category", "title",
//  "help", "role", "inputs": [{"name", "type", "help", "optional"}], "outputs": [...],
//  "params": [{"name", "type", "default", "help", and where they apply "min", "min_exclusive",
//  "max", "max_exclusive", "choices", "run_only", "at_most", "number_list"}]}]}
// Version 2 added role, run_only, at_most and number_list.
nlohmann::json nodeTypesJson(const NodeTypeRegistry &registry);
// The registry back from that JSON; an error says what is wrong with it.
Result<NodeTypeRegistry> nodeTypesFromJson(const nlohmann::json &j);

// For `flowbench-cli nodes --markdown`, the node table of README.md: a `| category | node types |`
// table, one row per category in palette order, each type as `type` (its parameter names) and
// what its help says in brief, one type per line of the cell.
std::string nodeTypesMarkdown(const NodeTypeRegistry &registry);

} // namespace fb::graph
