// Reference batch normalization over (n, h, w) per channel of NCHW input. Statistics and the
// backward sums are computed in double; training normalizes with the biased variance (divide by
// n*h*w), as PyTorch does, and writes that variance (the layer derives the unbiased one for its
// running estimate).

#include "core/backend/cpu/reference_backend.h"

#include "core/base/check.h"

#include <cmath>

namespace fb {
namespace {

class ReferenceBatchNorm : public BatchNormKernel {
public:
    explicit ReferenceBatchNorm(const BatchNormDesc &d)
        : m_d(d)
    {
        FB_ASSERT(d.n > 0 && d.c > 0 && d.h > 0 && d.w > 0, "empty batch normalization");
    }

    void forwardTraining(const float *x, const float *gamma, const float *beta, float *y,
                         float *mean, float *var) override
    {
        const double count = double(m_d.n * plane());
        for (int64_t c = 0; c < m_d.c; ++c) {
            double sum = 0.0;
            forEach(c, [&](int64_t i) { sum += x[i]; });
            const double mu = sum / count;
            // Two passes (mean first) rather than E[x^2] - E[x]^2, which cancels badly.
            double sq = 0.0;
            forEach(c, [&](int64_t i) { sq += (x[i] - mu) * (x[i] - mu); });
            const double sigma2 = sq / count;
            mean[c] = float(mu);
            var[c] = float(sigma2);
            normalize(c, x, gamma, beta, mu, sigma2, y);
        }
    }

    void forwardInference(const float *x, const float *gamma, const float *beta, const float *mean,
                          const float *var, float *y) override
    {
        for (int64_t c = 0; c < m_d.c; ++c)
            normalize(c, x, gamma, beta, mean[c], var[c], y);
    }

    // With xhat = (x - mean) * istd and M = n*h*w per channel:
    //   dbeta = sum dy, dgamma = sum dy * xhat,
    //   dx = gamma * istd / M * (M * dy - dbeta - xhat * dgamma)
    // (the batch statistics depend on x, hence the two subtracted terms).
    void backward(const float *x, const float *dy, const float *gamma, const float *mean,
                  const float *var, float *dx, float *dgamma, float *dbeta) override
    {
        const double count = double(m_d.n * plane());
        for (int64_t c = 0; c < m_d.c; ++c) {
            const double mu = mean[c];
            const double istd = 1.0 / std::sqrt(double(var[c]) + double(m_d.eps));
            double sumDy = 0.0, sumDyXhat = 0.0;
            forEach(c, [&](int64_t i) {
                sumDy += dy[i];
                sumDyXhat += double(dy[i]) * (x[i] - mu) * istd;
            });
            const double scale = double(gamma[c]) * istd / count;
            forEach(c, [&](int64_t i) {
                const double xhat = (x[i] - mu) * istd;
                dx[i] = float(scale * (count * dy[i] - sumDy - xhat * sumDyXhat));
            });
            dgamma[c] = float(sumDyXhat);
            dbeta[c] = float(sumDy);
        }
    }

private:
    int64_t plane() const { return m_d.h * m_d.w; }

    // Calls f(flat index) for every element of channel c.
    template <class F> void forEach(int64_t c, F &&f) const
    {
        for (int64_t n = 0; n < m_d.n; ++n) {
            const int64_t base = (n * m_d.c + c) * plane();
            for (int64_t k = 0; k < plane(); ++k)
                f(base + k);
        }
    }

    void normalize(int64_t c, const float *x, const float *gamma, const float *beta, double mu,
                   double sigma2, float *y) const
    {
        const double istd = 1.0 / std::sqrt(sigma2 + double(m_d.eps));
        const double g = gamma[c], b = beta[c];
        forEach(c, [&](int64_t i) { y[i] = float(g * (x[i] - mu) * istd + b); });
    }

    BatchNormDesc m_d;
};

} // namespace

std::unique_ptr<BatchNormKernel> makeReferenceBatchNorm(const BatchNormDesc &d)
{
    return std::make_unique<ReferenceBatchNorm>(d);
}

} // namespace fb
