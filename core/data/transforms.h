#pragma once

#include "core/base/export_graph.h"
#include "core/base/number_list.h"
#include "core/base/result.h"
#include "core/tensor/shape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::data {

// Makes OpenCV run each call on the calling thread. The data flow already runs batches in
// parallel on its workers; OpenCV's own parallel_for_ (TBB in Debian's build) would otherwise
// split every small warp into stripes across all cores, on top of our workers and the trainer's
// OpenMP threads. Process-wide; called by DataFlow.
void useCallingThreadForOpenCv();
// The OpenCV version the transforms run on.
std::string openCvVersion();

// One step of a data chain, applied to a batch of samples by a data-flow worker. Samples are
// float32, planar per sample ([c, h, w] contiguous). Implementations must be thread-safe for
// concurrent const calls: several workers may run the same stage on different batches.
class Transform {
public:
    virtual ~Transform() = default;
    // True when the output depends on random draws. A random stage runs every epoch; the chain
    // before the first random stage is computed once and cached (DataFlow).
    virtual bool random() const { return false; }
    // True when apply() may write its output over its input (same shape, element-wise).
    virtual bool inPlace() const { return true; }
    // The shape of one output sample for an input sample of shape `in` ([c, h, w]).
    virtual Result<Shape> outputShape(const Shape &in) const { return in; }
    // in: n samples of shape inShape; out: n samples of outputShape(inShape) (out == in when
    // inPlace()). seeds: one per sample, derived from (run seed, node, epoch, sample index), so
    // the result depends neither on the worker that runs it nor on the batch it falls in.
    virtual void apply(const float *in, float *out, int64_t n, const Shape &inShape,
                       const uint64_t *seeds) const = 0;
    // Writes the stage as ONNX operators reading `input` ([N, ...inShape]) into `output`: the
    // preprocessing an exported model carries (core/exec/onnx_export.h). Random stages never
    // reach an export (inference leaves them out); a stage with no ONNX form says why, and the
    // export refuses the model naming its node.
    virtual Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                            const Shape &inShape) const;
};

// y = (x - mean) / std. A true division, not a multiply by 1/std, so every backend and the
// inference path can reproduce the values bit for bit from the two parameters.
class Normalize : public Transform {
public:
    Normalize(float mean, float stddev);
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;
    float mean() const { return m_mean; }
    float stddev() const { return m_std; }

private:
    float m_mean, m_std;
};

// Mirrors each sample left to right with probability p (OpenCV cv::flip, per channel plane).
class RandomHorizontalFlip : public Transform {
public:
    explicit RandomHorizontalFlip(float p);
    bool random() const override { return true; }
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_p;
};

// Rotates by a uniform angle in [-degrees, degrees], scales by a uniform factor in
// [scaleMin, scaleMax] about the centre, and shifts by up to `translate` of the width and height
// (OpenCV cv::warpAffine, bilinear; uncovered pixels take `fill`).
class RandomAffine : public Transform {
public:
    RandomAffine(float degrees, float translate, float scaleMin, float scaleMax, float fill);
    bool random() const override { return true; }
    bool inPlace() const override { return false; }
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_degrees, m_translate, m_scaleMin, m_scaleMax, m_fill;
};

// Pads each side by `padding` pixels of `fill` (cv::copyMakeBorder) and cuts a window of
// height x width at a uniform random offset; 0 for a size keeps the input's.
class RandomCrop : public Transform {
public:
    RandomCrop(int64_t height, int64_t width, int64_t padding, float fill);
    bool random() const override { return true; }
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    int64_t m_height, m_width, m_padding;
    float m_fill;
};

// Cuts the centre height x width window of each sample (0 for a size keeps the input's).
class CenterCrop : public Transform {
public:
    CenterCrop(int64_t height, int64_t width);
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;

private:
    int64_t m_height, m_width;
};

// Brightness and contrast jitter (torchvision's ColorJitter order): each sample is multiplied by
// a brightness factor uniform in [1 - brightness, 1 + brightness], then blended with its mean
// grey level by a contrast factor uniform in [1 - contrast, 1 + contrast], and clamped to
// [0, 1] (pixels arrive in [0, 1]: put it before normalize).
class ColorJitter : public Transform {
public:
    ColorJitter(float brightness, float contrast);
    bool random() const override { return true; }
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_brightness, m_contrast;
};

// RGB to one grey channel with ITU-R BT.601 weights (0.299, 0.587, 0.114), as OpenCV's
// cvtColor(RGB2GRAY) computes it.
class Grayscale : public Transform {
public:
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;
};

// y = (x - mean[c]) / std[c] per channel (ImageNet's: 0.485,0.456,0.406 and 0.229,0.224,0.225);
// one value applies to every channel. A true division, as Normalize.
class ChannelNormalize : public Transform {
public:
    ChannelNormalize(std::vector<float> mean, std::vector<float> stddev);
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;

private:
    std::vector<float> m_mean, m_std;
};

using fb::parseNumberList; // core/base/number_list.h

} // namespace fb::data
