#pragma once

#include "core/backend/backend.h"

#include <memory>
#include <string>
#include <vector>

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
    // The number of training samples of each class (the training data's labels), given once
    // before the first compute(): for a loss that depends on how common each class is
    // (cross_entropy's logit adjustment). Others ignore it.
    virtual void setClassCounts(const std::vector<int64_t> &counts) { (void)counts; }
    // dout may be null (evaluation).
    virtual LossResult compute(Backend &b, const Tensor &out, const Tensor &labels,
                               const Tensor *dout) = 0;
};

// Label smoothing s in [0, 1): the target is (1 - s) onehot + s / classes (PyTorch's
// label_smoothing), which keeps the model from growing ever surer of its training labels.
// Logit adjustment tau >= 0 (Menon et al. 2021, "Long-tail learning via logit adjustment", their
// logit-adjusted loss): in training, tau * log(share of class c among the training labels) is
// added to output c before the softmax, so that what the model learns to output is the evidence
// for each class without how common it was in training: at tau 1 its arg-max is the class most
// likely if every class were as common as every other. Evaluation (no dout) reads the outputs as
// they are. Needs setClassCounts; a class with no training sample counts as half of one.
std::unique_ptr<Loss> makeCrossEntropy(float labelSmoothing = 0.0f, float logitAdjustment = 0.0f);
// The natural log of each class's share of the training labels (counts per class), a class
// with no sample counting as half of one; empty when there are none. What cross_entropy's logit
// adjustment adds (times tau) and what Predictor::setBalance divides by.
std::vector<double> logClassShares(const std::vector<int64_t> &counts);
// Mean squared error against one-hot labels.
std::unique_ptr<Loss> makeMse();

} // namespace fb::nn
