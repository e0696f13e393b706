#pragma once

#include "core/base/result.h"

#include <functional>
#include <string>
#include <vector>

namespace fb::cli {

// The pipeline with these settings: its problems, none when it would run.
using SweepValidator = std::function<std::vector<Error>(const std::string &pipeline,
                                                        const std::vector<std::string> &settings)>;

// `flowbench-cli sweep PIPELINE --set-range NODE.PARAM=V1,V2,... ...` (docs/runs.md): one
// ordinary run per combination of the values (or N of them at random), K at a time, each in a
// `flowbench-cli run` child process of its own with a folder of its own in the runs folder,
// named after its values and tagged with the sweep's name; the sweep's record, SWEEP.sweep.json
// beside them, lists the trials and their results as they end. Exit 0 when every trial ran,
// 1 when one failed or the sweep was stopped, 2 for bad input (checked for every trial before
// any runs).
int sweep(int argc, char **argv, const SweepValidator &validate);

} // namespace fb::cli
