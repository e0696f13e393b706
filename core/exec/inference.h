#pragma once

#include "core/base/result.h"
#include "core/exec/job.h"
#include "core/tensor/shape.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace fb::exec {

// What a trained model needs to be tried on new input: saved in the metadata of every
// model.safetensors and checkpoint a run writes ("pipeline", "preprocessing", "class_names"),
// so a model file alone is enough (docs/inference.md).
//
// preprocessing: {"kind": "image", "height", "width", "color": "grey"|"rgb",
// "resize": "stretch"|"pad", "transforms": [{"node", "type", "params"}, ...]} or {"kind":
// "audio", "sample_rate", "seconds", "trim_db", "transforms"}: how a file becomes the sample the
// model reads. The chain is the evaluate node's (what the reported
// accuracy was measured on) or else the training chain, without its random stages.
nlohmann::json savedPreprocessing(const TrainingJob &job, const Shape &sampleShape);
// The metadata entries above, for a run of `doc` with those class names; with classCounts (the
// training labels of each class) also "class_counts", which Predictor::setBalance reads
// (as nn::logClassShares).
std::map<std::string, std::string> inferenceMetadata(const graph::PipelineDocument &doc,
                                                     const TrainingJob &job,
                                                     const Shape &sampleShape,
                                                     const std::vector<std::string> &classNames,
                                                     const std::vector<int64_t> &classCounts = {});

// Softmax of one row of scores (logits), in double: the probabilities every prediction reports.
std::vector<double> softmax(const float *row, int64_t classes);

struct ClassScore {
    int32_t index = 0;
    std::string name;
    float probability = 0;
};

struct Prediction {
    std::vector<ClassScore> top; // most probable first
    double milliseconds = 0;     // decoding, preprocessing and this input's share of the forward
    std::vector<float> sample;   // the input as the model saw it, [c, h, w] after preprocessing
    std::vector<float> waveform; // a recording's samples before the feature stages (audio)
    // A recording's share of samples cut off flat at its loudest (data::FlatPeaks): from
    // data::FlatPeaks::kClipped on, it was recorded too loud, and is heard less well.
    double clipped = 0;
    // With saliency: how much each cell of the sample's [h, w] plane moved the prediction, by
    // occlusion: the drop of the top class's log-odds when the cell's patch (all channels) is
    // covered: by the sample's mean for pictures, by its quietest value (silence) for a
    // recording's features. Positive: the cell spoke for the prediction.
    std::vector<float> saliency;
};

// A trained model opened for predictions on the CPU or a GPU.
class Predictor {
public:
    // path: a run folder (its model.safetensors, else its newest checkpoint), a model or
    // checkpoint .safetensors file, or a checkpoint folder. Errors name the file.
    static Result<std::unique_ptr<Predictor>> open(const std::string &path,
                                                   const std::string &device = "cpu");
    ~Predictor();
    Predictor(const Predictor &) = delete;
    Predictor &operator=(const Predictor &) = delete;

    // One prediction per file, in order, computed together; a file that cannot be read gets its
    // error instead (naming it), and the others are still predicted.
    std::vector<Result<Prediction>> predictFiles(const std::vector<std::string> &paths, int topK,
                                                 bool saliency = false);

    const std::vector<std::string> &classNames() const;
    const Shape &sampleShape() const;
    const nlohmann::json &preprocessing() const;
    const std::string &modelFile() const; // the .safetensors file it was read from
    // The CPU threads its predictions use (the device's: on a GPU, nothing changes). A whole
    // process setting: Debian's oneDNN runs on OpenMP, whose thread count is the process's.
    void setThreads(int threads);
    bool audio() const; // recordings in, rather than images
    // Recordings only: each is also heard played 1 - w and 1 + w times as fast for each w of
    // warps above 0 (data::stretchedAroundMiddle after decoding: a longer and a shorter vocal
    // tract, a lower and a higher voice), and its probabilities are the mean of the hearings',
    // as listen hears each window (ListenOptions::warps). No warps (the default) hear each
    // recording once, as the evaluation does. A prediction's sample and saliency are those of
    // the hearing at its own speed. The error says why the warps cannot be heard (each 0 to
    // 0.3, at most 4), or that the model reads pictures.
    Status setWarps(const std::vector<double> &warps);
    const std::vector<double> &speeds() const; // the hearings: 1 first, then the warped ones
    // How far the classes' shares of the training labels are taken out of the probabilities
    // (b from 0 to 1): each class's probability divided by its share to the power b, the whole
    // summed to 1 again; at 1 every class is as likely beforehand as every other (the balanced
    // decision: a class the training data had many of wins no more for it), at 0 (the default)
    // they are as the model gives them, as the evaluation reads them. A model saved without
    // class counts (trained before 2026-12-07) cannot be balanced: knowsClassShares() is false
    // and nothing changes. Applied after the hearings' mean.
    Status setBalance(double b);
    bool knowsClassShares() const;
    // Whether a recording still longer than the model's window after trimming is cropped around
    // its sound (the default: data::AudioFilesOptions::cropToSound) or around its middle, as the
    // run's data set and evaluation crop it.
    void setCropToSound(bool on);

    // The model's scores ([n, classes], row by row) for n decoded samples: an image's pixels
    // scaled to [0, 1] (channels x height x width, as data::decodeImageFile gives them over
    // 255), or a recording's samples; through the saved preprocessing, as predictFiles does.
    std::vector<float> scores(const std::vector<float> &decoded, int64_t n);
    // What an export writes: the saved preprocessing's stages, the shape entering each (and
    // back(): the model's input), the model with its weights in host memory (open() on "cpu"),
    // and the pipeline the model was trained with (JSON text).
    const std::vector<data::Stage> &stages() const;
    const std::vector<Shape> &stageShapes() const;
    const nn::Model &model() const;
    const std::string &savedPipeline() const;

private:
    struct State;
    explicit Predictor(std::unique_ptr<State> s);
    std::unique_ptr<State> m_s;
};

} // namespace fb::exec
