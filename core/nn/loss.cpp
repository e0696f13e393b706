#include "core/nn/loss.h"

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
    explicit CrossEntropy(float smoothing)
        : m_smoothing(smoothing)
    {}
    std::string type() const override { return "cross_entropy"; }
    LossResult compute(Backend &b, const Tensor &out, const Tensor &labels,
                       const Tensor *dout) override
    {
        return b.softmaxCrossEntropy(out.f32(), labels.data<int32_t>(), out.shape()[0],
                                     out.shape()[1], dout ? dout->f32() : nullptr, m_smoothing);
    }

private:
    float m_smoothing;
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

std::unique_ptr<Loss> makeCrossEntropy(float labelSmoothing)
{
    return std::make_unique<CrossEntropy>(labelSmoothing);
}
std::unique_ptr<Loss> makeMse()
{
    return std::make_unique<Mse>();
}

} // namespace fb::nn
