#pragma once

#include "core/graph/graph.h"

#include <functional>
#include <string>
#include <vector>

namespace fb::cli {

// Loads and validates a pipeline with settings; problems are printed by the caller's loader.
using PipelineLoader = std::function<Result<graph::PipelineDocument>(
    const std::string &pipeline, const std::vector<std::string> &settings)>;

// `flowbench-cli lr-find PIPELINE` (docs/runs.md): the learning-rate range test. Trains from
// the initial weights for a number of steps with the rate growing geometrically over a range,
// until the loss diverges, and suggests the rate where the smoothed loss falls fastest. Writes
// nothing; the optimizer's value is never changed, only suggested.
int lrFind(int argc, char **argv, const PipelineLoader &load);

struct LrSuggestion {
    double suggested = 0; // where the smoothed loss falls fastest, before its lowest point
    double lowest = 0;    // where the smoothed loss is lowest
    std::vector<double> smoothed;
};
// From (rate, loss) points in rising rate: the losses smoothed by a centred moving average, and
// the rates above.
LrSuggestion suggestLearningRate(const std::vector<double> &lrs, const std::vector<double> &losses);

} // namespace fb::cli
