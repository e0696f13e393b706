#pragma once

#include "core/base/result.h"

#include <string>
#include <vector>

namespace fb::dist {

// An interconnect for the scaling planner: bandwidth per rank and the latency of one message.
struct Link {
    std::string name;
    double bytesPerSecond = 0;
    double latencySeconds = 0;
};

// The presets `flowbench-cli plan --link` knows, from published figures: NVLink 4 (900 GB/s,
// ~1 us), InfiniBand NDR (400 Gb/s, ~1.5 us), PCIe 5 x16 (128 GB/s, ~2 us), 400G Ethernet
// (400 Gb/s, ~5 us).
const std::vector<Link> &linkPresets();
Result<Link> linkPreset(const std::string &name);

// One row of a plan: the estimated step for `ranks` ranks training data-parallel with the global
// batch fixed (what Flowbench does: each rank computes its 1/ranks share of the batch).
struct PlanRow {
    int ranks = 1;
    // The single-device step times the largest share of the batch a rank computes: 1/ranks
    // where the batch divides, and one sample's worth at least (more ranks than samples leaves
    // ranks with a padding sample that weighs nothing, as Flowbench runs them).
    double computeSeconds = 0;
    double allReduceSeconds = 0; // ring all-reduce of the gradients
    double stepSeconds = 0;      // their sum: the sums follow the backward pass (no overlap yet)
    double samplesPerSecond = 0;
    double speedup = 0;          // against one device
    double efficiency = 0;       // speedup / ranks
};

// Ring all-reduce (Patarasuk and Yuan; what NCCL and Open MPI do for large messages): each rank
// sends and receives 2(N-1)/N of the bytes, in 2(N-1) steps that each pay the latency.
double ringAllReduceSeconds(int ranks, double bytes, const Link &link);

PlanRow planRow(int ranks, double gradientBytes, double singleStepSeconds, int64_t globalBatch,
                const Link &link);

} // namespace fb::dist
