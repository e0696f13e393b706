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

void Backend::sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, int64_t step)
{
    for (const ParamSlot &s : group)
        sgdStep(s.w, s.g, s.s0, s.count, p, step);
}

void Backend::adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step)
{
    for (const ParamSlot &s : group)
        adamStep(s.w, s.g, s.s0, s.s1, s.count, p, step);
}

const char *precisionName(Precision p)
{
    switch (p) {
    case Precision::Float32:
        return "float32";
    case Precision::Tf32:
        return "tf32";
    case Precision::Bf16:
        return "bf16";
    }
    return "float32";
}

bool parsePrecision(const std::string &text, Precision &out)
{
    for (Precision p : {Precision::Float32, Precision::Tf32, Precision::Bf16})
        if (text == precisionName(p)) {
            out = p;
            return true;
        }
    return false;
}

void Backend::beginCapture()
{
    throw DeviceError("the " + name() + " backend cannot capture steps");
}

std::unique_ptr<CapturedWork> Backend::endCapture()
{
    throw DeviceError("the " + name() + " backend cannot capture steps");
}

void Backend::uploadAhead(std::span<const HostCopy> copies)
{
    for (const HostCopy &c : copies)
        upload(c.dst, c.host, c.bytes);
}

namespace {

class KnownLoss final : public PendingLoss {
public:
    explicit KnownLoss(LossResult r)
        : m_r(r)
    {}
    LossResult wait() override { return m_r; }

private:
    LossResult m_r;
};

} // namespace

std::unique_ptr<PendingLoss> Backend::readLatestLoss()
{
    return std::make_unique<KnownLoss>(latestLoss());
}

} // namespace fb
