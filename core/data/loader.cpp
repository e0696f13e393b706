#include "core/data/loader.h"

#include "core/base/check.h"
#include "core/base/rng.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace fb::data {

Normalize::Normalize(float mean, float stddev)
    : m_mean(mean)
    , m_std(stddev)
{
    FB_ASSERT(stddev != 0.0f && std::isfinite(stddev) && std::isfinite(mean),
              "Normalize needs a finite mean and a finite, non-zero std");
}

void Normalize::apply(float *x, int64_t n, int64_t sampleSize) const
{
    const int64_t total = n * sampleSize;
    const float mean = m_mean, stddev = m_std;
    for (int64_t i = 0; i < total; ++i)
        x[i] = (x[i] - mean) / stddev;
}

Loader::Loader(std::shared_ptr<const ImageDataset> dataset, LoaderOptions options,
               std::vector<std::shared_ptr<const Transform>> transforms)
    : m_dataset(std::move(dataset))
    , m_options(options)
    , m_transforms(std::move(transforms))
{
    FB_ASSERT(m_dataset, "Loader needs a data set");
    FB_ASSERT(m_options.batchSize >= 1, "batch size must be at least 1");
    FB_ASSERT(m_dataset->pixels.size() == size_t(m_dataset->count * m_dataset->sampleSize()) &&
                  m_dataset->labels.size() == size_t(m_dataset->count),
              "data set buffers do not match its count and sample shape");
    for (const auto &t : m_transforms)
        FB_ASSERT(t, "null transform");
    // A queue of zero would never let a batch through; one is the least that works.
    m_options.prefetch = std::max(m_options.prefetch, 1);
}

Loader::~Loader()
{
    stopProducer();
}

int64_t Loader::batchesPerEpoch() const
{
    const int64_t count = m_dataset->count, bs = m_options.batchSize;
    // Not (count + bs - 1) / bs: that overflows for a huge batch size.
    return count / bs + (!m_options.dropLast && count % bs != 0 ? 1 : 0);
}

std::vector<int64_t> Loader::epochOrder(int64_t count, uint64_t seed, int64_t epoch, bool shuffle)
{
    std::vector<int64_t> order(size_t(std::max<int64_t>(count, 0)));
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int64_t(i);
    if (!shuffle) return order;
    Rng rng(mix64(seed) ^ mix64(uint64_t(epoch) + 1));
    for (size_t i = order.size(); i > 1; --i) {
        const size_t j = size_t(rng.below(i));
        std::swap(order[i - 1], order[j]);
    }
    return order;
}

void Loader::stopProducer()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_notFull.notify_all();
    m_notEmpty.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

void Loader::startEpoch(int64_t epoch, int64_t firstBatch)
{
    FB_ASSERT(firstBatch >= 0, "firstBatch must not be negative");
    stopProducer();
    {
        std::lock_guard lock(m_mutex);
        m_queue.clear();
        m_stop = false;
        m_producerDone = false;
        m_failure = nullptr;
    }
    m_thread = std::thread([this, epoch, firstBatch] { produce(epoch, firstBatch); });
}

void Loader::produce(int64_t epoch, int64_t firstBatch)
{
    try {
        const std::vector<int64_t> order =
            epochOrder(m_dataset->count, m_options.seed, epoch, m_options.shuffle);
        const size_t capacity = size_t(m_options.prefetch);
        for (int64_t b = firstBatch; b < batchesPerEpoch(); ++b) {
            // Wait for a free slot before building, so at most `prefetch` batches exist ahead of
            // the consumer and memory stays bounded.
            {
                std::unique_lock lock(m_mutex);
                m_notFull.wait(lock, [&] { return m_stop || m_queue.size() < capacity; });
                if (m_stop) break;
            }
            Batch batch = makeBatch(order, epoch, b);
            {
                std::lock_guard lock(m_mutex);
                if (m_stop) break;
                m_queue.push_back(std::move(batch));
            }
            m_notEmpty.notify_one();
        }
    } catch (...) {
        std::lock_guard lock(m_mutex);
        m_failure = std::current_exception();
    }
    {
        std::lock_guard lock(m_mutex);
        m_producerDone = true;
    }
    m_notEmpty.notify_all();
}

Batch Loader::makeBatch(const std::vector<int64_t> &order, int64_t epoch, int64_t index) const
{
    const ImageDataset &ds = *m_dataset;
    const int64_t begin = index * m_options.batchSize;
    const int64_t n = std::min(m_options.batchSize, ds.count - begin);
    const int64_t sampleSize = ds.sampleSize();

    Batch batch;
    batch.epoch = epoch;
    batch.index = index;
    batch.x = Tensor::empty({n, ds.channels, ds.height, ds.width}, DType::F32);
    batch.y = Tensor::empty({n}, DType::I32);
    float *x = batch.x.f32();
    int32_t *y = batch.y.data<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
        const int64_t s = order[size_t(begin + i)];
        const uint8_t *src = ds.sample(s);
        float *dst = x + i * sampleSize;
        for (int64_t k = 0; k < sampleSize; ++k)
            dst[k] = float(src[k]) / 255.0f;
        y[i] = ds.labels[size_t(s)];
    }
    for (const auto &t : m_transforms)
        t->apply(x, n, sampleSize);
    return batch;
}

std::optional<Batch> Loader::next()
{
    std::unique_lock lock(m_mutex);
    if (m_queue.empty() && !m_producerDone) {
        const auto start = std::chrono::steady_clock::now();
        m_notEmpty.wait(lock, [&] { return !m_queue.empty() || m_producerDone; });
        m_waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (!m_queue.empty()) {
        Batch batch = std::move(m_queue.front());
        m_queue.pop_front();
        lock.unlock();
        m_notFull.notify_one();
        return batch;
    }
    if (m_failure) std::rethrow_exception(std::exchange(m_failure, nullptr));
    return std::nullopt;
}

int64_t Loader::queuedBatches() const
{
    std::lock_guard lock(m_mutex);
    return int64_t(m_queue.size());
}

double Loader::waitedSeconds() const
{
    std::lock_guard lock(m_mutex);
    return m_waited;
}

} // namespace fb::data
