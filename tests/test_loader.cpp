#include "core/data/loader.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

using namespace fb;
using namespace fb::data;
using namespace std::chrono_literals;

namespace {

// Sample i has label i (so batches say which samples they hold) and pixel k = (i * 7 + k) % 256.
std::shared_ptr<const ImageDataset> makeDataset(int64_t count, int64_t c = 1, int64_t h = 2,
                                                int64_t w = 3)
{
    auto ds = std::make_shared<ImageDataset>();
    ds->name = "synthetic";
    ds->count = count;
    ds->channels = c;
    ds->height = h;
    ds->width = w;
    ds->classes = int32_t(count);
    const int64_t s = c * h * w;
    ds->pixels.resize(size_t(count * s));
    for (int64_t i = 0; i < count; ++i) {
        ds->labels.push_back(int32_t(i));
        for (int64_t k = 0; k < s; ++k)
            ds->pixels[size_t(i * s + k)] = uint8_t((i * 7 + k) % 256);
    }
    return ds;
}

LoaderOptions options(int64_t batchSize, bool shuffle = true, uint64_t seed = 1,
                      bool dropLast = false, int prefetch = 2)
{
    LoaderOptions o;
    o.batchSize = batchSize;
    o.shuffle = shuffle;
    o.seed = seed;
    o.dropLast = dropLast;
    o.prefetch = prefetch;
    return o;
}

std::vector<int32_t> labelsOf(const Batch &b)
{
    const int32_t *y = b.y.data<int32_t>();
    return std::vector<int32_t>(y, y + b.y.numel());
}

// All labels of one epoch, in order.
std::vector<int32_t> epochLabels(Loader &loader, int64_t epoch, int64_t firstBatch = 0)
{
    loader.startEpoch(epoch, firstBatch);
    std::vector<int32_t> out;
    while (std::optional<Batch> b = loader.next()) {
        const std::vector<int32_t> l = labelsOf(*b);
        out.insert(out.end(), l.begin(), l.end());
    }
    return out;
}

template <class Pred> bool waitFor(Pred pred, std::chrono::milliseconds limit = 5000ms)
{
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

// Counts batches it has transformed, to see how far the producer ran ahead.
class CountingTransform : public Transform {
public:
    void apply(float *, int64_t, int64_t) const override { ++calls; }
    mutable std::atomic<int> calls{0};
};

class ScaleTransform : public Transform {
public:
    explicit ScaleTransform(float f)
        : m_f(f)
    {}
    void apply(float *x, int64_t n, int64_t s) const override
    {
        for (int64_t i = 0; i < n * s; ++i)
            x[i] *= m_f;
    }

private:
    float m_f;
};

class SlowTransform : public Transform {
public:
    void apply(float *, int64_t, int64_t) const override { std::this_thread::sleep_for(30ms); }
};

class ThrowingTransform : public Transform {
public:
    void apply(float *, int64_t, int64_t) const override
    {
        if (++calls == 3) throw std::runtime_error("transform failed");
    }
    mutable std::atomic<int> calls{0};
};

} // namespace

class TestLoader : public QObject {
    Q_OBJECT

private slots:
    void coversEverySampleOnce_data()
    {
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("batchSize");
        QTest::addColumn<bool>("shuffle");
        QTest::addColumn<bool>("dropLast");
        QTest::newRow("partial last, shuffled") << 103 << 10 << true << false;
        QTest::newRow("partial last, in order") << 103 << 10 << false << false;
        QTest::newRow("drop last") << 103 << 10 << true << true;
        QTest::newRow("exact multiple") << 100 << 25 << true << false;
        QTest::newRow("exact multiple, drop last") << 100 << 25 << true << true;
        QTest::newRow("one batch bigger than data") << 7 << 128 << true << false;
        QTest::newRow("batch bigger than data, drop last") << 7 << 128 << true << true;
        QTest::newRow("batch of one") << 5 << 1 << true << false;
    }
    void coversEverySampleOnce()
    {
        QFETCH(int, count);
        QFETCH(int, batchSize);
        QFETCH(bool, shuffle);
        QFETCH(bool, dropLast);
        auto ds = makeDataset(count);
        Loader loader(ds, options(batchSize, shuffle, 5, dropLast));
        const int64_t full = count / batchSize, rest = count % batchSize;
        const int64_t expectedBatches = full + (rest && !dropLast ? 1 : 0);
        QCOMPARE(loader.batchesPerEpoch(), expectedBatches);

        loader.startEpoch(3);
        std::vector<int32_t> seen;
        int64_t index = 0;
        while (std::optional<Batch> b = loader.next()) {
            QCOMPARE(b->epoch, int64_t(3));
            QCOMPARE(b->index, index);
            const int64_t n = index < full ? batchSize : rest;
            QCOMPARE(b->x.shape(), (Shape{n, 1, 2, 3}));
            QCOMPARE(b->x.dtype(), DType::F32);
            QCOMPARE(b->y.shape(), (Shape{n}));
            QCOMPARE(b->y.dtype(), DType::I32);
            // The pixels travel with their label and are scaled to [0, 1].
            for (int64_t i = 0; i < n; ++i) {
                const int32_t s = b->y.data<int32_t>()[i];
                for (int64_t k = 0; k < 6; ++k)
                    QCOMPARE(b->x.f32()[i * 6 + k], float((s * 7 + k) % 256) / 255.0f);
            }
            const std::vector<int32_t> l = labelsOf(*b);
            seen.insert(seen.end(), l.begin(), l.end());
            ++index;
        }
        QCOMPARE(index, expectedBatches);
        QVERIFY(!loader.next()); // stays at the end
        QCOMPARE(int64_t(seen.size()), dropLast ? full * batchSize : int64_t(count));
        QCOMPARE(std::set<int32_t>(seen.begin(), seen.end()).size(), seen.size());
        if (!dropLast) {
            std::vector<int32_t> sorted = seen;
            std::sort(sorted.begin(), sorted.end());
            for (int i = 0; i < count; ++i)
                QCOMPARE(sorted[size_t(i)], i);
        }
        // The order is exactly the published permutation.
        const std::vector<int64_t> order = Loader::epochOrder(count, 5, 3, shuffle);
        for (size_t i = 0; i < seen.size(); ++i)
            QCOMPARE(int64_t(seen[i]), order[i]);
        if (!shuffle)
            QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        else if (count > 20)
            QVERIFY(!std::is_sorted(seen.begin(), seen.end()));
    }

    void orderDependsOnSeedAndEpochOnly()
    {
        auto ds = makeDataset(500);
        Loader a(ds, options(64, true, 42));
        Loader b(ds, options(64, true, 42));
        Loader c(ds, options(64, true, 43));
        Loader bigBatch(ds, options(200, true, 42, false, 5));
        const std::vector<int32_t> a0 = epochLabels(a, 0), a1 = epochLabels(a, 1);
        QCOMPARE(epochLabels(b, 0), a0);
        QCOMPARE(epochLabels(b, 1), a1);
        QCOMPARE(epochLabels(a, 0), a0);        // repeatable on the same loader
        QCOMPARE(epochLabels(bigBatch, 1), a1); // batching does not change the order
        QVERIFY(a0 != a1);
        QVERIFY(epochLabels(c, 0) != a0);
        QVERIFY(epochLabels(c, 1) != a1);
    }

    void epochOrderIsAPinnedPermutation()
    {
        // Pinned so a change of algorithm (which would break resuming old runs) is noticed.
        const std::vector<int64_t> order = Loader::epochOrder(10, 42, 0, true);
        QCOMPARE(order, (std::vector<int64_t>{1, 4, 9, 8, 2, 3, 5, 6, 0, 7}));

        for (int64_t count : {0, 1, 2, 60000}) {
            const std::vector<int64_t> o = Loader::epochOrder(count, 9, 4, true);
            QCOMPARE(int64_t(o.size()), count);
            std::vector<int64_t> sorted = o;
            std::sort(sorted.begin(), sorted.end());
            for (int64_t i = 0; i < count; ++i)
                QCOMPARE(sorted[size_t(i)], i);
            QCOMPARE(Loader::epochOrder(count, 9, 4, true), o);
        }
        const std::vector<int64_t> identity = Loader::epochOrder(5, 9, 4, false);
        QCOMPARE(identity, (std::vector<int64_t>{0, 1, 2, 3, 4}));
    }

    void appliesTransformsInOrder()
    {
        auto ds = makeDataset(20);
        auto normalize = std::make_shared<Normalize>(0.5f, 0.25f);
        auto scale = std::make_shared<ScaleTransform>(3.0f);
        QCOMPARE(normalize->mean(), 0.5f);
        QCOMPARE(normalize->stddev(), 0.25f);
        Loader loader(ds, options(8, false), {normalize, scale});
        loader.startEpoch(0);
        std::optional<Batch> b = loader.next();
        QVERIFY(b);
        for (int64_t i = 0; i < 8; ++i) {
            for (int64_t k = 0; k < 6; ++k) {
                const float px = float((i * 7 + k) % 256) / 255.0f;
                const float expected = ((px - 0.5f) / 0.25f) * 3.0f; // normalize, then scale
                QCOMPARE(b->x.f32()[i * 6 + k], expected);
            }
        }
        // Normalize alone: values of the first sample, pixels 0, 7/255 ... -> about -2.
        Loader plain(ds, options(4, false), {normalize});
        plain.startEpoch(0);
        std::optional<Batch> p = plain.next();
        QVERIFY(p);
        QCOMPARE(p->x.f32()[0], -2.0f);
        QCOMPARE(p->x.f32()[6], (7.0f / 255.0f - 0.5f) / 0.25f);
    }

    void resumesMidEpoch()
    {
        auto ds = makeDataset(95);
        Loader loader(ds, options(10, true, 77));
        const std::vector<int32_t> whole = epochLabels(loader, 2);
        loader.startEpoch(2, 4);
        std::vector<int32_t> tail;
        int64_t index = 4;
        while (std::optional<Batch> b = loader.next()) {
            QCOMPARE(b->index, index++);
            const std::vector<int32_t> l = labelsOf(*b);
            tail.insert(tail.end(), l.begin(), l.end());
        }
        QCOMPARE(index, int64_t(10));
        QCOMPARE(tail, std::vector<int32_t>(whole.begin() + 40, whole.end()));

        // Past the end: an empty epoch, not a hang.
        loader.startEpoch(2, 10);
        QVERIFY(!loader.next());
        loader.startEpoch(2, 1000);
        QVERIFY(!loader.next());
    }

    void restartDropsTheOldEpoch()
    {
        auto ds = makeDataset(100);
        Loader loader(ds, options(10, true, 3, false, 4));
        QVERIFY(!loader.next()); // no epoch started yet
        loader.startEpoch(0);
        QVERIFY(loader.next());
        QVERIFY(waitFor([&] { return loader.queuedBatches() == 4; }));
        loader.startEpoch(1); // while the old producer blocks on a full queue
        std::optional<Batch> b = loader.next();
        QVERIFY(b);
        QCOMPARE(b->epoch, int64_t(1));
        QCOMPARE(b->index, int64_t(0));
        const std::vector<int64_t> order = Loader::epochOrder(100, 3, 1, true);
        QCOMPARE(int64_t(labelsOf(*b)[0]), order[0]);
    }

    void prefetchRunsAheadAndIsBounded()
    {
        auto ds = makeDataset(1000);
        auto counter = std::make_shared<CountingTransform>();
        Loader loader(ds, options(10, true, 1, false, 3), {counter});
        loader.startEpoch(0);
        // Without any next() call the producer fills the queue...
        QVERIFY(waitFor([&] { return loader.queuedBatches() == 3; }));
        // ...and then stops there (backpressure) instead of building the whole epoch.
        std::this_thread::sleep_for(100ms);
        QCOMPARE(loader.queuedBatches(), int64_t(3));
        QCOMPARE(counter->calls.load(), 3);

        // Batches already buffered are handed out without waiting.
        QVERIFY(loader.next());
        QCOMPARE(loader.waitedSeconds(), 0.0);
        QVERIFY(waitFor([&] { return counter->calls.load() == 4; }));
        QVERIFY(waitFor([&] { return loader.queuedBatches() == 3; }));
    }

    void slowProducerMakesTheConsumerWait()
    {
        auto ds = makeDataset(40);
        Loader loader(ds, options(10, true, 1, false, 2), {std::make_shared<SlowTransform>()});
        loader.startEpoch(0);
        int n = 0;
        while (loader.next())
            ++n;
        QCOMPARE(n, 4);
        // Four batches at 30 ms each, consumed immediately: the consumer waited most of it.
        QVERIFY2(loader.waitedSeconds() > 0.06,
                 qPrintable(QString::number(loader.waitedSeconds())));
    }

    void destructorDoesNotHangMidEpoch()
    {
        auto ds = makeDataset(10000);
        auto loader = std::make_unique<Loader>(ds, options(10, true, 1, false, 2));
        loader->startEpoch(0);
        QVERIFY(loader->next());
        QVERIFY(waitFor([&] { return loader->queuedBatches() == 2; })); // producer now blocked

        // Destroy on another thread so a hang fails the test instead of stalling it.
        std::atomic<bool> destroyed{false};
        std::thread([l = std::move(loader), &destroyed]() mutable {
            l.reset();
            destroyed = true;
        }).detach();
        QVERIFY2(waitFor([&] { return destroyed.load(); }, 5000ms),
                 "~Loader did not return while its producer waited on a full queue");
    }

    void producerExceptionReachesTheConsumer()
    {
        auto ds = makeDataset(100);
        auto throwing = std::make_shared<ThrowingTransform>();
        Loader loader(ds, options(10, false, 0, false, 8), {throwing});
        loader.startEpoch(0);
        QVERIFY(loader.next());
        QVERIFY(loader.next());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, loader.next());
        QVERIFY(!loader.next()); // the epoch ended with the failure
        // A new epoch works again.
        loader.startEpoch(1);
        QVERIFY(loader.next());
    }

    void multiChannelSamples()
    {
        auto ds = makeDataset(6, 3, 2, 2);
        Loader loader(ds, options(4, false));
        loader.startEpoch(0);
        std::optional<Batch> b = loader.next();
        QVERIFY(b);
        QCOMPARE(b->x.shape(), (Shape{4, 3, 2, 2}));
        QCOMPARE(b->x.f32()[12 + 5], float((1 * 7 + 5) % 256) / 255.0f);
        b = loader.next();
        QVERIFY(b);
        QCOMPARE(b->x.shape(), (Shape{2, 3, 2, 2}));
    }
};

QTEST_GUILESS_MAIN(TestLoader)
#include "test_loader.moc"
