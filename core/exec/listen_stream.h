#pragma once

#include "core/base/result.h"
#include "core/exec/listen_score.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::exec {

// A run's held-out recordings heard one after another as one labelled recording: something to
// tune a detector on (listen --truth --sweep, Try the Model's Tune…) without recording and
// labelling one by hand, as Edge Impulse's performance calibration makes a stream of its test
// set. Each recording is as the data source gives it (trimmed, centred, padded to the model's
// length), followed by a gap of silence; its label spans its sound (data::audibleRange) and
// names its class. Classes named as noise (background, background_noise, noise, silence) are
// left unlabelled, the stretch of noise around words; every other class is labelled by name,
// so that the ones listen ignores ("unknown") count as other words. A stream of the data set's
// own recordings with silence between them is easier to hear than a room: a measure of the
// model's voices and words, not of a microphone's noise (docs/audio.md).
struct HeldOutStreamOptions {
    uint64_t seed = 1;                      // the recordings' order and the gaps
    double gapMinMs = 300, gapMaxMs = 1200; // silence after each recording
    int64_t limit = 0;                      // at most this many recordings (0: every one)
};

struct HeldOutStream {
    std::vector<float> samples; // mono, at rate
    int64_t rate = 0;
    std::vector<TruthWord> labels;  // in time order, TruthWord::index -1 (readTruth sets it)
    std::vector<std::string> files; // each label's recording (empty where not known)
    std::string node;               // the data source they were read by
    int64_t recordings = 0, labelled = 0, noises = 0;
};

// From the pipeline a model was trained with (Predictor::savedPipeline()): its evaluate node's
// recordings. The error names the node or says why (no evaluate node, not recordings).
Result<HeldOutStream> heldOutStream(const std::string &pipelineText,
                                    const HeldOutStreamOptions &options);

// The labels as Audacity exports them (START<tab>END<tab>LABEL, seconds), which readTruth
// reads back; with `files`, each line's recording as a fourth column, which readTruth skips
// (which recording was missed, which one raised a false alarm).
std::string labelsText(const std::vector<TruthWord> &labels,
                       const std::vector<std::string> &files = {});

} // namespace fb::exec
