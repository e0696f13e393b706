#pragma once

// WAV files made by tests byte by byte, so that no audio library is involved in making what the
// audio readers are tested on.

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace fixture {

// A 16-bit PCM WAV file: the 44-byte RIFF header, then interleaved samples.
inline void writeWav(const QString &path, const std::vector<float> &interleaved, int channels,
                     int rate, int64_t claimFrames = -1)
{
    QDir().mkpath(QFileInfo(path).path());
    const uint32_t frames =
        uint32_t(claimFrames >= 0 ? claimFrames : int64_t(interleaved.size()) / channels);
    const uint32_t dataBytes = frames * uint32_t(channels) * 2;
    QByteArray b;
    auto u32 = [&b](uint32_t v) { b.append(reinterpret_cast<const char *>(&v), 4); };
    auto u16 = [&b](uint16_t v) { b.append(reinterpret_cast<const char *>(&v), 2); };
    b.append("RIFF");
    u32(36 + dataBytes);
    b.append("WAVEfmt ");
    u32(16);
    u16(1); // PCM
    u16(uint16_t(channels));
    u32(uint32_t(rate));
    u32(uint32_t(rate * channels * 2));
    u16(uint16_t(channels * 2));
    u16(16);
    b.append("data");
    u32(dataBytes);
    for (float v : interleaved)
        u16(uint16_t(int16_t(std::lround(std::clamp(v, -1.0f, 1.0f) * 32767.0f))));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(b) != b.size())
        qFatal("cannot write %s", qPrintable(path));
}

} // namespace fixture
