#include "core/exec/disk_cache.h"

#include "core/data/sample_cache.h"
#include "core/exec/node_type.h"

#include <chrono>
#include <set>

namespace fb::exec {

std::vector<SourceCacheReport> cacheSources(const TrainingJob &job)
{
    std::vector<const DataSpec *> specs{&job.trainData};
    for (const EvaluateSpec &e : job.evaluations)
        specs.push_back(&e.data);
    std::vector<SourceCacheReport> out;
    std::set<std::string> done;
    for (const DataSpec *s : specs) {
        if (!done.insert(s->sourceNode).second) continue; // one source feeding two chains
        SourceCacheReport r;
        r.node = s->sourceNode;
        r.type = s->sourceType;
        const bool files = s->fromImageFiles || s->samples == DataSpec::SampleKind::Audio;
        if (!files) {
            r.status = "none";
            r.message = "not a file source: its samples are read as they are, not decoded";
            out.push_back(std::move(r));
            continue;
        }
        DataSpec spec = *s;
        // Always written, and nothing held: every sample goes to the cache, none to memory.
        spec.imageFiles.diskCache = spec.audioFiles.diskCache = data::DiskCacheOptions::Mode::On;
        spec.imageFiles.cacheBytes = spec.audioFiles.cacheBytes = 1;
        const NodeType *type = nodeCatalog().find(spec.sourceType);
        const auto start = std::chrono::steady_clock::now();
        Result<data::ImageDataset> ds = type && type->loadSource
                                            ? type->loadSource(spec)
                                            : Result<data::ImageDataset>(makeError(
                                                  "the node type cannot load data"));
        r.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!ds.ok()) {
            r.status = "error";
            r.message = ds.error().message;
        } else {
            r.samples = ds->count;
            r.skipped = int64_t(ds->skipped.size());
            r.message = ds->diskNote;
            if (ds->disk) {
                r.path = ds->disk->path();
                r.bytes = ds->disk->fileBytes();
                r.status = ds->diskCacheRead ? "reused" : "written";
            } else {
                r.status = "error"; // no cache could be written (the note says why)
                if (r.message.empty()) r.message = "none of its files is readable";
            }
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace fb::exec
