#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fb::graph {

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

    bool hasRange() const;
    // ">= 1", "> 0", "[0, 1]", "[0, 1)", ... ; empty when unbounded.
    std::string rangeText() const;
};

// One node type, described once: the inspector, validation, the palette, the CLI's `nodes`
// listing and the docs are all generated from this.
struct NodeTypeSpec {
    std::string type;     // "conv2d"
    std::string category; // "Model"
    std::string title;    // "Conv 2D"
    std::string help;     // one line
    std::vector<PortSpec> inputs;
    std::vector<PortSpec> outputs;
    std::vector<ParamSpec> params;

    const PortSpec *input(std::string_view name) const;
    const PortSpec *output(std::string_view name) const;
    const ParamSpec *param(std::string_view name) const;
};

class NodeTypeRegistry {
public:
    // Every node type this build knows, in palette order (category by category).
    static const NodeTypeRegistry &builtin();

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

// For `flowbench-cli nodes --json`:
// {"format": "flowbench.node-types", "version": 1, "node_types": [{"type", "category", "title",
//  "help", "inputs": [{"name", "type", "help", "optional"}], "outputs": [...], "params": [{"name",
//  "type", "default", "help", and where they apply "min", "min_exclusive", "max",
//  "max_exclusive", "choices"}]}]}
nlohmann::json nodeTypesJson(const NodeTypeRegistry &registry);

// For `flowbench-cli nodes --markdown`, the node table of README.md: a `| category | node types |`
// table, one row per category in palette order, each type as `type` (its parameter names) and
// what its help says in brief, one type per line of the cell.
std::string nodeTypesMarkdown(const NodeTypeRegistry &registry);

} // namespace fb::graph
