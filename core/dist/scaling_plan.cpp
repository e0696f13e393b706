#include "core/dist/scaling_plan.h"

#include <algorithm>

namespace fb::dist {

const std::vector<Link> &linkPresets()
{
    static const std::vector<Link> presets{
        {"nvlink", 900e9, 1e-6},
        {"infiniband", 400e9 / 8, 1.5e-6},
        {"pcie", 128e9, 2e-6},
        {"ethernet", 400e9 / 8, 5e-6},
    };
    return presets;
}

Result<Link> linkPreset(const std::string &name)
{
    std::string known;
    for (const Link &l : linkPresets()) {
        if (l.name == name) return l;
        known += (known.empty() ? "" : ", ") + l.name;
    }
    return makeError("unknown link '" + name + "' (" + known +
                     ", or give --bandwidth GB/s and --latency us)");
}

double ringAllReduceSeconds(int ranks, double bytes, const Link &link)
{
    if (ranks <= 1) return 0;
    const double n = ranks;
    return 2 * (n - 1) / n * bytes / link.bytesPerSecond + 2 * (n - 1) * link.latencySeconds;
}

PlanRow planRow(int ranks, double gradientBytes, double singleStepSeconds, int64_t globalBatch,
                const Link &link)
{
    PlanRow r;
    r.ranks = ranks;
    // The ranks go in step: the one with the largest share (at least one sample) sets the pace.
    const int64_t batch = std::max<int64_t>(globalBatch, 1);
    const int64_t largestShare = (batch + ranks - 1) / ranks;
    r.computeSeconds = singleStepSeconds * double(largestShare) / double(batch);
    r.allReduceSeconds = ringAllReduceSeconds(ranks, gradientBytes, link);
    r.stepSeconds = r.computeSeconds + r.allReduceSeconds;
    r.samplesPerSecond = r.stepSeconds > 0 ? double(globalBatch) / r.stepSeconds : 0;
    r.speedup = r.stepSeconds > 0 ? singleStepSeconds / r.stepSeconds : 0;
    r.efficiency = r.speedup / ranks;
    return r;
}

} // namespace fb::dist
