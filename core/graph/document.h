#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.h"
#include "core/graph/node_types.h"

namespace fb::graph {

struct Node {
    std::string id;
    std::string type;
    nlohmann::json params = nlohmann::json::object();
    double x = 0, y = 0;
    nlohmann::json extra = nlohmann::json::object(); // unknown fields, kept on save
    // The file's order of this node's fields and of its parameters, kept on save, so that a
    // changed value is a one-line diff (params itself is a sorted map).
    std::vector<std::string> keyOrder = {}, paramOrder = {};
};

struct Edge {
    std::string fromNode, fromPort, toNode, toPort;
    nlohmann::json extra = nlohmann::json::object(); // unknown fields, kept on save

    // "NODE.PORT -> NODE.PORT", for messages: safe to print (safeText), so not for lookups.
    std::string str() const;
    // Same endpoints; extra fields do not make an edge different.
    bool sameEnds(const Edge &other) const;
};

// True for non-empty ids made of [A-Za-z0-9_-]; a '.' would break "NODE.PORT".
bool isValidNodeId(std::string_view id);

// The pipeline: pure data with ids and change notifications. The canvas observes it and keeps
// only ids; undo commands change the document, never the scene.
//
// The editing functions refuse what would corrupt the data (duplicate or malformed ids, edges to
// missing nodes). Everything semantic (types, ports, ranges, cycles) is validate()'s business, so
// a document loaded from a file may hold problems that validate() then reports all at once.
class PipelineDocument {
public:
    struct Change {
        enum Kind { NodeAdded, NodeRemoved, NodeChanged, EdgeAdded, EdgeRemoved } kind;
        std::string nodeId; // for node changes
        Edge edge;          // for edge changes
    };
    using Observer = std::function<void(const Change &)>;

    PipelineDocument() = default;
    // Copies carry the data only: observers watch one particular document.
    PipelineDocument(const PipelineDocument &other);
    PipelineDocument &operator=(const PipelineDocument &other);
    PipelineDocument(PipelineDocument &&) = default;
    PipelineDocument &operator=(PipelineDocument &&) = default;

    const std::vector<Node> &nodes() const { return m_nodes; }
    const std::vector<Edge> &edges() const { return m_edges; }
    // The first node with this id, or nullptr. Changing a node through the pointer sends no
    // notification; editors use setParam()/setPosition().
    const Node *node(std::string_view id) const;
    Node *node(std::string_view id);

    // Appends the node, or inserts it before position `index` (clamped to the end): undo puts a
    // removed node back where it was, so that undoing everything gives back the same file.
    Status addNode(Node node, size_t index = size_t(-1));
    // Also removes its edges (EdgeRemoved for each, then NodeRemoved).
    Status removeNode(std::string_view id);
    // Both nodes must exist and the edge must not be there already; port checks are validate()'s.
    Status addEdge(Edge edge, size_t index = size_t(-1));
    // Removes the edge with the same ends.
    Status removeEdge(const Edge &edge);
    // Put a node or an edge back exactly as it was, at its place (clamped to the end), with no
    // checks: undo restores what a loaded file held even where addNode/addEdge would refuse it
    // (a malformed or duplicate id, an edge to a missing node), so undo gives back that file.
    void restoreNode(Node node, size_t index);
    void restoreEdge(Edge edge, size_t index);

    // Gives a node a new id, in place, and rewires its edges to it. Observers see its edges
    // removed, the node removed (old id), added (new id), then its edges added again.
    Status renameNode(std::string_view id, const std::string &newId);

    // Sets a parameter; a null value removes it, so the type's default applies again.
    Status setParam(std::string_view nodeId, std::string_view name, nlohmann::json value);
    void setPosition(std::string_view id, double x, double y);

    // Where the node or edge is in file order, or -1.
    int nodeIndex(std::string_view id) const;
    int edgeIndex(const Edge &edge) const;

    // The parameter's value, or the type's default when absent (json null when unknown).
    nlohmann::json param(std::string_view nodeId, std::string_view name,
                         const NodeTypeRegistry &registry) const;

    std::vector<const Edge *> edgesInto(std::string_view nodeId) const;
    std::vector<const Edge *> edgesFrom(std::string_view nodeId) const;
    // The (first) edge into this input port, or nullptr.
    const Edge *edgeInto(std::string_view nodeId, std::string_view port) const;

    // Unknown top-level fields, kept on save.
    nlohmann::json &extra() { return m_extra; }
    const nlohmann::json &extra() const { return m_extra; }
    // The file's order of the top-level fields ("format", "version", "name", "nodes", ...),
    // kept on save.
    const std::vector<std::string> &keyOrder() const { return m_keyOrder; }

    // An id not used yet: base itself, or base2, base3, ... (a base ending in a number is
    // renumbered: "conv1" gives "conv2" when conv1 is taken).
    std::string uniqueId(std::string_view base) const;

    int subscribe(Observer observer);
    void unsubscribe(int handle);

private:
    friend Result<PipelineDocument> parsePipeline(std::string_view text,
                                                  const std::string &sourceName);
    void notify(const Change &change);

    std::vector<Node> m_nodes;
    std::vector<Edge> m_edges;
    nlohmann::json m_extra = nlohmann::json::object();
    std::vector<std::string> m_keyOrder;
    std::vector<std::pair<int, Observer>> m_observers;
    int m_nextHandle = 1;
};

} // namespace fb::graph
