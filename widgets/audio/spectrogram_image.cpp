#include "widgets/audio/spectrogram_image.h"

#include "core/data/audio_transforms.h"

#include <algorithm>
#include <cmath>

namespace fb::widgets {

namespace {
constexpr int kBands = 40;
} // namespace

std::vector<float> logMel(const std::vector<float> &samples, int64_t sampleRate, int *frames)
{
    *frames = 0;
    if (samples.empty() || sampleRate < 1000) return {};
    data::SpectrogramOptions o;
    o.kind = data::SpectrogramOptions::Kind::Mel;
    o.sampleRate = sampleRate;
    o.nFft = sampleRate > 24000 ? 1024 : 512;
    o.hop = std::max<int64_t>(1, sampleRate / 100);
    o.nMels = kBands;
    o.fMin = 20;
    o.topDb = 0;
    const data::Spectrogram s(o);
    const Shape in{1, 1, int64_t(samples.size())};
    const auto out = s.outputShape(in);
    if (!out.ok()) return {};
    std::vector<float> db(size_t(out.value().numel()));
    s.apply(samples.data(), db.data(), 1, in, nullptr);
    *frames = int(out.value()[2]);
    return db;
}

QRgb heatColour(double level)
{
    static const double stops[5][3] = {
        {0, 0, 4}, {80, 18, 123}, {183, 55, 121}, {251, 136, 97}, {252, 253, 191}};
    const double v = std::clamp(std::isfinite(level) ? level : 0.0, 0.0, 1.0) * 4.0;
    const int i = std::min(3, int(v));
    const double f = v - i;
    auto mix = [&](int c) {
        return int(std::lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c])));
    };
    return qRgb(mix(0), mix(1), mix(2));
}

QImage levelsImage(const std::vector<float> &db, int rows, int frames, float top, float rangeDb)
{
    if (rows <= 0 || frames <= 0 || db.size() != size_t(rows) * size_t(frames)) return {};
    QImage img(frames, rows, QImage::Format_RGB32);
    for (int r = 0; r < rows; ++r) {
        QRgb *line =
            reinterpret_cast<QRgb *>(img.scanLine(rows - 1 - r)); // low bands at the bottom
        for (int t = 0; t < frames; ++t)
            line[t] = heatColour((db[size_t(r) * size_t(frames) + size_t(t)] - (top - rangeDb)) /
                                 std::max(1e-3f, rangeDb));
    }
    return img;
}

QImage spectrogramImage(const std::vector<float> &samples, int64_t sampleRate)
{
    int frames = 0;
    const std::vector<float> db = logMel(samples, sampleRate, &frames);
    if (db.empty()) return {};
    float top = -1e30f;
    for (float v : db)
        if (std::isfinite(v)) top = std::max(top, v);
    return levelsImage(db, kBands, frames, top, 80.0f);
}

} // namespace fb::widgets
