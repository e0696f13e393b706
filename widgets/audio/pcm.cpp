#include "widgets/audio/pcm.h"

#include "core/data/audio_files.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fb::widgets {

std::vector<float> monoFromPcm(const QByteArray &pcm, const QAudioFormat &format, qsizetype *used)
{
    const int channels = std::max(1, format.channelCount());
    const int size = std::max(1, format.bytesPerSample());
    const qsizetype frames = pcm.size() / (qsizetype(size) * channels);
    std::vector<float> mono(size_t(frames), 0.0f);
    for (qsizetype f = 0; f < frames; ++f) {
        float v = 0;
        for (int c = 0; c < channels; ++c)
            v += format.normalizedSampleValue(pcm.constData() + (f * channels + c) * size);
        mono[size_t(f)] = v / float(channels);
    }
    if (used) *used = frames * size * channels;
    return mono;
}

QByteArray int16FromFloats(const float *x, size_t n)
{
    QByteArray out(qsizetype(n) * 2, Qt::Uninitialized);
    for (size_t i = 0; i < n; ++i) {
        const qint16 s = qint16(std::lround(std::clamp(x[i], -1.0f, 1.0f) * 32767.0f));
        std::memcpy(out.data() + i * 2, &s, 2);
    }
    return out;
}

QByteArray wavFromPcm(const QByteArray &pcm, const QAudioFormat &format)
{
    const int channels = std::max(1, format.channelCount());
    const int bytesPerSample = std::max(1, format.bytesPerSample());
    std::vector<float> samples(size_t(pcm.size() / bytesPerSample));
    for (size_t i = 0; i < samples.size(); ++i)
        samples[i] = format.normalizedSampleValue(pcm.constData() + i * size_t(bytesPerSample));
    const QByteArray data = int16FromFloats(samples.data(), samples.size());
    QByteArray wav;
    auto u32 = [&wav](quint32 v) { wav.append(reinterpret_cast<const char *>(&v), 4); };
    auto u16 = [&wav](quint16 v) { wav.append(reinterpret_cast<const char *>(&v), 2); };
    wav.append("RIFF");
    u32(quint32(36 + data.size()));
    wav.append("WAVEfmt ");
    u32(16);
    u16(1); // PCM
    u16(quint16(channels));
    u32(quint32(format.sampleRate()));
    u32(quint32(format.sampleRate() * channels * 2));
    u16(quint16(channels * 2));
    u16(16);
    wav.append("data");
    u32(quint32(data.size()));
    wav.append(data);
    return wav;
}

QStringList recordingPatterns()
{
    QStringList patterns;
    for (const std::string &suffix : data::recordingSuffixes())
        patterns << QStringLiteral("*.") + QString::fromStdString(suffix);
    return patterns;
}

} // namespace fb::widgets
