#include "core/data/utterances.h"

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
    // Frame levels in dB full scale (RMS; a full-scale sine is -3 dB).
    std::vector<double> db;
    for (int64_t s = 0; s + frame <= n; s += hop) {
        double e = 0;
        for (int64_t k = s; k < s + frame; ++k)
            e += double(x[size_t(k)]) * double(x[size_t(k)]);
        db.push_back(10.0 * std::log10(std::max(e / double(frame), 1e-12)));
    }
    std::vector<double> sorted = db;
    const size_t at = std::min(
        sorted.size() - 1, size_t(std::clamp(o.floorPercentile, 0.0, 1.0) * double(sorted.size())));
    std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(at), sorted.end());
    const double floor = sorted[at];
    const double threshold = std::max(floor + o.aboveFloorDb, o.minDb);

    // Stretches of speech frames, joined over short pauses.
    std::vector<Utterance> out;
    const int64_t gap = std::llround(o.mergeGapMs * 1e-3 * double(sampleRate));
    for (size_t f = 0; f < db.size(); ++f) {
        if (db[f] < threshold) continue;
        const int64_t start = int64_t(f) * hop, end = int64_t(f) * hop + frame;
        if (!out.empty() && start - out.back().end <= gap) {
            out.back().end = end;
            out.back().peakDb = std::max(out.back().peakDb, db[f]);
        } else {
            out.push_back({start, end, db[f]});
        }
    }
    const int64_t shortest = std::llround(o.minSpeechMs * 1e-3 * double(sampleRate));
    std::erase_if(out, [&](const Utterance &u) { return u.end - u.start < shortest; });
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
