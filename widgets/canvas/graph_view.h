#pragma once

#include <QGraphicsView>

namespace fb::widgets {

class GraphScene;

// The canvas's view: zoom with the wheel (around the cursor), pan with the middle button or with
// Space held, rubber-band selection with the left button on empty canvas, fit-to-view; node types
// dragged from the palette are dropped here.
class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(GraphScene *scene, QWidget *parent = nullptr);
    GraphScene *graphScene() const { return m_scene; }

    // The MIME type the palette drags, holding a node type name.
    static constexpr const char *kNodeTypeMime = "application/x-flowbench-node-type";

    void zoomBy(double factor);
    void resetZoom();
    // Shows every node (or the empty origin), not magnified past 100%. The view then keeps the
    // whole pipeline in sight as it is resized, until the person zooms or pans.
    void fitToView();
    // What a pipeline opens at: fitted when that leaves its text readable (a zoom of at least
    // kReadableZoom: 13 px titles at 10 px and more), else at that zoom from the pipeline's
    // top-left corner, where its training data comes in, the rest a scroll away. Kept as the view
    // is resized, until the person zooms or pans.
    void fitReadable();
    static constexpr double kReadableZoom = 0.8;
    bool isFitting() const { return m_autoFit; }
    // Where a new node goes when a person double-clicks a palette entry: the view's centre.
    QPointF centerScenePos() const;
    double zoom() const;

protected:
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void keyReleaseEvent(QKeyEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dragMoveEvent(QDragMoveEvent *event) override;
    void dropEvent(QDropEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void focusOutEvent(QFocusEvent *event) override;
    // Right click: the item under the cursor joins the selection (alone, if it was not in it),
    // then a menu of the actions added to this view (cut, copy, paste, duplicate, delete...).
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    QRectF nodeBounds() const; // every node, in scene coordinates
    void fitTo(QRectF nodeBounds);

    GraphScene *m_scene;
    bool m_panning = false;
    bool m_spaceHeld = false;
    QPoint m_panLast;
    bool m_readable = false; // fitReadable(), not fitToView(), keeps the view
    bool m_autoFit = false;
};

} // namespace fb::widgets
