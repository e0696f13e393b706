#include "core/nn/optimizer.h"

#include <algorithm>
#include <cmath>

namespace fb::nn {

float LrSchedule::at(int64_t step) const
{
    float lr = base;
    switch (kind) {
    case Kind::Constant:
        break;
    case Kind::Step: {
        const int64_t epoch = step / std::max<int64_t>(stepsPerEpoch, 1);
        lr = base * std::pow(gamma, float(epoch / std::max<int64_t>(stepEpochs, 1)));
        break;
    }
    case Kind::Cosine: {
        const int64_t span = std::max<int64_t>(totalSteps - warmupSteps, 1);
        const float t = float(std::clamp<int64_t>(step - warmupSteps, 0, span)) / float(span);
        lr = minLr + (base - minLr) * 0.5f * (1.0f + std::cos(3.14159265358979f * t));
        break;
    }
    }
    if (step < warmupSteps) lr *= float(step + 1) / float(warmupSteps);
    return lr;
}

void Optimizer::attach(const std::vector<NamedParameter> &params)
{
    m_params = params;
    m_state.clear();
    for (const auto &p : m_params) {
        std::vector<Tensor> s;
        for (size_t k = 0; k < stateNames().size(); ++k)
            s.push_back(Tensor::zeros(p.param->value.shape()));
        m_state.push_back(std::move(s));
    }
    m_steps = 0;
}

void Optimizer::moveTo(Backend &b)
{
    for (auto &s : m_state)
        for (Tensor &t : s)
            t = b.toDevice(t);
}

std::vector<ParamSlot> Optimizer::slots() const
{
    std::vector<ParamSlot> out;
    out.reserve(m_params.size());
    for (size_t i = 0; i < m_params.size(); ++i) {
        const Parameter &q = *m_params[i].param;
        ParamSlot s;
        s.w = q.value.f32();
        s.g = q.grad.f32();
        s.s0 = m_state[i].size() > 0 ? m_state[i][0].f32() : nullptr;
        s.s1 = m_state[i].size() > 1 ? m_state[i][1].f32() : nullptr;
        s.count = q.value.numel();
        out.push_back(s);
    }
    return out;
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const
{
    std::vector<std::pair<std::string, Tensor>> out;
    const auto names = stateNames();
    for (size_t i = 0; i < m_params.size(); ++i)
        for (size_t k = 0; k < names.size(); ++k)
            out.emplace_back(m_params[i].name + "." + names[k], m_state[i][k]);
    return out;
}

namespace {

class Sgd final : public Optimizer {
public:
    explicit Sgd(const SgdParams &p)
        : m_p(p)
    {}
    std::string type() const override { return "sgd"; }
    void step(Backend &b, float lr) override
    {
        SgdParams p = m_p;
        p.lr = lr;
        ++m_steps;
        b.sgdSteps(slots(), p, m_steps);
    }

protected:
    std::vector<std::string> stateNames() const override { return {"momentum_buffer"}; }

private:
    SgdParams m_p;
};

class Adam final : public Optimizer {
public:
    explicit Adam(const AdamParams &p)
        : m_p(p)
    {}
    std::string type() const override { return m_p.decoupled ? "adamw" : "adam"; }
    void step(Backend &b, float lr) override
    {
        AdamParams p = m_p;
        p.lr = lr;
        ++m_steps;
        b.adamSteps(slots(), p, m_steps);
    }

protected:
    std::vector<std::string> stateNames() const override { return {"exp_avg", "exp_avg_sq"}; }

private:
    AdamParams m_p;
};

} // namespace

std::unique_ptr<Optimizer> makeSgd(const SgdParams &p)
{
    return std::make_unique<Sgd>(p);
}
std::unique_ptr<Optimizer> makeAdam(const AdamParams &p)
{
    return std::make_unique<Adam>(p);
}

} // namespace fb::nn
