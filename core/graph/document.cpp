#include "core/graph/document.h"

#include <algorithm>

#include "core/base/safe_text.h"

namespace fb::graph {

namespace {

// Ids and port names may come from a file as they are (control or bidirectional characters
// included), so messages that quote them are made safe to print; the node field keeps them.
Error problem(std::string node, const std::string &message)
{
    return nodeError(std::move(node), safeText(message));
}

} // namespace

std::string Edge::str() const
{
    return safeText(fromNode + "." + fromPort + " -> " + toNode + "." + toPort);
}

bool Edge::sameEnds(const Edge &o) const
{
    return fromNode == o.fromNode && fromPort == o.fromPort && toNode == o.toNode &&
           toPort == o.toPort;
}

bool isValidNodeId(std::string_view id)
{
    if (id.empty()) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

PipelineDocument::PipelineDocument(const PipelineDocument &other)
    : m_nodes(other.m_nodes)
    , m_edges(other.m_edges)
    , m_extra(other.m_extra)
{}

PipelineDocument &PipelineDocument::operator=(const PipelineDocument &other)
{
    if (this != &other) {
        m_nodes = other.m_nodes;
        m_edges = other.m_edges;
        m_extra = other.m_extra;
    }
    return *this;
}

const Node *PipelineDocument::node(std::string_view id) const
{
    for (const Node &n : m_nodes)
        if (n.id == id) return &n;
    return nullptr;
}

Node *PipelineDocument::node(std::string_view id)
{
    for (Node &n : m_nodes)
        if (n.id == id) return &n;
    return nullptr;
}

Status PipelineDocument::addNode(Node n, size_t index)
{
    if (!isValidNodeId(n.id)) {
        return problem(n.id, "invalid node id '" + n.id +
                                 "': use letters, digits, '_' and '-' only, at least one");
    }
    if (node(n.id)) return problem(n.id, "a node with id '" + n.id + "' already exists");
    if (!n.params.is_object()) return problem(n.id, "parameters must be a JSON object");
    if (!n.extra.is_object()) n.extra = nlohmann::json::object();
    std::string id = n.id;
    m_nodes.insert(m_nodes.begin() + std::min(index, m_nodes.size()), std::move(n));
    notify({Change::NodeAdded, id, {}});
    return {};
}

Status PipelineDocument::removeNode(std::string_view id)
{
    auto it =
        std::find_if(m_nodes.begin(), m_nodes.end(), [&](const Node &n) { return n.id == id; });
    if (it == m_nodes.end()) return problem(std::string(id), "no node '" + std::string(id) + "'");

    // Edges first, so an observer never sees an edge whose node is gone.
    std::vector<Edge> removed;
    auto touches = [&](const Edge &e) { return e.fromNode == id || e.toNode == id; };
    std::copy_if(m_edges.begin(), m_edges.end(), std::back_inserter(removed), touches);
    m_edges.erase(std::remove_if(m_edges.begin(), m_edges.end(), touches), m_edges.end());
    for (const Edge &e : removed)
        notify({Change::EdgeRemoved, {}, e});

    std::string removedId = it->id;
    m_nodes.erase(it);
    notify({Change::NodeRemoved, removedId, {}});
    return {};
}

Status PipelineDocument::addEdge(Edge e, size_t index)
{
    if (!node(e.fromNode))
        return problem(e.fromNode + "." + e.fromPort,
                       "edge " + e.str() + ": there is no node '" + e.fromNode + "'");
    if (!node(e.toNode))
        return problem(e.toNode + "." + e.toPort,
                       "edge " + e.str() + ": there is no node '" + e.toNode + "'");
    if (e.fromPort.empty() || e.toPort.empty())
        return problem(e.fromPort.empty() ? e.fromNode : e.toNode,
                       "edge " + e.str() + ": a port name is empty");
    for (const Edge &x : m_edges)
        if (x.sameEnds(e))
            return problem(e.toNode + "." + e.toPort, "edge " + e.str() + " already exists");
    if (!e.extra.is_object()) e.extra = nlohmann::json::object();
    m_edges.insert(m_edges.begin() + std::min(index, m_edges.size()), e);
    notify({Change::EdgeAdded, {}, std::move(e)});
    return {};
}

Status PipelineDocument::removeEdge(const Edge &e)
{
    auto it =
        std::find_if(m_edges.begin(), m_edges.end(), [&](const Edge &x) { return x.sameEnds(e); });
    if (it == m_edges.end()) return problem(e.toNode, "no edge " + e.str());
    Edge removed = std::move(*it);
    m_edges.erase(it);
    notify({Change::EdgeRemoved, {}, std::move(removed)});
    return {};
}

Status PipelineDocument::renameNode(std::string_view id, const std::string &newId)
{
    Node *n = node(id);
    if (!n) return problem(std::string(id), "no node '" + std::string(id) + "'");
    if (newId == id) return {};
    if (!isValidNodeId(newId))
        return problem(std::string(id),
                       "invalid node id '" + newId + "': use letters, digits, '_' and '-' only");
    if (node(newId)) return problem(std::string(id), "a node with id '" + newId + "' exists");
    const std::string oldId(id);
    std::vector<size_t> touched;
    for (size_t i = 0; i < m_edges.size(); ++i)
        if (m_edges[i].fromNode == oldId || m_edges[i].toNode == oldId) touched.push_back(i);
    for (size_t i : touched)
        notify({Change::EdgeRemoved, {}, m_edges[i]});
    // Changed in place, so the node and its edges keep their places in the file; observers hear
    // of the old id's removal when it is gone already.
    n->id = newId;
    notify({Change::NodeRemoved, oldId, {}});
    for (size_t i : touched) {
        if (m_edges[i].fromNode == oldId) m_edges[i].fromNode = newId;
        if (m_edges[i].toNode == oldId) m_edges[i].toNode = newId;
    }
    notify({Change::NodeAdded, newId, {}});
    for (size_t i : touched)
        notify({Change::EdgeAdded, {}, m_edges[i]});
    return {};
}

Status PipelineDocument::setParam(std::string_view nodeId, std::string_view name,
                                  nlohmann::json value)
{
    Node *n = node(nodeId);
    if (!n) return problem(std::string(nodeId), "no node '" + std::string(nodeId) + "'");
    if (name.empty()) return problem(n->id, "empty parameter name");
    if (value.is_null())
        n->params.erase(std::string(name));
    else
        n->params[std::string(name)] = std::move(value);
    notify({Change::NodeChanged, n->id, {}});
    return {};
}

void PipelineDocument::setPosition(std::string_view id, double x, double y)
{
    Node *n = node(id);
    if (!n) return;
    n->x = x;
    n->y = y;
    notify({Change::NodeChanged, n->id, {}});
}

void PipelineDocument::restoreNode(Node n, size_t index)
{
    std::string id = n.id;
    m_nodes.insert(m_nodes.begin() + std::min(index, m_nodes.size()), std::move(n));
    notify({Change::NodeAdded, id, {}});
}

void PipelineDocument::restoreEdge(Edge e, size_t index)
{
    m_edges.insert(m_edges.begin() + std::min(index, m_edges.size()), e);
    notify({Change::EdgeAdded, {}, std::move(e)});
}

int PipelineDocument::nodeIndex(std::string_view id) const
{
    for (size_t i = 0; i < m_nodes.size(); ++i)
        if (m_nodes[i].id == id) return int(i);
    return -1;
}

int PipelineDocument::edgeIndex(const Edge &e) const
{
    for (size_t i = 0; i < m_edges.size(); ++i)
        if (m_edges[i].sameEnds(e)) return int(i);
    return -1;
}

nlohmann::json PipelineDocument::param(std::string_view nodeId, std::string_view name,
                                       const NodeTypeRegistry &registry) const
{
    const Node *n = node(nodeId);
    if (!n) return nullptr;
    auto it = n->params.find(std::string(name));
    if (it != n->params.end()) return *it;
    const NodeTypeSpec *spec = registry.find(n->type);
    if (!spec) return nullptr;
    const ParamSpec *p = spec->param(name);
    return p ? p->defaultValue : nlohmann::json();
}

std::vector<const Edge *> PipelineDocument::edgesInto(std::string_view nodeId) const
{
    std::vector<const Edge *> out;
    for (const Edge &e : m_edges)
        if (e.toNode == nodeId) out.push_back(&e);
    return out;
}

std::vector<const Edge *> PipelineDocument::edgesFrom(std::string_view nodeId) const
{
    std::vector<const Edge *> out;
    for (const Edge &e : m_edges)
        if (e.fromNode == nodeId) out.push_back(&e);
    return out;
}

const Edge *PipelineDocument::edgeInto(std::string_view nodeId, std::string_view port) const
{
    for (const Edge &e : m_edges)
        if (e.toNode == nodeId && e.toPort == port) return &e;
    return nullptr;
}

std::string PipelineDocument::uniqueId(std::string_view base) const
{
    std::string stem;
    for (char c : base)
        stem += isValidNodeId(std::string_view(&c, 1)) ? c : '_';
    if (stem.empty()) stem = "node";
    if (!node(stem)) return stem;
    // "conv1" taken: number the copies "conv2", "conv3", ... rather than "conv12".
    const size_t digits = stem.find_last_not_of("0123456789");
    if (digits != std::string::npos && digits + 1 < stem.size()) stem.resize(digits + 1);
    for (int i = 2;; ++i) {
        std::string id = stem + std::to_string(i);
        if (!node(id)) return id;
    }
}

int PipelineDocument::subscribe(Observer observer)
{
    int handle = m_nextHandle++;
    m_observers.emplace_back(handle, std::move(observer));
    return handle;
}

void PipelineDocument::unsubscribe(int handle)
{
    std::erase_if(m_observers, [&](const auto &o) { return o.first == handle; });
}

void PipelineDocument::notify(const Change &change)
{
    // A copy, so an observer may subscribe or unsubscribe while being told; one unsubscribed
    // meanwhile is not told any more.
    auto observers = m_observers;
    for (const auto &[handle, observer] : observers) {
        bool still = std::any_of(m_observers.begin(), m_observers.end(),
                                 [h = handle](const auto &o) { return o.first == h; });
        if (still && observer) observer(change);
    }
}

} // namespace fb::graph
