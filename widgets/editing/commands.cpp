#include "widgets/editing/commands.h"

#include <algorithm>

#include <QDateTime>

namespace fb::widgets {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

} // namespace

AddItemsCommand::AddItemsCommand(graph::PipelineDocument &doc, std::vector<graph::Node> nodes,
                                 std::vector<graph::Edge> edges, const QString &text)
    : m_doc(doc)
    , m_nodes(std::move(nodes))
    , m_edges(std::move(edges))
{
    setText(text);
}

void AddItemsCommand::redo()
{
    // Nodes before edges, so that every edge finds its ends. The caller checked the edges; a
    // refusal here would be a programmer error, and the document stays whole either way.
    for (const graph::Node &n : m_nodes) {
        Status s = m_doc.addNode(n);
        Q_ASSERT(s.ok());
    }
    for (const graph::Edge &e : m_edges) {
        Status s = m_doc.addEdge(e);
        Q_ASSERT(s.ok());
    }
}

void AddItemsCommand::undo()
{
    for (auto it = m_edges.rbegin(); it != m_edges.rend(); ++it)
        (void)m_doc.removeEdge(*it);
    for (auto it = m_nodes.rbegin(); it != m_nodes.rend(); ++it)
        (void)m_doc.removeNode(it->id);
}

RemoveItemsCommand::RemoveItemsCommand(graph::PipelineDocument &doc,
                                       const std::vector<std::string> &nodeIds,
                                       const std::vector<graph::Edge> &edges, const QString &text)
    : m_doc(doc)
    , m_nodeIds(nodeIds)
    , m_requestedEdges(edges)
{
    setText(text);
}

void RemoveItemsCommand::redo()
{
    m_removedNodes.clear();
    m_removedEdges.clear();
    // Every edge that goes away, the requested ones and those of removed nodes, with its place.
    for (size_t i = 0; i < m_doc.edges().size(); ++i) {
        const graph::Edge &e = m_doc.edges()[i];
        bool touches =
            std::find(m_nodeIds.begin(), m_nodeIds.end(), e.fromNode) != m_nodeIds.end() ||
            std::find(m_nodeIds.begin(), m_nodeIds.end(), e.toNode) != m_nodeIds.end();
        bool requested = std::any_of(m_requestedEdges.begin(), m_requestedEdges.end(),
                                     [&](const graph::Edge &r) { return r.sameEnds(e); });
        if (touches || requested) m_removedEdges.emplace_back(i, e);
    }
    for (size_t i = 0; i < m_doc.nodes().size(); ++i) {
        const graph::Node &n = m_doc.nodes()[i];
        if (std::find(m_nodeIds.begin(), m_nodeIds.end(), n.id) != m_nodeIds.end())
            m_removedNodes.emplace_back(i, n);
    }
    // Highest index first, so that the recorded places stay right while removing.
    for (auto it = m_removedEdges.rbegin(); it != m_removedEdges.rend(); ++it)
        (void)m_doc.removeEdge(it->second);
    for (auto it = m_removedNodes.rbegin(); it != m_removedNodes.rend(); ++it)
        (void)m_doc.removeNode(it->second.id);
}

void RemoveItemsCommand::undo()
{
    // Lowest index first: each insertion lands where it was, as the ones before it are back.
    for (const auto &[index, node] : m_removedNodes)
        m_doc.restoreNode(node, index);
    for (const auto &[index, edge] : m_removedEdges)
        m_doc.restoreEdge(edge, index);
}

MoveNodesCommand::MoveNodesCommand(graph::PipelineDocument &doc, std::map<std::string, Move> moves,
                                   int gesture)
    : m_doc(doc)
    , m_moves(std::move(moves))
    , m_gesture(gesture)
{
    setText(m_moves.size() == 1 ? QObject::tr("Move %1").arg(q(m_moves.begin()->first))
                                : QObject::tr("Move %n nodes", nullptr, int(m_moves.size())));
}

void MoveNodesCommand::redo()
{
    for (const auto &[id, m] : m_moves)
        m_doc.setPosition(id, m.to.x(), m.to.y());
}

void MoveNodesCommand::undo()
{
    for (const auto &[id, m] : m_moves)
        m_doc.setPosition(id, m.from.x(), m.from.y());
}

bool MoveNodesCommand::mergeWith(const QUndoCommand *other)
{
    auto *o = static_cast<const MoveNodesCommand *>(other);
    if (m_gesture == 0 || o->m_gesture != m_gesture || o->m_moves.size() != m_moves.size())
        return false;
    for (const auto &[id, m] : o->m_moves)
        if (!m_moves.count(id)) return false;
    for (const auto &[id, m] : o->m_moves)
        m_moves[id].to = m.to;
    // A drag that ends where it began leaves no step behind.
    setObsolete(std::all_of(m_moves.begin(), m_moves.end(),
                            [](const auto &kv) { return kv.second.from == kv.second.to; }));
    return true;
}

SetParamCommand::SetParamCommand(graph::PipelineDocument &doc, std::string nodeId, std::string name,
                                 nlohmann::json value)
    : m_doc(doc)
    , m_nodeId(std::move(nodeId))
    , m_name(std::move(name))
    , m_new(std::move(value))
{
    if (const graph::Node *n = m_doc.node(m_nodeId)) {
        auto it = n->params.find(m_name);
        if (it != n->params.end()) m_old = *it;
    }
    m_lastChangeMs = QDateTime::currentMSecsSinceEpoch();
    setText(QObject::tr("Set %1.%2").arg(q(m_nodeId), q(m_name)));
}

void SetParamCommand::redo()
{
    (void)m_doc.setParam(m_nodeId, m_name, m_new);
}

void SetParamCommand::undo()
{
    (void)m_doc.setParam(m_nodeId, m_name, m_old);
}

bool SetParamCommand::mergeWith(const QUndoCommand *other)
{
    auto *o = static_cast<const SetParamCommand *>(other);
    constexpr qint64 kMergeWindowMs = 1500; // one burst of clicks or keystrokes
    if (o->m_nodeId != m_nodeId || o->m_name != m_name ||
        o->m_lastChangeMs - m_lastChangeMs > kMergeWindowMs)
        return false;
    m_new = o->m_new;
    m_lastChangeMs = o->m_lastChangeMs;
    setObsolete(m_new == m_old);
    return true;
}

RenameNodeCommand::RenameNodeCommand(graph::PipelineDocument &doc, std::string from, std::string to)
    : m_doc(doc)
    , m_from(std::move(from))
    , m_to(std::move(to))
{
    setText(QObject::tr("Rename %1 to %2").arg(q(m_from), q(m_to)));
}

void RenameNodeCommand::redo()
{
    (void)m_doc.renameNode(m_from, m_to);
}

void RenameNodeCommand::undo()
{
    (void)m_doc.renameNode(m_to, m_from);
}

} // namespace fb::widgets
