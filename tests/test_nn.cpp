// Layers, compiled plans, losses, schedules and initializers: whole-model gradients against
// finite differences, shape inference errors, and the fast backend against the reference.

#include "core/backend/cpu/dnnl_common.h"
#include "core/nn/layers.h"
#include "core/nn/loss.h"
#include "core/nn/model.h"
#include "core/nn/optimizer.h"
#include "gradcheck.h"

#include <QtTest>

using namespace fb;
using namespace fb::nn;

namespace {

// input[2,6,6] -> conv(4,3x3,pad1) -> bn -> relu -> a ; a -> conv(4,3x3,pad1) -> b ;
// add(a, b) -> pool(2) -> dropout -> flatten -> linear(5) -> gelu -> linear(3)
Model residualModel(float dropout)
{
    Model m;
    m.setInput("x");
    auto ok = [](const Status &s) { QVERIFY2(s.ok(), s.ok() ? "" : s.error().str().c_str()); };
    ok(m.addLayer("conv1", makeConv2d(4, 3, 1, 1, true), {"x"}));
    ok(m.addLayer("bn1", makeBatchNorm2d(1e-5f, 0.1f), {"conv1"}));
    ok(m.addLayer("relu1", makeActivation(Activation::Sigmoid), {"bn1"}));
    ok(m.addLayer("conv2", makeConv2d(4, 3, 1, 1, false), {"relu1"}));
    ok(m.addLayer("res", makeAdd(), {"relu1", "conv2"}));
    ok(m.addLayer("pool", makePool2d(PoolKind::Avg, 2, 0, 0), {"res"}));
    ok(m.addLayer("drop", makeDropout(dropout), {"pool"}));
    ok(m.addLayer("flat", makeFlatten(), {"drop"}));
    ok(m.addLayer("fc1", makeLinear(5, true), {"flat"}));
    ok(m.addLayer("act", makeActivation(Activation::Tanh), {"fc1"}));
    ok(m.addLayer("fc2", makeLinear(3, true), {"act"}));
    ok(m.setOutput("fc2"));
    ok(m.compile({2, 6, 6}));
    m.initialize(7);
    return m;
}

// input[2,6,6] -> conv(4,3x3,pad1) -> silu -> global_avg_pool -> linear(5) -> batchnorm1d ->
// silu -> linear(3): the layers added as node types of their own (core/exec/nodes).
Model headModel()
{
    Model m;
    m.setInput("x");
    auto ok = [](const Status &s) { QVERIFY2(s.ok(), s.ok() ? "" : s.error().str().c_str()); };
    ok(m.addLayer("conv", makeConv2d(4, 3, 1, 1, true), {"x"}));
    ok(m.addLayer("act1", makeActivation(Activation::Silu), {"conv"}));
    ok(m.addLayer("gap", makeGlobalAvgPool(), {"act1"}));
    ok(m.addLayer("fc1", makeLinear(5, true), {"gap"}));
    ok(m.addLayer("bn", makeBatchNorm1d(1e-5f, 0.1f), {"fc1"}));
    ok(m.addLayer("act2", makeActivation(Activation::Silu), {"bn"}));
    ok(m.addLayer("fc2", makeLinear(3, true), {"act2"}));
    ok(m.setOutput("fc2"));
    ok(m.compile({2, 6, 6}));
    m.initialize(11);
    return m;
}

Model modelNamed(const QString &name, float dropout)
{
    return name == "residual" ? residualModel(dropout) : headModel();
}

void modelRows()
{
    QTest::addColumn<QString>("model");
    QTest::newRow("conv, batchnorm2d, add, pool, dropout, tanh") << "residual";
    QTest::newRow("silu, global_avg_pool, batchnorm1d") << "head";
}

float lossOf(Model &m, Backend &b, const Tensor &x, const Tensor &y, uint64_t seed)
{
    Plan &plan = m.plan(b, x.shape()[0], true);
    StepContext ctx{true, seed};
    const Tensor &out = plan.forward(x, ctx);
    auto loss = makeCrossEntropy();
    return loss->compute(b, out, y, nullptr).loss;
}

} // namespace

class TestNn : public QObject {
    Q_OBJECT

private slots:
    void modelGradientsMatchFiniteDifferences_data() { modelRows(); }
    void modelGradientsMatchFiniteDifferences()
    {
        QFETCH(QString, model);
        Backend &b = referenceBackend();
        Model m = modelNamed(model, 0.3f);
        Tensor x = Tensor::empty({3, 2, 6, 6});
        auto xv = fbtest::uniformVector(size_t(x.numel()), 5);
        std::copy(xv.begin(), xv.end(), x.f32());
        Tensor y = Tensor::empty({3}, DType::I32);
        y.data<int32_t>()[0] = 0, y.data<int32_t>()[1] = 2, y.data<int32_t>()[2] = 1;
        const uint64_t seed = 42; // same dropout mask in every evaluation

        Plan &plan = m.plan(b, 3, true);
        StepContext ctx{true, seed};
        const Tensor &out = plan.forward(x, ctx);
        auto loss = makeCrossEntropy();
        loss->compute(b, out, y, &plan.outputGrad());
        plan.backward(ctx);

        for (auto &np : m.parameters()) {
            Tensor &w = np.param->value;
            std::vector<float> values(w.f32(), w.f32() + w.numel());
            std::vector<float> analytic(np.param->grad.f32(), np.param->grad.f32() + w.numel());
            auto f = [&](const std::vector<float> &v) {
                std::copy(v.begin(), v.end(), w.f32());
                return double(lossOf(m, b, x, y, seed));
            };
            auto numeric = fbtest::numericalGradient(f, values, 1e-2);
            std::copy(values.begin(), values.end(), w.f32());
            auto cmp = fbtest::compare(analytic, numeric, 2e-3, 3e-2);
            QVERIFY2(cmp.ok, (np.name + ": " + cmp.report()).c_str());
        }
    }

    void fastBackendMatchesReferenceOverSteps_data() { modelRows(); }
    void fastBackendMatchesReferenceOverSteps()
    {
        QFETCH(QString, model);
        auto fast = backendFor(Device::cpu());
        QVERIFY(fast.ok());
        Model a = modelNamed(model, 0.2f), r = modelNamed(model, 0.2f);
        auto oa = makeSgd({0.05f, 0.9f, 0, 0, false}), orf = makeSgd({0.05f, 0.9f, 0, 0, false});
        oa->attach(a.parameters());
        orf->attach(r.parameters());
        auto loss = makeCrossEntropy();
        for (int step = 0; step < 10; ++step) {
            Tensor x = Tensor::empty({4, 2, 6, 6});
            auto xv = fbtest::uniformVector(size_t(x.numel()), 100 + step);
            std::copy(xv.begin(), xv.end(), x.f32());
            Tensor y = Tensor::empty({4}, DType::I32);
            for (int i = 0; i < 4; ++i)
                y.data<int32_t>()[i] = (i + step) % 3;
            StepContext ctx{true, uint64_t(step)};
            float la, lr;
            {
                Plan &p = a.plan(*fast.value(), 4, true);
                la = loss->compute(*fast.value(), p.forward(x, ctx), y, &p.outputGrad()).loss;
                p.backward(ctx);
                oa->step(*fast.value(), 0.05f);
            }
            {
                Plan &p = r.plan(referenceBackend(), 4, true);
                lr = loss->compute(referenceBackend(), p.forward(x, ctx), y, &p.outputGrad()).loss;
                p.backward(ctx);
                orf->step(referenceBackend(), 0.05f);
            }
            QVERIFY2(std::abs(la - lr) < 1e-4f * std::max(1.0f, std::abs(lr)),
                     qPrintable(QString("step %1: %2 vs %3").arg(step).arg(la).arg(lr)));
        }
    }

    // conv -> relu -> maxpool runs as conv -> maxpool -> relu: the same outputs and gradients.
    void reluMaxPoolRewriteKeepsResults()
    {
        Backend &b = referenceBackend();
        auto build = [](bool rewrites) {
            Model m;
            m.setRewrites(rewrites);
            m.setInput("x");
            auto ok = [](const Status &s) { QVERIFY(s.ok()); };
            ok(m.addLayer("conv", makeConv2d(3, 3, 1, 1, true), {"x"}));
            ok(m.addLayer("relu", makeActivation(Activation::Relu), {"conv"}));
            ok(m.addLayer("pool", makePool2d(PoolKind::Max, 2, 0, 0), {"relu"}));
            ok(m.addLayer("flat", makeFlatten(), {"pool"}));
            ok(m.addLayer("fc", makeLinear(4, true), {"flat"}));
            ok(m.setOutput("fc"));
            ok(m.compile({2, 6, 6}));
            m.initialize(3);
            return m;
        };
        Model plain = build(false), rewritten = build(true);
        QCOMPARE(plain.rewrites().size(), size_t(0));
        QCOMPARE(rewritten.rewrites().size(), size_t(1));
        QVERIFY(rewritten.summary().find("relu runs after pool") != std::string::npos);
        Tensor x = Tensor::empty({4, 2, 6, 6});
        auto xv = fbtest::uniformVector(size_t(x.numel()), 9);
        std::copy(xv.begin(), xv.end(), x.f32());
        Tensor y = Tensor::empty({4}, DType::I32);
        for (int i = 0; i < 4; ++i)
            y.data<int32_t>()[i] = i;
        auto loss = makeCrossEntropy();
        std::vector<std::vector<float>> grads[2];
        float losses[2];
        Model *models[2] = {&plain, &rewritten};
        for (int k = 0; k < 2; ++k) {
            Plan &p = models[k]->plan(b, 4, true);
            losses[k] = loss->compute(b, p.forward(x, {true, 0}), y, &p.outputGrad()).loss;
            p.backward({true, 0});
            for (auto &np : models[k]->parameters())
                grads[k].emplace_back(np.param->grad.f32(),
                                      np.param->grad.f32() + np.param->grad.numel());
        }
        QCOMPARE(losses[1], losses[0]);
        QCOMPARE(grads[1].size(), grads[0].size());
        for (size_t i = 0; i < grads[0].size(); ++i)
            QVERIFY(grads[1][i] == grads[0][i]);
        // A ReLU that is the output, or feeds something else, stays where it is.
        Model other;
        other.setInput("x");
        QVERIFY(other.addLayer("relu", makeActivation(Activation::Relu), {"x"}).ok());
        QVERIFY(other.addLayer("pool", makePool2d(PoolKind::Avg, 2, 0, 0), {"relu"}).ok());
        QVERIFY(other.setOutput("pool").ok());
        QVERIFY(other.compile({1, 4, 4}).ok());
        QVERIFY(other.rewrites().empty());
    }

    void shapeMismatchNamesNodeAndShapes()
    {
        Model m;
        m.setInput("input");
        QVERIFY(m.addLayer("conv1", makeConv2d(8, 3, 1, 0, true), {"input"}).ok());
        QVERIFY(m.addLayer("fc1", makeLinear(10, true), {"conv1"}).ok());
        QVERIFY(m.setOutput("fc1").ok());
        Status s = m.compile({1, 28, 28});
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().node), QString("fc1"));
        const QString msg = QString::fromStdString(s.error().message);
        QVERIFY2(msg.contains("[8, 26, 26]") && msg.contains("conv1") && msg.contains("flatten"),
                 qPrintable(msg));

        Model m2;
        m2.setInput("input");
        QVERIFY(m2.addLayer("a", makeConv2d(4, 3, 1, 1, true), {"input"}).ok());
        QVERIFY(m2.addLayer("b", makeConv2d(4, 3, 1, 0, true), {"input"}).ok());
        QVERIFY(m2.addLayer("sum", makeAdd(), {"a", "b"}).ok());
        QVERIFY(m2.setOutput("sum").ok());
        s = m2.compile({1, 8, 8});
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().node), QString("sum"));
        QVERIFY2(QString::fromStdString(s.error().message).contains("[4, 8, 8] and [4, 6, 6]"),
                 s.error().message.c_str());

        Model m3;
        m3.setInput("input");
        QVERIFY(m3.addLayer("conv", makeConv2d(4, 9, 1, 0, true), {"input"}).ok());
        QVERIFY(m3.setOutput("conv").ok());
        s = m3.compile({1, 5, 5});
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().node), QString("conv"));
    }

    // Memory: a layer whose weights cannot fit the limit is refused by compile() before anything
    // is allocated, naming it; the estimate of a plan is a lower bound close to what the plan
    // holds; and a buffer a CPU backend cannot have is a DeviceError naming the node, as on the
    // GPU (a bare bad_alloc lost it).
    void memoryIsCheckedAndNamedByNode()
    {
        Model big;
        big.setInput("x");
        QVERIFY(big.addLayer("fc", makeLinear(1000, true), {"x"}).ok());
        QVERIFY(big.setOutput("fc").ok());
        big.setMemoryLimit(1 << 20);
        Status s = big.compile({1000});
        QVERIFY(!s.ok());
        QCOMPARE(QString::fromStdString(s.error().node), QString("fc"));
        const QString msg = QString::fromStdString(s.error().message);
        QVERIFY2(msg.contains("1.001e+06 parameters") && msg.contains("[1000]") &&
                     msg.contains("3.8 MiB") && msg.contains("1.0 MiB is available"),
                 qPrintable(msg));
        QVERIFY(!big.parameters().front().param->value.defined()); // nothing was made
        big.setMemoryLimit(8 << 20);
        QVERIFY(big.compile({1000}).ok());

        Model m = residualModel(0.2f);
        const int64_t batch = 4;
        const Model::MemoryEstimate e = m.estimateMemory(batch, true, 1);
        const double state = double(m.parameterCount() + 8) * 4 * 3; // + bn1's two buffers of 4
        const double input = 2 * 6 * 6 * batch * 4;
        const double activations = e.bytes - state - input;
        Plan &p = m.plan(referenceBackend(), batch, true);
        QVERIFY2(activations <= double(p.bytes()) && activations >= 0.6 * double(p.bytes()),
                 qPrintable(QString("estimate %1, plan %2").arg(activations).arg(p.bytes())));
        QCOMPARE(QString::fromStdString(e.largestNode), QString("conv1")); // first of the largest
        QVERIFY(m.estimateMemory(batch, false, 1).bytes < e.bytes);

        // 2^34 samples of 1000 floats: 64 TiB, which no allocator hands out.
        for (bool fast : {false, true}) {
            auto b = backendFor(Device::cpu());
            QVERIFY(b.ok());
            Backend &backend = fast ? *b.value() : referenceBackend();
            try {
                big.plan(backend, int64_t(1) << 34, false);
                QFAIL("a 64 TiB plan was made");
            } catch (const DeviceError &err) {
                QCOMPARE(QString::fromStdString(err.node()), QString("fc"));
                QVERIFY2(
                    QString(err.what()).contains("out of memory on the CPU: asked for 62.50 TiB"),
                    err.what());
            }
        }
    }

    // oneDNN reports a failed call by throwing dnnl::error; uncaught, it ended the process. Every
    // execution goes through FB_DNNL_CHECK, which turns it into a DeviceError naming the call, as
    // the GPU backend does (the plan then adds the node, as above).
    void oneDnnFailuresAreDeviceErrors()
    {
        using namespace fb::dnnlx;
        dnnl::memory src(plainDesc({2, 3}, tag::ab), engine());
        dnnl::memory unset; // a real failure: executing with an argument never made
        dnnl::reorder copy(src, src);
        try {
            FB_DNNL_CHECK(copy.execute(stream(), src, unset));
            QFAIL("oneDNN ran a reorder into nothing");
        } catch (const DeviceError &e) {
            const QString msg = e.what();
            QVERIFY2(msg.startsWith("oneDNN failed: copy.execute(stream(), src, unset) at ") &&
                         msg.contains("test_nn.cpp:"),
                     e.what());
        }
        try {
            FB_DNNL_CHECK(throw dnnl::error(dnnl_out_of_memory, "could not allocate"));
            QFAIL("not thrown");
        } catch (const DeviceError &e) {
            QVERIFY2(QString(e.what()).startsWith("out of memory on the CPU in oneDNN ("),
                     e.what());
        }
    }

    // The guard before weights are written (a checkpoint, a trained model) or used (a loaded
    // one): any NaN or infinity, in any float type, anywhere in the tensor.
    void finiteCheckSeesEveryFloatType()
    {
        Tensor f = Tensor::zeros({3, 5});
        QVERIFY(f.allFinite());
        for (float bad :
             {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
              -std::numeric_limits<float>::infinity()}) {
            f.f32()[14] = bad; // the last value
            QVERIFY(!f.allFinite());
        }
        f.f32()[14] = std::numeric_limits<float>::max();
        QVERIFY(f.allFinite());
        // bfloat16 and float16: infinity, a NaN, and the largest finite value of each.
        for (const auto &[type, inf, nan, largest] :
             {std::tuple{DType::BF16, 0xFF80, 0x7FC1, 0x7F7F},
              std::tuple{DType::F16, 0x7C00, 0xFE01, 0x7BFF}}) {
            Tensor h = Tensor::zeros({4}, type);
            QVERIFY(h.allFinite());
            for (int bits : {inf, nan}) {
                h.data<uint16_t>()[3] = uint16_t(bits);
                QVERIFY(!h.allFinite());
            }
            h.data<uint16_t>()[3] = uint16_t(largest);
            QVERIFY(h.allFinite());
        }
        Tensor labels = Tensor::zeros({4}, DType::I32);
        labels.data<int32_t>()[0] = -1;
        QVERIFY(labels.allFinite());
    }

    void initializationMatchesPyTorchBounds()
    {
        Model m;
        m.setInput("x");
        QVERIFY(m.addLayer("fc", makeLinear(300, true), {"x"}).ok());
        QVERIFY(m.setOutput("fc").ok());
        QVERIFY(m.compile({400}).ok());
        m.initialize(1);
        const float bound = 1.0f / 20.0f; // 1/sqrt(400)
        for (auto &np : m.parameters()) {
            const Tensor &t = np.param->value;
            double sum = 0, sq = 0, maxAbs = 0;
            for (int64_t i = 0; i < t.numel(); ++i) {
                sum += t.f32()[i];
                sq += double(t.f32()[i]) * t.f32()[i];
                maxAbs = std::max(maxAbs, double(std::abs(t.f32()[i])));
            }
            const double mean = sum / double(t.numel()), var = sq / double(t.numel());
            QVERIFY2(maxAbs <= bound, np.name.c_str());
            QVERIFY2(maxAbs > 0.95 * bound, np.name.c_str());
            QVERIFY(std::abs(mean) < 0.1 * bound);
            if (t.numel() > 1000)
                QVERIFY(std::abs(var - bound * bound / 3.0) < 0.05 * bound * bound);
        }
        // Same seed, same weights; another seed, other weights.
        Tensor first = m.parameters()[0].param->value.clone();
        m.initialize(1);
        QCOMPARE(std::memcmp(first.raw(), m.parameters()[0].param->value.raw(), first.bytes()), 0);
        m.initialize(2);
        QVERIFY(std::memcmp(first.raw(), m.parameters()[0].param->value.raw(), first.bytes()) != 0);
    }

    void schedules()
    {
        LrSchedule s;
        s.base = 0.1f;
        s.stepsPerEpoch = 10;
        s.totalSteps = 100;
        QCOMPARE(s.at(0), 0.1f);
        QCOMPARE(s.at(99), 0.1f);

        s.kind = LrSchedule::Kind::Step;
        s.stepEpochs = 3;
        s.gamma = 0.5f;
        QCOMPARE(s.at(29), 0.1f);   // epoch 2
        QCOMPARE(s.at(30), 0.05f);  // epoch 3
        QCOMPARE(s.at(65), 0.025f); // epoch 6

        s.kind = LrSchedule::Kind::Cosine;
        s.minLr = 0.0f;
        QCOMPARE(s.at(0), 0.1f);
        QVERIFY(std::abs(s.at(50) - 0.05f) < 1e-6f);
        QVERIFY(std::abs(s.at(100)) < 1e-7f);

        s.kind = LrSchedule::Kind::Constant;
        s.warmupSteps = 4;
        QVERIFY(std::abs(s.at(0) - 0.025f) < 1e-7f);
        QVERIFY(std::abs(s.at(3) - 0.1f) < 1e-7f);
        QCOMPARE(s.at(4), 0.1f);
    }

    void batchNormEvalUsesRunningStatistics()
    {
        Backend &b = referenceBackend();
        Model m;
        m.setInput("x");
        QVERIFY(m.addLayer("bn", makeBatchNorm2d(1e-5f, 1.0f), {"x"}).ok());
        QVERIFY(m.setOutput("bn").ok());
        QVERIFY(m.compile({1, 2, 2}).ok());
        m.initialize(0);
        Tensor x = Tensor::empty({2, 1, 2, 2});
        const float v[] = {1, 2, 3, 4, 5, 6, 7, 8}; // mean 4.5, biased var 5.25, unbiased 6
        std::copy(v, v + 8, x.f32());
        m.plan(b, 2, true).forward(x, {true, 0});
        auto bufs = m.buffers();
        QCOMPARE(bufs[0].second.f32()[0], 4.5f);
        QVERIFY(std::abs(bufs[1].second.f32()[0] - 6.0f) < 1e-5f);
        const Tensor &y = m.plan(b, 2, false).forward(x, {false, 0});
        QVERIFY(std::abs(y.f32()[0] - (1 - 4.5f) / std::sqrt(6.0f + 1e-5f)) < 1e-5f);
    }

    // Batch norm over features: after one training batch with momentum 1 its running statistics
    // are that batch's (unbiased variance), and evaluation normalizes with them, feature by
    // feature, on the reference and on oneDNN.
    void batchNorm1dEvalUsesRunningStatistics()
    {
        auto fast = backendFor(Device::cpu());
        QVERIFY(fast.ok());
        for (Backend *b : {&referenceBackend(), fast.value()}) {
            Model m;
            m.setInput("x");
            QVERIFY(m.addLayer("bn", makeBatchNorm1d(1e-5f, 1.0f), {"x"}).ok());
            QVERIFY(m.setOutput("bn").ok());
            QVERIFY(m.compile({3}).ok());
            m.initialize(0);
            m.moveTo(*b);
            // Feature f of sample i: (i + 1) * (f + 1) + 10 f: means 2.5 (f + 1) + 10 f over 4
            // samples, unbiased variance (f + 1)^2 * 5 / 3.
            Tensor x = Tensor::empty({4, 3});
            for (int i = 0; i < 4; ++i)
                for (int f = 0; f < 3; ++f)
                    x.f32()[i * 3 + f] = float((i + 1) * (f + 1) + 10 * f);
            Tensor dx = b->toDevice(x);
            m.plan(*b, 4, true).forward(dx, {true, 0});
            const Tensor mean = b->toHost(m.buffers()[0].second);
            const Tensor var = b->toHost(m.buffers()[1].second);
            const Tensor y = b->toHost(m.plan(*b, 4, false).forward(dx, {false, 0}));
            for (int f = 0; f < 3; ++f) {
                const double mu = 2.5 * (f + 1) + 10 * f, v = (f + 1) * (f + 1) * 5.0 / 3.0;
                QVERIFY2(std::abs(mean.f32()[f] - mu) < 1e-4, qPrintable(QString::number(f)));
                QVERIFY2(std::abs(var.f32()[f] - v) < 1e-4 * v, qPrintable(QString::number(f)));
                for (int i = 0; i < 4; ++i) {
                    const double want = (x.f32()[i * 3 + f] - mu) / std::sqrt(v + 1e-5);
                    QVERIFY2(std::abs(y.f32()[i * 3 + f] - want) < 1e-4,
                             qPrintable(QString("sample %1 feature %2: %3, want %4")
                                            .arg(i)
                                            .arg(f)
                                            .arg(y.f32()[i * 3 + f])
                                            .arg(want)));
                }
            }
        }
    }

    void mseLossAgainstOneHot()
    {
        auto mse = makeMse();
        Tensor out = Tensor::empty({2, 3});
        const float o[] = {0.5f, 0.2f, 0.1f, 0.0f, 0.0f, 1.0f};
        std::copy(o, o + 6, out.f32());
        Tensor y = Tensor::empty({2}, DType::I32);
        y.data<int32_t>()[0] = 0;
        y.data<int32_t>()[1] = 1;
        Tensor d = Tensor::empty({2, 3});
        LossResult r = mse->compute(referenceBackend(), out, y, &d);
        // ((0.5-1)^2 + 0.04 + 0.01 + 0 + 1 + 1) / 6 = 2.3 / 6
        QVERIFY(std::abs(r.loss - 2.3f / 6.0f) < 1e-6f);
        QCOMPARE(r.correct, int64_t(1));
        QVERIFY(std::abs(d.f32()[4] - 2.0f * (0.0f - 1.0f) / 6.0f) < 1e-6f);
        QVERIFY(!mse->check({4}, 3).ok());
        QVERIFY(mse->check({3}, 3).ok());
    }
};

QTEST_GUILESS_MAIN(TestNn)
#include "test_nn.moc"
