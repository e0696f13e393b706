#include "widgets/canvas/wire_router.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace fb::widgets {

namespace {

// Strictly inside: a route may run along a margin line, never across it.
bool inside(const QRectF &r, QPointF p, double eps = 0.01)
{
    return p.x() > r.left() + eps && p.x() < r.right() - eps && p.y() > r.top() + eps &&
           p.y() < r.bottom() - eps;
}

QPointF cubicAt(const std::array<QPointF, 4> &c, double t)
{
    const double u = 1 - t;
    return u * u * u * c[0] + 3 * u * u * t * c[1] + 3 * u * t * t * c[2] + t * t * t * c[3];
}

// Sorted coordinates with near-equal ones merged, then the middle of every gap between two
// neighbours added: a wire between two nodes runs down the channel's middle, not along one side.
std::vector<double> gridLines(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    std::vector<double> lines;
    for (double x : v)
        if (lines.empty() || x - lines.back() > 0.5) lines.push_back(x);
    const size_t n = lines.size();
    for (size_t i = 0; i + 1 < n; ++i)
        if (lines[i + 1] - lines[i] > 4) lines.push_back(0.5 * (lines[i] + lines[i + 1]));
    std::sort(lines.begin(), lines.end());
    return lines;
}

size_t nearestLine(const std::vector<double> &lines, double x)
{
    auto it = std::lower_bound(lines.begin(), lines.end(), x - 0.5);
    return size_t(it - lines.begin());
}

enum Dir { East, West, South, North };
constexpr int dx[4] = {1, -1, 0, 0};
constexpr int dy[4] = {0, 0, 1, -1};
constexpr Dir opposite[4] = {West, East, North, South};

// One search over the bodies given: A* over (grid point, heading), where turning costs
// kBend as well as the distance.
std::vector<QPointF> searchRoute(QPointF from, QPointF to, QPointF s, QPointF t,
                                 const std::vector<QRectF> &bodies, double margin)
{
    constexpr double kBend = 40;
    std::vector<QRectF> walls;
    walls.reserve(bodies.size());
    for (const QRectF &b : bodies) {
        QRectF w = b.adjusted(-margin, -margin, margin, margin);
        // Two nodes closer than the margin to a port: keep to their bodies there, or the route
        // could not start at all.
        if (inside(w, s) || inside(w, t)) w = b;
        if (inside(w, s) || inside(w, t)) continue; // overlapping nodes: nothing to keep out of
        walls.push_back(w);
    }
    std::vector<double> xv{s.x(), t.x()}, yv{s.y(), t.y()};
    for (const QRectF &w : walls) {
        xv.insert(xv.end(), {w.left(), w.right()});
        yv.insert(yv.end(), {w.top(), w.bottom()});
    }
    const std::vector<double> xs = gridLines(std::move(xv)), ys = gridLines(std::move(yv));
    const int nx = int(xs.size()), ny = int(ys.size());
    auto blocked = [&](QPointF p) {
        for (const QRectF &w : walls)
            if (inside(w, p)) return true;
        return false;
    };
    // free[i]: the grid point; east[i] / south[i]: the stretch to its right / below.
    const size_t n = size_t(nx) * size_t(ny);
    std::vector<char> freePoint(n), east(n), south(n);
    for (int iy = 0; iy < ny; ++iy)
        for (int ix = 0; ix < nx; ++ix) {
            const size_t i = size_t(iy) * nx + ix;
            freePoint[i] = !blocked({xs[ix], ys[iy]});
            if (ix + 1 < nx) east[i] = !blocked({0.5 * (xs[ix] + xs[ix + 1]), ys[iy]});
            if (iy + 1 < ny) south[i] = !blocked({xs[ix], 0.5 * (ys[iy] + ys[iy + 1])});
        }
    const int sx = int(nearestLine(xs, s.x())), sy = int(nearestLine(ys, s.y()));
    const int tx = int(nearestLine(xs, t.x())), ty = int(nearestLine(ys, t.y()));
    if (sx >= nx || sy >= ny || tx >= nx || ty >= ny) return {};

    auto heuristic = [&](int ix, int iy) {
        return std::abs(xs[ix] - xs[tx]) + std::abs(ys[iy] - ys[ty]);
    };
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> cost(n * 4, inf);
    std::vector<int> previous(n * 4, -1);
    using Entry = std::pair<double, int>; // (estimate, state)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open;
    const int start = int((size_t(sy) * nx + sx) * 4 + East);
    cost[size_t(start)] = 0;
    open.push({heuristic(sx, sy), start});
    double best = inf;
    int bestState = -1;
    while (!open.empty()) {
        const auto [estimate, state] = open.top();
        open.pop();
        if (estimate >= best) break;
        const double g = cost[size_t(state)];
        if (estimate > g + heuristic(state / 4 % nx, state / 4 / nx) + 1e-9) continue; // stale
        const int point = state / 4, ix = point % nx, iy = point / nx;
        const Dir heading = Dir(state % 4);
        if (ix == tx && iy == ty) {
            // The last stretch enters the port rightwards: arriving going up or down is a bend;
            // arriving leftwards would double back over itself.
            if (heading != West) {
                const double total = g + (heading == East ? 0 : kBend);
                if (total < best) {
                    best = total;
                    bestState = state;
                }
            }
            continue;
        }
        for (int d = 0; d < 4; ++d) {
            if (Dir(d) == opposite[heading]) continue;
            const int jx = ix + dx[d], jy = iy + dy[d];
            if (jx < 0 || jy < 0 || jx >= nx || jy >= ny) continue;
            const size_t i = size_t(iy) * nx + ix, j = size_t(jy) * nx + jx;
            const bool open_ = d == East ? east[i] : d == West ? east[j] : d == South ? south[i] : south[j];
            if (!open_ || !freePoint[j]) continue;
            const double step = std::abs(xs[jx] - xs[ix]) + std::abs(ys[jy] - ys[iy]) +
                                (Dir(d) == heading ? 0 : kBend);
            const int next = int(j * 4 + size_t(d));
            if (g + step < cost[size_t(next)]) {
                cost[size_t(next)] = g + step;
                previous[size_t(next)] = state;
                open.push({g + step + heuristic(jx, jy), next});
            }
        }
    }
    if (bestState < 0) return {};
    std::vector<QPointF> points;
    for (int state = bestState; state >= 0; state = previous[size_t(state)]) {
        const int point = state / 4;
        points.push_back({xs[point % nx], ys[point / nx]});
    }
    points.push_back(from);
    std::reverse(points.begin(), points.end());
    points.push_back(to);
    // Only the corners: a point between two stretches in line is dropped.
    std::vector<QPointF> corners;
    for (const QPointF &p : points) {
        if (!corners.empty() && (p - corners.back()).manhattanLength() < 0.01) continue;
        if (corners.size() >= 2) {
            const QPointF a = corners[corners.size() - 2], b = corners.back();
            const bool inLine = (std::abs(a.x() - b.x()) < 0.01 && std::abs(b.x() - p.x()) < 0.01) ||
                                (std::abs(a.y() - b.y()) < 0.01 && std::abs(b.y() - p.y()) < 0.01);
            if (inLine) corners.back() = p;
            else corners.push_back(p);
        } else {
            corners.push_back(p);
        }
    }
    return corners;
}

} // namespace

std::array<QPointF, 4> wireCurve(QPointF a, QPointF b)
{
    const double d = std::max(40.0, std::abs(b.x() - a.x()) * 0.5);
    return {a, a + QPointF(d, 0), b - QPointF(d, 0), b};
}

QPainterPath curvePath(QPointF from, QPointF to)
{
    const auto c = wireCurve(from, to);
    QPainterPath path(c[0]);
    path.cubicTo(c[1], c[2], c[3]);
    return path;
}

bool curveClear(QPointF from, QPointF to, const std::vector<QRectF> &bodies)
{
    const auto c = wireCurve(from, to);
    const QRectF reach = QRectF(c[0], c[3]).normalized().united(QRectF(c[1], c[2]).normalized());
    std::vector<QRectF> near;
    for (const QRectF &b : bodies)
        if (b.adjusted(-3, -3, 3, 3).intersects(reach.adjusted(-1, -1, 1, 1)))
            near.push_back(b.adjusted(-3, -3, 3, 3));
    if (near.empty()) return true;
    // A sample every few pixels of the curve's extent; the few pixels at each port (on its
    // node's side) do not count.
    const double extent = (c[1] - c[0]).manhattanLength() + (c[2] - c[1]).manhattanLength() +
                          (c[3] - c[2]).manhattanLength();
    const int samples = std::clamp(int(extent / 4), 16, 600);
    for (int i = 1; i < samples; ++i) {
        const QPointF p = cubicAt(c, double(i) / samples);
        if ((p - from).manhattanLength() < 8 || (p - to).manhattanLength() < 8) continue;
        for (const QRectF &b : near)
            if (inside(b, p)) return false;
    }
    return true;
}

bool routeClear(const std::vector<QPointF> &corners, const std::vector<QRectF> &bodies)
{
    for (size_t i = 0; i + 1 < corners.size(); ++i) {
        const QPointF a = corners[i], b = corners[i + 1];
        const QRectF seg = QRectF(a, b).normalized();
        for (const QRectF &body : bodies) {
            // A vertical or horizontal stretch enters a body's inside iff the two overlap with
            // some area, or the line runs strictly between its sides.
            const bool acrossX = seg.right() > body.left() + 0.01 && seg.left() < body.right() - 0.01;
            const bool acrossY = seg.bottom() > body.top() + 0.01 && seg.top() < body.bottom() - 0.01;
            const bool xIn = a.x() > body.left() + 0.01 && a.x() < body.right() - 0.01;
            const bool yIn = a.y() > body.top() + 0.01 && a.y() < body.bottom() - 0.01;
            const bool vertical = std::abs(a.x() - b.x()) < 0.01;
            if (vertical ? (xIn && acrossY) : (yIn && acrossX)) return false;
        }
    }
    return true;
}

std::vector<QPointF> orthogonalRoute(QPointF from, QPointF to, const std::vector<QRectF> &bodies,
                                     double margin)
{
    // Out of the port and into the next one straight for a little more than the margin.
    const double stub = margin + 10;
    const QPointF s = from + QPointF(stub, 0), t = to - QPointF(stub, 0);
    // The bodies near the two ends first (most routes need no more, and the grid stays small),
    // then every body when the route found crosses one further off.
    const QRectF near = QRectF(s, t).normalized().adjusted(-320, -320, 320, 320);
    std::vector<QRectF> local;
    for (const QRectF &b : bodies)
        if (b.intersects(near)) local.push_back(b);
    std::vector<QPointF> route = searchRoute(from, to, s, t, local, margin);
    if (local.size() == bodies.size() || (!route.empty() && routeClear(route, bodies)))
        return route;
    return searchRoute(from, to, s, t, bodies, margin);
}

QPainterPath roundedPath(const std::vector<QPointF> &corners, double radius)
{
    QPainterPath path;
    if (corners.empty()) return path;
    path.moveTo(corners.front());
    auto length = [](QPointF v) { return std::hypot(v.x(), v.y()); };
    for (size_t i = 1; i + 1 < corners.size(); ++i) {
        const QPointF in = corners[i] - corners[i - 1], out = corners[i + 1] - corners[i];
        const double li = length(in), lo = length(out);
        if (li < 0.01 || lo < 0.01) continue;
        const double r = std::min({radius, li / 2, lo / 2});
        path.lineTo(corners[i] - in / li * r);
        path.quadTo(corners[i], corners[i] + out / lo * r);
    }
    path.lineTo(corners.back());
    return path;
}

QPainterPath wirePath(QPointF from, QPointF to, const std::vector<QRectF> &bodies)
{
    if (curveClear(from, to, bodies)) return curvePath(from, to);
    const std::vector<QPointF> route = orthogonalRoute(from, to, bodies);
    return route.empty() ? curvePath(from, to) : roundedPath(route);
}

} // namespace fb::widgets
