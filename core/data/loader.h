#pragma once

#include "core/data/dataset.h"
#include "core/tensor/tensor.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace fb::data {

struct Batch {
    Tensor x;                     // F32 [n, c, h, w]: pixels scaled to [0, 1], then transformed
    Tensor y;                     // I32 [n]
    int64_t epoch = 0, index = 0; // index: the batch's position within its epoch
};

// A deterministic per-sample float transform, applied by the loader thread to each batch in the
// order given. Implementations must be thread-safe for concurrent const calls.
class Transform {
public:
    virtual ~Transform() = default;
    // x holds n samples of sampleSize floats each, contiguous.
    virtual void apply(float *x, int64_t n, int64_t sampleSize) const = 0;
};

// y = (x - mean) / std. A true division, not a multiply by 1/std, so every backend and the
// inference path can reproduce the values bit for bit from the two parameters.
class Normalize : public Transform {
public:
    Normalize(float mean, float stddev);
    void apply(float *x, int64_t n, int64_t sampleSize) const override;
    float mean() const { return m_mean; }
    float stddev() const { return m_std; }

private:
    float m_mean, m_std;
};

struct LoaderOptions {
    int64_t batchSize = 128;
    bool shuffle = true;
    uint64_t seed = 0;
    bool dropLast = false;
    int prefetch = 2; // batches buffered ahead of the consumer (at least 1)
};

// Cuts a data set into batches on a producer thread that runs up to `prefetch` batches ahead of
// the consumer through a bounded queue (it blocks when the queue is full: backpressure). The
// sample order of an epoch depends only on (seed, epoch, count), so a run resumed from a
// checkpoint with startEpoch(e, firstBatch) sees exactly the batches it would have seen.
// startEpoch() and next() are meant for one consumer thread; the statistics may be read from any.
class Loader {
public:
    Loader(std::shared_ptr<const ImageDataset> dataset, LoaderOptions options,
           std::vector<std::shared_ptr<const Transform>> transforms = {});
    // Stops and joins the producer, also mid-epoch while it waits on a full queue.
    ~Loader();
    Loader(const Loader &) = delete;
    Loader &operator=(const Loader &) = delete;

    int64_t batchesPerEpoch() const;
    // (Re)starts the producer for `epoch`, dropping whatever the previous one had buffered.
    // firstBatch skips the batches a resumed run has already done.
    void startEpoch(int64_t epoch, int64_t firstBatch = 0);
    // The next batch of the current epoch; std::nullopt at the epoch's end (or before any
    // startEpoch). Blocks while the producer is behind. An exception thrown while the producer
    // built a batch (out of memory, a throwing transform) is rethrown here.
    std::optional<Batch> next();

    // The permutation of sample indices used for an epoch (identity when !shuffle): Fisher-Yates
    // driven by our own Rng, because std::shuffle and the std distributions are
    // implementation-defined and the order must be the same on every platform.
    static std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                           bool shuffle);

    // For the data-flow view: batches ready in the queue now, and the total time next() has
    // spent waiting for the producer (the consumer starved for data).
    int64_t queuedBatches() const;
    double waitedSeconds() const;

    const ImageDataset &dataset() const { return *m_dataset; }
    const LoaderOptions &options() const { return m_options; }

private:
    void stopProducer();
    void produce(int64_t epoch, int64_t firstBatch);
    Batch makeBatch(const std::vector<int64_t> &order, int64_t epoch, int64_t index) const;

    std::shared_ptr<const ImageDataset> m_dataset;
    LoaderOptions m_options;
    std::vector<std::shared_ptr<const Transform>> m_transforms;

    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::condition_variable m_notFull;  // producer waits for space
    std::condition_variable m_notEmpty; // consumer waits for a batch or the end
    std::deque<Batch> m_queue;
    bool m_stop = false;
    bool m_producerDone = true;
    std::exception_ptr m_failure;
    double m_waited = 0;
};

} // namespace fb::data
