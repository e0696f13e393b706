// Reference pooling over NCHW. Max pooling treats padding cells as absent (they never win), and
// remembers for each output the input position that won in the last forward call, so the
// backward pass routes the gradient there. Average pooling divides by kh*kw always: padding
// cells count as zeros (PyTorch's count_include_pad=True).

#include "core/backend/cpu/reference_backend.h"

#include "core/base/check.h"

#include <cmath>
#include <limits>
#include <vector>

namespace fb {
namespace {

class ReferencePool : public PoolKernel {
public:
    explicit ReferencePool(const PoolDesc &d)
        : m_d(d)
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0, "empty pooling input");
        FB_ASSERT(d.kh > 0 && d.kw > 0 && d.sh > 0 && d.sw > 0, "bad pooling window or stride");
        // Padding narrower than the window means every window holds at least one real cell.
        FB_ASSERT(d.ph >= 0 && d.pw >= 0 && d.ph < d.kh && d.pw < d.kw, "bad pooling padding");
        FB_ASSERT(d.oh() > 0 && d.ow() > 0, "pooling window larger than the input");
        if (d.kind == PoolKind::Max) m_argmax.assign(size_t(d.n * d.c * d.oh() * d.ow()), -1);
    }

    void forward(const float *x, float *y) override
    {
        const PoolDesc &d = m_d;
        const int64_t oh = d.oh(), ow = d.ow();
        for (int64_t p = 0; p < d.n * d.c; ++p) { // one (n, c) plane at a time
            const float *xp = x + p * d.h * d.w;
            for (int64_t yi = 0; yi < oh; ++yi)
                for (int64_t xi = 0; xi < ow; ++xi) {
                    const int64_t out = (p * oh + yi) * ow + xi;
                    if (d.kind == PoolKind::Max) {
                        float best = -std::numeric_limits<float>::infinity();
                        int64_t where = -1;
                        forEachCell(yi, xi, [&](int64_t k) {
                            const float v = xp[k];
                            // Strict '>' keeps the first maximum in scan order; a NaN wins
                            // (the first one) so that it propagates, as in PyTorch.
                            if (where < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
                                best = v;
                                where = k;
                            }
                        });
                        y[out] = best;
                        m_argmax[size_t(out)] = p * d.h * d.w + where;
                    } else {
                        double sum = 0.0;
                        forEachCell(yi, xi, [&](int64_t k) { sum += xp[k]; });
                        y[out] = float(sum / double(d.kh * d.kw));
                    }
                }
        }
        m_haveForward = true;
    }

    void backward(const float *dy, float *dx) override
    {
        const PoolDesc &d = m_d;
        const int64_t oh = d.oh(), ow = d.ow(), outCount = d.n * d.c * oh * ow;
        // Overlapping windows (stride < kernel) send several gradients to one cell: sum them in
        // double, then write, so dx is overwritten as the interface requires.
        std::vector<double> acc(size_t(d.n * d.c * d.h * d.w), 0.0);
        if (d.kind == PoolKind::Max) {
            FB_ASSERT(m_haveForward, "max pooling backward before any forward");
            for (int64_t out = 0; out < outCount; ++out)
                acc[size_t(m_argmax[size_t(out)])] += dy[out];
        } else {
            const double scale = 1.0 / double(d.kh * d.kw);
            for (int64_t p = 0; p < d.n * d.c; ++p)
                for (int64_t yi = 0; yi < oh; ++yi)
                    for (int64_t xi = 0; xi < ow; ++xi) {
                        const double g = dy[(p * oh + yi) * ow + xi] * scale;
                        double *plane = acc.data() + p * d.h * d.w;
                        forEachCell(yi, xi, [&](int64_t k) { plane[k] += g; });
                    }
        }
        for (size_t i = 0; i < acc.size(); ++i)
            dx[i] = float(acc[i]);
    }

private:
    // Calls f(index within the plane) for the real (non-padding) cells of window (yi, xi), in
    // row-major scan order.
    template <class F> void forEachCell(int64_t yi, int64_t xi, F &&f) const
    {
        for (int64_t i = 0; i < m_d.kh; ++i) {
            const int64_t ih = yi * m_d.sh - m_d.ph + i;
            if (ih < 0 || ih >= m_d.h) continue;
            for (int64_t j = 0; j < m_d.kw; ++j) {
                const int64_t iw = xi * m_d.sw - m_d.pw + j;
                if (iw < 0 || iw >= m_d.w) continue;
                f(ih * m_d.w + iw);
            }
        }
    }

    PoolDesc m_d;
    std::vector<int64_t> m_argmax; // flat input index of each output's winner (max only)
    bool m_haveForward = false;
};

} // namespace

std::unique_ptr<PoolKernel> makeReferencePool(const PoolDesc &d)
{
    return std::make_unique<ReferencePool>(d);
}

} // namespace fb
