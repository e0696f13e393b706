// Every op of every fast backend (oneDNN on the CPU; CUDA where this build has it and a GPU is
// present) against the reference kernels (the oracle, itself checked by finite differences in
// test_reference_kernels), forward and backward, on random shapes. Data goes to each backend's
// memory and comes back through its upload/download, as in a run.

#include "core/backend/backend.h"
#include "core/backend/cpu/reference_backend.h"
#include "core/base/rng.h"
#include "gpu_parts.h"
#include "gradcheck.h"

#include <QtTest>

using namespace fb;

namespace {

using Vec = std::vector<float>;

Vec vec(size_t n, uint64_t seed)
{
    return fbtest::uniformVector(n, seed);
}

#define EXPECT_CLOSE(actual, expected, atol, rtol)                                                 \
    do {                                                                                           \
        auto cmp_ = fbtest::compare(actual, expected, atol, rtol);                                 \
        QVERIFY2(cmp_.ok, (std::string(#actual) + ": " + cmp_.report()).c_str());                  \
    } while (0)

// x[n, c, h, w] (NCHW) as [n, h, w, c] (NHWC), and back.
Vec toNhwc(const Vec &x, int64_t n, int64_t c, int64_t hw)
{
    Vec y(x.size());
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < c; ++k)
            for (int64_t p = 0; p < hw; ++p)
                y[size_t((i * hw + p) * c + k)] = x[size_t((i * c + k) * hw + p)];
    return y;
}

Vec toNchw(const Vec &x, int64_t n, int64_t c, int64_t hw)
{
    Vec y(x.size());
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < c; ++k)
            for (int64_t p = 0; p < hw; ++p)
                y[size_t((i * c + k) * hw + p)] = x[size_t((i * hw + p) * c + k)];
    return y;
}

// The backends other than the reference one that this build and machine have.
std::vector<Backend *> fastBackends()
{
    std::vector<Backend *> out;
    for (Device d : {Device::cpu(), Device::cuda(0)}) {
        auto b = backendFor(d);
        if (b.ok()) out.push_back(b.value());
    }
    return out;
}

// Seeded random shapes beside the hand-picked ones: the same rows every run, so a failure can be
// reproduced from its row name alone.
int pick(Rng &rng, int lo, int hi)
{
    return lo + int(rng.next() % uint64_t(hi - lo + 1));
}

QString rowName(const char *kind, int i, const QList<int> &p)
{
    QStringList parts;
    for (int v : p)
        parts << QString::number(v);
    return QStringLiteral("random %1 %2: %3").arg(kind).arg(i).arg(parts.join(' '));
}

Backend *gpuBackend()
{
    auto b = backendFor(Device::cuda(0));
    return b.ok() ? b.value() : nullptr;
}

std::string whyNoGpu()
{
    auto b = backendFor(Device::cuda(0));
    return b.ok() ? std::string() : b.error().message;
}

// Host data placed in one backend's memory; host() reads it back (after the queued work).
class Buf {
public:
    Buf(Backend &b, const Vec &v)
        : m_b(b)
        , m_t(b.empty({int64_t(v.size())}))
    {
        b.upload(m_t.raw(), v.data(), v.size() * sizeof(float));
    }
    Buf(Backend &b, size_t n)
        : m_b(b)
        , m_t(b.empty({int64_t(n)}))
    {
        b.fill(m_t.f32(), 0.0f, int64_t(n));
    }
    float *p() const { return m_t.f32(); }
    Vec host() const
    {
        Vec v(size_t(m_t.numel()));
        m_b.download(v.data(), m_t.raw(), v.size() * sizeof(float));
        return v;
    }

private:
    Backend &m_b;
    Tensor m_t;
};

class Labels {
public:
    Labels(Backend &b, const std::vector<int32_t> &v)
        : m_t(b.empty({int64_t(v.size())}, DType::I32))
    {
        b.upload(m_t.raw(), v.data(), v.size() * sizeof(int32_t));
    }
    const int32_t *p() const { return m_t.data<int32_t>(); }

private:
    Tensor m_t;
};

} // namespace

class TestBackendOps : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(!fastBackends().empty());
        for (Backend *b : fastBackends())
            b->setThreads(2);
    }

    void conv_data()
    {
        QTest::addColumn<QList<int>>("p"); // n c h w oc kh kw sh sw ph pw bias
        QTest::newRow("3x3 pad1") << QList<int>{4, 3, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1};
        QTest::newRow("1 channel like conv1") << QList<int>{5, 1, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1};
        QTest::newRow("stride 2 no bias") << QList<int>{3, 4, 11, 10, 6, 3, 3, 2, 2, 0, 0, 0};
        QTest::newRow("5x3 kernel pad 2x1") << QList<int>{2, 5, 8, 13, 7, 5, 3, 1, 2, 2, 1, 1};
        QTest::newRow("32->64 like conv2") << QList<int>{8, 32, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1};
        Rng rng(501);
        for (int i = 0; i < 8; ++i) {
            const int kh = pick(rng, 1, 5), kw = pick(rng, 1, 5);
            const int ph = pick(rng, 0, kh / 2), pw = pick(rng, 0, kw / 2);
            const QList<int> p{pick(rng, 1, 6),
                               pick(rng, 1, 8),
                               pick(rng, kh, 16),
                               pick(rng, kw, 16),
                               pick(rng, 1, 12),
                               kh,
                               kw,
                               pick(rng, 1, 3),
                               pick(rng, 1, 3),
                               ph,
                               pw,
                               pick(rng, 0, 1)};
            QTest::newRow(qPrintable(rowName("conv", i, p))) << p;
        }
    }
    void conv()
    {
        QFETCH(QList<int>, p);
        ConvDesc d{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11] != 0};
        const size_t xs = size_t(d.n * d.c * d.h * d.w), ws = size_t(d.oc * d.c * d.kh * d.kw),
                     ys = size_t(d.n * d.oc * d.oh() * d.ow());
        Vec x = vec(xs, 1), w = vec(ws, 2), b = vec(size_t(d.oc), 3), dy = vec(ys, 4);
        auto ref = referenceBackend().makeConv(d);
        Vec y0(ys), dx0(xs), dw0(ws), db0(size_t(d.oc));
        ref->forward(x.data(), w.data(), b.data(), y0.data());
        ref->backwardData(dy.data(), w.data(), dx0.data());
        ref->backwardWeights(x.data(), dy.data(), dw0.data(), d.bias ? db0.data() : nullptr);
        Vec x2 = vec(xs, 11), dy2 = vec(ys, 12);
        Vec y1(ys), dx1(xs), dw1(ws), db1(size_t(d.oc));
        ref->forward(x2.data(), w.data(), b.data(), y1.data());
        ref->backwardData(dy2.data(), w.data(), dx1.data());
        ref->backwardWeights(x2.data(), dy2.data(), dw1.data(), d.bias ? db1.data() : nullptr);
        for (Backend *be : fastBackends()) {
            auto k = be->makeConv(d);
            Buf bx(*be, x), bw(*be, w), bb(*be, b), bdy(*be, dy);
            Buf y(*be, ys), dx(*be, xs), dw(*be, ws), db(*be, size_t(d.oc));
            k->forward(bx.p(), bw.p(), bb.p(), y.p());
            k->backwardData(bdy.p(), bw.p(), dx.p());
            k->backwardWeights(bx.p(), bdy.p(), dw.p(), d.bias ? db.p() : nullptr);
            EXPECT_CLOSE(y.host(), y0, 1e-4, 1e-4);
            EXPECT_CLOSE(dx.host(), dx0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw.host(), dw0, 1e-3, 1e-4);
            if (d.bias) EXPECT_CLOSE(db.host(), db0, 1e-3, 1e-4);
            // A second step with new data must not reuse anything stale from the first.
            Buf bx2(*be, x2), bdy2(*be, dy2);
            k->forward(bx2.p(), bw.p(), bb.p(), y.p());
            k->backwardData(bdy2.p(), bw.p(), dx.p());
            k->backwardWeights(bx2.p(), bdy2.p(), dw.p(), d.bias ? db.p() : nullptr);
            EXPECT_CLOSE(y.host(), y1, 1e-4, 1e-4);
            EXPECT_CLOSE(dw.host(), dw1, 1e-3, 1e-4);
        }
    }

    // Backends that prefer channels-last images get them so; their kernels must agree with the
    // NCHW reference once the layouts are lined up.
    void channelsLast_data() { conv_data(); }
    void channelsLast()
    {
        QFETCH(QList<int>, p);
        ConvDesc d{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11] != 0};
        const int64_t hw = d.h * d.w, ohw = d.oh() * d.ow();
        const size_t xs = size_t(d.n * d.c * hw), ws = size_t(d.oc * d.c * d.kh * d.kw),
                     ys = size_t(d.n * d.oc * ohw);
        Vec x = vec(xs, 1), w = vec(ws, 2), b = vec(size_t(d.oc), 3), dy = vec(ys, 4);
        auto ref = referenceBackend().makeConv(d);
        Vec y0(ys), dx0(xs), dw0(ws), db0(size_t(d.oc));
        ref->forward(x.data(), w.data(), b.data(), y0.data());
        ref->backwardData(dy.data(), w.data(), dx0.data());
        ref->backwardWeights(x.data(), dy.data(), dw0.data(), d.bias ? db0.data() : nullptr);

        // A 2x2 window, narrower where the convolution's output is one cell high or wide (a
        // window larger than its input is refused by the layer, and by cuDNN).
        const int64_t pkh = std::min<int64_t>(2, d.oh()), pkw = std::min<int64_t>(2, d.ow());
        PoolDesc pd{PoolKind::Max, d.n, d.oc, d.oh(), d.ow(), pkh, pkw, pkh, pkw, 0, 0};
        BatchNormDesc bd{d.n, d.oc, d.oh(), d.ow(), 1e-5f};
        const size_t ps = size_t(d.n * d.oc * pd.oh() * pd.ow());
        Vec px = fbtest::distinctVector(ys, 5, 0.01f), pdy = vec(ps, 6), g = vec(size_t(d.oc), 7);
        auto refPool = referenceBackend().makePool(pd);
        Vec py0(ps), pdx0(ys);
        refPool->forward(px.data(), py0.data());
        refPool->backward(pdy.data(), pdx0.data());
        auto refBn = referenceBackend().makeBatchNorm(bd);
        Vec by0(ys), m0(size_t(d.oc)), v0(size_t(d.oc)), bdx0(ys), dg0(size_t(d.oc)),
            dbt0(size_t(d.oc));
        refBn->forwardTraining(px.data(), g.data(), b.data(), by0.data(), m0.data(), v0.data());
        refBn->backward(px.data(), dy.data(), g.data(), m0.data(), v0.data(), bdx0.data(),
                        dg0.data(), dbt0.data());

        // Every fast backend's kernels take NHWC images (the CUDA ones too, for the day a plan
        // asks for them), whether or not the backend prefers them.
        for (Backend *be : fastBackends()) {
            ConvDesc dl = d;
            dl.channelsLast = true;
            auto k = be->makeConv(dl);
            Buf xl(*be, toNhwc(x, d.n, d.c, hw)), dyl(*be, toNhwc(dy, d.n, d.oc, ohw));
            Buf bw(*be, w), bb(*be, b);
            Buf y(*be, ys), dx(*be, xs), dw(*be, ws), db(*be, size_t(d.oc));
            k->forward(xl.p(), bw.p(), bb.p(), y.p());
            k->backwardData(dyl.p(), bw.p(), dx.p());
            k->backwardWeights(xl.p(), dyl.p(), dw.p(), d.bias ? db.p() : nullptr);
            EXPECT_CLOSE(toNchw(y.host(), d.n, d.oc, ohw), y0, 1e-4, 1e-4);
            EXPECT_CLOSE(toNchw(dx.host(), d.n, d.c, hw), dx0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw.host(), dw0, 1e-3, 1e-4);
            if (d.bias) EXPECT_CLOSE(db.host(), db0, 1e-3, 1e-4);

            PoolDesc pl = pd;
            pl.channelsLast = true;
            auto pk = be->makePool(pl);
            const int64_t pohw = pd.oh() * pd.ow();
            Buf pxl(*be, toNhwc(px, d.n, d.oc, ohw)), pdyl(*be, toNhwc(pdy, d.n, d.oc, pohw));
            Buf py(*be, ps), pdx(*be, ys);
            pk->forward(pxl.p(), py.p());
            pk->backward(pdyl.p(), pdx.p());
            EXPECT_CLOSE(toNchw(py.host(), d.n, d.oc, pohw), py0, 1e-6, 1e-6);
            EXPECT_CLOSE(toNchw(pdx.host(), d.n, d.oc, ohw), pdx0, 1e-6, 1e-6);

            BatchNormDesc bl = bd;
            bl.channelsLast = true;
            auto bk = be->makeBatchNorm(bl);
            Buf bg(*be, g), by(*be, ys), m(*be, size_t(d.oc)), v(*be, size_t(d.oc)), bdx(*be, ys),
                dg(*be, size_t(d.oc)), dbt(*be, size_t(d.oc));
            bk->forwardTraining(pxl.p(), bg.p(), bb.p(), by.p(), m.p(), v.p());
            bk->backward(pxl.p(), dyl.p(), bg.p(), m.p(), v.p(), bdx.p(), dg.p(), dbt.p());
            EXPECT_CLOSE(toNchw(by.host(), d.n, d.oc, ohw), by0, 1e-4, 1e-4);
            EXPECT_CLOSE(m.host(), m0, 1e-5, 1e-5);
            EXPECT_CLOSE(toNchw(bdx.host(), d.n, d.oc, ohw), bdx0, 1e-4, 1e-3);
            EXPECT_CLOSE(dg.host(), dg0, 1e-3, 1e-4);
        }
    }

    void linear_data()
    {
        QTest::addColumn<QList<int>>("p"); // n in out bias
        QTest::newRow("small") << QList<int>{3, 5, 4, 1};
        QTest::newRow("no bias") << QList<int>{7, 33, 17, 0};
        QTest::newRow("mlp fc1") << QList<int>{16, 784, 256, 1};
        Rng rng(502);
        for (int i = 0; i < 6; ++i) {
            const QList<int> p{pick(rng, 1, 40), pick(rng, 1, 300), pick(rng, 1, 130),
                               pick(rng, 0, 1)};
            QTest::newRow(qPrintable(rowName("linear", i, p))) << p;
        }
    }
    void linear()
    {
        QFETCH(QList<int>, p);
        LinearDesc d{p[0], p[1], p[2], p[3] != 0};
        const size_t xs = size_t(d.n * d.in), ws = size_t(d.out * d.in), ys = size_t(d.n * d.out);
        Vec x = vec(xs, 1), w = vec(ws, 2), b = vec(size_t(d.out), 3), dy = vec(ys, 4);
        auto ref = referenceBackend().makeLinear(d);
        Vec y0(ys), dx0(xs), dw0(ws), db0(size_t(d.out));
        ref->forward(x.data(), w.data(), b.data(), y0.data());
        ref->backwardData(dy.data(), w.data(), dx0.data());
        ref->backwardWeights(x.data(), dy.data(), dw0.data(), d.bias ? db0.data() : nullptr);
        for (Backend *be : fastBackends()) {
            auto k = be->makeLinear(d);
            Buf bx(*be, x), bw(*be, w), bb(*be, b), bdy(*be, dy);
            Buf y(*be, ys), dx(*be, xs), dw(*be, ws), db(*be, size_t(d.out));
            k->forward(bx.p(), bw.p(), bb.p(), y.p());
            k->backwardData(bdy.p(), bw.p(), dx.p());
            k->backwardWeights(bx.p(), bdy.p(), dw.p(), d.bias ? db.p() : nullptr);
            EXPECT_CLOSE(y.host(), y0, 1e-4, 1e-4);
            EXPECT_CLOSE(dx.host(), dx0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw.host(), dw0, 1e-4, 1e-4);
            if (d.bias) EXPECT_CLOSE(db.host(), db0, 1e-4, 1e-4);
        }
    }

    void pool_data()
    {
        QTest::addColumn<QList<int>>("p"); // kind(0 max,1 avg) n c h w kh kw sh sw ph pw
        QTest::newRow("max 2x2") << QList<int>{0, 3, 4, 8, 8, 2, 2, 2, 2, 0, 0};
        QTest::newRow("max 3x3 s2 pad1") << QList<int>{0, 2, 3, 9, 7, 3, 3, 2, 2, 1, 1};
        QTest::newRow("avg 2x2") << QList<int>{1, 3, 4, 8, 8, 2, 2, 2, 2, 0, 0};
        QTest::newRow("avg 3x3 s1 pad1") << QList<int>{1, 2, 3, 6, 7, 3, 3, 1, 1, 1, 1};
        Rng rng(503);
        for (int i = 0; i < 8; ++i) {
            // Padding at most half the kernel, as PyTorch allows.
            const int kh = pick(rng, 1, 4), kw = pick(rng, 1, 4);
            const QList<int> p{pick(rng, 0, 1),
                               pick(rng, 1, 5),
                               pick(rng, 1, 6),
                               pick(rng, kh, 13),
                               pick(rng, kw, 13),
                               kh,
                               kw,
                               pick(rng, 1, 3),
                               pick(rng, 1, 3),
                               pick(rng, 0, kh / 2),
                               pick(rng, 0, kw / 2)};
            QTest::newRow(qPrintable(rowName("pool", i, p))) << p;
        }
    }
    void pool()
    {
        QFETCH(QList<int>, p);
        PoolDesc d{p[0] ? PoolKind::Avg : PoolKind::Max,
                   p[1],
                   p[2],
                   p[3],
                   p[4],
                   p[5],
                   p[6],
                   p[7],
                   p[8],
                   p[9],
                   p[10]};
        const size_t xs = size_t(d.n * d.c * d.h * d.w), ys = size_t(d.n * d.c * d.oh() * d.ow());
        // Distinct values: max pooling's winner is well defined.
        Vec x = fbtest::distinctVector(xs, 1, 0.01f), dy = vec(ys, 2);
        auto ref = referenceBackend().makePool(d);
        Vec y0(ys), dx0(xs);
        ref->forward(x.data(), y0.data());
        ref->backward(dy.data(), dx0.data());
        for (Backend *be : fastBackends()) {
            auto k = be->makePool(d);
            Buf bx(*be, x), bdy(*be, dy), y(*be, ys), dx(*be, xs);
            k->forward(bx.p(), y.p());
            k->backward(bdy.p(), dx.p());
            EXPECT_CLOSE(y.host(), y0, 1e-5, 1e-5);
            EXPECT_CLOSE(dx.host(), dx0, 1e-5, 1e-5);
        }
    }

    void activation_data()
    {
        QTest::addColumn<int>("kind");
        QTest::newRow("relu") << int(Activation::Relu);
        QTest::newRow("leaky_relu") << int(Activation::LeakyRelu);
        QTest::newRow("sigmoid") << int(Activation::Sigmoid);
        QTest::newRow("tanh") << int(Activation::Tanh);
        QTest::newRow("gelu") << int(Activation::Gelu);
        QTest::newRow("silu") << int(Activation::Silu);
    }
    void activation()
    {
        QFETCH(int, kind);
        ActivationDesc d{Activation(kind), 1000, 0.1f};
        Vec x = fbtest::awayFromZeroVector(1000, 1, 0.01f, 3.0f), dy = vec(1000, 2);
        auto ref = referenceBackend().makeActivation(d);
        Vec y0(1000), dx0(1000);
        ref->forward(x.data(), y0.data());
        ref->backward(x.data(), dy.data(), dx0.data());
        for (Backend *be : fastBackends()) {
            auto k = be->makeActivation(d);
            Buf bx(*be, x), bdy(*be, dy), y(*be, 1000), dx(*be, 1000);
            k->forward(bx.p(), y.p());
            k->backward(bx.p(), bdy.p(), dx.p());
            EXPECT_CLOSE(y.host(), y0, 1e-5, 1e-4);
            EXPECT_CLOSE(dx.host(), dx0, 1e-5, 1e-4);
        }
    }

    void batchnorm()
    {
        BatchNormDesc d{4, 3, 5, 6, 1e-5f};
        const size_t xs = size_t(d.n * d.c * d.h * d.w), cs = size_t(d.c);
        Vec x = vec(xs, 1), g = vec(cs, 2), bt = vec(cs, 3), dy = vec(xs, 4);
        for (float &v : x)
            v = 2.0f * v + 0.5f;
        auto ref = referenceBackend().makeBatchNorm(d);
        Vec y0(xs), m0(cs), v0(cs), dx0(xs), dg0(cs), db0(cs), yi0(xs);
        ref->forwardTraining(x.data(), g.data(), bt.data(), y0.data(), m0.data(), v0.data());
        ref->backward(x.data(), dy.data(), g.data(), m0.data(), v0.data(), dx0.data(), dg0.data(),
                      db0.data());
        ref->forwardInference(x.data(), g.data(), bt.data(), m0.data(), v0.data(), yi0.data());
        for (Backend *be : fastBackends()) {
            auto k = be->makeBatchNorm(d);
            Buf bx(*be, x), bg(*be, g), bbt(*be, bt), bdy(*be, dy), bm0(*be, m0), bv0(*be, v0);
            Buf y(*be, xs), m(*be, cs), v(*be, cs), dx(*be, xs), dg(*be, cs), db(*be, cs),
                yi(*be, xs);
            k->forwardTraining(bx.p(), bg.p(), bbt.p(), y.p(), m.p(), v.p());
            k->backward(bx.p(), bdy.p(), bg.p(), m.p(), v.p(), dx.p(), dg.p(), db.p());
            k->forwardInference(bx.p(), bg.p(), bbt.p(), bm0.p(), bv0.p(), yi.p());
            EXPECT_CLOSE(y.host(), y0, 1e-4, 1e-4);
            EXPECT_CLOSE(m.host(), m0, 1e-5, 1e-5);
            EXPECT_CLOSE(v.host(), v0, 1e-5, 1e-4);
            EXPECT_CLOSE(dx.host(), dx0, 1e-4, 1e-3);
            EXPECT_CLOSE(dg.host(), dg0, 1e-4, 1e-4);
            EXPECT_CLOSE(db.host(), db0, 1e-4, 1e-4);
            EXPECT_CLOSE(yi.host(), yi0, 1e-4, 1e-4);
        }
    }

    // A label outside [0, classes) in a batch: every backend, the reference too, adds nothing to
    // the loss for its row, counts it as wrong and gives it no gradient (the GPU kernel cannot
    // assert; the CPU used to abort). The runner refuses such data before it reaches a step.
    void outOfRangeLabelsAreTheSameEverywhere()
    {
        const int n = 4, classes = 5;
        Vec logits = vec(n * classes, 31);
        const std::vector<int32_t> labels{0, 7, 2, -1};
        // The valid rows alone: rows 0 and 2.
        Vec valid(2 * classes), dv(2 * classes);
        std::copy_n(logits.begin(), classes, valid.begin());
        std::copy_n(logits.begin() + 2 * classes, classes, valid.begin() + classes);
        const std::vector<int32_t> validLabels{0, 2};
        const LossResult v = referenceBackend().softmaxCrossEntropy(
            valid.data(), validLabels.data(), 2, classes, dv.data());
        std::vector<Backend *> all = fastBackends();
        all.push_back(&referenceBackend());
        for (Backend *be : all) {
            Buf bl(*be, logits), d(*be, n * classes);
            Labels lab(*be, labels);
            const LossResult r = be->softmaxCrossEntropy(bl.p(), lab.p(), n, classes, d.p());
            QVERIFY2(std::abs(r.loss - v.loss * 2 / n) < 1e-5f, be->name().c_str());
            QCOMPARE(r.correct, v.correct);
            const Vec g = d.host();
            for (int k = 0; k < classes; ++k) {
                QCOMPARE(g[size_t(1 * classes + k)], 0.0f);
                QCOMPARE(g[size_t(3 * classes + k)], 0.0f);
                QVERIFY(std::abs(g[size_t(k)] - dv[size_t(k)] * 2 / n) < 1e-6f);
            }
        }
    }

    // The small ops of training: sums, losses, dropout, optimizer updates (one at a time and
    // as a fused group), the batch gather of resident data.
    void smallOps()
    {
        ReferenceBackend &ref = static_cast<ReferenceBackend &>(referenceBackend());
        const int n = 6, classes = 5;
        Vec logits = vec(n * classes, 1), a = vec(100, 2), b = vec(100, 3);
        std::vector<int32_t> labels{0, 4, 2, 2, 1, 3};
        Vec d0(n * classes), s0(100), acc0 = a, ax0 = a, drop0(100), mask0(100), md0(100);
        const LossResult r0 =
            ref.softmaxCrossEntropy(logits.data(), labels.data(), n, classes, d0.data());
        Vec ds0(n * classes); // with label smoothing
        const LossResult rs0 =
            ref.softmaxCrossEntropy(logits.data(), labels.data(), n, classes, ds0.data(), 0.2f);
        ref.add(a.data(), b.data(), s0.data(), 100);
        ref.accumulate(acc0.data(), b.data(), 100);
        ref.axpby(ax0.data(), b.data(), 100, 0.9f, 0.3f);
        ref.dropoutForward(a.data(), drop0.data(), mask0.data(), 100, 0.3f, 77, 3);
        const float mse0 = ref.mse(a.data(), b.data(), 100, md0.data());
        // Three parameters in one group, two steps each, for SGD with momentum and AdamW.
        const std::vector<size_t> sizes{37, 1, 300};
        std::vector<Vec> w, g, s1, s2;
        for (size_t i = 0; i < sizes.size(); ++i) {
            w.push_back(vec(sizes[i], 10 + i));
            g.push_back(vec(sizes[i], 20 + i));
            s1.push_back(Vec(sizes[i], 0.0f));
            s2.push_back(Vec(sizes[i], 0.0f));
        }
        SgdParams sp{0.1f, 0.9f, 0.0f, 1e-4f, true};
        AdamParams ap{1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, true};
        auto sgdW = w, sgdB = s1, adamW = w, adamM = s1, adamV = s2;
        for (int step = 0; step < 2; ++step)
            for (size_t i = 0; i < sizes.size(); ++i) {
                ref.sgdStep(sgdW[i].data(), g[i].data(), sgdB[i].data(), int64_t(sizes[i]), sp,
                            step + 1);
                ref.adamStep(adamW[i].data(), g[i].data(), adamM[i].data(), adamV[i].data(),
                             int64_t(sizes[i]), ap, step + 1);
            }
        std::vector<int64_t> index{3, 0, 3, 5};
        Vec table = vec(6 * 4, 9), gathered0(4 * 4);
        std::vector<int32_t> tableLabels{5, 4, 3, 2, 1, 0}, gatheredLabels0(4);
        ref.gatherRows(gathered0.data(), table.data(), index.data(), 4, 4);
        ref.gatherLabels(gatheredLabels0.data(), tableLabels.data(), index.data(), 4);

        for (Backend *be : fastBackends()) {
            Buf bl(*be, logits), ba(*be, a), bb(*be, b), d(*be, n * classes), s(*be, 100);
            Labels lab(*be, labels);
            const LossResult r = be->softmaxCrossEntropy(bl.p(), lab.p(), n, classes, d.p());
            QCOMPARE(r.correct, r0.correct);
            QVERIFY(std::abs(r.loss - r0.loss) < 1e-5f);
            EXPECT_CLOSE(d.host(), d0, 1e-6, 1e-5);
            const LossResult rs = be->softmaxCrossEntropy(bl.p(), lab.p(), n, classes, d.p(), 0.2f);
            QCOMPARE(rs.correct, rs0.correct);
            QVERIFY2(std::abs(rs.loss - rs0.loss) < 1e-5f, be->name().c_str());
            EXPECT_CLOSE(d.host(), ds0, 1e-6, 1e-5);
            be->add(ba.p(), bb.p(), s.p(), 100);
            EXPECT_CLOSE(s.host(), s0, 0, 0);
            Buf acc(*be, a), ax(*be, a), drop(*be, 100), mask(*be, 100), md(*be, 100);
            be->accumulate(acc.p(), bb.p(), 100);
            EXPECT_CLOSE(acc.host(), acc0, 0, 0);
            be->axpby(ax.p(), bb.p(), 100, 0.9f, 0.3f);
            EXPECT_CLOSE(ax.host(), ax0, 1e-7, 1e-6);
            be->dropoutForward(ba.p(), drop.p(), mask.p(), 100, 0.3f, 77, 3);
            EXPECT_CLOSE(mask.host(), mask0, 0, 0); // the same mask on every device
            EXPECT_CLOSE(drop.host(), drop0, 1e-7, 1e-6);
            const float mse = be->mse(ba.p(), bb.p(), 100, md.p());
            QVERIFY(std::abs(mse - mse0) < 1e-5f);
            EXPECT_CLOSE(md.host(), md0, 1e-7, 1e-5);

            std::vector<std::unique_ptr<Buf>> bw, bg, bs1, bs2, aw, am, av;
            std::vector<ParamSlot> sgdGroup, adamGroup;
            for (size_t i = 0; i < sizes.size(); ++i) {
                bw.push_back(std::make_unique<Buf>(*be, w[i]));
                bg.push_back(std::make_unique<Buf>(*be, g[i]));
                bs1.push_back(std::make_unique<Buf>(*be, sizes[i]));
                aw.push_back(std::make_unique<Buf>(*be, w[i]));
                am.push_back(std::make_unique<Buf>(*be, sizes[i]));
                av.push_back(std::make_unique<Buf>(*be, sizes[i]));
                sgdGroup.push_back(
                    {bw[i]->p(), bg[i]->p(), bs1[i]->p(), nullptr, int64_t(sizes[i])});
                adamGroup.push_back(
                    {aw[i]->p(), bg[i]->p(), am[i]->p(), av[i]->p(), int64_t(sizes[i])});
            }
            for (int step = 0; step < 2; ++step) {
                be->sgdSteps(sgdGroup, sp, step + 1);
                be->adamSteps(adamGroup, ap, step + 1);
            }
            for (size_t i = 0; i < sizes.size(); ++i) {
                EXPECT_CLOSE(bw[i]->host(), sgdW[i], 1e-7, 1e-6);
                EXPECT_CLOSE(bs1[i]->host(), sgdB[i], 1e-7, 1e-6);
                EXPECT_CLOSE(aw[i]->host(), adamW[i], 1e-6, 1e-5);
                EXPECT_CLOSE(av[i]->host(), adamV[i], 1e-9, 1e-5);
            }

            Buf bt(*be, table), gathered(*be, 16);
            Tensor idx = be->empty({4}, DType::I64);
            be->upload(idx.raw(), index.data(), 4 * sizeof(int64_t));
            Labels tl(*be, tableLabels);
            Tensor gl = be->empty({4}, DType::I32);
            be->gatherRows(gathered.p(), bt.p(), idx.data<int64_t>(), 4, 4);
            be->gatherLabels(gl.data<int32_t>(), tl.p(), idx.data<int64_t>(), 4);
            EXPECT_CLOSE(gathered.host(), gathered0, 0, 0);
            std::vector<int32_t> glHost(4);
            be->download(glHost.data(), gl.raw(), 4 * sizeof(int32_t));
            QCOMPARE(glHost, gatheredLabels0);
        }
    }

    // Double-buffered uploads beside the work queued before them (a GPU's copy stream), and loss
    // results read back without waiting: each computation sees its own batch, a buffer is only
    // written once the work that read it is done, and each pending read gives its own step's loss.
    void pipelinedTransfers()
    {
        const int64_t count = int64_t(1) << 21; // 8 MiB per buffer: copies long enough to race
        const Vec h1 = vec(size_t(count), 61), h2 = vec(size_t(count), 62),
                  h3 = vec(size_t(count), 63);
        const int64_t n = 16, classes = 10;
        const Vec l1 = vec(size_t(n * classes), 64), l2 = vec(size_t(n * classes), 65);
        std::vector<int32_t> labels(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
            labels[size_t(i)] = int32_t((i * 7) % classes);
        Vec d0(size_t(n * classes));
        Backend &ref = referenceBackend();
        const LossResult r1 =
            ref.softmaxCrossEntropy(l1.data(), labels.data(), n, classes, d0.data());
        const LossResult r2 =
            ref.softmaxCrossEntropy(l2.data(), labels.data(), n, classes, d0.data());
        auto twice = [](const Vec &v) {
            Vec out(v.size());
            for (size_t i = 0; i < v.size(); ++i)
                out[i] = v[i] + v[i];
            return out;
        };
        for (Backend *be : fastBackends()) {
            Buf a(*be, size_t(count)), b(*be, size_t(count));
            Buf o1(*be, size_t(count)), o2(*be, size_t(count)), o3(*be, size_t(count));
            be->synchronize(); // the buffers are fresh memory (Backend::uploadAhead)
            const HostCopy c1[] = {{a.p(), h1.data(), h1.size() * sizeof(float)}};
            be->uploadAhead(c1);
            be->add(a.p(), a.p(), o1.p(), count);
            const HostCopy c2[] = {{b.p(), h2.data(), h2.size() * sizeof(float)}};
            be->uploadAhead(c2);
            be->add(b.p(), b.p(), o2.p(), count);
            // a again: the add that reads h1 from it was queued before the previous call.
            const HostCopy c3[] = {{a.p(), h3.data(), h3.size() * sizeof(float)}};
            be->uploadAhead(c3);
            be->add(a.p(), a.p(), o3.p(), count);
            EXPECT_CLOSE(o1.host(), twice(h1), 0, 0);
            EXPECT_CLOSE(o2.host(), twice(h2), 0, 0);
            EXPECT_CLOSE(o3.host(), twice(h3), 0, 0);

            Buf bl1(*be, l1), bl2(*be, l2), d(*be, size_t(n * classes));
            Labels lab(*be, labels);
            be->softmaxCrossEntropy(bl1.p(), lab.p(), n, classes, d.p());
            auto p1 = be->readLatestLoss();
            be->softmaxCrossEntropy(bl2.p(), lab.p(), n, classes, d.p());
            auto p2 = be->readLatestLoss();
            const LossResult q2 = p2->wait(), q1 = p1->wait();
            QVERIFY(std::abs(q1.loss - r1.loss) < 1e-5f && q1.correct == r1.correct);
            QVERIFY(std::abs(q2.loss - r2.loss) < 1e-5f && q2.correct == r2.correct);
            QVERIFY(r1.loss != r2.loss);
        }
    }

    // bf16 mixed precision on the GPU: convolutions and matrix products round their inputs to
    // bfloat16 (8-bit mantissa) and sum in float32, so results stay within a few bfloat16 steps
    // of the reference's, and differ from the GPU's own float32 results (bf16 did apply).
    void gpuBf16StaysClose()
    {
        Backend *gpu = gpuBackend();
        if (!gpu) QSKIP(("bf16 not checked: " + whyNoGpu()).c_str());
        struct Restore {
            Backend *b;
            ~Restore() { b->setPrecision(Precision::Float32); }
        } restore{gpu};
        const ConvDesc cd{8, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, true};
        const size_t xs = size_t(cd.n * cd.c * cd.h * cd.w), ws = size_t(cd.oc * cd.c * 9),
                     ys = size_t(cd.n * cd.oc * cd.oh() * cd.ow());
        const Vec x = vec(xs, 41), w = vec(ws, 42), b = vec(size_t(cd.oc), 43), dy = vec(ys, 44);
        Vec y0(ys), dx0(xs), dw0(ws), db0(size_t(cd.oc));
        auto ref = referenceBackend().makeConv(cd);
        ref->forward(x.data(), w.data(), b.data(), y0.data());
        ref->backwardData(dy.data(), w.data(), dx0.data());
        ref->backwardWeights(x.data(), dy.data(), dw0.data(), db0.data());
        Vec yf;
        for (Precision p : {Precision::Float32, Precision::Bf16}) {
            QVERIFY(gpu->setPrecision(p));
            auto k = gpu->makeConv(cd);
            Buf bx(*gpu, x), bw(*gpu, w), bb(*gpu, b), bdy(*gpu, dy);
            Buf y(*gpu, ys), dx(*gpu, xs), dw(*gpu, ws), db(*gpu, size_t(cd.oc));
            k->forward(bx.p(), bw.p(), bb.p(), y.p());
            k->backwardData(bdy.p(), bw.p(), dx.p());
            k->backwardWeights(bx.p(), bdy.p(), dw.p(), db.p());
            // Sums of 144 products of inputs in [-1, 1], each rounded by at most 2^-9.
            EXPECT_CLOSE(y.host(), y0, 0.05, 0.02);
            EXPECT_CLOSE(dx.host(), dx0, 0.05, 0.02);
            EXPECT_CLOSE(dw.host(), dw0, 0.2, 0.02);  // sums over 8 * 14 * 14 positions
            EXPECT_CLOSE(db.host(), db0, 1e-3, 1e-4); // the bias stays float32
            if (p == Precision::Float32)
                yf = y.host();
            else
                QVERIFY(y.host() != yf);
        }
        const LinearDesc ld{16, 300, 40, true};
        const Vec lx = vec(size_t(ld.n * ld.in), 45), lw = vec(size_t(ld.out * ld.in), 46),
                  lb = vec(size_t(ld.out), 47), ldy = vec(size_t(ld.n * ld.out), 48);
        Vec ly0(size_t(ld.n * ld.out)), ldw0(size_t(ld.out * ld.in)), ldb0(size_t(ld.out));
        auto lref = referenceBackend().makeLinear(ld);
        lref->forward(lx.data(), lw.data(), lb.data(), ly0.data());
        lref->backwardWeights(lx.data(), ldy.data(), ldw0.data(), ldb0.data());
        QVERIFY(gpu->setPrecision(Precision::Bf16));
        auto lk = gpu->makeLinear(ld);
        Buf bx(*gpu, lx), bw(*gpu, lw), bb(*gpu, lb), bdy(*gpu, ldy);
        Buf y(*gpu, ly0.size()), dw(*gpu, ldw0.size()), db(*gpu, ldb0.size());
        lk->forward(bx.p(), bw.p(), bb.p(), y.p());
        // No backwardData first, as for a model's first layer: dy is rounded here.
        lk->backwardWeights(bx.p(), bdy.p(), dw.p(), db.p());
        EXPECT_CLOSE(y.host(), ly0, 0.05, 0.02);
        EXPECT_CLOSE(dw.host(), ldw0, 0.05, 0.02);
        EXPECT_CLOSE(db.host(), ldb0, 1e-4, 1e-4);
    }

    // A captured step's per-step values are read when it is replayed (Backend::setStepValues):
    // dropout, SGD and AdamW recorded once, then replayed with two different sets of values,
    // must give what the reference computes with each set.
    void gpuCaptureReadsStepValues()
    {
        std::vector<Backend *> capturing;
        for (Backend *be : fastBackends())
            if (be->canCapture()) capturing.push_back(be);
        if (capturing.empty()) QSKIP("no backend here can capture steps (CUDA graphs need a GPU)");
        Backend &ref = referenceBackend();
        const Vec x = vec(1000, 31), g = vec(300, 32), w = vec(300, 33);
        const uint64_t salt = 0x1234;
        const SgdParams sp{0.5f, 0.9f, 0.0f, 1e-4f, false};
        const AdamParams ap{0.5f, 0.9f, 0.999f, 1e-8f, 0.01f, true};
        const std::vector<StepValues> replays{{0.1f, 1, 11}, {0.02f, 2, 12}, {0.3f, 3, 13}};
        // The reference: the same ops run one by one with each step's values.
        Vec y0(1000), mask0(1000), sw = w, sb(300), aw = w, am(300), av(300);
        std::vector<Vec> ys, sws, aws;
        for (const StepValues &v : replays) {
            ref.dropoutForward(x.data(), y0.data(), mask0.data(), 1000, 0.4f, v.seed, salt);
            SgdParams s = sp;
            s.lr = v.lr;
            ref.sgdStep(sw.data(), g.data(), sb.data(), 300, s, v.optimizerStep);
            AdamParams a = ap;
            a.lr = v.lr;
            ref.adamStep(aw.data(), g.data(), am.data(), av.data(), 300, a, v.optimizerStep);
            ys.push_back(y0);
            sws.push_back(sw);
            aws.push_back(aw);
        }
        for (Backend *be : capturing) {
            Buf bx(*be, x), by(*be, 1000), bm(*be, 1000), bg(*be, g);
            Buf bsw(*be, w), bsb(*be, 300), baw(*be, w), bam(*be, 300), bav(*be, 300);
            const std::vector<ParamSlot> sgd{{bsw.p(), bg.p(), bsb.p(), nullptr, 300}};
            const std::vector<ParamSlot> adam{{baw.p(), bg.p(), bam.p(), bav.p(), 300}};
            // One uncaptured call of each first, as TrainStep does, so that the optimizer tables
            // are uploaded outside the capture; then the state is put back.
            be->sgdSteps(sgd, sp, 1);
            be->adamSteps(adam, ap, 1);
            for (const Buf *b : {&bsw, &baw})
                be->upload(b->p(), w.data(), w.size() * sizeof(float));
            for (const Buf *b : {&bsb, &bam, &bav})
                be->zero(b->p(), 300 * sizeof(float));

            const StepValues &first = replays.front();
            be->setStepValues(first);
            be->beginCapture();
            be->dropoutForward(bx.p(), by.p(), bm.p(), 1000, 0.4f, first.seed, salt);
            SgdParams s = sp;
            s.lr = first.lr;
            be->sgdSteps(sgd, s, first.optimizerStep);
            AdamParams a = ap;
            a.lr = first.lr;
            be->adamSteps(adam, a, first.optimizerStep);
            std::unique_ptr<CapturedWork> work = be->endCapture();
            for (size_t r = 0; r < replays.size(); ++r) {
                be->setStepValues(replays[r]);
                work->replay();
                EXPECT_CLOSE(by.host(), ys[r], 0, 0); // the mask of this step's seed
                EXPECT_CLOSE(bsw.host(), sws[r], 1e-7, 1e-6);
                EXPECT_CLOSE(baw.host(), aws[r], 1e-6, 1e-5);
            }
        }
    }

    // The device list and the backends agree: a GPU the registry opens is listed with its
    // memory and compute capability; without one, the list carries the reason the registry
    // gives, and the GPU half of this test is reported as skipped with it.
    void gpuPresence()
    {
        const DeviceList list = listDevices();
        QVERIFY(!list.devices.empty());
        QCOMPARE(list.devices.front().device, Device::cpu());
        if (!gpuBackend()) {
            QVERIFY(list.devices.size() == 1);
            QVERIFY(!list.gpuProblem.empty());
            QVERIFY2(whyNoGpu().find(list.gpuProblem) != std::string::npos, whyNoGpu().c_str());
            QCOMPARE(defaultDevice(), Device::cpu());
            QSKIP(("GPU kernels not checked: " + whyNoGpu()).c_str());
        }
        QVERIFY(list.devices.size() >= 2);
        const ComputeDevice &gpu = list.devices[1];
        QCOMPARE(gpu.device, Device::cuda(0));
        QVERIFY(gpu.memoryBytes > 0 && gpu.computeMajor > 0 && !gpu.name.empty());
        QCOMPARE(defaultDevice(), Device::cuda(0));
        qInfo("GPU kernels checked on %s (%s)", gpu.device.str().c_str(), gpu.name.c_str());
    }
};

FB_QTEST_MAIN_WITH_GPU_PART(TestBackendOps)
#include "test_backend_ops.moc"
