#pragma once

#include "core/base/result.h"
#include "core/exec/listen.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::exec {

// Listening scored against what was said (listen --truth; docs/audio.md, "How well your model
// listens"): which words of a recording are the model's keywords and when they were said, how
// many of them a listener finds at their time, how many of its detections fall where no keyword
// was said (false alarms an hour), and the same for other detector settings replayed over the
// windows heard once (the sweep), so that a person can choose the threshold and the number of
// windows averaged for their own model from a recording of their own. The rules are those of
// bench/listen_accuracy.py and test_spoken_digits.

// One labelled stretch of the recording.
struct TruthWord {
    double start = 0, end = 0; // seconds
    std::string label;         // as the file has it
    int32_t index = -1;        // the model's class to find there; -1: a word or sound not to detect
    int line = 0;              // in the file
    std::string note;          // the line's columns after the label, if any (tab-separated)
};

// A label file: one stretch a line, "START<tab>END<tab>LABEL" in seconds, as Audacity exports a
// label track (File > Export > Export Labels; its lines for a spectral selection, which begin
// with a backslash, are skipped) and as tests/make_listen_recording.sh writes (columns after the
// label are ignored). Blank lines and lines beginning with '#' are skipped. A label that names
// one of the model's classes (case and surrounding underscores aside) which the listener does
// not ignore is a keyword to find; any other label (another word, "noise", "unknown") marks a
// stretch where a detection is a false alarm. An unreadable file or line is an error naming the
// file and line.
Result<std::vector<TruthWord>> readTruth(const std::string &path,
                                         const std::vector<std::string> &classNames,
                                         const std::vector<std::string> &ignore);

// A detection counts for a keyword when its time lies within this many seconds of the word
// (before its start or after its end): the averaged windows' middle trails the word.
constexpr double kTruthMargin = 0.5;

struct ListenScore {
    int64_t keywords = 0;    // keywords said
    int64_t found = 0;       // of them, detected as themselves at their time
    int64_t wrong = 0;       // detections at a keyword's time as another class, or a second time
    int64_t falseAlarms = 0; // detections with no keyword within kTruthMargin
    double otherSeconds = 0; // the recording's time farther than kTruthMargin from every keyword
    std::vector<size_t> missed; // indices into the truth of keywords not found
    double falseAlarmsPerHour() const
    {
        return otherSeconds > 0 ? double(falseAlarms) * 3600.0 / otherSeconds : 0.0;
    }
    // What one false alarm there is an hour: how finely the recording measures (0: no time).
    double oneFalseAlarmPerHour() const { return otherSeconds > 0 ? 3600.0 / otherSeconds : 0.0; }
};

// Judges detections, in the order they come (a listener's stream), against the truth.
class TruthJudge {
public:
    explicit TruthJudge(std::vector<TruthWord> truth);
    enum class Outcome { Right, Wrong, FalseAlarm };
    // The detection's outcome; `near` is set to the truth's index of the keyword it was counted
    // against, or of any labelled stretch within kTruthMargin of a false alarm (-1: none).
    Outcome judge(const Detection &d, int64_t &near);
    // The score of what was judged, over a recording of `seconds`.
    ListenScore score(double seconds) const;
    const std::vector<TruthWord> &truth() const { return m_truth; }

private:
    std::vector<TruthWord> m_truth;
    std::vector<bool> m_found;
    int64_t m_wrong = 0, m_falseAlarms = 0;
};

const char *outcomeName(TruthJudge::Outcome o);

struct SweepPoint {
    int average = 0;
    double threshold = 0;
    ListenScore score;
};

// The detector replayed over windows heard once (each with its index, start, end,
// probabilities and centred) at every number of windows averaged in `averages` and every
// threshold in `thresholds`, the other settings as `o`; windows `hop` samples apart at `rate`.
std::vector<SweepPoint> sweep(const std::vector<ListenWindow> &windows, const ListenOptions &o,
                              const std::vector<std::string> &classNames, int64_t rate,
                              int64_t hop, const std::vector<TruthWord> &truth, double seconds,
                              const std::vector<int> &averages,
                              const std::vector<double> &thresholds);

// The point that finds the most keywords at no more than `budget` false alarms an hour, then
// the one with the fewest false alarms, the highest threshold, and the number of windows nearest
// `average` (the listener's own: a setting is not changed for nothing; of two as near, the more
// windows); nullptr if none keeps to the budget.
const SweepPoint *bestWithin(const std::vector<SweepPoint> &points, double budget, int average);

} // namespace fb::exec
