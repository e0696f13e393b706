#pragma once

#include "core/backend/backend.h"
#include "core/data/dataset.h"
#include "core/graph/graph.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace fb::exec {

// What a run ran with, for its folder's manifest.json (docs/runs.md): enough to run it again
// and, where a second run differs, to say what differs. `flowbench-cli reproduce` compares two
// of them with io::manifestDifferences().
struct ManifestInput {
    const graph::PipelineDocument *doc = nullptr;
    std::string pipelineName; // as the person named it (file or example)
    Device device;
    int threads = 0, dataWorkers = 0;
    uint64_t seed = 0;
    std::string precision;
    int64_t firstStep = 0; // a resumed run starts after this many steps
    // Each data source node with the data set it read (the files it read are in it).
    std::vector<std::pair<std::string, const data::ImageDataset *>> data;
    // (name, version) of the software: Flowbench and its commit, the libraries.
    std::vector<std::pair<std::string, std::string>> software;
};

// The manifest as JSON.
Result<nlohmann::json> runManifest(const ManifestInput &in);

} // namespace fb::exec
