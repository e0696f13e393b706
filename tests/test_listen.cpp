// Keyword spotting's windows and decisions (core/exec/listen.h) with a stand-in model whose
// scores follow from the window's samples: where the windows fall, how the probabilities are
// averaged, when a detection fires, that one word gives one detection, that background and
// unknown are never detected, and that the end of a stream is heard. The real model's part is
// in test_spoken_digits.

#include "core/exec/listen.h"
#include "core/exec/listen_score.h"
#include "core/io/tuned_setting.h"

#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace fb;
using namespace fb::exec;

namespace {

// 100 samples a second, windows of 100 samples (1 s). A "word" of class k is a stretch of
// samples of value k + 1; silence is 0. The stand-in model scores a window by the class of the
// sample at its middle: logit 8 for that class (background for silence), 0 elsewhere.
const std::vector<std::string> kNames = {"0", "1", "2", "background", "unknown"};

std::vector<float> scoreWindow(const std::vector<float> &w)
{
    std::vector<float> logits(kNames.size(), 0.0f);
    const int k = int(std::lround(w[50])) - 1;
    logits[k < 0 ? 3 : size_t(k)] = 8.0f;
    return logits;
}

// Silence with words of class `label` over [start, end) seconds.
std::vector<float> stream(double seconds, std::vector<std::tuple<double, double, int>> words)
{
    std::vector<float> x(size_t(seconds * 100), 0.0f);
    for (auto [a, b, label] : words)
        for (size_t i = size_t(a * 100); i < size_t(b * 100) && i < x.size(); ++i)
            x[i] = float(label + 1);
    return x;
}

// A stand-in model fooled by words at a window's edge: class 0 when the window's sound (its
// samples louder than `above`, weighted by loudness) lies in the window's middle, 1 when it lies
// near an edge, background when there is none.
Listener::Scorer edgeFooled(float above)
{
    return [above](const std::vector<float> &w) {
        double sum = 0, at = 0;
        for (size_t i = 0; i < w.size(); ++i)
            if (std::abs(w[i]) > above) {
                sum += std::abs(w[i]);
                at += std::abs(w[i]) * double(i);
            }
        std::vector<float> logits(kNames.size(), 0.0f);
        const double where = sum > 0 ? at / sum / double(w.size()) : -1;
        logits[where < 0 ? 3 : (where < 0.15 || where > 0.85) ? 1 : 0] = 8.0f;
        return logits;
    };
}

struct Heard {
    std::vector<ListenWindow> windows;
    std::vector<Detection> detections;
};

// The stream heard by a listener of `score` at `rate`, windows of 1 s.
Heard listen(const std::vector<float> &x, ListenOptions o, size_t chunk = 7,
             const Listener::Scorer &score = scoreWindow, int64_t rate = 100)
{
    auto made = Listener::make(score, kNames, rate, rate, o);
    if (!made.ok()) qFatal("%s", made.error().str().c_str());
    Listener l = std::move(made).value();
    Heard h;
    auto onWindow = [&](const ListenWindow &w) { h.windows.push_back(w); };
    auto onDetection = [&](const Detection &d) { h.detections.push_back(d); };
    // In small pieces, as a microphone hands them over.
    for (size_t i = 0; i < x.size(); i += chunk)
        l.push(x.data() + i, std::min(chunk, x.size() - i), onWindow, onDetection);
    l.finish(onWindow, onDetection);
    return h;
}

} // namespace

class TestListen : public QObject {
    Q_OBJECT

private slots:
    void windowsSlideByTheHop()
    {
        ListenOptions o;
        o.hopMs = 250;
        const Heard h = listen(stream(3.0, {}), o);
        // Starts 0, 0.25, ..., 2.75: every start inside the stream, the last ones padded.
        QCOMPARE(h.windows.size(), size_t(12));
        for (size_t i = 0; i < h.windows.size(); ++i) {
            QCOMPARE(h.windows[i].index, int64_t(i));
            QCOMPARE(h.windows[i].start, 0.25 * double(i));
            QCOMPARE(h.windows[i].end, 0.25 * double(i) + 1.0);
            QCOMPARE(h.windows[i].top, 3); // background
        }
        QVERIFY(h.detections.empty()); // silence is never a detection
    }

    void oneWordOneDetectionAtItsTime()
    {
        ListenOptions o;
        o.hopMs = 100;
        o.average = 3;
        o.threshold = 0.7;
        o.suppressMs = 0; // one detection per word even without suppression
        // "2" from 3.0 to 3.6 s, "1" from 6.0 to 6.5 s.
        const Heard h = listen(stream(9.0, {{3.0, 3.6, 2}, {6.0, 6.5, 1}}), o);
        QCOMPARE(h.detections.size(), size_t(2));
        QCOMPARE(h.detections[0].label, std::string("2"));
        QCOMPARE(h.detections[1].label, std::string("1"));
        // The average of three windows reaches 0.7 once all three hear the word: the third
        // window whose middle is on it (starts 2.5, 2.6, 2.7: middles 3.0, 3.1, 3.2).
        QCOMPARE(h.detections[0].window, int64_t(27));
        QVERIFY(std::abs(h.detections[0].start - 2.5) < 1e-9);
        QVERIFY(std::abs(h.detections[0].end - 3.7) < 1e-9);
        QVERIFY(std::abs(h.detections[0].time - 3.1) < 1e-9);
        QVERIFY(h.detections[0].probability > 0.99f);
        QVERIFY(std::abs(h.detections[1].time - 6.1) < 1e-9);
    }

    void averagingNeedsTheWordToLast()
    {
        ListenOptions o;
        o.hopMs = 100;
        o.average = 5;
        o.threshold = 0.9;
        // A blip of 0.2 s is in the middle of two windows only: 2 of 5 is not enough.
        QVERIFY(listen(stream(5.0, {{2.0, 2.2, 0}}), o).detections.empty());
        // Without averaging it is heard.
        o.average = 1;
        QCOMPARE(listen(stream(5.0, {{2.0, 2.2, 0}}), o).detections.size(), size_t(1));
    }

    void suppressionAndTheSameWordAgain()
    {
        ListenOptions o;
        o.hopMs = 100;
        o.average = 1;
        o.threshold = 0.5;
        // "1" twice with 0.3 s of silence between: heard twice without suppression...
        const auto x = stream(6.0, {{2.0, 2.5, 1}, {2.8, 3.3, 1}});
        o.suppressMs = 0;
        QCOMPARE(listen(x, o).detections.size(), size_t(2));
        // ... once when detections less than a second apart are suppressed.
        o.suppressMs = 1000;
        QCOMPARE(listen(x, o).detections.size(), size_t(1));
        // Unknown words are heard but never detected; nor is what --ignore names.
        o.suppressMs = 0;
        QVERIFY(listen(stream(4.0, {{1.0, 2.0, 4}}), o).detections.empty());
        o.ignore = {"2", "_Background_", "unknown"}; // names match without case and underscores
        QVERIFY(listen(stream(4.0, {{1.0, 2.0, 2}}), o).detections.empty());
    }

    void aWordAtTheVeryEndIsHeard()
    {
        ListenOptions o;
        o.hopMs = 250;
        o.average = 1;
        // The stream ends 0.3 s after the word begins: only padded windows hold it centred.
        const Heard h = listen(stream(4.3, {{4.0, 4.3, 0}}), o, 1000);
        QCOMPARE(h.detections.size(), size_t(1));
        QCOMPARE(h.detections[0].label, std::string("0"));
        QVERIFY(h.windows.back().start < 4.3);
    }

    // A damaged model (NaN scores) is heard as nothing: no detection, no crash.
    void nanScoresAreNeverHeard()
    {
        auto nan = [](const std::vector<float> &) {
            return std::vector<float>(kNames.size(), std::nanf(""));
        };
        auto made = Listener::make(nan, kNames, 100, 100, ListenOptions{});
        QVERIFY(made.ok());
        Listener l = std::move(made).value();
        int windows = 0, detections = 0;
        const std::vector<float> x = stream(3.0, {{1.0, 2.0, 1}});
        l.push(
            x.data(), x.size(), [&](const ListenWindow &) { ++windows; },
            [&](const Detection &) { ++detections; });
        QVERIFY(windows > 0);
        QCOMPARE(detections, 0);
    }

    // A model that mistakes the end of a word at a window's edge for another word (as the
    // spoken-digits model hears "biscuit"'s end as "six"): with the centring gate only windows
    // whose sound is in their middle count, so it hears the word once, as itself.
    void offCentreWindowsDoNotCount()
    {
        constexpr int64_t rate = 16000;
        // A 0.2 s tone at [2.0, 2.2) s in 4 s of silence.
        std::vector<float> x(size_t(4 * rate), 0.0f);
        for (int64_t i = 2 * rate; i < 2 * rate + rate / 5; ++i)
            x[size_t(i)] = 0.5f * float(std::sin(2 * 3.14159265 * 440 * double(i) / rate));
        auto hear = [&](double centreMs) {
            ListenOptions o;
            o.average = 1;
            o.centreMs = centreMs;
            return listen(x, o, 1600, edgeFooled(0), rate);
        };
        const Heard every = hear(0);
        QVERIFY(!every.detections.empty());
        QCOMPARE(every.detections[0].label, std::string("1")); // the tone at the right edge

        const Heard gated = hear(250);
        QCOMPARE(gated.detections.size(), size_t(1));
        QCOMPARE(gated.detections[0].label, std::string("0"));
        QVERIFY2(std::abs(gated.detections[0].time - 2.1) < 0.3,
                 qPrintable(QString::number(gated.detections[0].time)));
        int centred = 0;
        for (const ListenWindow &w : gated.windows) {
            const double middle = (w.start + w.end) / 2;
            // The middle of the part of the tone in the window, measured to a frame (32 ms).
            if (w.start < 2.2 && w.end > 2.0) {
                const double heard = (std::max(w.start, 2.0) + std::min(w.end, 2.2)) / 2;
                QVERIFY2(std::abs(w.soundOffset - (heard - middle)) < 0.04,
                         qPrintable(QString("%1 at %2").arg(w.soundOffset).arg(w.start)));
                QCOMPARE(w.centred, std::abs(w.soundOffset) <= 0.25);
                centred += w.centred;
            }
        }
        QVERIFY2(centred >= 4 && centred <= 6, qPrintable(QString::number(centred)));
    }

    // Noise filling a window is not its sound (ListenOptions::floorDb): a tone at a window's
    // left edge with noise 14 dB under it to the window's end has all of the window within
    // trim_db of its loudest, so that without the floor the window's sound is the whole window,
    // centred, and a model fooled by words at the edge (as the example hears "galaxy"'s end as
    // "six") is heard. With it, the tone alone is the sound, off-centre, and only the windows
    // with the tone in their middle count.
    void noiseFillingAWindowIsNotItsSound()
    {
        constexpr int64_t rate = 16000;
        // A 0.2 s tone at [1.0, 1.2) s after silence, then uniform noise (RMS 0.07) to 4 s.
        std::vector<float> x(size_t(4 * rate), 0.0f);
        uint32_t state = 1;
        for (int64_t i = rate; i < 4 * rate; ++i) {
            if (i < rate + rate / 5) {
                x[size_t(i)] = 0.5f * float(std::sin(2 * 3.14159265 * 440 * double(i) / rate));
                continue;
            }
            state = state * 1664525u + 1013904223u;
            x[size_t(i)] = 0.12f * (float(state >> 8) / float(1 << 24) * 2.0f - 1.0f);
        }
        auto hear = [&](double floorDb) {
            ListenOptions o;
            o.average = 1;
            o.suppressMs = 0;
            o.floorDb = floorDb;
            // The tone is the sound; the noise stays under 0.3.
            return listen(x, o, 1600, edgeFooled(0.3f), rate);
        };
        auto labels = [](const Heard &h) {
            std::string s;
            for (const Detection &d : h.detections)
                s += d.label;
            return s;
        };
        auto windowAt = [](const Heard &h, double start) {
            for (const ListenWindow &w : h.windows)
                if (std::abs(w.start - start) < 1e-6) return w;
            qFatal("no window at %g", start);
        };
        const Heard plain = hear(0);
        QCOMPARE(labels(plain), std::string("01"));
        // The window starting with the tone: noise fills the rest, and without the floor all of
        // it is the "sound", in the middle.
        QVERIFY(windowAt(plain, 1.0).centred);
        QVERIFY(std::abs(windowAt(plain, 1.0).soundOffset) < 0.05);

        const Heard floored = hear(6);
        QCOMPARE(labels(floored), std::string("0"));
        const ListenWindow edge = windowAt(floored, 1.0);
        QVERIFY(!edge.centred);
        QVERIFY2(std::abs(edge.soundOffset - (0.1 - 0.5)) < 0.04,
                 qPrintable(QString::number(edge.soundOffset)));
        // The tone in the middle, noise after it: silence before the tone is this window's
        // floor, so its sound is the tone and the noise, as without the floor; it counts.
        QVERIFY(windowAt(floored, 0.6).centred);
        QCOMPARE(windowAt(floored, 0.6).top, 0);
        // Noise alone stands nowhere above its own floor: centred, and heard as what it is.
        QVERIFY(windowAt(floored, 2.5).centred);
        QCOMPARE(windowAt(floored, 2.5).top, 3);
    }

    // Words said close together (ListenOptions::isolateMs): two 0.2 s tones 0.15 s apart, and a
    // stand-in model that knows a word only alone in its window (class 0 for one stretch of
    // sound, `unknown` for two or more), as the example learnt digits alone in their second.
    // Heard as they come, every window over either holds both, and nothing is detected; heard
    // isolated, each window holds the tone it is centred on, and both are found at their times.
    void wordsSaidCloseTogetherAreHeardApart()
    {
        constexpr int64_t rate = 16000;
        std::vector<float> x(size_t(4 * rate), 0.0f);
        for (double from : {1.8, 2.15})
            for (int64_t i = int64_t(from * rate); i < int64_t((from + 0.2) * rate); ++i)
                x[size_t(i)] = 0.5f * float(std::sin(2 * 3.14159265 * 440 * double(i) / rate));
        auto stretches = [](const std::vector<float> &w) {
            std::vector<float> logits(kNames.size(), 0.0f);
            int n = 0;
            size_t quiet = 1000;
            for (float v : w) {
                if (std::abs(v) > 0.01f) {
                    n += quiet > 800; // 50 ms of quiet parts two stretches
                    quiet = 0;
                } else {
                    ++quiet;
                }
            }
            logits[n == 0 ? 3 : n == 1 ? 0 : 4] = 8.0f;
            return logits;
        };
        auto hear = [&](double isolateMs) {
            ListenOptions o;
            o.average = 2;
            o.centreMs = 100;
            o.suppressMs = 0;
            o.isolateMs = isolateMs;
            return listen(x, o, 1600, stretches, rate);
        };
        QVERIFY(hear(0).detections.empty());
        const Heard apart = hear(60);
        QCOMPARE(apart.detections.size(), size_t(2));
        QCOMPARE(apart.detections[0].label, std::string("0"));
        QVERIFY2(std::abs(apart.detections[0].time - 1.9) < 0.15,
                 qPrintable(QString::number(apart.detections[0].time)));
        QVERIFY2(std::abs(apart.detections[1].time - 2.25) < 0.15,
                 qPrintable(QString::number(apart.detections[1].time)));
        // Asked to part only sounds a longer silence apart, the two are one sound again.
        QVERIFY(hear(200).detections.empty());
    }

    // Hearings together (listen --with, --warp): the window's probabilities are the mean of
    // every scorer's on every hearing. A stand-in model that knows a word only when it lasts
    // at least 45 samples does not know one of 40 at its own speed; with warp 0.2 one hearing
    // of three plays it 0.8 times as fast (50 samples), and that one knows it.
    void hearingsTogetherAreTheMeanOfTheirProbabilities()
    {
        auto slowWords = [](const std::vector<float> &w) {
            const auto n = std::count_if(w.begin(), w.end(), [](float v) { return v > 0.5f; });
            std::vector<float> logits(kNames.size(), 0.0f);
            logits[n >= 45 ? 1 : 3] = 12.0f;
            return logits;
        };
        const std::vector<float> word = stream(1.0, {{0.3, 0.7, 0}}); // 40 samples of 1
        auto probabilities = [&](const Listener::Scorer &s) {
            std::vector<float> p = s(word);
            for (float &v : p)
                v = std::exp(v);
            return p;
        };
        const std::vector<float> alone = probabilities(Listener::together({slowWords}, {1.0}));
        QVERIFY(alone[1] < 0.01f && alone[3] > 0.99f);
        ListenOptions o;
        o.warps = {0.2};
        QCOMPARE(o.speeds(), (std::vector<double>{1.0, 0.8, 1.2}));
        const std::vector<float> warped =
            probabilities(Listener::together({slowWords}, o.speeds()));
        QVERIFY2(std::abs(warped[1] - 1.0f / 3) < 0.01f && std::abs(warped[3] - 2.0f / 3) < 0.01f,
                 qPrintable(QString("%1 %2").arg(warped[1]).arg(warped[3])));
        // With another scorer that hears the middle sample's class ("0"): the mean of all six.
        const std::vector<float> both =
            probabilities(Listener::together({slowWords, scoreWindow}, o.speeds()));
        QVERIFY2(std::abs(both[1] - 1.0f / 6) < 0.01f && std::abs(both[0] - 0.5f) < 0.01f &&
                     std::abs(both[3] - 2.0f / 6) < 0.01f,
                 qPrintable(QString("%1 %2 %3").arg(both[0]).arg(both[1]).arg(both[3])));
        float sum = 0;
        for (float v : both)
            sum += v;
        QVERIFY(std::abs(sum - 1.0f) < 1e-4f);
        // Two warps, five hearings: 1, 0.95, 1.05, 0.8 and 1.2 times as fast. Only 0.8 makes the
        // word 45 samples or more (0.95: 42), so one hearing in five knows it.
        o.warps = {0.05, 0.2};
        QCOMPARE(o.speeds(), (std::vector<double>{1.0, 0.95, 1.05, 0.8, 1.2}));
        const std::vector<float> five = probabilities(Listener::together({slowWords}, o.speeds()));
        QVERIFY2(std::abs(five[1] - 0.2f) < 0.01f && std::abs(five[3] - 0.8f) < 0.01f,
                 qPrintable(QString("%1 %2").arg(five[1]).arg(five[3])));
        // A warp of 0 is no hearing more: heard once.
        o.warps = {0.0};
        QCOMPARE(o.speeds(), std::vector<double>{1.0});
    }

    // listen --truth's label files: Audacity's export (tabs, its spectral-selection lines), the
    // tests' five columns, comments and CRLF; a keyword is a class the listener detects.
    void truthFilesAsAudacityWritesThem()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("labels.txt").toStdString();
        {
            std::ofstream f(path, std::ios::binary);
            f << "\xEF\xBB\xBF# what was said\r\n" // as Windows' Notepad saves it
              << "6.000000\t6.500000\t1\r\n"
              << "\\\t120.000000\t3400.000000\r\n" // Audacity: the frequencies of the one above
              << "3.0\t3.6\t2\tfive columns\tas the tests write them\n"
              << "\n"
              << "8.0\t8.4\tcat\n"
              << "9.0\t9.5\tUnknown\n"
              << "10.0\t10.5\t_Background_\n"
              << "11.0\t11.2\tmy word\n";
        }
        auto read = readTruth(path, kNames, ListenOptions{}.ignore);
        QVERIFY2(read.ok(), read.ok() ? "" : read.error().str().c_str());
        const std::vector<TruthWord> &w = read.value();
        QCOMPARE(w.size(), size_t(6));
        // In time order, whatever the file's.
        QCOMPARE(w[0].label, std::string("2"));
        QCOMPARE(w[0].index, 2);
        QCOMPARE(w[0].line, 4);
        // The columns after the label are kept as its note (held-out-stream's recording).
        QCOMPARE(w[0].note, std::string("five columns\tas the tests write them"));
        QCOMPARE(w[1].note, std::string());
        QCOMPARE(w[1].label, std::string("1"));
        QCOMPARE(w[1].index, 1);
        QCOMPARE(w[1].start, 6.0);
        QCOMPARE(w[1].end, 6.5);
        QCOMPARE(w[2].index, -1); // "cat": not a class
        QCOMPARE(w[3].index, -1); // "Unknown": a class, but one never detected
        QCOMPARE(w[4].index, -1); // "_Background_" likewise
        QCOMPARE(w[5].label, std::string("my word"));
        QCOMPARE(w[5].index, -1);

        // What cannot be read is named with its file and line.
        auto refused = [&](const char *text, int line, const char *words) {
            std::ofstream(path, std::ios::binary) << text;
            auto r = readTruth(path, kNames, ListenOptions{}.ignore);
            return !r.ok() && r.error().file == path && r.error().line == line &&
                   r.error().message.find(words) != std::string::npos;
        };
        QVERIFY(refused("1.0\t2.0\t1\n1.0\tsoon\t2\n", 2, "START<tab>END<tab>LABEL"));
        QVERIFY(refused("1.0 2.0 1\n", 1, "START<tab>END<tab>LABEL")); // not tabs
        std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBF" << "1.0\t2.0\t1\n";
        QCOMPARE(readTruth(path, kNames, {}).value().front().index, 1); // a BOM, then a label
        QVERIFY(refused("2.0\t1.0\t1\n", 1, "must not end before it starts"));
        QVERIFY(refused("1.0\t2.0\t \n", 1, "without a name"));
        auto missing = readTruth(dir.filePath("none.txt").toStdString(), kNames, {});
        QVERIFY(!missing.ok() && missing.error().file.ends_with("none.txt"));
    }

    // Detections judged against the truth, as bench/listen_accuracy.py and test_spoken_digits
    // count them: found at the keyword's time, another class there, or a false alarm away from
    // every keyword; and the time away from them, which false alarms an hour are of.
    void truthScoresWhatIsFound()
    {
        ListenOptions o;
        o.hopMs = 100;
        o.average = 3;
        o.threshold = 0.7;
        o.suppressMs = 0;
        // Said: "2", "1", "0", "2"; labelled: "2" (found), "2" where "1" is said (another class
        // there, and the "2" missed), "cat" where "0" is said (a false alarm), "2" (found), and
        // a "1" nobody said (missed).
        const Heard h =
            listen(stream(15.0, {{3.0, 3.6, 2}, {6.0, 6.5, 1}, {9.0, 9.4, 0}, {12.0, 12.4, 2}}), o);
        QCOMPARE(h.detections.size(), size_t(4));
        TruthJudge judge({{3.0, 3.6, "2", 2, 1, {}},
                          {6.0, 6.5, "2", 2, 2, {}},
                          {9.0, 9.4, "cat", -1, 3, {}},
                          {12.0, 12.4, "2", 2, 4, {}},
                          {13.5, 14.0, "1", 1, 5, {}}});
        std::vector<std::string> outcomes;
        std::vector<int64_t> near;
        for (const Detection &d : h.detections) {
            int64_t at = -2;
            outcomes.push_back(outcomeName(judge.judge(d, at)));
            near.push_back(at);
        }
        QCOMPARE(outcomes, (std::vector<std::string>{"right", "wrong", "false_alarm", "right"}));
        QCOMPARE(near, (std::vector<int64_t>{0, 1, 2, 3}));
        const ListenScore s = judge.score(15.0);
        QCOMPARE(s.keywords, int64_t(4));
        QCOMPARE(s.found, int64_t(2));
        QCOMPARE(s.wrong, int64_t(1));
        QCOMPARE(s.falseAlarms, int64_t(1));
        QCOMPARE(s.missed, (std::vector<size_t>{1, 4}));
        // Away from the keywords (each widened by half a second): 15 s less 1.6, 1.5, 1.4
        // and 1.5 (12.0 to 14.5, the last two overlapping, is 2.9).
        QVERIFY2(std::abs(s.otherSeconds - 9.0) < 1e-9, qPrintable(QString::number(s.otherSeconds)));
        QVERIFY(std::abs(s.falseAlarmsPerHour() - 400.0) < 1e-6);

        // Words said closer than the margin: "1" then "2", 0.2 s apart. A "1" heard where both
        // stretches reach is the "1" (it was counted "wrong" against the later "2"); a second
        // "1" there, or a "3", names another class; the "2" heard is the "2".
        TruthJudge close({{1.0, 1.4, "1", 1, 1, {}}, {1.6, 2.0, "2", 2, 2, {}}});
        auto heardAt = [](double time, int32_t index) {
            Detection d;
            d.time = time;
            d.index = index;
            return d;
        };
        int64_t at = -2;
        QCOMPARE(outcomeName(close.judge(heardAt(1.5, 1), at)), std::string("right"));
        QCOMPARE(at, int64_t(0));
        QCOMPARE(outcomeName(close.judge(heardAt(1.55, 1), at)), std::string("wrong"));
        QCOMPARE(at, int64_t(1));
        QCOMPARE(outcomeName(close.judge(heardAt(1.7, 3), at)), std::string("wrong"));
        QCOMPARE(outcomeName(close.judge(heardAt(1.9, 2), at)), std::string("right"));
        QCOMPARE(at, int64_t(1));
        QCOMPARE(close.score(3.0).found, int64_t(2));
    }

    // The sweep replays the detector over windows heard once: every setting finds what a
    // listener of that setting finds, and the best within a budget is the most found there.
    void sweepIsWhatEachSettingFinds()
    {
        // A blip of 0.2 s that only a short average hears, three words and a word that is no
        // keyword, in 20 s.
        const std::vector<float> x = stream(
            20.0, {{2.0, 2.2, 0}, {5.0, 5.6, 1}, {9.0, 9.5, 2}, {13.0, 13.4, 0}, {16.0, 16.7, 1}});
        const std::vector<TruthWord> truth{{2.0, 2.2, "0", 0, 1, {}},
                                           {5.0, 5.6, "1", 1, 2, {}},
                                           {9.0, 9.5, "2", 2, 3, {}},
                                           {13.0, 13.4, "other", -1, 4, {}},
                                           {16.0, 16.7, "1", 1, 5, {}}};
        ListenOptions o;
        o.suppressMs = 0;
        const Heard once = listen(x, o);
        auto made = Listener::make(scoreWindow, kNames, 100, 100, o);
        QVERIFY(made.ok());
        const std::vector<int> averages{1, 3, 5};
        const std::vector<double> thresholds{0.5, 0.9};
        const std::vector<SweepPoint> points = sweep(once.windows, o, kNames, 100,
                                                     made.value().hopSamples(), truth, 20.0,
                                                     averages, thresholds);
        QCOMPARE(points.size(), size_t(6));
        for (const SweepPoint &p : points) {
            ListenOptions at = o;
            at.average = p.average;
            at.threshold = p.threshold;
            TruthJudge judge(truth);
            for (const Detection &d : listen(x, at).detections) {
                int64_t near = -1;
                judge.judge(d, near);
            }
            const ListenScore s = judge.score(20.0);
            QCOMPARE(p.score.found, s.found);
            QCOMPARE(p.score.falseAlarms, s.falseAlarms);
            QCOMPARE(p.score.wrong, s.wrong);
        }
        // Averaging 5 at 0.9 misses the blip; one window hears it.
        auto at = [&](int average, double threshold) {
            return *std::find_if(points.begin(), points.end(), [&](const SweepPoint &p) {
                return p.average == average && p.threshold == threshold;
            });
        };
        QCOMPARE(at(1, 0.9).score.found, int64_t(4));
        QCOMPARE(at(5, 0.9).score.found, int64_t(3));
        QCOMPARE(at(5, 0.9).score.falseAlarms, int64_t(0)); // "other" is 0.4 s: 4 of 5 windows
        QCOMPARE(at(1, 0.9).score.falseAlarms, int64_t(1));
        // The best: the most found within the budget, then the fewest false alarms.
        const SweepPoint *any = bestWithin(points, 1e9, 4);
        QVERIFY(any && any->score.found == 4);
        const SweepPoint *none = bestWithin(points, 0, 4);
        QVERIFY(none && none->score.falseAlarms == 0);
        for (const SweepPoint &p : points)
            if (p.score.falseAlarms == 0) QVERIFY(p.score.found <= none->score.found);
        QVERIFY(!bestWithin(points, -1, 4));
        // Between settings that do as well, the higher threshold, then the listener's own
        // number of windows.
        std::vector<SweepPoint> tied(3);
        tied[0] = {1, 0.9, {}};
        tied[1] = {5, 0.9, {}};
        tied[2] = {3, 0.8, {}};
        QCOMPARE(bestWithin(tied, 2, 4)->average, 5);
        QCOMPARE(bestWithin(tied, 2, 1)->average, 1);
        QCOMPARE(bestWithin(tied, 2, 3)->average, 5); // 1 and 5 are as near: the more windows
    }

    void optionsOutOfRangeAreRefused()
    {
        auto refused = [](ListenOptions o, const char *words) {
            auto made = Listener::make(scoreWindow, kNames, 100, 100, o);
            return !made.ok() && made.error().message.find(words) != std::string::npos;
        };
        ListenOptions o;
        o.hopMs = 0;
        QVERIFY(refused(o, "--hop-ms"));
        o.hopMs = 1500; // longer than the window
        QVERIFY(refused(o, "--hop-ms"));
        o = {};
        o.average = 0;
        QVERIFY(refused(o, "--average"));
        o = {};
        o.threshold = 1.5;
        QVERIFY(refused(o, "--threshold"));
        o.threshold = std::nan("");
        QVERIFY(refused(o, "--threshold"));
        o = {};
        o.centreMs = 600; // more than half the window
        QVERIFY(refused(o, "--centre-ms"));
        o = {};
        o.floorDb = -1;
        QVERIFY(refused(o, "--floor-db"));
        o = {};
        o.isolateMs = -5;
        QVERIFY(refused(o, "--isolate-ms"));
        o.isolateMs = 600; // more than half the window
        QVERIFY(refused(o, "--isolate-ms"));
        o = {};
        o.warps = {0.5};
        QVERIFY(refused(o, "--warp"));
        o.warps = {0.08, -0.1};
        QVERIFY(refused(o, "--warp"));
        o.warps = {0.02, 0.04, 0.06, 0.08, 0.1};
        QVERIFY(refused(o, "at most 4"));
    }
    // A tuned setting kept beside its model (listen.json): read back as written, applied only
    // to the hearing it was tuned for, and a damaged or newer file named, never taken.
    void tunedSettingsAreKeptBesideTheirModel()
    {
        QTemporaryDir dir;
        const std::string model = dir.filePath("model.safetensors").toStdString();
        const std::string other = dir.filePath("other.safetensors").toStdString();
        std::ofstream(model) << "weights of one model";
        std::ofstream(other) << "weights of another";
        QCOMPARE(io::tunedSettingPath(model), dir.filePath("listen.json").toStdString());
        QVERIFY(io::readTunedSetting(model).ok() && !io::readTunedSetting(model).value());

        auto hear = [](const std::vector<std::string> &files, const ListenOptions &opts) {
            return describeHearing(files, opts).value();
        };
        ListenOptions o;
        auto alone = describeHearing({model}, o);
        QVERIFY(alone.ok());
        QVERIFY(alone->defaultDetector && alone->withSha256.empty());
        QCOMPARE(alone->modelSha256.size(), size_t(64));
        io::TunedSetting t = *alone;
        t.threshold = 0.8;
        t.average = 3;
        t.recording = "/somewhere/talk.wav";
        t.keywords = 205;
        t.found = 184;
        t.falseAlarmsPerHour = 1.8;
        t.budget = 2;
        QVERIFY(io::writeTunedSetting(model, t).ok());
        auto back = io::readTunedSetting(model);
        QVERIFY2(back.ok() && *back, back.ok() ? "none" : back.error().str().c_str());
        const io::TunedSetting &r = **back;
        QCOMPARE(r.threshold, 0.8);
        QCOMPARE(r.average, 3);
        QCOMPARE(r.modelSha256, alone->modelSha256);
        QCOMPARE(r.found, 184);
        QVERIFY(!r.tuned.empty()); // when, filled in
        QCOMPARE(io::describeTuned(r), std::string("threshold 0.80 over 3 windows, tuned on "
                                                   "talk.wav: 184 of 205 words found at 1.8 "
                                                   "false alarms an hour"));
        QCOMPARE(io::hearingDiffers(r, *alone), std::string());

        // Another hearing: each difference named.
        auto differs = [&](const std::vector<std::string> &files, const ListenOptions &opts,
                           const char *words) {
            auto h = describeHearing(files, opts);
            const std::string why = h.ok() ? io::hearingDiffers(r, *h) : h.error().str();
            if (why.find(words) == std::string::npos) qWarning("%s", why.c_str());
            return why.find(words) != std::string::npos;
        };
        QVERIFY(differs({other}, o, "another model file"));
        QVERIFY(differs({model, other}, o, "with others (--with)"));
        ListenOptions w;
        w.warps = {0};
        QVERIFY(differs({model}, w, "(--warp)"));
        w.warps = {0.08, 0}; // a 0 is no hearing: the same as {0.08}
        QCOMPARE(io::hearingDiffers(r, hear({model}, w)), std::string());
        ListenOptions hop;
        hop.hopMs = 50;
        QVERIFY(differs({model}, hop, "(--hop-ms)"));
        // The window's hearing, made as the panel makes it (io::modelsHeard, then
        // describeDetector from the header alone, at the engine's defaults): a setting tuned
        // with the defaults applies there, one tuned with other options does not.
        auto windowHeard = io::modelsHeard({model});
        QVERIFY(windowHeard.ok());
        io::TunedSetting window = *windowHeard;
        describeDetector(window, ListenOptions{});
        QCOMPARE(io::hearingDiffers(r, window), std::string());
        ListenOptions spelt; // the same classes ignored, spelt otherwise: the defaults still
        spelt.ignore = {"_Background_Noise_", "UNKNOWN", "silence", "noise", "background"};
        QCOMPARE(io::hearingDiffers(r, hear({model}, spelt)), std::string());
        // Tuned with other options, compared one by one.
        io::TunedSetting fifty = hear({model}, hop);
        fifty.threshold = 0.9;
        fifty.average = 2;
        QVERIFY(!fifty.defaultDetector);
        QCOMPARE(io::hearingDiffers(fifty, hear({model}, hop)), std::string());
        QVERIFY(io::hearingDiffers(fifty, window).find("(--hop-ms)") != std::string::npos);
        // Tuned under other defaults (a hop the defaults no longer have, still marked as the
        // defaults): taken neither by the engine nor by the window, whose hearings say what their
        // options are.
        io::TunedSetting older = r;
        older.hopMs = 125;
        QVERIFY(older.defaultDetector);
        QVERIFY(io::hearingDiffers(older, *alone).find("(--hop-ms)") != std::string::npos);
        QVERIFY(io::hearingDiffers(older, window).find("(--hop-ms)") != std::string::npos);
        // Several hearings in another order are the same hearings.
        ListenOptions two, owt;
        two.warps = {0.04, 0.08};
        owt.warps = {0.08, 0.04};
        QCOMPARE(io::hearingDiffers(hear({model}, two), hear({model}, owt)), std::string());
        hop.suppressMs = 800;
        QVERIFY(io::hearingDiffers(fifty, hear({model}, hop)).find("--suppress-ms") !=
                std::string::npos);
        // Each window heard whole, or its word isolated: another hearing, either way, and a
        // setting written before --isolate-ms (none in its file) was tuned on whole windows.
        ListenOptions whole = hop, apart = hop;
        whole.isolateMs = 0;
        apart.isolateMs = 90;
        io::TunedSetting onWhole = hear({model}, whole);
        onWhole.threshold = 0.8;
        onWhole.average = 3;
        QCOMPARE(io::hearingDiffers(onWhole, hear({model}, whole)), std::string());
        QVERIFY(io::hearingDiffers(onWhole, hear({model}, apart)).find("whole") !=
                std::string::npos);
        QVERIFY(
            io::hearingDiffers(hear({model}, apart), hear({model}, whole)).find("(--isolate-ms)") !=
            std::string::npos);
        nlohmann::json written = io::tunedSettingJson(onWhole);
        QCOMPARE(written["version"].get<int>(), 2);
        written["version"] = 1;
        written["for"].erase("isolate_ms");
        auto before = io::tunedSettingFromJson(written, "old listen.json");
        QVERIFY(before.ok());
        QCOMPARE(before->isolateMs, 0.0);
        QCOMPARE(io::hearingDiffers(*before, hear({model}, whole)), std::string());
        // Together with another model: the order of --with does not matter.
        const std::string third = dir.filePath("third.safetensors").toStdString();
        std::ofstream(third) << "a third";
        io::TunedSetting together = hear({model, other, third}, o);
        together.threshold = 0.7;
        together.average = 4;
        QCOMPARE(io::hearingDiffers(together, hear({model, third, other}, o)), std::string());
        QVERIFY(io::hearingDiffers(together, *alone).find("other models") != std::string::npos);
        // The model trained again: its digest is another.
        std::ofstream(model) << "weights of the model trained again";
        QVERIFY(differs({model}, o, "another model file"));

        // Damaged, made by hand wrong, or newer: named, never taken.
        auto refused = [&](const char *text, const char *words) {
            std::ofstream(dir.filePath("listen.json").toStdString()) << text;
            auto got = io::readTunedSetting(model);
            return !got.ok() && got.error().file == dir.filePath("listen.json").toStdString() &&
                   got.error().message.find(words) != std::string::npos;
        };
        QVERIFY(refused("{\"format\": \"flowbench.listen\", \"version\": 1, \"thre", ""));
        QVERIFY(refused("{\"format\": \"flowbench.run\"}", "not a tuned listening setting"));
        QVERIFY(refused("{\"format\": \"flowbench.listen\", \"version\": 1, \"threshold\": "
                        "1.5, \"average\": 4, \"for\": {\"model_sha256\": \"ab\"}}",
                        "\"threshold\""));
        QVERIFY(refused("{\"format\": \"flowbench.listen\", \"version\": 1, \"threshold\": "
                        "0.8, \"average\": 2.5, \"for\": {\"model_sha256\": \"ab\"}}",
                        "\"average\""));
        QVERIFY(refused("{\"format\": \"flowbench.listen\", \"version\": 1, \"threshold\": "
                        "0.8, \"average\": 2}",
                        "which model"));
        QVERIFY(refused("{\"format\": \"flowbench.listen\", \"version\": 3, \"threshold\": "
                        "0.8, \"average\": 2, \"for\": {\"model_sha256\": \"ab\"}}",
                        "version 3;"));
        QVERIFY(refused("{\"format\": \"flowbench.listen\", \"version\": 2.5}", "version 2.5;"));
        QVERIFY(
            refused("{\"format\": \"flowbench.listen\", \"version\": 1e300}", "version 1e+300"));
        // Counts for people beyond an int: kept within one.
        std::ofstream(dir.filePath("listen.json").toStdString())
            << "{\"format\": \"flowbench.listen\", \"version\": 1, \"threshold\": 0.8, "
               "\"average\": 2, \"for\": {\"model_sha256\": \"ab\"}, \"found_on\": "
               "{\"keywords\": 1e300, \"found\": -5}}";
        auto huge = io::readTunedSetting(model);
        QVERIFY(huge.ok() && huge.value() && huge.value()->keywords == 1000000000 &&
                huge.value()->found == 0);
        // Two model files in one folder keep a setting each; a run's model and a checkpoint's
        // file keep listen.json beside them.
        QCOMPARE(io::tunedSettingPath(other), dir.filePath("other.listen.json").toStdString());
        QCOMPARE(io::tunedSettingPath("/r/checkpoints/step-5/checkpoint.safetensors"),
                 std::string("/r/checkpoints/step-5/listen.json"));
        // Nothing written without what makes a setting.
        QVERIFY(!io::writeTunedSetting(model, io::TunedSetting{}).ok());
    }
};

QTEST_GUILESS_MAIN(TestListen)
#include "test_listen.moc"
