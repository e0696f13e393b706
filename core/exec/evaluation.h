#pragma once

#include "core/tensor/shape.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fb::exec {

struct DataSpec;

// At most this many misclassified samples are kept with their pictures in the evaluation itself:
// the first ones in test order, so the same model shows the same gallery on every run.
inline constexpr size_t kMaxMisclassified = 64;
// Every misclassified sample is listed (index, classes, probability); the pictures of all of
// them are kept up to this many bytes, for the run folder's misclassified-NODE.u8, from which the
// window loads the pictures of a cell on demand.
inline constexpr size_t kMaxMisclassifiedPictureBytes = size_t(256) << 20;

// A misclassified test sample without its picture.
struct MisclassifiedRef {
    int64_t index = 0;
    int32_t trueClass = 0, predicted = 0;
    float probability = 0;
};

// A test sample the model got wrong, with the image as the model's input shows it.
struct MisclassifiedSample {
    int64_t index = 0; // position in the evaluate node's data, from 0 (test order)
    int32_t trueClass = 0, predicted = 0;
    float probability = 0;       // the softmax of the model's outputs at `predicted`
    std::vector<uint8_t> pixels; // height x width x channels, row-major, channels interleaved
};

struct ClassMetrics {
    int64_t support = 0;   // samples of the class: its row's sum
    int64_t predicted = 0; // samples predicted as the class: its column's sum
    // -1 where undefined: nothing predicted as the class (precision), none of it (recall).
    double precision = -1, recall = -1;
};

// How a misclassified image's pixels were brought back to 0..255 from the model's input.
enum class PixelScale {
    UndoNormalize, // the chain's normalize stages undone, then x 255: the pixels as read
    MinMax,        // the chain does more than normalize: each image stretched to 0..255
};

// What an evaluation found beyond loss and accuracy: the views of the window need it.
struct EvaluationDetail {
    std::vector<std::string> classNames; // one per class, in label order
    std::vector<int64_t> confusion;      // classes x classes: row = true class, column = predicted
    int64_t channels = 0, height = 0, width = 0; // of every misclassified image
    PixelScale pixelScale = PixelScale::MinMax;
    int64_t misclassifiedTotal = 0;                 // all of them, not only those kept
    std::vector<MisclassifiedSample> misclassified; // the first kMaxMisclassified, test order
    std::vector<MisclassifiedRef> allMisclassified; // every one, test order
    // The pictures of the first picturesKept() of allMisclassified, height x width x channels
    // bytes each, one after the other (up to kMaxMisclassifiedPictureBytes).
    std::vector<uint8_t> allPictures;
    int64_t picturesKept() const
    {
        const int64_t size = channels * height * width;
        return size > 0 ? int64_t(allPictures.size()) / size : 0;
    }

    int32_t classes() const { return int32_t(classNames.size()); }
    int64_t count(int32_t trueClass, int32_t predicted) const
    {
        return confusion[size_t(trueClass) * classNames.size() + size_t(predicted)];
    }
    int64_t total() const;
    int64_t correct() const; // the matrix's trace
    std::vector<ClassMetrics> perClass() const;
};

struct Evaluation {
    std::string node;
    float loss = 0, accuracy = 0; // accuracy: correct() / total() of the detail
    int64_t samples = 0;
    EvaluationDetail detail;
};

// How to bring the model's input back to pixels: the chain's normalize stages (mean, std), in
// data-flow order, are undone exactly when the chain has nothing else; random or cropping
// stages cannot be undone, and then each image is stretched min-max instead.
struct InputPixels {
    bool undoNormalize = false;
    std::vector<std::pair<float, float>> normalize; // (mean, std) per stage, data-flow order
    // Audio features are drawn as spectrograms are: their first row (the lowest frequencies) at
    // the bottom.
    bool flipRows = false;

    static InputPixels forChain(const DataSpec &spec);
};

// Counts an evaluation batch by batch: each sample's arg-max prediction into the confusion
// matrix (the first maximum on ties, as the loss counts correct predictions), every
// misclassified sample, the first kMaxMisclassified with their images and the pictures of as
// many as kMaxMisclassifiedPictureBytes holds. Costs one pass over the outputs the evaluation
// computed anyway.
class EvaluationTally {
public:
    // sample: the model input's shape [c, h, w].
    EvaluationTally(std::vector<std::string> classNames, const Shape &sample, InputPixels pixels);

    // scores: n x classes model outputs; labels: n labels in 0..classes-1; inputs: the n
    // samples the model saw; firstIndex: the test index of the first of them.
    void add(const float *scores, const int32_t *labels, const float *inputs, int64_t n,
             int64_t firstIndex);
    const EvaluationDetail &detail() const { return m_detail; }
    EvaluationDetail take() { return std::move(m_detail); }

private:
    std::vector<uint8_t> toPixels(const float *sample) const;

    EvaluationDetail m_detail;
    InputPixels m_pixels;
};

// Standard base64 (RFC 4648, with padding) of raw bytes.
std::string base64(const uint8_t *bytes, size_t size);

// The `evaluation` event of docs/events.md, without its time `t`. epoch counts from 1. The
// misclassified samples come only withGallery: the stream sends them with the last epoch's
// evaluation, evaluation.json always has them.
nlohmann::json evaluationJson(const Evaluation &e, int64_t epoch, int64_t epochs, bool withGallery);

// The run folder's file of every kept misclassified picture of an evaluate node (raw bytes,
// image_shape each, in misclassified_all's order).
std::string misclassifiedPicturesFile(const std::string &evaluateNode);

} // namespace fb::exec
