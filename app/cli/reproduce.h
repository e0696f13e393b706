#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace fb::cli {

// What `reproduce` asks the run command to run: the original's pipeline as run, on its device,
// with its threads and data workers, stopping where it stopped.
struct ReproduceRun {
    std::string pipeline;     // RUN/pipeline.json
    std::string pipelineName; // for messages
    std::string device;
    int threads = 0, dataWorkers = 0;
    std::string outDir;
    int64_t maxSteps = 0;
};

// Runs `run` (flowbench-cli run's body: progress on stderr, the run folder, and the summary
// object back rather than on stdout, where reproduce prints its own result) and returns its
// exit code.
using RunFunction = std::function<int(const ReproduceRun &, nlohmann::json &summary)>;

// `flowbench-cli reproduce RUN [--out DIR] [--json]` (docs/runs.md): runs the run folder's
// pipeline again as its manifest says and compares every step's loss bit for bit with its
// losses.csv. Exit 0 identical, 1 a loss differs or the reproduction failed, 2 bad input (not a
// run folder, a run made before manifests, damaged files).
int reproduce(int argc, char **argv, const RunFunction &run);

} // namespace fb::cli
