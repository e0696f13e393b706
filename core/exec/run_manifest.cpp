#include "core/exec/run_manifest.h"

#include "core/exec/runner.h"
#include "core/graph/pipeline_file.h"
#include "core/io/manifest.h"
#include "core/io/run_folder.h"
#include "core/io/sha256.h"

#include <filesystem>

namespace fb::exec {

using nlohmann::json;

Result<json> runManifest(const ManifestInput &in)
{
    json m;
    m["format"] = "flowbench.manifest";
    m["version"] = 1;
    m["created"] = io::isoTimeNow();
    m["pipeline"] = {
        {"name", std::filesystem::path(in.pipelineName).stem().string()},
        // The pipeline as run (pipeline.json), byte for byte; and the hash a checkpoint carries,
        // which leaves out what may change on resume (epochs, checkpoint policy, device).
        {"sha256", io::sha256Hex(graph::serializePipeline(*in.doc))},
        {"resume_hash", pipelineHash(*in.doc)}};
    json data = json::object();
    for (const auto &[node, dataset] : in.data) {
        if (data.contains(node)) continue;
        Result<json> files = io::dataFilesJson(dataset->files);
        if (!files) {
            Error e = files.error();
            e.node = node;
            return e;
        }
        json entry = std::move(files).value();
        entry["samples"] = dataset->count;
        data[node] = std::move(entry);
    }
    m["data"] = data;
    m["seed"] = in.seed;
    m["threads"] = in.threads;
    m["data_workers"] = in.dataWorkers;
    m["precision"] = in.precision;
    m["first_step"] = in.firstStep;

    json device{{"name", in.device.str()}};
    for (const ComputeDevice &d : listDevices().devices)
        if (d.device == in.device) device["model"] = d.name;
    json software = json::object();
    for (const auto &[name, version] : in.software) {
        // The GPU driver belongs to the device: the same build runs on machines with others.
        if (name == "cuda_driver") {
            if (in.device.kind != Device::Kind::Cpu) device["driver"] = version;
            continue;
        }
        software[name] = version;
    }
    m["device"] = device;
    m["software"] = software;
    m["os"] = io::operatingSystem();
    return m;
}

} // namespace fb::exec
