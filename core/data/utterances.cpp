#include "core/data/utterances.h"

#include "core/data/audio_files.h"

#include <sndfile.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace fb::data {

std::vector<Utterance> findUtterances(const std::vector<float> &x, int64_t sampleRate,
                                      const UtteranceOptions &o)
{
    const int64_t frame = std::max<int64_t>(1, std::llround(o.frameMs * 1e-3 * double(sampleRate)));
    const int64_t hop = std::max<int64_t>(1, std::llround(o.hopMs * 1e-3 * double(sampleRate)));
    const int64_t n = int64_t(x.size());
    if (n < frame) return {};
    // Frame levels in dB full scale (RMS about the frame's mean, as audibleRange measures: a DC
    // offset, a cheap sound card's, is no sound; a full-scale sine is -3 dB).
    std::vector<double> db;
    for (int64_t s = 0; s + frame <= n; s += hop)
        db.push_back(10.0 *
                     std::log10(std::max(powerAboutMean(x.data() + s, size_t(frame)), 1e-12)));
    // The noise floor, over the frames that hold any sound: digital silence (a zero-padded file,
    // a muted stretch) would otherwise put it at -120 dB and every quiet room frame above it.
    std::vector<double> sorted;
    for (double v : db)
        if (v > -90.0) sorted.push_back(v);
    double floor = -120.0;
    if (!sorted.empty()) {
        const size_t at =
            std::min(sorted.size() - 1,
                     size_t(std::clamp(o.floorPercentile, 0.0, 1.0) * double(sorted.size())));
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(at), sorted.end());
        floor = sorted[at];
    }
    const double threshold = std::max(floor + o.aboveFloorDb, o.minDb);
    std::vector<bool> loud(db.size());
    for (size_t f = 0; f < db.size(); ++f)
        loud[f] = db[f] >= threshold;

    // Stretches of speech frames [first, last], joined over short pauses.
    const int64_t gapFrames = std::llround(o.mergeGapMs / o.hopMs);
    std::vector<std::pair<size_t, size_t>> stretches;
    for (size_t f = 0; f < db.size(); ++f) {
        if (!loud[f]) continue;
        if (!stretches.empty() && int64_t(f - stretches.back().second) <= gapFrames + 1)
            stretches.back().second = f;
        else
            stretches.push_back({f, f});
    }
    // A stretch longer than a word may be (words said close together) is split at its longest
    // pause, again and again, so that each clip holds one word.
    const int64_t longest = std::llround(o.maxSpeechMs / o.hopMs);
    std::vector<std::pair<size_t, size_t>> words;
    std::vector<std::pair<size_t, size_t>> todo(stretches.rbegin(), stretches.rend());
    while (!todo.empty()) {
        const auto [first, last] = todo.back();
        todo.pop_back();
        size_t bestStart = 0, bestLength = 0;
        if (o.maxSpeechMs > 0 && int64_t(last - first + 1) > longest) {
            for (size_t f = first; f <= last;) {
                if (loud[f]) {
                    ++f;
                    continue;
                }
                size_t e = f;
                while (e <= last && !loud[e])
                    ++e;
                if (e - f > bestLength) bestStart = f, bestLength = e - f;
                f = e;
            }
        }
        if (bestLength == 0) {
            words.push_back({first, last});
            continue;
        }
        // The right part first on the stack's top after the left: order is kept.
        todo.push_back({bestStart + bestLength, last});
        todo.push_back({first, bestStart - 1});
    }

    std::vector<Utterance> out;
    const int64_t shortest = std::llround(o.minSpeechMs * 1e-3 * double(sampleRate));
    for (const auto &[first, last] : words) {
        Utterance u{int64_t(first) * hop, int64_t(last) * hop + frame, -1e300};
        for (size_t f = first; f <= last; ++f)
            u.peakDb = std::max(u.peakDb, db[f]);
        if (u.end - u.start >= shortest) out.push_back(u);
    }
    return out;
}

std::vector<float> clipAround(const std::vector<float> &x, int64_t centre, int64_t length)
{
    std::vector<float> clip(size_t(std::max<int64_t>(0, length)), 0.0f);
    const int64_t first = centre - length / 2;
    for (int64_t k = 0; k < length; ++k) {
        const int64_t s = first + k;
        if (s >= 0 && s < int64_t(x.size())) clip[size_t(k)] = x[size_t(s)];
    }
    return clip;
}

std::vector<std::vector<float>> cutUtterances(const std::vector<float> &x, int64_t sampleRate,
                                              int64_t length, const UtteranceOptions &o)
{
    std::vector<std::vector<float>> clips;
    for (const Utterance &u : findUtterances(x, sampleRate, o))
        clips.push_back(clipAround(x, u.centre(), length));
    return clips;
}

std::vector<std::vector<float>> cutWindows(const std::vector<float> &x, int64_t length)
{
    std::vector<std::vector<float>> clips;
    if (length <= 0) return clips;
    for (size_t s = 0; s + size_t(length) <= x.size(); s += size_t(length))
        clips.emplace_back(x.begin() + std::ptrdiff_t(s),
                           x.begin() + std::ptrdiff_t(s + size_t(length)));
    return clips;
}

Status writeWav(const std::string &path, const std::vector<float> &x, int64_t sampleRate)
{
    if (sampleRate <= 0 || sampleRate > 1000000)
        return fileError(path, "cannot write a recording at " + std::to_string(sampleRate) + " Hz");
    const std::string part = path + ".part";
    SF_INFO info{};
    info.samplerate = int(sampleRate);
    info.channels = 1;
    info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    SNDFILE *f = sf_open(part.c_str(), SFM_WRITE, &info);
    if (!f) return fileError(path, std::string("cannot write it: ") + sf_strerror(nullptr));
    // Clipped to full scale, so a loud take saturates instead of wrapping around.
    sf_command(f, SFC_SET_CLIPPING, nullptr, SF_TRUE);
    const sf_count_t wrote = sf_write_float(f, x.data(), sf_count_t(x.size()));
    const int closed = sf_close(f);
    if (wrote != sf_count_t(x.size()) || closed != 0) {
        std::remove(part.c_str());
        return fileError(path, "cannot write it (the disk may be full)");
    }
    if (std::rename(part.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(part.c_str());
        return fileError(path, "cannot write it: " + why);
    }
    return {};
}

} // namespace fb::data
