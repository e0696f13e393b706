#include "widgets/canvas/canvas_style.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace fb::widgets {

QColor portColor(graph::PortType type)
{
    switch (type) {
    case graph::PortType::Samples:
        return QColor(0x2e, 0x86, 0xde);
    case graph::PortType::Tensor:
        return QColor(0x10, 0xac, 0x84);
    case graph::PortType::Loss:
        return QColor(0xee, 0x52, 0x53);
    case graph::PortType::Optimizer:
        return QColor(0xff, 0x9f, 0x43);
    case graph::PortType::Model:
        return QColor(0x88, 0x54, 0xd0);
    case graph::PortType::Metrics:
        return QColor(0xe0, 0x56, 0xfd);
    }
    return Qt::gray;
}

QPainterPath portShape(graph::PortType type, QPointF c, double size)
{
    const double r = size / 2;
    QPainterPath p;
    auto polygon = [&](int corners, double rotation) {
        QPolygonF poly;
        for (int i = 0; i < corners; ++i) {
            const double a = rotation + 2 * std::numbers::pi * i / corners;
            poly << QPointF(c.x() + r * std::cos(a), c.y() + r * std::sin(a));
        }
        poly << poly.front();
        p.addPolygon(poly);
    };
    switch (type) {
    case graph::PortType::Samples:
        p.addEllipse(c, r, r);
        break;
    case graph::PortType::Tensor:
        p.addRect(QRectF(c.x() - r, c.y() - r, size, size));
        break;
    case graph::PortType::Loss:
        polygon(4, 0);
        break;
    case graph::PortType::Optimizer:
        polygon(3, 0);
        break;
    case graph::PortType::Model:
        polygon(6, std::numbers::pi / 6);
        break;
    case graph::PortType::Metrics:
        p.addRoundedRect(QRectF(c.x() - r, c.y() - r, size, size), r / 2, r / 2);
        break;
    }
    return p;
}

QColor categoryColor(const std::string &category)
{
    // Stable per category, spread around the hue circle.
    unsigned h = 2166136261u;
    for (unsigned char ch : category)
        h = (h ^ ch) * 16777619u;
    return QColor::fromHsv(int(h % 360), 140, 200);
}

QColor fillColor(double fill)
{
    fill = std::clamp(std::isfinite(fill) ? fill : 0.0, 0.0, 1.0);
    // Hue 0 (red) at empty up to 120 (green) at full.
    return QColor::fromHsv(int(120 * fill), 210, 220);
}

QString rateText(double v)
{
    if (!std::isfinite(v) || v < 0) return QStringLiteral("-");
    if (v >= 1e6) return QString::number(v / 1e6, 'f', 1) + QStringLiteral("M/s");
    if (v >= 1e4) return QString::number(v / 1e3, 'f', 1) + QStringLiteral("k/s");
    return QString::number(v, 'f', 0) + QStringLiteral("/s");
}

} // namespace fb::widgets
