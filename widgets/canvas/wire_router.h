#pragma once

#include <array>
#include <vector>

#include <QPainterPath>
#include <QPointF>
#include <QRectF>

namespace fb::widgets {

// Where a wire runs from an output port (on a node's right side) to an input port (on a node's
// left side) so that it crosses no node's body.
//
// A wire is the usual S-curve wherever that curve is clear of every body. Where it is not (a
// wire that goes back to the left, or one with a node in its way), it becomes an orthogonal
// route with rounded corners that keeps a margin from every body.
//
// The router is our own: the library made for this (libavoid, from Adaptagrams) is not
// packaged for Debian 12, and Graphviz routes only the graphs it lays out itself. It follows the
// method libavoid is built on (Wybrow, Marriott and Stuckey, "Orthogonal connector routing",
// 2009): a grid of the lines along the bodies' sides (each kept `margin` away) and the channels'
// middles, searched with A* for the shortest route, each bend costing as much as a stretch of
// wire. Its cost grows with the nodes near the wire, not with the whole pipeline.

// The S-curve's four control points.
std::array<QPointF, 4> wireCurve(QPointF from, QPointF to);
QPainterPath curvePath(QPointF from, QPointF to);

// True when the S-curve keeps out of every body (with a little room), its two ends aside.
bool curveClear(QPointF from, QPointF to, const std::vector<QRectF> &bodies);

// The corners of an orthogonal route, `from` and `to` included, that leaves `from` rightwards,
// enters `to` rightwards and keeps `margin` from every body (less where two bodies stand closer
// than that to a port); empty when no route exists.
std::vector<QPointF> orthogonalRoute(QPointF from, QPointF to, const std::vector<QRectF> &bodies,
                                     double margin = 14);

// True when no segment of the polyline passes through a body's inside.
bool routeClear(const std::vector<QPointF> &corners, const std::vector<QRectF> &bodies);

// A polyline drawn with its corners rounded.
QPainterPath roundedPath(const std::vector<QPointF> &corners, double radius = 10);

// The whole decision: the curve where it is clear, the orthogonal route where not, and the curve
// again where no route exists (a port boxed in by other nodes).
QPainterPath wirePath(QPointF from, QPointF to, const std::vector<QRectF> &bodies);

} // namespace fb::widgets
