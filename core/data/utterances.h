#pragma once

#include "core/base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::data {

// Cutting a long recording into one-word clips, the way a keyword spotter's data set is made
// from a take where the speaker repeats the word (the window's Record panel and its import;
// docs/audio.md, "Record your own"). Voice-activity detection by frame energy: a frame is
// speech when its level is more than `aboveFloorDb` above the recording's noise floor (a low
// percentile of the frame levels) and above `minDb`; speech frames closer than `mergeGapMs`
// join into one utterance (the closure inside "six", the gap between "twen-ty"), one longer than
// `maxSpeechMs` is split again at its longest pause, and utterances shorter than `minSpeechMs`
// (a click, a breath) are dropped. Frames of digital silence (below -90 dB) do not count
// towards the noise floor.
//
// Our own: the VADs on Debian (WebRTC's in libwebrtc-audio-processing, Speex's preprocessor)
// classify 10-30 ms frames for telephony and give no utterance boundaries, and they want 8-48
// kHz 16-bit frames; the energy detector below is what the Speech Commands data set's own
// extraction tools use, and it needs the whole take, which we have.
struct UtteranceOptions {
    double frameMs = 25, hopMs = 10;
    double aboveFloorDb = 15; // speech: this far above the noise floor
    double floorPercentile = 0.1;
    double minDb = -50;       // never speech below this level (dB full scale)
    double mergeGapMs = 300;  // shorter pauses stay inside one utterance
    double minSpeechMs = 120; // shorter stretches are not words
    // Longer stretches (words said close together) are split at their longest pause until they
    // are no longer or have none; 0: never split.
    double maxSpeechMs = 900;
};

struct Utterance {
    int64_t start = 0, end = 0; // samples, end exclusive
    double peakDb = 0;          // the loudest frame's level
    int64_t centre() const { return (start + end) / 2; }
};

// The utterances of a mono recording at `sampleRate`, in order.
std::vector<Utterance> findUtterances(const std::vector<float> &x, int64_t sampleRate,
                                      const UtteranceOptions &o = {});

// `length` samples of x centred on `centre`, silence where the window reaches past either end.
std::vector<float> clipAround(const std::vector<float> &x, int64_t centre, int64_t length);

// A take of one word, one clip per utterance (a hold-to-talk take or a dropped file is one
// utterance or several): `length` samples centred on each. A take in which nothing rises above
// its floor (all quiet, or one level throughout) gives none.
std::vector<std::vector<float>> cutUtterances(const std::vector<float> &x, int64_t sampleRate,
                                              int64_t length, const UtteranceOptions &o = {});

// Background noise: the take cut into consecutive windows of `length` (the rest, shorter than
// one window, is dropped).
std::vector<std::vector<float>> cutWindows(const std::vector<float> &x, int64_t length);

// Mono samples in [-1, 1] as a 16-bit PCM WAV file (libsndfile), written to a temporary name
// and renamed, so a clip is never seen half written. The error names the file.
Status writeWav(const std::string &path, const std::vector<float> &x, int64_t sampleRate);

} // namespace fb::data
