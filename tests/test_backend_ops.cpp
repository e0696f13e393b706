// Every op of every fast backend against the reference kernels (the oracle, itself checked by
// finite differences in test_reference_kernels), forward and backward, on random shapes.

#include "core/backend/backend.h"
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
        for (Backend *be : fastBackends()) {
            auto k = be->makeConv(d);
            Vec y(ys), dx(xs), dw(ws), db(size_t(d.oc));
            k->forward(x.data(), w.data(), b.data(), y.data());
            k->backwardData(dy.data(), w.data(), dx.data());
            k->backwardWeights(x.data(), dy.data(), dw.data(), d.bias ? db.data() : nullptr);
            EXPECT_CLOSE(y, y0, 1e-4, 1e-4);
            EXPECT_CLOSE(dx, dx0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw, dw0, 1e-3, 1e-4);
            if (d.bias) EXPECT_CLOSE(db, db0, 1e-3, 1e-4);
            // A second step with new data must not reuse anything stale from the first.
            Vec x2 = vec(xs, 11), dy2 = vec(ys, 12);
            ref->forward(x2.data(), w.data(), b.data(), y0.data());
            ref->backwardData(dy2.data(), w.data(), dx0.data());
            ref->backwardWeights(x2.data(), dy2.data(), dw0.data(), d.bias ? db0.data() : nullptr);
            k->forward(x2.data(), w.data(), b.data(), y.data());
            k->backwardData(dy2.data(), w.data(), dx.data());
            k->backwardWeights(x2.data(), dy2.data(), dw.data(), d.bias ? db.data() : nullptr);
            EXPECT_CLOSE(y, y0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw, dw0, 1e-3, 1e-4);
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

        PoolDesc pd{PoolKind::Max, d.n, d.oc, d.oh(), d.ow(), 2, 2, 2, 2, 0, 0};
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

        int checked = 0;
        for (Backend *be : fastBackends()) {
            if (!be->prefersChannelsLast()) continue;
            ++checked;
            ConvDesc dl = d;
            dl.channelsLast = true;
            auto k = be->makeConv(dl);
            const Vec xl = toNhwc(x, d.n, d.c, hw), dyl = toNhwc(dy, d.n, d.oc, ohw);
            Vec y(ys), dx(xs), dw(ws), db(size_t(d.oc));
            k->forward(xl.data(), w.data(), b.data(), y.data());
            k->backwardData(dyl.data(), w.data(), dx.data());
            k->backwardWeights(xl.data(), dyl.data(), dw.data(), d.bias ? db.data() : nullptr);
            EXPECT_CLOSE(toNchw(y, d.n, d.oc, ohw), y0, 1e-4, 1e-4);
            EXPECT_CLOSE(toNchw(dx, d.n, d.c, hw), dx0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw, dw0, 1e-3, 1e-4);
            if (d.bias) EXPECT_CLOSE(db, db0, 1e-3, 1e-4);

            PoolDesc pl = pd;
            pl.channelsLast = true;
            auto pk = be->makePool(pl);
            const int64_t pohw = pd.oh() * pd.ow();
            const Vec pxl = toNhwc(px, d.n, d.oc, ohw), pdyl = toNhwc(pdy, d.n, d.oc, pohw);
            Vec py(ps), pdx(ys);
            pk->forward(pxl.data(), py.data());
            pk->backward(pdyl.data(), pdx.data());
            EXPECT_CLOSE(toNchw(py, d.n, d.oc, pohw), py0, 1e-6, 1e-6);
            EXPECT_CLOSE(toNchw(pdx, d.n, d.oc, ohw), pdx0, 1e-6, 1e-6);

            BatchNormDesc bl = bd;
            bl.channelsLast = true;
            auto bk = be->makeBatchNorm(bl);
            Vec by(ys), m(size_t(d.oc)), v(size_t(d.oc)), bdx(ys), dg(size_t(d.oc)),
                dbt(size_t(d.oc));
            bk->forwardTraining(pxl.data(), g.data(), b.data(), by.data(), m.data(), v.data());
            bk->backward(pxl.data(), dyl.data(), g.data(), m.data(), v.data(), bdx.data(),
                         dg.data(), dbt.data());
            EXPECT_CLOSE(toNchw(by, d.n, d.oc, ohw), by0, 1e-4, 1e-4);
            EXPECT_CLOSE(m, m0, 1e-5, 1e-5);
            EXPECT_CLOSE(toNchw(bdx, d.n, d.oc, ohw), bdx0, 1e-4, 1e-3);
            EXPECT_CLOSE(dg, dg0, 1e-3, 1e-4);
        }
        if (!checked) QSKIP("no backend here prefers channels-last images");
    }

    void linear_data()
    {
        QTest::addColumn<QList<int>>("p"); // n in out bias
        QTest::newRow("small") << QList<int>{3, 5, 4, 1};
        QTest::newRow("no bias") << QList<int>{7, 33, 17, 0};
        QTest::newRow("mlp fc1") << QList<int>{16, 784, 256, 1};
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
            Vec y(ys), dx(xs), dw(ws), db(size_t(d.out));
            k->forward(x.data(), w.data(), b.data(), y.data());
            k->backwardData(dy.data(), w.data(), dx.data());
            k->backwardWeights(x.data(), dy.data(), dw.data(), d.bias ? db.data() : nullptr);
            EXPECT_CLOSE(y, y0, 1e-4, 1e-4);
            EXPECT_CLOSE(dx, dx0, 1e-4, 1e-4);
            EXPECT_CLOSE(dw, dw0, 1e-4, 1e-4);
            if (d.bias) EXPECT_CLOSE(db, db0, 1e-4, 1e-4);
        }
    }

    void pool_data()
    {
        QTest::addColumn<QList<int>>("p"); // kind(0 max,1 avg) n c h w kh kw sh sw ph pw
        QTest::newRow("max 2x2") << QList<int>{0, 3, 4, 8, 8, 2, 2, 2, 2, 0, 0};
        QTest::newRow("max 3x3 s2 pad1") << QList<int>{0, 2, 3, 9, 7, 3, 3, 2, 2, 1, 1};
        QTest::newRow("avg 2x2") << QList<int>{1, 3, 4, 8, 8, 2, 2, 2, 2, 0, 0};
        QTest::newRow("avg 3x3 s1 pad1") << QList<int>{1, 2, 3, 6, 7, 3, 3, 1, 1, 1, 1};
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
            Vec y(ys), dx(xs);
            k->forward(x.data(), y.data());
            k->backward(dy.data(), dx.data());
            EXPECT_CLOSE(y, y0, 1e-5, 1e-5);
            EXPECT_CLOSE(dx, dx0, 1e-5, 1e-5);
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
            Vec y(1000), dx(1000);
            k->forward(x.data(), y.data());
            k->backward(x.data(), dy.data(), dx.data());
            EXPECT_CLOSE(y, y0, 1e-5, 1e-4);
            EXPECT_CLOSE(dx, dx0, 1e-5, 1e-4);
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
            Vec y(xs), m(cs), v(cs), dx(xs), dg(cs), db(cs), yi(xs);
            k->forwardTraining(x.data(), g.data(), bt.data(), y.data(), m.data(), v.data());
            k->backward(x.data(), dy.data(), g.data(), m.data(), v.data(), dx.data(), dg.data(),
                        db.data());
            k->forwardInference(x.data(), g.data(), bt.data(), m0.data(), v0.data(), yi.data());
            EXPECT_CLOSE(y, y0, 1e-4, 1e-4);
            EXPECT_CLOSE(m, m0, 1e-5, 1e-5);
            EXPECT_CLOSE(v, v0, 1e-5, 1e-4);
            EXPECT_CLOSE(dx, dx0, 1e-4, 1e-3);
            EXPECT_CLOSE(dg, dg0, 1e-4, 1e-4);
            EXPECT_CLOSE(db, db0, 1e-4, 1e-4);
            EXPECT_CLOSE(yi, yi0, 1e-4, 1e-4);
        }
    }

    void smallOps()
    {
        const int n = 6, classes = 5;
        Vec logits = vec(n * classes, 1), a = vec(100, 2), b = vec(100, 3);
        std::vector<int32_t> labels{0, 4, 2, 2, 1, 3};
        Vec d0(n * classes), s0(100);
        const LossResult r0 = referenceBackend().softmaxCrossEntropy(logits.data(), labels.data(),
                                                                     n, classes, d0.data());
        referenceBackend().add(a.data(), b.data(), s0.data(), 100);
        for (Backend *be : fastBackends()) {
            Vec d(n * classes), s(100);
            const LossResult r =
                be->softmaxCrossEntropy(logits.data(), labels.data(), n, classes, d.data());
            QCOMPARE(r.correct, r0.correct);
            QVERIFY(std::abs(r.loss - r0.loss) < 1e-5f);
            EXPECT_CLOSE(d, d0, 1e-6, 1e-5);
            be->add(a.data(), b.data(), s.data(), 100);
            EXPECT_CLOSE(s, s0, 0, 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestBackendOps)
#include "test_backend_ops.moc"
