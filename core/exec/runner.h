#pragma once

#include "core/base/log.h"
#include "core/dist/communicator.h"
#include "core/exec/control.h"
#include "core/exec/evaluation.h"
#include "core/exec/job.h"
#include "core/metrics/hardware_monitor.h"

#include <string>
#include <vector>

namespace fb::exec {

struct RunOptions {
    std::string pipelineName;      // for messages and the default output folder
    std::string device;            // "" = the train node's preference
    int threads = 0;               // 0 = every core
    std::string outDir;            // "" = no files written
    std::string resumeDir;         // continue from the newest checkpoint under this folder
    bool profile = false;          // time every layer and report where the step time went
    int dataWorkers = 0;           // 0 = the train node's data_workers (itself 0 = automatic)
    RunControl *control = nullptr; // commands for the run (pause, stop, ...); may be null
    int64_t *stepsDone = nullptr;  // kept at the steps trained so far (a failed run reports it)
    // Resume from a checkpoint of a changed pipeline (another learning rate, say), where the
    // weights still fit; a warning says what changed. Off: such a checkpoint is refused.
    bool acceptChanges = false;
    // Stop (as a stop command would) once this many steps are done in all; 0: train to the end.
    // `flowbench-cli reproduce` of a run that was stopped early stops where it did.
    int64_t maxSteps = 0;
    // A learning-rate range test (`flowbench-cli lr-find`): `steps` steps from the initial
    // weights with the rate growing geometrically from lrMin to lrMax, whatever the schedule;
    // no evaluation; it ends early, as a success, when the loss diverges (not finite, or above
    // 4 times the lowest smoothed loss). steps 0: an ordinary run.
    struct LrRange {
        double lrMin = 1e-6, lrMax = 1;
        int64_t steps = 0;
    } lrRange;
    // (name, version) of software the engine cannot know itself, for the run's manifest: the
    // CLI adds Flowbench's version and commit and the Qt its window was built with.
    std::vector<std::pair<std::string, std::string>> software;
    // Trains on this backend instead of the device's (tests: a backend that records steps as a
    // GPU's graphs would); null for every real run.
    Backend *backend = nullptr;
    // The job's ranks when a launcher (mpirun, srun) started this process as one of several
    // (dist::world()): the run trains data-parallel, and only rank 0 writes files and reports
    // (the others get no outDir and may get an observer that ignores everything). Null: alone.
    dist::Communicator *comm = nullptr;
};

struct RunInfo {
    std::string pipeline, device, outDir, modelSummary;
    int threads = 0, dataWorkers = 0;
    int ranks = 1; // processes training data-parallel (threads and data workers are per rank)
    int64_t firstStep = 0; // a resumed run starts after this many steps
    std::vector<std::pair<std::string, std::string>> libraries; // (name, version)
    int64_t epochs = 0, firstEpoch = 0, stepsPerEpoch = 0, trainSamples = 0, parameters = 0;
};

struct Progress {
    int64_t epoch = 0, epochs = 0; // epoch counts from 0
    int64_t step = 0, stepInEpoch = 0, stepsPerEpoch = 0, totalSteps = 0;
    float loss = 0, accuracy = 0; // this epoch so far
    float recentLoss = 0;         // mean over the steps since the previous report
    float recentAccuracy = 0;     // accuracy over the same steps
    int64_t samples = 0;          // training samples processed by this run so far
    float lr = 0;
    double samplesPerSecond = 0, elapsedSeconds = 0, etaSeconds = 0;
    double dataWaitShare = 0; // share of this run's training time spent waiting for data
    // Data-parallel runs (empty or 0 otherwise), over this run's training time so far:
    double commShare = 0;      // rank 0's share in collectives (the two below together)
    double rankWaitShare = 0;  // the part of it rank 0 waited for slower ranks to arrive
    double allReduceShare = 0; // the part the sums themselves took (the least any rank spent)
    struct Rank {
        double samplesPerSecond = 0; // its own samples over its own compute time
        double commShare = 0;        // its share in collectives, waiting included
    };
    std::vector<Rank> ranks; // by rank
};

// Data-flow statistics for the canvas (about twice a second). Rates and shares cover the time
// since the previous report; counts and seconds are totals.
struct DataFlowReport {
    struct Edge {
        std::string from, to;
        int64_t batches = 0, samples = 0, bytes = 0;
        double batchesPerSecond = 0, samplesPerSecond = 0, bytesPerSecond = 0;
        int64_t queued = 0, capacity = 0;
        double consumerWaitSeconds = 0, consumerWaitShare = 0;
        bool cached = false;
    };
    struct Stage {
        std::string node;
        bool random = false, cached = false;
        int64_t batches = 0;
        double busySeconds = 0, busyShare = 0; // share of the workers' time in this stage
    };
    std::string consumer; // the train node
    int workers = 0;
    double intervalSeconds = 0;
    double waitShare = 0;      // the trainer's data wait over its step time, this interval
    double totalWaitShare = 0; // the same over the whole run
    std::string bottleneck;    // the node that limits throughput (the consumer when not data)
    int64_t cachedSamples = 0, cacheSamples = 0;
    // The source's samples and those it holds in memory (fewer when it streams: data larger
    // than its cache_mb), and the samples served so far from memory (hits), from the disk cache
    // and decoded from their files; hitRate: hits over all three, 1 before any.
    int64_t sourceSamples = 0, sourceHeld = 0, sourceHits = 0, sourceDecoded = 0,
            sourceFromDisk = 0;
    double sourceHitRate = 1;
    // The shares of the workers' time, this interval, that the source spent reading samples
    // from its disk cache and decoding them from their files (parts of its busyShare).
    double sourceDiskShare = 0, sourceDecodeShare = 0;
    // Why the bottleneck holds the trainer up, where the source is it: "decoding" or "waiting on
    // disk"; "" otherwise (see bottleneckCause of RunSummary for the run's).
    std::string bottleneckCause;
    std::vector<Edge> edges;
    std::vector<Stage> stages;
};

struct CheckpointInfo {
    std::string dir, reason;     // reason: epoch | steps | command | stop
    int64_t epoch = 0, step = 0; // epoch: whole epochs done; step: global steps done
};

struct EpochResult {
    int64_t epoch = 0, epochs = 0;
    float trainLoss = 0, trainAccuracy = 0;
    double seconds = 0, samplesPerSecond = 0;
    // One per evaluate node, each with its confusion matrix and misclassified samples.
    std::vector<Evaluation> evaluations;
    // A data-parallel run: the digest of the model's weights and buffers, checked the same on
    // every rank at the epoch's end (a rank that differs stops the run); "" otherwise.
    std::string weightsDigest;
};

struct RunSummary {
    int64_t epochs = 0, steps = 0;
    double trainSamplesPerSecond = 0, wallSeconds = 0;
    float finalLoss = 0;
    float testAccuracy = -1; // -1 when no evaluate node ran
    std::string device, outDir;
    bool stopped = false;     // ended early by a stop command; a checkpoint holds its state
    bool diverged = false;    // a learning-rate range test ended where the loss diverged
    double dataWaitShare = 0; // share of training time spent waiting for data
    std::string bottleneck;   // the node that limited throughput over the run
    // Data-parallel runs: what bounded the train node's steps: "compute", "all-reduce" or
    // "other ranks" (the largest share of rank 0's step time), with the shares of Progress. A
    // run whose bottleneck is its data source: "decoding" or "waiting on disk" where most of the
    // source's time went to that; "" otherwise.
    std::string bottleneckCause;
    double commShare = 0, rankWaitShare = 0, allReduceShare = 0;
    int slowestRank = -1; // the rank that computed longest (data-parallel runs)
};

// How the executor reports (DESIGN.md: describing and running are separate; observers watch).
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void runStarted(const RunInfo &) {}
    virtual void progress(const Progress &) {}
    virtual void epochFinished(const EpochResult &) {}
    virtual void checkpointWritten(const CheckpointInfo &) {}
    // After every training step: its loss and the learning rate it used (step from 1).
    virtual void stepFinished(int64_t /*step*/, float /*lr*/, float /*loss*/) {}
    virtual void dataflow(const DataFlowReport &) {}
    virtual void commandHandled(const CommandAck &) {}
    virtual void message(LogLevel, const std::string &) {}
    // A message about one node (a data source's skipped files): the event stream carries the
    // node, so the window can point at it. By default a message that names the node.
    virtual void nodeMessage(LogLevel level, const std::string &node, const std::string &text)
    {
        message(level, "node '" + node + "': " + text);
    }
    // About twice a second while training, from the monitor's own thread.
    virtual void hardware(const metrics::HardwareSample &) {}
};

// Loads the data, compiles the model, trains, evaluates and checkpoints. The document must have
// passed graph::validate(). Errors name the node or file at fault. With an output folder, each
// epoch's evaluations also go to OUT/evaluation.json (evaluationJson() with the gallery).
Result<RunSummary> runPipeline(const graph::PipelineDocument &doc, const RunOptions &options,
                               RunObserver &observer);

// FNV-1a of the pipeline's canonical JSON without positions and without the train node's epochs,
// checkpoint policy, data_workers and device (changing those continues the same run): a
// checkpoint from another pipeline is refused on resume.
std::string pipelineHash(const graph::PipelineDocument &doc);

} // namespace fb::exec
