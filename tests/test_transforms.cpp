// The data-chain transforms on small synthetic images: Normalize against its formula, the OpenCV
// augmentations (flip, affine, crop) against hand-derived geometry, on every channel plane, and
// the contract DataFlow relies on: the same seeds give the same output whatever the batch.

#include "core/base/rng.h"
#include "core/data/transforms.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <set>
#include <tuple>
#include <vector>

using namespace fb;
using namespace fb::data;

namespace {

using Image = std::vector<float>; // n samples of [c, h, w], planar

// n samples of shape s with value f(sample, channel, y, x).
Image makeImage(int64_t n, const Shape &s,
                const std::function<float(int64_t, int64_t, int64_t, int64_t)> &f)
{
    Image img(size_t(n * s.numel()));
    size_t k = 0;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < s[0]; ++c)
            for (int64_t y = 0; y < s[1]; ++y)
                for (int64_t x = 0; x < s[2]; ++x)
                    img[k++] = f(i, c, y, x);
    return img;
}

// Distinct values in (0, 1) for every pixel of every sample.
Image distinctImage(int64_t n, const Shape &s)
{
    return makeImage(n, s, [&](int64_t i, int64_t c, int64_t y, int64_t x) {
        return float(((i * s[0] + c) * s[1] + y) * s[2] + x + 1) / 4096.0f;
    });
}

float at(const Image &img, const Shape &s, int64_t i, int64_t c, int64_t y, int64_t x)
{
    return img[size_t(((i * s[0] + c) * s[1] + y) * s[2] + x)];
}

std::vector<uint64_t> seedsFrom(uint64_t first, int64_t n)
{
    std::vector<uint64_t> seeds;
    for (int64_t i = 0; i < n; ++i)
        seeds.push_back(mix64(first + uint64_t(i)));
    return seeds;
}

// The transform's output for n samples (out of place; also in place when the transform allows it,
// which must give the same values). Unwritten outputs would show as NaN.
Image run(const Transform &t, const Image &in, int64_t n, const Shape &s,
          const std::vector<uint64_t> &seeds)
{
    const Shape os = t.outputShape(s).value();
    Image out(size_t(n * os.numel()), std::numeric_limits<float>::quiet_NaN());
    t.apply(in.data(), out.data(), n, s, seeds.data());
    if (t.inPlace()) {
        Image inPlace = in;
        t.apply(inPlace.data(), inPlace.data(), n, s, seeds.data());
        if (std::memcmp(inPlace.data(), out.data(), out.size() * sizeof(float)) != 0)
            QTest::qFail("in place and out of place differ", __FILE__, __LINE__);
    }
    return out;
}

bool bitEqual(const Image &a, const Image &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Sample i of a batch.
Image sampleOf(const Image &img, const Shape &s, int64_t i)
{
    return Image(img.begin() + i * s.numel(), img.begin() + (i + 1) * s.numel());
}

// Applying to a batch equals applying to each sample alone with its seed: the draws are per
// sample, not per batch or per call.
bool batchIndependent(const Transform &t, const Image &in, int64_t n, const Shape &s,
                      const std::vector<uint64_t> &seeds)
{
    const Shape os = t.outputShape(s).value();
    const Image batch = run(t, in, n, s, seeds);
    for (int64_t i = 0; i < n; ++i) {
        const Image one = run(t, sampleOf(in, s, i), 1, s, {seeds[size_t(i)]});
        if (!bitEqual(one, sampleOf(batch, os, i))) return false;
    }
    return true;
}

// Seeds whose first Rng::uniform() is exactly 0 and exactly 0.75 (found by search, checked in
// the tests): with degrees d the angle is then -d and -d + 1.5 d.
constexpr uint64_t kSeedUniform0 = 15115159;
constexpr uint64_t kSeedUniform075 = 39813353;

} // namespace

class TestTransforms : public QObject {
    Q_OBJECT

private slots:
    void properties()
    {
        const Normalize norm(0.5f, 0.25f);
        const RandomHorizontalFlip flip(0.5f);
        const RandomAffine affine(10, 0.1f, 0.9f, 1.1f, 0);
        const RandomCrop crop(3, 4, 1, 0);
        QVERIFY(!norm.random() && flip.random() && affine.random() && crop.random());
        QVERIFY(norm.inPlace() && flip.inPlace() && !affine.inPlace() && !crop.inPlace());
        const Shape s{3, 5, 6};
        QCOMPARE(norm.outputShape(s).value(), s);
        QCOMPARE(flip.outputShape(s).value(), s);
        QCOMPARE(affine.outputShape(s).value(), s);
        QCOMPARE(crop.outputShape(s).value(), (Shape{3, 3, 4}));
        QCOMPARE(norm.mean(), 0.5f);
        QCOMPARE(norm.stddev(), 0.25f);
    }

    void normalizeIsTheFormula()
    {
        const Shape s{2, 3, 5};
        const int64_t n = 3;
        const Image in = makeImage(n, s, [](int64_t i, int64_t c, int64_t y, int64_t x) {
            return float(i * 31 + c * 7 + y * 3 + x) * 0.137f - 2.0f;
        });
        for (const auto &[mean, stddev] : {std::pair{0.2860f, 0.3530f}, std::pair{-1.5f, 3.0f},
                                           std::pair{0.0f, 1.0f}, std::pair{0.5f, -0.1f}}) {
            const Normalize norm(mean, stddev);
            const Image out = run(norm, in, n, s, seedsFrom(0, n));
            for (size_t k = 0; k < in.size(); ++k) {
                // A true division, bit for bit.
                const float expected = (in[k] - mean) / stddev;
                QVERIFY2(out[k] == expected,
                         qPrintable(QString("%1: %2 vs %3").arg(k).arg(out[k]).arg(expected)));
            }
        }
        // Only n samples are touched.
        const Normalize norm(1.0f, 2.0f);
        Image buf = in;
        norm.apply(buf.data(), buf.data(), 1, s, nullptr);
        QCOMPARE(buf[size_t(s.numel())], in[size_t(s.numel())]);
        QCOMPARE(buf[0], (in[0] - 1.0f) / 2.0f);
    }

    void flipAlwaysMirrorsExactly_data()
    {
        QTest::addColumn<int>("width");
        for (int w : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64, 65})
            QTest::newRow(qPrintable(QString("width %1").arg(w))) << w;
    }
    void flipAlwaysMirrorsExactly()
    {
        QFETCH(int, width);
        const Shape s{3, 4, width};
        const int64_t n = 5;
        const Image in = distinctImage(n, s);
        const Image out = run(RandomHorizontalFlip(1.0f), in, n, s, seedsFrom(7, n));
        for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < 3; ++c)
                for (int64_t y = 0; y < 4; ++y)
                    for (int64_t x = 0; x < width; ++x)
                        QCOMPARE(at(out, s, i, c, y, x), at(in, s, i, c, y, width - 1 - x));
    }

    void flipNeverIsIdentity()
    {
        const Shape s{3, 4, 9};
        const int64_t n = 20;
        const Image in = distinctImage(n, s);
        QVERIFY(bitEqual(run(RandomHorizontalFlip(0.0f), in, n, s, seedsFrom(3, n)), in));
    }

    void flipHalfFlipsAboutHalf()
    {
        const Shape s{3, 2, 5};
        const int64_t n = 4000;
        const Image in = distinctImage(n, s);
        for (const float p : {0.5f, 0.25f}) {
            const Image out = run(RandomHorizontalFlip(p), in, n, s, seedsFrom(11, n));
            int flipped = 0;
            for (int64_t i = 0; i < n; ++i) {
                bool same = true, mirrored = true;
                for (int64_t c = 0; c < 3; ++c) // every plane of a sample alike
                    for (int64_t y = 0; y < 2; ++y)
                        for (int64_t x = 0; x < 5; ++x) {
                            same &= at(out, s, i, c, y, x) == at(in, s, i, c, y, x);
                            mirrored &= at(out, s, i, c, y, x) == at(in, s, i, c, y, 4 - x);
                        }
                QVERIFY2(same != mirrored, qPrintable(QString("sample %1").arg(i)));
                flipped += mirrored;
            }
            // Binomial(4000, p): 6 standard deviations at most 165.
            const double expected = p * double(n);
            QVERIFY2(std::abs(flipped - expected) < 170,
                     qPrintable(QString("p %1: %2 of %3 flipped").arg(p).arg(flipped).arg(n)));
        }
    }

    void affineWithoutMotionIsIdentity()
    {
        const Shape s{3, 5, 7};
        const int64_t n = 4;
        const Image in = distinctImage(n, s);
        const Image out = run(RandomAffine(0, 0, 1, 1, -5.0f), in, n, s, seedsFrom(5, n));
        QCOMPARE(out.size(), in.size());
        for (size_t k = 0; k < in.size(); ++k)
            QVERIFY2(std::abs(out[k] - in[k]) <= 1e-6f,
                     qPrintable(QString("%1: %2 vs %3").arg(k).arg(out[k]).arg(in[k])));
    }

    void affineRotatesByNinetyDegrees()
    {
        // OpenCV's getRotationMatrix2D: a positive angle turns the picture counter-clockwise as
        // displayed (y down) about ((w - 1) / 2, (h - 1) / 2); a source pixel (x, y) lands at
        //   x' =  cos a (x - cx) + sin a (y - cy) + cx,   y' = -sin a (x - cx) + cos a (y - cy) +
        //   cy.
        // With the seeds below RandomAffine(180, ...) draws +90 and RandomAffine(90, ...) -90.
        QCOMPARE(Rng(kSeedUniform075).uniform(), 0.75f);
        QCOMPARE(Rng(kSeedUniform0).uniform(), 0.0f);
        const Shape s{3, 5, 5}; // centre (2, 2)
        const Image in = distinctImage(1, s);

        // +90: (x, y) -> (y, 4 - x), so dst(X, Y) = src(4 - Y, X); the top-right corner goes to
        // the top-left.
        const Image ccw = run(RandomAffine(180, 0, 1, 1, -5.0f), in, 1, s, {kSeedUniform075});
        QVERIFY(std::abs(at(ccw, s, 0, 0, 0, 0) - at(in, s, 0, 0, 0, 4)) <= 1e-6f);
        // -90: (x, y) -> (4 - y, x), so dst(X, Y) = src(Y, 4 - X); the top-left corner goes to
        // the top-right.
        const Image cw = run(RandomAffine(90, 0, 1, 1, -5.0f), in, 1, s, {kSeedUniform0});
        QVERIFY(std::abs(at(cw, s, 0, 0, 0, 4) - at(in, s, 0, 0, 0, 0)) <= 1e-6f);
        for (int64_t c = 0; c < 3; ++c)
            for (int64_t Y = 0; Y < 5; ++Y)
                for (int64_t X = 0; X < 5; ++X) {
                    QVERIFY2(std::abs(at(ccw, s, 0, c, Y, X) - at(in, s, 0, c, X, 4 - Y)) <= 1e-6f,
                             qPrintable(QString("ccw c %1 (%2, %3)").arg(c).arg(X).arg(Y)));
                    QVERIFY2(std::abs(at(cw, s, 0, c, Y, X) - at(in, s, 0, c, 4 - X, Y)) <= 1e-6f,
                             qPrintable(QString("cw c %1 (%2, %3)").arg(c).arg(X).arg(Y)));
                }

        // A 6 x 4 image (centre (2.5, 1.5)) turned by +90: (x, y) -> (y + 1, 4 - x). Columns 1..4
        // hold the turned picture, columns 0 and 5 are not covered and take the fill.
        const Shape wide{1, 4, 6};
        const Image w = distinctImage(1, wide);
        const Image turned = run(RandomAffine(180, 0, 1, 1, -5.0f), w, 1, wide, {kSeedUniform075});
        for (int64_t Y = 0; Y < 4; ++Y)
            for (int64_t X = 0; X < 6; ++X) {
                const float expected = X == 0 || X == 5 ? -5.0f : at(w, wide, 0, 0, X - 1, 4 - Y);
                QVERIFY2(std::abs(at(turned, wide, 0, 0, Y, X) - expected) <= 1e-6f,
                         qPrintable(QString("(%1, %2): %3 vs %4")
                                        .arg(X)
                                        .arg(Y)
                                        .arg(at(turned, wide, 0, 0, Y, X))
                                        .arg(expected)));
            }
    }

    void affineShrinkFillsTheCorners()
    {
        // Scale 0.5 about the centre (3.5, 3.5) of an 8 x 8 image: dst(X, Y) = src(2X - 3.5,
        // 2Y - 3.5). The corners come from outside the image, pixel (3, 3) from the middle of
        // source pixels 2..3.
        const Shape s{2, 8, 8};
        const Image in = distinctImage(1, s);
        const float fill = -5.0f;
        const Image out = run(RandomAffine(0, 0, 0.5f, 0.5f, fill), in, 1, s, {42});
        for (int64_t c = 0; c < 2; ++c) {
            for (const auto &[x, y] : {std::pair{0, 0}, std::pair{7, 0}, std::pair{0, 7},
                                       std::pair{7, 7}, std::pair{1, 1}, std::pair{6, 6}})
                QCOMPARE(at(out, s, 0, c, y, x), fill);
            const float mid = (at(in, s, 0, c, 2, 2) + at(in, s, 0, c, 2, 3) +
                               at(in, s, 0, c, 3, 2) + at(in, s, 0, c, 3, 3)) /
                              4.0f;
            QVERIFY2(std::abs(at(out, s, 0, c, 3, 3) - mid) <= 1e-5f,
                     qPrintable(QString("%1 vs %2").arg(at(out, s, 0, c, 3, 3)).arg(mid)));
            QVERIFY(at(out, s, 0, c, 4, 4) > 0); // from the picture, not the fill
        }
    }

    void affineFollowsItsDraws()
    {
        // On a linear picture v = x + 2y + 10c bilinear sampling is exact, so every output pixel
        // inside the source tells where it came from: compare with the matrix built from the
        // transform's draws (angle, scale, tx, ty in that order from the sample's Rng).
        const float degrees = 30, translate = 0.2f, scaleMin = 0.8f, scaleMax = 1.2f, fill = -7;
        const RandomAffine affine(degrees, translate, scaleMin, scaleMax, fill);
        const Shape s{3, 9, 11};
        const int64_t n = 16;
        const Image in = makeImage(n, s, [](int64_t, int64_t c, int64_t y, int64_t x) {
            return float(x + 2 * y + 10 * c);
        });
        const std::vector<uint64_t> seeds = seedsFrom(100, n);
        const Image out = run(affine, in, n, s, seeds);
        const double cx = (11 - 1) / 2.0, cy = (9 - 1) / 2.0;
        int inside = 0, outside = 0;
        std::set<int> angles;
        for (int64_t i = 0; i < n; ++i) {
            Rng rng(seeds[size_t(i)]);
            const float angle = rng.uniform(-degrees, degrees);
            const float scale = rng.uniform(scaleMin, scaleMax);
            const float tx = rng.uniform(-translate, translate) * 11.0f;
            const float ty = rng.uniform(-translate, translate) * 9.0f;
            angles.insert(int(std::floor(angle / 10)));
            const double a = double(angle) * std::numbers::pi / 180.0;
            const double al = std::cos(a) * scale, be = std::sin(a) * scale;
            // Forward: x' = al x + be y + t0, y' = -be x + al y + t1.
            const double t0 = (1 - al) * cx - be * cy + tx, t1 = be * cx + (1 - al) * cy + ty;
            const double det = al * al + be * be;
            for (int64_t Y = 0; Y < 9; ++Y)
                for (int64_t X = 0; X < 11; ++X) {
                    const double u = double(X) - t0, v = double(Y) - t1;
                    const double xs = (al * u - be * v) / det, ys = (be * u + al * v) / det;
                    for (int64_t c = 0; c < 3; ++c) {
                        const float got = at(out, s, i, c, Y, X);
                        if (xs > 0.05 && xs < 9.95 && ys > 0.05 && ys < 7.95) {
                            // Coordinates are quantized to 1/32 pixel.
                            const double expected = xs + 2 * ys + 10 * double(c);
                            QVERIFY2(std::abs(got - expected) < 0.1,
                                     qPrintable(QString("sample %1 (%2, %3): %4 vs %5")
                                                    .arg(i)
                                                    .arg(X)
                                                    .arg(Y)
                                                    .arg(got)
                                                    .arg(expected)));
                            ++inside;
                        } else if (xs < -1.05 || xs > 11.05 || ys < -1.05 || ys > 9.05) {
                            // Both neighbours outside in x or in y.
                            QCOMPARE(got, fill);
                            ++outside;
                        }
                    }
                }
        }
        QVERIFY(inside > 1000);
        QVERIFY(outside > 50);
        QVERIFY(angles.size() >= 4); // the angles spread over [-30, 30]
    }

    void cropWithoutPaddingOrResizeIsIdentity()
    {
        const Shape s{3, 5, 6};
        const int64_t n = 6;
        const Image in = distinctImage(n, s);
        QVERIFY(bitEqual(run(RandomCrop(0, 0, 0, -1.0f), in, n, s, seedsFrom(1, n)), in));
        QVERIFY(bitEqual(run(RandomCrop(5, 6, 0, -1.0f), in, n, s, seedsFrom(2, n)), in));
    }

    void cropIsAShiftedWindowOfThePaddedImage_data()
    {
        QTest::addColumn<int>("height");
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("padding");
        QTest::newRow("same size, padding 2") << 0 << 0 << 2;
        QTest::newRow("smaller, padding 1") << 3 << 4 << 1;
        QTest::newRow("larger than the image, padding 2") << 7 << 9 << 2;
        QTest::newRow("smaller, no padding") << 2 << 3 << 0;
    }
    void cropIsAShiftedWindowOfThePaddedImage()
    {
        QFETCH(int, height);
        QFETCH(int, width);
        QFETCH(int, padding);
        const Shape s{3, 5, 6};
        const int64_t n = 400;
        const float fill = -1.0f;
        const RandomCrop crop(height, width, padding, fill);
        const Shape os = crop.outputShape(s).value();
        QCOMPARE(os, (Shape{3, height ? height : 5, width ? width : 6}));
        const Image in = distinctImage(n, s);
        const Image out = run(crop, in, n, s, seedsFrom(9, n));
        QCOMPARE(int64_t(out.size()), n * os.numel());
        // The window's top-left corner in the padded image: 0 .. 5 + 2p - oh by 0 .. 6 + 2p - ow.
        const int64_t ry = 5 + 2 * padding - os[1], rx = 6 + 2 * padding - os[2];
        std::set<std::pair<int64_t, int64_t>> seen;
        for (int64_t i = 0; i < n; ++i) {
            int matches = 0;
            for (int64_t y0 = 0; y0 <= ry; ++y0)
                for (int64_t x0 = 0; x0 <= rx; ++x0) {
                    bool ok = true;
                    for (int64_t c = 0; c < 3 && ok; ++c) // the same window on every plane
                        for (int64_t y = 0; y < os[1] && ok; ++y)
                            for (int64_t x = 0; x < os[2] && ok; ++x) {
                                const int64_t sy = y0 + y - padding, sx = x0 + x - padding;
                                const bool inside = sy >= 0 && sy < 5 && sx >= 0 && sx < 6;
                                const float expected = inside ? at(in, s, i, c, sy, sx) : fill;
                                ok = at(out, os, i, c, y, x) == expected;
                            }
                    if (ok) {
                        ++matches;
                        seen.insert({y0, x0});
                    }
                }
            QVERIFY2(matches == 1,
                     qPrintable(QString("sample %1: %2 windows").arg(i).arg(matches)));
        }
        // Every offset turns up.
        QCOMPARE(int64_t(seen.size()), (ry + 1) * (rx + 1));
    }

    void cropRefusesWhatDoesNotFit()
    {
        const Shape s{1, 5, 6};
        QVERIFY(RandomCrop(7, 8, 1, 0).outputShape(s).ok());
        // height, width, padding
        for (const auto &[h, w, p] : {std::tuple{8, 8, 1}, std::tuple{6, 6, 0}, std::tuple{0, 7, 0},
                                      std::tuple{5, 11, 2}}) {
            const Result<Shape> r = RandomCrop(h, w, p, 0).outputShape(s);
            QVERIFY(!r.ok());
            QVERIFY2(r.error().message.find("does not fit") != std::string::npos,
                     r.error().message.c_str());
        }
    }

    void centreCropIsTheMiddleWindow()
    {
        const Shape s{2, 5, 6};
        const Image img = distinctImage(3, s);
        CenterCrop crop(3, 4);
        QCOMPARE(crop.outputShape(s).value(), (Shape{2, 3, 4}));
        Image out(size_t(3 * 2 * 3 * 4));
        crop.apply(img.data(), out.data(), 3, s, nullptr);
        const Shape os{2, 3, 4};
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t c = 0; c < 2; ++c)
                for (int64_t y = 0; y < 3; ++y)
                    for (int64_t x = 0; x < 4; ++x)
                        QCOMPARE(at(out, os, i, c, y, x), at(img, s, i, c, y + 1, x + 1));
        QVERIFY(!CenterCrop(6, 4).outputShape(s).ok());
        QCOMPARE(CenterCrop(0, 0).outputShape(s).value(), s);
    }

    void greyscaleWeighsRgbAsOpenCv()
    {
        const Shape s{3, 1, 4};
        // red, green, blue, white
        const Image rgb{1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1};
        Grayscale grey;
        QCOMPARE(grey.outputShape(s).value(), (Shape{1, 1, 4}));
        Image out(4);
        grey.apply(rgb.data(), out.data(), 1, s, nullptr);
        QCOMPARE(out[0], 0.299f);
        QCOMPARE(out[1], 0.587f);
        QCOMPARE(out[2], 0.114f);
        QVERIFY(std::abs(out[3] - 1.0f) < 1e-6f);
        QVERIFY(!grey.outputShape(Shape{1, 4, 4}).ok());
    }

    // Brightness scales the mean grey level by b, contrast then scales the spread about it by c,
    // so mean(y) = b mean(x) and std(y) = b c std(x) while nothing clamps.
    void jitterScalesBrightnessAndContrast()
    {
        const Shape s{1, 8, 8};
        const int64_t n = 40;
        const Image img = makeImage(n, s, [](int64_t i, int64_t, int64_t y, int64_t x) {
            return 0.3f + 0.2f * float((y * 8 + x + i) % 64) / 64.0f;
        });
        ColorJitter jitter(0.2f, 0.5f);
        Image out(img.size());
        const auto seeds = seedsFrom(7, n);
        jitter.apply(img.data(), out.data(), n, s, seeds.data());
        std::set<int> brightness;
        for (int64_t i = 0; i < n; ++i) {
            double mx = 0, my = 0, vx = 0, vy = 0;
            for (int64_t k = 0; k < 64; ++k) {
                mx += img[size_t(i * 64 + k)];
                my += out[size_t(i * 64 + k)];
            }
            mx /= 64;
            my /= 64;
            for (int64_t k = 0; k < 64; ++k) {
                vx += std::pow(img[size_t(i * 64 + k)] - mx, 2);
                vy += std::pow(out[size_t(i * 64 + k)] - my, 2);
            }
            const double b = my / mx, bc = std::sqrt(vy / vx);
            QVERIFY2(b >= 0.8 - 1e-5 && b <= 1.2 + 1e-5, qPrintable(QString::number(b)));
            const double c = bc / b;
            QVERIFY2(c >= 0.5 - 1e-4 && c <= 1.5 + 1e-4, qPrintable(QString::number(c)));
            brightness.insert(int(b * 100));
        }
        QVERIFY(brightness.size() > 10); // drawn per sample
        // Clamped to [0, 1].
        ColorJitter strong(1.0f, 1.0f);
        const Image bright(64, 0.9f);
        Image clipped(64);
        for (uint64_t seed = 0; seed < 20; ++seed) {
            strong.apply(bright.data(), clipped.data(), 1, s, &seed);
            for (float v : clipped)
                QVERIFY(v >= 0.0f && v <= 1.0f);
        }
    }

    void channelNormalizeUsesEachChannelsValues()
    {
        const Shape s{3, 1, 2};
        const Image img{0.5f, 1.0f, 0.5f, 1.0f, 0.5f, 1.0f};
        ChannelNormalize norm({0.5f, 0.0f, 1.0f}, {0.5f, 2.0f, 0.25f});
        QVERIFY(norm.outputShape(s).ok());
        Image out(6);
        norm.apply(img.data(), out.data(), 1, s, nullptr);
        QCOMPARE(out, (Image{0.0f, 1.0f, 0.25f, 0.5f, -2.0f, 0.0f}));
        QVERIFY(!ChannelNormalize({0.1f, 0.2f}, {1.0f}).outputShape(s).ok());
        QVERIFY(ChannelNormalize({0.1f}, {1.0f}).outputShape(s).ok());
        QCOMPARE(parseNumberList(" 0.485, 0.456,0.406").value(),
                 (std::vector<float>{0.485f, 0.456f, 0.406f}));
        QVERIFY(!parseNumberList("0.5,,0.4").ok());
        QVERIFY(!parseNumberList("0.5 red").ok());
    }

    void planesAreTransformedAlike()
    {
        // Three identical planes stay identical, bit for bit, through every augmentation.
        const Shape s{3, 6, 7};
        const int64_t n = 8;
        const Image in = makeImage(n, s, [](int64_t i, int64_t, int64_t y, int64_t x) {
            return float((i * 13 + y * 7 + x * 3) % 17) / 16.0f;
        });
        const RandomHorizontalFlip flip(0.5f);
        const RandomAffine affine(25, 0.15f, 0.7f, 1.3f, -2.0f);
        const RandomCrop crop(4, 5, 2, -3.0f);
        for (const Transform *t : std::initializer_list<const Transform *>{&flip, &affine, &crop}) {
            const Shape os = t->outputShape(s).value();
            const Image out = run(*t, in, n, s, seedsFrom(21, n));
            const int64_t plane = os[1] * os[2];
            for (int64_t i = 0; i < n; ++i)
                for (int64_t c = 1; c < 3; ++c)
                    QVERIFY(std::memcmp(out.data() + i * os.numel() + c * plane,
                                        out.data() + i * os.numel(),
                                        size_t(plane) * sizeof(float)) == 0);
        }
    }

    void seedsDecide()
    {
        const Shape s{2, 6, 7};
        const int64_t n = 12;
        const Image in = distinctImage(n, s);
        const RandomHorizontalFlip flip(0.5f);
        const RandomAffine affine(25, 0.15f, 0.7f, 1.3f, -2.0f);
        const RandomCrop crop(4, 5, 2, -3.0f);
        for (const Transform *t : std::initializer_list<const Transform *>{&flip, &affine, &crop}) {
            const Shape os = t->outputShape(s).value();
            const std::vector<uint64_t> seeds = seedsFrom(1, n), other = seedsFrom(1000, n);
            const Image a = run(*t, in, n, s, seeds);
            // The same seeds: the same output.
            QVERIFY(bitEqual(a, run(*t, in, n, s, seeds)));
            // Other seeds: other outputs for most samples.
            const Image b = run(*t, in, n, s, other);
            int differ = 0;
            for (int64_t i = 0; i < n; ++i)
                differ += !bitEqual(sampleOf(a, os, i), sampleOf(b, os, i));
            QVERIFY2(differ >= 3, qPrintable(QString::number(differ)));
            // A sample's output depends on its own seed only, not on its batch.
            QVERIFY(batchIndependent(*t, in, n, s, seeds));
        }
    }
};

QTEST_GUILESS_MAIN(TestTransforms)
#include "test_transforms.moc"
