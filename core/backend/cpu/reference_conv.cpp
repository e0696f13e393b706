// Reference convolution: direct loops over NCHW, no im2col, every output a double sum. The
// backward passes are written as gathers (each output element sums its own contributions), so
// they overwrite their outputs and need no scratch buffer.

#include "core/backend/cpu/reference_backend.h"

#include "core/base/check.h"

namespace fb {
namespace {

class ReferenceConv : public ConvKernel {
public:
    explicit ReferenceConv(const ConvDesc &d)
        : m_d(d)
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0 && d.oc > 0, "empty convolution");
        FB_ASSERT(d.kh > 0 && d.kw > 0 && d.sh > 0 && d.sw > 0, "bad kernel or stride");
        FB_ASSERT(d.ph >= 0 && d.pw >= 0 && d.oh() > 0 && d.ow() > 0, "bad padding");
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        const ConvDesc &d = m_d;
        const int64_t oh = d.oh(), ow = d.ow();
        for (int64_t n = 0; n < d.n; ++n)
            for (int64_t o = 0; o < d.oc; ++o)
                for (int64_t yi = 0; yi < oh; ++yi)
                    for (int64_t xi = 0; xi < ow; ++xi) {
                        double sum = d.bias ? double(b[o]) : 0.0;
                        for (int64_t c = 0; c < d.c; ++c)
                            for (int64_t i = 0; i < d.kh; ++i) {
                                const int64_t ih = yi * d.sh - d.ph + i;
                                if (ih < 0 || ih >= d.h) continue; // zero padding
                                for (int64_t j = 0; j < d.kw; ++j) {
                                    const int64_t iw = xi * d.sw - d.pw + j;
                                    if (iw < 0 || iw >= d.w) continue;
                                    sum += double(x[((n * d.c + c) * d.h + ih) * d.w + iw]) *
                                           double(w[((o * d.c + c) * d.kh + i) * d.kw + j]);
                                }
                            }
                        y[((n * d.oc + o) * oh + yi) * ow + xi] = float(sum);
                    }
    }

    // dx[n, c, ih, iw] = sum over (o, i, j) with ih = yi*sh - ph + i (same for columns) of
    // dy[n, o, yi, xi] * w[o, c, i, j].
    void backwardData(const float *dy, const float *w, float *dx) override
    {
        const ConvDesc &d = m_d;
        const int64_t oh = d.oh(), ow = d.ow();
        for (int64_t n = 0; n < d.n; ++n)
            for (int64_t c = 0; c < d.c; ++c)
                for (int64_t ih = 0; ih < d.h; ++ih)
                    for (int64_t iw = 0; iw < d.w; ++iw) {
                        double sum = 0.0;
                        for (int64_t o = 0; o < d.oc; ++o)
                            for (int64_t i = 0; i < d.kh; ++i) {
                                const int64_t ty = ih + d.ph - i; // = yi * sh
                                if (ty < 0 || ty % d.sh != 0 || ty / d.sh >= oh) continue;
                                const int64_t yi = ty / d.sh;
                                for (int64_t j = 0; j < d.kw; ++j) {
                                    const int64_t tx = iw + d.pw - j;
                                    if (tx < 0 || tx % d.sw != 0 || tx / d.sw >= ow) continue;
                                    const int64_t xi = tx / d.sw;
                                    sum += double(dy[((n * d.oc + o) * oh + yi) * ow + xi]) *
                                           double(w[((o * d.c + c) * d.kh + i) * d.kw + j]);
                                }
                            }
                        dx[((n * d.c + c) * d.h + ih) * d.w + iw] = float(sum);
                    }
    }

    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        const ConvDesc &d = m_d;
        const int64_t oh = d.oh(), ow = d.ow();
        for (int64_t o = 0; o < d.oc; ++o)
            for (int64_t c = 0; c < d.c; ++c)
                for (int64_t i = 0; i < d.kh; ++i)
                    for (int64_t j = 0; j < d.kw; ++j) {
                        double sum = 0.0;
                        for (int64_t n = 0; n < d.n; ++n)
                            for (int64_t yi = 0; yi < oh; ++yi) {
                                const int64_t ih = yi * d.sh - d.ph + i;
                                if (ih < 0 || ih >= d.h) continue;
                                for (int64_t xi = 0; xi < ow; ++xi) {
                                    const int64_t iw = xi * d.sw - d.pw + j;
                                    if (iw < 0 || iw >= d.w) continue;
                                    sum += double(dy[((n * d.oc + o) * oh + yi) * ow + xi]) *
                                           double(x[((n * d.c + c) * d.h + ih) * d.w + iw]);
                                }
                            }
                        dw[((o * d.c + c) * d.kh + i) * d.kw + j] = float(sum);
                    }
        if (!d.bias || !db) return;
        for (int64_t o = 0; o < d.oc; ++o) {
            double sum = 0.0;
            for (int64_t n = 0; n < d.n; ++n)
                for (int64_t k = 0; k < oh * ow; ++k)
                    sum += dy[(n * d.oc + o) * oh * ow + k];
            db[o] = float(sum);
        }
    }

private:
    ConvDesc m_d;
};

} // namespace

std::unique_ptr<ConvKernel> makeReferenceConv(const ConvDesc &d)
{
    return std::make_unique<ReferenceConv>(d);
}

} // namespace fb
