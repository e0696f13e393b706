#include "widgets/canvas/canvas_items.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QGraphicsSceneHoverEvent>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>

#include "widgets/canvas/canvas_style.h"
#include "widgets/canvas/graph_scene.h"
#include "widgets/canvas/wire_router.h"
#include "widgets/editing/edited_pipeline.h"

namespace fb::widgets {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

constexpr double kPortSize = 11;
constexpr double kHeader = 38;
constexpr double kRow = 20;

QString escaped(const std::string &s)
{
    return q(s).toHtmlEscaped();
}

// The badge with a node's validation problems: a red disc with "!", the messages on hover.
class BadgeItem : public QGraphicsItem {
public:
    explicit BadgeItem(QGraphicsItem *parent)
        : QGraphicsItem(parent)
    {
        setAcceptHoverEvents(true);
        setZValue(2);
    }
    QRectF boundingRect() const override { return {-9, -9, 18, 18}; }
    void paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        p->setRenderHint(QPainter::Antialiasing);
        p->setPen(QPen(Qt::white, 1.5));
        p->setBrush(QColor(0xd6, 0x30, 0x31));
        p->drawEllipse(boundingRect().adjusted(1, 1, -1, -1));
        QFont f = p->font();
        f.setBold(true);
        f.setPixelSize(12);
        p->setFont(f);
        p->drawText(boundingRect(), Qt::AlignCenter, QStringLiteral("!"));
    }
};

} // namespace

// A wire's live rate, centred on the wire's middle, drawn above the nodes.
class EdgeLabelItem : public QGraphicsItem {
public:
    EdgeLabelItem() { setZValue(3); }
    // True when the label's size changed (it may then cover a node where it stands).
    bool setText(const QString &text)
    {
        if (text == m_text) return false;
        prepareGeometryChange();
        m_text = text;
        // Measured once per text: shaping it is the costly part, and the scene asks often.
        QFont f;
        f.setPixelSize(11);
        QRectF r = QFontMetricsF(f).boundingRect(m_text);
        r.moveCenter(QPointF(0, -10));
        const QRectF before = m_rect;
        m_rect = r.adjusted(-5, -2, 5, 2);
        return m_rect.size() != before.size();
    }
    QString text() const { return m_text; }
    QRectF boundingRect() const override { return m_rect; }
    void paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        const QPalette pal = QApplication::palette();
        p->setRenderHint(QPainter::Antialiasing);
        QColor bg = pal.color(QPalette::Base);
        bg.setAlpha(225);
        p->setPen(QPen(pal.color(QPalette::Mid), 0.5));
        p->setBrush(bg);
        p->drawRoundedRect(boundingRect(), 3, 3);
        QFont f = p->font();
        f.setPixelSize(11);
        p->setFont(f);
        p->setPen(pal.color(QPalette::Text));
        p->drawText(boundingRect(), Qt::AlignCenter, m_text);
    }

private:
    QString m_text;
    QRectF m_rect;
};

// A node's live progress: a thin bar along its bottom and a short text above it.
class ProgressItem : public QGraphicsItem {
public:
    explicit ProgressItem(QGraphicsItem *parent)
        : QGraphicsItem(parent)
    {
        setZValue(1);
        setAcceptedMouseButtons(Qt::NoButton); // clicks go to the node
    }
    void set(double progress, const QString &text)
    {
        m_progress = progress;
        m_text = text;
        update();
    }
    QRectF boundingRect() const override { return {0, 0, NodeItem::kWidth - 16, 17}; }
    void paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *) override
    {
        const QPalette pal = QApplication::palette();
        p->setRenderHint(QPainter::Antialiasing);
        const QRectF track(0, 13, NodeItem::kWidth - 16, 3);
        p->setPen(Qt::NoPen);
        p->setBrush(pal.color(QPalette::Midlight));
        p->drawRoundedRect(track, 2, 2);
        p->setBrush(pal.color(QPalette::Highlight));
        p->drawRoundedRect(
            QRectF(track.topLeft(),
                   QSizeF(track.width() * std::clamp(m_progress, 0.0, 1.0), track.height())),
            2, 2);
        if (!m_text.isEmpty()) {
            QFont f = p->font();
            f.setPixelSize(10);
            p->setFont(f);
            p->setPen(pal.color(QPalette::PlaceholderText));
            p->drawText(QRectF(0, 0, NodeItem::kWidth - 16, 12), Qt::AlignRight, m_text);
        }
    }

private:
    double m_progress = 0;
    QString m_text;
};

// ---- PortItem -------------------------------------------------------------------------------

PortItem::PortItem(QGraphicsItem *parent, std::string nodeId, const graph::PortSpec &spec,
                   bool input)
    : QGraphicsItem(parent)
    , m_nodeId(std::move(nodeId))
    , m_name(spec.name)
    , m_type(spec.type)
    , m_input(input)
{
    setAcceptHoverEvents(true);
    setZValue(1);
    setCursor(Qt::CrossCursor);
    QString tip = QStringLiteral("<b>%1</b> (%2 %3)")
                      .arg(escaped(m_name), input ? QObject::tr("input") : QObject::tr("output"),
                           q(std::string(graph::portTypeName(m_type))));
    if (!spec.help.empty()) tip += QStringLiteral("<br>") + escaped(spec.help);
    if (spec.optional) tip += QStringLiteral("<br><i>%1</i>").arg(QObject::tr("optional"));
    tip += QStringLiteral("<br><i>%1</i>").arg(QObject::tr("Drag to another port to connect."));
    setToolTip(tip);
}

QRectF PortItem::boundingRect() const
{
    const double r = kPortSize / 2 + 4;
    return {-r, -r, 2 * r, 2 * r};
}

QPainterPath PortItem::shape() const
{
    QPainterPath p;
    p.addEllipse(boundingRect()); // a generous target for the mouse
    return p;
}

void PortItem::paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *)
{
    p->setRenderHint(QPainter::Antialiasing);
    const QPalette pal = QApplication::palette();
    double size = kPortSize;
    QColor fill = portColor(m_type);
    QPen pen(pal.color(QPalette::Base), 1.5);
    if (m_highlight == Highlight::Accepts || m_hovered) {
        size += 4;
        pen = QPen(pal.color(QPalette::Text), 2);
    } else if (m_highlight == Highlight::Refuses) {
        fill.setAlpha(60);
    }
    p->setPen(pen);
    p->setBrush(fill);
    p->drawPath(portShape(m_type, {0, 0}, size));
}

void PortItem::setHighlight(Highlight h)
{
    if (h == m_highlight) return;
    m_highlight = h;
    update();
}

void PortItem::hoverEnterEvent(QGraphicsSceneHoverEvent *)
{
    m_hovered = true;
    update();
}

void PortItem::hoverLeaveEvent(QGraphicsSceneHoverEvent *)
{
    m_hovered = false;
    update();
}

// ---- NodeItem -------------------------------------------------------------------------------

NodeItem::NodeItem(GraphScene *scene, std::string nodeId)
    : m_scene(scene)
    , m_nodeId(std::move(nodeId))
{
    setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
    // A node's picture (title, ports, names: text is the costly part) is kept as a pixmap and
    // redrawn only when the node itself changes, not when a wire or a bar near it does: a live
    // canvas then repaints in a fraction of the time (bench/gui_responsiveness.py).
    setCacheMode(DeviceCoordinateCache);
    setAcceptHoverEvents(true);
    setZValue(1);
    refresh();
}

bool NodeItem::refresh()
{
    const graph::Node *n = m_scene->pipeline().document().node(m_nodeId);
    if (!n) return false;
    if (pos() != QPointF(n->x, n->y)) setPos(n->x, n->y);
    const graph::NodeTypeSpec *spec = m_scene->pipeline().registry().find(n->type);
    m_title = q(n->id);
    m_knownType = spec != nullptr;
    m_subtitle = spec ? q(spec->title) : QObject::tr("unknown type '%1'").arg(q(n->type));
    m_categoryColor = spec ? categoryColor(spec->category) : QColor(Qt::gray);
    const bool rebuilt = n->type != m_typeName || m_ports.empty();
    if (rebuilt) {
        m_typeName = n->type;
        rebuildPorts();
    }
    QString tip = QStringLiteral("<b>%1</b> - %2").arg(escaped(n->id), m_subtitle.toHtmlEscaped());
    if (spec && !spec->help.empty()) tip += QStringLiteral("<br>") + escaped(spec->help);
    m_tip = tip;
    if (m_diffMark == DiffMark::None) setToolTip(tip);
    update();
    return rebuilt;
}

void NodeItem::rebuildPorts()
{
    for (PortItem *p : m_ports)
        delete p;
    m_ports.clear();
    prepareGeometryChange();
    const graph::NodeTypeSpec *spec = m_scene->pipeline().registry().find(m_typeName);
    size_t rows = 0;
    if (spec) {
        for (size_t i = 0; i < spec->inputs.size(); ++i) {
            auto *p = new PortItem(this, m_nodeId, spec->inputs[i], true);
            p->setPos(0, kHeader + kRow * (double(i) + 0.5));
            m_ports.push_back(p);
        }
        for (size_t i = 0; i < spec->outputs.size(); ++i) {
            auto *p = new PortItem(this, m_nodeId, spec->outputs[i], false);
            p->setPos(kWidth, kHeader + kRow * (double(i) + 0.5));
            m_ports.push_back(p);
        }
        rows = std::max(spec->inputs.size(), spec->outputs.size());
    }
    // Below the ports: room for the live progress text and bar, so they never cover a port name.
    m_height = kHeader + kRow * double(std::max<size_t>(rows, 1)) + 20;
    if (m_progressItem) m_progressItem->setPos(8, m_height - 19);
}

PortItem *NodeItem::port(const std::string &name, bool input) const
{
    for (PortItem *p : m_ports)
        if (p->portName() == name && p->isInput() == input) return p;
    return nullptr;
}

QRectF NodeItem::boundingRect() const
{
    // Room for the bottleneck label above and the selection outline around.
    return QRectF(-4, -22, kWidth + 8, m_height + 26);
}

QPainterPath NodeItem::shape() const
{
    QPainterPath p;
    p.addRoundedRect(QRectF(0, 0, kWidth, m_height), 6, 6);
    return p;
}

void NodeItem::paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *)
{
    p->setRenderHint(QPainter::Antialiasing);
    const QPalette pal = QApplication::palette();
    const QRectF body(0, 0, kWidth, m_height);

    // Body, header strip in the category colour, outline (selection, bottleneck).
    QColor outline = pal.color(QPalette::Mid);
    double outlineWidth = 1;
    const QColor diffColour =
        m_diffMark == DiffMark::Added ? QColor(0x2e, 0x9e, 0x3e) : QColor(0x8e, 0x5c, 0xc4);
    if (m_diffMark != DiffMark::None) {
        outline = diffColour;
        outlineWidth = 3;
    }
    if (m_bottleneck) {
        outline = QColor(0xff, 0x8c, 0x00);
        outlineWidth = 3;
    }
    if (isSelected()) {
        outline = pal.color(QPalette::Highlight);
        outlineWidth = std::max(outlineWidth, 2.5);
    }
    p->setPen(QPen(outline, outlineWidth));
    p->setBrush(pal.color(QPalette::Base));
    p->drawRoundedRect(body, 6, 6);

    QPainterPath header;
    header.addRoundedRect(QRectF(0, 0, kWidth, kHeader), 6, 6);
    header.addRect(QRectF(0, kHeader - 6, kWidth, 6));
    QColor strip = m_categoryColor;
    strip.setAlpha(pal.color(QPalette::Base).lightness() > 128 ? 90 : 120);
    p->setPen(Qt::NoPen);
    p->setBrush(strip);
    p->drawPath(header.simplified());

    QFont f = p->font();
    f.setPixelSize(13);
    f.setBold(true);
    p->setFont(f);
    p->setPen(pal.color(QPalette::Text));
    p->drawText(QRectF(8, 2, kWidth - 16, 19), Qt::AlignLeft | Qt::AlignVCenter,
                p->fontMetrics().elidedText(m_title, Qt::ElideRight, int(kWidth - 16)));
    f.setBold(false);
    f.setPixelSize(11);
    f.setItalic(!m_knownType);
    p->setFont(f);
    // The type under the title: the text colour, softened, reads on the tinted header in both
    // themes (the placeholder grey did not on the dark one).
    QColor subtitle = pal.color(QPalette::Text);
    subtitle.setAlphaF(0.7);
    p->setPen(m_knownType ? subtitle : QColor(0xd6, 0x30, 0x31));
    p->drawText(QRectF(8, 19, kWidth - 16, 16), Qt::AlignLeft | Qt::AlignVCenter,
                p->fontMetrics().elidedText(m_subtitle, Qt::ElideRight, int(kWidth - 16)));
    f.setItalic(false);
    p->setFont(f);

    // Port names beside their markers.
    p->setPen(pal.color(QPalette::Text));
    for (PortItem *port : m_ports) {
        const QPointF at = port->pos();
        const QString name = q(port->portName());
        if (port->isInput())
            p->drawText(QRectF(12, at.y() - 9, kWidth / 2 - 12, 18),
                        Qt::AlignLeft | Qt::AlignVCenter, name);
        else
            p->drawText(QRectF(kWidth / 2, at.y() - 9, kWidth / 2 - 12, 18),
                        Qt::AlignRight | Qt::AlignVCenter, name);
    }

    if (m_bottleneck) {
        f.setPixelSize(11);
        f.setBold(true);
        p->setFont(f);
        p->setPen(QColor(0xff, 0x8c, 0x00));
        p->drawText(QRectF(0, -20, kWidth, 16), Qt::AlignLeft | Qt::AlignBottom,
                    m_bottleneckCause.isEmpty()
                        ? QObject::tr("bottleneck")
                        : QObject::tr("bottleneck: %1").arg(m_bottleneckCause));
    } else if (m_diffMark != DiffMark::None) {
        f.setPixelSize(11);
        f.setBold(true);
        p->setFont(f);
        p->setPen(diffColour);
        p->drawText(QRectF(0, -20, kWidth, 16), Qt::AlignLeft | Qt::AlignBottom,
                    p->fontMetrics().elidedText(m_diffText, Qt::ElideRight, int(kWidth)));
    }
}

void NodeItem::setDiffMark(DiffMark mark, const QString &text)
{
    // Called for every node on every edit (an edit ends a Diff's marks): no change, no repaint.
    if (mark == m_diffMark && text == m_diffText) return;
    m_diffMark = mark;
    m_diffText = text;
    // The whole change where the label is cut short; unmarked, the node's own tooltip again.
    setToolTip(mark == DiffMark::None ? m_tip : text);
    update();
}

void NodeItem::setProblems(const std::vector<std::string> &messages)
{
    m_problems = messages;
    if (messages.empty()) {
        delete m_badge;
        m_badge = nullptr;
        return;
    }
    if (!m_badge) {
        m_badge = new BadgeItem(this);
        m_badge->setPos(kWidth - 2, 2);
    }
    QString tip = QStringLiteral("<b>%1</b><ul style='margin:0'>")
                      .arg(QObject::tr("%n problem(s):", nullptr, int(messages.size())));
    for (const std::string &m : messages)
        tip += QStringLiteral("<li>%1</li>").arg(escaped(m));
    m_badge->setToolTip(tip + QStringLiteral("</ul>"));
}

void NodeItem::setProgress(double progress, const QString &text)
{
    if (progress == m_progress && text == m_progressText) return;
    m_progress = progress;
    m_progressText = text;
    // Drawn by a child item of its own, so the node's cached picture stays valid while the bar
    // moves: only the bar is repainted, twice a second during a run.
    if (progress < 0) {
        delete m_progressItem;
        m_progressItem = nullptr;
        return;
    }
    if (!m_progressItem) {
        m_progressItem = new ProgressItem(this);
        m_progressItem->setPos(8, m_height - 19);
    }
    static_cast<ProgressItem *>(m_progressItem)->set(progress, text);
}

void NodeItem::setBottleneck(bool b, const QString &cause)
{
    if (b == m_bottleneck && cause == m_bottleneckCause) return;
    m_bottleneck = b;
    m_bottleneckCause = b ? cause : QString();
    update();
}

void NodeItem::clearRunState()
{
    setProgress(-1);
    setBottleneck(false);
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant &value)
{
    if (change == ItemPositionHasChanged) m_scene->nodeItemMoved(m_nodeId);
    return QGraphicsItem::itemChange(change, value);
}

// ---- EdgeItem -------------------------------------------------------------------------------

EdgeItem::EdgeItem(GraphScene *scene, graph::Edge edge)
    : m_scene(scene)
    , m_edge(std::move(edge))
{
    setFlags(ItemIsSelectable);
    setZValue(0);
    setAcceptHoverEvents(true);
    // Kept as a pixmap like the nodes: a wire is stroked again only when it changes.
    setCacheMode(DeviceCoordinateCache);
    setToolTip(q(m_edge.str()));
    updatePath();
}

void EdgeItem::updatePath()
{
    NodeItem *from = m_scene->nodeItem(m_edge.fromNode);
    NodeItem *to = m_scene->nodeItem(m_edge.toNode);
    PortItem *a = from ? from->port(m_edge.fromPort, false) : nullptr;
    PortItem *b = to ? to->port(m_edge.toPort, true) : nullptr;
    // A wire to a port the type does not have (a damaged file) still shows, at the node's side.
    const QPointF pa = a      ? a->anchor()
                       : from ? from->scenePos() + QPointF(NodeItem::kWidth, 20)
                              : QPointF();
    const QPointF pb = b ? b->anchor() : to ? to->scenePos() + QPointF(0, 20) : QPointF();
    m_color = a ? portColor(a->portType()) : b ? portColor(b->portType()) : QColor(Qt::gray);
    // Around the nodes in its way (widgets/canvas/wire_router.h).
    setPath(wirePath(pa, pb, m_scene->nodeBodies()));
    placeLabel();
}

void EdgeItem::placeLabel()
{
    if (!m_label || !scene()) return;
    // On the wire, where it covers no node's body: the middle first, then further out either
    // way; a wire too short for it (two nodes side by side) gets it just beside its middle. A label
    // at the middle sat on whatever node the wire passed under, and read as that node's.
    const QRectF box = m_label->boundingRect().adjusted(-3, -3, 3, 3);
    const std::vector<QRectF> &bodies = m_scene->nodeBodies();
    auto freeAt = [&](QPointF at) {
        const QRectF r = box.translated(at);
        for (const QRectF &body : bodies)
            if (body.intersects(r)) return false;
        return true;
    };
    for (double t : {0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.12, 0.88}) {
        const QPointF at = path().pointAtPercent(t);
        if (freeAt(at)) {
            m_label->setPos(at);
            return;
        }
    }
    const QPointF middle = path().pointAtPercent(0.5);
    for (double dx : {0.0, 30.0, -30.0, 60.0, -60.0})
        for (double dy : {0.0, -30.0, 30.0, -45.0, 45.0, -60.0, 60.0, -80.0, 80.0}) {
            if (freeAt(middle + QPointF(dx, dy))) {
                m_label->setPos(middle + QPointF(dx, dy));
                return;
            }
        }
    m_label->setPos(middle);
}

QRectF EdgeItem::labelRect() const
{
    return m_label ? m_label->sceneBoundingRect() : QRectF();
}

QRectF EdgeItem::boundingRect() const
{
    // Room for the selection outline and the thick live stroke.
    return QGraphicsPathItem::boundingRect().adjusted(-6, -6, 6, 6);
}

QPainterPath EdgeItem::shape() const
{
    QPainterPathStroker stroker;
    stroker.setWidth(10); // easy to click
    return stroker.createStroke(path());
}

void EdgeItem::paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *)
{
    p->setRenderHint(QPainter::Antialiasing);
    const QPalette pal = QApplication::palette();
    // Live: coloured and thickened by the queue's fill; a cached wire (no data this epoch) is
    // drawn dashed in its type's colour.
    const bool filled = m_live && !m_cached;
    QColor c = filled ? fillColor(m_fill) : m_color;
    double width = filled ? 2.5 + 3.5 * std::clamp(m_fill, 0.0, 1.0) : 2;
    if (isSelected()) {
        p->setPen(QPen(pal.color(QPalette::Highlight), width + 4, Qt::SolidLine, Qt::RoundCap));
        p->drawPath(path());
    }
    p->setPen(QPen(c, width, m_live && m_cached ? Qt::DashLine : Qt::SolidLine, Qt::RoundCap));
    p->setBrush(Qt::NoBrush);
    p->drawPath(path());
}

void EdgeItem::setLiveStats(double rate, double fill, bool cached)
{
    m_live = true;
    m_rate = rate;
    m_fill = fill;
    m_cached = cached;
    const QString tip =
        cached ? QObject::tr("%1<br>skipped this epoch: its samples come from the cache")
                     .arg(q(m_edge.str()).toHtmlEscaped())
               : QObject::tr("%1<br>%2 samples/s, queue %3% full")
                     .arg(q(m_edge.str()).toHtmlEscaped(), QString::number(rate, 'f', 0),
                          QString::number(100 * fill, 'f', 0));
    setToolTip(tip);
    // The rate is written on a label of its own above the nodes: a wire passes under nodes, and
    // its middle often lies under one.
    bool place = false;
    if (!m_label && scene()) {
        m_label = new EdgeLabelItem;
        scene()->addItem(m_label);
        place = true;
    }
    if (m_label) {
        auto *label = static_cast<EdgeLabelItem *>(m_label);
        // Placed again only when new or resized: the wire's moves place it (updatePath).
        place = label->setText(liveText()) || place;
        label->setToolTip(tip);
        if (place) placeLabel();
    }
    update();
}

void EdgeItem::clearRunState()
{
    delete m_label;
    m_label = nullptr;
    if (!m_live) return;
    m_live = false;
    setToolTip(q(m_edge.str()));
    update();
}

EdgeItem::~EdgeItem()
{
    delete m_label;
}

QString EdgeItem::liveText() const
{
    if (!m_live) return {};
    return m_cached ? QObject::tr("cached") : rateText(m_rate);
}
} // namespace fb::widgets
