#pragma once

// Helpers for gradient checks by central finite differences, shared by the kernel, layer and
// cross-backend tests. Framework-free (no Qt): a check returns a GradComparison whose ok and
// report() the test turns into an assertion, e.g.
//
//     auto cmp = fbtest::compare(analytic, fbtest::numericalGradient(loss, x, 1e-3), 1e-3, 1e-2);
//     QVERIFY2(cmp.ok, cmp.report().c_str());
//
// A vector-valued op is reduced to a scalar by a random projection, loss = sum(y * r) with a
// fixed random r: its gradient with respect to y is r, so a single backward call with dy = r
// checks every input gradient at once.

#include "core/base/rng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fbtest {

// Fills v with values uniform in [lo, hi), the same for the same seed on every platform.
inline void fillUniform(std::vector<float> &v, uint64_t seed, float lo = -1.0f, float hi = 1.0f)
{
    fb::Rng rng(seed);
    for (float &x : v)
        x = rng.uniform(lo, hi);
}

inline std::vector<float> uniformVector(size_t count, uint64_t seed, float lo = -1.0f,
                                        float hi = 1.0f)
{
    std::vector<float> v(count);
    fillUniform(v, seed, lo, hi);
    return v;
}

// Values uniform in magnitude in [minMagnitude, maxMagnitude) with a random sign: keeps inputs
// away from the kink of ReLU-like functions, where finite differences are meaningless.
inline std::vector<float> awayFromZeroVector(size_t count, uint64_t seed, float minMagnitude,
                                             float maxMagnitude)
{
    fb::Rng rng(seed);
    std::vector<float> v(count);
    for (float &x : v) {
        const float magnitude = rng.uniform(minMagnitude, maxMagnitude);
        x = (rng.next() & 1) ? magnitude : -magnitude;
    }
    return v;
}

// A random permutation of start, start + gap, start + 2 gap, ...: pairwise distinct values at
// least gap apart, so an arg-max (max pooling) cannot change under a perturbation below gap / 2.
inline std::vector<float> distinctVector(size_t count, uint64_t seed, float gap = 0.1f,
                                         float start = -1.0f)
{
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i)
        v[i] = start + gap * float(i);
    fb::Rng rng(seed);
    for (size_t i = count; i > 1; --i)
        std::swap(v[i - 1], v[size_t(rng.below(i))]);
    return v;
}

// sum(a[i] * b[i]) in double: the random-projection loss.
template <class A, class B> double dot(const A &a, const B &b)
{
    double sum = 0.0;
    for (size_t i = 0; i < a.size(); ++i)
        sum += double(a[i]) * double(b[i]);
    return sum;
}

// Central differences of a scalar function f(const std::vector<float> &) -> double at x:
// grad[i] = (f(x + eps e_i) - f(x - eps e_i)) / (x_i+ - x_i-). The divisor is the step actually
// taken after rounding x_i +- eps to float, which removes most of float's rounding error. x is
// perturbed in place and restored before returning.
template <class F> std::vector<double> numericalGradient(F &&f, std::vector<float> &x, double eps)
{
    std::vector<double> grad(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const float saved = x[i];
        const float up = float(double(saved) + eps);
        const float down = float(double(saved) - eps);
        x[i] = up;
        const double fUp = f(static_cast<const std::vector<float> &>(x));
        x[i] = down;
        const double fDown = f(static_cast<const std::vector<float> &>(x));
        x[i] = saved;
        grad[i] = (fUp - fDown) / (double(up) - double(down));
    }
    return grad;
}

// The outcome of comparing actual values against expected ones. An element passes when
// |actual - expected| <= atol + rtol * |expected| (numpy's allclose rule).
struct GradComparison {
    bool ok = true;
    size_t count = 0;       // expected elements
    size_t actualCount = 0; // a size mismatch fails the whole comparison
    size_t failures = 0;
    double maxAbsError = 0.0;
    double maxRelError = 0.0; // |actual - expected| / |expected|, over elements with expected != 0
    size_t worstIndex = 0;    // the element furthest beyond its tolerance
    double worstActual = 0.0;
    double worstExpected = 0.0;
    double atol = 0.0, rtol = 0.0;

    std::string report() const
    {
        char text[320];
        if (actualCount != count) {
            std::snprintf(text, sizeof text, "size mismatch: %zu actual values, %zu expected",
                          actualCount, count);
            return text;
        }
        std::snprintf(text, sizeof text,
                      "%zu of %zu elements outside atol %.3g + rtol %.3g; worst at [%zu]: "
                      "actual %.9g, expected %.9g; max abs error %.3g, max rel error %.3g",
                      failures, count, atol, rtol, worstIndex, worstActual, worstExpected,
                      maxAbsError, maxRelError);
        return text;
    }
};

// Compares two indexable sequences of equal size (std::vector, QList, std::array of float or
// double). A size mismatch or a NaN anywhere is a failure.
template <class A, class E>
GradComparison compare(const A &actual, const E &expected, double atol, double rtol)
{
    GradComparison c;
    c.atol = atol;
    c.rtol = rtol;
    c.count = size_t(expected.size());
    c.actualCount = size_t(actual.size());
    if (c.actualCount != c.count) {
        c.ok = false;
        c.failures = c.count;
        return c;
    }
    double worstExcess = -1.0;
    for (size_t i = 0; i < c.count; ++i) {
        const double a = double(actual[i]), e = double(expected[i]);
        const double err = std::abs(a - e);
        const double tolerance = atol + rtol * std::abs(e);
        const bool bad = !(err <= tolerance); // NaN compares false: a failure
        // How far beyond its tolerance the element is; the worst one goes into the report.
        double excess = 0.0;
        if (!std::isfinite(err))
            excess = INFINITY;
        else if (tolerance > 0.0)
            excess = err / tolerance;
        else if (err > 0.0)
            excess = INFINITY;
        if (std::isfinite(err)) c.maxAbsError = std::max(c.maxAbsError, err);
        if (e != 0.0 && std::isfinite(err))
            c.maxRelError = std::max(c.maxRelError, err / std::abs(e));
        if (bad) ++c.failures;
        if (excess > worstExcess) {
            worstExcess = excess;
            c.worstIndex = i;
            c.worstActual = a;
            c.worstExpected = e;
        }
    }
    c.ok = c.failures == 0;
    return c;
}

// Overload for a raw buffer of known length.
template <class E>
GradComparison compare(const float *actual, size_t count, const E &expected, double atol,
                       double rtol)
{
    return compare(std::vector<float>(actual, actual + count), expected, atol, rtol);
}

} // namespace fbtest
