#pragma once

#include <cstddef>
#include <vector>

namespace fb::widgets {

// Reduces a line series to what a plot `buckets` pixel columns wide can show, without losing a
// spike: the visible x range [xLo, xHi] is cut into `buckets` equal columns and each column keeps
// only its lowest and highest point (in x order), so the drawn envelope is the same as with every
// point drawn. Costs O(points in the range): the range's ends are found by binary search.
//
// x must be ascending (equal neighbours allowed) and free of NaN; y may hold NaN (a gap in the
// line, kept as one NaN point per column so the plot still breaks the line there).
//
// The output always holds the first and the last point of the span, where the span is the points
// inside [xLo, xHi] plus the nearest point outside on each side (so the line runs on to the plot's
// edges). A span of at most 2 * buckets points is copied exactly. Otherwise the output has at most
// 2 * buckets + 2 points (3 * buckets + 2 where columns hold NaN). outX and outY are overwritten.
void decimateMinMax(const double *x, const double *y, std::size_t n, double xLo, double xHi,
                    int buckets, std::vector<double> &outX, std::vector<double> &outY);

} // namespace fb::widgets
