#include "core/graph/diff.h"

#include <set>

namespace fb::graph {

using nlohmann::json;

namespace {

struct Value {
    json value; // null: not set and no default
    bool isDefault = false;
};

Value paramValue(const Node &node, const std::string &name, const NodeTypeRegistry *registry)
{
    if (auto it = node.params.find(name); it != node.params.end()) return {*it, false};
    if (registry)
        if (const NodeTypeSpec *spec = registry->find(node.type))
            if (const ParamSpec *p = spec->param(name); p && !p->defaultValue.is_null())
                return {p->defaultValue, true};
    return {};
}

std::string text(const Value &v)
{
    return v.value.is_null() ? std::string("(not set)") : jsonText(v.value);
}

std::vector<PipelineDiff::Param> paramChanges(const Node &a, const Node &b,
                                              const NodeTypeRegistry *registry)
{
    std::vector<std::string> names;
    std::set<std::string> seen;
    auto collect = [&](const Node &n) {
        for (auto it = n.params.begin(); it != n.params.end(); ++it)
            if (seen.insert(it.key()).second) names.push_back(it.key());
        if (registry)
            if (const NodeTypeSpec *spec = registry->find(n.type))
                for (const ParamSpec &p : spec->params)
                    if (seen.insert(p.name).second) names.push_back(p.name);
    };
    collect(b);
    collect(a);
    std::vector<PipelineDiff::Param> out;
    for (const std::string &name : names) {
        const Value va = paramValue(a, name, registry), vb = paramValue(b, name, registry);
        // 0.05 and 0.05000000000000000277 are the same value to a person, and to the run.
        bool same = va.value == vb.value;
        if (!same && va.value.is_number() && vb.value.is_number())
            same = va.value.get<double>() == vb.value.get<double>();
        if (same) continue;
        out.push_back({name, text(va), text(vb), va.isDefault, vb.isDefault});
    }
    return out;
}

} // namespace

PipelineDiff diffPipelines(const PipelineDocument &before, const PipelineDocument &after,
                           const NodeTypeRegistry *registry)
{
    PipelineDiff d;
    for (const Node &b : after.nodes()) {
        const Node *a = before.node(b.id);
        if (!a) {
            d.nodes.push_back({PipelineDiff::NodeChange::Kind::Added, b.id, b.type, {}, {}});
            continue;
        }
        PipelineDiff::NodeChange change{PipelineDiff::NodeChange::Kind::Changed, b.id, b.type,
                                        a->type == b.type ? std::string() : a->type,
                                        paramChanges(*a, b, registry)};
        if (!change.typeBefore.empty() || !change.params.empty()) d.nodes.push_back(change);
    }
    for (const Node &a : before.nodes())
        if (!after.node(a.id))
            d.nodes.push_back({PipelineDiff::NodeChange::Kind::Removed, a.id, a.type, {}, {}});

    for (const Edge &e : after.edges())
        if (before.edgeIndex(e) < 0) d.edgesAdded.push_back(e.str());
    for (const Edge &e : before.edges())
        if (after.edgeIndex(e) < 0) d.edgesRemoved.push_back(e.str());
    return d;
}

} // namespace fb::graph
