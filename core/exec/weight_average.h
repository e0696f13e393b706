#pragma once

#include "core/base/result.h"
#include "core/io/safetensors.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fb {
class Backend;
namespace nn {
class Model;
}
} // namespace fb

namespace fb::exec {

// Stochastic weight averaging (Izmailov et al., "Averaging Weights Leads to Wider Optima and
// Better Generalization", 2018): the mean of the model's weights at the end of each of the last
// epochs (the train node's average_last), batch norm's running statistics averaged with them, as
// PyTorch's torch.optim.swa_utils.AveragedModel(use_buffers=True) does. The optimizer goes on
// from the live weights; the epochs' evaluations from then on, and the saved model, are of the
// mean. Our own (no library holds a model of ours): the mean lives beside the weights, on their
// device, and costs one axpby a tensor an epoch.
class WeightAverage {
public:
    explicit WeightAverage(nn::Model &model);

    // Epochs averaged so far.
    int64_t count() const { return m_count; }
    // Adds the weights as they are now to the mean (on the backend that holds them).
    void add(Backend &backend);
    // The model holds the mean instead of its live weights, or back again (each call swaps).
    void exchange(Backend &backend);
    // What a checkpoint holds besides the model: "average.NAME" for each weight and buffer, none
    // before the first add().
    io::NamedTensors tensors() const;
    // A checkpoint's mean of `count` epochs, read into host memory before the model moves to its
    // device; names `path` when a tensor is missing or does not fit.
    Status load(const io::SafetensorsFile &file, int64_t count, const std::string &path);
    // Moves a loaded mean to where the model's weights are (after nn::Model::moveTo).
    void moveTo(Backend &backend);

private:
    // The model's weights and buffers by name, as they are now (moveTo gives them new memory).
    io::NamedTensors live() const;

    nn::Model &m_model;
    std::vector<Tensor> m_mean, m_spare;
    int64_t m_count = 0;
};

} // namespace fb::exec
