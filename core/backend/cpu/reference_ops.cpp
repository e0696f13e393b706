// Reference versions of the small ops of training: element-wise sums, the losses, dropout and
// the optimizer steps. Reductions are summed in double; the optimizers follow PyTorch's
// single-tensor formulas step by step, in float, so that a trajectory matches PyTorch closely.

#include "core/backend/cpu/reference_backend.h"

#include "core/base/check.h"
#include "core/base/rng.h"

#include <algorithm>
#include <cmath>

namespace fb {

void ReferenceBackend::add(const float *a, const float *b, float *y, int64_t count)
{
    for (int64_t i = 0; i < count; ++i)
        y[i] = a[i] + b[i];
}

void ReferenceBackend::accumulate(float *y, const float *x, int64_t count)
{
    for (int64_t i = 0; i < count; ++i)
        y[i] += x[i];
}

void ReferenceBackend::axpby(float *y, const float *x, int64_t count, float a, float b)
{
    for (int64_t i = 0; i < count; ++i)
        y[i] = a * y[i] + b * x[i];
}

void ReferenceBackend::gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                                  int64_t rowElems)
{
    for (int64_t i = 0; i < n; ++i)
        std::copy_n(table + index[i] * rowElems, rowElems, dst + i * rowElems);
}

void ReferenceBackend::gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index,
                                    int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        dst[i] = table[index[i]];
}

LossResult ReferenceBackend::softmaxCrossEntropy(const float *logits, const int32_t *labels,
                                                 int64_t n, int64_t classes, float *dlogits,
                                                 float smoothing)
{
    FB_ASSERT(n > 0 && classes > 0, "empty softmax cross-entropy");
    LossResult result;
    double total = 0.0;
    // The target (1 - s) onehot + s / classes: the loss is -sum_k target_k log p_k.
    const double s = smoothing, spread = s / double(classes);
    for (int64_t r = 0; r < n; ++r) {
        const float *row = logits + r * classes;
        const int32_t label = labels[r];
        // As the GPU kernel does (it cannot assert): a label outside [0, classes) adds nothing to
        // the loss, is not correct and gets no gradient. The runner refuses such data before any
        // step (it names the data node), so this is the backend contract, not a path data takes.
        if (label < 0 || label >= classes) {
            if (dlogits) std::fill(dlogits + r * classes, dlogits + (r + 1) * classes, 0.0f);
            continue;
        }
        // Subtracting the row maximum keeps exp() from overflowing; its index is the prediction
        // (the first maximum on ties).
        int64_t best = 0;
        for (int64_t k = 1; k < classes; ++k)
            if (row[k] > row[best]) best = k;
        const double maxLogit = row[best];
        double sumExp = 0.0;
        for (int64_t k = 0; k < classes; ++k)
            sumExp += std::exp(double(row[k]) - maxLogit);
        const double logSumExp = maxLogit + std::log(sumExp);
        double sumLogits = 0.0;
        if (s != 0.0)
            for (int64_t k = 0; k < classes; ++k)
                sumLogits += row[k];
        total += logSumExp - (1.0 - s) * double(row[label]) - spread * sumLogits;
        if (best == label) ++result.correct;
        if (dlogits) {
            for (int64_t k = 0; k < classes; ++k) {
                const double p = std::exp(double(row[k]) - logSumExp);
                const double target = (k == label ? 1.0 - s : 0.0) + spread;
                dlogits[r * classes + k] = float((p - target) / double(n));
            }
        }
    }
    result.loss = float(total / double(n));
    m_latestLoss = result;
    return result;
}

float ReferenceBackend::mse(const float *pred, const float *target, int64_t count, float *dpred)
{
    FB_ASSERT(count > 0, "empty mean squared error");
    double total = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        const double diff = double(pred[i]) - double(target[i]);
        total += diff * diff;
        if (dpred) dpred[i] = float(2.0 * diff / double(count));
    }
    return float(total / double(count));
}

void ReferenceBackend::dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                                      uint64_t stepSeed, uint64_t salt)
{
    const uint64_t seed = mix64(stepSeed ^ salt);
    FB_ASSERT(p >= 0.0f && p <= 1.0f, "dropout probability outside [0, 1]");
    // Never used when p == 1 (nothing is kept), so its infinity does no harm.
    const float scale = 1.0f / (1.0f - p);
    for (int64_t i = 0; i < count; ++i) {
        // The top 24 bits as a float in [0, 1), exactly as Rng::uniform(): the same on every
        // device and for every split of the index range between threads.
        const float u = float(mix64(seed + uint64_t(i)) >> 40) * (1.0f / 16777216.0f);
        mask[i] = u >= p ? scale : 0.0f;
        y[i] = x[i] * mask[i];
    }
}

void ReferenceBackend::dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count)
{
    for (int64_t i = 0; i < count; ++i)
        dx[i] = dy[i] * mask[i];
}

void ReferenceBackend::sgdStep(float *w, const float *g, float *buf, int64_t count,
                               const SgdParams &p, int64_t step)
{
    FB_ASSERT(p.momentum == 0.0f || buf, "SGD with momentum needs a buffer");
    FB_ASSERT(step >= 1, "SGD steps count from 1");
    const bool firstStep = step == 1;
    for (int64_t i = 0; i < count; ++i) {
        float grad = g[i];
        if (p.weightDecay != 0.0f) grad += p.weightDecay * w[i];
        if (p.momentum != 0.0f) {
            // PyTorch starts the buffer at the first gradient, without dampening.
            buf[i] = firstStep ? grad : p.momentum * buf[i] + (1.0f - p.dampening) * grad;
            grad = p.nesterov ? grad + p.momentum * buf[i] : buf[i];
        }
        w[i] -= p.lr * grad;
    }
}

void ReferenceBackend::adamStep(float *w, const float *g, float *m, float *v, int64_t count,
                                const AdamParams &p, int64_t step)
{
    FB_ASSERT(step >= 1, "Adam steps count from 1");
    // Scalars in double, as PyTorch computes them in Python floats.
    const double bias1 = 1.0 - std::pow(double(p.beta1), double(step));
    const double bias2 = 1.0 - std::pow(double(p.beta2), double(step));
    const float stepSize = float(double(p.lr) / bias1);
    const float bias2Sqrt = float(std::sqrt(bias2));
    const float decay = float(1.0 - double(p.lr) * double(p.weightDecay));
    for (int64_t i = 0; i < count; ++i) {
        float grad = g[i];
        if (p.weightDecay != 0.0f) {
            if (p.decoupled)
                w[i] *= decay; // AdamW: shrink the weight, keep decay out of the moments
            else
                grad += p.weightDecay * w[i]; // Adam: L2 term joins the gradient
        }
        m[i] = p.beta1 * m[i] + (1.0f - p.beta1) * grad;
        v[i] = p.beta2 * v[i] + (1.0f - p.beta2) * grad * grad;
        const float denom = std::sqrt(v[i]) / bias2Sqrt + p.eps;
        w[i] -= stepSize * m[i] / denom;
    }
}

} // namespace fb
