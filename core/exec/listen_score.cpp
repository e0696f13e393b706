#include "core/exec/listen_score.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

namespace fb::exec {

namespace {

std::string trimmed(const std::string &s)
{
    const size_t a = s.find_first_not_of(" \r\n\t"), b = s.find_last_not_of(" \r\n\t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

bool seconds(const std::string &text, double &out)
{
    const std::string t = trimmed(text);
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return !t.empty() && ec == std::errc() && end == t.data() + t.size() && std::isfinite(out);
}

} // namespace

Result<std::vector<TruthWord>> readTruth(const std::string &path,
                                         const std::vector<std::string> &classNames,
                                         const std::vector<std::string> &ignore)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot read the label file");
    std::vector<TruthWord> out;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3); // a UTF-8 BOM
        const std::string t = trimmed(line);
        if (t.empty() || t[0] == '#' || t[0] == '\\') continue;
        std::vector<std::string> fields;
        size_t from = 0;
        for (size_t tab; (tab = line.find('\t', from)) != std::string::npos; from = tab + 1)
            fields.push_back(line.substr(from, tab - from));
        fields.push_back(line.substr(from));
        TruthWord w;
        w.line = number;
        if (fields.size() < 3 || !seconds(fields[0], w.start) || !seconds(fields[1], w.end))
            return fileError(path,
                             "expected START<tab>END<tab>LABEL (seconds), as Audacity exports "
                             "labels",
                             number);
        if (w.start < 0 || w.end < w.start)
            return fileError(path, "a label must not end before it starts, nor start before 0",
                             number);
        w.label = trimmed(fields[2]);
        for (size_t f = 3; f < fields.size(); ++f) {
            if (f > 3) w.note += '\t';
            w.note += trimmed(fields[f]);
        }
        if (w.label.empty()) return fileError(path, "a label without a name", number);
        for (size_t c = 0; c < classNames.size() && !namedAmong(w.label, ignore); ++c)
            if (namedAmong(w.label, {classNames[c]})) w.index = int32_t(c);
        out.push_back(std::move(w));
    }
    if (in.bad()) return fileError(path, "the label file could not be read to its end");
    std::stable_sort(out.begin(), out.end(),
                     [](const TruthWord &a, const TruthWord &b) { return a.start < b.start; });
    return out;
}

TruthJudge::TruthJudge(std::vector<TruthWord> truth)
    : m_truth(std::move(truth))
    , m_found(m_truth.size(), false)
{}

TruthJudge::Outcome TruthJudge::judge(const Detection &d, int64_t &near)
{
    near = -1;
    // The keywords whose stretch, widened by the margin, holds the detection's time: the nearest
    // of its class not found yet is found; if none is, the detection named another class there
    // (the later keyword, as bench/listen_accuracy.py's score and test_spoken_digits count).
    // Words said closer together than the margin (0.1 to 0.3 s apart) have a detection of one
    // within the other's stretch: taking the later one alone counted a right detection wrong.
    int64_t same = -1;
    double sameDistance = 0;
    for (size_t i = 0; i < m_truth.size(); ++i) {
        const TruthWord &w = m_truth[i];
        if (w.index < 0 || d.time < w.start - kTruthMargin || d.time > w.end + kTruthMargin)
            continue;
        near = int64_t(i);
        const double distance = std::abs(d.time - (w.start + w.end) / 2);
        if (w.index == d.index && !m_found[i] && (same < 0 || distance < sameDistance)) {
            same = int64_t(i);
            sameDistance = distance;
        }
    }
    if (same >= 0) near = same;
    if (near < 0) {
        for (size_t i = 0; i < m_truth.size() && near < 0; ++i)
            if (m_truth[i].start - kTruthMargin <= d.time &&
                d.time <= m_truth[i].end + kTruthMargin)
                near = int64_t(i);
        ++m_falseAlarms;
        return Outcome::FalseAlarm;
    }
    if (m_truth[size_t(near)].index == d.index && !m_found[size_t(near)]) {
        m_found[size_t(near)] = true;
        return Outcome::Right;
    }
    ++m_wrong;
    return Outcome::Wrong;
}

ListenScore TruthJudge::score(double seconds) const
{
    ListenScore s;
    s.wrong = m_wrong;
    s.falseAlarms = m_falseAlarms;
    // The keywords' stretches widened by the margin, merged, within the recording: what is not
    // in them is where a detection is a false alarm.
    std::vector<std::pair<double, double>> near;
    for (size_t i = 0; i < m_truth.size(); ++i) {
        const TruthWord &w = m_truth[i];
        if (w.index < 0) continue;
        ++s.keywords;
        if (m_found[i])
            ++s.found;
        else
            s.missed.push_back(i);
        near.emplace_back(std::max(0.0, w.start - kTruthMargin),
                          std::min(seconds, w.end + kTruthMargin));
    }
    std::sort(near.begin(), near.end());
    double covered = 0, reach = 0;
    for (auto [a, b] : near) {
        a = std::max(a, reach);
        if (b > a) covered += b - a;
        reach = std::max(reach, b);
    }
    s.otherSeconds = std::max(0.0, seconds - covered);
    return s;
}

const char *outcomeName(TruthJudge::Outcome o)
{
    switch (o) {
    case TruthJudge::Outcome::Right:
        return "right";
    case TruthJudge::Outcome::Wrong:
        return "wrong";
    case TruthJudge::Outcome::FalseAlarm:
        return "false_alarm";
    }
    return "?";
}

std::vector<SweepPoint> sweep(const std::vector<ListenWindow> &windows, const ListenOptions &o,
                              const std::vector<std::string> &classNames, int64_t rate,
                              int64_t hop, const std::vector<TruthWord> &truth, double seconds,
                              const std::vector<int> &averages,
                              const std::vector<double> &thresholds)
{
    std::vector<SweepPoint> out;
    for (int average : averages)
        for (double threshold : thresholds) {
            ListenOptions at = o;
            at.average = average;
            at.threshold = threshold;
            Detector detect(at, classNames, rate, hop);
            TruthJudge judge(truth);
            ListenWindow w; // one, refilled: an hour is 36,000 windows a setting
            for (const ListenWindow &kept : windows) {
                w.index = kept.index;
                w.start = kept.start;
                w.end = kept.end;
                w.centred = kept.centred;
                w.probabilities.assign(kept.probabilities.begin(), kept.probabilities.end());
                Detection d;
                int64_t near = -1;
                if (detect.step(w, d)) judge.judge(d, near);
            }
            out.push_back({average, threshold, judge.score(seconds)});
        }
    return out;
}

const SweepPoint *bestWithin(const std::vector<SweepPoint> &points, double budget, int average)
{
    const SweepPoint *best = nullptr;
    for (const SweepPoint &p : points) {
        if (p.score.falseAlarmsPerHour() > budget + 1e-9) continue;
        auto key = [average](const SweepPoint &q) {
            return std::make_tuple(q.score.found, -q.score.falseAlarms, q.threshold,
                                   -std::abs(q.average - average), q.average);
        };
        if (!best || key(p) > key(*best)) best = &p;
    }
    return best;
}

} // namespace fb::exec
