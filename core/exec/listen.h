#pragma once

#include "core/exec/inference.h"
#include "core/exec/listen_options.h"
#include "core/io/tuned_setting.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace fb::exec {

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
    // With ListenOptions::isolateMs: the stretch of sound the window was heard as (seconds from
    // the stream's start); 0, 0 otherwise.
    double soundStart = 0, soundEnd = 0;
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
    // ListenOptions::isolateMs: turns all of a window but the sound it is centred on down to
    // its noise floor.
    // Returns the stretch kept, [first, last) samples of the window.
    std::pair<size_t, size_t> isolate(std::vector<float> &samples) const;
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
