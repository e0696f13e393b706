#include "core/exec/node_type.h"

#include "core/base/check.h"

namespace fb::exec {

NodeParams::NodeParams(std::string node, nlohmann::json values)
    : m_node(std::move(node))
    , m_values(std::move(values))
{}

NodeParams NodeParams::of(const graph::PipelineDocument &doc, const graph::NodeTypeSpec &spec,
                          const std::string &node, const graph::NodeTypeRegistry &registry)
{
    nlohmann::json values = nlohmann::json::object();
    for (const graph::ParamSpec &p : spec.params)
        values[p.name] = doc.param(node, p.name, registry);
    return {node, std::move(values)};
}

const nlohmann::json &NodeParams::get(const char *name) const
{
    // A type's hooks read only the parameters it declares: a missing one is a programming error.
    FB_ASSERT(m_values.contains(name), "a node type read a parameter it does not declare");
    return m_values[name];
}

std::string NodeParams::path(const char *name) const
{
    return graph::expandHome(s(name));
}

std::vector<std::string> NodeType::missingHooks() const
{
    std::vector<std::string> missing;
    auto need = [&](bool present, const char *name) {
        if (!present) missing.emplace_back(name);
    };
    switch (spec.role) {
    case NodeRole::Source:
        need(bool(readSource), "readSource");
        need(bool(loadSource), "loadSource");
        need(bool(sampleShape), "sampleShape");
        break;
    case NodeRole::Transform:
        need(bool(makeTransform), "makeTransform");
        break;
    case NodeRole::Layer:
        need(bool(makeLayer), "makeLayer");
        break;
    case NodeRole::Loss:
        need(bool(makeLoss), "makeLoss");
        break;
    case NodeRole::Optimizer:
        need(bool(readOptimizer), "readOptimizer");
        need(bool(makeOptimizer), "makeOptimizer");
        break;
    case NodeRole::Train:
        need(bool(readTrain), "readTrain");
        break;
    case NodeRole::Input:
    case NodeRole::Evaluate:
        break;
    }
    return missing;
}

void NodeCatalog::add(NodeType type)
{
    m_registry.add(type.spec);
    for (NodeType &t : m_types)
        if (t.spec.type == type.spec.type) {
            t = std::move(type);
            return;
        }
    m_types.push_back(std::move(type));
}

const NodeType *NodeCatalog::find(std::string_view type) const
{
    for (const NodeType &t : m_types)
        if (t.spec.type == type) return &t;
    return nullptr;
}

const graph::NodeTypeRegistry &nodeTypes()
{
    return nodeCatalog().registry();
}

} // namespace fb::exec
