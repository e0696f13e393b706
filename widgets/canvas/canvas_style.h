#pragma once

#include <QColor>
#include <QPainterPath>
#include <QPointF>
#include <QString>

#include "core/graph/node_types.h"

namespace fb::widgets {

// How port types look on the canvas: each its own colour and shape, so that a person sees which
// ports fit together before dragging a wire (DESIGN.md: port types are few and visible). The hues
// read on both the light and the dark palette.
QColor portColor(graph::PortType type);
// The port's marker, centred on `center`, about `size` across: samples a circle, tensors a
// square, loss a diamond, optimizer a triangle, model a hexagon, metrics a rounded square.
QPainterPath portShape(graph::PortType type, QPointF center, double size);
// The colour of a node category's header strip ("Data", "Model", ...).
QColor categoryColor(const std::string &category);
// A wire's colour by its queue fill in 0..1, from the consumer's side: red when the queue is
// empty (the stage at its end waits for data), through yellow, to green when it is full (the
// consumer is fed; the producer waits for room).
QColor fillColor(double fill);
// "12.3k/s", "850/s", "1.2M/s".
QString rateText(double perSecond);

} // namespace fb::widgets
