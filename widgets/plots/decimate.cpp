#include "widgets/plots/decimate.h"

#include <algorithm>
#include <cmath>

namespace fb::widgets {

void decimateMinMax(const double *x, const double *y, std::size_t n, double xLo, double xHi,
                    int buckets, std::vector<double> &outX, std::vector<double> &outY)
{
    outX.clear();
    outY.clear();
    if (n == 0 || !x || !y) return;
    if (xHi < xLo) std::swap(xLo, xHi);
    buckets = std::max(buckets, 1);

    // The span: the points in [xLo, xHi] and one neighbour outside on each side.
    std::size_t first = std::size_t(std::lower_bound(x, x + n, xLo) - x);
    std::size_t end = std::size_t(std::upper_bound(x, x + n, xHi) - x);
    if (first > 0) --first;
    if (end < n) ++end;
    if (end <= first) return;
    const std::size_t count = end - first;

    auto emit = [&](std::size_t i) {
        outX.push_back(x[i]);
        outY.push_back(y[i]);
    };
    if (count <= std::size_t(buckets) * 2) {
        outX.assign(x + first, x + end);
        outY.assign(y + first, y + end);
        return;
    }
    outX.reserve(std::size_t(buckets) * 2 + 2);
    outY.reserve(std::size_t(buckets) * 2 + 2);

    emit(first);
    const double width = xHi - xLo;
    const double scale = width > 0 && std::isfinite(width) ? double(buckets) / width : 0.0;
    constexpr std::size_t kNone = std::size_t(-1);
    long bucket = -1;
    std::size_t minIdx = kNone, maxIdx = kNone, gapIdx = kNone;
    auto flush = [&] {
        std::size_t picks[3] = {minIdx, maxIdx, gapIdx};
        std::sort(picks, picks + 3); // x order; kNone sorts last
        std::size_t previous = kNone;
        for (std::size_t i : picks)
            if (i != kNone && i != previous) {
                emit(i);
                previous = i;
            }
        minIdx = maxIdx = gapIdx = kNone;
    };
    // The inner points: the first and last of the span are already (or will be) emitted as such.
    for (std::size_t i = first + 1; i + 1 < end; ++i) {
        long b = long((x[i] - xLo) * scale);
        b = std::clamp(b, 0L, long(buckets) - 1);
        if (b != bucket) {
            flush();
            bucket = b;
        }
        const double v = y[i];
        if (std::isnan(v)) {
            if (gapIdx == kNone) gapIdx = i;
            continue;
        }
        if (minIdx == kNone || v < y[minIdx]) minIdx = i;
        if (maxIdx == kNone || v > y[maxIdx]) maxIdx = i;
    }
    flush();
    emit(end - 1);
}

} // namespace fb::widgets
