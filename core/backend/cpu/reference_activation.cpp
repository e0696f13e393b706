// Reference element-wise activations, computed in double. The backward pass takes the op's
// input x (not its output), which is what every kind needs for GELU and what keeps the interface
// the same for all kinds.

#include "core/backend/cpu/reference_backend.h"

#include "core/base/check.h"

#include <cmath>

namespace fb {
namespace {

class ReferenceActivation : public ActivationKernel {
public:
    explicit ReferenceActivation(const ActivationDesc &d)
        : m_d(d)
    {
        FB_ASSERT(d.count >= 0, "negative activation size");
    }

    void forward(const float *x, float *y) override
    {
        for (int64_t i = 0; i < m_d.count; ++i)
            y[i] = float(value(x[i]));
    }

    void backward(const float *x, const float *dy, float *dx) override
    {
        for (int64_t i = 0; i < m_d.count; ++i)
            dx[i] = float(double(dy[i]) * slope(x[i]));
    }

private:
    double value(double x) const
    {
        switch (m_d.kind) {
        case Activation::Relu:
            return x > 0.0 ? x : 0.0;
        case Activation::LeakyRelu:
            return x > 0.0 ? x : x * double(m_d.alpha);
        case Activation::Sigmoid:
            return 1.0 / (1.0 + std::exp(-x));
        case Activation::Tanh:
            return std::tanh(x);
        case Activation::Gelu:
            return 0.5 * x * (1.0 + std::erf(x * kInvSqrt2));
        case Activation::Silu: // x * sigmoid(x), also called swish
            return x / (1.0 + std::exp(-x));
        }
        return 0.0;
    }

    // d value / dx. At exactly 0, ReLU's slope is 0 and LeakyReLU's is alpha (PyTorch's choice:
    // both test x > 0).
    double slope(double x) const
    {
        switch (m_d.kind) {
        case Activation::Relu:
            return x > 0.0 ? 1.0 : 0.0;
        case Activation::LeakyRelu:
            return x > 0.0 ? 1.0 : double(m_d.alpha);
        case Activation::Sigmoid: {
            const double s = 1.0 / (1.0 + std::exp(-x));
            return s * (1.0 - s);
        }
        case Activation::Tanh: {
            const double t = std::tanh(x);
            return 1.0 - t * t;
        }
        case Activation::Gelu: {
            // d/dx [x * Phi(x)] = Phi(x) + x * phi(x)
            const double cdf = 0.5 * (1.0 + std::erf(x * kInvSqrt2));
            const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
            return cdf + x * pdf;
        }
        case Activation::Silu: {
            // d/dx [x * s(x)] = s(x) * (1 + x * (1 - s(x)))
            const double s = 1.0 / (1.0 + std::exp(-x));
            return s * (1.0 + x * (1.0 - s));
        }
        }
        return 0.0;
    }

    static constexpr double kInvSqrt2 = 0.70710678118654752440;
    static constexpr double kInvSqrt2Pi = 0.39894228040143267794;

    ActivationDesc m_d;
};

} // namespace

std::unique_ptr<ActivationKernel> makeReferenceActivation(const ActivationDesc &d)
{
    return std::make_unique<ReferenceActivation>(d);
}

} // namespace fb
