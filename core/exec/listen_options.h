#pragma once

// The detector's options, their defaults and how a tuned setting describes them: header-only, so
// that the window, which does not link the engine (widgets/CMakeLists.txt), starts its Listen row
// at the engine's own defaults and judges a model's tuned setting as `flowbench-cli listen` does.
// Nothing here may need a definition in a .cpp of core/exec.

#include "core/io/tuned_setting.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace fb::exec {

// The speeds a recording is heard at for these warps, as listen hears each window and infer
// each recording (--warp): 1, then 1 - w and 1 + w for each w above 0.
inline std::vector<double> hearingSpeeds(const std::vector<double> &warps)
{
    std::vector<double> out{1.0};
    for (double w : warps)
        if (w > 0) out.insert(out.end(), {1.0 - w, 1.0 + w});
    return out;
}

// Why these warps cannot be heard ("" when they can): each 0 to 0.3, at most 4 of them.
inline std::string warpsProblem(const std::vector<double> &warps)
{
    if (warps.size() > 4) return "--warp takes at most 4 values";
    for (double w : warps)
        if (!(w >= 0 && w <= 0.3)) return "--warp must be from 0 to 0.3";
    return {};
}

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
    // Above 0: each window is heard as the word it is centred on alone. Where a silence of this
    // many ms or more parts sounds in the window, the stretch nearest its middle is kept with
    // its half of the silences either side (data::soundNearestMiddle), and the rest is turned
    // down to the window's noise floor (data::quietenAllBut, 10 ms fades); the centring gate
    // then judges what is left. A window with one stretch is heard whole. The model learnt each
    // word alone in its second, and digits said 0.1 to 0.3 s apart had a neighbour in every
    // window over them: the example found 23 of 144 (10 of 67 in accents never heard); heard
    // isolated, 79 (36), and over the bench's 2.1 hours of words 0.4 to 1.6 s apart as many
    // digits within 2 false alarms an hour as before (85.9 and 79.0%, where 84.4 and 79.0%;
    // bench/results/listen-isolate-20261206.md). 130 rather than less: the silence inside
    // "six", before its k, lasts up to about 100 ms, and at 100 the sixes were cut in two
    // (121 of the test's 144 where 130).
    double isolateMs = 130;
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
    // The speeds each window is heard at (hearingSpeeds below).
    std::vector<double> speeds() const;
    // Classes that are never detected: by name, case-insensitive, with or without underscores
    // around them ("_background_noise_", Speech Commands' own spelling, too).
    std::vector<std::string> ignore = {"background", "background_noise", "unknown", "silence",
                                       "noise"};
};

inline std::vector<double> ListenOptions::speeds() const
{
    return hearingSpeeds(warps);
}

// A class name as --ignore and label files match it: lower case, without surrounding
// underscores ("_Background_Noise_" is "background_noise").
inline std::string plainClassName(const std::string &name)
{
    std::string s;
    for (char c : name)
        s += char(std::tolower(static_cast<unsigned char>(c)));
    const size_t a = s.find_first_not_of('_'), b = s.find_last_not_of('_');
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}
// Whether `name` is one of `names`, matched as plainClassName (--ignore, label files).
inline bool namedAmong(const std::string &name, const std::vector<std::string> &names)
{
    const std::string plain = plainClassName(name);
    return std::ranges::any_of(names,
                               [&](const std::string &n) { return plainClassName(n) == plain; });
}

// The detector's part of a hearing, as a tuned setting records it (io::TunedSetting): the warps
// and the options other than the threshold and the windows averaged, and whether they are these
// options' defaults. describeHearing adds it to the models' digests; the window does the same
// for its Listen row, so that both judge a tuned setting alike (io::hearingDiffers).
inline void describeDetector(io::TunedSetting &h, const ListenOptions &o)
{
    auto plainSorted = [](const std::vector<std::string> &names) {
        std::vector<std::string> out;
        for (const std::string &name : names)
            out.push_back(plainClassName(name));
        std::ranges::sort(out);
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    };
    h.warps = o.warps;
    h.hopMs = o.hopMs;
    h.centreMs = o.centreMs;
    h.floorDb = o.floorDb;
    h.isolateMs = o.isolateMs;
    h.suppressMs = o.suppressMs;
    h.ignore = plainSorted(o.ignore);
    const ListenOptions d;
    h.defaultDetector = o.hopMs == d.hopMs && o.centreMs == d.centreMs && o.floorDb == d.floorDb &&
                        o.isolateMs == d.isolateMs && o.suppressMs == d.suppressMs &&
                        h.ignore == plainSorted(d.ignore);
}

} // namespace fb::exec
