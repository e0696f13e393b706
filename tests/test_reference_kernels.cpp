// The reference CPU backend is the oracle every fast kernel is compared against, so it is
// checked here against things that do not depend on it: finite-difference gradients, values
// worked out by hand, and the optimizer formulas stepped through with a calculator.

#include "core/backend/cpu/reference_backend.h"
#include "core/base/rng.h"

#include "gradcheck.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <vector>

using Vec = std::vector<float>;
using Expected = std::vector<double>;

Q_DECLARE_METATYPE(fb::ConvDesc)
Q_DECLARE_METATYPE(fb::LinearDesc)
Q_DECLARE_METATYPE(fb::PoolDesc)
Q_DECLARE_METATYPE(fb::Activation)
Q_DECLARE_METATYPE(fb::BatchNormDesc)

// Fails the current test with the comparison's report unless every element is within
// atol + rtol * |expected|.
#define VERIFY_CLOSE(actual, expected, atol, rtol)                                                 \
    do {                                                                                           \
        const auto cmp_ = fbtest::compare((actual), (expected), (atol), (rtol));                   \
        QVERIFY2(cmp_.ok, (std::string(#actual ": ") + cmp_.report()).c_str());                    \
    } while (0)

namespace {

// Backward outputs are written over this, so a kernel that accumulates into (or skips) its
// output cannot pass.
constexpr float kStale = 1234.5f;

// A backend that replaces one kernel, as the oneDNN backend does: proves the overrides are not
// final and that ReferenceBackend's small ops are reused through the base interface.
class CountingBackend : public fb::ReferenceBackend {
public:
    std::unique_ptr<fb::ConvKernel> makeConv(const fb::ConvDesc &d) override
    {
        ++m_convs;
        return ReferenceBackend::makeConv(d);
    }
    int m_convs = 0;
};

} // namespace

class TestReferenceKernels : public QObject {
    Q_OBJECT

private slots:
    void identity();
    void gradcheckHarnessCatchesWrongGradients();

    void convForwardKnown_data();
    void convForwardKnown();
    void convFullWindowEqualsLinear();
    void convGradients_data();
    void convGradients();

    void linearForwardKnown();
    void linearGradients_data();
    void linearGradients();

    void poolForwardKnown_data();
    void poolForwardKnown();
    void maxPoolBackwardRoutesToFirstWinner();
    void poolGradients_data();
    void poolGradients();

    void activationValuesAndSlopes_data();
    void activationValuesAndSlopes();
    void activationGradients_data();
    void activationGradients();

    void batchNormKnown();
    void batchNormNormalizesEachChannel();
    void batchNormGradients_data();
    void batchNormGradients();

    void addAndAccumulate();
    void softmaxCrossEntropyKnown();
    void softmaxCrossEntropyIsStable();
    void softmaxCrossEntropyGradient_data();
    void softmaxCrossEntropyGradient();
    void softmaxCrossEntropySmoothing();
    void mseKnown();
    void mseGradient();

    void dropoutKeepsFraction_data();
    void dropoutKeepsFraction();
    void dropoutIsDeterministic();
    void dropoutZeroIsIdentity();
    void dropoutGradient();

    void sgdSteps_data();
    void sgdSteps();
    void adamSteps_data();
    void adamSteps();

private:
    fb::ReferenceBackend m_backend;
};

void TestReferenceKernels::identity()
{
    QCOMPARE(QString::fromStdString(m_backend.name()), QStringLiteral("cpu-reference"));
    QVERIFY(m_backend.device() == fb::Device::cpu());
    for (int op = 0; op <= int(fb::OpKind::Adam); ++op)
        QVERIFY2(m_backend.supports(fb::OpKind(op)), qPrintable(QString::number(op)));

    fb::ReferenceBackend backend;
    backend.setThreads(6);
    QCOMPARE(backend.threads(), 6);

    const fb::Tensor t = m_backend.empty(fb::Shape{2, 3, 4});
    QVERIFY(t.defined());
    QVERIFY(t.shape() == (fb::Shape{2, 3, 4}));
    QVERIFY(t.dtype() == fb::DType::F32);
    const Vec src = fbtest::uniformVector(24, 1);
    m_backend.copy(t.f32(), src.data(), src.size() * sizeof(float));
    QVERIFY(std::memcmp(t.f32(), src.data(), src.size() * sizeof(float)) == 0);

    CountingBackend counting;
    fb::Backend &base = counting;
    auto conv =
        base.makeConv(fb::ConvDesc{.n = 1, .c = 1, .h = 3, .w = 3, .oc = 1, .kh = 1, .kw = 1});
    QVERIFY(conv);
    QCOMPARE(counting.m_convs, 1);
    QCOMPARE(QString::fromStdString(base.name()), QStringLiteral("cpu-reference"));
}

// The harness itself must be able to fail, or every gradient check below proves nothing.
void TestReferenceKernels::gradcheckHarnessCatchesWrongGradients()
{
    Vec x = fbtest::uniformVector(10, 2);
    const auto square = [](const Vec &v) { return fbtest::dot(v, v); };
    const auto numeric = fbtest::numericalGradient(square, x, 1e-2);
    Vec right(x.size()), wrong(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        right[i] = 2.0f * x[i];
        wrong[i] = 2.0f * x[i] * (i == 7 ? 1.05f : 1.0f);
    }
    QCOMPARE(x, fbtest::uniformVector(10, 2)); // restored after perturbing
    QVERIFY(fbtest::compare(right, numeric, 1e-4, 1e-3).ok);
    const auto bad = fbtest::compare(wrong, numeric, 1e-4, 1e-3);
    QVERIFY(!bad.ok);
    QCOMPARE(bad.failures, size_t(1));
    QCOMPARE(bad.worstIndex, size_t(7));

    Vec withNan = right;
    withNan[3] = NAN;
    QVERIFY(!fbtest::compare(withNan, numeric, 1.0, 1.0).ok);
    const auto mismatch = fbtest::compare(Vec(9), numeric, 1.0, 1.0);
    QVERIFY(!mismatch.ok);
    QVERIFY(mismatch.report().find("size mismatch") != std::string::npos);

    const Vec distinct = fbtest::distinctVector(50, 3, 0.1f);
    for (size_t i = 0; i < distinct.size(); ++i)
        for (size_t j = i + 1; j < distinct.size(); ++j)
            QVERIFY(std::abs(distinct[i] - distinct[j]) > 0.09f);
    for (float v : fbtest::awayFromZeroVector(100, 4, 0.1f, 1.0f))
        QVERIFY(std::abs(v) >= 0.1f);
}

// ---- Convolution ----

void TestReferenceKernels::convForwardKnown_data()
{
    QTest::addColumn<fb::ConvDesc>("desc");
    QTest::addColumn<Vec>("weights");
    QTest::addColumn<Vec>("bias");
    QTest::addColumn<Expected>("expected");

    // Input is always the 3x3 image 1..9:  1 2 3 / 4 5 6 / 7 8 9.
    // An all-ones 3x3 kernel with padding 1 sums each cell's neighbourhood.
    QTest::newRow("box 3x3 pad 1")
        << fb::ConvDesc{.n = 1,
                        .c = 1,
                        .h = 3,
                        .w = 3,
                        .oc = 1,
                        .kh = 3,
                        .kw = 3,
                        .ph = 1,
                        .pw = 1,
                        .bias = false}
        << Vec(9, 1.0f) << Vec{} << Expected{12, 21, 16, 27, 45, 33, 24, 39, 28};
    // Stride 2 keeps the corners of the above.
    QTest::newRow("box 3x3 pad 1 stride 2") << fb::ConvDesc{.n = 1,
                                                            .c = 1,
                                                            .h = 3,
                                                            .w = 3,
                                                            .oc = 1,
                                                            .kh = 3,
                                                            .kw = 3,
                                                            .sh = 2,
                                                            .sw = 2,
                                                            .ph = 1,
                                                            .pw = 1,
                                                            .bias = false}
                                            << Vec(9, 1.0f) << Vec{} << Expected{12, 16, 24, 28};
    // A 1x2 kernel [1, 10] is a correlation (not flipped): y = x[i, j] + 10 x[i, j + 1], + 0.5.
    QTest::newRow("1x2 kernel, bias")
        << fb::ConvDesc{.n = 1, .c = 1, .h = 3, .w = 3, .oc = 1, .kh = 1, .kw = 2} << Vec{1, 10}
        << Vec{0.5f} << Expected{21.5, 32.5, 54.5, 65.5, 87.5, 98.5};
    // Two output channels: the centre tap, and minus the top-left tap with bias 100. Padding 1
    // with a 2x2 kernel and stride 2 gives a 2x2 output starting one cell outside the image.
    // Channel 1 at (r, c) reads x[2r - 1, 2c - 1]: zero padding except at (1, 1) -> -5.
    QTest::newRow("two channels, stride 2, pad 1")
        << fb::ConvDesc{.n = 1,
                        .c = 1,
                        .h = 3,
                        .w = 3,
                        .oc = 2,
                        .kh = 2,
                        .kw = 2,
                        .sh = 2,
                        .sw = 2,
                        .ph = 1,
                        .pw = 1}
        << Vec{0, 0, 0, 1, -1, 0, 0, 0}
        << Vec{0.0f, 100.0f} // Channel 0 reads x[2r, 2c]: 1 3 / 7 9.
        << Expected{1, 3, 7, 9, 100, 100, 100, 95};
}

void TestReferenceKernels::convForwardKnown()
{
    QFETCH(fb::ConvDesc, desc);
    QFETCH(Vec, weights);
    QFETCH(Vec, bias);
    QFETCH(Expected, expected);
    const Vec x{1, 2, 3, 4, 5, 6, 7, 8, 9};
    Vec y(expected.size(), kStale);
    QCOMPARE(size_t(desc.n * desc.oc * desc.oh() * desc.ow()), expected.size());
    m_backend.makeConv(desc)->forward(x.data(), weights.data(), bias.data(), y.data());
    VERIFY_CLOSE(y, expected, 1e-5, 1e-6);
}

// A convolution whose kernel covers the whole unpadded image is a fully connected layer with the
// same weight layout ([oc, c*h*w]): an independent check of the indexing on random data.
void TestReferenceKernels::convFullWindowEqualsLinear()
{
    const fb::ConvDesc cd{.n = 3, .c = 2, .h = 4, .w = 3, .oc = 5, .kh = 4, .kw = 3};
    const fb::LinearDesc ld{.n = 3, .in = 24, .out = 5};
    const Vec x = fbtest::uniformVector(72, 10), w = fbtest::uniformVector(120, 11),
              b = fbtest::uniformVector(5, 12);
    Vec yConv(15, kStale), yLinear(15, kStale);
    m_backend.makeConv(cd)->forward(x.data(), w.data(), b.data(), yConv.data());
    m_backend.makeLinear(ld)->forward(x.data(), w.data(), b.data(), yLinear.data());
    VERIFY_CLOSE(yConv, yLinear, 1e-6, 1e-6);
}

void TestReferenceKernels::convGradients_data()
{
    QTest::addColumn<fb::ConvDesc>("desc");
    QTest::newRow("3x3 stride 1 pad 0")
        << fb::ConvDesc{.n = 2, .c = 3, .h = 5, .w = 5, .oc = 4, .kh = 3, .kw = 3};
    QTest::newRow("3x3 stride 1 pad 1") << fb::ConvDesc{
        .n = 2, .c = 3, .h = 5, .w = 5, .oc = 4, .kh = 3, .kw = 3, .ph = 1, .pw = 1};
    QTest::newRow("3x2 stride 2 pad 1x0 no bias") << fb::ConvDesc{.n = 1,
                                                                  .c = 2,
                                                                  .h = 7,
                                                                  .w = 6,
                                                                  .oc = 3,
                                                                  .kh = 3,
                                                                  .kw = 2,
                                                                  .sh = 2,
                                                                  .sw = 2,
                                                                  .ph = 1,
                                                                  .pw = 0,
                                                                  .bias = false};
    QTest::newRow("2x3 stride 2x1 pad 0x1") << fb::ConvDesc{.n = 2,
                                                            .c = 2,
                                                            .h = 6,
                                                            .w = 7,
                                                            .oc = 3,
                                                            .kh = 2,
                                                            .kw = 3,
                                                            .sh = 2,
                                                            .sw = 1,
                                                            .ph = 0,
                                                            .pw = 1};
    // Stride 2 over 6 rows with a 3-tap kernel never reads the last row: its gradient is zero.
    QTest::newRow("3x3 stride 2 unread edge") << fb::ConvDesc{
        .n = 1, .c = 2, .h = 6, .w = 6, .oc = 2, .kh = 3, .kw = 3, .sh = 2, .sw = 2};
    QTest::newRow("1x1 stride 2 no bias") << fb::ConvDesc{
        .n = 2, .c = 3, .h = 5, .w = 5, .oc = 2, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .bias = false};
}

void TestReferenceKernels::convGradients()
{
    QFETCH(fb::ConvDesc, desc);
    const size_t xCount = size_t(desc.n * desc.c * desc.h * desc.w);
    const size_t wCount = size_t(desc.oc * desc.c * desc.kh * desc.kw);
    const size_t yCount = size_t(desc.n * desc.oc * desc.oh() * desc.ow());
    Vec x = fbtest::uniformVector(xCount, 20), w = fbtest::uniformVector(wCount, 21),
        b = fbtest::uniformVector(size_t(desc.oc), 22);
    const Vec r = fbtest::uniformVector(yCount, 23); // the projection, = dL/dy
    auto kernel = m_backend.makeConv(desc);
    Vec y(yCount);
    const float *bias = desc.bias ? b.data() : nullptr;
    auto loss = [&](const Vec &xv, const Vec &wv, const Vec &bv) {
        kernel->forward(xv.data(), wv.data(), desc.bias ? bv.data() : nullptr, y.data());
        return fbtest::dot(y, r);
    };

    Vec dx(xCount, kStale), dw(wCount, kStale), db(size_t(desc.oc), kStale);
    kernel->backwardData(r.data(), w.data(), dx.data());
    kernel->backwardWeights(x.data(), r.data(), dw.data(), desc.bias ? db.data() : nullptr);

    // The loss is linear in each argument, so a wide step has no truncation error.
    const double eps = 0.05;
    const auto ndx = fbtest::numericalGradient([&](const Vec &v) { return loss(v, w, b); }, x, eps);
    const auto ndw = fbtest::numericalGradient([&](const Vec &v) { return loss(x, v, b); }, w, eps);
    VERIFY_CLOSE(dx, ndx, 2e-4, 2e-3);
    VERIFY_CLOSE(dw, ndw, 2e-4, 2e-3);
    if (desc.bias) {
        const auto ndb =
            fbtest::numericalGradient([&](const Vec &v) { return loss(x, w, v); }, b, eps);
        VERIFY_CLOSE(db, ndb, 2e-4, 2e-3);
    } else {
        QVERIFY(bias == nullptr);
        QCOMPARE(db, Vec(size_t(desc.oc), kStale)); // untouched without a bias
    }
}

// ---- Linear ----

void TestReferenceKernels::linearForwardKnown()
{
    // x = [[1, 2], [-1, 0.5]], w = [[1, 0], [0, 1], [1, 1]] (out x in), b = [0.5, 0, -1]
    // row 0: [1 + 0.5, 2, 3 - 1] = [1.5, 2, 2];
    // row 1: [-1 + 0.5, 0.5, -0.5 - 1] = [-0.5, 0.5, -1.5]
    const Vec x{1, 2, -1, 0.5f}, w{1, 0, 0, 1, 1, 1}, b{0.5f, 0, -1};
    Vec y(6, kStale);
    m_backend.makeLinear(fb::LinearDesc{.n = 2, .in = 2, .out = 3})
        ->forward(x.data(), w.data(), b.data(), y.data());
    VERIFY_CLOSE(y, (Expected{1.5, 2, 2, -0.5, 0.5, -1.5}), 1e-6, 0.0);
    m_backend.makeLinear(fb::LinearDesc{.n = 2, .in = 2, .out = 3, .bias = false})
        ->forward(x.data(), w.data(), nullptr, y.data());
    VERIFY_CLOSE(y, (Expected{1, 2, 3, -1, 0.5, -0.5}), 1e-6, 0.0);
}

void TestReferenceKernels::linearGradients_data()
{
    QTest::addColumn<fb::LinearDesc>("desc");
    QTest::newRow("3x5 -> 4") << fb::LinearDesc{.n = 3, .in = 5, .out = 4};
    QTest::newRow("1x7 -> 2 no bias") << fb::LinearDesc{.n = 1, .in = 7, .out = 2, .bias = false};
    QTest::newRow("4x1 -> 3") << fb::LinearDesc{.n = 4, .in = 1, .out = 3};
}

void TestReferenceKernels::linearGradients()
{
    QFETCH(fb::LinearDesc, desc);
    Vec x = fbtest::uniformVector(size_t(desc.n * desc.in), 30),
        w = fbtest::uniformVector(size_t(desc.out * desc.in), 31),
        b = fbtest::uniformVector(size_t(desc.out), 32);
    const Vec r = fbtest::uniformVector(size_t(desc.n * desc.out), 33);
    auto kernel = m_backend.makeLinear(desc);
    Vec y(r.size());
    auto loss = [&](const Vec &xv, const Vec &wv, const Vec &bv) {
        kernel->forward(xv.data(), wv.data(), desc.bias ? bv.data() : nullptr, y.data());
        return fbtest::dot(y, r);
    };
    Vec dx(x.size(), kStale), dw(w.size(), kStale), db(b.size(), kStale);
    kernel->backwardData(r.data(), w.data(), dx.data());
    kernel->backwardWeights(x.data(), r.data(), dw.data(), desc.bias ? db.data() : nullptr);

    const double eps = 0.05;
    VERIFY_CLOSE(dx, fbtest::numericalGradient([&](const Vec &v) { return loss(v, w, b); }, x, eps),
                 2e-4, 2e-3);
    VERIFY_CLOSE(dw, fbtest::numericalGradient([&](const Vec &v) { return loss(x, v, b); }, w, eps),
                 2e-4, 2e-3);
    if (desc.bias)
        VERIFY_CLOSE(db,
                     fbtest::numericalGradient([&](const Vec &v) { return loss(x, w, v); }, b, eps),
                     2e-4, 2e-3);
}

// ---- Pooling ----

void TestReferenceKernels::poolForwardKnown_data()
{
    QTest::addColumn<fb::PoolDesc>("desc");
    QTest::addColumn<Vec>("input");
    QTest::addColumn<Expected>("expected");

    //  1  5  2  0
    //  3  4  8  6
    //  7  0  1  2
    //  9  3  4 11
    const Vec grid{1, 5, 2, 0, 3, 4, 8, 6, 7, 0, 1, 2, 9, 3, 4, 11};
    const fb::PoolDesc base{.n = 1, .c = 1, .h = 4, .w = 4, .kh = 2, .kw = 2, .sh = 2, .sw = 2};

    QTest::newRow("max 2x2 stride 2") << base << grid << Expected{5, 8, 9, 11};
    fb::PoolDesc avg = base;
    avg.kind = fb::PoolKind::Avg;
    // (1+5+3+4)/4, (2+0+8+6)/4, (7+0+9+3)/4, (1+2+4+11)/4
    QTest::newRow("avg 2x2 stride 2") << avg << grid << Expected{3.25, 4, 4.75, 4.5};

    // Padding 1 gives a 3x3 output; the corner windows hold one real cell and three padding
    // cells. Average pooling still divides by 4: top-left = 1/4, top-middle = (5+2)/4.
    fb::PoolDesc avgPad = avg;
    avgPad.ph = avgPad.pw = 1;
    QTest::newRow("avg 2x2 stride 2 pad 1")
        << avgPad << grid << Expected{0.25, 1.75, 0, 2.5, 3.25, 2, 2.25, 1.75, 2.75};
    // Max pooling on all-negative input with padding: padding never wins, so the corners are the
    // corner cells themselves, not 0.
    fb::PoolDesc maxPad = base;
    maxPad.ph = maxPad.pw = 1;
    Vec negative(16);
    for (int i = 0; i < 16; ++i)
        negative[size_t(i)] = -float(i + 1);
    //  -1  -2  -3  -4 / -5  -6  -7  -8 / -9 -10 -11 -12 / -13 -14 -15 -16
    QTest::newRow("max 2x2 stride 2 pad 1, negative")
        << maxPad << negative << Expected{-1, -2, -4, -5, -6, -8, -13, -14, -16};
    // Overlapping 3x3 windows at stride 1, two channels (the second channel is the first + 100).
    Vec twoChannels = grid;
    for (float v : grid)
        twoChannels.push_back(v + 100.0f);
    QTest::newRow("max 3x3 stride 1, two channels")
        << fb::PoolDesc{.n = 1, .c = 2, .h = 4, .w = 4, .kh = 3, .kw = 3, .sh = 1, .sw = 1}
        << twoChannels << Expected{8, 8, 9, 11, 108, 108, 109, 111};
}

void TestReferenceKernels::poolForwardKnown()
{
    QFETCH(fb::PoolDesc, desc);
    QFETCH(Vec, input);
    QFETCH(Expected, expected);
    QCOMPARE(size_t(desc.n * desc.c * desc.oh() * desc.ow()), expected.size());
    Vec y(expected.size(), kStale);
    m_backend.makePool(desc)->forward(input.data(), y.data());
    VERIFY_CLOSE(y, expected, 1e-6, 0.0);
}

void TestReferenceKernels::maxPoolBackwardRoutesToFirstWinner()
{
    // The 4x4 grid above, 2x2 windows: the winners 5, 8, 9, 11 sit at flat indices 1, 6, 12, 15.
    const Vec grid{1, 5, 2, 0, 3, 4, 8, 6, 7, 0, 1, 2, 9, 3, 4, 11};
    auto pool = m_backend.makePool(
        fb::PoolDesc{.n = 1, .c = 1, .h = 4, .w = 4, .kh = 2, .kw = 2, .sh = 2, .sw = 2});
    Vec y(4), dx(16, kStale);
    pool->forward(grid.data(), y.data());
    const Vec dy{1, 2, 3, 4};
    pool->backward(dy.data(), dx.data());
    VERIFY_CLOSE(dx, (Expected{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 4}), 0.0, 0.0);

    // Ties: the first maximum in row-major scan order takes the whole gradient.
    auto tie = m_backend.makePool(
        fb::PoolDesc{.n = 1, .c = 1, .h = 2, .w = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2});
    const Vec same{7, 7, 7, 7}, one{1};
    Vec y1(1), dx4(4, kStale);
    tie->forward(same.data(), y1.data());
    tie->backward(one.data(), dx4.data());
    VERIFY_CLOSE(dx4, (Expected{1, 0, 0, 0}), 0.0, 0.0);

    // Overlapping windows (3 wide, stride 1) that share a winner add their gradients there:
    // on the row 0 1 9 2 3 both windows' maximum is the 9.
    auto overlap = m_backend.makePool(
        fb::PoolDesc{.n = 1, .c = 1, .h = 1, .w = 5, .kh = 1, .kw = 3, .sh = 1, .sw = 1});
    const Vec row{0, 1, 9, 2, 3}, dy3{1, 10, 100};
    Vec y3(3), dx5(5, kStale);
    overlap->forward(row.data(), y3.data());
    overlap->backward(dy3.data(), dx5.data());
    VERIFY_CLOSE(y3, (Expected{9, 9, 9}), 0.0, 0.0);
    VERIFY_CLOSE(dx5, (Expected{0, 0, 111, 0, 0}), 0.0, 0.0);

    // The kernel uses the winners of the *last* forward call.
    const Vec reversed{3, 2, 9, 1, 0};
    const Vec moved{4, 1, 2, 8, 5};
    overlap->forward(reversed.data(), y3.data());
    overlap->forward(moved.data(), y3.data()); // windows: 4 1 2 | 1 2 8 | 2 8 5
    overlap->backward(dy3.data(), dx5.data());
    VERIFY_CLOSE(dx5, (Expected{1, 0, 0, 110, 0}), 0.0, 0.0);
}

void TestReferenceKernels::poolGradients_data()
{
    QTest::addColumn<fb::PoolDesc>("desc");
    for (fb::PoolKind kind : {fb::PoolKind::Max, fb::PoolKind::Avg}) {
        const char *name = kind == fb::PoolKind::Max ? "max" : "avg";
        QTest::addRow("%s 2x2 stride 2", name) << fb::PoolDesc{kind, 2, 2, 4, 6, 2, 2, 2, 2, 0, 0};
        QTest::addRow("%s 3x3 stride 2 pad 1", name)
            << fb::PoolDesc{kind, 1, 2, 5, 6, 3, 3, 2, 2, 1, 1};
        QTest::addRow("%s 2x3 stride 1x2 pad 1", name)
            << fb::PoolDesc{kind, 2, 2, 5, 7, 2, 3, 1, 2, 1, 1};
        QTest::addRow("%s 2x2 stride 3 (gaps) pad 1", name)
            << fb::PoolDesc{kind, 1, 3, 7, 7, 2, 2, 3, 3, 1, 1};
    }
}

void TestReferenceKernels::poolGradients()
{
    QFETCH(fb::PoolDesc, desc);
    const size_t xCount = size_t(desc.n * desc.c * desc.h * desc.w);
    const size_t yCount = size_t(desc.n * desc.c * desc.oh() * desc.ow());
    // Distinct values 0.1 apart: no ties, and a step of 0.02 never changes a winner.
    Vec x = fbtest::distinctVector(xCount, 40, 0.1f, -3.0f);
    const Vec r = fbtest::uniformVector(yCount, 41);
    auto kernel = m_backend.makePool(desc);
    Vec y(yCount), dx(xCount, kStale);
    kernel->forward(x.data(), y.data());
    kernel->backward(r.data(), dx.data());

    auto probe = m_backend.makePool(desc); // keeps kernel's winners out of the probing
    const auto numeric = fbtest::numericalGradient(
        [&](const Vec &v) {
            probe->forward(v.data(), y.data());
            return fbtest::dot(y, r);
        },
        x, 0.02);
    VERIFY_CLOSE(dx, numeric, 2e-4, 2e-3);
}

// ---- Activations ----

void TestReferenceKernels::activationValuesAndSlopes_data()
{
    QTest::addColumn<fb::Activation>("kind");
    QTest::addColumn<Vec>("x");
    QTest::addColumn<Expected>("y");
    QTest::addColumn<Expected>("slope");
    using fb::Activation;
    // ReLU's slope at exactly 0 is 0; LeakyReLU's (alpha 0.2 here) is alpha.
    QTest::newRow("relu") << Activation::Relu << Vec{-1, 0, 2} << Expected{0, 0, 2}
                          << Expected{0, 0, 1};
    QTest::newRow("leaky relu") << Activation::LeakyRelu << Vec{-2, 0, 3} << Expected{-0.4, 0, 3}
                                << Expected{0.2, 0.2, 1};
    // sigmoid(2) = 1 / (1 + e^-2) = 0.880797078; slope s(1-s): 0.25 at 0, 0.104993585 at 2.
    QTest::newRow("sigmoid") << Activation::Sigmoid << Vec{0, 2, -2}
                             << Expected{0.5, 0.880797078, 0.119202922}
                             << Expected{0.25, 0.104993585, 0.104993585};
    // tanh(1) = 0.761594156; slope 1 - t^2 = 0.419974342.
    QTest::newRow("tanh") << Activation::Tanh << Vec{0, 1, -1}
                          << Expected{0, 0.761594156, -0.761594156}
                          << Expected{1, 0.419974342, 0.419974342};
    // gelu(1) = Phi(1) = 0.841344746, gelu(-1) = -Phi(-1) = -0.158655254;
    // slope Phi(x) + x phi(x): 0.5 at 0, 0.841344746 + 0.241970725 = 1.083315471 at 1,
    // 0.158655254 - 0.241970725 = -0.083315471 at -1.
    QTest::newRow("gelu") << Activation::Gelu << Vec{0, 1, -1}
                          << Expected{0, 0.841344746, -0.158655254}
                          << Expected{0.5, 1.083315471, -0.083315471};
    // silu(x) = x s(x): silu(1) = s(1) = 0.731058579, silu(-1) = -s(-1) = -0.268941421;
    // slope s(x) (1 + x (1 - s(x))): 0.5 at 0, 0.927670512 at 1, s(-1)^2 = 0.072329488 at -1.
    QTest::newRow("silu") << Activation::Silu << Vec{0, 1, -1}
                          << Expected{0, 0.731058579, -0.268941421}
                          << Expected{0.5, 0.927670512, 0.072329488};
}

void TestReferenceKernels::activationValuesAndSlopes()
{
    QFETCH(fb::Activation, kind);
    QFETCH(Vec, x);
    QFETCH(Expected, y);
    QFETCH(Expected, slope);
    auto kernel = m_backend.makeActivation(
        fb::ActivationDesc{.kind = kind, .count = int64_t(x.size()), .alpha = 0.2f});
    Vec out(x.size(), kStale), dx(x.size(), kStale);
    const Vec ones(x.size(), 1.0f);
    kernel->forward(x.data(), out.data());
    kernel->backward(x.data(), ones.data(), dx.data());
    VERIFY_CLOSE(out, y, 1e-7, 1e-6);
    VERIFY_CLOSE(dx, slope, 1e-7, 1e-6);
}

void TestReferenceKernels::activationGradients_data()
{
    QTest::addColumn<fb::Activation>("kind");
    using fb::Activation;
    QTest::newRow("relu") << Activation::Relu;
    QTest::newRow("leaky relu") << Activation::LeakyRelu;
    QTest::newRow("sigmoid") << Activation::Sigmoid;
    QTest::newRow("tanh") << Activation::Tanh;
    QTest::newRow("gelu") << Activation::Gelu;
    QTest::newRow("silu") << Activation::Silu;
}

void TestReferenceKernels::activationGradients()
{
    QFETCH(fb::Activation, kind);
    const size_t count = 64;
    const bool kinked = kind == fb::Activation::Relu || kind == fb::Activation::LeakyRelu;
    Vec x = kinked ? fbtest::awayFromZeroVector(count, 50, 0.05f, 3.0f)
                   : fbtest::uniformVector(count, 50, -4.0f, 4.0f);
    const Vec r = fbtest::uniformVector(count, 51);
    auto kernel = m_backend.makeActivation(
        fb::ActivationDesc{.kind = kind, .count = int64_t(count), .alpha = 0.1f});
    Vec y(count), dx(count, kStale);
    kernel->backward(x.data(), r.data(), dx.data());
    const auto numeric = fbtest::numericalGradient(
        [&](const Vec &v) {
            kernel->forward(v.data(), y.data());
            return fbtest::dot(y, r);
        },
        x, 1e-3);
    VERIFY_CLOSE(dx, numeric, 2e-4, 2e-3);
}

// ---- Batch normalization ----

void TestReferenceKernels::batchNormKnown()
{
    // x[n=2, c=2, h=1, w=2]: channel 0 holds 1 2 | 3 4, channel 1 holds 10 20 | 30 40.
    // Channel 0: mean 2.5, biased var 1.25; channel 1: mean 25, var 125.
    // y = gamma (x - mean) / sqrt(var + 1e-5) + beta with gamma = [2, 1], beta = [3, -1]:
    // (1 - 2.5) / sqrt(1.25001) = -1.3416354, so y = 3 - 2.6832708 = 0.3167292, and so on.
    const Vec x{1, 2, 10, 20, 3, 4, 30, 40}, gamma{2, 1}, beta{3, -1};
    auto kernel = m_backend.makeBatchNorm(fb::BatchNormDesc{.n = 2, .c = 2, .h = 1, .w = 2});
    Vec y(8, kStale), mean(2, kStale), var(2, kStale);
    kernel->forwardTraining(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), var.data());
    VERIFY_CLOSE(mean, (Expected{2.5, 25}), 1e-6, 1e-6);
    VERIFY_CLOSE(var, (Expected{1.25, 125}), 1e-6, 1e-6);
    VERIFY_CLOSE(y,
                 (Expected{0.3167292, 2.1055764, -2.3416407, -1.4472136, 3.8944236, 5.6832708,
                           -0.5527864, 0.3416407}),
                 1e-6, 1e-6);

    // Inference with given statistics: mean 0 and var 4 - 1e-5 make the divisor exactly 2.
    const Vec givenMean{0, 10}, givenVar{4.0f - 1e-5f, 1.0f - 1e-5f};
    kernel->forwardInference(x.data(), gamma.data(), beta.data(), givenMean.data(), givenVar.data(),
                             y.data());
    // channel 0: 2 * x / 2 + 3 = x + 3; channel 1: (x - 10) / 1 - 1 = x - 11.
    VERIFY_CLOSE(y, (Expected{4, 5, -1, 9, 6, 7, 19, 29}), 1e-5, 1e-6);
}

void TestReferenceKernels::batchNormNormalizesEachChannel()
{
    const fb::BatchNormDesc d{.n = 4, .c = 3, .h = 5, .w = 3};
    const int64_t plane = d.h * d.w, count = d.n * d.c * plane;
    Vec x = fbtest::uniformVector(size_t(count), 60, -1.0f, 1.0f);
    // Give each channel its own offset and spread, so a channel mix-up cannot pass.
    for (int64_t i = 0; i < count; ++i) {
        const int64_t c = (i / plane) % d.c;
        x[size_t(i)] = x[size_t(i)] * float(c + 1) * 3.0f + float(c) * 10.0f - 7.0f;
    }
    const Vec gamma(3, 1.0f), beta(3, 0.0f);
    auto kernel = m_backend.makeBatchNorm(d);
    Vec y(size_t(count), kStale), mean(3), var(3);
    kernel->forwardTraining(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), var.data());
    for (int64_t c = 0; c < d.c; ++c) {
        double sum = 0.0, sq = 0.0, xSum = 0.0;
        const double m = double(d.n * plane);
        for (int64_t n = 0; n < d.n; ++n)
            for (int64_t k = 0; k < plane; ++k) {
                const size_t i = size_t((n * d.c + c) * plane + k);
                sum += y[i];
                sq += double(y[i]) * y[i];
                xSum += x[i];
            }
        QVERIFY2(std::abs(sum / m) < 1e-5, qPrintable(QString::number(sum / m)));
        QVERIFY2(std::abs(sq / m - 1.0) < 1e-3, qPrintable(QString::number(sq / m)));
        QVERIFY(std::abs(mean[size_t(c)] - xSum / m) < 1e-4);
    }
    // The written statistics reproduce the training output through the inference path.
    Vec yInference(size_t(count), kStale);
    kernel->forwardInference(x.data(), gamma.data(), beta.data(), mean.data(), var.data(),
                             yInference.data());
    VERIFY_CLOSE(yInference, y, 1e-5, 1e-5);
}

void TestReferenceKernels::batchNormGradients_data()
{
    QTest::addColumn<fb::BatchNormDesc>("desc");
    QTest::newRow("2x3x2x3") << fb::BatchNormDesc{.n = 2, .c = 3, .h = 2, .w = 3};
    QTest::newRow("5x2x1x1 (after a linear layer)")
        << fb::BatchNormDesc{.n = 5, .c = 2, .h = 1, .w = 1};
    QTest::newRow("1x2x3x3 eps 1e-3")
        << fb::BatchNormDesc{.n = 1, .c = 2, .h = 3, .w = 3, .eps = 1e-3f};
}

void TestReferenceKernels::batchNormGradients()
{
    QFETCH(fb::BatchNormDesc, desc);
    const size_t count = size_t(desc.n * desc.c * desc.h * desc.w), channels = size_t(desc.c);
    Vec x = fbtest::uniformVector(count, 70);
    Vec gamma = fbtest::uniformVector(channels, 71, 0.5f, 1.5f);
    Vec beta = fbtest::uniformVector(channels, 72);
    const Vec r = fbtest::uniformVector(count, 73);
    auto kernel = m_backend.makeBatchNorm(desc);
    Vec y(count), mean(channels), var(channels);
    auto loss = [&](const Vec &xv, const Vec &gv, const Vec &bv) {
        kernel->forwardTraining(xv.data(), gv.data(), bv.data(), y.data(), mean.data(), var.data());
        return fbtest::dot(y, r);
    };
    loss(x, gamma, beta); // the statistics the backward pass is given
    Vec dx(count, kStale), dgamma(channels, kStale), dbeta(channels, kStale);
    kernel->backward(x.data(), r.data(), gamma.data(), mean.data(), var.data(), dx.data(),
                     dgamma.data(), dbeta.data());

    const double eps = 1e-3;
    VERIFY_CLOSE(
        dx, fbtest::numericalGradient([&](const Vec &v) { return loss(v, gamma, beta); }, x, eps),
        1e-3, 1e-2);
    VERIFY_CLOSE(
        dgamma,
        fbtest::numericalGradient([&](const Vec &v) { return loss(x, v, beta); }, gamma, eps), 1e-3,
        1e-2);
    VERIFY_CLOSE(
        dbeta,
        fbtest::numericalGradient([&](const Vec &v) { return loss(x, gamma, v); }, beta, eps), 1e-3,
        1e-2);
}

// ---- Small ops ----

void TestReferenceKernels::addAndAccumulate()
{
    const Vec a{1, 2, 3}, b{0.5f, -2, 10};
    Vec y(3, kStale);
    m_backend.add(a.data(), b.data(), y.data(), 3);
    VERIFY_CLOSE(y, (Expected{1.5, 0, 13}), 0.0, 0.0);
    m_backend.accumulate(y.data(), a.data(), 3);
    VERIFY_CLOSE(y, (Expected{2.5, 2, 16}), 0.0, 0.0);
}

void TestReferenceKernels::softmaxCrossEntropyKnown()
{
    // Row 0: logits 1 2 3, label 2. logsumexp = 3 + ln(e^-2 + e^-1 + 1) = 3 + ln(1.503214724)
    //   = 3.407605964, loss 0.407605964; softmax = 0.090030573 0.244728471 0.665240956.
    // Row 1: logits 0 0 0, label 1: loss ln 3 = 1.098612289; softmax 1/3 each. Its arg-max is
    //   the first maximum (class 0), so it does not count as correct.
    // Mean loss (0.407605964 + 1.098612289) / 2 = 0.753109127.
    // dlogits = (softmax - onehot) / 2.
    const Vec logits{1, 2, 3, 0, 0, 0};
    const std::vector<int32_t> labels{2, 1};
    Vec dlogits(6, kStale);
    const fb::LossResult r =
        m_backend.softmaxCrossEntropy(logits.data(), labels.data(), 2, 3, dlogits.data());
    QVERIFY2(std::abs(r.loss - 0.753109127) < 1e-6, qPrintable(QString::number(r.loss, 'g', 9)));
    QCOMPARE(r.correct, int64_t(1));
    VERIFY_CLOSE(
        dlogits,
        (Expected{0.045015287, 0.122364236, -0.167379522, 0.166666667, -0.333333333, 0.166666667}),
        1e-7, 1e-6);

    // Without dlogits only the loss and the count come back.
    const std::vector<int32_t> firstClass{0, 0};
    const fb::LossResult r2 =
        m_backend.softmaxCrossEntropy(logits.data(), firstClass.data(), 2, 3, nullptr);
    // Row 0 with label 0: 3.407605964 - 1 = 2.407605964; row 1: ln 3. Mean 1.753109127.
    QVERIFY2(std::abs(r2.loss - 1.753109127) < 1e-6, qPrintable(QString::number(r2.loss, 'g', 9)));
    QCOMPARE(r2.correct, int64_t(1));
}

void TestReferenceKernels::softmaxCrossEntropyIsStable()
{
    // Naive exp(1000) overflows to inf; with the row maximum subtracted the loss is exact.
    const Vec logits{1000, 0, -1000, 1000};
    const std::vector<int32_t> labels{0, 0};
    Vec dlogits(4, kStale);
    const fb::LossResult r =
        m_backend.softmaxCrossEntropy(logits.data(), labels.data(), 2, 2, dlogits.data());
    // Row 0: loss ~e^-1000 = 0; row 1: loss 2000. Mean 1000.
    QVERIFY2(std::abs(r.loss - 1000.0f) < 1e-3, qPrintable(QString::number(r.loss)));
    QCOMPARE(r.correct, int64_t(1));
    VERIFY_CLOSE(dlogits, (Expected{0, 0, -0.5, 0.5}), 1e-7, 0.0);
}

void TestReferenceKernels::softmaxCrossEntropyGradient_data()
{
    QTest::addColumn<float>("smoothing");
    QTest::newRow("the label alone") << 0.0f;
    QTest::newRow("label smoothing 0.2") << 0.2f;
}

void TestReferenceKernels::softmaxCrossEntropyGradient()
{
    QFETCH(float, smoothing);
    const int64_t n = 4, classes = 5;
    Vec logits = fbtest::uniformVector(size_t(n * classes), 80, -2.0f, 2.0f);
    const std::vector<int32_t> labels{0, 3, 1, 4};
    Vec dlogits(logits.size(), kStale);
    m_backend.softmaxCrossEntropy(logits.data(), labels.data(), n, classes, dlogits.data(),
                                  smoothing);
    const auto numeric = fbtest::numericalGradient(
        [&](const Vec &v) {
            return double(
                m_backend
                    .softmaxCrossEntropy(v.data(), labels.data(), n, classes, nullptr, smoothing)
                    .loss);
        },
        logits, 5e-3);
    VERIFY_CLOSE(dlogits, numeric, 1e-4, 1e-2);
    // Each row of (softmax - target) / n sums to zero.
    for (int64_t row = 0; row < n; ++row) {
        double sum = 0.0;
        for (int64_t k = 0; k < classes; ++k)
            sum += dlogits[size_t(row * classes + k)];
        QVERIFY(std::abs(sum) < 1e-7);
    }
}

void TestReferenceKernels::softmaxCrossEntropySmoothing()
{
    // softmaxCrossEntropyKnown's rows with label smoothing 0.3: the target is 0.7 onehot + 0.1.
    // Row 0 (label 2): target 0.1 0.1 0.8; loss = logsumexp - sum target * logits
    //   = 3.407605964 - 2.7 = 0.707605964. Row 1 (label 1, logits 0): ln 3 = 1.098612289 whatever
    //   the target. Mean 0.903109127. dlogits = (softmax - target) / 2.
    const Vec logits{1, 2, 3, 0, 0, 0};
    const std::vector<int32_t> labels{2, 1};
    Vec dlogits(6, kStale);
    const fb::LossResult r =
        m_backend.softmaxCrossEntropy(logits.data(), labels.data(), 2, 3, dlogits.data(), 0.3f);
    QVERIFY2(std::abs(r.loss - 0.903109127) < 1e-6, qPrintable(QString::number(r.loss, 'g', 9)));
    QCOMPARE(r.correct, int64_t(1));
    VERIFY_CLOSE(
        dlogits,
        (Expected{-0.004984714, 0.072364236, -0.067379522, 0.116666667, -0.233333333, 0.116666667}),
        1e-7, 1e-6);
}

void TestReferenceKernels::mseKnown()
{
    // diff = pred - target = 1 0 -2 3; squares 1 0 4 9, mean 14 / 4 = 3.5;
    // dpred = 2 diff / 4 = 0.5 0 -1 1.5.
    const Vec pred{1, 2, 3, 4}, target{0, 2, 5, 1};
    Vec dpred(4, kStale);
    QCOMPARE(m_backend.mse(pred.data(), target.data(), 4, dpred.data()), 3.5f);
    VERIFY_CLOSE(dpred, (Expected{0.5, 0, -1, 1.5}), 0.0, 0.0);
    QCOMPARE(m_backend.mse(pred.data(), target.data(), 4, nullptr), 3.5f);
}

void TestReferenceKernels::mseGradient()
{
    Vec pred = fbtest::uniformVector(20, 90);
    const Vec target = fbtest::uniformVector(20, 91);
    Vec dpred(20, kStale);
    m_backend.mse(pred.data(), target.data(), 20, dpred.data());
    const auto numeric = fbtest::numericalGradient(
        [&](const Vec &v) { return double(m_backend.mse(v.data(), target.data(), 20, nullptr)); },
        pred, 1e-2);
    VERIFY_CLOSE(dpred, numeric, 1e-4, 1e-2);
}

// ---- Dropout ----

void TestReferenceKernels::dropoutKeepsFraction_data()
{
    QTest::addColumn<float>("p");
    QTest::newRow("p 0.1") << 0.1f;
    QTest::newRow("p 0.5") << 0.5f;
    QTest::newRow("p 0.9") << 0.9f;
    QTest::newRow("p 1") << 1.0f;
}

void TestReferenceKernels::dropoutKeepsFraction()
{
    QFETCH(float, p);
    const int64_t count = 100000;
    const Vec x = fbtest::uniformVector(size_t(count), 100, 0.5f, 1.5f);
    Vec y(size_t(count), kStale), mask(size_t(count), kStale);
    m_backend.dropoutForward(x.data(), y.data(), mask.data(), count, p, 1234, 0);
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    int64_t kept = 0;
    for (int64_t i = 0; i < count; ++i) {
        const float m = mask[size_t(i)];
        QVERIFY2(m == 0.0f || m == scale, qPrintable(QString::number(m)));
        QCOMPARE(y[size_t(i)], x[size_t(i)] * m);
        kept += m != 0.0f;
    }
    // The kept fraction's standard deviation is sqrt(p (1 - p) / count) <= 0.0016.
    const double fraction = double(kept) / double(count);
    QVERIFY2(std::abs(fraction - (1.0 - p)) < 0.01, qPrintable(QString::number(fraction)));
}

void TestReferenceKernels::dropoutIsDeterministic()
{
    const int64_t count = 1000;
    const Vec x = fbtest::uniformVector(size_t(count), 110);
    const size_t size = static_cast<size_t>(count);
    Vec y1(size), m1(size), y2(size), m2(size);
    m_backend.dropoutForward(x.data(), y1.data(), m1.data(), count, 0.5f, 42, 5);
    m_backend.dropoutForward(x.data(), y2.data(), m2.data(), count, 0.5f, 42, 5);
    QCOMPARE(m1, m2);
    QCOMPARE(y1, y2);
    // Another step seed, or another layer's salt, gives another mask.
    m_backend.dropoutForward(x.data(), y2.data(), m2.data(), count, 0.5f, 43, 5);
    QVERIFY(m1 != m2);
    m_backend.dropoutForward(x.data(), y2.data(), m2.data(), count, 0.5f, 42, 6);
    QVERIFY(m1 != m2);
    // The mask of element i depends on mix64(stepSeed ^ salt) + i only, so a run can be split
    // anywhere (threads, devices) and every device computes the same bits.
    const uint64_t seed = fb::mix64(uint64_t(42) ^ uint64_t(5));
    for (int64_t i = 0; i < count; ++i) {
        const float u = float(fb::mix64(seed + uint64_t(i)) >> 40) * (1.0f / 16777216.0f);
        QCOMPARE(m1[size_t(i)], u >= 0.5f ? 2.0f : 0.0f);
    }
}

void TestReferenceKernels::dropoutZeroIsIdentity()
{
    const int64_t count = 5000;
    const Vec x = fbtest::uniformVector(size_t(count), 120);
    Vec y(size_t(count), kStale), mask(size_t(count), kStale);
    m_backend.dropoutForward(x.data(), y.data(), mask.data(), count, 0.0f, 7, 0);
    QCOMPARE(y, x);
    QCOMPARE(mask, Vec(size_t(count), 1.0f));
}

void TestReferenceKernels::dropoutGradient()
{
    const int64_t count = 200;
    const size_t size = static_cast<size_t>(count);
    Vec x = fbtest::uniformVector(size, 130);
    const Vec r = fbtest::uniformVector(size, 131);
    Vec y(size), mask(size), dx(size, kStale);
    m_backend.dropoutForward(x.data(), y.data(), mask.data(), count, 0.3f, 9, 0);
    m_backend.dropoutBackward(r.data(), mask.data(), dx.data(), count);
    const auto numeric = fbtest::numericalGradient(
        [&](const Vec &v) {
            Vec maskAgain(size);
            m_backend.dropoutForward(v.data(), y.data(), maskAgain.data(), count, 0.3f, 9, 0);
            return fbtest::dot(y, r);
        },
        x, 0.05);
    VERIFY_CLOSE(dx, numeric, 1e-4, 1e-3);
}

// ---- Optimizers ----
// Two steps on w = [1, -2] with lr 0.1, gradients g1 = [0.5, 0.25] then g2 = [-0.1, 1].

void TestReferenceKernels::sgdSteps_data()
{
    QTest::addColumn<float>("momentum");
    QTest::addColumn<float>("dampening");
    QTest::addColumn<float>("weightDecay");
    QTest::addColumn<bool>("nesterov");
    QTest::addColumn<Expected>("after1");
    QTest::addColumn<Expected>("after2");

    // w -= 0.1 g: [1 - 0.05, -2 - 0.025]; then [0.95 + 0.01, -2.025 - 0.1].
    QTest::newRow("plain") << 0.0f << 0.0f << 0.0f << false << Expected{0.95, -2.025}
                           << Expected{0.96, -2.125};
    // g' = g + 0.1 w: [0.6, 0.05] -> [0.94, -2.005];
    // then [-0.1 + 0.094, 1 - 0.2005] = [-0.006, 0.7995] -> [0.9406, -2.08495].
    QTest::newRow("weight decay") << 0.0f << 0.0f << 0.1f << false << Expected{0.94, -2.005}
                                  << Expected{0.9406, -2.08495};
    // buf = g1 on the first step -> same as plain; then buf = 0.9 g1 + g2 = [0.35, 1.225]
    // -> [0.95 - 0.035, -2.025 - 0.1225].
    QTest::newRow("momentum") << 0.9f << 0.0f << 0.0f << false << Expected{0.95, -2.025}
                              << Expected{0.915, -2.1475};
    // No dampening on the first step; then buf = 0.9 g1 + 0.5 g2 = [0.4, 0.725].
    QTest::newRow("momentum dampening")
        << 0.9f << 0.5f << 0.0f << false << Expected{0.95, -2.025} << Expected{0.91, -2.0975};
    // Step 1: buf = g1, step = g1 + 0.9 buf = [0.95, 0.475] -> [0.905, -2.0475].
    // Step 2: buf = [0.35, 1.225], step = g2 + 0.9 buf = [0.215, 2.1025] -> [0.8835, -2.25775].
    QTest::newRow("nesterov") << 0.9f << 0.0f << 0.0f << true << Expected{0.905, -2.0475}
                              << Expected{0.8835, -2.25775};
    // Step 1: g' = buf = [0.6, 0.05] -> [0.94, -2.005]. Step 2: g' = [-0.006, 0.7995],
    // buf = 0.9 [0.6, 0.05] + g' = [0.534, 0.8445] -> [0.8866, -2.08945].
    QTest::newRow("momentum weight decay")
        << 0.9f << 0.0f << 0.1f << false << Expected{0.94, -2.005} << Expected{0.8866, -2.08945};
}

void TestReferenceKernels::sgdSteps()
{
    QFETCH(float, momentum);
    QFETCH(float, dampening);
    QFETCH(float, weightDecay);
    QFETCH(bool, nesterov);
    QFETCH(Expected, after1);
    QFETCH(Expected, after2);
    const fb::SgdParams p{.lr = 0.1f,
                          .momentum = momentum,
                          .dampening = dampening,
                          .weightDecay = weightDecay,
                          .nesterov = nesterov};
    Vec w{1, -2}, buf{kStale, kStale}; // the first step must not read buf
    const Vec g1{0.5f, 0.25f}, g2{-0.1f, 1.0f};
    float *bufPtr = momentum != 0.0f ? buf.data() : nullptr;
    m_backend.sgdStep(w.data(), g1.data(), bufPtr, 2, p, 1);
    VERIFY_CLOSE(w, after1, 1e-6, 1e-6);
    m_backend.sgdStep(w.data(), g2.data(), bufPtr, 2, p, 2);
    VERIFY_CLOSE(w, after2, 1e-6, 1e-6);
}

void TestReferenceKernels::adamSteps_data()
{
    QTest::addColumn<float>("weightDecay");
    QTest::addColumn<bool>("decoupled");
    QTest::addColumn<Expected>("after1");
    QTest::addColumn<Expected>("after2");

    // Step 1: m = 0.1 g, v = 0.001 g^2, so mhat = g and vhat = g^2: each weight moves by
    // lr * g / (|g| + 1e-8) = 0.1 against the sign of its gradient -> [0.9, -2.1].
    // Step 2: m = 0.9 [0.05, 0.025] + 0.1 [-0.1, 1] = [0.035, 0.1225],
    // v = 0.999 [0.00025, 0.0000625] + 0.001 [0.01, 1] = [0.00025975, 0.0010624375];
    // bias corrections 1 - 0.9^2 = 0.19 and 1 - 0.999^2 = 0.001999:
    // mhat = [0.184210526, 0.644736842], sqrt(vhat) = [0.360471871, 0.729029829],
    // update = 0.1 mhat / (sqrt(vhat) + 1e-8) = [0.051102606, 0.088437648]
    // -> [0.900000002 - 0.051102606, -2.099999996 - 0.088437648] = [0.848897396, -2.188437644]
    // (eps shortens step 1 by 2e-9 and 4e-9).
    QTest::newRow("adam") << 0.0f << false << Expected{0.9, -2.1}
                          << Expected{0.848897396, -2.188437644};
    // L2: g1' = g1 + 0.1 w = [0.6, 0.05] (same signs, so step 1 again moves 0.1 each);
    // g2' = [-0.1 + 0.09, 1 - 0.21] = [-0.01, 0.79]; m = [0.053, 0.0835],
    // v = [0.00035974, 0.0006265975]; mhat = [0.278947368, 0.439473684],
    // sqrt(vhat) = [0.424216902, 0.559870947]; update = [0.065755834, 0.078495532]
    // -> [0.834244168, -2.178495512].
    QTest::newRow("adam l2") << 0.1f << false << Expected{0.9, -2.1}
                             << Expected{0.834244168, -2.178495512};
    // AdamW: w *= 1 - 0.1 * 0.1 = 0.99 before each update; the moments are plain Adam's.
    // Step 1: [0.99, -1.98] - [0.1, -0.1] = [0.89, -2.08].
    // Step 2: 0.99 w, minus plain Adam's step-2 update:
    // [0.881100002 - 0.051102606, -2.059199996 - 0.088437648] = [0.829997396, -2.147637644].
    QTest::newRow("adamw") << 0.1f << true << Expected{0.89, -2.08}
                           << Expected{0.829997396, -2.147637644};
}

void TestReferenceKernels::adamSteps()
{
    QFETCH(float, weightDecay);
    QFETCH(bool, decoupled);
    QFETCH(Expected, after1);
    QFETCH(Expected, after2);
    const fb::AdamParams p{.lr = 0.1f, .weightDecay = weightDecay, .decoupled = decoupled};
    Vec w{1, -2}, m{0, 0}, v{0, 0};
    const Vec g1{0.5f, 0.25f}, g2{-0.1f, 1.0f};
    m_backend.adamStep(w.data(), g1.data(), m.data(), v.data(), 2, p, 1);
    VERIFY_CLOSE(w, after1, 1e-6, 1e-6);
    m_backend.adamStep(w.data(), g2.data(), m.data(), v.data(), 2, p, 2);
    VERIFY_CLOSE(w, after2, 1e-6, 1e-6);
    if (weightDecay == 0.0f) {
        // 0.999f is 0.99900001287, so 1 - beta2 is 1.3e-5 below 0.001 in relative terms.
        VERIFY_CLOSE(m, (Expected{0.035, 0.1225}), 1e-8, 1e-6);
        VERIFY_CLOSE(v, (Expected{0.00025975, 0.0010624375}), 1e-10, 3e-5);
    }
}

QTEST_GUILESS_MAIN(TestReferenceKernels)
#include "test_reference_kernels.moc"
