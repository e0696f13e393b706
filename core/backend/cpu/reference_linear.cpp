// Reference fully connected layer, y = x w^T + b with PyTorch's [out, in] weight layout. Plain
// triple loops with double sums.

#include "core/backend/cpu/reference_backend.h"

#include "core/base/check.h"

namespace fb {
namespace {

class ReferenceLinear : public LinearKernel {
public:
    explicit ReferenceLinear(const LinearDesc &d)
        : m_d(d)
    {
        FB_ASSERT(d.n > 0 && d.in > 0 && d.out > 0, "empty linear layer");
    }

    void forward(const float *x, const float *w, const float *b, float *y) override
    {
        for (int64_t n = 0; n < m_d.n; ++n)
            for (int64_t o = 0; o < m_d.out; ++o) {
                double sum = m_d.bias ? double(b[o]) : 0.0;
                for (int64_t i = 0; i < m_d.in; ++i)
                    sum += double(x[n * m_d.in + i]) * double(w[o * m_d.in + i]);
                y[n * m_d.out + o] = float(sum);
            }
    }

    // dx = dy w
    void backwardData(const float *dy, const float *w, float *dx) override
    {
        for (int64_t n = 0; n < m_d.n; ++n)
            for (int64_t i = 0; i < m_d.in; ++i) {
                double sum = 0.0;
                for (int64_t o = 0; o < m_d.out; ++o)
                    sum += double(dy[n * m_d.out + o]) * double(w[o * m_d.in + i]);
                dx[n * m_d.in + i] = float(sum);
            }
    }

    // dw = dy^T x, db = column sums of dy
    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        for (int64_t o = 0; o < m_d.out; ++o)
            for (int64_t i = 0; i < m_d.in; ++i) {
                double sum = 0.0;
                for (int64_t n = 0; n < m_d.n; ++n)
                    sum += double(dy[n * m_d.out + o]) * double(x[n * m_d.in + i]);
                dw[o * m_d.in + i] = float(sum);
            }
        if (!m_d.bias || !db) return;
        for (int64_t o = 0; o < m_d.out; ++o) {
            double sum = 0.0;
            for (int64_t n = 0; n < m_d.n; ++n)
                sum += dy[n * m_d.out + o];
            db[o] = float(sum);
        }
    }

private:
    LinearDesc m_d;
};

} // namespace

std::unique_ptr<LinearKernel> makeReferenceLinear(const LinearDesc &d)
{
    return std::make_unique<ReferenceLinear>(d);
}

} // namespace fb
