#include "core/exec/weight_average.h"

#include "core/backend/backend.h"
#include "core/base/check.h"
#include "core/nn/model.h"

namespace fb::exec {

WeightAverage::WeightAverage(nn::Model &model)
    : m_model(model)
{}

io::NamedTensors WeightAverage::live() const
{
    io::NamedTensors out;
    for (auto &p : m_model.parameters())
        out.emplace_back(p.name, p.param->value);
    for (auto &[name, b] : m_model.buffers())
        out.emplace_back(name, b);
    return out;
}

void WeightAverage::add(Backend &backend)
{
    const io::NamedTensors weights = live();
    if (m_count == 0) {
        m_mean.clear();
        for (auto &[name, t] : weights) {
            m_mean.push_back(backend.empty(t.shape(), t.dtype()));
            backend.copy(m_mean.back().raw(), t.raw(), t.bytes());
        }
    } else {
        // mean += (w - mean) / (n + 1), as a weighted sum.
        const float n = float(m_count);
        for (size_t i = 0; i < weights.size(); ++i)
            backend.axpby(m_mean[i].f32(), weights[i].second.f32(), weights[i].second.numel(),
                          n / (n + 1), 1 / (n + 1));
    }
    ++m_count;
}

void WeightAverage::exchange(Backend &backend)
{
    FB_ASSERT(m_count > 0, "no weights averaged to exchange");
    const io::NamedTensors weights = live();
    if (m_spare.size() != weights.size()) {
        m_spare.clear();
        for (auto &[name, t] : weights)
            m_spare.push_back(backend.empty(t.shape(), t.dtype()));
    }
    // The live weights go to the spare, the mean into the model; the spare is then the mean.
    for (size_t i = 0; i < weights.size(); ++i) {
        const Tensor &w = weights[i].second;
        backend.copy(m_spare[i].raw(), w.raw(), w.bytes());
        backend.copy(w.raw(), m_mean[i].raw(), w.bytes());
        std::swap(m_mean[i], m_spare[i]);
    }
}

io::NamedTensors WeightAverage::tensors() const
{
    const io::NamedTensors weights = live();
    io::NamedTensors out;
    for (size_t i = 0; m_count > 0 && i < weights.size(); ++i)
        out.emplace_back("average." + weights[i].first, m_mean[i]);
    return out;
}

Status WeightAverage::load(const io::SafetensorsFile &file, int64_t count, const std::string &path)
{
    m_mean.clear();
    m_count = 0;
    if (count <= 0) return {};
    for (auto &[name, t] : live()) {
        const Tensor *src = file.find("average." + name);
        if (!src) return fileError(path, "tensor 'average." + name + "' is missing");
        if (src->shape() != t.shape() || src->dtype() != t.dtype())
            return fileError(path, "tensor 'average." + name + "' has shape " + src->shape().str() +
                                       ", the model needs " + t.shape().str());
        Tensor copy = Tensor::empty(t.shape(), t.dtype());
        copy.copyFrom(*src);
        m_mean.push_back(std::move(copy));
    }
    m_count = count;
    return {};
}

void WeightAverage::moveTo(Backend &backend)
{
    for (Tensor &t : m_mean)
        t = backend.toDevice(t);
}

} // namespace fb::exec
