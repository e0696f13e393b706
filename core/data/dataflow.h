#pragma once

#include "core/base/result.h"
#include "core/data/dataset.h"
#include "core/data/transforms.h"
#include "core/tensor/tensor.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fb::data {

struct Batch {
    Tensor x;                     // F32 [n, c, h, w]: pixels scaled to [0, 1], then transformed
    Tensor y;                     // I32 [n]
    int64_t epoch = 0, index = 0; // index: the batch's position within its epoch
    // A rank of a data-parallel job whose share of a short last batch is empty gets one sample
    // that does not count (its gradient weighs nothing), so that every rank runs every step.
    bool padding = false;
};

// One transform node of a data chain.
struct Stage {
    std::string node;
    std::shared_ptr<const Transform> transform;
};

struct DataFlowOptions {
    int64_t batchSize = 128;
    bool shuffle = true;
    uint64_t seed = 0;
    bool dropLast = false;
    int workers = 1;       // threads of the pool that runs the stages (at least 1)
    int queueCapacity = 4; // batches each edge may hold, counting those being made for it
    std::string sourceNode = "source", consumerNode = "consumer"; // names in the statistics
    // The chain before the first random stage is computed once and kept for later epochs when
    // it fits in this many bytes (0: never cache).
    int64_t cacheLimitBytes = int64_t(1) << 30;
    // Data-parallel training: batchSize is the global batch; this flow gives rank shardRank of
    // shardCount its contiguous share of each one (the first ranks one sample more when it does
    // not divide), from the same epoch order on every rank.
    int shardRank = 0, shardCount = 1;
};

// Statistics of one wire of the chain, counted since the flow was made.
struct EdgeStats {
    std::string from, to;
    int64_t batches = 0, samples = 0, bytes = 0; // handed over this wire
    int64_t queued = 0, capacity = 0;            // batches waiting in it now
    double consumerWaitSeconds = 0; // time the consumer had room and nothing to work on
    bool cached = false;            // the wire is skipped this epoch: its data comes from cache
};

struct StageStats {
    std::string node;
    bool random = false, cached = false;
    int64_t batches = 0;
    double busySeconds = 0; // worker time spent in this stage (the source: gathering samples)
};

struct FlowStats {
    std::vector<StageStats> stages; // the source first, then the chain's transforms
    std::vector<EdgeStats> edges;   // stage i -> stage i+1, the last one into the consumer
    double consumerWaitSeconds = 0; // time next() spent waiting for the chain
    int64_t cachedSamples = 0, cacheSamples = 0; // cached so far / samples the cache will hold
    // The source's samples, those held in memory (all of them unless it streams), and the samples
    // it has served since the flow was made: from memory (hits), from the disk cache and decoded
    // from their files.
    int64_t sourceSamples = 0, sourceHeld = 0, sourceHits = 0, sourceDecoded = 0,
            sourceFromDisk = 0;
    // The workers' time in the source spent reading samples from the disk cache and decoding
    // them from their files (a part of its busySeconds; the rest is copying held samples).
    double sourceDiskSeconds = 0, sourceDecodeSeconds = 0;
    int workers = 0;
};

// The data stages of a run (DESIGN.md, "Running a pipeline"): a source that gathers the samples
// of each batch in the epoch's order, then the chain's transforms, run by a pool of worker
// threads. Consecutive stages hand batches over bounded queues: a stage starts a batch only when
// its outgoing queue has room (backpressure), so at most queueCapacity batches exist per wire.
// Workers may finish batches out of order; each queue is keyed by batch index and its consumer
// takes them in order, so the batches, and the random draws of every sample, are the same for
// any number of workers. Statistics for each wire and stage feed the data-flow view and the
// bottleneck report.
class DataFlow {
public:
    // Checks the chain's shapes; errors name the stage's node.
    static Result<std::unique_ptr<DataFlow>> create(std::shared_ptr<const ImageDataset> dataset,
                                                    std::vector<Stage> stages,
                                                    DataFlowOptions options);
    // Stops the workers, also while they wait on a full queue or run a stage.
    ~DataFlow();
    DataFlow(const DataFlow &) = delete;
    DataFlow &operator=(const DataFlow &) = delete;

    Shape sampleShape() const { return m_shapes.back(); } // [c, h, w] at the end of the chain
    int64_t batchesPerEpoch() const;
    const ImageDataset &dataset() const { return *m_dataset; }
    const DataFlowOptions &options() const { return m_options; }

    // (Re)starts the stages on `epoch`, dropping whatever the previous epoch had in flight.
    // firstBatch skips the batches a resumed run has already done.
    void startEpoch(int64_t epoch, int64_t firstBatch = 0);
    // The next batch of the current epoch, in order; std::nullopt at the epoch's end (or before
    // any startEpoch). Blocks while the chain is behind. A stage that failed (a throwing
    // transform, out of memory) gives an error naming its node.
    Result<std::optional<Batch>> next();
    // Stops the workers' current epoch early; next() then returns std::nullopt.
    void cancel();

    FlowStats stats() const;

    // Samples of the whole (global) batch `index`, every rank's share together.
    int64_t globalBatchSize(int64_t index) const;

    // The permutation of sample indices used for an epoch (identity when !shuffle): Fisher-Yates
    // driven by our own Rng, because std::shuffle and the std distributions are
    // implementation-defined and the order must be the same on every platform.
    static std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                           bool shuffle);
    // The seed of a sample's random draws in a stage: a function of (seed, node, epoch, sample).
    static uint64_t sampleSeed(uint64_t seed, const std::string &node, int64_t epoch,
                               int64_t sample);

private:
    struct Item {
        Tensor x, y;
        std::vector<int64_t> samples; // data set indices, for seeds and the cache
    };
    // One running stage: position 0 is the source; its queue feeds the next running stage.
    struct Lane {
        int stage = -1; // index into m_stages; -1 for the source
        std::map<int64_t, Item> queue;
        int inflight = 0;
        int64_t nextIn = 0; // next batch index this lane takes
        bool starving = false;
        std::chrono::steady_clock::time_point starvingSince;
    };

    // Where this flow's share of batch `index` lies in the epoch's order: `count` samples from
    // `begin`. An empty share is the batch's first sample, as padding that counts for nothing.
    struct Share {
        int64_t begin = 0, count = 0;
        bool padding = false;
    };
    Share share(int64_t index) const;

    DataFlow(std::shared_ptr<const ImageDataset> dataset, std::vector<Stage> stages,
             std::vector<Shape> shapes, DataFlowOptions options);
    void worker();
    int pickLane() const; // under m_mutex: the most downstream lane that can start a batch
    void updateStarvation();
    Item gather(int64_t index, const std::vector<int64_t> &order, bool fromCache) const;
    void runStage(int stage, Item &item, int64_t epoch, bool fillCache);
    void stopEpoch(std::unique_lock<std::mutex> &lock);

    std::shared_ptr<const ImageDataset> m_dataset;
    std::vector<Stage> m_stages;
    std::vector<Shape> m_shapes; // m_shapes[i]: sample shape entering stage i; back(): output
    DataFlowOptions m_options;
    int m_cacheStages = 0; // the leading non-random stages whose output is cached (0: no cache)
    std::vector<float> m_cache;
    std::vector<uint8_t> m_cached; // per sample: its cache row is filled (guarded by m_mutex)
    int64_t m_cachedCount = 0;

    mutable std::mutex m_mutex;
    std::condition_variable m_work;  // workers wait for a lane that can run, or stop
    std::condition_variable m_ready; // the consumer waits for its next batch
    std::vector<std::thread> m_workers;
    bool m_shutdown = false;
    bool m_active = false, m_useCache = false;
    int64_t m_epoch = 0, m_nBatches = 0, m_nextOut = 0;
    std::shared_ptr<const std::vector<int64_t>> m_order;
    std::vector<Lane> m_lanes;
    std::optional<Error> m_failure; // the first failed batch's error, for the consumer
    int64_t m_failedIndex = std::numeric_limits<int64_t>::max();
    // Statistics, by fixed position (0: the source; i: stage i-1; edges: after that position).
    std::vector<StageStats> m_stageStats;
    std::vector<EdgeStats> m_edgeStats;
    double m_consumerWait = 0;
    // Samples the source served from memory and decoded from files (gather, on the workers).
    mutable std::atomic<int64_t> m_heldServed{0}, m_decodedServed{0}, m_diskServed{0};
    mutable std::atomic<int64_t> m_diskNanos{0}, m_decodeNanos{0};
};

} // namespace fb::data
