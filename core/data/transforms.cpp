#include "core/data/transforms.h"

#include "core/base/check.h"
#include "core/base/rng.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>

namespace fb::data {

namespace {

// A channel plane of one sample as an OpenCV matrix header over our buffer (no copy).
cv::Mat plane(const float *p, const Shape &s)
{
    return cv::Mat(int(s[1]), int(s[2]), CV_32FC1, const_cast<float *>(p));
}

} // namespace

void useCallingThreadForOpenCv()
{
    static std::once_flag once;
    std::call_once(once, [] { cv::setNumThreads(1); });
}

std::string openCvVersion()
{
    return CV_VERSION;
}

Normalize::Normalize(float mean, float stddev)
    : m_mean(mean)
    , m_std(stddev)
{
    FB_ASSERT(stddev != 0.0f && std::isfinite(stddev) && std::isfinite(mean),
              "Normalize needs a finite mean and a finite, non-zero std");
}

void Normalize::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                      const uint64_t *) const
{
    const int64_t total = n * inShape.numel();
    const float mean = m_mean, stddev = m_std;
    for (int64_t i = 0; i < total; ++i)
        out[i] = (in[i] - mean) / stddev;
}

RandomHorizontalFlip::RandomHorizontalFlip(float p)
    : m_p(p)
{
    FB_ASSERT(p >= 0.0f && p <= 1.0f, "flip probability must be in [0, 1]");
}

void RandomHorizontalFlip::apply(const float *in, float *out, int64_t n, const Shape &s,
                                 const uint64_t *seeds) const
{
    const int64_t planeSize = s[1] * s[2], sampleSize = s.numel();
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const bool flip = rng.uniform() < m_p;
        for (int64_t c = 0; c < s[0]; ++c) {
            const int64_t off = i * sampleSize + c * planeSize;
            cv::Mat dst = plane(out + off, s);
            if (flip)
                cv::flip(plane(in + off, s), dst, 1); // in == out is fine: flip swaps pairs
            else if (in != out)
                plane(in + off, s).copyTo(dst);
        }
    }
}

RandomAffine::RandomAffine(float degrees, float translate, float scaleMin, float scaleMax,
                           float fill)
    : m_degrees(degrees)
    , m_translate(translate)
    , m_scaleMin(scaleMin)
    , m_scaleMax(scaleMax)
    , m_fill(fill)
{
    FB_ASSERT(degrees >= 0 && translate >= 0 && translate < 1 && scaleMin > 0 &&
                  scaleMin <= scaleMax,
              "invalid random affine parameters");
}

void RandomAffine::apply(const float *in, float *out, int64_t n, const Shape &s,
                         const uint64_t *seeds) const
{
    const int64_t planeSize = s[1] * s[2], sampleSize = s.numel();
    const cv::Point2f centre(float(s[2] - 1) * 0.5f, float(s[1] - 1) * 0.5f);
    for (int64_t i = 0; i < n; ++i) {
        // The draws are made in a fixed order from the sample's own generator.
        Rng rng(seeds[i]);
        const float angle = rng.uniform(-m_degrees, m_degrees);
        const float scale = rng.uniform(m_scaleMin, m_scaleMax);
        const float tx = rng.uniform(-m_translate, m_translate) * float(s[2]);
        const float ty = rng.uniform(-m_translate, m_translate) * float(s[1]);
        cv::Mat m = cv::getRotationMatrix2D(centre, angle, scale);
        m.at<double>(0, 2) += tx;
        m.at<double>(1, 2) += ty;
        for (int64_t c = 0; c < s[0]; ++c) {
            const int64_t off = i * sampleSize + c * planeSize;
            cv::Mat dst = plane(out + off, s);
            cv::warpAffine(plane(in + off, s), dst, m, dst.size(), cv::INTER_LINEAR,
                           cv::BORDER_CONSTANT, cv::Scalar(m_fill));
        }
    }
}

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding, float fill)
    : m_height(height)
    , m_width(width)
    , m_padding(padding)
    , m_fill(fill)
{
    FB_ASSERT(height >= 0 && width >= 0 && padding >= 0, "invalid random crop parameters");
}

Result<Shape> RandomCrop::outputShape(const Shape &in) const
{
    const int64_t h = m_height ? m_height : in[1], w = m_width ? m_width : in[2];
    if (h > in[1] + 2 * m_padding || w > in[2] + 2 * m_padding)
        return makeError("a " + std::to_string(h) + "x" + std::to_string(w) +
                         " crop does not fit in a " + std::to_string(in[1]) + "x" +
                         std::to_string(in[2]) + " image padded by " + std::to_string(m_padding));
    return Shape{in[0], h, w};
}

void RandomCrop::apply(const float *in, float *out, int64_t n, const Shape &s,
                       const uint64_t *seeds) const
{
    const Shape os = outputShape(s).value();
    const int64_t inPlane = s[1] * s[2], outPlane = os[1] * os[2];
    const int p = int(m_padding);
    cv::Mat padded;
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const int y0 = int(rng.below(uint64_t(s[1] + 2 * p - os[1] + 1)));
        const int x0 = int(rng.below(uint64_t(s[2] + 2 * p - os[2] + 1)));
        for (int64_t c = 0; c < s[0]; ++c) {
            cv::copyMakeBorder(plane(in + (i * s[0] + c) * inPlane, s), padded, p, p, p, p,
                               cv::BORDER_CONSTANT, cv::Scalar(m_fill));
            cv::Mat dst = plane(out + (i * os[0] + c) * outPlane, os);
            padded(cv::Rect(x0, y0, int(os[2]), int(os[1]))).copyTo(dst);
        }
    }
}

CenterCrop::CenterCrop(int64_t height, int64_t width)
    : m_height(height)
    , m_width(width)
{}

Result<Shape> CenterCrop::outputShape(const Shape &in) const
{
    const int64_t h = m_height ? m_height : in[1], w = m_width ? m_width : in[2];
    if (h > in[1] || w > in[2])
        return makeError("a " + std::to_string(h) + "x" + std::to_string(w) +
                         " crop does not fit in a " + std::to_string(in[1]) + "x" +
                         std::to_string(in[2]) + " image");
    return Shape{in[0], h, w};
}

void CenterCrop::apply(const float *in, float *out, int64_t n, const Shape &s,
                       const uint64_t *) const
{
    const Shape os = outputShape(s).value();
    const int64_t y0 = (s[1] - os[1]) / 2, x0 = (s[2] - os[2]) / 2;
    for (int64_t i = 0; i < n * s[0]; ++i) {
        const float *src = in + i * s[1] * s[2];
        float *dst = out + i * os[1] * os[2];
        for (int64_t y = 0; y < os[1]; ++y)
            std::copy_n(src + (y0 + y) * s[2] + x0, os[2], dst + y * os[2]);
    }
}

ColorJitter::ColorJitter(float brightness, float contrast)
    : m_brightness(brightness)
    , m_contrast(contrast)
{}

void ColorJitter::apply(const float *in, float *out, int64_t n, const Shape &s,
                        const uint64_t *seeds) const
{
    const int64_t len = s.numel(), plane = s[1] * s[2];
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float b = rng.uniform(1.0f - m_brightness, 1.0f + m_brightness);
        const float c = rng.uniform(1.0f - m_contrast, 1.0f + m_contrast);
        const float *x = in + i * len;
        float *y = out + i * len;
        // The mean grey level after the brightness change (BT.601 weights for colour).
        double grey = 0;
        if (s[0] == 3) {
            for (int64_t k = 0; k < plane; ++k)
                grey += 0.299 * x[k] + 0.587 * x[plane + k] + 0.114 * x[2 * plane + k];
            grey /= double(plane);
        } else {
            for (int64_t k = 0; k < len; ++k)
                grey += x[k];
            grey /= double(len);
        }
        const float m = float(grey) * b;
        for (int64_t k = 0; k < len; ++k)
            y[k] = std::clamp((x[k] * b - m) * c + m, 0.0f, 1.0f);
    }
}

Result<Shape> Grayscale::outputShape(const Shape &in) const
{
    if (in[0] != 3) return makeError("expects RGB samples (3 channels), not " + in.str());
    return Shape{1, in[1], in[2]};
}

void Grayscale::apply(const float *in, float *out, int64_t n, const Shape &s,
                      const uint64_t *) const
{
    const int64_t plane = s[1] * s[2];
    for (int64_t i = 0; i < n; ++i) {
        const float *x = in + i * 3 * plane;
        float *y = out + i * plane;
        for (int64_t k = 0; k < plane; ++k)
            y[k] = 0.299f * x[k] + 0.587f * x[plane + k] + 0.114f * x[2 * plane + k];
    }
}

ChannelNormalize::ChannelNormalize(std::vector<float> mean, std::vector<float> stddev)
    : m_mean(std::move(mean))
    , m_std(std::move(stddev))
{}

Result<Shape> ChannelNormalize::outputShape(const Shape &in) const
{
    for (const auto *v : {&m_mean, &m_std})
        if (v->size() != 1 && int64_t(v->size()) != in[0])
            return makeError("has " + std::to_string(v->size()) + " values for " +
                             std::to_string(in[0]) + " channels (give one, or one per channel)");
    for (float s : m_std)
        if (!(s > 0)) return makeError("every std must be above 0");
    return in;
}

void ChannelNormalize::apply(const float *in, float *out, int64_t n, const Shape &s,
                             const uint64_t *) const
{
    const int64_t plane = s[1] * s[2];
    for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < s[0]; ++c) {
            const float m = m_mean.size() == 1 ? m_mean[0] : m_mean[size_t(c)];
            const float d = m_std.size() == 1 ? m_std[0] : m_std[size_t(c)];
            const float *x = in + (i * s[0] + c) * plane;
            float *y = out + (i * s[0] + c) * plane;
            for (int64_t k = 0; k < plane; ++k)
                y[k] = (x[k] - m) / d;
        }
}

// ---- ONNX forms (operator set 17) ----

Status Transform::exportTo(ExportGraph &, const std::string &, const std::string &,
                           const Shape &) const
{
    return makeError("this stage has no ONNX form yet");
}

Status Normalize::exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                           const Shape &) const
{
    // A true division, as apply() does.
    const std::string centred = g.name(output + ".centred");
    g.node("Sub", {input, g.constant(output + ".mean", {}, {m_mean})}, {centred});
    g.node("Div", {centred, g.constant(output + ".std", {}, {m_std})}, {output});
    return {};
}

Status ChannelNormalize::exportTo(ExportGraph &g, const std::string &input,
                                  const std::string &output, const Shape &s) const
{
    std::vector<float> mean, stddev;
    for (int64_t c = 0; c < s[0]; ++c) {
        mean.push_back(m_mean.size() == 1 ? m_mean[0] : m_mean[size_t(c)]);
        stddev.push_back(m_std.size() == 1 ? m_std[0] : m_std[size_t(c)]);
    }
    const std::string centred = g.name(output + ".centred");
    g.node("Sub", {input, g.constant(output + ".mean", {s[0], 1, 1}, mean)}, {centred});
    g.node("Div", {centred, g.constant(output + ".std", {s[0], 1, 1}, stddev)}, {output});
    return {};
}

Status CenterCrop::exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                            const Shape &s) const
{
    auto out = outputShape(s);
    if (!out.ok()) return out.error();
    const int64_t y0 = (s[1] - (*out)[1]) / 2, x0 = (s[2] - (*out)[2]) / 2;
    g.node("Slice",
           {input, g.constantInts(output + ".starts", {y0, x0}),
            g.constantInts(output + ".ends", {y0 + (*out)[1], x0 + (*out)[2]}),
            g.constantInts(output + ".axes", {2, 3})},
           {output});
    return {};
}

Status Grayscale::exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                           const Shape &) const
{
    // The weighted sum of the three channels as a 1x1 convolution (no bias).
    g.node("Conv", {input, g.constant(output + ".weights", {1, 3, 1, 1}, {0.299f, 0.587f, 0.114f})},
           {output}, {ExportAttribute::integers("kernel_shape", {1, 1})});
    return {};
}

} // namespace fb::data
