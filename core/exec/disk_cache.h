#pragma once

#include "core/exec/job.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::exec {

// What `flowbench-cli cache PIPELINE` did for one data source of the pipeline.
struct SourceCacheReport {
    std::string node, type;
    // written: decoded and cached now; reused: a cache for exactly these files and settings was
    // there (nothing decoded); none: not a file source (nothing to decode); error: see message.
    std::string status;
    std::string path;    // the cache file
    std::string message; // what loading said about the cache (data::ImageDataset::diskNote)
    int64_t samples = 0, skipped = 0, bytes = 0;
    double seconds = 0;
};

// Makes the disk cache of decoded samples (data/sample_cache.h) of every file source of the job,
// training and evaluation, as a run reads them: later runs then load without decoding a file,
// and a data set larger than memory streams from the cache instead of decoding each epoch.
// Nothing is held in memory meanwhile; each source is decoded on every core.
std::vector<SourceCacheReport> cacheSources(const TrainingJob &job);

} // namespace fb::exec
