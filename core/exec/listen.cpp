#include "core/exec/listen.h"

#include "core/data/audio_files.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace fb::exec {

Result<io::TunedSetting> describeHearing(const std::vector<std::string> &modelFiles,
                                         const ListenOptions &o)
{
    auto heard = io::modelsHeard(modelFiles);
    if (!heard) return heard;
    describeDetector(*heard, o);
    return heard;
}

Result<Listener> Listener::make(Predictor &p, const ListenOptions &o)
{
    return make(std::vector<Predictor *>{&p}, o);
}

Result<Listener> Listener::make(const std::vector<Predictor *> &predictors, const ListenOptions &o)
{
    if (predictors.empty() || !predictors.front()) return Error{"listen needs a model", {}, {}, 0};
    Predictor &p = *predictors.front();
    for (Predictor *other : predictors)
        if (!other->audio())
            return Error{"listen needs a model trained on recordings (an audio_folder source); "
                         "this one reads images",
                         {},
                         other->modelFile(),
                         0};
    const nlohmann::json &pre = p.preprocessing();
    const int64_t rate = pre.value("sample_rate", int64_t(0));
    const int64_t window = int64_t(std::llround(pre.value("seconds", 0.0) * double(rate)));
    if (rate <= 0 || window <= 0)
        return Error{
            "the model's saved preprocessing has no sample rate or length", {}, p.modelFile(), 0};
    auto names = [](const std::vector<std::string> &n) {
        std::string s;
        for (const auto &c : n)
            s += (s.empty() ? "" : ", ") + c;
        return s;
    };
    for (size_t i = 1; i < predictors.size(); ++i) {
        Predictor &q = *predictors[i];
        if (q.classNames() != p.classNames())
            return Error{"its classes (" + names(q.classNames()) + ") are not " + p.modelFile() +
                             "'s (" + names(p.classNames()) +
                             ") in the same order: models listen together only with the same "
                             "classes",
                         {},
                         q.modelFile(),
                         0};
        const nlohmann::json &qp = q.preprocessing();
        for (const char *key : {"sample_rate", "seconds", "trim_db"})
            if (qp.value(key, 0.0) != pre.value(key, 0.0))
                return Error{"its " + std::string(key) + " (" +
                                 qp.value(key, nlohmann::json()).dump() + ") is not " +
                                 p.modelFile() + "'s (" + pre.value(key, nlohmann::json()).dump() +
                                 "): models listen together only to the same windows",
                             {},
                             q.modelFile(),
                             0};
    }
    ListenOptions withTrim = o;
    withTrim.trimDb = pre.value("trim_db", 0.0);
    if (withTrim.trimDb <= 0) withTrim.centreMs = 0; // it learnt recordings as they came
    if (predictors.size() == 1 && withTrim.speeds().size() == 1) {
        Predictor *predictor = &p;
        return make([predictor](const std::vector<float> &w) { return predictor->scores(w, 1); },
                    p.classNames(), rate, window, withTrim);
    }
    std::vector<Scorer> scorers;
    for (Predictor *q : predictors)
        scorers.push_back([q](const std::vector<float> &w) { return q->scores(w, 1); });
    return make(together(std::move(scorers), withTrim.speeds()), p.classNames(), rate, window,
                withTrim);
}

Listener::Scorer Listener::together(std::vector<Scorer> scorers, std::vector<double> speeds)
{
    if (speeds.empty()) speeds = {1.0};
    return
        [scorers = std::move(scorers), factors = std::move(speeds)](const std::vector<float> &w) {
            std::vector<double> mean;
            const double n = double(scorers.size() * factors.size());
            for (double f : factors) {
                const std::vector<float> heard = data::stretchedAroundMiddle(w, f);
                for (const Scorer &score : scorers) {
                    const std::vector<float> s = score(heard);
                    const std::vector<double> prob = softmax(s.data(), int64_t(s.size()));
                    mean.resize(prob.size(), 0.0);
                    for (size_t c = 0; c < prob.size(); ++c)
                        mean[c] += prob[c] / n;
                }
            }
            std::vector<float> out(mean.size());
            for (size_t c = 0; c < mean.size(); ++c)
                out[c] = float(std::log(std::max(mean[c], 1e-30))); // (NaN stays NaN: never heard)
            return out;
        };
}

Result<Listener> Listener::make(Scorer scorer, std::vector<std::string> names, int64_t rate,
                                int64_t window, const ListenOptions &o)
{
    const double windowMs = 1000.0 * double(window) / double(rate);
    if (!(o.hopMs >= 1 && o.hopMs <= windowMs))
        return Error{"--hop-ms must be from 1 to the window's length (" +
                         std::to_string(int64_t(std::llround(windowMs))) + " ms)",
                     {},
                     {},
                     0};
    if (o.average < 1 || o.average > 100)
        return Error{"--average must be from 1 to 100 windows", {}, {}, 0};
    if (!(o.threshold > 0 && o.threshold <= 1))
        return Error{"--threshold must be above 0 and at most 1", {}, {}, 0};
    if (!(o.suppressMs >= 0 && o.suppressMs <= 3.6e6))
        return Error{"--suppress-ms must be from 0 to an hour", {}, {}, 0};
    if (!(o.centreMs >= 0 && o.centreMs <= windowMs / 2))
        return Error{"--centre-ms must be from 0 to half the window (" +
                         std::to_string(int64_t(std::llround(windowMs / 2))) + " ms)",
                     {},
                     {},
                     0};
    if (!(o.floorDb >= 0 && o.floorDb <= 60))
        return Error{"--floor-db must be from 0 to 60", {}, {}, 0};
    if (!(o.isolateMs >= 0 && o.isolateMs <= windowMs / 2))
        return Error{"--isolate-ms must be from 0 to half the window (" +
                         std::to_string(int64_t(std::llround(windowMs / 2))) + " ms)",
                     {},
                     {},
                     0};
    if (std::string why = warpsProblem(o.warps); !why.empty()) return Error{why, {}, {}, 0};
    const int64_t hop = std::max<int64_t>(1, std::llround(o.hopMs * double(rate) / 1000.0));
    return Listener(std::move(scorer), std::move(names), o, rate, window, hop);
}

Listener::Listener(Scorer scorer, std::vector<std::string> names, const ListenOptions &o,
                   int64_t rate, int64_t window, int64_t hop)
    : m_score(std::move(scorer))
    , m_o(o)
    , m_rate(rate)
    , m_window(window)
    , m_hop(hop)
    , m_detect(o, std::move(names), rate, hop)
{}

Detector::Detector(const ListenOptions &o, std::vector<std::string> names, int64_t rate,
                   int64_t hop)
    : m_o(o)
    , m_names(std::move(names))
    , m_rate(rate)
    , m_hop(hop)
{
    for (const std::string &name : m_names)
        m_ignored.push_back(namedAmong(name, o.ignore));
}

bool Detector::ignored(int32_t index) const
{
    return index >= 0 && size_t(index) < m_ignored.size() && m_ignored[size_t(index)];
}

bool Detector::step(ListenWindow &w, Detection &d)
{
    std::vector<float> counted = w.probabilities;
    if (!w.centred) {
        std::fill(counted.begin(), counted.end(), 0.0f);
        const auto quiet = std::find(m_ignored.begin(), m_ignored.end(), true);
        if (quiet != m_ignored.end() && size_t(quiet - m_ignored.begin()) < counted.size())
            counted[size_t(quiet - m_ignored.begin())] = 1.0f;
    }
    m_recent.push_back(std::move(counted));
    while (m_recent.size() > size_t(m_o.average))
        m_recent.pop_front();
    w.averaged.assign(w.probabilities.size(), 0.0f);
    for (const auto &r : m_recent)
        for (size_t c = 0; c < r.size() && c < w.averaged.size(); ++c)
            w.averaged[c] += r[c] / float(m_recent.size());
    if (w.averaged.empty()) return false;
    w.top = int32_t(std::max_element(w.averaged.begin(), w.averaged.end()) - w.averaged.begin());

    // (A NaN from a damaged model is never heard.)
    const bool heard = !ignored(w.top) && w.averaged[size_t(w.top)] >= float(m_o.threshold);
    if (!heard || w.top != m_lastClass)
        m_armed = true; // the word is over (or another began): it may be detected again
    if (!heard || !m_armed) return false;
    const int64_t start = std::llround(w.start * double(m_rate));
    d = Detection{};
    d.start = double(start - int64_t(m_recent.size() - 1) * m_hop) / double(m_rate);
    d.end = w.end;
    d.time = (d.start + d.end) / 2;
    m_lastClass = w.top;
    m_armed = false;
    if (d.time - m_lastDetection < m_o.suppressMs / 1000.0)
        return false; // suppressed: this word is spent, rather than detected late
    m_lastDetection = d.time;
    d.index = w.top;
    d.label = size_t(w.top) < m_names.size() ? m_names[size_t(w.top)] : std::to_string(w.top);
    d.probability = w.averaged[size_t(w.top)];
    d.window = w.index;
    return true;
}

void Listener::push(const float *samples, size_t n,
                    const std::function<void(const ListenWindow &)> &onWindow,
                    const std::function<void(const Detection &)> &onDetection)
{
    m_buffer.insert(m_buffer.end(), samples, samples + n);
    while (m_next * m_hop + m_window <= received())
        runWindow(onWindow, onDetection);
}

void Listener::finish(const std::function<void(const ListenWindow &)> &onWindow,
                      const std::function<void(const Detection &)> &onDetection)
{
    // Windows still to come start before the end of what was received.
    const int64_t end = received();
    if (m_next * m_hop >= end) return;
    const int64_t last = (end - 1) / m_hop; // the last window starting inside the stream
    const int64_t need = last * m_hop + m_window - end;
    if (need > 0) {
        const std::vector<float> silence(size_t(need), 0.0f);
        push(silence.data(), silence.size(), onWindow, onDetection);
    }
}

std::pair<size_t, size_t> Listener::isolate(std::vector<float> &samples) const
{
    const auto gap = size_t(std::llround(m_o.isolateMs / 1000.0 * double(m_rate)));
    const auto [first, last] = data::soundNearestMiddle(samples, m_o.trimDb, m_o.floorDb, gap);
    data::quietenAllBut(samples, first, last, size_t(std::llround(0.01 * double(m_rate))));
    return {first, last};
}

void Listener::runWindow(const std::function<void(const ListenWindow &)> &onWindow,
                         const std::function<void(const Detection &)> &onDetection)
{
    const int64_t start = m_next * m_hop;
    // Drop what no window needs any more.
    while (m_bufferStart < start && !m_buffer.empty()) {
        m_buffer.pop_front();
        ++m_bufferStart;
    }
    const auto from = m_buffer.begin() + std::ptrdiff_t(start - m_bufferStart);
    std::vector<float> samples(from, from + std::ptrdiff_t(m_window));

    const auto t0 = std::chrono::steady_clock::now();
    std::pair<size_t, size_t> stretch{0, 0};
    if (m_o.isolateMs > 0 && m_o.trimDb > 0) stretch = isolate(samples);
    const std::vector<float> scores = m_score(samples);
    ListenWindow w;
    w.index = m_next++;
    w.start = double(start) / double(m_rate);
    w.end = double(start + m_window) / double(m_rate);
    if (stretch.second > stretch.first) {
        w.soundStart = double(start + int64_t(stretch.first)) / double(m_rate);
        w.soundEnd = double(start + int64_t(stretch.second)) / double(m_rate);
    }
    const std::vector<double> p = softmax(scores.data(), int64_t(scores.size()));
    w.probabilities.assign(p.begin(), p.end());
    w.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    if (m_o.centreMs > 0) {
        const auto [first, last] = data::audibleRange(samples, m_o.trimDb, m_o.floorDb);
        w.soundOffset = (double(first + last) / 2.0 - double(m_window) / 2.0) / double(m_rate);
        w.centred = std::abs(w.soundOffset) * 1000.0 <= m_o.centreMs;
    }
    Detection d;
    const bool detected = m_detect.step(w, d);
    if (onWindow) onWindow(w);
    if (detected && onDetection) onDetection(d);
}

} // namespace fb::exec
