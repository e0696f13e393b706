#pragma once

#include "core/exec/inference.h"
#include "core/io/tuned_setting.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace fb::exec {

// Keyword spotting with a model trained on fixed-length recordings (docs/audio.md, "Listen"):
// windows of the model's length slide over a stream every hop, each goes through the model's
// saved preprocessing and the model (one forward per window, as a live microphone gives them),
// the class probabilities are averaged over the last few windows, and a class other than the
// ignored ones (background noise, other words) is detected when its average reaches the
// threshold, unless another detection came less than `suppress` before, or the same class was
// detected and its average has not dropped below the threshold since (one word, one detection). The
// scheme of TensorFlow's RecognizeCommands (speech_commands' streaming recognizer), which people
// who have trained a keyword spotter know.
struct ListenOptions {
    double hopMs = 100;
    // 4 windows rather than TensorFlow's 3: with the centring gate below they found more of the
    // digits at about the same false alarms (docs/audio-history.md). 0.85 rather than its 0.7
    // (and ours of 0.6 until 2026-12-03): the spoken-digits example with noise beside its words is
    // sure of its words, and at 0.6 raised 15 to 31 false alarms an hour; at 0.85 three seeds found
    // 97.6, 95.1 and 96.1% of new voices' digits at 2.3, 0 and 1.4 an hour, and 4 windows at 0.8 to
    // 0.9 was each seed's best setting within 2 an hour (bench/listen_curve.py;
    // bench/results/listen-default-threshold-20261203.md). The example before it: 90.7 and 86.8% at
    // 1.4 and 0.5, against 92.7 and 89.3% within 2 at its best (0.8).
    int average = 4;         // windows averaged (1 = no averaging)
    double threshold = 0.85; // averaged probability that makes a detection
    double suppressMs = 500; // no detection this soon after the previous one
    // A window counts (its probabilities join the average) only when its sound is centred: the
    // middle of the part within `trimDb` of its loudest (what audio_folder keeps of a
    // recording, data::audibleRange, with floorDb below) lies within this many ms of the
    // window's middle. The model learnt words trimmed and centred; a window that holds the end
    // of a word at its edge and silence after it is one it never saw, and what it makes of it
    // is a guess (30 and 44% of the false alarms of two models were there: docs/audio-history.md).
    // An off-centre window counts as the first ignored class, certain. 0: every window counts.
    double centreMs = 300;
    double trimDb = 30; // make(Predictor&) takes the model's own trim_db (0 there: no gate)
    // The sound's part must also stand this many dB above the window's noise floor (its
    // quietest tenth, data::audibleRange): where noise fills most of a window, all of it is
    // within trimDb of the loudest, the sound's middle is then the window's, and the window
    // counted however far off its word lies. The tail of "galaxy" at a window's left edge with
    // brown noise after it is "six" to the example, and such windows made half of seed 1's
    // false alarms at 0.8; with 6 dB its three seeds raised 10 where 14 in 6.4 hours at the
    // default, at the same digits found (bench/results/listen-noise-floor-20261204.md). 0:
    // trimDb alone.
    double floorDb = 6;
    // For each w above 0, every model also hears each window played 1 - w and 1 + w times as
    // fast (data::stretchedAroundMiddle: a longer and a shorter vocal tract, a lower and a
    // higher voice), and the window's probabilities are the mean of all the hearings, as with
    // several models; a voice that lies between those the model learnt is then heard by a
    // hearing nearer one of them. Each w costs two forward passes a window per model and two
    // resamplings, most of the cost (9.4 ms a window against 0.9 on 2 cores with one w).
    // Each 0 to 0.3, at most 4 of them (0s are ignored: none, heard once). {0.08} (0.15 found
    // fewer) found 6 to 7 points more of the digits within 2 false alarms an hour, and 10 to 21
    // more with none in 2.2 hours, for each of three models (docs/audio-history.md, "Each window
    // heard three ways").
    std::vector<double> warps = {0.08};
    // The speeds each window is heard at: 1, then 1 - w and 1 + w for each w of warps above 0.
    std::vector<double> speeds() const;
    // Classes that are never detected: by name, case-insensitive, with or without underscores
    // around them ("_background_noise_", Speech Commands' own spelling, too).
    std::vector<std::string> ignore = {"background", "background_noise", "unknown", "silence",
                                       "noise"};
};

// A class name as --ignore and label files match it: lower case, without surrounding
// underscores ("_Background_Noise_" is "background_noise").
std::string plainClassName(const std::string &name);
// Whether `name` is one of `names`, matched as plainClassName (--ignore, label files).
bool namedAmong(const std::string &name, const std::vector<std::string> &names);

// What a listening is, as a tuned setting records it (core/io/tuned_setting.h): the models'
// digests (the first file is the model's, the rest --with's) and the detector's options other
// than the threshold and the windows averaged. The error names a model file that cannot be read.
Result<io::TunedSetting> describeHearing(const std::vector<std::string> &modelFiles,
                                         const ListenOptions &options);

struct ListenWindow {
    int64_t index = 0;                // 0, 1, 2, ... in the stream
    double start = 0, end = 0;        // seconds from the stream's start
    std::vector<float> probabilities; // this window's softmax (several models: their mean)
    std::vector<float> averaged;      // the mean of the last `average` windows' probabilities
    int32_t top = 0;                  // the class of averaged's largest value
    double soundOffset = 0;           // seconds from the window's middle to its sound's
    bool centred = true;              // whether the window counts (ListenOptions::centreMs)
    double milliseconds = 0;          // this window's preprocessing and forward pass
};

struct Detection {
    double time = 0;           // the centre of the stretch the average covers (seconds)
    double start = 0, end = 0; // that stretch: the first averaged window's start, the last's end
    int32_t index = 0;
    std::string label;
    float probability = 0; // averaged
    int64_t window = 0;    // the window that made it
};

// The detector alone, what a listener does with each window's probabilities: the average over
// the last `average` counted windows (an off-centre window counts as the first ignored class,
// certain), the threshold, suppression, and one detection per word. A listener runs one; the
// sweep of listen --truth replays kept windows through others of other settings
// (listen_score.h).
class Detector {
public:
    // Windows `hop` samples apart at `rate`; names are the model's classes.
    Detector(const ListenOptions &o, std::vector<std::string> names, int64_t rate, int64_t hop);
    // Whether a class is one the options ignore.
    bool ignored(int32_t index) const;
    // w with its index, start, end, probabilities and centred set: fills in averaged and top,
    // and returns whether the window makes a detection, then in d.
    bool step(ListenWindow &w, Detection &d);

private:
    ListenOptions m_o;
    std::vector<std::string> m_names;
    int64_t m_rate, m_hop;
    std::vector<bool> m_ignored;
    std::deque<std::vector<float>> m_recent; // the last `average` windows' probabilities
    double m_lastDetection = -1e300;         // seconds
    int32_t m_lastClass = -1;                // the last detection's class
    bool m_armed = true; // false from a detection until its class's average drops or changes
};

class Listener {
public:
    // A model's scores (logits) for one window of samples.
    using Scorer = std::function<std::vector<float>(const std::vector<float> &window)>;

    // The predictor must hold an audio model (Predictor::audio()); the error says why not, or
    // which option is out of range. The predictor must outlive the listener.
    static Result<Listener> make(Predictor &predictor, const ListenOptions &options);
    // Several models listening together: each hears every window through its own saved
    // preprocessing, and their probabilities are averaged, window by window, before anything
    // else (the window's "probabilities" are that mean). They must have the same classes in
    // the same order and the same sample rate, length and trim_db (one window, one centring
    // gate); the error names the first model that differs, and how. Models trained apart make
    // different mistakes, so that together they cry wolf less at the same digits found
    // (docs/audio-history.md, "Models listening together"); each costs its forward pass per window.
    static Result<Listener> make(const std::vector<Predictor *> &predictors,
                                 const ListenOptions &options);
    // Scorers heard together: the mean of their probabilities (as scores: the mean's log), each
    // hearing the window at each of the speeds (ListenOptions::speeds(): 1 and 1 - w and 1 + w
    // for each warp w). What make(predictors) listens with.
    static Scorer together(std::vector<Scorer> scorers, std::vector<double> speeds);
    // Any scorer of windows of `windowSamples` at `sampleRate` with these classes (tests).
    static Result<Listener> make(Scorer scorer, std::vector<std::string> classNames,
                                 int64_t sampleRate, int64_t windowSamples,
                                 const ListenOptions &options);

    int64_t sampleRate() const { return m_rate; }
    int64_t windowSamples() const { return m_window; }
    int64_t hopSamples() const { return m_hop; }
    // Whether a class is one the options ignore.
    bool ignored(int32_t index) const { return m_detect.ignored(index); }
    const ListenOptions &options() const { return m_o; }

    // Appends mono samples at sampleRate() and runs every window they complete, in order,
    // calling onWindow for each and onDetection for each detection (either may be empty).
    void push(const float *samples, size_t n,
              const std::function<void(const ListenWindow &)> &onWindow,
              const std::function<void(const Detection &)> &onDetection);
    // The end of the stream: silence up to the last window that reaches past it, so a word at
    // the very end is heard whole.
    void finish(const std::function<void(const ListenWindow &)> &onWindow,
                const std::function<void(const Detection &)> &onDetection);

private:
    // Samples pushed so far.
    int64_t received() const { return m_bufferStart + int64_t(m_buffer.size()); }
    Listener(Scorer scorer, std::vector<std::string> names, const ListenOptions &o, int64_t rate,
             int64_t window, int64_t hop);
    void runWindow(const std::function<void(const ListenWindow &)> &onWindow,
                   const std::function<void(const Detection &)> &onDetection);

    Scorer m_score;
    ListenOptions m_o;
    int64_t m_rate, m_window, m_hop;
    Detector m_detect;
    std::deque<float> m_buffer; // samples from m_bufferStart on
    int64_t m_bufferStart = 0;  // the stream position of m_buffer.front()
    int64_t m_next = 0;         // the next window's index
};

} // namespace fb::exec
