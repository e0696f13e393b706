#include "core/data/dataflow.h"

#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/base/rng.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <utility>

namespace fb::data {

using Clock = std::chrono::steady_clock;

namespace {

double secondsBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

} // namespace

Result<std::unique_ptr<DataFlow>> DataFlow::create(std::shared_ptr<const ImageDataset> dataset,
                                                   std::vector<Stage> stages,
                                                   DataFlowOptions options)
{
    FB_ASSERT(dataset, "DataFlow needs a data set");
    FB_ASSERT(options.batchSize >= 1, "batch size must be at least 1");
    FB_ASSERT((dataset->floatSamples() ? dataset->values.size() : dataset->pixels.size()) ==
                      size_t(dataset->heldSamples() * dataset->sampleSize()) &&
                  dataset->labels.size() == size_t(dataset->count),
              "data set buffers do not match its count and sample shape");
    std::vector<Shape> shapes{Shape{dataset->channels, dataset->height, dataset->width}};
    for (const Stage &s : stages) {
        FB_ASSERT(s.transform, "null transform");
        auto out = s.transform->outputShape(shapes.back());
        if (!out.ok()) return nodeError(s.node, out.error().message);
        if (s.transform->inPlace() && out.value() != shapes.back())
            return nodeError(s.node, "an in-place transform must keep the sample shape");
        shapes.push_back(out.value());
    }
    return std::unique_ptr<DataFlow>(
        new DataFlow(std::move(dataset), std::move(stages), std::move(shapes), options));
}

DataFlow::DataFlow(std::shared_ptr<const ImageDataset> dataset, std::vector<Stage> stages,
                   std::vector<Shape> shapes, DataFlowOptions options)
    : m_dataset(std::move(dataset))
    , m_stages(std::move(stages))
    , m_shapes(std::move(shapes))
    , m_options(std::move(options))
{
    // A queue of zero would never let a batch through; one is the least that works.
    m_options.queueCapacity = std::max(m_options.queueCapacity, 1);
    m_options.workers = std::max(m_options.workers, 1);

    // Cache the output of the leading non-random transforms (the source's own decoding is
    // already cheap: its bytes stay uint8 in memory).
    int deterministic = 0;
    while (deterministic < int(m_stages.size()) &&
           !m_stages[size_t(deterministic)].transform->random())
        ++deterministic;
    const int64_t bytes =
        m_dataset->count * m_shapes[size_t(deterministic)].numel() * int64_t(sizeof(float));
    // A streaming source has a memory budget; the cache would not keep to it.
    if (deterministic > 0 && bytes <= m_options.cacheLimitBytes && !m_dataset->streaming()) {
        m_cacheStages = deterministic;
        m_cached.assign(size_t(m_dataset->count), 0);
    }

    m_stageStats.resize(m_stages.size() + 1);
    m_stageStats[0].node = m_options.sourceNode;
    for (size_t i = 0; i < m_stages.size(); ++i) {
        m_stageStats[i + 1].node = m_stages[i].node;
        m_stageStats[i + 1].random = m_stages[i].transform->random();
    }
    m_edgeStats.resize(m_stages.size() + 1);
    for (size_t i = 0; i < m_edgeStats.size(); ++i) {
        m_edgeStats[i].from = m_stageStats[i].node;
        m_edgeStats[i].to =
            i + 1 < m_stageStats.size() ? m_stageStats[i + 1].node : m_options.consumerNode;
        m_edgeStats[i].capacity = m_options.queueCapacity;
    }
    useCallingThreadForOpenCv();
    for (int i = 0; i < m_options.workers; ++i)
        m_workers.emplace_back([this] { worker(); });
}

DataFlow::~DataFlow()
{
    {
        std::unique_lock lock(m_mutex);
        m_shutdown = true;
        m_active = false;
    }
    m_work.notify_all();
    m_ready.notify_all();
    for (auto &t : m_workers)
        t.join();
}

int64_t DataFlow::batchesPerEpoch() const
{
    const int64_t count = m_dataset->count, bs = m_options.batchSize;
    // Not (count + bs - 1) / bs: that overflows for a huge batch size.
    return count / bs + (!m_options.dropLast && count % bs != 0 ? 1 : 0);
}

int64_t DataFlow::globalBatchSize(int64_t index) const
{
    const int64_t begin = index * m_options.batchSize;
    return std::clamp<int64_t>(m_dataset->count - begin, 0, m_options.batchSize);
}

DataFlow::Share DataFlow::share(int64_t index) const
{
    const int64_t n = globalBatchSize(index);
    const int64_t ranks = std::max(1, m_options.shardCount), r = m_options.shardRank;
    const int64_t each = n / ranks, extra = n % ranks;
    const int64_t count = each + (r < extra ? 1 : 0);
    if (count == 0) return {index * m_options.batchSize, 1, true};
    return {index * m_options.batchSize + r * each + std::min(r, extra), count, false};
}

std::vector<int64_t> DataFlow::epochOrder(int64_t count, uint64_t seed, int64_t epoch, bool shuffle)
{
    std::vector<int64_t> order(size_t(std::max<int64_t>(count, 0)));
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int64_t(i);
    if (!shuffle) return order;
    Rng rng(mix64(seed) ^ mix64(uint64_t(epoch) + 1));
    shuffleWith(order, rng);
    return order;
}

uint64_t DataFlow::sampleSeed(uint64_t seed, const std::string &node, int64_t epoch, int64_t sample)
{
    return mix64(mix64(seed ^ fnv1a(node)) + mix64((uint64_t(epoch) << 40) ^ uint64_t(sample)));
}

void DataFlow::stopEpoch(std::unique_lock<std::mutex> &lock)
{
    m_active = false;   // no lane starts another batch (pickLane)
    updateStarvation(); // close the open starvation intervals before the lanes go
    m_work.notify_all();
    m_ready.notify_all();
    // Let the batches in progress finish first (they are dropped with the lanes): workers keep
    // references into the lanes, and the cache must not be read while it is written.
    m_ready.wait(lock, [&] {
        int busy = 0;
        for (const auto &lane : m_lanes)
            busy += lane.inflight;
        return busy == 0;
    });
    m_lanes.clear();
}

void DataFlow::startEpoch(int64_t epoch, int64_t firstBatch)
{
    FB_ASSERT(firstBatch >= 0, "firstBatch must not be negative");
    auto order = std::make_shared<const std::vector<int64_t>>(
        epochOrder(m_dataset->count, m_options.seed, epoch, m_options.shuffle));
    std::unique_lock lock(m_mutex);
    stopEpoch(lock);
    m_failure.reset();
    m_failedIndex = std::numeric_limits<int64_t>::max();
    m_epoch = epoch;
    m_order = std::move(order);
    m_nBatches = batchesPerEpoch();
    m_nextOut = std::min(firstBatch, m_nBatches);
    if (m_cacheStages > 0 && m_cache.empty()) {
        try {
            m_cache.resize(size_t(m_dataset->count * m_shapes[size_t(m_cacheStages)].numel()));
        } catch (const std::bad_alloc &) {
            m_cacheStages = 0; // no room for it: run every stage every epoch instead
        }
    }
    // The cache serves an epoch when every sample it will visit is cached (with dropLast, the
    // tail of an unshuffled order is never visited, so "every sample" would never come true).
    m_useCache = m_cacheStages > 0;
    for (int64_t b = m_nextOut; m_useCache && b < m_nBatches; ++b) {
        const Share s = share(b);
        for (int64_t i = s.begin; m_useCache && i < s.begin + s.count; ++i)
            m_useCache = m_cached[size_t((*m_order)[size_t(i)])] != 0;
    }
    m_lanes.clear();
    m_lanes.push_back(Lane{});
    for (int s = m_useCache ? m_cacheStages : 0; s < int(m_stages.size()); ++s) {
        Lane lane;
        lane.stage = s;
        m_lanes.push_back(std::move(lane));
    }
    for (auto &lane : m_lanes)
        lane.nextIn = m_nextOut;
    m_active = true;
    updateStarvation();
    lock.unlock();
    m_work.notify_all();
}

void DataFlow::cancel()
{
    std::unique_lock lock(m_mutex);
    stopEpoch(lock);
}

int DataFlow::pickLane() const
{
    if (!m_active || m_shutdown) return -1;
    const size_t capacity = size_t(m_options.queueCapacity);
    // The most downstream lane first: finishing batches frees memory and feeds the consumer.
    for (int j = int(m_lanes.size()) - 1; j >= 0; --j) {
        const Lane &lane = m_lanes[size_t(j)];
        // Batches at or after a failed one can never reach the consumer; those before it can.
        if (lane.nextIn >= std::min(m_nBatches, m_failedIndex)) continue;
        if (size_t(lane.inflight) + lane.queue.size() >= capacity) continue;
        if (j > 0 && !m_lanes[size_t(j - 1)].queue.count(lane.nextIn)) continue;
        return j;
    }
    return -1;
}

void DataFlow::updateStarvation()
{
    const auto now = Clock::now();
    const size_t capacity = size_t(m_options.queueCapacity);
    for (size_t j = 1; j < m_lanes.size(); ++j) {
        Lane &lane = m_lanes[j];
        const bool starving =
            m_active && lane.inflight == 0 && lane.nextIn < std::min(m_nBatches, m_failedIndex) &&
            lane.queue.size() < capacity && !m_lanes[j - 1].queue.count(lane.nextIn);
        if (starving == lane.starving) continue;
        if (starving) {
            lane.starvingSince = now;
        } else {
            const int edge = m_lanes[j - 1].stage < 0 ? (m_useCache ? m_cacheStages : 0)
                                                      : m_lanes[j - 1].stage + 1;
            m_edgeStats[size_t(edge)].consumerWaitSeconds +=
                secondsBetween(lane.starvingSince, now);
        }
        lane.starving = starving;
    }
}

DataFlow::Item DataFlow::gather(int64_t index, const std::vector<int64_t> &order,
                                bool fromCache) const
{
    const ImageDataset &ds = *m_dataset;
    const auto [begin, n, padding] = share(index);
    const Shape &shape = m_shapes[size_t(fromCache ? m_cacheStages : 0)];
    const int64_t sampleSize = shape.numel();

    Item item;
    item.x = Tensor::empty(shape.prepend(n), DType::F32);
    item.y = Tensor::empty({n}, DType::I32);
    item.samples.resize(size_t(n));
    float *x = item.x.f32();
    int32_t *y = item.y.data<int32_t>();
    int64_t held = 0, decoded = 0, fromDisk = 0, diskNanos = 0, decodeNanos = 0;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t s = order[size_t(begin + i)];
        item.samples[size_t(i)] = s;
        float *dst = x + i * sampleSize;
        if (fromCache) {
            std::memcpy(dst, m_cache.data() + s * sampleSize, size_t(sampleSize) * sizeof(float));
        } else {
            // A sample not held is read from the disk cache or decoded from its file here, on
            // the worker (streaming), and timed by where it came from, so that the report can
            // say whether a source that holds the trainer up waits on the disk or decodes. A
            // held sample is only copied: no clock is read for it.
            SampleOrigin from = SampleOrigin::Memory;
            const bool timed = !ds.isHeld(s);
            const auto t0 =
                timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
            if (Status st = readSample(ds, s, dst, &from); !st.ok())
                throw std::runtime_error(st.error().message);
            const int64_t ns = timed ? std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - t0)
                                           .count()
                                     : 0;
            if (from == SampleOrigin::Memory) {
                ++held;
            } else if (from == SampleOrigin::DiskCache) {
                ++fromDisk;
                diskNanos += ns;
            } else {
                ++decoded;
                decodeNanos += ns;
            }
        }
        y[i] = ds.labels[size_t(s)];
    }
    m_heldServed += held;
    m_decodedServed += decoded;
    m_diskServed += fromDisk;
    m_diskNanos += diskNanos;
    m_decodeNanos += decodeNanos;
    return item;
}

void DataFlow::runStage(int stage, Item &item, int64_t epoch, bool fillCache)
{
    const Stage &s = m_stages[size_t(stage)];
    const Shape &in = m_shapes[size_t(stage)], &out = m_shapes[size_t(stage) + 1];
    const int64_t n = item.x.shape()[0];
    std::vector<uint64_t> seeds;
    if (s.transform->random()) {
        seeds.resize(size_t(n));
        for (int64_t i = 0; i < n; ++i)
            seeds[size_t(i)] = sampleSeed(m_options.seed, s.node, epoch, item.samples[size_t(i)]);
    }
    if (s.transform->inPlace()) {
        s.transform->apply(item.x.f32(), item.x.f32(), n, in, seeds.data());
    } else {
        Tensor y = Tensor::empty(out.prepend(n), DType::F32);
        s.transform->apply(item.x.f32(), y.f32(), n, in, seeds.data());
        item.x = std::move(y);
    }
    if (fillCache) {
        // Rows of distinct samples: batches of one epoch never share a sample, and an epoch
        // reads the cache only after every writer of the previous one finished (stopEpoch).
        const int64_t sampleSize = out.numel();
        for (int64_t i = 0; i < n; ++i)
            std::memcpy(m_cache.data() + item.samples[size_t(i)] * sampleSize,
                        item.x.f32() + i * sampleSize, size_t(sampleSize) * sizeof(float));
    }
}

void DataFlow::worker()
{
    std::unique_lock lock(m_mutex);
    while (true) {
        int j = -1;
        m_work.wait(lock, [&] { return m_shutdown || (j = pickLane()) >= 0; });
        if (m_shutdown) return;
        Lane &lane = m_lanes[size_t(j)];
        const int64_t index = lane.nextIn++;
        ++lane.inflight;
        const int stage = lane.stage;
        const bool fromCache = m_useCache;
        const bool fillCache = !m_useCache && m_cacheStages > 0 && stage == m_cacheStages - 1;
        const int64_t epoch = m_epoch;
        const auto order = m_order;
        Item item;
        if (j > 0) item = std::move(m_lanes[size_t(j - 1)].queue.extract(index).mapped());
        updateStarvation();
        lock.unlock();
        m_work.notify_all(); // the lane upstream has room again

        const std::string &node = stage < 0 ? m_options.sourceNode : m_stages[size_t(stage)].node;
        std::optional<Error> failure;
        const auto start = Clock::now();
        try {
            if (stage < 0)
                item = gather(index, *order, fromCache);
            else
                runStage(stage, item, epoch, fillCache);
        } catch (const std::bad_alloc &) {
            failure = nodeError(node, "out of memory while preparing a batch");
        } catch (const std::exception &e) {
            failure = nodeError(node, e.what());
        } catch (...) {
            failure = nodeError(node, "unknown failure while preparing a batch");
        }
        const double busy = secondsBetween(start, Clock::now());

        lock.lock();
        StageStats &st = m_stageStats[size_t(stage + 1)];
        st.busySeconds += busy;
        ++st.batches;
        Lane &done = m_lanes[size_t(j)];
        --done.inflight;
        if (failure) {
            // The error waits until the consumer has taken every batch before the failed one.
            if (index < m_failedIndex) {
                m_failedIndex = index;
                m_failure = std::move(failure);
            }
        } else {
            if (fillCache)
                for (int64_t s : item.samples)
                    if (!m_cached[size_t(s)]) {
                        m_cached[size_t(s)] = 1;
                        ++m_cachedCount;
                    }
            const int edge = stage < 0 ? (fromCache ? m_cacheStages : 0) : stage + 1;
            EdgeStats &e = m_edgeStats[size_t(edge)];
            ++e.batches;
            e.samples += item.x.shape()[0];
            e.bytes += int64_t(item.x.bytes() + item.y.bytes());
            done.queue.emplace(index, std::move(item));
        }
        updateStarvation();
        m_work.notify_all();
        m_ready.notify_all();
    }
}

Result<std::optional<Batch>> DataFlow::next()
{
    std::unique_lock lock(m_mutex);
    if (!m_active || m_lanes.empty() || m_nextOut >= m_nBatches) return std::optional<Batch>();
    auto ready = [&] {
        return m_nextOut >= m_failedIndex || !m_active || m_lanes.back().queue.count(m_nextOut) > 0;
    };
    if (!ready()) {
        const auto start = Clock::now();
        m_ready.wait(lock, ready);
        m_consumerWait += secondsBetween(start, Clock::now());
    }
    if (m_nextOut >= m_failedIndex) return *m_failure;
    if (!m_active) return std::optional<Batch>();
    Item item = std::move(m_lanes.back().queue.extract(m_nextOut).mapped());
    Batch batch;
    batch.x = std::move(item.x);
    batch.y = std::move(item.y);
    batch.epoch = m_epoch;
    batch.padding = share(m_nextOut).padding;
    batch.index = m_nextOut++;
    updateStarvation();
    lock.unlock();
    m_work.notify_all();
    return std::optional<Batch>(std::move(batch));
}

FlowStats DataFlow::stats() const
{
    std::lock_guard lock(m_mutex);
    FlowStats s;
    s.stages = m_stageStats;
    s.edges = m_edgeStats;
    s.consumerWaitSeconds = m_consumerWait;
    s.edges.back().consumerWaitSeconds += m_consumerWait;
    s.workers = m_options.workers;
    s.cachedSamples = m_cachedCount;
    s.cacheSamples = m_cacheStages > 0 ? m_dataset->count : 0;
    s.sourceSamples = m_dataset->count;
    s.sourceHeld = m_dataset->heldSamples();
    s.sourceHits = m_heldServed.load();
    s.sourceDecoded = m_decodedServed.load();
    s.sourceFromDisk = m_diskServed.load();
    s.sourceDiskSeconds = double(m_diskNanos.load()) * 1e-9;
    s.sourceDecodeSeconds = double(m_decodeNanos.load()) * 1e-9;
    const auto now = Clock::now();
    for (size_t j = 0; j < m_lanes.size(); ++j) {
        const Lane &lane = m_lanes[j];
        const int pos = lane.stage < 0 ? (m_useCache ? m_cacheStages : 0) : lane.stage + 1;
        s.edges[size_t(pos)].queued = int64_t(lane.queue.size());
        if (lane.starving && j > 0) {
            const Lane &up = m_lanes[j - 1];
            const int edge = up.stage < 0 ? (m_useCache ? m_cacheStages : 0) : up.stage + 1;
            s.edges[size_t(edge)].consumerWaitSeconds += secondsBetween(lane.starvingSince, now);
        }
    }
    if (m_useCache)
        for (int i = 0; i < m_cacheStages; ++i) {
            s.stages[size_t(i) + 1].cached = true;
            s.edges[size_t(i)].cached = true;
        }
    return s;
}

} // namespace fb::data
