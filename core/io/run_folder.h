#pragma once

#include "core/base/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fb::io {

// The files of a run folder (docs/runs.md). Every run, from the window or the command line,
// keeps them all: the run is found, reopened, compared, resumed and reproduced from them.
inline constexpr const char *kRunFile = "run.json";           // name, tags, status, results
inline constexpr const char *kManifestFile = "manifest.json"; // what it ran with
inline constexpr const char *kEventsFile = "events.jsonl";    // the event stream, as it came
inline constexpr const char *kLossesFile = "losses.csv";      // every step's loss, exactly
inline constexpr const char *kPipelineFile = "pipeline.json"; // the pipeline as run
inline constexpr const char *kModelFile = "model.safetensors";
inline constexpr const char *kEvaluationFile = "evaluation.json";
inline constexpr const char *kCheckpointsDir = "checkpoints";
inline constexpr const char *kCheckpointFile = "checkpoint.safetensors"; // in each step-N/
inline constexpr int kRunFileVersion = 1;

// One run as the Runs panel lists it. Read from run.json; a folder from before run.json (an
// older Flowbench) is read from its event log and checkpoints instead; a damaged one still
// gives an entry, with `problem` saying what is wrong.
struct RunEntry {
    std::string dir;  // the folder, as given
    std::string id;   // the folder's name
    std::string name; // the name people gave it; by default the folder's name
    std::vector<std::string> tags;
    std::string pipeline; // the pipeline's name (its file's stem)
    std::string device;
    // running, ok, stopped, failed, killed (it says running but its process is gone), or
    // unknown (an older folder that does not say)
    std::string status;
    std::string started;      // ISO 8601, local time with its offset; "" when unknown
    std::string error;        // a failed run's message
    double seconds = -1;      // wall time; -1 unknown
    double testAccuracy = -1; // the last evaluation's; -1 none
    double bestTestAccuracy = -1;
    double finalLoss = -1; // -1 unknown
    int64_t steps = 0, epochs = 0, epochsPlanned = 0;
    bool hasModel = false, hasCheckpoint = false, hasEvents = false;
    int version = 0;     // run.json's version; 0 for an older folder without one
    std::string problem; // non-empty: the folder is damaged, and why

    // A stopped, killed or failed run with a checkpoint can be continued (--resume).
    bool resumable() const
    {
        return hasCheckpoint && (status == "stopped" || status == "killed" || status == "failed");
    }
};

// Whether `dir` looks like a run folder at all (run.json, an event log, a pipeline as run or
// checkpoints): other folders beside the runs are not listed.
bool isRunFolder(const std::string &dir);

// One run folder; never fails: what cannot be read is the entry's `problem`.
RunEntry readRun(const std::string &dir);

// Every run folder directly under `root`, newest first (by start time, else the folder's time).
// A missing root is an empty list.
std::vector<RunEntry> listRuns(const std::string &root);

// run.json as a JSON object, or an error naming the file (missing, not JSON, nested too deep,
// not an object, a newer version).
Result<nlohmann::json> readRunFile(const std::string &dir);
// Writes run.json atomically.
Status writeRunFile(const std::string &dir, const nlohmann::json &run);

// Renames and tags a run (what the Runs panel edits): run.json's "name" and "tags", the rest
// kept. An older folder without run.json gets one. Tags are trimmed, empty ones dropped,
// duplicates kept once.
Status setRunNameAndTags(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &tags);

// The .safetensors file a model path names: a run folder's model.safetensors (else its newest
// checkpoint), a checkpoint folder's file, or the file itself; the error names the path.
Result<std::string> modelFileOf(const std::string &path);

// This machine's name (for run.json's "host": a "running" run on this host whose process is
// gone was killed).
std::string hostName();

// The current local time as ISO 8601 with its offset ("2026-11-25T20:18:10+0000").
std::string isoTimeNow();
// A field of a JSON object someone else wrote: its text, or "" / `fallback` when it is missing
// or of another kind (the object itself may be anything).
std::string jsonString(const nlohmann::json &j, const char *key);
double jsonNumber(const nlohmann::json &j, const char *key, double fallback = 0);
// The current local time for a folder's name ("20261125-201810"): runs, sweeps, put-aside runs.
std::string timeStamp();

// A JSON file that a person or another program may have written: the nesting is checked before
// parsing (core/base/json_nesting.h); errors name the file.
Result<nlohmann::json> readJsonFile(const std::string &path);

} // namespace fb::io
