#pragma once

#include <string>
#include <vector>

#include <QGraphicsItem>
#include <QGraphicsPathItem>

#include "core/graph/document.h"
#include "core/graph/node_types.h"
#include "widgets/canvas/diff_mark.h"

namespace fb::widgets {

class GraphScene;
class EdgeLabelItem;
class ProgressItem;

// Items keep only ids (DESIGN.md): what they show is read from the document through the scene.

// One port of a node: a marker shaped and coloured by its type, with a tooltip.
class PortItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    enum class Highlight { None, Accepts, Refuses };

    PortItem(QGraphicsItem *parent, std::string nodeId, const graph::PortSpec &spec, bool input);
    int type() const override { return Type; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

    const std::string &nodeId() const { return m_nodeId; }
    const std::string &portName() const { return m_name; }
    graph::PortType portType() const { return m_type; }
    bool isInput() const { return m_input; }
    // Where wires attach, in scene coordinates.
    QPointF anchor() const { return scenePos(); }
    void setHighlight(Highlight h);

protected:
    void hoverEnterEvent(QGraphicsSceneHoverEvent *event) override;
    void hoverLeaveEvent(QGraphicsSceneHoverEvent *event) override;

private:
    std::string m_nodeId, m_name;
    graph::PortType m_type;
    bool m_input;
    bool m_hovered = false;
    Highlight m_highlight = Highlight::None;
};

// A node: title (its id), type, ports, a badge with its validation problems, and while a run
// goes on, its progress and whether it is the bottleneck.
class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };
    NodeItem(GraphScene *scene, std::string nodeId);
    int type() const override { return Type; }
    QRectF boundingRect() const override;
    // The body only: the room above it for the bottleneck label must not catch clicks.
    QPainterPath shape() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

    const std::string &nodeId() const { return m_nodeId; }
    // The body in scene coordinates: what wires go around.
    QRectF bodyRect() const { return QRectF(scenePos(), QSizeF(kWidth, m_height)); }
    // Reads the node again (position, type, parameters) from the document; true when its ports
    // were made anew (another type).
    bool refresh();
    void setProblems(const std::vector<std::string> &messages);
    const std::vector<std::string> &problems() const { return m_problems; }
    PortItem *port(const std::string &name, bool input) const;
    const std::vector<PortItem *> &ports() const { return m_ports; }

    // Live state during a run. progress < 0 hides the bar.
    void setProgress(double progress, const QString &text = {});
    // `cause`, where known, is shown beside the mark: "bottleneck: decoding".
    void setBottleneck(bool bottleneck, const QString &cause = {});
    void clearRunState();
    double progress() const { return m_progress; }
    bool isBottleneck() const { return m_bottleneck; }

    // How this node differs from the same node of another run's pipeline (the Runs panel's
    // Diff): an outline in the kind's colour and the change written above it.
    void setDiffMark(DiffMark mark, const QString &text = {});
    DiffMark diffMark() const { return m_diffMark; }
    QString diffText() const { return m_diffText; }

    static constexpr double kWidth = 176;

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant &value) override;

private:
    void rebuildPorts();

    GraphScene *m_scene;
    std::string m_nodeId;
    std::string m_typeName;
    QString m_title, m_subtitle;
    QString m_tip; // what the node is (its tooltip when no Diff marks it)
    QColor m_categoryColor;
    bool m_knownType = true;
    double m_height = 60;
    std::vector<PortItem *> m_ports;
    std::vector<std::string> m_problems;
    QGraphicsItem *m_badge = nullptr;
    double m_progress = -1;
    QString m_progressText;
    QGraphicsItem *m_progressItem = nullptr; // a ProgressItem child while there is progress
    bool m_bottleneck = false;
    QString m_bottleneckCause;
    DiffMark m_diffMark = DiffMark::None;
    QString m_diffText;
};

// A wire: a curve from an output port to an input port, coloured by its type; while a run goes
// on, by how full its queue is, with its live items/s.
class EdgeItem : public QGraphicsPathItem {
public:
    enum { Type = UserType + 3 };
    EdgeItem(GraphScene *scene, graph::Edge edge);
    ~EdgeItem() override;
    int type() const override { return Type; }
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;
    QRectF boundingRect() const override;
    QPainterPath shape() const override;

    const graph::Edge &edge() const { return m_edge; }
    // Follows the ports after a node moved.
    void updatePath();
    void setLiveStats(double itemsPerSecond, double queueFill, bool cached = false);
    void clearRunState();
    bool hasLiveStats() const { return m_live; }
    QString liveText() const;
    // Where the live rate's label covers the scene (null without one).
    QRectF labelRect() const;
    double queueFill() const { return m_fill; }

private:
    GraphScene *m_scene;
    graph::Edge m_edge;
    QColor m_color = Qt::gray;
    bool m_live = false;
    double m_rate = 0, m_fill = 0;
    bool m_cached = false;
    void placeLabel();
    QGraphicsItem *m_label = nullptr; // the live rate, a scene item of its own (above nodes)
};

} // namespace fb::widgets
