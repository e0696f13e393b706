#pragma once

#include "core/nn/model.h"

#include <memory>
#include <string>
#include <vector>

namespace fb::nn {

// Learning rate as a function of the global step: optional linear warm-up, then constant, step
// decay (times gamma every stepEpochs epochs) or cosine annealing to minLr over the run.
struct LrSchedule {
    enum class Kind { Constant, Step, Cosine };
    Kind kind = Kind::Constant;
    float base = 0.01f;
    int64_t warmupSteps = 0;
    int64_t stepEpochs = 10;
    float gamma = 0.1f;
    float minLr = 0.0f;
    int64_t stepsPerEpoch = 1;
    int64_t totalSteps = 1;

    float at(int64_t step) const;
};

class Optimizer {
public:
    virtual ~Optimizer() = default;
    virtual std::string type() const = 0;
    // Binds the parameters and makes the per-parameter state (zeros, in host memory).
    void attach(const std::vector<NamedParameter> &params);
    // Moves the state into the backend's memory, where the parameters are.
    void moveTo(Backend &b);
    // One update of every parameter from its gradient, at learning rate lr.
    virtual void step(Backend &b, float lr) = 0;
    int64_t steps() const { return m_steps; }
    void setSteps(int64_t s) { m_steps = s; }
    // The state saved in checkpoints: "conv1.weight.momentum_buffer", ...
    std::vector<std::pair<std::string, Tensor>> state() const;

protected:
    virtual std::vector<std::string> stateNames() const = 0;
    // The whole group as the backend's fused update takes it.
    std::vector<ParamSlot> slots() const;
    std::vector<NamedParameter> m_params;
    std::vector<std::vector<Tensor>> m_state; // per parameter, per state name
    int64_t m_steps = 0;
};

std::unique_ptr<Optimizer> makeSgd(const SgdParams &p);
std::unique_ptr<Optimizer> makeAdam(const AdamParams &p);

} // namespace fb::nn
