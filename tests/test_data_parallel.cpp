// DataParallel on its own, with a stand-in communicator: which gradients go in which bucket, that
// a bucket starts summing while the earlier layers still compute (the overlap with the backward
// pass), and that the update it makes is the one a single process makes on the whole batch.
// tests/test_distributed.cpp runs the real thing under mpirun.
#include "core/backend/backend.h"
#include "core/base/rng.h"
#include "core/exec/data_parallel.h"
#include "core/exec/job.h"
#include "core/exec/train_step.h"
#include "core/graph/pipeline_file.h"

#include <QtTest>

#include <cstring>
#include <string>
#include <vector>

using namespace fb;

namespace {

// Rank 0 of 2, where rank 1 holds exactly what rank 0 holds: every sum doubles the values. It
// writes down each call, so that a test sees their order.
class TwinCommunicator final : public dist::Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 2; }
    int localSize() const override { return 2; }
    int localRank() const override { return 0; }
    const std::string &host() const override { return m_host; }
    std::string hostOf(int) const override { return m_host; }
    void allReduceSum(float *data, size_t count) override
    {
        for (size_t i = 0; i < count; ++i)
            data[i] *= 2;
    }
    void allReduceSum(double *data, size_t count) override
    {
        for (size_t i = 0; i < count; ++i)
            data[i] *= 2;
    }
    void broadcast(void *, size_t, int) override {}

    struct Twin final : Pending {
        float *data = nullptr;
        size_t count = 0;
        bool done = false;
    };
    std::unique_ptr<Pending> startAllReduceSum(float *data, size_t count) override
    {
        log.push_back("start " + std::to_string(count));
        auto p = std::make_unique<Twin>();
        p->data = data;
        p->count = count;
        return p;
    }
    bool test(Pending &p) override
    {
        log.push_back("test");
        return static_cast<Twin &>(p).done;
    }
    void wait(Pending &p) override
    {
        auto &t = static_cast<Twin &>(p);
        log.push_back("wait " + std::to_string(t.count));
        // Only now does the sum land: data read before this would be this rank's alone.
        for (size_t i = 0; i < t.count; ++i)
            t.data[i] *= 2;
        t.done = true;
    }

    std::vector<std::string> log;

private:
    std::string m_host = "here";
};

// One rank of a job of two on hosts of the test's choosing. Its double sums add what the other
// rank put in (`other`, recorded from that rank's own call by this same class), and it records
// what it put in itself.
class ScriptedCommunicator final : public dist::Communicator {
public:
    ScriptedCommunicator(int rank, std::vector<std::string> hosts)
        : m_rank(rank)
        , m_hosts(std::move(hosts))
    {}
    int rank() const override { return m_rank; }
    int size() const override { return 2; }
    int localSize() const override { return m_hosts[0] == m_hosts[1] ? 2 : 1; }
    int localRank() const override { return m_hosts[0] == m_hosts[1] ? m_rank : 0; }
    const std::string &host() const override { return m_hosts[size_t(m_rank)]; }
    std::string hostOf(int r) const override { return m_hosts[size_t(r)]; }
    void allReduceSum(float *, size_t) override {}
    void allReduceSum(double *data, size_t count) override
    {
        recorded.assign(data, data + count);
        for (size_t i = 0; i < count && i < other.size(); ++i)
            data[i] += other[i];
    }
    void broadcast(void *, size_t, int) override {}
    std::unique_ptr<Pending> startAllReduceSum(float *, size_t) override { return nullptr; }
    bool test(Pending &) override { return true; }
    void wait(Pending &) override {}

    std::vector<double> recorded, other;

private:
    int m_rank;
    std::vector<std::string> m_hosts;
};

// What rank 0 hears from sharedGpuProblem when rank 1 runs on `hosts[1]` with GPU `gpu1`.
std::string sharedGpuSeenByRank0(const std::vector<std::string> &hosts, const std::string &gpu0,
                                 const std::string &gpu1)
{
    ScriptedCommunicator rank1(1, hosts);
    dist::sharedGpuProblem(rank1, gpu1);
    ScriptedCommunicator rank0(0, hosts);
    rank0.other = rank1.recorded;
    return dist::sharedGpuProblem(rank0, gpu0);
}

struct Trainer {
    exec::TrainingJob job;
    nn::Model model;
    std::unique_ptr<nn::Loss> loss;
    std::unique_ptr<nn::Optimizer> optimizer;
};

Trainer cnn(Backend &backend)
{
    auto doc =
        graph::loadPipeline(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");
    if (!doc.ok()) qFatal("%s", doc.error().str().c_str());
    auto job = exec::readTrainingJob(doc.value());
    if (!job.ok()) qFatal("%s", job.error().str().c_str());
    auto model = exec::buildModel(job.value(), Shape{1, 28, 28});
    if (!model.ok()) qFatal("%s", model.error().str().c_str());
    Trainer t{job.value(), std::move(model).value(), exec::buildLoss(job.value()),
              exec::buildOptimizer(job->optimizer)};
    t.model.initialize(7);
    t.optimizer->attach(t.model.parameters());
    t.model.moveTo(backend);
    t.optimizer->moveTo(backend);
    return t;
}

data::Batch randomBatch(int64_t n)
{
    data::Batch b;
    b.x = Tensor::empty(Shape{n, 1, 28, 28});
    b.y = Tensor::empty(Shape{n}, DType::I32);
    Rng rng(3);
    for (int64_t i = 0; i < b.x.numel(); ++i)
        b.x.f32()[i] = rng.uniform();
    for (int64_t i = 0; i < n; ++i)
        b.y.data<int32_t>()[i] = int32_t(rng.next() % 10);
    return b;
}

} // namespace

class TestDataParallel : public QObject {
    Q_OBJECT
private slots:
    // `mpirun -np 2` on a host of one GPU: both ranks take GPU 0, and NCCL would refuse them with
    // "Duplicate GPU detected". Every rank learns it before NCCL starts, in words.
    void twoRanksOnOneGpuAreToldBeforeNccl()
    {
        const std::string gpu = "0 (PCI 00000000:3C:00.0)";
        const std::string shared = sharedGpuSeenByRank0({"node1", "node1"}, gpu, gpu);
        QVERIFY2(shared.find("ranks 0 and 1 on node1 would share its GPU " + gpu) == 0,
                 shared.c_str());
        QVERIFY(shared.find("at most as many ranks on each host as it has GPUs") !=
                std::string::npos);
        // Different GPUs on one host, or GPU 0 of two hosts: nothing to say.
        QCOMPARE(sharedGpuSeenByRank0({"node1", "node1"}, gpu, "1 (PCI 00000000:4D:00.0)"),
                 std::string());
        QCOMPARE(sharedGpuSeenByRank0({"node1", "node2"}, gpu, gpu), std::string());
    }

    void bucketsOverlapTheBackwardPassAndMakeTheSameUpdate()
    {
        Backend &cpu = *backendFor(Device::cpu()).value();
        cpu.setThreads(1);
        const data::Batch batch = randomBatch(16);

        // One process on the whole batch.
        Trainer alone = cnn(cpu);
        exec::TrainStep plain(cpu, alone.model, *alone.loss, *alone.optimizer, false);
        const LossResult expected = plain.run(batch, 0.05f, 11);

        // Rank 0 of two that hold the same batch: its share is half of the global batch, and
        // the twin's sum doubles it back.
        Trainer ranked = cnn(cpu);
        TwinCommunicator comm;
        exec::DataParallel dp(comm, ranked.model, cpu);
        exec::TrainStep step(cpu, ranked.model, *ranked.loss, *ranked.optimizer, false, &dp);
        const LossResult got = step.run(batch, 0.05f, 11);
        QCOMPARE(got.loss, expected.loss);
        QCOMPARE(got.correct, 2 * expected.correct); // the global batch's: both ranks' samples

        // Two buckets: the classifier's gradients (fc2, then fc1 fills the first 1 MiB bucket),
        // then the convolutions'. The first starts as soon as fc1's backward pass ends, and MPI is
        // moved on at the layers that follow (relu, pool, conv2 ...) before anything waits.
        const int64_t fc = 128 * 3136 + 128 + 10 * 128 + 10, conv = 64 * 32 * 9 + 64 + 32 * 9 + 32;
        const std::vector<std::string> &log = comm.log;
        const auto at = [&](const std::string &what) {
            return int(std::find(log.begin(), log.end(), what) - log.begin());
        };
        const int first = at("start " + std::to_string(fc)),
                  second = at("start " + std::to_string(conv));
        QVERIFY2(first < int(log.size()) && second < int(log.size()),
                 qPrintable(QString::fromStdString(log.empty() ? "(nothing)" : log.front())));
        QVERIFY(first < second);
        int testsBetween = 0;
        for (int i = first + 1; i < second; ++i)
            testsBetween += log[size_t(i)] == "test" ? 1 : 0;
        QVERIFY2(testsBetween >= 3, qPrintable(QString::number(testsBetween)));
        QVERIFY(second < at("wait " + std::to_string(fc)));

        // The same update, bit for bit: each gradient halved (the share) and doubled (the sum).
        auto a = alone.model.parameters(), b = ranked.model.parameters();
        QCOMPARE(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(a[i].name, b[i].name);
            QVERIFY2(std::memcmp(a[i].param->value.raw(), b[i].param->value.raw(),
                                 size_t(a[i].param->value.bytes())) == 0,
                     a[i].name.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestDataParallel)
#include "test_data_parallel.moc"
