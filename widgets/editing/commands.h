#pragma once

#include <map>
#include <string>
#include <vector>

#include <QPointF>
#include <QUndoCommand>

#include "core/graph/document.h"

namespace fb::widgets {

// Undo commands change the pipeline document, never the scene (DESIGN.md): the canvas observes
// the document and follows. Each command keeps what it needs to put the document back exactly as
// it was, file order included, so that undoing every edit gives back the same JSON.

// Adds nodes and edges (a new node from the palette, a wire, a paste, a duplicate).
class AddItemsCommand : public QUndoCommand {
public:
    AddItemsCommand(graph::PipelineDocument &doc, std::vector<graph::Node> nodes,
                    std::vector<graph::Edge> edges, const QString &text);
    void redo() override;
    void undo() override;

private:
    graph::PipelineDocument &m_doc;
    std::vector<graph::Node> m_nodes;
    std::vector<graph::Edge> m_edges;
};

// Removes nodes (with every edge that touches them) and edges.
class RemoveItemsCommand : public QUndoCommand {
public:
    RemoveItemsCommand(graph::PipelineDocument &doc, const std::vector<std::string> &nodeIds,
                       const std::vector<graph::Edge> &edges, const QString &text);
    void redo() override;
    void undo() override;

private:
    graph::PipelineDocument &m_doc;
    std::vector<std::string> m_nodeIds;
    std::vector<graph::Edge> m_requestedEdges;
    // Filled by redo(): what was removed and where it was, in ascending file order.
    std::vector<std::pair<size_t, graph::Node>> m_removedNodes;
    std::vector<std::pair<size_t, graph::Edge>> m_removedEdges;
};

// Moves nodes. The canvas moves the document live while a drag goes on, one command per mouse
// move; those of one drag (same gesture number) merge, so a drag is one undo step, not dozens.
class MoveNodesCommand : public QUndoCommand {
public:
    struct Move {
        QPointF from, to;
    };
    // gesture: the drag this move belongs to; 0 for a move that merges with nothing.
    MoveNodesCommand(graph::PipelineDocument &doc, std::map<std::string, Move> moves,
                     int gesture = 0);
    void redo() override;
    void undo() override;
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand *other) override;

private:
    graph::PipelineDocument &m_doc;
    std::map<std::string, Move> m_moves;
    int m_gesture = 0;
};

// Sets one parameter (a null value removes it, so the type's default applies). Changes of the
// same parameter of the same node within a moment of each other (clicks on a spin box's arrows,
// typing) merge into one step; a change that ends where it began goes away from the stack.
class SetParamCommand : public QUndoCommand {
public:
    SetParamCommand(graph::PipelineDocument &doc, std::string nodeId, std::string name,
                    nlohmann::json value);
    void redo() override;
    void undo() override;
    int id() const override { return 2; }
    bool mergeWith(const QUndoCommand *other) override;

private:
    graph::PipelineDocument &m_doc;
    std::string m_nodeId, m_name;
    nlohmann::json m_old, m_new; // null: absent
    qint64 m_lastChangeMs = 0;   // when the latest merged change came
};

// Gives a node a new id; its wires follow (PipelineDocument::renameNode).
class RenameNodeCommand : public QUndoCommand {
public:
    RenameNodeCommand(graph::PipelineDocument &doc, std::string from, std::string to);
    void redo() override;
    void undo() override;

private:
    graph::PipelineDocument &m_doc;
    std::string m_from, m_to;
};

} // namespace fb::widgets
