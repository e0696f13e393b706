#include "widgets/canvas/graph_view.h"

#include <algorithm>
#include <cmath>

#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMimeData>
#include <QScrollBar>
#include <QWheelEvent>

#include "widgets/canvas/canvas_items.h"
#include "widgets/canvas/graph_scene.h"

namespace fb::widgets {

namespace {
constexpr double kMinZoom = 0.1, kMaxZoom = 4.0;
}

GraphView::GraphView(GraphScene *scene, QWidget *parent)
    : QGraphicsView(scene, parent)
    , m_scene(scene)
{
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    // The grid is drawn once and kept, not on every repaint of a live canvas.
    setCacheMode(QGraphicsView::CacheBackground);
    setDragMode(QGraphicsView::RubberBandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setAcceptDrops(true);
    setFocusPolicy(Qt::StrongFocus);
    // Scrolling by the scroll bars is panning too: the view stops following the pipeline's size.
    for (QScrollBar *bar : {horizontalScrollBar(), verticalScrollBar()})
        connect(bar, &QAbstractSlider::actionTriggered, this, [this] { m_autoFit = false; });
}

void GraphView::contextMenuEvent(QContextMenuEvent *event)
{
    QGraphicsItem *item = itemAt(event->pos());
    while (item && !(item->flags() & QGraphicsItem::ItemIsSelectable))
        item = item->parentItem(); // a port or a badge: its node
    if (item && !item->isSelected()) {
        scene()->clearSelection();
        item->setSelected(true);
    } else if (!item) {
        scene()->clearSelection();
    }
    if (actions().isEmpty()) return;
    QMenu menu(this);
    for (QAction *a : actions())
        menu.addAction(a);
    setFocus();
    menu.exec(event->globalPos());
}

void GraphView::focusOutEvent(QFocusEvent *event)
{
    // A Space released while the focus was elsewhere never arrives here: forget it.
    m_spaceHeld = false;
    if (!m_panning) viewport()->unsetCursor();
    QGraphicsView::focusOutEvent(event);
}

double GraphView::zoom() const
{
    return transform().m11();
}

void GraphView::zoomBy(double factor)
{
    m_autoFit = false;
    const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
    const double f = target / zoom();
    if (std::abs(f - 1) > 1e-9) scale(f, f);
}

void GraphView::resetZoom()
{
    m_autoFit = false;
    const QPointF c = centerScenePos();
    setTransform(QTransform());
    centerOn(c);
}

void GraphView::fitReadable()
{
    const QRectF nodes = nodeBounds(); // one pass over the scene for both
    fitTo(nodes);
    m_readable = true;
    if (zoom() >= kReadableZoom) return;
    const QRectF bounds = nodes.adjusted(-40, -40, 40, 40);
    setTransform(QTransform::fromScale(kReadableZoom, kReadableZoom));
    // The top-left corner in sight (the training data's source sits there), or the middle of
    // the height where all of it fits.
    const double halfWidth = viewport()->width() / (2 * kReadableZoom);
    const double halfHeight = viewport()->height() / (2 * kReadableZoom);
    centerOn(QPointF(bounds.left() + halfWidth, bounds.height() > 2 * halfHeight
                                                    ? bounds.top() + halfHeight
                                                    : bounds.center().y()));
}

QRectF GraphView::nodeBounds() const
{
    QRectF bounds;
    for (QGraphicsItem *item : scene()->items())
        if (item->type() == NodeItem::Type) bounds |= item->sceneBoundingRect();
    return bounds;
}

void GraphView::fitToView()
{
    fitTo(nodeBounds());
}

void GraphView::fitTo(QRectF bounds)
{
    m_readable = false;
    if (bounds.isNull()) bounds = QRectF(-200, -150, 400, 300);
    bounds.adjust(-40, -40, 40, 40);
    fitInView(bounds, Qt::KeepAspectRatio);
    // A small pipeline should not be blown up past its natural size.
    if (zoom() > 1.0) {
        setTransform(QTransform());
        centerOn(bounds.center());
    }
    if (zoom() < kMinZoom) {
        setTransform(QTransform::fromScale(kMinZoom, kMinZoom));
        centerOn(bounds.center());
    }
    m_autoFit = true;
}

void GraphView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    if (m_autoFit) {
        if (m_readable)
            fitReadable();
        else
            fitToView();
    }
}

QPointF GraphView::centerScenePos() const
{
    return mapToScene(viewport()->rect().center());
}

void GraphView::wheelEvent(QWheelEvent *event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(1.15, steps));
    event->accept();
}

void GraphView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && m_spaceHeld)) {
        m_panning = true;
        m_autoFit = false;
        m_panLast = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_panning) {
        const QPoint d = event->position().toPoint() - m_panLast;
        m_panLast = event->position().toPoint();
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - d.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
}

void GraphView::mouseReleaseEvent(QMouseEvent *event)
{
    if (m_panning) {
        m_panning = false;
        viewport()->setCursor(m_spaceHeld ? Qt::OpenHandCursor : Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

void GraphView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = true;
        viewport()->setCursor(Qt::OpenHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyPressEvent(event);
}

void GraphView::keyReleaseEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = false;
        viewport()->setCursor(Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::keyReleaseEvent(event);
}

void GraphView::dragEnterEvent(QDragEnterEvent *event)
{
    if (event->mimeData()->hasFormat(kNodeTypeMime))
        event->acceptProposedAction();
    else
        QGraphicsView::dragEnterEvent(event);
}

void GraphView::dragMoveEvent(QDragMoveEvent *event)
{
    if (event->mimeData()->hasFormat(kNodeTypeMime))
        event->acceptProposedAction();
    else
        QGraphicsView::dragMoveEvent(event);
}

void GraphView::dropEvent(QDropEvent *event)
{
    if (!event->mimeData()->hasFormat(kNodeTypeMime)) {
        QGraphicsView::dropEvent(event);
        return;
    }
    const std::string type = event->mimeData()->data(kNodeTypeMime).toStdString();
    // The node's top-left corner lands a little up-left of the cursor, so it sits under it.
    const QPointF at = mapToScene(event->position().toPoint()) - QPointF(NodeItem::kWidth / 2, 20);
    if (!m_scene->addNode(type, at).empty()) {
        event->acceptProposedAction();
        setFocus();
    } else {
        event->ignore();
    }
}

} // namespace fb::widgets
