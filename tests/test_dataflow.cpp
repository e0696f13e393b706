// DataFlow: the batches of an epoch (contents, labels, order, dropLast, resume), the data order
// and augmentation draws being independent of the worker count, backpressure per wire,
// cancellation at every stage, the cache of the deterministic prefix of a chain, stage errors,
// and the statistics behind the data-flow view and the bottleneck report.

#include "core/data/dataflow.h"

#include <QScopeGuard>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>

using namespace fb;
using namespace fb::data;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace fb {
// Shapes in QCOMPARE failures (found by argument-dependent lookup).
char *toString(const Shape &s)
{
    return qstrdup(s.str().c_str());
}
} // namespace fb

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

float pixel(int64_t sample, int64_t k)
{
    return float((sample * 7 + k) % 256) / 255.0f;
}

DataFlowOptions options(int64_t batchSize, bool shuffle = true, uint64_t seed = 1,
                        bool dropLast = false, int queueCapacity = 2, int workers = 1)
{
    DataFlowOptions o;
    o.batchSize = batchSize;
    o.shuffle = shuffle;
    o.seed = seed;
    o.dropLast = dropLast;
    o.queueCapacity = queueCapacity;
    o.workers = workers;
    return o;
}

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

// The flow, or null (with the error logged) when create() refuses the chain.
std::unique_ptr<DataFlow> makeFlow(std::shared_ptr<const ImageDataset> ds,
                                   std::vector<Stage> stages, DataFlowOptions o)
{
    Result<std::unique_ptr<DataFlow>> r = DataFlow::create(std::move(ds), std::move(stages), o);
    if (!r.ok()) {
        qWarning("DataFlow::create failed: %s", r.error().str().c_str());
        return nullptr;
    }
    return std::move(r).value();
}

// next() that must not fail: a failure fails the running test and ends the loop.
std::optional<Batch> take(DataFlow &flow)
{
    Result<std::optional<Batch>> r = flow.next();
    if (!r.ok()) {
        QTest::qFail(("next() failed: " + r.error().str()).c_str(), __FILE__, __LINE__);
        return std::nullopt;
    }
    return std::move(r).value();
}

// next() gave the end of the epoch (no error, no batch).
bool atEnd(DataFlow &flow)
{
    Result<std::optional<Batch>> r = flow.next();
    return r.ok() && !r.value().has_value();
}

std::vector<int32_t> labelsOf(const Batch &b)
{
    const int32_t *y = b.y.data<int32_t>();
    return std::vector<int32_t>(y, y + b.y.numel());
}

// All labels of one epoch, in order.
std::vector<int32_t> epochLabels(DataFlow &flow, int64_t epoch, int64_t firstBatch = 0)
{
    flow.startEpoch(epoch, firstBatch);
    std::vector<int32_t> out;
    while (std::optional<Batch> b = take(flow)) {
        const std::vector<int32_t> l = labelsOf(*b);
        out.insert(out.end(), l.begin(), l.end());
    }
    return out;
}

// All batches of one epoch.
std::vector<Batch> epochBatches(DataFlow &flow, int64_t epoch, int64_t firstBatch = 0)
{
    flow.startEpoch(epoch, firstBatch);
    std::vector<Batch> out;
    while (std::optional<Batch> b = take(flow))
        out.push_back(std::move(*b));
    return out;
}

// Same batches bit for bit: shapes, pixels, labels, epoch and index.
bool sameBatches(const std::vector<Batch> &a, const std::vector<Batch> &b, QString *why)
{
    if (a.size() != b.size()) {
        *why = QString("%1 batches vs %2").arg(a.size()).arg(b.size());
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        const Batch &x = a[i], &y = b[i];
        if (x.x.shape() != y.x.shape() || x.y.shape() != y.y.shape() || x.epoch != y.epoch ||
            x.index != y.index) {
            *why = QString("batch %1: shape, epoch or index differ").arg(i);
            return false;
        }
        if (std::memcmp(x.x.raw(), y.x.raw(), x.x.bytes()) != 0 ||
            std::memcmp(x.y.raw(), y.y.raw(), x.y.bytes()) != 0) {
            *why = QString("batch %1: contents differ").arg(i);
            return false;
        }
    }
    return true;
}

// Each sample's values (by label) over some batches.
std::map<int32_t, std::vector<float>> samplesByLabel(const std::vector<Batch> &batches)
{
    std::map<int32_t, std::vector<float>> out;
    for (const Batch &b : batches) {
        const int64_t n = b.x.shape()[0], size = b.x.numel() / std::max<int64_t>(n, 1);
        for (int64_t i = 0; i < n; ++i)
            out[b.y.data<int32_t>()[i]] =
                std::vector<float>(b.x.f32() + i * size, b.x.f32() + (i + 1) * size);
    }
    return out;
}

template <class Pred> bool waitFor(Pred pred, std::chrono::milliseconds limit = 5000ms)
{
    const auto deadline = Clock::now() + limit;
    while (!pred()) {
        if (Clock::now() > deadline) return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Runs `f` on its own thread so that a hang fails the test instead of stalling it. Returns the
// seconds it took, or -1 when it did not return within `limit` (the thread is then left running:
// the caller must leak whatever it uses).
template <class F> double timedOnThread(F f, std::chrono::milliseconds limit = 5000ms)
{
    auto done = std::make_shared<std::atomic<bool>>(false);
    const auto start = Clock::now();
    std::thread t([f = std::move(f), done]() mutable {
        f();
        *done = true;
    });
    if (!waitFor([&] { return done->load(); }, limit)) {
        t.detach();
        return -1;
    }
    const double seconds = secondsSince(start);
    t.join();
    return seconds;
}

// Whether a flow makes batches of [n, c, h, w]. When it does not, its buffers are too small for
// samples of several channels and writing them corrupts the heap: tests of such samples skip
// rather than crash the suite (coversEverySampleOnce reports the wrong shape).
bool batchesAreNchw()
{
    auto flow = makeFlow(makeDataset(2), {}, options(2));
    if (!flow) return false;
    flow->startEpoch(0);
    std::optional<Batch> b = take(*flow);
    return b && b->x.shape() == Shape{2, 1, 2, 3};
}

#define SKIP_UNLESS_NCHW()                                                                         \
    do {                                                                                           \
        if (!batchesAreNchw())                                                                     \
            QSKIP("batches are not [n, c, h, w]: multi-channel samples would overflow them");      \
    } while (0)

// An identity stage that counts the batches and samples it sees and can be made slow.
class Probe : public Transform {
public:
    explicit Probe(bool random = false)
        : m_random(random)
    {}
    bool random() const override { return m_random; }
    void apply(const float *in, float *out, int64_t n, const Shape &s,
               const uint64_t *) const override
    {
        ++starts;
        ++running;
        if (in != out) std::memcpy(out, in, size_t(n * s.numel()) * sizeof(float));
        const int ms = sleepMs.load();
        if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        ++calls;
        samples += n;
        --running;
    }
    mutable std::atomic<int> starts{0}, calls{0}, samples{0}, running{0};
    std::atomic<int> sleepMs{0};

private:
    bool m_random;
};

class ScaleTransform : public Transform {
public:
    explicit ScaleTransform(float f)
        : m_f(f)
    {}
    void apply(const float *in, float *out, int64_t n, const Shape &s,
               const uint64_t *) const override
    {
        for (int64_t i = 0; i < n * s.numel(); ++i)
            out[i] = in[i] * m_f;
    }

private:
    float m_f;
};

// Sleeps 0..3 ms depending on the data, so that several workers finish out of order.
class Jitter : public Transform {
public:
    void apply(const float *, float *out, int64_t n, const Shape &s,
               const uint64_t *) const override
    {
        uint32_t h = 0;
        std::memcpy(&h, out + (n - 1) * s.numel(), sizeof h);
        std::this_thread::sleep_for(std::chrono::microseconds((h * 2654435761u >> 8) % 3000));
    }
};

// Throws on the batch whose first sample is `failSample` (as written by makeDataset) while armed.
class ThrowingTransform : public Transform {
public:
    explicit ThrowingTransform(int64_t failSample)
        : m_marker(pixel(failSample, 0))
    {}
    void apply(const float *in, float *, int64_t n, const Shape &, const uint64_t *) const override
    {
        if (armed && n > 0 && in[0] == m_marker) {
            thrown = true;
            throw std::runtime_error("transform failed");
        }
    }
    std::atomic<bool> armed{true};
    mutable std::atomic<bool> thrown{false};

private:
    float m_marker;
};

// Claims to work in place yet changes the shape: create() must refuse it.
class WidensInPlace : public Transform {
public:
    Result<Shape> outputShape(const Shape &in) const override
    {
        return Shape{in[0], in[1], in[2] + 1};
    }
    void apply(const float *, float *, int64_t, const Shape &, const uint64_t *) const override {}
};

} // namespace

class TestDataFlow : public QObject {
    Q_OBJECT

private slots:
    // ---- Behaviour carried over from the Loader ---------------------------------------------

    void coversEverySampleOnce_data()
    {
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("batchSize");
        QTest::addColumn<bool>("shuffle");
        QTest::addColumn<bool>("dropLast");
        QTest::addColumn<int>("workers");
        QTest::newRow("partial last, shuffled") << 103 << 10 << true << false << 1;
        QTest::newRow("partial last, in order") << 103 << 10 << false << false << 1;
        QTest::newRow("drop last") << 103 << 10 << true << true << 1;
        QTest::newRow("exact multiple") << 100 << 25 << true << false << 1;
        QTest::newRow("exact multiple, drop last") << 100 << 25 << true << true << 1;
        QTest::newRow("one batch bigger than data") << 7 << 128 << true << false << 1;
        QTest::newRow("batch bigger than data, drop last") << 7 << 128 << true << true << 1;
        QTest::newRow("batch of one") << 5 << 1 << true << false << 1;
        QTest::newRow("partial last, 3 workers") << 103 << 10 << true << false << 3;
        QTest::newRow("batch of one, 4 workers") << 57 << 1 << true << false << 4;
    }
    void coversEverySampleOnce()
    {
        QFETCH(int, count);
        QFETCH(int, batchSize);
        QFETCH(bool, shuffle);
        QFETCH(bool, dropLast);
        QFETCH(int, workers);
        auto ds = makeDataset(count);
        auto flow = makeFlow(ds, {}, options(batchSize, shuffle, 5, dropLast, 2, workers));
        QVERIFY(flow);
        const int64_t full = count / batchSize, rest = count % batchSize;
        const int64_t expectedBatches = full + (rest && !dropLast ? 1 : 0);
        QCOMPARE(flow->batchesPerEpoch(), expectedBatches);
        QCOMPARE(flow->sampleShape(), (Shape{1, 2, 3}));

        flow->startEpoch(3);
        std::vector<int32_t> seen;
        int64_t index = 0;
        while (std::optional<Batch> b = take(*flow)) {
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
                    QCOMPARE(b->x.f32()[i * 6 + k], pixel(s, k));
            }
            const std::vector<int32_t> l = labelsOf(*b);
            seen.insert(seen.end(), l.begin(), l.end());
            ++index;
        }
        QCOMPARE(index, expectedBatches);
        QVERIFY(atEnd(*flow)); // stays at the end
        QVERIFY(atEnd(*flow));
        QCOMPARE(int64_t(seen.size()), dropLast ? full * batchSize : int64_t(count));
        QCOMPARE(std::set<int32_t>(seen.begin(), seen.end()).size(), seen.size());
        if (!dropLast) {
            std::vector<int32_t> sorted = seen;
            std::sort(sorted.begin(), sorted.end());
            for (int i = 0; i < count; ++i)
                QCOMPARE(sorted[size_t(i)], i);
        }
        // The order is exactly the published permutation.
        const std::vector<int64_t> order = DataFlow::epochOrder(count, 5, 3, shuffle);
        for (size_t i = 0; i < seen.size(); ++i)
            QCOMPARE(int64_t(seen[i]), order[i]);
        if (!shuffle)
            QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        else if (count > 20)
            QVERIFY(!std::is_sorted(seen.begin(), seen.end()));
    }

    // Data-parallel shards: for every batch, the ranks' shares laid end to end are the one
    // process's batch, in order; every rank gets every batch index (the same number of steps),
    // and a rank whose share of a short last batch is empty gets one padding sample.
    void shardsSplitEachBatchInOrder()
    {
        QFETCH(int, count);
        QFETCH(int, batchSize);
        QFETCH(int, ranks);
        auto ds = makeDataset(count);
        auto whole = makeFlow(ds, {}, options(batchSize, true, 9));
        QVERIFY(whole);
        whole->startEpoch(2);
        std::vector<std::vector<int32_t>> expected;
        while (std::optional<Batch> b = take(*whole))
            expected.push_back(labelsOf(*b));
        std::vector<std::vector<int32_t>> joined(expected.size());
        for (int r = 0; r < ranks; ++r) {
            DataFlowOptions o = options(batchSize, true, 9, false, 2, 2);
            o.shardRank = r;
            o.shardCount = ranks;
            auto flow = makeFlow(ds, {}, o);
            QVERIFY(flow);
            QCOMPARE(flow->batchesPerEpoch(), int64_t(expected.size()));
            flow->startEpoch(2);
            size_t index = 0;
            while (std::optional<Batch> b = take(*flow)) {
                QVERIFY(index < expected.size());
                const int64_t global = int64_t(expected[index].size());
                QCOMPARE(flow->globalBatchSize(int64_t(index)), global);
                const int64_t share = global / ranks + (r < global % ranks ? 1 : 0);
                QCOMPARE(b->padding, share == 0);
                QCOMPARE(b->x.shape()[0], share == 0 ? int64_t(1) : share);
                if (!b->padding) {
                    const std::vector<int32_t> l = labelsOf(*b);
                    joined[index].insert(joined[index].end(), l.begin(), l.end());
                }
                ++index;
            }
            QCOMPARE(index, expected.size());
        }
        QCOMPARE(joined, expected);
    }

    void shardsSplitEachBatchInOrder_data()
    {
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("batchSize");
        QTest::addColumn<int>("ranks");
        QTest::newRow("even") << 256 << 64 << 2;
        QTest::newRow("uneven share") << 250 << 64 << 3;
        QTest::newRow("last batch of one sample") << 129 << 64 << 2;
        QTest::newRow("more ranks than the last batch") << 130 << 64 << 4;
        QTest::newRow("one rank") << 100 << 32 << 1;
    }

    void orderDependsOnSeedAndEpochOnly()
    {
        auto ds = makeDataset(500);
        auto a = makeFlow(ds, {}, options(64, true, 42));
        auto b = makeFlow(ds, {}, options(64, true, 42, false, 2, 3));
        auto c = makeFlow(ds, {}, options(64, true, 43));
        auto bigBatch = makeFlow(ds, {}, options(200, true, 42, false, 5));
        QVERIFY(a && b && c && bigBatch);
        const std::vector<int32_t> a0 = epochLabels(*a, 0), a1 = epochLabels(*a, 1);
        QCOMPARE(int64_t(a0.size()), int64_t(500));
        QCOMPARE(epochLabels(*b, 0), a0);
        QCOMPARE(epochLabels(*b, 1), a1);
        QCOMPARE(epochLabels(*a, 0), a0);        // repeatable on the same flow
        QCOMPARE(epochLabels(*bigBatch, 1), a1); // batching does not change the order
        QVERIFY(a0 != a1);
        QVERIFY(epochLabels(*c, 0) != a0);
        QVERIFY(epochLabels(*c, 1) != a1);
    }

    void epochOrderIsAPinnedPermutation()
    {
        // Pinned (the Loader's values) so a change of algorithm, which would break resuming old
        // runs, is noticed.
        const std::vector<int64_t> order = DataFlow::epochOrder(10, 42, 0, true);
        QCOMPARE(order, (std::vector<int64_t>{1, 4, 9, 8, 2, 3, 5, 6, 0, 7}));

        for (int64_t count : {0, 1, 2, 60000}) {
            const std::vector<int64_t> o = DataFlow::epochOrder(count, 9, 4, true);
            QCOMPARE(int64_t(o.size()), count);
            std::vector<int64_t> sorted = o;
            std::sort(sorted.begin(), sorted.end());
            for (int64_t i = 0; i < count; ++i)
                QCOMPARE(sorted[size_t(i)], i);
            QCOMPARE(DataFlow::epochOrder(count, 9, 4, true), o);
        }
        QVERIFY(DataFlow::epochOrder(100, 9, 4, true) != DataFlow::epochOrder(100, 9, 5, true));
        QVERIFY(DataFlow::epochOrder(100, 9, 4, true) != DataFlow::epochOrder(100, 10, 4, true));
        const std::vector<int64_t> identity = DataFlow::epochOrder(5, 9, 4, false);
        QCOMPARE(identity, (std::vector<int64_t>{0, 1, 2, 3, 4}));
    }

    void sampleSeedDependsOnEveryInput()
    {
        const uint64_t s = DataFlow::sampleSeed(1, "flip", 2, 3);
        QCOMPARE(DataFlow::sampleSeed(1, "flip", 2, 3), s);
        QVERIFY(DataFlow::sampleSeed(2, "flip", 2, 3) != s);
        QVERIFY(DataFlow::sampleSeed(1, "flip2", 2, 3) != s);
        QVERIFY(DataFlow::sampleSeed(1, "flip", 3, 3) != s);
        QVERIFY(DataFlow::sampleSeed(1, "flip", 2, 4) != s);
    }

    void appliesTransformsInOrder()
    {
        auto ds = makeDataset(20);
        auto normalize = std::make_shared<Normalize>(0.5f, 0.25f);
        auto scale = std::make_shared<ScaleTransform>(3.0f);
        QCOMPARE(normalize->mean(), 0.5f);
        QCOMPARE(normalize->stddev(), 0.25f);
        auto flow = makeFlow(ds, {{"norm", normalize}, {"scale", scale}}, options(8, false));
        QVERIFY(flow);
        flow->startEpoch(0);
        std::optional<Batch> b = take(*flow);
        QVERIFY(b);
        for (int64_t i = 0; i < 8; ++i) {
            for (int64_t k = 0; k < 6; ++k) {
                const float expected = ((pixel(i, k) - 0.5f) / 0.25f) * 3.0f; // normalize, scale
                QCOMPARE(b->x.f32()[i * 6 + k], expected);
            }
        }
        // The other order gives other values.
        auto reversed = makeFlow(ds, {{"scale", scale}, {"norm", normalize}}, options(8, false));
        QVERIFY(reversed);
        reversed->startEpoch(0);
        std::optional<Batch> r = take(*reversed);
        QVERIFY(r);
        QCOMPARE(r->x.f32()[1], (pixel(0, 1) * 3.0f - 0.5f) / 0.25f);

        // Normalize alone: values of the first sample, pixels 0, 7/255 ... -> about -2.
        auto plain = makeFlow(ds, {{"norm", normalize}}, options(4, false));
        QVERIFY(plain);
        plain->startEpoch(0);
        std::optional<Batch> p = take(*plain);
        QVERIFY(p);
        QCOMPARE(p->x.f32()[0], -2.0f);
        QCOMPARE(p->x.f32()[6], (7.0f / 255.0f - 0.5f) / 0.25f);
    }

    void resumesMidEpoch()
    {
        auto ds = makeDataset(95);
        auto flow = makeFlow(ds, {}, options(10, true, 77, false, 2, 2));
        QVERIFY(flow);
        const std::vector<int32_t> whole = epochLabels(*flow, 2);
        flow->startEpoch(2, 4);
        std::vector<int32_t> tail;
        int64_t index = 4;
        while (std::optional<Batch> b = take(*flow)) {
            QCOMPARE(b->index, index++);
            QCOMPARE(b->epoch, int64_t(2));
            const std::vector<int32_t> l = labelsOf(*b);
            tail.insert(tail.end(), l.begin(), l.end());
        }
        QCOMPARE(index, int64_t(10));
        QCOMPARE(tail, std::vector<int32_t>(whole.begin() + 40, whole.end()));

        // The source gathered only the batches still to do.
        const FlowStats st = flow->stats();
        QCOMPARE(st.stages[0].batches, int64_t(10 + 6));

        // Past the end: an empty epoch, not a hang.
        flow->startEpoch(2, 10);
        QVERIFY(atEnd(*flow));
        flow->startEpoch(2, 1000);
        QVERIFY(atEnd(*flow));
    }

    void restartDropsTheOldEpoch()
    {
        auto ds = makeDataset(100);
        auto flow = makeFlow(ds, {}, options(10, true, 3, false, 4));
        QVERIFY(flow);
        QVERIFY(atEnd(*flow)); // no epoch started yet
        flow->startEpoch(0);
        QVERIFY(take(*flow));
        // The source refills its wire and then waits on the full queue.
        QVERIFY(waitFor([&] { return flow->stats().edges.back().queued == 4; }));
        flow->startEpoch(1);
        std::optional<Batch> b = take(*flow);
        QVERIFY(b);
        QCOMPARE(b->epoch, int64_t(1));
        QCOMPARE(b->index, int64_t(0));
        const std::vector<int64_t> order = DataFlow::epochOrder(100, 3, 1, true);
        QCOMPARE(int64_t(labelsOf(*b)[0]), order[0]);
        // The rest of the new epoch follows, nothing of the old one.
        int64_t n = 1;
        while (std::optional<Batch> c = take(*flow)) {
            QCOMPARE(c->epoch, int64_t(1));
            QCOMPARE(c->index, n++);
        }
        QCOMPARE(n, int64_t(10));
    }

    void multiChannelSamples()
    {
        SKIP_UNLESS_NCHW();
        auto ds = makeDataset(6, 3, 2, 2);
        auto flow = makeFlow(ds, {}, options(4, false));
        QVERIFY(flow);
        QCOMPARE(flow->sampleShape(), (Shape{3, 2, 2}));
        flow->startEpoch(0);
        std::optional<Batch> b = take(*flow);
        QVERIFY(b);
        QCOMPARE(b->x.shape(), (Shape{4, 3, 2, 2}));
        QCOMPARE(b->x.f32()[12 + 5], pixel(1, 5));
        b = take(*flow);
        QVERIFY(b);
        QCOMPARE(b->x.shape(), (Shape{2, 3, 2, 2}));
        QCOMPARE(b->x.f32()[12 + 11], pixel(5, 11));
    }

    // ---- Stage failures ----------------------------------------------------------------------

    void stageFailureIsAnErrorNamingTheNode_data()
    {
        QTest::addColumn<int>("workers");
        QTest::newRow("1 worker") << 1;
        QTest::newRow("3 workers") << 3;
    }
    void stageFailureIsAnErrorNamingTheNode()
    {
        QFETCH(int, workers);
        auto ds = makeDataset(100);
        auto throwing = std::make_shared<ThrowingTransform>(20); // batch 2
        auto after = std::make_shared<Probe>();
        auto flow = makeFlow(ds,
                             {{"scale", std::make_shared<ScaleTransform>(1.0f)},
                              {"augment", throwing},
                              {"after", after}},
                             options(10, false, 0, false, 8, workers));
        QVERIFY(flow);
        flow->startEpoch(0);
        int64_t good = 0;
        Result<std::optional<Batch>> r = flow->next();
        while (r.ok() && r.value()) {
            QCOMPARE(r.value()->index, good); // whatever arrives comes in order
            ++good;
            r = flow->next();
        }
        QVERIFY2(!r.ok(), "the epoch ended without the stage's error");
        QVERIFY(good <= 2); // never a batch at or past the failed one
        QCOMPARE(qs(r.error().node), QString("augment"));
        QVERIFY2(r.error().message.find("transform failed") != std::string::npos,
                 r.error().message.c_str());
        QVERIFY(qs(r.error().str()).contains("augment"));
        // Asking again gives no batch past the failure.
        Result<std::optional<Batch>> again = flow->next();
        QVERIFY(!again.ok() || !again.value());

        // A new epoch works again.
        throwing->armed = false;
        const std::vector<int32_t> labels = epochLabels(*flow, 1);
        QCOMPARE(int64_t(labels.size()), int64_t(100));
    }

    void batchesBeforeAFailureStillArrive()
    {
        // The Loader handed out every batch before the one that failed, then the error; so does
        // a DataFlow when the consumer is quicker than the chain. When the chain is ahead, the
        // error must still not overtake batches 0 and 1, which are already made.
        auto ds = makeDataset(100);
        auto throwing = std::make_shared<ThrowingTransform>(20); // batch 2
        auto flow = makeFlow(ds, {{"augment", throwing}}, options(10, false, 0, false, 8, 1));
        QVERIFY(flow);
        flow->startEpoch(0);
        QVERIFY(waitFor([&] { return throwing->thrown.load(); }));
        QVERIFY(waitFor([&] { return flow->stats().stages[1].batches == 3; }));
        Result<std::optional<Batch>> first = flow->next();
        QVERIFY(first.ok() && first.value() && first.value()->index == 0);
        Result<std::optional<Batch>> second = flow->next();
        QVERIFY(second.ok() && second.value() && second.value()->index == 1);
        Result<std::optional<Batch>> third = flow->next();
        QVERIFY(!third.ok());
        QCOMPARE(qs(third.error().node), QString("augment"));
    }

    // ---- Backpressure ------------------------------------------------------------------------

    void backpressureBoundsEveryWire()
    {
        auto ds = makeDataset(1000);
        auto a = std::make_shared<Probe>(), b = std::make_shared<Probe>();
        const int cap = 3;
        DataFlowOptions o = options(10, true, 1, false, cap, 2);
        auto flow = makeFlow(ds, {{"a", a}, {"b", b}}, o);
        QVERIFY(flow);
        flow->startEpoch(0);
        // Without any next() call every wire fills up: 3 batches made by b, 3 more by a (b took
        // the first 3), 3 more by the source (a took 6)...
        // After `consumed` batches the chain settles at this many batches made by each stage.
        auto steady = [&](int consumed) {
            return b->calls == std::min(cap + consumed, 100) &&
                   a->calls == std::min(2 * cap + consumed, 100) &&
                   flow->stats().stages[0].batches == std::min(3 * cap + consumed, 100);
        };
        QVERIFY(waitFor([&] { return steady(0); }));
        // ...and then stops there instead of building the whole epoch.
        std::this_thread::sleep_for(100ms);
        QVERIFY(steady(0));
        FlowStats st = flow->stats();
        QCOMPARE(int(st.edges.size()), 3);
        for (const EdgeStats &e : st.edges) {
            QCOMPARE(e.capacity, int64_t(cap));
            QCOMPARE(e.queued, int64_t(cap));
        }
        // A buffered batch is handed out without waiting.
        QVERIFY(take(*flow));
        QVERIFY(flow->stats().consumerWaitSeconds == 0.0);

        // A slow consumer: the chain never gets more than the queues ahead of it.
        int consumed = 1;
        while (true) {
            QVERIFY(waitFor([&] { return steady(consumed); }));
            st = flow->stats();
            QVERIFY2(b->calls <= consumed + cap, qPrintable(QString::number(b->calls)));
            QVERIFY2(a->calls <= consumed + 2 * cap, qPrintable(QString::number(a->calls)));
            QVERIFY(st.stages[0].batches <= consumed + 3 * cap);
            for (const EdgeStats &e : st.edges)
                QVERIFY2(e.queued <= e.capacity, qPrintable(qs(e.from + " -> " + e.to)));
            std::optional<Batch> batch = take(*flow);
            if (!batch) break;
            QCOMPARE(batch->index, int64_t(consumed));
            ++consumed;
        }
        QCOMPARE(consumed, 100);
        QCOMPARE(a->calls.load(), 100);
        QCOMPARE(b->calls.load(), 100);
    }

    void queueCapacityOfZeroStillWorks()
    {
        auto ds = makeDataset(30);
        auto flow =
            makeFlow(ds, {{"a", std::make_shared<Probe>()}}, options(4, true, 1, false, 0, 2));
        QVERIFY(flow);
        QCOMPARE(flow->options().queueCapacity, 1);
        QCOMPARE(int64_t(epochLabels(*flow, 0).size()), int64_t(30));
        QCOMPARE(flow->stats().edges[0].capacity, int64_t(1));
    }

    // ---- Determinism -------------------------------------------------------------------------

    void sameBatchesForAnyWorkerCount()
    {
        SKIP_UNLESS_NCHW();
        auto ds = makeDataset(96, 2, 8, 8);
        std::vector<Stage> chain = {
            {"jitterA", std::make_shared<Jitter>()},
            {"norm", std::make_shared<Normalize>(0.3f, 0.2f)},
            {"flip", std::make_shared<RandomHorizontalFlip>(0.5f)},
            {"affine", std::make_shared<RandomAffine>(15.0f, 0.1f, 0.8f, 1.2f, -1.0f)},
            {"crop", std::make_shared<RandomCrop>(6, 6, 2, 0.0f)},
            {"jitterB", std::make_shared<Jitter>()},
        };
        auto run = [&](int workers, uint64_t seed, int64_t cacheLimit, int64_t batchSize = 8,
                       bool shuffle = true) {
            DataFlowOptions o = options(batchSize, shuffle, seed, false, 3, workers);
            o.cacheLimitBytes = cacheLimit;
            std::vector<Batch> out;
            auto flow = makeFlow(ds, chain, o);
            if (!flow) return out;
            for (int64_t epoch : {0, 1, 2}) {
                std::vector<Batch> e = epochBatches(*flow, epoch);
                for (Batch &b : e)
                    out.push_back(std::move(b));
            }
            return out;
        };
        const int64_t bigCache = int64_t(1) << 30;
        const std::vector<Batch> one = run(1, 11, bigCache);
        QCOMPARE(int64_t(one.size()), int64_t(3 * 12));
        QCOMPARE(one[0].x.shape(), (Shape{8, 2, 6, 6}));
        QString why;
        for (int workers : {2, 4}) {
            QVERIFY2(sameBatches(one, run(workers, 11, bigCache), &why),
                     qPrintable(QString("%1 workers: %2").arg(workers).arg(why)));
        }
        // The cache does not change the results either.
        QVERIFY2(sameBatches(one, run(3, 11, 0), &why), qPrintable("uncached: " + why));

        // Another seed: another order and other augmentations of the same samples.
        const std::vector<Batch> other = run(2, 12, bigCache);
        QVERIFY(!sameBatches(one, other, &why));
        const auto a = samplesByLabel({one.begin(), one.begin() + 12});
        const auto b = samplesByLabel({other.begin(), other.begin() + 12});
        QCOMPARE(a.size(), size_t(96));
        QCOMPARE(b.size(), size_t(96));
        int differ = 0;
        for (const auto &[label, values] : a)
            differ += b.at(label) != values;
        QVERIFY2(differ > 80, qPrintable(QString::number(differ)));
        // Another epoch: other augmentations too.
        const auto a1 = samplesByLabel({one.begin() + 12, one.begin() + 24});
        differ = 0;
        for (const auto &[label, values] : a)
            differ += a1.at(label) != values;
        QVERIFY2(differ > 80, qPrintable(QString::number(differ)));

        // A sample's draws depend on neither its batch nor the order: batches of 5 in order give
        // every sample the same values as batches of 8 shuffled.
        const std::vector<Batch> small = run(4, 11, bigCache, 5, false);
        QCOMPARE(samplesByLabel({small.begin(), small.begin() + 20}), a);

        // Each sample is exactly its pixels through the chain with the published seeds.
        const Shape in{2, 8, 8};
        for (int32_t s : {0, 17, 95}) {
            std::vector<float> x(size_t(in.numel()));
            for (int64_t k = 0; k < in.numel(); ++k)
                x[size_t(k)] = pixel(s, k);
            Shape shape = in;
            for (const Stage &st : chain) {
                const Shape out = st.transform->outputShape(shape).value();
                const uint64_t seed = DataFlow::sampleSeed(11, st.node, 0, s);
                if (st.transform->inPlace()) {
                    st.transform->apply(x.data(), x.data(), 1, shape, &seed);
                } else {
                    std::vector<float> y(size_t(out.numel()));
                    st.transform->apply(x.data(), y.data(), 1, shape, &seed);
                    x = std::move(y);
                }
                shape = out;
            }
            QCOMPARE(a.at(s), x);
        }
    }

    // ---- Cancellation ------------------------------------------------------------------------

    void cancelIsPrompt_data()
    {
        QTest::addColumn<int>("slowStage"); // -1: none; else the index of the slow transform
        QTest::addColumn<bool>("bigSource");
        QTest::addColumn<bool>("destroy");
        QTest::addColumn<bool>("consumerWaits");
        QTest::newRow("source on a full queue: cancel") << -1 << false << false << false;
        QTest::newRow("source on a full queue: destroy") << -1 << false << true << false;
        QTest::newRow("source gathering: cancel") << -1 << true << false << false;
        QTest::newRow("source gathering: cancel, consumer waits") << -1 << true << false << true;
        QTest::newRow("source gathering: destroy") << -1 << true << true << false;
        QTest::newRow("first stage slow: cancel") << 0 << false << false << false;
        QTest::newRow("first stage slow: cancel, consumer waits") << 0 << false << false << true;
        QTest::newRow("first stage slow: destroy") << 0 << false << true << false;
        QTest::newRow("middle stage slow: cancel") << 1 << false << false << false;
        QTest::newRow("middle stage slow: cancel, consumer waits") << 1 << false << false << true;
        QTest::newRow("middle stage slow: destroy") << 1 << false << true << false;
        QTest::newRow("last stage slow: cancel") << 2 << false << false << false;
        QTest::newRow("last stage slow: cancel, consumer waits") << 2 << false << false << true;
        QTest::newRow("last stage slow: destroy") << 2 << false << true << false;
    }
    void cancelIsPrompt()
    {
        QFETCH(int, slowStage);
        QFETCH(bool, bigSource);
        QFETCH(bool, destroy);
        QFETCH(bool, consumerWaits);
        if (bigSource) SKIP_UNLESS_NCHW();
        // Slow: 300 ms a batch, 40 batches: a whole epoch takes 6 s even with both workers.
        const int64_t count = bigSource ? 1024 : 400, batchSize = bigSource ? 128 : 10;
        auto ds = bigSource ? makeDataset(count, 3, 96, 96) : makeDataset(count);
        std::vector<std::shared_ptr<Probe>> probes;
        std::vector<Stage> chain;
        for (const char *node : {"first", "middle", "last"}) {
            probes.push_back(std::make_shared<Probe>(node != std::string("first")));
            chain.push_back({node, probes.back()});
        }
        if (slowStage >= 0) probes[size_t(slowStage)]->sleepMs = 300;
        DataFlowOptions o = options(batchSize, true, 4, false, 2, 2);
        auto flow = makeFlow(ds, chain, o);
        QVERIFY(flow);
        flow->startEpoch(0);

        if (slowStage >= 0) {
            QVERIFY(waitFor([&] { return probes[size_t(slowStage)]->running > 0; }));
        } else if (!bigSource) {
            // Every wire full, the workers waiting for room.
            QVERIFY(waitFor([&] {
                const FlowStats st = flow->stats();
                return std::all_of(st.edges.begin(), st.edges.end(),
                                   [](const EdgeStats &e) { return e.queued == e.capacity; });
            }));
        }
        std::atomic<bool> consumerDone{false}, consumerFailed{false};
        std::thread consumer;
        if (consumerWaits) {
            consumer = std::thread([&] {
                while (true) {
                    Result<std::optional<Batch>> r = flow->next();
                    if (!r.ok()) consumerFailed = true;
                    if (!r.ok() || !r.value()) break;
                }
                consumerDone = true;
            });
            std::this_thread::sleep_for(30ms); // let it block in next()
        }
        // Whatever fails below, the consumer thread must not outlive the test.
        auto joinConsumer = qScopeGuard([&] {
            if (!consumer.joinable()) return;
            if (flow) flow->cancel();
            consumer.join();
        });

        const double limit = 2.5; // seconds; a batch in progress takes at most 0.3
        if (destroy) {
            DataFlow *raw = flow.release();
            const double seconds = timedOnThread([raw] { delete raw; });
            QVERIFY2(seconds >= 0, "~DataFlow did not return");
            QVERIFY2(seconds < limit, qPrintable(QString("~DataFlow took %1 s").arg(seconds)));
            return;
        }
        auto startsOf = [&] {
            int n = 0;
            for (auto &p : probes)
                n += p->starts;
            return n;
        };
        int startsBefore = 0;
        const auto start = Clock::now();
        DataFlow *raw = flow.get();
        const double seconds = timedOnThread([raw, &startsBefore, &startsOf] {
            startsBefore = startsOf();
            raw->cancel();
        });
        if (seconds < 0) {
            flow.release(); // still in use by the hung thread
            QFAIL("cancel() did not return");
        }
        QVERIFY2(seconds < limit, qPrintable(QString("cancel() took %1 s").arg(seconds)));
        // cancel() returns once the batches in progress are done...
        for (auto &p : probes)
            QCOMPARE(p->running.load(), 0);
        // ...and starts no others: behind a slow stage at most one stage call per worker (one it
        // picked just before the cancel) began after cancel() was called. (With fast stages and
        // a busy consumer, calls may start between the count and the cancel taking effect.)
        if (slowStage >= 0)
            QVERIFY2(startsOf() - startsBefore <= o.workers,
                     qPrintable(QString("%1 stage calls began during cancel()")
                                    .arg(startsOf() - startsBefore)));
        const int startsAfter = startsOf();
        std::this_thread::sleep_for(50ms);
        QCOMPARE(startsOf(), startsAfter);
        if (consumerWaits) {
            const bool returned = waitFor([&] { return consumerDone.load(); });
            if (!returned) {
                consumer.detach();
                flow.release();
                QFAIL("next() did not return after cancel()");
            }
            consumer.join();
            QVERIFY(!consumerFailed);
            QVERIFY2(secondsSince(start) < limit,
                     qPrintable(
                         QString("next() returned %1 s after cancel()").arg(secondsSince(start))));
        }
        // The epoch is over...
        QVERIFY(atEnd(*flow));
        QVERIFY(atEnd(*flow));
        // ...and the flow starts the next one from its beginning.
        for (auto &p : probes)
            p->sleepMs = 0;
        flow->startEpoch(1);
        std::vector<int32_t> labels;
        int64_t index = 0;
        while (std::optional<Batch> b = take(*flow)) {
            QCOMPARE(b->epoch, int64_t(1));
            QCOMPARE(b->index, index++);
            const std::vector<int32_t> l = labelsOf(*b);
            labels.insert(labels.end(), l.begin(), l.end());
        }
        QCOMPARE(index, count / batchSize);
        const std::vector<int64_t> order = DataFlow::epochOrder(count, 4, 1, true);
        QCOMPARE(std::vector<int64_t>(labels.begin(), labels.end()), order);
    }

    void cancelWithoutAnEpoch()
    {
        auto ds = makeDataset(40);
        auto flow = makeFlow(ds, {}, options(10));
        QVERIFY(flow);
        flow->cancel(); // nothing started: a no-op
        QVERIFY(atEnd(*flow));
        flow->startEpoch(0);
        QVERIFY(take(*flow));
        flow->cancel();
        flow->cancel(); // twice
        QVERIFY(atEnd(*flow));
        QCOMPARE(int64_t(epochLabels(*flow, 0).size()), int64_t(40));
        flow->cancel(); // after the epoch's end
        QVERIFY(atEnd(*flow));
    }

    // ---- Cache -------------------------------------------------------------------------------

    void cachesTheDeterministicPrefix()
    {
        auto ds = makeDataset(50);
        auto counter = std::make_shared<Probe>();
        auto uncachedCounter = std::make_shared<Probe>();
        auto norm = std::make_shared<Normalize>(0.5f, 0.25f);
        auto flip = std::make_shared<RandomHorizontalFlip>(0.5f);
        DataFlowOptions o = options(8, true, 3, false, 2, 2);
        auto flow = makeFlow(ds, {{"count", counter}, {"norm", norm}, {"flip", flip}}, o);
        o.cacheLimitBytes = 0;
        auto plain = makeFlow(ds, {{"count", uncachedCounter}, {"norm", norm}, {"flip", flip}}, o);
        QVERIFY(flow && plain);

        // Epoch 0 runs the whole chain on every sample and fills the cache.
        const std::vector<Batch> e0 = epochBatches(*flow, 0);
        QCOMPARE(counter->samples.load(), 50);
        FlowStats st = flow->stats();
        QCOMPARE(st.cachedSamples, int64_t(50));
        QCOMPARE(st.cacheSamples, int64_t(50));
        for (const StageStats &s : st.stages)
            QVERIFY(!s.cached);
        for (const EdgeStats &e : st.edges)
            QVERIFY(!e.cached);
        QCOMPARE(st.stages[1].batches, int64_t(7));

        // Epoch 1 takes count -> norm from the cache: the counter sees no sample.
        const std::vector<Batch> e1 = epochBatches(*flow, 1);
        QCOMPARE(counter->samples.load(), 50);
        QCOMPARE(counter->calls.load(), 7);
        st = flow->stats();
        QCOMPARE(st.cachedSamples, int64_t(50));
        QCOMPARE(int(st.stages.size()), 4);
        QVERIFY(!st.stages[0].cached); // the source still gathers (from the cache)
        QVERIFY(st.stages[1].cached && st.stages[2].cached);
        QVERIFY(!st.stages[3].cached && st.stages[3].random);
        QVERIFY(!st.stages[1].random && !st.stages[2].random);
        QVERIFY(st.edges[0].cached && st.edges[1].cached);
        QVERIFY(!st.edges[2].cached && !st.edges[3].cached);
        QCOMPARE(st.stages[1].batches, int64_t(7));
        QCOMPARE(st.stages[2].batches, int64_t(7));
        QCOMPARE(st.stages[3].batches, int64_t(14));
        QCOMPARE(st.stages[0].batches, int64_t(14));
        QCOMPARE(st.edges[0].batches, int64_t(7));
        QCOMPARE(st.edges[1].batches, int64_t(7));
        QCOMPARE(st.edges[2].batches, int64_t(14)); // norm -> flip: from the cache this time
        QCOMPARE(st.edges[3].batches, int64_t(14));

        // The same values as without a cache, epoch by epoch.
        QString why;
        QVERIFY2(sameBatches(e0, epochBatches(*plain, 0), &why), qPrintable(why));
        QVERIFY2(sameBatches(e1, epochBatches(*plain, 1), &why), qPrintable(why));
        QVERIFY2(sameBatches(epochBatches(*flow, 2), epochBatches(*plain, 2), &why),
                 qPrintable(why));
        // A resumed epoch from the cache as well.
        const std::vector<Batch> tail = epochBatches(*flow, 1, 3);
        QVERIFY2(sameBatches(tail, std::vector<Batch>(e1.begin() + 3, e1.end()), &why),
                 qPrintable(why));
        QCOMPARE(counter->samples.load(), 50);
        QCOMPARE(uncachedCounter->samples.load(), 150);
        const FlowStats ps = plain->stats();
        QCOMPARE(ps.cacheSamples, int64_t(0));
        QCOMPARE(ps.cachedSamples, int64_t(0));
        for (const StageStats &s : ps.stages)
            QVERIFY(!s.cached);
    }

    void cachesAWholeDeterministicChain()
    {
        auto ds = makeDataset(30);
        auto counter = std::make_shared<Probe>();
        auto flow =
            makeFlow(ds, {{"count", counter}, {"norm", std::make_shared<Normalize>(0.1f, 2)}},
                     options(4, true, 9, false, 2, 2));
        QVERIFY(flow);
        const std::vector<Batch> e1a = [&] {
            auto fresh = makeFlow(ds,
                                  {{"count", std::make_shared<Probe>()},
                                   {"norm", std::make_shared<Normalize>(0.1f, 2)}},
                                  options(4, true, 9, false, 2, 2));
            return fresh ? epochBatches(*fresh, 1) : std::vector<Batch>{};
        }();
        epochBatches(*flow, 0);
        QCOMPARE(counter->samples.load(), 30);
        QString why;
        QVERIFY2(sameBatches(epochBatches(*flow, 1), e1a, &why), qPrintable(why));
        QCOMPARE(counter->samples.load(), 30);
        const FlowStats st = flow->stats();
        QVERIFY(st.stages[1].cached && st.stages[2].cached);
        QVERIFY(st.edges[0].cached && st.edges[1].cached && !st.edges[2].cached);
        QCOMPARE(st.edges[2].batches, int64_t(16)); // into the consumer, both epochs
    }

    void randomFirstStageCachesNothing()
    {
        auto ds = makeDataset(50);
        auto counter = std::make_shared<Probe>();
        auto flow = makeFlow(
            ds, {{"flip", std::make_shared<RandomHorizontalFlip>(0.5f)}, {"count", counter}},
            options(8, true, 3, false, 2, 2));
        QVERIFY(flow);
        epochBatches(*flow, 0);
        epochBatches(*flow, 1);
        QCOMPARE(counter->samples.load(), 100);
        const FlowStats st = flow->stats();
        QCOMPARE(st.cacheSamples, int64_t(0));
        QCOMPARE(st.cachedSamples, int64_t(0));
        for (const StageStats &s : st.stages)
            QVERIFY(!s.cached);
        for (const EdgeStats &e : st.edges)
            QVERIFY(!e.cached);
    }

    void cacheLimitIsRespected()
    {
        auto ds = makeDataset(50); // the cache holds 50 samples of 6 floats: 1200 bytes
        for (int64_t limit : {int64_t(1199), int64_t(1200)}) {
            auto counter = std::make_shared<Probe>();
            DataFlowOptions o = options(8);
            o.cacheLimitBytes = limit;
            auto flow = makeFlow(
                ds, {{"count", counter}, {"flip", std::make_shared<RandomHorizontalFlip>(0.5f)}},
                o);
            QVERIFY(flow);
            epochBatches(*flow, 0);
            epochBatches(*flow, 1);
            const bool cached = limit >= 1200;
            QCOMPARE(flow->stats().cacheSamples, cached ? int64_t(50) : int64_t(0));
            QCOMPARE(counter->samples.load(), cached ? 50 : 100);
        }
    }

    void cacheIsUsedWithDropLast()
    {
        // dropLast in data order never visits the last samples; the samples an epoch does visit
        // are all cached after the first one.
        auto ds = makeDataset(50);
        auto counter = std::make_shared<Probe>();
        auto flow = makeFlow(
            ds, {{"count", counter}, {"flip", std::make_shared<RandomHorizontalFlip>(0.5f)}},
            options(8, false, 3, true));
        QVERIFY(flow);
        QCOMPARE(int64_t(epochBatches(*flow, 0).size()), int64_t(6));
        QCOMPARE(counter->samples.load(), 48);
        QCOMPARE(int64_t(epochBatches(*flow, 1).size()), int64_t(6));
        QCOMPARE(counter->samples.load(), 48);
    }

    // ---- Statistics --------------------------------------------------------------------------

    void slowStageIsTheBusiestAndTheConsumerWaits()
    {
        auto ds = makeDataset(80);
        auto decode = std::make_shared<Probe>(), slow = std::make_shared<Probe>(),
             fast = std::make_shared<Probe>(true);
        slow->sleepMs = 40;
        auto flow = makeFlow(ds, {{"decode", decode}, {"slow", slow}, {"fast", fast}},
                             options(10, true, 1, false, 2, 1));
        QVERIFY(flow);
        const auto start = Clock::now();
        QCOMPARE(int64_t(epochBatches(*flow, 0).size()), int64_t(8));
        const double wall = secondsSince(start);
        const FlowStats st = flow->stats();
        QCOMPARE(st.workers, 1);
        QCOMPARE(qs(st.stages[2].node), QString("slow"));
        // 8 batches at 40 ms each.
        QVERIFY2(st.stages[2].busySeconds >= 0.3,
                 qPrintable(QString::number(st.stages[2].busySeconds)));
        for (size_t i = 0; i < st.stages.size(); ++i)
            if (i != 2)
                QVERIFY2(st.stages[i].busySeconds * 2 < st.stages[2].busySeconds,
                         qPrintable(qs(st.stages[i].node) + " " +
                                    QString::number(st.stages[i].busySeconds)));
        // The consumer, doing nothing itself, waited for most of the epoch...
        QVERIFY2(st.consumerWaitSeconds >= 0.25 && st.consumerWaitSeconds >= 0.5 * wall,
                 qPrintable(QString("%1 of %2 s").arg(st.consumerWaitSeconds).arg(wall)));
        QVERIFY(st.edges.back().consumerWaitSeconds >= st.consumerWaitSeconds);
        // ...and so did the stage after the slow one, while the slow one was rarely starved.
        QVERIFY2(st.edges[2].consumerWaitSeconds >= 0.15,
                 qPrintable(QString::number(st.edges[2].consumerWaitSeconds)));
        QVERIFY2(st.edges[1].consumerWaitSeconds < st.edges[2].consumerWaitSeconds,
                 qPrintable(QString("%1 vs %2")
                                .arg(st.edges[1].consumerWaitSeconds)
                                .arg(st.edges[2].consumerWaitSeconds)));
    }

    void slowConsumerHardlyWaits()
    {
        auto ds = makeDataset(100);
        auto flow = makeFlow(ds,
                             {{"a", std::make_shared<Probe>()},
                              {"b", std::make_shared<Probe>(true)},
                              {"c", std::make_shared<Probe>()}},
                             options(10, true, 1, false, 2, 1));
        QVERIFY(flow);
        flow->startEpoch(0);
        int n = 0;
        double own = 0; // the consumer's own work, as long as a busy machine made it
        while (take(*flow)) {
            ++n;
            const auto t0 = std::chrono::steady_clock::now();
            std::this_thread::sleep_for(30ms);
            own += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        QCOMPARE(n, 10);
        // Against the consumer's own 0.3 s or more, the waits (the first batch's making, mostly)
        // and the stages' work (microseconds a batch) are small.
        const FlowStats st = flow->stats();
        QVERIFY2(st.consumerWaitSeconds < own / 3,
                 qPrintable(QString("%1 of %2").arg(st.consumerWaitSeconds).arg(own)));
        for (const StageStats &s : st.stages) {
            QCOMPARE(s.batches, int64_t(10));
            QVERIFY2(s.busySeconds < own / 3, qPrintable(qs(s.node)));
        }
    }

    void edgeStatisticsCountWhatWentThrough()
    {
        auto ds = makeDataset(23); // samples of 1 x 2 x 3
        DataFlowOptions o = options(5, true, 2, false, 2, 2);
        o.sourceNode = "reader";
        o.consumerNode = "trainer";
        auto flow = makeFlow(ds,
                             {{"crop", std::make_shared<RandomCrop>(1, 2, 0, 0.0f)},
                              {"norm", std::make_shared<Normalize>(0.5f, 0.5f)}},
                             o);
        QVERIFY(flow);
        QCOMPARE(flow->sampleShape(), (Shape{1, 1, 2}));
        FlowStats st = flow->stats();
        QCOMPARE(int(st.stages.size()), 3);
        QCOMPARE(int(st.edges.size()), 3);
        QCOMPARE(st.workers, 2);
        const QStringList names{"reader", "crop", "norm", "trainer"};
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(qs(st.stages[size_t(i)].node), names[i]);
            QCOMPARE(qs(st.edges[size_t(i)].from), names[i]);
            QCOMPARE(qs(st.edges[size_t(i)].to), names[i + 1]);
            QCOMPARE(st.edges[size_t(i)].batches, int64_t(0));
            QCOMPARE(st.edges[size_t(i)].capacity, int64_t(2));
        }
        QVERIFY(!st.stages[0].random && st.stages[1].random && !st.stages[2].random);

        QCOMPARE(int64_t(epochBatches(*flow, 0).size()), int64_t(5));
        // 23 samples of 6 floats and a label, then of 2 floats and a label.
        const int64_t big = 6 * 4 + 4, small = 2 * 4 + 4;
        st = flow->stats();
        for (int i = 0; i < 3; ++i) {
            const EdgeStats &e = st.edges[size_t(i)];
            QCOMPARE(e.batches, int64_t(5));
            QCOMPARE(e.samples, int64_t(23));
            QCOMPARE(e.bytes, 23 * (i == 0 ? big : small));
            QCOMPARE(e.queued, int64_t(0));
            QCOMPARE(st.stages[size_t(i)].batches, int64_t(5));
        }
        // A resumed epoch adds what it did: batches 2..4, samples 10..22.
        QCOMPARE(int64_t(epochBatches(*flow, 1, 2).size()), int64_t(3));
        st = flow->stats();
        for (int i = 0; i < 3; ++i) {
            const EdgeStats &e = st.edges[size_t(i)];
            QCOMPARE(e.batches, int64_t(8));
            QCOMPARE(e.samples, int64_t(23 + 13));
            QCOMPARE(e.bytes, (23 + 13) * (i == 0 ? big : small));
        }
    }

    void waitStatisticsNeverDecrease()
    {
        // "slow" holds its batch for 600 ms while "after" waits for it; a cancel() in between must
        // not take back the waiting already reported.
        auto ds = makeDataset(40);
        auto slow = std::make_shared<Probe>(), after = std::make_shared<Probe>();
        slow->sleepMs = 600;
        auto flow =
            makeFlow(ds, {{"slow", slow}, {"after", after}}, options(10, true, 1, false, 2, 1));
        QVERIFY(flow);
        flow->startEpoch(0);
        QVERIFY(waitFor([&] { return slow->running > 0; }));
        std::this_thread::sleep_for(200ms);
        const double before = flow->stats().edges[1].consumerWaitSeconds;
        QVERIFY2(before >= 0.15, qPrintable(QString::number(before)));
        flow->cancel();
        const double later = flow->stats().edges[1].consumerWaitSeconds;
        QVERIFY2(later >= before, qPrintable(QString("%1 then %2").arg(before).arg(later)));
    }

    // ---- Shapes ------------------------------------------------------------------------------

    void cropChangesTheSampleShape()
    {
        auto ds = makeDataset(20, 1, 5, 6);
        auto flow = makeFlow(ds,
                             {{"crop", std::make_shared<RandomCrop>(3, 4, 0, 0.0f)},
                              {"norm", std::make_shared<Normalize>(0.0f, 1.0f)}},
                             options(8, false, 5));
        QVERIFY(flow);
        QCOMPARE(flow->sampleShape(), (Shape{1, 3, 4}));
        const std::vector<Batch> batches = epochBatches(*flow, 0);
        QCOMPARE(int64_t(batches.size()), int64_t(3));
        std::set<std::pair<int, int>> offsets;
        for (const Batch &b : batches) {
            const int64_t n = b.x.shape()[0];
            QCOMPARE(b.x.shape(), (Shape{n, 1, 3, 4}));
            for (int64_t i = 0; i < n; ++i) {
                const int32_t s = b.y.data<int32_t>()[i];
                const float *x = b.x.f32() + i * 12;
                // Pixel (r, c) of sample s is pixel(s, r * 6 + c): the first value gives the
                // window's corner, the rest must follow.
                int y0 = -1, x0 = -1;
                for (int r = 0; r <= 2; ++r)
                    for (int c = 0; c <= 2; ++c)
                        if (pixel(s, r * 6 + c) == x[0]) {
                            y0 = r;
                            x0 = c;
                        }
                QVERIFY(y0 >= 0);
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 4; ++c)
                        QCOMPARE(x[r * 4 + c], pixel(s, (y0 + r) * 6 + x0 + c));
                offsets.insert({y0, x0});
            }
        }
        QVERIFY2(offsets.size() >= 4, "the crop offsets are not random");
    }

    void createRejectsChainsThatDoNotFit()
    {
        auto ds = makeDataset(10, 1, 5, 6);
        auto norm = std::make_shared<Normalize>(0.0f, 1.0f);
        // A 6 x 6 crop of a 5 x 6 image without padding.
        Result<std::unique_ptr<DataFlow>> r = DataFlow::create(
            ds, {{"norm", norm}, {"crop", std::make_shared<RandomCrop>(6, 6, 0, 0.0f)}},
            options(4));
        QVERIFY(!r.ok());
        QCOMPARE(qs(r.error().node), QString("crop"));
        QVERIFY2(r.error().message.find("does not fit") != std::string::npos,
                 r.error().message.c_str());
        // After a crop that shrinks the image, a second one that needs the old size.
        r = DataFlow::create(ds,
                             {{"crop1", std::make_shared<RandomCrop>(4, 4, 0, 0.0f)},
                              {"crop2", std::make_shared<RandomCrop>(5, 5, 0, 0.0f)}},
                             options(4));
        QVERIFY(!r.ok());
        QCOMPARE(qs(r.error().node), QString("crop2"));
        // With padding it fits.
        r = DataFlow::create(ds, {{"crop", std::make_shared<RandomCrop>(6, 6, 1, 0.0f)}},
                             options(4));
        QVERIFY(r.ok());
        QCOMPARE(r.value()->sampleShape(), (Shape{1, 6, 6}));
        // An in-place transform that changes the shape.
        r = DataFlow::create(ds, {{"norm", norm}, {"widen", std::make_shared<WidensInPlace>()}},
                             options(4));
        QVERIFY(!r.ok());
        QCOMPARE(qs(r.error().node), QString("widen"));
    }
};

QTEST_GUILESS_MAIN(TestDataFlow)
#include "test_dataflow.moc"
