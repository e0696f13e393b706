#include "core/backend/backend.h"

#include <cstring>

namespace fb {

Tensor Backend::toDevice(const Tensor &t)
{
    if (!t.defined() || t.device() == device()) return t;
    Tensor out = empty(t.shape(), t.dtype());
    upload(out.raw(), t.raw(), t.bytes());
    return out;
}

Tensor Backend::toHost(const Tensor &t)
{
    if (!t.defined() || t.device().kind == Device::Kind::Cpu) return t;
    Tensor out = Tensor::empty(t.shape(), t.dtype());
    download(out.raw(), t.raw(), t.bytes());
    return out;
}

void Backend::sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, bool firstStep)
{
    for (const ParamSlot &s : group)
        sgdStep(s.w, s.g, s.s0, s.count, p, firstStep);
}

void Backend::adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step)
{
    for (const ParamSlot &s : group)
        adamStep(s.w, s.g, s.s0, s.s1, s.count, p, step);
}

} // namespace fb
