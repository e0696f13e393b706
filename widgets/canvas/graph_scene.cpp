#include "widgets/canvas/graph_scene.h"

#include "core/graph/pipeline_file.h"

#include <algorithm>
#include <cmath>

#include <QApplication>
#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QPainter>
#include <QPalette>
#include <QTimer>

#include "core/graph/validate.h"
#include "widgets/canvas/canvas_items.h"
#include "widgets/canvas/canvas_style.h"
#include "widgets/canvas/wire_router.h"
#include "widgets/editing/commands.h"
#include "widgets/editing/edited_pipeline.h"

namespace fb::widgets {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

} // namespace

GraphScene::GraphScene(EditedPipeline *pipeline, QObject *parent)
    : QGraphicsScene(parent)
    , m_pipeline(pipeline)
{
    // A large fixed area: the view can pan beyond the nodes, and the scroll bars do not jump
    // while a node is dragged to the edge.
    setSceneRect(-5000, -5000, 10000, 10000);
    setItemIndexMethod(QGraphicsScene::NoIndex); // few items that move often
    connect(pipeline, &EditedPipeline::documentReplaced, this, &GraphScene::rebuild);
    connect(pipeline, &EditedPipeline::documentChanged, this, &GraphScene::onChange);
    connect(pipeline, &EditedPipeline::problemsChanged, this, &GraphScene::updateProblems);
    connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::selectedNodesChanged);
    rebuild();
}

GraphScene::~GraphScene()
{
    // Deleting selected items changes the selection: no one may hear of it from a scene that is
    // half gone (its observers may be half gone too).
    blockSignals(true);
    // Items go with the scene; the wires' live labels first (each wire deletes its own, which
    // must happen before the scene deletes items in an order of its choosing), then the lookups,
    // so that no callback finds a dead item.
    clearRunState();
    m_nodes.clear();
    m_edges.clear();
}

NodeItem *GraphScene::nodeItem(const std::string &id) const
{
    auto it = m_nodes.find(id);
    return it == m_nodes.end() ? nullptr : it->second;
}

EdgeItem *GraphScene::edgeItem(const graph::Edge &edge) const
{
    for (EdgeItem *e : m_edges)
        if (e->edge().sameEnds(edge)) return e;
    return nullptr;
}

void GraphScene::rebuild()
{
    m_wireFrom = nullptr;
    m_picked.reset();
    m_wire = nullptr;
    m_note = nullptr;
    m_dragStart.clear();
    clearRunState(); // the wires' labels are deleted by their wires, before clear() runs
    m_nodes.clear();
    m_edges.clear();
    m_placed.clear();
    m_bodiesValid = false;
    clear();
    for (const graph::Node &n : m_pipeline->document().nodes()) {
        auto *item = new NodeItem(this, n.id);
        m_nodes[n.id] = item;
        m_placed[n.id] = item->bodyRect();
        addItem(item);
    }
    for (const graph::Edge &e : m_pipeline->document().edges())
        addEdgeItem(e);
    updateProblems();
}

void GraphScene::onChange(const graph::PipelineDocument::Change &c)
{
    using Change = graph::PipelineDocument::Change;
    switch (c.kind) {
    case Change::NodeAdded: {
        // One item per id: a damaged file may hold a duplicate id, which validation reports.
        if (NodeItem *item = nodeItem(c.nodeId)) {
            item->refresh();
            break;
        }
        auto *item = new NodeItem(this, c.nodeId);
        m_nodes[c.nodeId] = item;
        addItem(item);
        nodeItemMoved(c.nodeId); // the wires it now stands on go around it
        break;
    }
    case Change::NodeRemoved:
        if (NodeItem *item = nodeItem(c.nodeId)) {
            m_nodes.erase(c.nodeId);
            if (m_wireFrom && m_wireFrom->nodeId() == c.nodeId) {
                delete m_wire;
                m_wire = nullptr;
                m_wireFrom = nullptr;
                m_picked.reset();
                clearHighlights();
            }
            m_dragStart.erase(c.nodeId);
            const QRectF was = item->bodyRect();
            m_placed.erase(c.nodeId);
            m_bodiesValid = false;
            delete item;
            // A duplicate id (a damaged file) may still stand in the document: it keeps an item.
            if (m_pipeline->document().node(c.nodeId)) {
                auto *again = new NodeItem(this, c.nodeId);
                m_nodes[c.nodeId] = again;
                m_placed[c.nodeId] = again->bodyRect();
                addItem(again);
            }
            rerouteAround({was}); // the wires that went around it take the short way again
        }
        break;
    case Change::NodeChanged:
        if (NodeItem *item = nodeItem(c.nodeId)) {
            // A move has routed its wires already (itemChange): only new ports or a new size
            // need it again. A drag's every step ends here once more, through its undo command.
            const bool rebuilt = item->refresh();
            const auto placed = m_placed.find(c.nodeId);
            if (rebuilt || placed == m_placed.end() || placed->second != item->bodyRect())
                nodeItemMoved(c.nodeId);
        }
        break;
    case Change::EdgeAdded:
        addEdgeItem(c.edge);
        break;
    case Change::EdgeRemoved:
        removeEdgeItem(c.edge);
        break;
    }
}

void GraphScene::addEdgeItem(const graph::Edge &edge)
{
    auto *item = new EdgeItem(this, edge);
    m_edges.push_back(item);
    addItem(item);
}

void GraphScene::removeEdgeItem(const graph::Edge &edge)
{
    auto it = std::find_if(m_edges.begin(), m_edges.end(),
                           [&](EdgeItem *e) { return e->edge().sameEnds(edge); });
    if (it == m_edges.end()) return;
    EdgeItem *item = *it;
    m_edges.erase(it);
    delete item;
}

void GraphScene::nodeItemMoved(const std::string &id)
{
    m_bodiesValid = false;
    std::vector<QRectF> areas;
    if (auto it = m_placed.find(id); it != m_placed.end()) areas.push_back(it->second);
    // Called from NodeItem's constructor too, before the scene holds it.
    if (NodeItem *item = nodeItem(id)) {
        areas.push_back(item->bodyRect());
        m_placed[id] = item->bodyRect();
    }
    for (EdgeItem *e : m_edges)
        if (e->edge().fromNode == id || e->edge().toNode == id) e->updatePath();
    rerouteAround(areas, id);
}

void GraphScene::rerouteAround(const std::vector<QRectF> &areas, const std::string &except)
{
    if (areas.empty()) return;
    // The router's margin and some: a wire that went around a body runs this close to it.
    constexpr double reach = 24;
    for (EdgeItem *e : m_edges) {
        if (!except.empty() && (e->edge().fromNode == except || e->edge().toNode == except))
            continue;
        // Widened: a straight wire's rect has no height, and Qt finds such a rect meets nothing.
        const QRectF span = e->path().controlPointRect().adjusted(-1, -1, 1, 1);
        for (const QRectF &a : areas)
            if (span.intersects(a.adjusted(-reach, -reach, reach, reach))) {
                e->updatePath();
                break;
            }
    }
}

const std::vector<QRectF> &GraphScene::nodeBodies() const
{
    if (!m_bodiesValid) {
        m_bodies.clear();
        for (const auto &[id, body] : m_placed)
            m_bodies.push_back(body);
        m_bodiesValid = true;
    }
    return m_bodies;
}

void GraphScene::updateProblems()
{
    std::map<std::string, std::vector<std::string>> byNode;
    for (const Error &e : m_pipeline->problems()) {
        const std::string node = e.nodeId();
        if (!node.empty()) byNode[node].push_back(e.message);
    }
    for (auto &[id, item] : m_nodes) {
        auto it = byNode.find(id);
        item->setProblems(it == byNode.end() ? std::vector<std::string>{} : it->second);
    }
}

std::vector<std::string> GraphScene::selectedNodeIds() const
{
    // In document order, so that copy/paste and commands are deterministic.
    std::vector<std::string> ids;
    for (const graph::Node &n : m_pipeline->document().nodes())
        if (NodeItem *item = nodeItem(n.id); item && item->isSelected()) ids.push_back(n.id);
    return ids;
}

std::vector<graph::Edge> GraphScene::selectedEdges() const
{
    std::vector<graph::Edge> edges;
    for (EdgeItem *e : m_edges)
        if (e->isSelected()) edges.push_back(e->edge());
    return edges;
}

void GraphScene::selectNodes(const std::vector<std::string> &ids)
{
    QSignalBlocker block(this); // one selectedNodesChanged, not one per item
    clearSelection();
    for (const std::string &id : ids)
        if (NodeItem *item = nodeItem(id)) item->setSelected(true);
    block.unblock();
    emit selectedNodesChanged();
}

QPointF GraphScene::freeSpotNear(QPointF pos) const
{
    return pos + freeOffsetFor(QRectF(pos, QSizeF(NodeItem::kWidth, 80)), QPointF());
}

QPointF GraphScene::freeOffsetFor(const QRectF &group, QPointF preferred) const
{
    auto freeAt = [&](QPointF offset) {
        const QRectF r = group.translated(offset);
        for (const auto &[id, item] : m_nodes)
            if (item->sceneBoundingRect().adjusted(-10, -10, 10, 10).intersects(r)) return false;
        return true;
    };
    // Rings of growing distance, a grid step apart: near where the person looks, not far off.
    constexpr double step = 40;
    for (int ring = 0; ring < 40; ++ring)
        for (int dy = 0; dy <= ring; ++dy)
            for (int dx : {ring - dy, -(ring - dy)}) {
                const QPointF p = preferred + QPointF(dx * step, dy * step);
                if (freeAt(p)) return p;
            }
    return preferred;
}

std::string GraphScene::addNode(const std::string &type, QPointF scenePos)
{
    const std::string id = m_pipeline->addNode(type, scenePos);
    if (!id.empty()) selectNodes({id});
    return id;
}

void GraphScene::deleteSelection()
{
    m_pipeline->remove(selectedNodeIds(), selectedEdges());
}

std::string GraphScene::copySelection() const
{
    const auto ids = selectedNodeIds();
    return ids.empty() ? std::string() : m_pipeline->fragment(ids);
}

QPointF GraphScene::freePasteOffset(const std::string &text, QPointF preferred) const
{
    // The pasted nodes land together in free space near `preferred`, never on top of others.
    // Read as paste() reads it; text that is not a fragment pastes nothing, and goes nowhere.
    auto part = graph::parsePipeline(text, "clipboard");
    if (!part) return preferred;
    QRectF group;
    for (const graph::Node &n : part.value().nodes())
        group |= QRectF(QPointF(n.x, n.y), QSizeF(NodeItem::kWidth, 80));
    return group.isNull() ? preferred : freeOffsetFor(group, preferred);
}

bool GraphScene::pasteFragment(const std::string &text, QPointF offset)
{
    offset = freePasteOffset(text, offset);
    auto ids = m_pipeline->paste(text, offset);
    if (!ids) {
        emit message(tr("Nothing to paste: %1").arg(q(ids.error().message)));
        return false;
    }
    selectNodes(ids.value());
    return true;
}

void GraphScene::duplicateSelection()
{
    const std::string text = copySelection();
    if (text.empty()) return;
    auto ids = m_pipeline->paste(text, freePasteOffset(text, QPointF(40, 40)), tr("Duplicate"));
    if (ids) selectNodes(ids.value());
}

bool GraphScene::connectPorts(PortItem *a, PortItem *b)
{
    if (!a || !b) return false;
    if (a->isInput()) std::swap(a, b); // a wire may be dragged either way
    graph::Edge edge{a->nodeId(), a->portName(), b->nodeId(), b->portName(), {}};
    Status ok = m_pipeline->addEdge(edge);
    if (!ok) {
        const QString reason = q(ok.error().message);
        showNote(tr("Not connected: %1").arg(reason), b->scenePos());
        emit connectionRefused(reason);
        return false;
    }
    return true;
}

PortItem *GraphScene::portAt(QPointF scenePos) const
{
    for (QGraphicsItem *item : items(scenePos))
        if (item->type() == PortItem::Type) return static_cast<PortItem *>(item);
    return nullptr;
}

void GraphScene::highlightTargets(PortItem *from)
{
    // Which ports would take this wire: the same check that adding it runs.
    for (auto &[id, node] : m_nodes) {
        for (PortItem *p : node->ports()) {
            if (p == from || p->isInput() == from->isInput()) {
                p->setHighlight(p == from ? PortItem::Highlight::Accepts
                                          : PortItem::Highlight::Refuses);
                continue;
            }
            const PortItem *out = from->isInput() ? p : from;
            const PortItem *in = from->isInput() ? from : p;
            graph::Edge e{out->nodeId(), out->portName(), in->nodeId(), in->portName(), {}};
            p->setHighlight(graph::checkEdge(m_pipeline->document(), e, m_pipeline->registry())
                                ? PortItem::Highlight::Accepts
                                : PortItem::Highlight::Refuses);
        }
    }
}

void GraphScene::clearHighlights()
{
    for (auto &[id, node] : m_nodes)
        for (PortItem *p : node->ports())
            p->setHighlight(PortItem::Highlight::None);
}

void GraphScene::showNote(const QString &text, QPointF at)
{
    delete m_note;
    // A boxed note above everything, on the side of the point that has room in the view, so
    // it reads over nodes and wires; it goes away by itself.
    const QPalette pal = QApplication::palette();
    auto *box = new QGraphicsRectItem;
    auto *label = new QGraphicsSimpleTextItem(text, box);
    QFont f = label->font();
    f.setPixelSize(13);
    f.setBold(true);
    label->setFont(f);
    label->setBrush(pal.color(QPalette::Text));
    const QRectF r = label->boundingRect().adjusted(-8, -5, 8, 5);
    box->setRect(r);
    box->setBrush(pal.color(QPalette::ToolTipBase));
    box->setPen(QPen(QColor(0xd6, 0x30, 0x31), 2));
    QPointF pos = at + QPointF(14, 10);
    if (!views().isEmpty()) {
        const QRectF visible =
            views().first()->mapToScene(views().first()->viewport()->rect()).boundingRect();
        if (pos.x() + r.right() > visible.right())
            pos.rx() = std::max(visible.left() + 8, at.x() - 14 - r.right());
        if (pos.y() + r.bottom() > visible.bottom()) pos.ry() = at.y() - 10 - r.bottom();
    }
    box->setPos(pos);
    box->setZValue(10);
    m_note = box;
    addItem(m_note);
    emit message(text);
    QGraphicsItem *note = m_note;
    QTimer::singleShot(5000, this, [this, note] {
        if (m_note == note) {
            delete m_note;
            m_note = nullptr;
        }
    });
}

void GraphScene::mousePressEvent(QGraphicsSceneMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        if (PortItem *port = portAt(event->scenePos())) {
            // A wired input: pick its wire up at that end; it follows from its output.
            m_picked.reset();
            m_wirePress = event->scenePos();
            if (port->isInput()) {
                if (const graph::Edge *e =
                        m_pipeline->document().edgeInto(port->nodeId(), port->portName())) {
                    NodeItem *source = nodeItem(e->fromNode);
                    if (PortItem *out = source ? source->port(e->fromPort, false) : nullptr) {
                        m_picked = *e;
                        if (EdgeItem *item = edgeItem(*e)) item->setVisible(false);
                        port = out;
                    }
                }
            }
            m_wireFrom = port;
            m_wire = new QGraphicsPathItem;
            QPen pen(portColor(port->portType()), 2, Qt::DashLine, Qt::RoundCap);
            m_wire->setPen(pen);
            m_wire->setZValue(5);
            m_wire->setPath(curvePath(port->anchor(), event->scenePos()));
            addItem(m_wire);
            highlightTargets(port);
            event->accept();
            return;
        }
    }
    QGraphicsScene::mousePressEvent(event);
    if (event->button() == Qt::LeftButton) {
        m_dragStart.clear();
        for (const std::string &id : selectedNodeIds())
            m_dragStart[id] = nodeItem(id)->pos();
    }
}

void GraphScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event)
{
    // The second press of a double click arrives here, not in mousePressEvent, and a drag may
    // follow it: record where the nodes were, or that drag would bypass the document.
    QGraphicsScene::mouseDoubleClickEvent(event);
    if (event->button() == Qt::LeftButton && !m_wire) {
        m_dragStart.clear();
        for (const std::string &id : selectedNodeIds())
            m_dragStart[id] = nodeItem(id)->pos();
    }
}

void GraphScene::mouseMoveEvent(QGraphicsSceneMouseEvent *event)
{
    if (m_wire) {
        const QPointF a = m_wireFrom->anchor(), b = event->scenePos();
        m_wire->setPath(m_wireFrom->isInput() ? curvePath(b, a) : curvePath(a, b));
        return;
    }
    QGraphicsScene::mouseMoveEvent(event);
    if (!(event->buttons() & Qt::LeftButton) || m_dragStart.empty()) return;
    // The document follows the drag live; the moves of one drag merge into one undo step.
    std::map<std::string, MoveNodesCommand::Move> moves;
    for (const auto &[id, start] : m_dragStart) {
        NodeItem *item = nodeItem(id);
        if (!item) continue;
        const graph::Node *n = m_pipeline->document().node(id);
        if (n && item->pos() != QPointF(n->x, n->y)) moves[id] = {start, item->pos()};
    }
    if (moves.empty()) return;
    // Every node of the drag in each command, so that consecutive ones merge.
    for (const auto &[id, start] : m_dragStart)
        if (!moves.count(id))
            if (NodeItem *item = nodeItem(id)) moves[id] = {start, item->pos()};
    m_pipeline->undoStack()->push(
        new MoveNodesCommand(m_pipeline->document(), std::move(moves), m_gesture));
}

void GraphScene::mouseReleaseEvent(QGraphicsSceneMouseEvent *event)
{
    if (m_wire) {
        PortItem *from = m_wireFrom;
        delete m_wire;
        m_wire = nullptr;
        m_wireFrom = nullptr;
        clearHighlights();
        PortItem *to = portAt(event->scenePos());
        if (m_picked) {
            const graph::Edge picked = *m_picked;
            m_picked.reset();
            if (EdgeItem *item = edgeItem(picked)) item->setVisible(true);
            const bool moved = QLineF(m_wirePress, event->scenePos()).length() > 12;
            if (to && to->isInput() &&
                (to->nodeId() != picked.toNode || to->portName() != picked.toPort)) {
                const graph::Edge target{picked.fromNode, picked.fromPort, to->nodeId(),
                                         to->portName(), picked.extra};
                Status ok = m_pipeline->moveEdge(picked, target);
                if (!ok) {
                    const QString reason = q(ok.error().message);
                    showNote(tr("Not moved: %1").arg(reason), to->scenePos());
                    emit connectionRefused(reason);
                }
            } else if (!to && moved) {
                m_pipeline->remove({}, {picked}); // dropped on the empty canvas: disconnected
            }
        } else if (to && to != from) {
            connectPorts(from, to);
        }
        event->accept();
        return;
    }
    QGraphicsScene::mouseReleaseEvent(event);
    m_dragStart.clear();
    ++m_gesture;
}

void GraphScene::drawBackground(QPainter *p, const QRectF &rect)
{
    const QPalette pal = QApplication::palette();
    p->fillRect(rect, pal.color(QPalette::Window));
    // A grid of minor lines every 20 units and major lines every 100: it helps lining up nodes.
    const double minor = 20, major = 100;
    QColor minorColor = pal.color(QPalette::Mid);
    minorColor.setAlpha(40);
    QColor majorColor = pal.color(QPalette::Mid);
    majorColor.setAlpha(90);
    const double scale = views().isEmpty() ? 1.0 : views().first()->transform().m11();
    auto lines = [&](double step, const QColor &color) {
        if (step * scale < 6) return; // too dense to help when zoomed far out
        QVector<QLineF> l;
        for (double x = std::floor(rect.left() / step) * step; x < rect.right(); x += step)
            l.append(QLineF(x, rect.top(), x, rect.bottom()));
        for (double y = std::floor(rect.top() / step) * step; y < rect.bottom(); y += step)
            l.append(QLineF(rect.left(), y, rect.right(), y));
        p->setPen(QPen(color, 0));
        p->drawLines(l);
    };
    lines(minor, minorColor);
    lines(major, majorColor);
}

void GraphScene::setEdgeLive(const std::string &from, const std::string &to, double rate,
                             double fill, bool cached)
{
    for (EdgeItem *e : m_edges)
        if (e->edge().fromNode == from && e->edge().toNode == to)
            e->setLiveStats(rate, fill, cached);
}

void GraphScene::setNodeProgress(const std::string &id, double progress, const QString &text)
{
    if (NodeItem *item = nodeItem(id)) item->setProgress(progress, text);
}

void GraphScene::setBottleneck(const std::string &id, const QString &cause)
{
    if (id != m_bottleneck)
        if (NodeItem *old = nodeItem(m_bottleneck)) old->setBottleneck(false);
    m_bottleneck = id;
    if (NodeItem *item = nodeItem(id)) item->setBottleneck(true, cause);
}

void GraphScene::setDiffMarks(const std::map<std::string, std::pair<DiffMark, QString>> &marks)
{
    for (auto &[id, item] : m_nodes) {
        const auto it = marks.find(id);
        if (it == marks.end())
            item->setDiffMark(DiffMark::None);
        else
            item->setDiffMark(it->second.first, it->second.second);
    }
}

void GraphScene::clearDataFlow()
{
    setBottleneck({});
    for (EdgeItem *e : m_edges)
        e->clearRunState();
}

void GraphScene::clearRunState()
{
    m_bottleneck.clear();
    for (auto &[id, item] : m_nodes)
        item->clearRunState();
    for (EdgeItem *e : m_edges)
        e->clearRunState();
}

} // namespace fb::widgets
