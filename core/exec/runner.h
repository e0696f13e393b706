#pragma once

#include "core/base/log.h"
#include "core/exec/job.h"
#include "core/metrics/hardware_monitor.h"

#include <string>
#include <vector>

namespace fb::exec {

struct RunOptions {
    std::string pipelineName; // for messages and the default output folder
    std::string device;       // "" = the train node's preference
    int threads = 0;          // 0 = every core
    std::string outDir;       // "" = no files written
    std::string resumeDir;    // continue from the newest checkpoint under this folder
    bool profile = false;     // time every layer and report where the step time went
};

struct RunInfo {
    std::string pipeline, device, outDir, modelSummary;
    int threads = 0;
    int64_t epochs = 0, firstEpoch = 0, stepsPerEpoch = 0, trainSamples = 0, parameters = 0;
};

struct Progress {
    int64_t epoch = 0, epochs = 0; // epoch counts from 0
    int64_t step = 0, stepInEpoch = 0, stepsPerEpoch = 0, totalSteps = 0;
    float loss = 0, accuracy = 0; // this epoch so far
    float lr = 0;
    double samplesPerSecond = 0, elapsedSeconds = 0, etaSeconds = 0;
};

struct Evaluation {
    std::string node;
    float loss = 0, accuracy = 0;
    int64_t samples = 0;
};

struct EpochResult {
    int64_t epoch = 0, epochs = 0;
    float trainLoss = 0, trainAccuracy = 0;
    double seconds = 0, samplesPerSecond = 0;
    std::vector<Evaluation> evaluations;
};

struct RunSummary {
    int64_t epochs = 0, steps = 0;
    double trainSamplesPerSecond = 0, wallSeconds = 0;
    float finalLoss = 0;
    float testAccuracy = -1; // -1 when no evaluate node ran
    std::string device, outDir;
};

// How the executor reports (DESIGN.md: describing and running are separate; observers watch).
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void runStarted(const RunInfo &) {}
    virtual void progress(const Progress &) {}
    virtual void epochFinished(const EpochResult &) {}
    virtual void checkpointWritten(const std::string &dir, int64_t epoch) {}
    virtual void message(LogLevel, const std::string &) {}
    // About twice a second while training, from the monitor's own thread.
    virtual void hardware(const metrics::HardwareSample &) {}
};

// Loads the data, compiles the model, trains, evaluates and checkpoints. The document must have
// passed graph::validate(). Errors name the node or file at fault.
Result<RunSummary> runPipeline(const graph::PipelineDocument &doc, const RunOptions &options,
                               RunObserver &observer);

// FNV-1a of the pipeline's canonical JSON without positions and without the train node's epochs,
// checkpoint_every and device (changing those continues the same run): a checkpoint from another
// pipeline is refused on resume.
std::string pipelineHash(const graph::PipelineDocument &doc);

} // namespace fb::exec
