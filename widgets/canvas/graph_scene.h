#pragma once

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <QGraphicsScene>
#include <QPointF>
#include <QString>

#include "core/graph/document.h"
#include "widgets/canvas/diff_mark.h"

class QGraphicsPathItem;
class QGraphicsSimpleTextItem;

namespace fb::widgets {

class EditedPipeline;
class EdgeItem;
class NodeItem;
class PortItem;

// The canvas's scene: one item per node and edge of the edited pipeline, kept in step with the
// document through its change notifications (items keep only ids). Edits a person makes here
// (dragging a wire, moving nodes, deleting) go through EditedPipeline's undo stack.
class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(EditedPipeline *pipeline, QObject *parent = nullptr);
    ~GraphScene() override;

    EditedPipeline &pipeline() { return *m_pipeline; }
    NodeItem *nodeItem(const std::string &id) const;
    EdgeItem *edgeItem(const graph::Edge &edge) const;
    int nodeItemCount() const { return int(m_nodes.size()); }
    int edgeItemCount() const { return int(m_edges.size()); }

    std::vector<std::string> selectedNodeIds() const;
    std::vector<graph::Edge> selectedEdges() const;
    void selectNodes(const std::vector<std::string> &ids);

    // --- editing through the undo stack ---------------------------------------------------
    // The nearest place at or below-right of `pos` where a new node's body covers no node.
    QPointF freeSpotNear(QPointF pos) const;
    // The offset nearest `preferred` (rings a grid step apart) that puts a group of nodes
    // covering `group` where no node is.
    QPointF freeOffsetFor(const QRectF &group, QPointF preferred) const;
    // The same for a copied fragment (pipeline JSON): where pasting it covers no node.
    QPointF freePasteOffset(const std::string &text, QPointF preferred) const;
    // Adds a node of the type at a scene position and selects it; returns its id.
    std::string addNode(const std::string &type, QPointF scenePos);
    void deleteSelection();
    // The selected nodes as a pipeline fragment (text), for the clipboard; empty if none.
    std::string copySelection() const;
    // Pastes a fragment; the pasted nodes become the selection. False (and a refusal message)
    // if the text is not a fragment.
    bool pasteFragment(const std::string &text, QPointF offset);
    void duplicateSelection();

    // A wire from one port to another, as a person's drag would make it: checked, then added or
    // refused with the reason (connectionRefused, and a note on the canvas).
    bool connectPorts(PortItem *from, PortItem *to);

    // --- live run state --------------------------------------------------------------------
    // The wire from node `from` to node `to` (the data-flow event names stages by node).
    // cached: the wire is skipped this epoch, its data comes from the cache.
    void setEdgeLive(const std::string &from, const std::string &to, double itemsPerSecond,
                     double queueFill, bool cached = false);
    void setNodeProgress(const std::string &id, double progress, const QString &text = {});
    // Marks one node as the bottleneck (empty: none).
    // The node that limits throughput, and why where known ("decoding", "waiting on disk").
    void setBottleneck(const std::string &id, const QString &cause = {});
    // Marks the nodes that differ from another run's pipeline (widgets/runs/run_diff_view.h);
    // every other node unmarked.
    void setDiffMarks(const std::map<std::string, std::pair<DiffMark, QString>> &marks);
    void clearRunState();
    // The data flow only: the wires' rates and queues and the bottleneck mark, not the nodes'
    // progress (a paused or finished run's wires carry nothing).
    void clearDataFlow();

    // Called by NodeItem when it moved: its wires follow, and the wires that went around where
    // it was or pass where it is now are routed again.
    void nodeItemMoved(const std::string &id);
    // Every node's body, in scene coordinates (what wires go around).
    const std::vector<QRectF> &nodeBodies() const;

signals:
    void selectedNodesChanged();
    // A refused wire (incompatible types, input taken, a cycle...): the reason, for people.
    void connectionRefused(const QString &reason);
    void message(const QString &text);

protected:
    void mousePressEvent(QGraphicsSceneMouseEvent *event) override;
    void mouseMoveEvent(QGraphicsSceneMouseEvent *event) override;
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event) override;
    void mouseReleaseEvent(QGraphicsSceneMouseEvent *event) override;
    void drawBackground(QPainter *painter, const QRectF &rect) override;

private:
    void rebuild();
    void onChange(const graph::PipelineDocument::Change &change);
    void updateProblems();
    void addEdgeItem(const graph::Edge &edge);
    void removeEdgeItem(const graph::Edge &edge);
    // Routes again the wires that pass near any of the areas (bodies that came, went or moved),
    // but those of node `except` (routed already).
    void rerouteAround(const std::vector<QRectF> &areas, const std::string &except = {});
    PortItem *portAt(QPointF scenePos) const;
    void highlightTargets(PortItem *from);
    void clearHighlights();
    void showNote(const QString &text, QPointF at);

    EditedPipeline *m_pipeline;
    std::map<std::string, NodeItem *> m_nodes;
    std::vector<EdgeItem *> m_edges;
    // Where each node's body is, as its wires were last routed (kept by nodeItemMoved), and the
    // same as a list for the router, made again after a change.
    std::map<std::string, QRectF> m_placed;
    mutable std::vector<QRectF> m_bodies;
    mutable bool m_bodiesValid = false;

    // Dragging a wire: from a port, or a wire picked up at its input (m_picked) to move it
    // elsewhere or, dropped on the empty canvas, to disconnect it.
    PortItem *m_wireFrom = nullptr;
    QGraphicsPathItem *m_wire = nullptr;
    std::optional<graph::Edge> m_picked;
    QPointF m_wirePress;
    // Dragging nodes: where they were when the drag began; one gesture, one undo step.
    std::map<std::string, QPointF> m_dragStart;
    int m_gesture = 1;
    QGraphicsItem *m_note = nullptr; // the latest refusal, shown for a few seconds
    std::string m_bottleneck;
};

} // namespace fb::widgets
