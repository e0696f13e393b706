#pragma once

#include "core/backend/backend.h"

#include <memory>
#include <string>

namespace fb::nn {

// A loss against integer class labels: the value, the number of correct arg-max predictions,
// and the gradient with respect to the model's output.
class Loss {
public:
    virtual ~Loss() = default;
    virtual std::string type() const = 0;
    // Checks the model's per-sample output shape against the data's class count.
    virtual Status check(const Shape &outputSample, int32_t classes) const;
    // Whether compute() only queues device work, so that a training step can be captured
    // (Backend::beginCapture); false where it reads the output on the host.
    virtual bool capturable() const { return true; }
    // dout may be null (evaluation).
    virtual LossResult compute(Backend &b, const Tensor &out, const Tensor &labels,
                               const Tensor *dout) = 0;
};

// Label smoothing s in [0, 1): the target is (1 - s) onehot + s / classes (PyTorch's
// label_smoothing), which keeps the model from growing ever surer of its training labels.
std::unique_ptr<Loss> makeCrossEntropy(float labelSmoothing = 0.0f);
// Mean squared error against one-hot labels.
std::unique_ptr<Loss> makeMse();

} // namespace fb::nn
