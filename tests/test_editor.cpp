// The pipeline editor driven as a person drives it: the real canvas, palette and inspector on
// the offscreen platform, with mouse events sent to the view and drops carrying the palette's own
// drag data. What counts is the document: every gesture must land there, through the undo stack.
#include <random>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QMimeData>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUndoStack>
#include "core/exec/node_type.h"

#include <QtTest>

#include "core/graph/pipeline_file.h"
#include "core/graph/validate.h"
#include "widgets/canvas/canvas_items.h"
#include "widgets/canvas/graph_scene.h"
#include "widgets/canvas/graph_view.h"
#include "widgets/canvas/wire_router.h"
#include "widgets/editing/commands.h"
#include "widgets/editing/edited_pipeline.h"
#include "widgets/inspector/inspector.h"
#include "widgets/palette/node_palette.h"

using namespace fb;
using namespace fb::widgets;

namespace {

const QString kCnn =
    QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");

// Where a wire's path enters a node's body, its two ports aside (empty: nowhere). Sampled every
// few pixels along the path as drawn.
QString crossing(const GraphScene &scene, const graph::PipelineDocument &doc, const graph::Edge &e)
{
    const QPainterPath path = scene.edgeItem(e)->path();
    const QPointF from = path.pointAtPercent(0), to = path.pointAtPercent(1);
    const int samples = std::max(50, int(path.length() / 3));
    for (int i = 1; i < samples; ++i) {
        const QPointF p = path.pointAtPercent(double(i) / samples);
        if ((p - from).manhattanLength() < 8 || (p - to).manhattanLength() < 8) continue;
        for (const graph::Node &n : doc.nodes()) {
            const QRectF body = scene.nodeItem(n.id)->bodyRect().adjusted(1, 1, -1, -1);
            if (body.contains(p))
                return QString("%1 crosses %2 at %3,%4")
                    .arg(QString::fromStdString(e.str()), QString::fromStdString(n.id))
                    .arg(p.x())
                    .arg(p.y());
        }
    }
    return {};
}

std::string json(const EditedPipeline &p)
{
    return graph::serializePipeline(p.document());
}

// One canvas: the pipeline, its scene and a shown view.
struct Canvas {
    EditedPipeline pipeline;
    GraphScene scene{&pipeline};
    GraphView view{&scene};
    Canvas()
    {
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
    }
    QPoint toView(QPointF scenePos) const { return view.mapFromScene(scenePos); }
    PortItem *port(const std::string &node, const std::string &name, bool input) const
    {
        NodeItem *item = scene.nodeItem(node);
        return item ? item->port(name, input) : nullptr;
    }
    // One left-button mouse event at a scene position; `held` is the button state after it.
    void mouse(QEvent::Type type, QPointF scenePos, bool held)
    {
        QWidget *vp = view.viewport();
        const QPoint at = toView(scenePos);
        QMouseEvent e(type, at, vp->mapToGlobal(at),
                      type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton,
                      held ? Qt::LeftButton : Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &e);
    }
    // A left-button drag with the button held through the moves, as QTest::mouseMove cannot;
    // doubleClick: the drag starts with the second press of a double click.
    void drag(QPointF fromScene, QPointF toScene, bool doubleClick = false)
    {
        mouse(QEvent::MouseButtonPress, fromScene, true);
        if (doubleClick) {
            mouse(QEvent::MouseButtonRelease, fromScene, false);
            mouse(QEvent::MouseButtonDblClick, fromScene, true);
        }
        for (int i = 1; i <= 8; ++i)
            mouse(QEvent::MouseMove, fromScene + (toScene - fromScene) * i / 8, true);
        mouse(QEvent::MouseButtonRelease, toScene, false);
    }
    void dropMime(QMimeData *mime, QPoint at)
    {
        QWidget *vp = view.viewport();
        QDragEnterEvent enter(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &enter);
        QDragMoveEvent move(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &move);
        QDropEvent drop(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &drop);
    }
};

} // namespace

class TestEditor : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void sceneMirrorsDocument()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        QCOMPARE(c.scene.nodeItemCount(), int(c.pipeline.document().nodes().size()));
        QCOMPARE(c.scene.edgeItemCount(), int(c.pipeline.document().edges().size()));
        for (const graph::Node &n : c.pipeline.document().nodes()) {
            NodeItem *item = c.scene.nodeItem(n.id);
            QVERIFY2(item, n.id.c_str());
            QCOMPARE(item->pos(), QPointF(n.x, n.y));
        }
        QVERIFY(c.pipeline.problems().empty());
        QVERIFY(!c.pipeline.isModified());
    }

    void dragNodeFromPalette()
    {
        Canvas c;
        NodePalette palette(c.pipeline.registry());
        // The palette lists every registered type, grouped by category.
        QCOMPARE(palette.visibleTypes().size(), int(c.pipeline.registry().all().size()));
        palette.setFilter(QStringLiteral("conv"));
        QVERIFY(palette.visibleTypes().contains(QStringLiteral("conv2d")));
        QVERIFY(!palette.visibleTypes().contains(QStringLiteral("sgd")));
        // Search matches words, not the markup of the tooltips ("code", "br"), and Enter picks
        // the exact name before the first match.
        palette.setFilter(QStringLiteral("code"));
        QVERIFY(palette.visibleTypes().size() < 3);
        palette.setFilter(QStringLiteral("input"));
        QCOMPARE(palette.bestMatch(), QStringLiteral("input"));
        palette.setFilter(QStringLiteral("relu"));
        QVERIFY(palette.visibleTypes().contains(QStringLiteral("leaky_relu")));
        QCOMPARE(palette.bestMatch(), QStringLiteral("relu"));
        palette.setFilter({});

        // The palette's own drag data, dropped on the canvas.
        QTreeWidgetItem *entry = palette.itemFor(QStringLiteral("conv2d"));
        QVERIFY(entry);
        const QModelIndex index = palette.tree()->indexFromItem(entry);
        QMimeData *mime = palette.tree()->model()->mimeData({index});
        QVERIFY(mime);
        QVERIFY(mime->hasFormat(GraphView::kNodeTypeMime));
        const QPoint at(600, 400);
        c.dropMime(mime, at);
        delete mime;

        QCOMPARE(c.pipeline.document().nodes().size(), size_t(1));
        const graph::Node &n = c.pipeline.document().nodes().front();
        QCOMPARE(n.type, std::string("conv2d"));
        QCOMPARE(n.id, std::string("conv2d"));
        // The node lands under the cursor and is selected.
        NodeItem *item = c.scene.nodeItem(n.id);
        QVERIFY(item->sceneBoundingRect().contains(c.view.mapToScene(at)));
        QCOMPARE(c.scene.selectedNodeIds(), std::vector<std::string>{"conv2d"});
        // A new node has unconnected inputs: its badge says so.
        QTRY_VERIFY(!item->problems().empty()); // validation runs once the edits settle
        QVERIFY(c.pipeline.isModified());
        c.pipeline.undoStack()->undo();
        QVERIFY(c.pipeline.document().nodes().empty());
        QCOMPARE(c.scene.nodeItemCount(), 0);

        // A new node placed where nodes stand goes to the nearest free place instead.
        QVERIFY(c.pipeline.load(kCnn).ok());
        const QPointF crowded = c.scene.nodeItem("conv1")->pos();
        const QPointF spot = c.scene.freeSpotNear(crowded);
        QVERIFY(spot != crowded);
        QVERIFY(QLineF(spot, crowded).length() < 300);
        const std::string added = c.scene.addNode("relu", spot);
        for (const auto &n : c.pipeline.document().nodes())
            if (n.id != added)
                QVERIFY2(!c.scene.nodeItem(n.id)->sceneBoundingRect().intersects(
                             c.scene.nodeItem(added)->sceneBoundingRect()),
                         n.id.c_str());

        // Double-click (activation) adds one too.
        QSignalSpy activated(&palette, &NodePalette::nodeTypeActivated);
        emit palette.tree()->itemActivated(palette.itemFor(QStringLiteral("relu")), 0);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.front().front().toString(), QStringLiteral("relu"));
    }

    void connectCompatiblePorts()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        // Take one wire away, then draw it again with the mouse.
        const graph::Edge edge{"relu1", "out", "pool1", "in", {}};
        bool present = false;
        for (const auto &e : c.pipeline.document().edges())
            present |= e.sameEnds(edge);
        QVERIFY(present);
        c.pipeline.remove({}, {edge});
        QTRY_VERIFY(!c.pipeline.problems().empty()); // pool1.in is now unconnected
        const size_t before = c.pipeline.document().edges().size();

        PortItem *from = c.port("relu1", "out", false);
        PortItem *to = c.port("pool1", "in", true);
        QVERIFY(from && to);
        c.drag(from->anchor(), to->anchor());
        QCOMPARE(c.pipeline.document().edges().size(), before + 1);
        QVERIFY(c.scene.edgeItem(edge));
        QTRY_VERIFY(c.pipeline.problems().empty());
        // Dragged backwards (input to output) it means the same wire.
        c.pipeline.undoStack()->undo();
        c.drag(to->anchor(), from->anchor());
        QVERIFY(c.scene.edgeItem(edge));
    }

    void refuseIncompatibleConnection()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        const std::string before = json(c.pipeline);
        QSignalSpy refused(&c.scene, &GraphScene::connectionRefused);

        // A tensor output onto a samples input: the types differ.
        PortItem *tensorOut = c.port("fc2", "out", false);
        PortItem *samplesIn = c.port("evaluate", "data", true);
        QVERIFY(tensorOut && samplesIn);
        c.drag(tensorOut->anchor(), samplesIn->anchor());
        QCOMPARE(refused.count(), 1);
        const QString reason = refused.front().front().toString();
        QVERIFY2(reason.contains(QStringLiteral("tensor")) &&
                     reason.contains(QStringLiteral("samples")),
                 qPrintable(reason));
        QCOMPARE(json(c.pipeline), before);
        QVERIFY(!c.pipeline.isModified());

        // An input that is taken already.
        PortItem *normalizeOut = c.port("normalize", "samples", false);
        c.drag(normalizeOut->anchor(), samplesIn->anchor());
        QCOMPARE(refused.count(), 2);
        QCOMPARE(json(c.pipeline), before);

        // A wire that would close a cycle: fc2's output back into conv1.
        c.pipeline.remove({}, {graph::Edge{"input", "out", "conv1", "in", {}}});
        c.drag(c.port("fc2", "out", false)->anchor(), c.port("conv1", "in", true)->anchor());
        QCOMPARE(refused.count(), 3);
        QVERIFY2(refused.back().front().toString().contains(QStringLiteral("cycle")),
                 qPrintable(refused.back().front().toString()));
    }

    void pickUpAWireAtItsInput()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        const std::string before = json(c.pipeline);
        const graph::Edge wire{"relu3", "out", "fc2", "in", {}};
        QVERIFY(c.scene.edgeItem(wire));
        // Add a free tensor input to move the wire to.
        const std::string spare = c.scene.addNode("dropout", QPointF(900, 600));
        PortItem *spareIn = c.port(spare, "in", true);
        QVERIFY(spareIn);

        // Dragged from fc2.in to the spare input: the wire moves, one undo step.
        const int steps = c.pipeline.undoStack()->count();
        c.drag(c.port("fc2", "in", true)->anchor(), spareIn->anchor());
        QVERIFY(!c.scene.edgeItem(wire));
        QVERIFY(c.scene.edgeItem(graph::Edge{"relu3", "out", spare, "in", {}}));
        QVERIFY(c.scene.edgeItem(graph::Edge{"relu3", "out", spare, "in", {}})->isVisible());
        QCOMPARE(c.pipeline.undoStack()->count(), steps + 1);
        c.pipeline.undoStack()->undo();
        QVERIFY(c.scene.edgeItem(wire) && c.scene.edgeItem(wire)->isVisible());

        // Dropped on the empty canvas: disconnected.
        c.drag(c.port("fc2", "in", true)->anchor(), QPointF(900, -300));
        QVERIFY(!c.pipeline.document().edgeInto("fc2", "in"));
        c.pipeline.undoStack()->undo();
        // Dropped back where it was: nothing changes.
        c.drag(c.port("fc2", "in", true)->anchor(), c.port("fc2", "in", true)->anchor());
        QVERIFY(c.scene.edgeItem(wire) && c.scene.edgeItem(wire)->isVisible());
        // Dropped on an input of another type: refused, the wire stays.
        QSignalSpy refused(&c.scene, &GraphScene::connectionRefused);
        c.drag(c.port("fc2", "in", true)->anchor(), c.port("evaluate", "data", true)->anchor());
        QCOMPARE(refused.count(), 1);
        QVERIFY(c.pipeline.document().edgeInto("fc2", "in"));
        c.pipeline.undoStack()->undo(); // the spare node
        QCOMPARE(json(c.pipeline), before);
    }

    void dragMovesNodesAsOneUndoStep()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        NodeItem *item = c.scene.nodeItem("conv1");
        const QPointF start = item->pos();
        const int steps = c.pipeline.undoStack()->count();
        // Grab the node by its title, away from the ports.
        const QPointF grab = start + QPointF(NodeItem::kWidth / 2, 8);
        QVERIFY(c.view.viewport()->rect().contains(c.toView(grab)));
        QCOMPARE(c.view.itemAt(c.toView(grab)), static_cast<QGraphicsItem *>(item));
        c.drag(grab, grab + QPointF(120, 60));
        const graph::Node *n = c.pipeline.document().node("conv1");
        QCOMPARE(QPointF(n->x, n->y), start + QPointF(120, 60));
        QCOMPARE(c.pipeline.undoStack()->count(), steps + 1); // eight moves, one step
        // The wires follow the node.
        EdgeItem *wire = c.scene.edgeItem(graph::Edge{"input", "out", "conv1", "in", {}});
        QVERIFY(wire);
        QCOMPARE(wire->path().currentPosition(), c.port("conv1", "in", true)->anchor());
        c.pipeline.undoStack()->undo();
        QCOMPARE(item->pos(), start);
        // A drag that starts with a double click (its second press goes elsewhere in Qt) lands
        // in the document too.
        {
            c.drag(grab, grab + QPointF(50, 0), /*doubleClick=*/true);
            const graph::Node *moved = c.pipeline.document().node("conv1");
            QCOMPARE(QPointF(moved->x, moved->y), item->pos());
            QCOMPARE(item->pos(), start + QPointF(50, 0));
            c.pipeline.undoStack()->undo();
            QCOMPARE(item->pos(), start);
        }
        // A second drag is a step of its own.
        c.drag(grab, grab + QPointF(10, 10));
        c.drag(grab + QPointF(10, 10), grab + QPointF(30, 30));
        QCOMPARE(c.pipeline.undoStack()->count(), steps + 2);
    }

    // A wire's live rate is written where the wire covers no node: at its middle the CNN's
    // normalize -> train wire sat on pool1, and read as pool1's.
    void wireLabelsStayOffNodes()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        for (const graph::Edge &e : c.pipeline.document().edges())
            c.scene.setEdgeLive(e.fromNode, e.toNode, 1234, 0.5, false);
        int labels = 0;
        for (const graph::Edge &e : c.pipeline.document().edges()) {
            const QRectF label = c.scene.edgeItem(e)->labelRect();
            if (label.isNull()) continue;
            ++labels;
            for (const graph::Node &n : c.pipeline.document().nodes()) {
                const NodeItem *item = c.scene.nodeItem(n.id);
                const QRectF body = item->mapRectToScene(item->shape().boundingRect());
                QVERIFY2(!label.intersects(body),
                         qPrintable(QString::fromStdString(e.str() + " over " + n.id) +
                                    QString(" label %1,%2 %3x%4 body %5,%6 %7x%8")
                                        .arg(label.x())
                                        .arg(label.y())
                                        .arg(label.width())
                                        .arg(label.height())
                                        .arg(body.x())
                                        .arg(body.y())
                                        .arg(body.width())
                                        .arg(body.height())));
            }
        }
        QVERIFY(labels > 0);
    }

    // No wire crosses a node's body: not in any shipped example, not after a node is put down on
    // a wire (it goes around), and the wire takes the short curve again once the node is gone.
    void wiresGoAroundNodes()
    {
        const QStringList examples =
            QDir(FLOWBENCH_SOURCE_DIR "/resources/examples").entryList({"*.json"}, QDir::Files);
        QVERIFY(examples.size() >= 4);
        for (const QString &name : examples) {
            Canvas c;
            QVERIFY(c.pipeline.load(FLOWBENCH_SOURCE_DIR "/resources/examples/" + name).ok());
            // No example puts a node on another (a port inside a body has no way out).
            const auto &nodes = c.pipeline.document().nodes();
            for (size_t i = 0; i < nodes.size(); ++i)
                for (size_t j = i + 1; j < nodes.size(); ++j)
                    QVERIFY2(!c.scene.nodeItem(nodes[i].id)
                                  ->bodyRect()
                                  .intersects(c.scene.nodeItem(nodes[j].id)->bodyRect()),
                             qPrintable(name + ": " + QString::fromStdString(nodes[i].id + " on " +
                                                                             nodes[j].id)));
            for (const graph::Edge &e : c.pipeline.document().edges()) {
                const QString where = crossing(c.scene, c.pipeline.document(), e);
                QVERIFY2(where.isEmpty(), qPrintable(name + ": " + where));
            }
        }
        // Two nodes far apart with a wire, as a person builds them.
        Canvas c;
        const std::string a = c.scene.addNode("relu", QPointF(0, 0));
        const std::string b = c.scene.addNode("relu", QPointF(700, 0));
        QVERIFY(c.scene.connectPorts(c.port(a, "out", false), c.port(b, "in", true)));
        const graph::Edge edge = c.pipeline.document().edges().front();
        const QPainterPath before = c.scene.edgeItem(edge)->path();
        QCOMPARE(before, curvePath(before.pointAtPercent(0), before.pointAtPercent(1)));
        // A node dropped right on the wire's middle: the wire goes around it.
        const QPointF middle = before.pointAtPercent(0.5);
        const QPointF onWire = middle - QPointF(NodeItem::kWidth / 2, 20);
        const std::string id = c.scene.addNode("dropout", onWire);
        QVERIFY(!id.empty());
        c.scene.nodeItem(id)->setPos(onWire); // where it was dropped, not the free spot
        QVERIFY(c.scene.nodeItem(id)->bodyRect().contains(middle));
        QCOMPARE(crossing(c.scene, c.pipeline.document(), edge), QString());
        QVERIFY(c.scene.edgeItem(edge)->path() != before);
        // Moved away again: the wire is the curve it was.
        c.scene.nodeItem(id)->setPos(onWire + QPointF(0, 2000));
        QCOMPARE(c.scene.edgeItem(edge)->path(), before);
        // Moving one of the wire's own nodes behind the other: around both.
        c.scene.nodeItem(b)->setPos(-600, 40);
        QCOMPARE(crossing(c.scene, c.pipeline.document(), edge), QString());
        c.scene.nodeItem(b)->setPos(700, 0);
        QCOMPARE(c.scene.edgeItem(edge)->path(), before);
        // Deleted while on the wire: the curve again.
        c.scene.nodeItem(id)->setPos(onWire);
        QVERIFY(c.scene.edgeItem(edge)->path() != before);
        c.scene.selectNodes({id});
        c.scene.deleteSelection();
        QCOMPARE(c.scene.edgeItem(edge)->path(), before);
    }

    // The router itself: a wire back to the left goes around both of its nodes; one with a node
    // in its way goes around it; a port boxed in still gets a wire (the curve).
    void routerGoesAround()
    {
        const QRectF a(0, 0, 176, 80), b(400, 0, 176, 80);
        // b's output back to a's input: leaves rightwards, enters rightwards, crosses neither.
        const QPointF out = b.topRight() + QPointF(0, 40), in = a.topLeft() + QPointF(0, 40);
        QVERIFY(!curveClear(out, in, {a, b}));
        const std::vector<QPointF> back = orthogonalRoute(out, in, {a, b});
        QVERIFY(back.size() >= 4);
        QCOMPARE(back.front(), out);
        QCOMPARE(back.back(), in);
        QVERIFY(routeClear(back, {a, b}));
        QVERIFY(back[1].x() > out.x() && back[1].y() == out.y()); // out rightwards
        QVERIFY(back[back.size() - 2].x() < in.x() && back[back.size() - 2].y() == in.y()); // in
        for (size_t i = 0; i + 1 < back.size(); ++i) // orthogonal
            QVERIFY(back[i].x() == back[i + 1].x() || back[i].y() == back[i + 1].y());
        // A node straight between two ports in a row: around it, with a margin.
        const QRectF middle(250, 10, 100, 60);
        const QPointF from(200, 40), to(400, 40);
        QVERIFY(curveClear(from, to, {}));
        QVERIFY(!curveClear(from, to, {middle}));
        const std::vector<QPointF> around = orthogonalRoute(from, to, {middle});
        QVERIFY(routeClear(around, {middle.adjusted(-10, -10, 10, 10)}));
        QVERIFY(!routeClear({from, to}, {middle}));
        // wirePath picks: the curve where clear, the route where not.
        QCOMPARE(wirePath(from, to, {}), curvePath(from, to));
        QVERIFY(wirePath(from, to, {middle}) != curvePath(from, to));
        // The target's port boxed in (its node and three others leave no way in): no route;
        // wirePath still draws the curve rather than nothing.
        const std::vector<QRectF> boxed{QRectF(400, 0, 176, 80), QRectF(300, -60, 400, 40),
                                        QRectF(300, 100, 400, 40), QRectF(300, -60, 40, 200)};
        QVERIFY(orthogonalRoute(QPointF(0, 40), QPointF(400, 40), boxed).empty());
        QCOMPARE(wirePath(QPointF(0, 40), QPointF(400, 40), boxed),
                 curvePath(QPointF(0, 40), QPointF(400, 40)));
    }

    void copyPasteKeepsInnerEdges()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        c.scene.selectNodes({"conv1", "relu1", "pool1"});
        const std::string fragment = c.scene.copySelection();
        QVERIFY(!fragment.empty());
        const size_t nodes = c.pipeline.document().nodes().size();
        const size_t edges = c.pipeline.document().edges().size();
        QVERIFY(c.scene.pasteFragment(fragment, QPointF(40, 40)));
        QCOMPARE(c.pipeline.document().nodes().size(), nodes + 3);
        // The two wires between the three copied nodes come along, renamed; none to outside.
        QCOMPARE(c.pipeline.document().edges().size(), edges + 2);
        const auto pasted = c.scene.selectedNodeIds();
        QCOMPARE(pasted, (std::vector<std::string>{"conv3", "relu4", "pool3"}));
        // Together, as they were copied, and in free space: no pasted node covers another one
        // (40 px down and right of the originals, where they were pasted before, they did).
        const auto *conv1 = c.pipeline.document().node("conv1");
        const auto *conv3 = c.pipeline.document().node("conv3");
        QCOMPARE(c.pipeline.document().node("relu4")->x - conv3->x,
                 c.pipeline.document().node("relu1")->x - conv1->x);
        auto overlaps = [&] {
            int n = 0;
            for (const std::string &id : pasted)
                for (const graph::Node &other : c.pipeline.document().nodes())
                    if (other.id != id &&
                        c.scene.nodeItem(id)->sceneBoundingRect().intersects(
                            c.scene.nodeItem(other.id)->sceneBoundingRect().adjusted(4, 4, -4, -4)))
                        ++n;
            return n;
        };
        QCOMPARE(overlaps(), 0);
        QCOMPARE(c.pipeline.document().node("conv3")->params,
                 c.pipeline.document().node("conv1")->params);
        // One undo step takes the whole paste away.
        c.pipeline.undoStack()->undo();
        QCOMPARE(c.pipeline.document().nodes().size(), nodes);
        QCOMPARE(c.pipeline.document().edges().size(), edges);

        c.scene.selectNodes({"fc1"});
        c.scene.duplicateSelection();
        QVERIFY(c.pipeline.document().node("fc3"));
        for (const graph::Node &other : c.pipeline.document().nodes())
            if (other.id != "fc3")
                QVERIFY2(
                    !c.scene.nodeItem("fc3")->sceneBoundingRect().intersects(
                        c.scene.nodeItem(other.id)->sceneBoundingRect().adjusted(4, 4, -4, -4)),
                    other.id.c_str());
        c.scene.deleteSelection();
        QVERIFY(!c.pipeline.document().node("fc3"));
        // Text from elsewhere: only wires between pasted nodes, each once.
        const std::string foreign = R"({"format": "flowbench.pipeline", "version": 1,
            "nodes": [{"id": "a", "type": "relu"}, {"id": "b", "type": "relu"}],
            "edges": [{"from": "a.out", "to": "b.in"}, {"from": "a.out", "to": "b.in"},
                      {"from": "a.out", "to": "elsewhere.in"}]})";
        const size_t edgesBefore = c.pipeline.document().edges().size();
        QVERIFY(c.scene.pasteFragment(foreign, QPointF()));
        QCOMPARE(c.pipeline.document().edges().size(), edgesBefore + 1);
        // Pasting text that is not a fragment says so and changes nothing.
        QSignalSpy message(&c.scene, &GraphScene::message);
        QVERIFY(!c.scene.pasteFragment("not json", QPointF()));
        QCOMPARE(message.count(), 1);
    }

    void deleteRemovesWiresAndUndoPutsThemBack()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        const std::string before = json(c.pipeline);
        c.scene.selectNodes({"conv2", "normalize"});
        c.scene.deleteSelection();
        QVERIFY(!c.pipeline.document().node("conv2"));
        for (const auto &e : c.pipeline.document().edges())
            QVERIFY(e.fromNode != "conv2" && e.toNode != "conv2");
        QCOMPARE(c.scene.edgeItemCount(), int(c.pipeline.document().edges().size()));
        c.pipeline.undoStack()->undo();
        QCOMPARE(json(c.pipeline), before); // same order of nodes and edges as the file
        QCOMPARE(c.scene.edgeItemCount(), int(c.pipeline.document().edges().size()));
    }

    void undoRestoresWhatAFileHeld()
    {
        // A damaged file: a malformed id and a wire to a node that is not there. Validation
        // reports both; deleting and undoing must still give back exactly that file.
        QTemporaryDir dir;
        const QString path = dir.filePath("damaged.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "flowbench.pipeline", "version": 1,
            "nodes": [{"id": "ok", "type": "relu", "position": [0, 0]},
                      {"id": "bad id", "type": "relu", "position": [300, 0]}],
            "edges": [{"from": "ok.out", "to": "ghost.in"},
                      {"from": "bad id.out", "to": "ok.in"}]})");
        f.close();
        Canvas c;
        QVERIFY(c.pipeline.load(path).ok());
        const std::string initial = json(c.pipeline);
        QTRY_VERIFY(!c.pipeline.problems().empty());
        c.scene.selectNodes({"ok", "bad id"});
        c.scene.deleteSelection();
        QVERIFY(c.pipeline.document().nodes().empty());
        QVERIFY(c.pipeline.document().edges().empty());
        c.pipeline.undoStack()->undo();
        QCOMPARE(json(c.pipeline), initial);
        QCOMPARE(c.scene.nodeItemCount(), 2);
    }

    // A random sequence of edits, each one undo step: undoing all gives back the initial JSON,
    // redoing all the final JSON, byte for byte.
    void randomEditsUndoRedo_data()
    {
        QTest::addColumn<unsigned>("seed");
        for (unsigned seed : {1u, 2u, 3u, 4u, 5u})
            QTest::newRow(qPrintable(QStringLiteral("seed %1").arg(seed))) << seed;
    }
    void randomEditsUndoRedo()
    {
        QFETCH(unsigned, seed);
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        const std::string initial = json(c.pipeline);
        std::mt19937 rng(seed);
        auto pick = [&](size_t n) { return size_t(rng() % n); };
        const auto &types = c.pipeline.registry().all();
        int edits = 0;
        for (int i = 0; i < 150; ++i) {
            const auto &doc = c.pipeline.document();
            const int before = c.pipeline.undoStack()->count();
            switch (pick(7)) {
            case 0: // add a node from the palette
                c.scene.addNode(types[pick(types.size())].type,
                                QPointF(double(pick(2000)) - 1000, double(pick(1000))));
                break;
            case 1: // delete a node (with its wires)
                if (!doc.nodes().empty()) {
                    c.scene.selectNodes({doc.nodes()[pick(doc.nodes().size())].id});
                    c.scene.deleteSelection();
                }
                break;
            case 2: { // connect two ports that accept each other
                std::vector<graph::Edge> ok;
                for (const auto &a : doc.nodes())
                    for (const auto &b : doc.nodes()) {
                        const auto *sa = c.pipeline.registry().find(a.type);
                        const auto *sb = c.pipeline.registry().find(b.type);
                        if (!sa || !sb) continue;
                        for (const auto &out : sa->outputs)
                            for (const auto &in : sb->inputs) {
                                graph::Edge e{a.id, out.name, b.id, in.name, {}};
                                if (graph::checkEdge(doc, e, exec::nodeTypes())) ok.push_back(e);
                            }
                    }
                if (!ok.empty()) QVERIFY(c.pipeline.addEdge(ok[pick(ok.size())]).ok());
                break;
            }
            case 3: // disconnect a wire
                if (!doc.edges().empty())
                    c.pipeline.remove({}, {doc.edges()[pick(doc.edges().size())]});
                break;
            case 4: { // set a parameter to another valid value
                if (doc.nodes().empty()) break;
                const graph::Node &n = doc.nodes()[pick(doc.nodes().size())];
                const auto *spec = c.pipeline.registry().find(n.type);
                if (!spec || spec->params.empty()) break;
                const graph::ParamSpec &p = spec->params[pick(spec->params.size())];
                nlohmann::json v;
                switch (p.type) {
                case graph::ParamType::Int:
                    v = int(std::max(p.min, 0.0)) + 1 + int(pick(5));
                    break;
                case graph::ParamType::Float:
                    v = (p.max < 1e9 ? p.max : 1.0) * 0.5;
                    break;
                case graph::ParamType::Bool:
                    v = !doc.param(n.id, p.name, exec::nodeTypes()).get<bool>();
                    break;
                case graph::ParamType::Enum:
                    v = p.choices[pick(p.choices.size())];
                    break;
                default:
                    v = "edited-" + std::to_string(i);
                    break;
                }
                if (p.type == graph::ParamType::Int && p.max < 1e9) v = int(p.max);
                (void)c.pipeline.setParam(n.id, p.name, v);
                break;
            }
            case 5: // move a node
                if (!doc.nodes().empty()) {
                    const graph::Node &n = doc.nodes()[pick(doc.nodes().size())];
                    c.pipeline.undoStack()->push(new fb::widgets::MoveNodesCommand(
                        c.pipeline.document(),
                        {{n.id, {QPointF(n.x, n.y), QPointF(n.x + 13, n.y - 7)}}}));
                }
                break;
            case 6: // duplicate a couple of nodes
                if (doc.nodes().size() >= 2) {
                    c.scene.selectNodes({doc.nodes()[pick(doc.nodes().size())].id,
                                         doc.nodes()[pick(doc.nodes().size())].id});
                    c.scene.duplicateSelection();
                }
                break;
            }
            edits += c.pipeline.undoStack()->count() > before;
            // The scene stays in step with the document after every edit.
            QCOMPARE(c.scene.nodeItemCount(), int(c.pipeline.document().nodes().size()));
            QCOMPARE(c.scene.edgeItemCount(), int(c.pipeline.document().edges().size()));
        }
        QVERIFY2(edits > 60, qPrintable(QString::number(edits)));
        const std::string final = json(c.pipeline);
        QVERIFY(final != initial);
        while (c.pipeline.undoStack()->canUndo())
            c.pipeline.undoStack()->undo();
        QCOMPARE(json(c.pipeline), initial);
        QVERIFY(!c.pipeline.isModified());
        QCOMPARE(c.scene.nodeItemCount(), int(c.pipeline.document().nodes().size()));
        while (c.pipeline.undoStack()->canRedo())
            c.pipeline.undoStack()->redo();
        QCOMPARE(json(c.pipeline), final);
        QCOMPARE(c.scene.edgeItemCount(), int(c.pipeline.document().edges().size()));
    }

    void saveAndLoadRoundTrip()
    {
        QTemporaryDir dir;
        // A file with fields Flowbench does not know, at every level: they must survive.
        auto text = graph::serializePipeline(graph::loadPipeline(kCnn.toStdString()).value());
        auto j = nlohmann::ordered_json::parse(text);
        j["x_comment"] = "kept";
        j["nodes"][0]["x_color"] = "teal";
        j["edges"][0]["x_label"] = "raw pixels";
        const QString original = dir.filePath("with-extras.json");
        {
            QFile f(original);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(j.dump(2)));
        }
        EditedPipeline p;
        QSignalSpy modified(&p, &EditedPipeline::modifiedChanged);
        QVERIFY(p.load(original).ok());
        QCOMPARE(p.displayName(), QStringLiteral("with-extras.json"));
        QVERIFY(p.setParam("fc1", "out_features", 64).ok());
        QVERIFY(p.isModified());
        QVERIFY(modified.count() >= 1 && modified.back().front().toBool());

        const QString saved = dir.filePath("saved.json");
        QVERIFY(p.save(saved).ok());
        QVERIFY(!p.isModified());
        QCOMPARE(p.filePath(), QFileInfo(saved).absoluteFilePath());

        EditedPipeline q;
        QVERIFY(q.load(saved).ok());
        QCOMPARE(json(q), json(p));
        QCOMPARE(q.document().param("fc1", "out_features", exec::nodeTypes()), nlohmann::json(64));
        QFile f(saved);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        QVERIFY(bytes.contains("\"x_comment\": \"kept\""));
        QVERIFY(bytes.contains("\"x_color\": \"teal\""));
        QVERIFY(bytes.contains("\"x_label\": \"raw pixels\""));

        // A damaged file is refused with its name and nothing changes.
        const QString bad = dir.filePath("bad.json");
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write("{\"format\": \"flowbench.pipeline\", \"version\": 1, \"nodes\": [");
        b.close();
        const std::string before = json(q);
        Status s = q.load(bad);
        QVERIFY(!s.ok());
        QVERIFY2(QString::fromStdString(s.error().str()).contains("bad.json"),
                 s.error().str().c_str());
        QCOMPARE(json(q), before);
        // Saving where it cannot write leaves things as they were, with the reason.
        Status w = q.save(dir.filePath("no-such-dir/x.json"));
        QVERIFY(!w.ok());
        QVERIFY(w.error().str().find("no-such-dir") != std::string::npos);
    }

    void inspectorEditsReachTheDocument()
    {
        EditedPipeline p;
        QVERIFY(p.load(kCnn).ok());
        Inspector inspector(&p);
        inspector.show();
        inspector.showNode("conv1");

        auto *channels = qobject_cast<QSpinBox *>(inspector.editor("out_channels"));
        QVERIFY(channels);
        QCOMPARE(channels->value(), p.document().param("conv1", "out_channels", exec::nodeTypes()).get<int>());
        QCOMPARE(channels->minimum(), 1); // the parameter's range
        channels->setValue(48);
        QCOMPARE(p.document().param("conv1", "out_channels", exec::nodeTypes()), nlohmann::json(48));
        QVERIFY(p.isModified());
        // Undo reaches the editor, because the inspector observes the document.
        p.undoStack()->undo();
        QCOMPARE(channels->value(), 32);

        auto *bias = qobject_cast<QCheckBox *>(inspector.editor("bias"));
        QVERIFY(bias);
        bias->click();
        QCOMPARE(p.document().param("conv1", "bias", exec::nodeTypes()), nlohmann::json(false));

        inspector.showNode("optimizer");
        auto *lr = qobject_cast<QDoubleSpinBox *>(inspector.editor("lr"));
        QVERIFY(lr);
        lr->setValue(0.0125);
        QCOMPARE(p.document().param("optimizer", "lr", exec::nodeTypes()).get<double>(), 0.0125);
        // A value outside the range, typed: refused with the reason, the document keeps its
        // value and the editor shows it again.
        lr->setValue(0.0); // lr must be > 0
        QVERIFY2(inspector.lastError().contains(QStringLiteral("lr")),
                 qPrintable(inspector.lastError()));
        QCOMPARE(p.document().param("optimizer", "lr", exec::nodeTypes()).get<double>(), 0.0125);
        QCOMPARE(lr->value(), 0.0125);

        // Small values are shown as people write them, not rounded to zero.
        const std::string adam = p.addNode("adam", QPointF());
        inspector.showNode(adam);
        auto *eps = qobject_cast<QDoubleSpinBox *>(inspector.editor("eps"));
        QVERIFY(eps);
        QCOMPARE(eps->text(), QStringLiteral("1e-08"));
        QCOMPARE(eps->value(), 1e-8);

        // The wheel over an editor without the focus scrolls the inspector, never edits.
        inspector.showNode("conv1");
        auto *kernel = qobject_cast<QSpinBox *>(inspector.editor("kernel_size"));
        QVERIFY(kernel && !kernel->hasFocus());
        const int kernelBefore = kernel->value();
        QWheelEvent wheel(QPointF(5, 5), kernel->mapToGlobal(QPointF(5, 5)), QPoint(),
                          QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(kernel, &wheel);
        QCOMPARE(kernel->value(), kernelBefore);
        QCOMPARE(p.document().param("conv1", "kernel_size", exec::nodeTypes()).get<int>(), kernelBefore);

        // Typed but not yet committed (no Enter): Save and Run commit it first.
        inspector.activateWindow();
        kernel->setFocus();
        QTRY_VERIFY(kernel->hasFocus());
        kernel->selectAll();
        QTest::keyClicks(kernel, QStringLiteral("5"));
        QCOMPARE(p.document().param("conv1", "kernel_size", exec::nodeTypes()).get<int>(), kernelBefore);
        inspector.commitPending();
        QCOMPARE(p.document().param("conv1", "kernel_size", exec::nodeTypes()).get<int>(), 5);

        // A change undone by the next one (a checkbox clicked twice) leaves no undo step.
        inspector.showNode("train");
        auto *shuffle = qobject_cast<QCheckBox *>(inspector.editor("shuffle"));
        QVERIFY(shuffle && shuffle->isChecked()); // set in the file
        const int steps = p.undoStack()->count();
        shuffle->click();
        QCOMPARE(p.undoStack()->count(), steps + 1);
        shuffle->click();
        QCOMPARE(p.undoStack()->count(), steps);
        QCOMPARE(p.document().param("train", "shuffle", exec::nodeTypes()), nlohmann::json(true));

        inspector.showNode("optimizer");
        auto *schedule = qobject_cast<QComboBox *>(inspector.editor("schedule"));
        QVERIFY(schedule);
        const int cosine = schedule->findText(QStringLiteral("cosine"));
        QVERIFY(cosine >= 0);
        schedule->setCurrentIndex(cosine);
        emit schedule->activated(cosine);
        QCOMPARE(p.document().param("optimizer", "schedule", exec::nodeTypes()), nlohmann::json("cosine"));

        inspector.showNode("train_data");
        auto *path = qobject_cast<QLineEdit *>(inspector.editor("path#field"));
        QVERIFY(path);
        path->setText(QStringLiteral("/data/elsewhere"));
        emit path->editingFinished();
        QCOMPARE(p.document().param("train_data", "path", exec::nodeTypes()), nlohmann::json("/data/elsewhere"));

        // A value outside the range is refused with the reason; the document keeps its value.
        Status s = p.setParam("optimizer", "momentum", 3.0);
        QVERIFY(!s.ok());
        QVERIFY(s.error().str().find("momentum") != std::string::npos);

        // Renaming in the inspector: the wires follow, one undo step puts the old name back.
        inspector.showNode("conv1");
        const std::string beforeRename = json(p);
        QSignalSpy renamed(&inspector, &Inspector::nodeRenamed);
        QLineEdit *id = inspector.idEditor();
        QVERIFY(id);
        id->setText(QStringLiteral("first_conv"));
        emit id->editingFinished();
        QTRY_COMPARE(renamed.count(), 1);
        QVERIFY(p.document().node("first_conv") && !p.document().node("conv1"));
        QVERIFY(p.document().edgeInto("first_conv", "in"));
        QCOMPARE(p.document().edgeInto("first_conv", "in")->fromNode, std::string("input"));
        QCOMPARE(inspector.nodeId(), std::string("first_conv"));
        p.undoStack()->undo();
        QCOMPARE(json(p), beforeRename);
        // A name that is taken is refused, with the reason; nothing changes.
        inspector.showNode("conv1");
        inspector.idEditor()->setText(QStringLiteral("conv2"));
        emit inspector.idEditor()->editingFinished();
        QTRY_VERIFY(!inspector.lastError().isEmpty());
        QVERIFY(inspector.lastError().contains(QStringLiteral("conv2")));
        QCOMPARE(json(p), beforeRename);
        QCOMPARE(inspector.idEditor()->text(), QStringLiteral("conv1"));

        // The node going away empties the inspector.
        inspector.showNode("train_data");
        p.remove({"train_data"}, {});
        QVERIFY(inspector.nodeId().empty());
        QVERIFY(!inspector.editor("path#field"));
    }

    void zoomAndFit()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        c.view.fitToView();
        // Every node is inside the visible area after fit.
        const QRectF visible = c.view.mapToScene(c.view.viewport()->rect()).boundingRect();
        for (const auto &n : c.pipeline.document().nodes())
            QVERIFY2(visible.contains(c.scene.nodeItem(n.id)->sceneBoundingRect()), n.id.c_str());
        // The view keeps the pipeline in sight as it is resized, until the person zooms.
        QVERIFY(c.view.isFitting());
        c.view.resize(700, 500);
        QApplication::processEvents();
        const QRectF smaller = c.view.mapToScene(c.view.viewport()->rect()).boundingRect();
        for (const auto &n : c.pipeline.document().nodes())
            QVERIFY2(smaller.contains(c.scene.nodeItem(n.id)->sceneBoundingRect()), n.id.c_str());
        const double z = c.view.zoom();
        c.view.zoomBy(2);
        QVERIFY(!c.view.isFitting());
        QVERIFY(qFuzzyCompare(c.view.zoom(), std::min(4.0, z * 2)));
        c.view.zoomBy(1e-6); // clamped, never zero
        QVERIFY(c.view.zoom() >= 0.1 - 1e-9);
        c.view.resetZoom();
        QCOMPARE(c.view.zoom(), 1.0);
    }

    void liveStateOnTheCanvas()
    {
        Canvas c;
        QVERIFY(c.pipeline.load(kCnn).ok());
        c.scene.setEdgeLive("normalize", "train", 4200, 0.75);
        EdgeItem *wire = c.scene.edgeItem(graph::Edge{"normalize", "samples", "train", "data", {}});
        QVERIFY(wire && wire->hasLiveStats());
        QCOMPARE(wire->liveText(), QStringLiteral("4200/s"));
        QCOMPARE(wire->queueFill(), 0.75);
        // A wire whose data comes from the cache this epoch says so instead of a rate.
        c.scene.setEdgeLive("train_data", "normalize", 0, 0, true);
        EdgeItem *cached =
            c.scene.edgeItem(graph::Edge{"train_data", "samples", "normalize", "samples", {}});
        QCOMPARE(cached->liveText(), QStringLiteral("cached"));
        c.scene.setBottleneck("normalize");
        QVERIFY(c.scene.nodeItem("normalize")->isBottleneck());
        c.scene.setBottleneck("train");
        QVERIFY(!c.scene.nodeItem("normalize")->isBottleneck());
        QVERIFY(c.scene.nodeItem("train")->isBottleneck());
        c.scene.setNodeProgress("train", 0.5, QStringLiteral("step 10/20"));
        QCOMPARE(c.scene.nodeItem("train")->progress(), 0.5);
        // Painted: the live label is drawn where it stands (not the background).
        c.view.centerOn(wire->labelRect().center());
        const QImage shot = c.view.grab().toImage();
        QVERIFY(!shot.isNull());
        const QPoint mid = c.toView(wire->labelRect().center());
        QVERIFY(shot.rect().adjusted(12, 0, -12, 0).contains(mid));
        const QColor background = shot.pixelColor(2, 2);
        int differing = 0;
        for (int dx = -12; dx <= 12; ++dx)
            differing += shot.pixelColor(mid + QPoint(dx, 0)) != background;
        QVERIFY2(differing > 10, qPrintable(QString::number(differing)));
        c.scene.clearRunState();
        QVERIFY(!wire->hasLiveStats());
        QVERIFY(!c.scene.nodeItem("train")->isBottleneck());
        QCOMPARE(c.scene.nodeItem("train")->progress(), -1.0);
    }
};

QTEST_MAIN(TestEditor)
#include "test_editor.moc"
