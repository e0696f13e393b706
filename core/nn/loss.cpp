#include "core/nn/loss.h"

#include <algorithm>
#include <cmath>

namespace fb::nn {

Status Loss::check(const Shape &out, int32_t classes) const
{
    if (out.rank() != 1)
        return makeError(type() + " needs the model to output one score per class, shape [" +
                         std::to_string(classes) + "], but it outputs " + out.str());
    if (out[0] != classes)
        return makeError("the model outputs " + std::to_string(out[0]) +
                         " scores but the data has " + std::to_string(classes) +
                         " classes; set the last layer's out_features to " +
                         std::to_string(classes));
    return {};
}

namespace {

class CrossEntropy final : public Loss {
public:
    CrossEntropy(float smoothing, float adjustment)
        : m_smoothing(smoothing)
        , m_adjustment(adjustment)
    {}
    std::string type() const override { return "cross_entropy"; }
    // The adjusted step uploads its offsets when the batch's shape changes: not capturable.
    bool capturable() const override { return m_adjustment == 0.0f; }
    void setClassCounts(const std::vector<int64_t> &counts) override
    {
        const std::vector<double> shares = logClassShares(counts);
        m_offsets.assign(counts.size(), 0.0f);
        for (size_t c = 0; c < shares.size(); ++c)
            m_offsets[c] = float(double(m_adjustment) * shares[c]);
    }
    LossResult compute(Backend &b, const Tensor &out, const Tensor &labels,
                       const Tensor *dout) override
    {
        const int64_t n = out.shape()[0], classes = out.shape()[1];
        const float *logits = out.f32();
        if (dout && m_adjustment != 0.0f && int64_t(m_offsets.size()) == classes) {
            // The offsets are constants, so the gradient with respect to the adjusted outputs is
            // the gradient with respect to the outputs.
            if (!m_rows.defined() || m_rows.shape() != out.shape() ||
                m_rows.device() != out.device()) {
                Tensor host = Tensor::empty(out.shape());
                for (int64_t i = 0; i < n; ++i)
                    std::copy(m_offsets.begin(), m_offsets.end(), host.f32() + i * classes);
                m_rows = b.empty(out.shape());
                b.upload(m_rows.raw(), host.raw(), host.bytes());
                m_adjusted = b.empty(out.shape());
            }
            b.add(logits, m_rows.f32(), m_adjusted.f32(), n * classes);
            logits = m_adjusted.f32();
        }
        return b.softmaxCrossEntropy(logits, labels.data<int32_t>(), n, classes,
                                     dout ? dout->f32() : nullptr, m_smoothing);
    }

private:
    float m_smoothing, m_adjustment;
    std::vector<float> m_offsets; // tau * log(share), one per class
    Tensor m_rows, m_adjusted;    // the offsets for every row of a batch; the adjusted outputs
};

class Mse final : public Loss {
public:
    std::string type() const override { return "mse"; }
    bool capturable() const override { return false; }
    LossResult compute(Backend &b, const Tensor &out, const Tensor &labels,
                       const Tensor *dout) override
    {
        // The one-hot target and the arg-max are made on the host: MSE on class scores is rare
        // and small, and this keeps one version of it for every backend.
        const int64_t n = out.shape()[0], classes = out.shape()[1];
        const Tensor hostOut = b.toHost(out), hostLabels = b.toHost(labels);
        Tensor target = Tensor::zeros(out.shape());
        LossResult r;
        const int32_t *y = hostLabels.data<int32_t>();
        const float *o = hostOut.f32();
        for (int64_t i = 0; i < n; ++i) {
            target.f32()[i * classes + y[i]] = 1.0f;
            int64_t best = 0;
            for (int64_t c = 1; c < classes; ++c)
                if (o[i * classes + c] > o[i * classes + best]) best = c;
            r.correct += best == y[i];
        }
        if (!m_target.defined() || m_target.shape() != out.shape() ||
            m_target.device() != out.device())
            m_target = b.empty(out.shape());
        b.upload(m_target.raw(), target.raw(), target.bytes());
        // PyTorch's MSELoss: mean over every element.
        r.loss = b.mse(out.f32(), m_target.f32(), out.numel(), dout ? dout->f32() : nullptr);
        return r;
    }

private:
    Tensor m_target;
};

} // namespace

std::vector<double> logClassShares(const std::vector<int64_t> &counts)
{
    double total = 0;
    for (int64_t c : counts)
        total += double(std::max<int64_t>(c, 0));
    if (total <= 0) return {};
    std::vector<double> shares;
    for (int64_t c : counts)
        shares.push_back(std::log(std::max(double(c), 0.5) / total));
    return shares;
}

std::unique_ptr<Loss> makeCrossEntropy(float labelSmoothing, float logitAdjustment)
{
    return std::make_unique<CrossEntropy>(labelSmoothing, logitAdjustment);
}
std::unique_ptr<Loss> makeMse()
{
    return std::make_unique<Mse>();
}

} // namespace fb::nn
