// Audio sources and features (core/data/audio_files.h, audio_transforms.h): the spectrogram,
// mel, log-mel, MFCC and PCEN features against values computed independently with NumPy
// (tests/audio_reference.py, librosa's definitions, float64), WAV files written here byte by
// byte read back mono and resampled, labels and speakers from file names, a split that keeps
// speakers apart, damaged recordings skipped and named, and the random stages' contracts.

#include "core/base/rng.h"
#include "core/data/audio_files.h"
#include "core/data/audio_transforms.h"
#include "core/data/file_split.h"
#include "core/data/utterances.h"
#include "wav_fixture.h"

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <numeric>
#include <set>

using namespace fb;
using namespace fb::data;
using fixture::writeWav;
using nlohmann::json;

namespace {

json reference()
{
    std::ifstream in(FLOWBENCH_SOURCE_DIR "/tests/data/audio_reference.json");
    if (!in) qFatal("tests/data/audio_reference.json is missing");
    return json::parse(in);
}

SpectrogramOptions optionsOf(const json &r, SpectrogramOptions::Kind kind)
{
    SpectrogramOptions o;
    o.kind = kind;
    o.sampleRate = r["sample_rate"];
    o.nFft = r["n_fft"];
    o.hop = r["hop"];
    o.nMels = r["n_mels"];
    o.nMfcc = r["n_mfcc"];
    o.fMin = r["f_min"];
    o.fMax = r["f_max"];
    o.topDb = r["top_db"];
    return o;
}

std::vector<float> run(const Transform &t, const std::vector<float> &x, Shape &shape)
{
    const Shape in{1, 1, int64_t(x.size())};
    shape = t.outputShape(in).value();
    std::vector<float> y(size_t(shape.numel()));
    const uint64_t seed = 0;
    t.apply(x.data(), y.data(), 1, in, &seed);
    return y;
}

// Largest |a - b| over a reference matrix [rows][frames] and our [1, rows, frames] output.
double maxError(const json &ref, const std::vector<float> &ours, int64_t frames)
{
    double worst = 0;
    for (size_t r = 0; r < ref.size(); ++r)
        for (size_t t = 0; t < ref[r].size(); ++t)
            worst = std::max(
                worst, std::abs(ref[r][t].get<double>() - double(ours[r * size_t(frames) + t])));
    return worst;
}

std::vector<float> tone(double hz, int rate, double seconds, float amplitude = 0.5f)
{
    std::vector<float> x(size_t(std::lround(seconds * rate)));
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = amplitude * float(std::sin(2 * std::numbers::pi * hz * double(i) / rate));
    return x;
}

// The samples written to PATH as a WAV file and decoded as audio_folder decodes them: at 16 kHz,
// to `seconds`, trimmed at `trimDb` (set on o, which a later decode in the same test reuses).
Result<std::vector<float>> writtenAndDecoded(const QString &path, const std::vector<float> &x,
                                             int channels, int rate, AudioFilesOptions &o,
                                             double seconds, double trimDb)
{
    writeWav(path, x, channels, rate);
    o.sampleRate = 16000;
    o.seconds = seconds;
    o.trimDb = trimDb;
    return decodeAudioFile(path.toStdString(), o);
}

AudioFilesOptions byPattern(const char *subset = "all")
{
    AudioFilesOptions o;
    o.labels = AudioFilesOptions::Labels::Pattern;
    o.subset = subset;
    o.trimDb = 0;
    o.seconds = 0.25;
    return o;
}

} // namespace

class TestAudio : public QObject {
    Q_OBJECT

private slots:
    void featuresMatchTheNumPyReference()
    {
        const json r = reference();
        const std::vector<float> x = r["signal"].get<std::vector<float>>();
        const int64_t frames = r["frames"];
        Shape s;

        const Spectrogram mel(optionsOf(r, SpectrogramOptions::Kind::Mel));
        // The filter bank itself, weight for weight.
        const json &filters = r["mel_filters"];
        double worst = 0;
        const int64_t bins = int64_t(filters[0].size());
        for (size_t m = 0; m < filters.size(); ++m)
            for (int64_t b = 0; b < bins; ++b)
                worst = std::max(worst,
                                 std::abs(filters[m][size_t(b)].get<double>() -
                                          double(mel.melFilters()[m * size_t(bins) + size_t(b)])));
        QVERIFY2(worst < 1e-7, qPrintable(QString::number(worst)));

        const std::vector<float> logmel = run(mel, x, s);
        QCOMPARE(s, (Shape{1, 40, frames}));
        worst = maxError(r["log_mel"], logmel, frames);
        qInfo("log-mel: largest difference %.2e dB", worst);
        QVERIFY2(worst < 2e-3, qPrintable(QString::number(worst)));

        // Mel power without dB: relative to each value.
        SpectrogramOptions linear = optionsOf(r, SpectrogramOptions::Kind::Mel);
        linear.toDb = false;
        const std::vector<float> power = run(Spectrogram(linear), x, s);
        double rel = 0;
        for (size_t m = 0; m < r["mel"].size(); ++m)
            for (int64_t t = 0; t < frames; ++t) {
                const double want = r["mel"][m][size_t(t)].get<double>();
                const double got = power[m * size_t(frames) + size_t(t)];
                if (want > 1e-6) rel = std::max(rel, std::abs(got - want) / want);
            }
        qInfo("mel power: largest relative difference %.2e", rel);
        QVERIFY2(rel < 1e-3, qPrintable(QString::number(rel)));

        // PCEN of that mel power.
        Pcen::Options po;
        po.framesPerSecond = double(linear.sampleRate) / double(linear.hop);
        const Pcen pcen(po);
        QVERIFY(pcen.outputShape(s).ok());
        std::vector<float> normalized(power.size());
        const uint64_t seed = 0;
        pcen.apply(power.data(), normalized.data(), 1, s, &seed);
        worst = maxError(r["pcen"], normalized, frames);
        qInfo("PCEN: largest difference %.2e", worst);
        QVERIFY2(worst < 1e-3, qPrintable(QString::number(worst)));

        const std::vector<float> stft =
            run(Spectrogram(optionsOf(r, SpectrogramOptions::Kind::Power)), x, s);
        QCOMPARE(s, (Shape{1, 257, frames}));
        // Cells far below the loudest lose digits in float32; the floor is top_db below it.
        worst = maxError(r["power_db"], stft, frames);
        qInfo("power dB: largest difference %.2e dB", worst);
        QVERIFY2(worst < 2e-2, qPrintable(QString::number(worst)));

        const std::vector<float> mfcc =
            run(Spectrogram(optionsOf(r, SpectrogramOptions::Kind::Mfcc)), x, s);
        QCOMPARE(s, (Shape{1, 13, frames}));
        worst = maxError(r["mfcc"], mfcc, frames);
        qInfo("MFCC: largest difference %.2e", worst);
        QVERIFY2(worst < 5e-3, qPrintable(QString::number(worst)));

        // A waveform is required.
        QVERIFY(!mel.outputShape(Shape{1, 28, 28}).ok());
    }

    void pcenDividesSteadySoundAwayAndKeepsOnsets()
    {
        // Two seconds of a steady 500 Hz tone, quiet (0.005) or loud (0.5): a fan's hum. A
        // quieter 2 kHz tone (0.05) starts at 1.5 s: a word.
        SpectrogramOptions o;
        o.kind = SpectrogramOptions::Kind::Mel;
        o.toDb = false;
        o.fMin = 20;
        const Spectrogram mel(o);
        Pcen::Options po;
        po.framesPerSecond = 100;
        const Pcen pcen(po);
        const std::vector<double> hz = mel.rowFrequencies();
        auto rowOf = [&](double f) {
            return int64_t(std::min_element(hz.begin(), hz.end(),
                                            [&](double a, double b) {
                                                return std::abs(a - f) < std::abs(b - f);
                                            }) -
                           hz.begin());
        };
        const int64_t hum = rowOf(500), word = rowOf(2000);
        auto features = [&](float humAmplitude, std::vector<float> &energy) {
            std::vector<float> x = tone(500, 16000, 2.0, humAmplitude);
            const std::vector<float> late = tone(2000, 16000, 0.5, 0.05f);
            for (size_t i = 0; i < late.size(); ++i)
                x[24000 + i] += late[i];
            Shape s;
            energy = run(mel, x, s);
            std::vector<float> y(energy.size());
            const uint64_t seed = 0;
            pcen.apply(energy.data(), y.data(), 1, s, &seed);
            return y;
        };
        std::vector<float> quietE, loudE;
        const std::vector<float> quiet = features(0.005f, quietE), loud = features(0.5f, loudE);
        const int64_t frames = int64_t(quiet.size() / hz.size());
        auto at = [&](const std::vector<float> &v, int64_t row, int64_t t) {
            return double(v[size_t(row * frames + t)]);
        };
        // The hum 40 dB apart in energy, nearly the same after PCEN (its gain 0.98 leaves
        // 1/50 of the level: 10^(4/50) = 1.2 times).
        const double dB = 10 * std::log10(at(loudE, hum, 140) / at(quietE, hum, 140));
        qInfo("hum: %.1f dB apart in energy, PCEN %.3f and %.3f", dB, at(quiet, hum, 140),
              at(loud, hum, 140));
        QVERIFY(dB > 39 && dB < 41);
        QVERIFY(at(loud, hum, 140) > at(quiet, hum, 140));
        QVERIFY(at(loud, hum, 140) < 1.25 * at(quiet, hum, 140));
        // The word's onset stands over the loud hum, though 20 dB under it in energy, and it
        // fades as the band's past catches up with it.
        double onset = 0;
        for (int64_t t = 148; t < 160; ++t)
            onset = std::max(onset, at(loud, word, t));
        qInfo("word: onset %.3f, 0.4 s later %.3f; loud hum %.3f", onset, at(loud, word, 195),
              at(loud, hum, 195));
        QVERIFY(at(loudE, word, 170) < 0.05 * at(loudE, hum, 170));
        QVERIFY(onset > 4 * at(loud, hum, 140));
        QVERIFY(onset > 2 * at(loud, word, 195));
        // Refused, saying why: no spectrogram before it, or one in decibels.
        QVERIFY(!Pcen(Pcen::Options{}).outputShape(Shape{1, 40, 101}).ok());
        Pcen::Options inDb = po;
        inDb.inDb = true;
        const auto refused = Pcen(inDb).outputShape(Shape{1, 40, 101});
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().str().find("to_db false") != std::string::npos);
    }

    void wavFilesBecomeMonoSamplesAtTheRate()
    {
        QTemporaryDir dir;
        // Stereo at 44.1 kHz: left a 440 Hz tone, right silent; 0.5 s.
        const std::vector<float> left = tone(440, 44100, 0.5);
        std::vector<float> stereo;
        for (float v : left) {
            stereo.push_back(v);
            stereo.push_back(0.0f);
        }
        AudioFilesOptions o;
        auto x = writtenAndDecoded(dir.filePath("a.wav"), stereo, 2, 44100, o, 0.5, 0);
        QVERIFY2(x.ok(), x.ok() ? "" : x.error().str().c_str());
        QCOMPARE(x->size(), size_t(8000));
        // Mono is the mean of the channels: amplitude 0.25. Resampling keeps the frequency:
        // count the zero crossings of the middle (440 Hz: 2 per period).
        float peak = 0;
        int crossings = 0;
        for (size_t i = 1000; i < 7000; ++i) {
            peak = std::max(peak, std::abs((*x)[i]));
            crossings += ((*x)[i - 1] < 0) != ((*x)[i] < 0);
        }
        QVERIFY2(std::abs(peak - 0.25f) < 0.01f, qPrintable(QString::number(peak)));
        QVERIFY2(std::abs(crossings - 330) <= 2,
                 qPrintable(QString::number(crossings))); // 6000/16000 s

        // Shorter than the window: centred, silence around it. Trimming cuts leading silence.
        std::vector<float> late(8000, 0.0f);
        const std::vector<float> blip = tone(1000, 16000, 0.1);
        std::copy(blip.begin(), blip.end(), late.begin() + 6000);
        writeWav(dir.filePath("late.wav"), late, 1, 16000);
        o.seconds = 0.5;
        o.trimDb = 40;
        auto c = decodeAudioFile(dir.filePath("late.wav").toStdString(), o);
        QVERIFY(c.ok());
        // The 1600-sample blip (a little more with the frames' edges) now sits mid-window.
        QCOMPARE((*c)[0], 0.0f);
        QVERIFY(std::abs((*c)[4000]) > 0.0f || std::abs((*c)[4001]) > 0.0f);
        QCOMPARE((*c)[7999], 0.0f);

        // Longer than the window, in noise 17 dB under the word, which trimming at 30 dB keeps
        // whole: cropped about the word with cropToSound (infer's), not the recording's middle,
        // which misses it (a tone of 0.2 s at 0.3 s into 2.5 s). Without the noise, trimmed to
        // it and centred either way.
        for (const double noise : {0.05, 0.0}) {
            std::vector<float> take(size_t(16000 * 2.5), 0.0f);
            uint64_t state = 7;
            for (float &v : take) {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                v = float(noise * 1.732 * (double(state >> 11) / double(1ULL << 53) * 2 - 1));
            }
            const std::vector<float> word = tone(700, 16000, 0.2);
            for (size_t i = 0; i < word.size(); ++i)
                take[4800 + i] += word[i];
            writeWav(dir.filePath("take.wav"), take, 1, 16000);
            o.seconds = 1.0;
            o.trimDb = 30;
            o.cropToSound = false;
            auto middle = decodeAudioFile(dir.filePath("take.wav").toStdString(), o);
            QVERIFY(middle.ok());
            double heard = 0;
            for (float v : *middle)
                heard = std::max(heard, double(std::abs(v)));
            QVERIFY2(noise > 0 ? heard < 0.2 : heard > 0.4, qPrintable(QString::number(heard)));
            o.cropToSound = true;
            auto cut = decodeAudioFile(dir.filePath("take.wav").toStdString(), o);
            o.cropToSound = false;
            QVERIFY(cut.ok());
            QCOMPARE(cut->size(), size_t(16000));
            // Where the tone's energy lies in the window: its middle within 20 ms of the window's.
            double energy = 0, moment = 0;
            for (size_t i = 0; i < cut->size(); ++i) {
                const double e = double((*cut)[i]) * (*cut)[i];
                energy += e;
                moment += e * double(i);
            }
            const double centre = moment / energy / 16000.0;
            QVERIFY2(std::abs(centre - 0.5) < 0.02,
                     qPrintable(QString("noise %1: centred at %2 s").arg(noise).arg(centre)));
            double loud = 0;
            for (size_t i = 6400; i < 9600; ++i)
                loud = std::max(loud, double(std::abs((*cut)[i])));
            QVERIFY2(loud > 0.4, qPrintable(QString::number(loud))); // the tone is there
        }

        // How long a recording lasts, from its header (the Tune dialog's hint): 0.5 s both, and
        // what is not a recording is named.
        QCOMPARE(recordingSeconds(dir.filePath("a.wav").toStdString()).value(), 0.5);
        QCOMPARE(recordingSeconds(dir.filePath("late.wav").toStdString()).value(), 0.5);
        QFile text(dir.filePath("words.wav"));
        QVERIFY(text.open(QIODevice::WriteOnly) && text.write("not a recording") > 0);
        text.close();
        const auto notAudio = recordingSeconds(text.fileName().toStdString());
        QVERIFY(!notAudio.ok());
        QVERIFY2(notAudio.error().file == text.fileName().toStdString() &&
                     notAudio.error().message.find("not audio") != std::string::npos,
                 notAudio.error().str().c_str());
    }

    // Files that are whole though their headers do not add up are read whole: a header written
    // before the length was known (a writer to a pipe: `espeak-ng --stdout > x.wav` leaves
    // 0x7ffff000 in its sizes, ffmpeg and arecord 0xffffffff and 0x7fffffff), a byte rate off by
    // one (sox's IMA ADPCM), an MP3 (whose frame count libsndfile estimates: 34,720 for 34,560),
    // Ogg Opus. A file cut short is still refused, and a stub of an MP3 is named as no audio.
    // Before, each of the whole ones was "truncated".
    void wholeFilesWithOddHeadersAreRead()
    {
        QTemporaryDir dir;
        const std::vector<float> x = tone(440, 16000, 0.5);
        const QString whole = dir.filePath("whole.wav");
        writeWav(whole, x, 1, 16000);
        auto reference = readRecording(whole.toStdString(), 16000);
        QVERIFY2(reference.ok(), reference.ok() ? "" : reference.error().str().c_str());
        QCOMPARE(reference->size(), x.size());
        QFile in(whole);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray bytes = in.readAll();
        auto patched = [&](const QString &name, std::vector<std::pair<int, uint32_t>> fields) {
            QByteArray b = bytes;
            for (const auto &[offset, value] : fields)
                b.replace(offset, 4, reinterpret_cast<const char *>(&value), 4);
            QFile out(dir.filePath(name));
            if (!out.open(QIODevice::WriteOnly) || out.write(b) != b.size())
                qFatal("cannot write %s", qPrintable(out.fileName()));
            return out.fileName().toStdString();
        };
        // RIFF's size is at byte 4, the byte rate at 28, the data chunk's size at 40.
        for (const auto &[name, size] :
             std::vector<std::pair<QString, uint32_t>>{{"espeak-pipe.wav", 0x7ffff000u},
                                                       {"ffmpeg-pipe.wav", 0xffffffffu},
                                                       {"arecord-pipe.wav", 0x7fffffffu}}) {
            auto r = readRecording(patched(name, {{4, size}, {40, size}}), 16000);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
            QVERIFY2(*r == *reference, qPrintable(name));
        }
        auto rate = readRecording(patched("byte-rate.wav", {{28, 32001}}), 16000);
        QVERIFY2(rate.ok(), rate.ok() ? "" : rate.error().str().c_str());
        QVERIFY(*rate == *reference);
        // A header that promises twice what is there is a file cut short, as before.
        auto cut = readRecording(patched("cut.wav", {{4, 36 + 32000}, {40, 32000}}), 16000);
        QVERIFY(!cut.ok());
        QVERIFY2(cut.error().message.find("truncated") != std::string::npos,
                 cut.error().str().c_str());

        // Sizes left at 0 by a recorder stopped before it wrote them: libsndfile reads no audio
        // in it, and the message says why a file of 16 KB holds none.
        auto stopped = readRecording(patched("stopped.wav", {{4, 0}, {40, 0}}), 16000);
        QVERIFY(!stopped.ok());
        QVERIFY2(stopped.error().message.find("before the header was written") != std::string::npos,
                 stopped.error().str().c_str());

        // MP3 and Opus, written by libsndfile (LAME and libopus: no other encoder is in a
        // Debian machine's runtime set), read back at their length and pitch.
        auto encoded = [&](const QString &name, int format) {
            SF_INFO info{};
            info.samplerate = 16000;
            info.channels = 1;
            info.format = format;
            const std::string path = dir.filePath(name).toStdString();
            SNDFILE *f = sf_open(path.c_str(), SFM_WRITE, &info);
            if (!f) qFatal("libsndfile cannot write %s: %s", path.c_str(), sf_strerror(nullptr));
            sf_writef_float(f, x.data(), sf_count_t(x.size()));
            sf_close(f);
            return path;
        };
        for (const auto &[name, format] : std::vector<std::pair<QString, int>>{
                 {"tone.mp3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III},
                 {"tone.opus", SF_FORMAT_OGG | SF_FORMAT_OPUS}}) {
            auto r = readRecording(encoded(name, format), 16000);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
            // The encoders' delay and padding: within two MP3 frames of the length.
            QVERIFY2(std::abs(int64_t(r->size()) - int64_t(x.size())) <= 2304,
                     qPrintable(QString("%1: %2 samples").arg(name).arg(r->size())));
            int crossings = 0;
            for (size_t i = 3001; i < 5000; ++i)
                crossings += ((*r)[i - 1] < 0) != ((*r)[i] < 0);
            QVERIFY2(std::abs(crossings - 110) <= 3, // 440 Hz over 2000 samples at 16 kHz
                     qPrintable(QString("%1: %2 crossings").arg(name).arg(crossings)));
        }
        {
            QFile stub(dir.filePath("stub.mp3"));
            QFile mp3(dir.filePath("tone.mp3"));
            QVERIFY(mp3.open(QIODevice::ReadOnly) && stub.open(QIODevice::WriteOnly));
            stub.write(mp3.read(100));
        }
        auto stub = readRecording(dir.filePath("stub.mp3").toStdString(), 16000);
        QVERIFY(!stub.ok());
        QVERIFY2(stub.error().message.find("does not exist") == std::string::npos,
                 stub.error().str().c_str());
        for (const char *suffix : {"wav", "flac", "ogg", "opus", "mp3"})
            QVERIFY2(std::ranges::count(recordingSuffixes(), suffix) == 1, suffix);
    }

    // A recording is read slice by slice (64 Ki frames), each mixed to mono and resampled as it
    // comes: the samples are those of converting the whole at once (monoAt, which the
    // microphone's takes go through), here over 3 s of 44.1 kHz stereo, two slices and a part.
    void slicesGiveTheSamplesOfTheWhole()
    {
        QTemporaryDir dir;
        std::vector<float> stereo;
        const std::vector<float> a = tone(440, 44100, 3.0), b = tone(1250, 44100, 3.0, 0.3f);
        for (size_t i = 0; i < a.size(); ++i) {
            stereo.push_back(a[i]);
            stereo.push_back(b[i]);
        }
        const QString path = dir.filePath("long.wav");
        writeWav(path, stereo, 2, 44100);
        // What the file holds, as 16-bit samples read back.
        std::vector<float> held(stereo.size());
        for (size_t i = 0; i < stereo.size(); ++i)
            held[i] = float(int16_t(std::lround(std::clamp(stereo[i], -1.0f, 1.0f) * 32767.0f))) /
                      32768.0f;
        auto whole = monoAt(held, 2, 44100, "whole", 16000);
        QVERIFY(whole.ok());
        auto sliced = readRecording(path.toStdString(), 16000);
        QVERIFY2(sliced.ok(), sliced.ok() ? "" : sliced.error().str().c_str());
        QCOMPARE(sliced->size(), whole->size());
        double worst = 0;
        for (size_t i = 0; i < whole->size(); ++i)
            worst = std::max(worst, double(std::abs((*sliced)[i] - (*whole)[i])));
        QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
    }

    // A DC offset or a slow drift is no sound: a word late in a longer recording with a constant
    // added (a cheap sound card's, 25 dB under the word), or a 4 Hz wander (a synthesizer's hum,
    // as far under it), is trimmed as it is without them, and lands in the middle of the window,
    // where counting them as sound kept the whole recording and cut the word out of the
    // window's second.
    void aDcOffsetIsNoSound()
    {
        QTemporaryDir dir;
        std::vector<float> quiet(24000, 0.0f); // 1.5 s
        const std::vector<float> word = tone(700, 16000, 0.2, 0.25f);
        std::copy(word.begin(), word.end(), quiet.begin() + 19200); // 1.2 to 1.4 s
        std::vector<float> offset = quiet;
        for (float &v : offset)
            v += 0.01f;
        const auto clean = audibleRange(quiet, 30), shifted = audibleRange(offset, 30);
        QVERIFY2(clean.first >= 18500 && clean.second <= 23000,
                 qPrintable(QString("%1 %2").arg(clean.first).arg(clean.second)));
        QVERIFY2(shifted == clean,
                 qPrintable(QString("%1 %2").arg(shifted.first).arg(shifted.second)));
        std::vector<float> wander = quiet;
        for (size_t i = 0; i < wander.size(); ++i)
            wander[i] += 0.014f * float(std::sin(2 * std::numbers::pi * 4.0 * double(i) / 16000));
        const auto drifted = audibleRange(wander, 30);
        auto apart = [](size_t a, size_t b) { return a > b ? a - b : b - a; };
        QVERIFY2(apart(drifted.first, clean.first) <= 128 && // a frame's hop
                     apart(drifted.second, clean.second) <= 128,
                 qPrintable(QString("%1 %2").arg(drifted.first).arg(drifted.second)));

        AudioFilesOptions o;
        auto x = writtenAndDecoded(dir.filePath("dc.wav"), offset, 1, 16000, o, 1.0, 30);
        QVERIFY2(x.ok(), x.ok() ? "" : x.error().str().c_str());
        float middle = 0, edges = 0; // the loudest sample in the middle quarter, and elsewhere
        for (size_t i = 0; i < x->size(); ++i) {
            float &loudest = i >= 6000 && i < 10000 ? middle : edges;
            loudest = std::max(loudest, std::abs((*x)[i]));
        }
        QVERIFY2(middle > 0.2f && edges < 0.05f,
                 qPrintable(QString("middle %1, edges %2").arg(middle).arg(edges)));
    }

    // The word a window is centred on, apart from its neighbours: three tones 150 ms apart in
    // a second, the middle one from 0.4 to 0.6 s. A silence of 100 ms parts them, so the middle
    // one alone is the stretch nearest the middle; asked for 200 ms, the three are one stretch.
    // When the window's middle lies in a silence, the nearer neighbour is the stretch.
    void theSoundNearestTheMiddleIsParted()
    {
        std::vector<float> x(16000, 0.0f);
        auto put = [&x](double from, double seconds, double hz) {
            const std::vector<float> t = tone(hz, 16000, seconds, 0.3f);
            std::copy(t.begin(), t.end(), x.begin() + std::ptrdiff_t(from * 16000));
        };
        put(0.05, 0.2, 500);
        put(0.4, 0.2, 700);
        put(0.75, 0.2, 900);
        const auto word = soundNearestMiddle(x, 30, 6, 1600);
        auto near = [](size_t at, double seconds) {
            return std::abs(double(at) - seconds * 16000) <= 512; // a frame
        };
        // Halfway through the silences either side: 0.325 to 0.675 s.
        QVERIFY2(near(word.first, 0.325) && near(word.second, 0.675),
                 qPrintable(QString("%1 %2").arg(word.first).arg(word.second)));
        const auto all = soundNearestMiddle(x, 30, 6, 3200);
        QVERIFY2(all.first == 0 && all.second == x.size(),
                 qPrintable(QString("%1 %2").arg(all.first).arg(all.second)));
        // A window from 0.28 s: its middle (0.64 s) lies in the silence after the middle tone,
        // 0.04 s from it and 0.11 s from the last one. From the window's start (the first
        // tone is not in it) to halfway to the last tone: 0 to 0.395 s of the window.
        std::vector<float> y(x.begin() + 4480, x.end());
        const auto later = soundNearestMiddle(y, 30, 6, 1600);
        QVERIFY2(later.first == 0 && near(later.second, 0.395),
                 qPrintable(QString("%1 %2").arg(later.first).arg(later.second)));
        const std::vector<float> silent(16000, 0.0f);
        QCOMPARE(soundNearestMiddle(silent, 30, 6, 1600), std::make_pair(size_t(0), size_t(16000)));
    }

    // A window's other words turned down to its noise floor, not silenced: a tone in the middle
    // of a second of noise (RMS 0.003) with a louder tone either side. Kept whole where asked;
    // the neighbours come down to about the floor (never to silence); the floor between them is
    // left as it was; nothing is made louder; the gain eases in over the fade.
    void othersAreTurnedDownToTheFloor()
    {
        std::vector<float> x(16000);
        uint32_t state = 7;
        for (float &v : x) { // uniform noise, RMS 0.003
            state = state * 1664525u + 1013904223u;
            v = 0.0052f * (float(state >> 8) / float(1 << 24) * 2.0f - 1.0f);
        }
        const std::vector<float> noisy = x;
        auto put = [&x](size_t from, size_t n, double hz) {
            const std::vector<float> t = tone(hz, 16000, double(n) / 16000, 0.3f);
            for (size_t i = 0; i < n; ++i)
                x[from + i] += t[i];
        };
        put(800, 3200, 500);   // 0.05 to 0.25 s
        put(6400, 3200, 700);  // 0.4 to 0.6 s
        put(12000, 3200, 900); // 0.75 to 0.95 s
        const std::vector<float> before = x;
        const size_t first = 5200, last = 10800, fade = 160;
        quietenAllBut(x, first, last, fade);
        auto rms = [](const std::vector<float> &v, size_t a, size_t b) {
            double s = 0;
            for (size_t i = a; i < b; ++i)
                s += double(v[i]) * double(v[i]);
            return std::sqrt(s / double(b - a));
        };
        for (size_t i = first; i < last; ++i)
            QCOMPARE(x[i], before[i]);
        for (size_t i = 0; i < x.size(); ++i)
            QVERIFY2(std::abs(x[i]) <= std::abs(before[i]) + 1e-7f, qPrintable(QString::number(i)));
        // The neighbours, 0.21 RMS before, at the floor's 0.003 give or take half, not 0.
        for (auto [a, b] : {std::pair<size_t, size_t>{1400, 3400}, {12600, 14600}}) {
            const double r = rms(x, a, b);
            QVERIFY2(r > 0.0015 && r < 0.0045, qPrintable(QString::number(r)));
        }
        // Noise alone (0.3 to 0.35 s, beside no tone) is as it was.
        QVERIFY2(std::abs(rms(x, 4900, 5100) - rms(noisy, 4900, 5100)) < 0.0005,
                 qPrintable(QString::number(rms(x, 4900, 5100))));
        // Just outside the kept part the gain is still near 1; a fade later, the floor's.
        std::vector<float> flat = tone(300, 16000, 1.0, 0.5f);
        for (size_t i = 4000; i < 12000; ++i)
            flat[i] *= 0.002f; // the quiet middle: the floor
        std::vector<float> eased = flat;
        quietenAllBut(eased, 3000, 13000, fade);
        QCOMPARE(eased[5000], flat[5000]);
        const double near = rms(eased, 13000, 13010) / rms(flat, 13000, 13010),
                     far = rms(eased, 14500, 16000) / rms(flat, 14500, 16000);
        QVERIFY2(near > 0.9 && far < 0.01, qPrintable(QString("%1 %2").arg(near).arg(far)));
    }

    // listen --warp's other hearings of a window: played faster, a tone is higher and a sound
    // nearer the middle, which stays where it is; the length is the window's.
    void stretchingKeepsTheMiddleAndScalesFrequency()
    {
        std::vector<float> x(16000, 0.0f);
        const std::vector<float> t = tone(500, 16000, 0.2); // 3200 samples
        std::copy(t.begin(), t.end(), x.begin() + 2000);    // 0.125 to 0.325 s
        auto span = [](const std::vector<float> &y) {
            size_t first = y.size(), last = 0;
            for (size_t i = 0; i < y.size(); ++i)
                if (std::abs(y[i]) > 0.05f) {
                    first = std::min(first, i);
                    last = i;
                }
            return std::pair{first, last};
        };
        auto crossings = [](const std::vector<float> &y, size_t from, size_t to) {
            int n = 0;
            for (size_t i = from + 1; i < to; ++i)
                n += (y[i - 1] < 0) != (y[i] < 0);
            return n;
        };
        QCOMPARE(stretchedAroundMiddle(x, 1.0), x);
        for (double f : {0.9, 1.1}) {
            const std::vector<float> y = stretchedAroundMiddle(x, f);
            QCOMPARE(y.size(), x.size());
            // Each sample's distance from the middle (8000) divided by f.
            const auto [first, last] = span(y);
            const double wantFirst = 8000 - (8000 - 2000) / f, wantLast = 8000 - (8000 - 5200) / f;
            QVERIFY2(std::abs(double(first) - wantFirst) < 40 &&
                         std::abs(double(last) - wantLast) < 40,
                     qPrintable(QString("%1: %2 to %3").arg(f).arg(first).arg(last)));
            // 500 Hz played f times as fast: 500 f Hz, 2 crossings a period, over 0.1 s.
            const int n = crossings(y, first + 200, first + 1800);
            QVERIFY2(std::abs(n - 2 * 500 * f * 0.1) <= 2, qPrintable(QString::number(n)));
        }
        // A sound at the middle stays there; a window that is silence stays silence.
        std::vector<float> click(16000, 0.0f);
        click[8000] = 1.0f;
        const std::vector<float> c = stretchedAroundMiddle(click, 1.1);
        QVERIFY(std::max_element(c.begin(), c.end()) - c.begin() - 8000 <= 2);
        QCOMPARE(stretchedAroundMiddle(std::vector<float>(100, 0.0f), 0.8),
                 std::vector<float>(100, 0.0f));
    }

    // speed_perturb: each sample at its own speed within the range, seeded, centred, its length
    // kept; p 0 changes nothing; an image is refused.
    void speedPerturbationPlaysEachSampleAtASpeedInItsRange()
    {
        const int64_t len = 16000;
        const std::vector<float> t = tone(500, 16000, 0.4); // 0.3 to 0.7 s, centred
        std::vector<float> x(size_t(len), 0.0f);
        std::copy(t.begin(), t.end(), x.begin() + 4800);
        const Shape s{1, 1, len};
        SpeedPerturb speed(0.1f, 1.0f);
        QVERIFY(speed.random());
        QCOMPARE(speed.outputShape(s).value(), s);
        QVERIFY(!speed.outputShape(Shape{1, 28, 28}).ok());
        QVERIFY(!SpeedPerturb(1.0f, 1.0f).outputShape(s).ok());

        std::vector<float> two(x);
        two.insert(two.end(), x.begin(), x.end());
        std::vector<double> hz;
        for (uint64_t seed = 1; seed <= 24; seed += 2) {
            const uint64_t seeds[2] = {seed, seed + 1};
            std::vector<float> a(two.size()), b(two.size());
            speed.apply(two.data(), a.data(), 2, s, seeds);
            speed.apply(two.data(), b.data(), 2, s, seeds);
            QCOMPARE(a, b); // the seed decides
            for (int k = 0; k < 2; ++k) {
                const std::vector<float> y(a.begin() + k * len, a.begin() + (k + 1) * len);
                size_t first = y.size(), last = 0;
                for (size_t i = 0; i < y.size(); ++i)
                    if (std::abs(y[i]) > 0.05f) {
                        first = std::min(first, i);
                        last = i;
                    }
                // Played f times as fast: 0.4 / f s long, around the middle.
                const double f = 0.4 * 16000 / double(last - first);
                QVERIFY2(f > 0.895 && f < 1.105, qPrintable(QString::number(f)));
                QVERIFY2(std::abs(double(first + last) / 2 - 8000) < 20,
                         qPrintable(QString("%1 to %2").arg(first).arg(last)));
                // And its 500 Hz at 500 f Hz: two crossings a period over 0.25 s.
                int n = 0;
                const size_t from = (first + last) / 2 - 2000;
                for (size_t i = from + 1; i < from + 4000; ++i)
                    n += (y[i - 1] < 0) != (y[i] < 0);
                QVERIFY2(std::abs(n - 2 * 500 * f * 0.25) <= 3,
                         qPrintable(QString("%1 crossings at %2").arg(n).arg(f)));
                hz.push_back(f);
            }
        }
        // Speeds spread over the range, not one speed for all.
        const auto [lo, hi] = std::minmax_element(hz.begin(), hz.end());
        QVERIFY2(*lo < 0.96 && *hi > 1.04, qPrintable(QString("%1 to %2").arg(*lo).arg(*hi)));

        SpeedPerturb never(0.1f, 0.0f);
        std::vector<float> same(x.size());
        const uint64_t seed = 3;
        never.apply(x.data(), same.data(), 1, s, &seed);
        QCOMPARE(same, x);
    }

    // FlatPeaks: a recording driven past full scale (flat at its loudest) counts as clipped,
    // a clean one, however loud, does not; counted the same in pieces; and readRecording
    // counts what the file holds, before resampling.
    void flatPeaksTellAClippedRecording()
    {
        const std::vector<float> clean = tone(440, 16000, 1.0, 0.99f);
        FlatPeaks none;
        none.push(clean.data(), clean.size());
        QCOMPARE(none.share(), 0.0);
        FlatPeaks empty;
        QCOMPARE(empty.share(), 0.0);
        // 6 dB past full scale: every sample over half the peak flat, two thirds of a sine.
        std::vector<float> hot = tone(440, 16000, 1.0, 2.0f);
        for (float &v : hot)
            v = std::clamp(v, -1.0f, 1.0f);
        FlatPeaks whole;
        whole.push(hot.data(), hot.size());
        QVERIFY2(whole.share() > 0.6 && whole.share() < 0.7,
                 qPrintable(QString::number(whole.share())));
        QVERIFY(whole.share() >= FlatPeaks::kClipped);
        FlatPeaks pieces;
        for (size_t at = 0; at < hot.size(); at += 1000)
            pieces.push(hot.data() + at, std::min<size_t>(1000, hot.size() - at));
        QCOMPARE(pieces.share(), whole.share());
        // A quiet clipped stretch, then louder sound: what is flat under the peak is no top.
        std::vector<float> later(hot.size());
        for (size_t k = 0; k < hot.size(); ++k)
            later[k] = k < hot.size() / 2 ? 0.5f * hot[k] : clean[k];
        FlatPeaks under;
        under.push(later.data(), later.size());
        QCOMPARE(under.share(), 0.0);
        // Only the peak's level counts: flat at 0.3 in a recording that peaks at 0.9, no.
        std::vector<float> shelf(400, 0.3f);
        shelf[200] = 0.9f;
        FlatPeaks shelfCount;
        shelfCount.push(shelf.data(), shelf.size());
        QCOMPARE(shelfCount.share(), 0.0);

        QTemporaryDir dir;
        const std::string path = dir.filePath("hot.wav").toStdString();
        writeWav(dir.filePath("hot.wav"), hot, 1, 44100); // 44.1 kHz: resampled as it is read
        FlatPeaks read;
        QVERIFY(readRecording(path, 16000, &read).ok());
        QVERIFY2(std::abs(read.share() - whole.share()) < 0.02,
                 qPrintable(QString::number(read.share())));
        AudioFilesOptions o;
        FlatPeaks decoded;
        QVERIFY(decodeAudioFile(path, o, &decoded).ok());
        QCOMPARE(decoded.share(), read.share());
        const std::string cleanPath = dir.filePath("clean.wav").toStdString();
        writeWav(dir.filePath("clean.wav"), clean, 1, 16000);
        FlatPeaks cleanRead;
        QVERIFY(readRecording(cleanPath, 16000, &cleanRead).ok());
        QVERIFY2(cleanRead.share() < FlatPeaks::kClipped,
                 qPrintable(QString::number(cleanRead.share())));
    }

    // clip (Clipping): every sample beyond the drawn level under the peak flattened to it, the
    // rest as it was; the level drawn within its range, seeded; p 0 and silence unchanged.
    void clippingFlattensThePeaksAtALevelInItsRange()
    {
        const std::vector<float> x = tone(440, 16000, 0.5, 0.5f);
        const Shape s{1, 1, int64_t(x.size())};
        const Clipping six(6, 6, 1);
        QVERIFY(six.random());
        QCOMPARE(six.outputShape(s).value(), s);
        QVERIFY(!six.outputShape(Shape{1, 28, 28}).ok());
        QVERIFY(!Clipping(7, 6, 1).outputShape(s).ok());
        QVERIFY(!Clipping(-1, 6, 1).outputShape(s).ok());
        std::vector<float> y(x.size());
        const uint64_t seed = 5;
        six.apply(x.data(), y.data(), 1, s, &seed);
        const float ceiling = 0.5f * std::pow(10.0f, -6.0f / 20); // 0.2506
        size_t flat = 0;
        for (size_t k = 0; k < x.size(); ++k) {
            if (std::abs(x[k]) <= ceiling) {
                QCOMPARE(y[k], x[k]);
            } else {
                QCOMPARE(std::abs(y[k]), ceiling);
                QVERIFY(y[k] * x[k] > 0);
                ++flat;
            }
        }
        // A sine above half its peak two thirds of the time.
        QVERIFY2(flat > x.size() * 6 / 10 && flat < x.size() * 7 / 10,
                 qPrintable(QString::number(flat)));
        // In place, as a pipeline runs it, the same.
        std::vector<float> inPlace = x;
        six.apply(inPlace.data(), inPlace.data(), 1, s, &seed);
        QCOMPARE(inPlace, y);

        // 0 to 12 dB: each seed's level within it, the same again for the same seed, spread over
        // it.
        const Clipping range(0, 12, 1);
        double lo = 99, hi = -1;
        for (uint64_t sd = 1; sd <= 40; ++sd) {
            std::vector<float> a(x.size()), b(x.size());
            range.apply(x.data(), a.data(), 1, s, &sd);
            range.apply(x.data(), b.data(), 1, s, &sd);
            QCOMPARE(a, b);
            const float top = *std::max_element(a.begin(), a.end());
            const double db = 20 * std::log10(0.5 / top);
            QVERIFY2(db >= -1e-3 && db <= 12.001, qPrintable(QString::number(db)));
            lo = std::min(lo, db);
            hi = std::max(hi, db);
        }
        QVERIFY2(lo < 3 && hi > 9, qPrintable(QString("%1 to %2").arg(lo).arg(hi)));

        std::vector<float> same(x.size());
        Clipping(6, 6, 0).apply(x.data(), same.data(), 1, s, &seed);
        QCOMPARE(same, x);
        std::vector<float> quiet(x.size(), 0.0f), heard(x.size(), 1.0f);
        six.apply(quiet.data(), heard.data(), 1, s, &seed);
        QCOMPARE(heard, quiet);
    }

    // room_mic (RoomMicrophone): a room's tail after the sound, decaying at its reverberation
    // time, the direct sound where it was, nothing before it, the level kept; a microphone's band
    // cuts below and above its corners by the Butterworth magnitudes of its order; seeded; p 0
    // changes nothing.
    void roomAndMicrophoneReverberateAndBandLimit()
    {
        const int64_t len = 16000;
        const Shape s{1, 1, len};
        std::vector<float> burst(size_t(len), 0.0f); // 0.2 to 0.3 s of white noise
        Rng noise(7);
        for (int64_t k = 3200; k < 4800; ++k)
            burst[size_t(k)] = 0.3f * noise.normal();
        auto energy = [](const std::vector<float> &v, double from, double to) {
            double e = 0;
            for (auto k = int64_t(from * 16000); k < int64_t(to * 16000); ++k)
                e += double(v[size_t(k)]) * double(v[size_t(k)]);
            return e;
        };
        RoomMicrophone::Options o;
        o.p = 1;
        o.bandP = 0;
        o.rt60Min = o.rt60Max = 0.5f;
        o.drrMinDb = o.drrMaxDb = 0;
        const RoomMicrophone room(o);
        QVERIFY(room.random());
        QCOMPARE(room.outputShape(s).value(), s);
        QVERIFY(!room.outputShape(Shape{1, 28, 28}).ok());
        RoomMicrophone::Options bad = o;
        bad.rt60Min = 0.6f;
        QVERIFY(!RoomMicrophone(bad).outputShape(s).ok());
        bad = o;
        bad.lowCutMax = 4000;
        QVERIFY(!RoomMicrophone(bad).outputShape(s).ok());

        std::vector<float> y(burst.size()), again(burst.size()), other(burst.size());
        const uint64_t seed = 11, seed2 = 12;
        room.apply(burst.data(), y.data(), 1, s, &seed);
        room.apply(burst.data(), again.data(), 1, s, &seed);
        room.apply(burst.data(), other.data(), 1, s, &seed2);
        QCOMPARE(y, again);
        QVERIFY(y != other);
        const double total = energy(y, 0, 1);
        QVERIFY2(std::abs(total / energy(burst, 0, 1) - 1) < 1e-3, qPrintable(QString::number(total)));
        QVERIFY(energy(y, 0, 0.199) < 1e-9 * total); // nothing before the sound
        // A tail after it, falling 60 dB in 0.5 s: 24 dB from 0.32-0.42 s to 0.52-0.62 s.
        const double early = energy(y, 0.32, 0.42), late = energy(y, 0.52, 0.62);
        QVERIFY2(early > 0.01 * total, qPrintable(QString::number(early / total)));
        const double fall = 10 * std::log10(early / late);
        QVERIFY2(fall > 19 && fall < 29, qPrintable(QString::number(fall)));
        // The direct sound where it was: the output matches the input best unshifted.
        auto correlation = [&](int lag) {
            double c = 0;
            for (int64_t k = 3200; k < 4800; ++k)
                c += double(burst[size_t(k)]) * double(y[size_t(k + lag)]);
            return c;
        };
        int best = 0;
        for (int lag = -400; lag <= 400; ++lag)
            if (correlation(lag) > correlation(best)) best = lag;
        QCOMPARE(best, 0);
        // Near the microphone (direct 20 dB over the room, not level with it): a hundredth of the
        // sound is tail where it was half, so the tail is about 50 times (17 dB) weaker.
        RoomMicrophone::Options near = o;
        near.drrMinDb = near.drrMaxDb = 20;
        std::vector<float> close(burst.size());
        RoomMicrophone(near).apply(burst.data(), close.data(), 1, s, &seed);
        const double weaker = 10 * std::log10(early / energy(close, 0.32, 0.42));
        QVERIFY2(weaker > 14 && weaker < 20, qPrintable(QString::number(weaker)));

        // A band of 300 to 3400 Hz (a telephone's): 100 Hz 19 dB down, 6 kHz 10 dB down.
        RoomMicrophone::Options mic;
        mic.p = 0;
        mic.bandP = 1;
        mic.lowCutMin = mic.lowCutMax = 300;
        mic.highCutMin = mic.highCutMax = 3400;
        const std::vector<float> low = tone(100, 16000, 1.0, 0.2f), mid = tone(1000, 16000, 1.0, 0.2f),
                                 high = tone(6000, 16000, 1.0, 0.2f);
        std::vector<float> chord(static_cast<size_t>(len)), heard(static_cast<size_t>(len));
        for (size_t k = 0; k < chord.size(); ++k)
            chord[k] = low[k] + mid[k] + high[k];
        RoomMicrophone(mic).apply(chord.data(), heard.data(), 1, s, &seed);
        auto amplitude = [&](double hz) { // over the middle half second, away from the edges
            double c = 0, q = 0;
            for (int64_t k = 4000; k < 12000; ++k) {
                const double w = 2 * std::numbers::pi * hz * double(k) / 16000;
                c += heard[size_t(k)] * std::cos(w);
                q += heard[size_t(k)] * std::sin(w);
            }
            return std::hypot(c, q);
        };
        const double at1k = amplitude(1000);
        const double wantLow = 1 / std::sqrt(1 + std::pow(3.0, 4)),
                     wantHigh = 1 / std::sqrt(1 + std::pow(6000.0 / 3400, 4));
        QVERIFY2(std::abs(amplitude(100) / at1k / wantLow - 1) < 0.1,
                 qPrintable(QString::number(amplitude(100) / at1k)));
        QVERIFY2(std::abs(amplitude(6000) / at1k / wantHigh - 1) < 0.1,
                 qPrintable(QString::number(amplitude(6000) / at1k)));
        // Of order 12, nearly a wall at 4 kHz (as a recording made at 8 kHz): 3 kHz through
        // within 1 dB of 1 kHz, 6 kHz 42 dB down (order 2 would leave it 8 dB down).
        RoomMicrophone::Options wall = mic;
        wall.lowCutMin = wall.lowCutMax = 20;
        wall.highCutMin = wall.highCutMax = 4000;
        wall.bandOrder = 12;
        const std::vector<float> at3k = tone(3000, 16000, 1.0, 0.2f);
        for (size_t k = 0; k < chord.size(); ++k)
            chord[k] = mid[k] + at3k[k] + high[k];
        RoomMicrophone(wall).apply(chord.data(), heard.data(), 1, s, &seed);
        const double wall1k = amplitude(1000);
        QVERIFY2(amplitude(3000) / wall1k > 0.89 && amplitude(3000) / wall1k < 1.01,
                 qPrintable(QString::number(amplitude(3000) / wall1k)));
        const double wallHigh = 1 / std::sqrt(1 + std::pow(6000.0 / 4000, 24)); // 0.0077
        QVERIFY2(std::abs(amplitude(6000) / wall1k / wallHigh - 1) < 0.1,
                 qPrintable(QString::number(amplitude(6000) / wall1k)));
        for (int order : {0, 17}) {
            RoomMicrophone::Options wrong = wall;
            wrong.bandOrder = order;
            QVERIFY(!RoomMicrophone(wrong).outputShape(s).ok());
        }

        // Neither room nor band: unchanged; silence stays silence.
        RoomMicrophone::Options none = o;
        none.p = 0;
        std::vector<float> same(burst.size());
        RoomMicrophone(none).apply(burst.data(), same.data(), 1, s, &seed);
        QCOMPARE(same, burst);
        std::vector<float> quiet(size_t(len), 0.0f), stillQuiet(size_t(len), 1.0f);
        room.apply(quiet.data(), stillQuiet.data(), 1, s, &seed);
        QCOMPARE(stillQuiet, quiet);
    }

    // vtlp's warp (FrequencyWarp): a tone's band moves by the factor drawn, within the range,
    // and frequencies above the boundary keep the top where it is.
    void vtlpMovesEveryFrequencyByAFactorInItsRange()
    {
        SpectrogramOptions o;
        o.kind = SpectrogramOptions::Kind::Mel;
        o.fMin = 20;
        const Spectrogram mel(o);
        const std::vector<double> hz = mel.rowFrequencies();
        QCOMPARE(int64_t(hz.size()), o.nMels);
        QVERIFY(std::is_sorted(hz.begin(), hz.end()) && hz.front() > 20 && hz.back() < 8000);
        QCOMPARE(mel.topFrequency(), 8000.0);
        SpectrogramOptions power = o;
        power.kind = SpectrogramOptions::Kind::Power;
        QCOMPARE(Spectrogram(power).rowFrequencies()[16], 500.0); // bin 16 of 512 at 16 kHz
        SpectrogramOptions mfcc = o;
        mfcc.kind = SpectrogramOptions::Kind::Mfcc;
        QVERIFY(Spectrogram(mfcc).rowFrequencies().empty());

        const float most = 0.2f;
        const FrequencyWarp warp(hz, 8000, most, 1.0f);
        QVERIFY(warp.random());
        // The warp's inverse: alpha f comes from f below the boundary (0.6 of the top), the top
        // from the top, and it is continuous and increasing in between.
        for (double alpha : {0.8, 0.95, 1.0, 1.1, 1.2}) {
            QVERIFY(std::abs(warp.sourceFrequency(alpha * 1000, alpha) - 1000) < 1e-9);
            QVERIFY(std::abs(warp.sourceFrequency(alpha * 3000, alpha) - 3000) < 1e-9);
            QVERIFY(std::abs(warp.sourceFrequency(8000, alpha) - 8000) < 1e-9);
            const double g0 = 4800 * std::min(alpha, 1.0);
            QVERIFY(std::abs(warp.sourceFrequency(g0 + 1e-6, alpha) - g0 / alpha) < 1e-3);
            for (double f = 0; f < 8000; f += 50)
                QVERIFY(warp.sourceFrequency(f + 50, alpha) > warp.sourceFrequency(f, alpha));
        }

        // A 1 kHz tone's log-mel spectrogram: its band's centre (the power-weighted mean of the
        // rows' frequencies around its loudest row) moves to alpha kHz, alpha in 0.8 to 1.2.
        Shape s;
        const std::vector<float> x = run(mel, tone(1000, 16000, 0.5), s);
        const int64_t rows = s[1], frames = s[2];
        const auto centre = [&](const std::vector<float> &f) {
            int64_t top = 0;
            for (int64_t r = 0; r < rows; ++r)
                if (f[size_t(r * frames + frames / 2)] > f[size_t(top * frames + frames / 2)])
                    top = r;
            double sum = 0, weight = 0;
            for (int64_t r = std::max<int64_t>(top - 1, 0); r <= std::min(top + 1, rows - 1); ++r) {
                const double w = std::pow(10.0, f[size_t(r * frames + frames / 2)] / 10.0);
                sum += w * hz[size_t(r)];
                weight += w;
            }
            return sum / weight;
        };
        const double before = centre(x);
        QVERIFY2(std::abs(before - 1000) < 40, qPrintable(QString::number(before)));
        QCOMPARE(warp.outputShape(s).value(), s);
        std::vector<double> ratios;
        for (uint64_t seed = 1; seed <= 40; ++seed) {
            std::vector<float> y(x.size()), again(x.size());
            warp.apply(x.data(), y.data(), 1, s, &seed);
            warp.apply(x.data(), again.data(), 1, s, &seed);
            QCOMPARE(y, again); // the seed decides
            const double ratio = centre(y) / before;
            QVERIFY2(ratio > 1 - most - 0.03 && ratio < 1 + most + 0.03,
                     qPrintable(QString::number(ratio)));
            ratios.push_back(ratio);
        }
        const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
        QVERIFY2(*lo < 0.88 && *hi > 1.12, qPrintable(QString("%1 to %2").arg(*lo).arg(*hi)));

        // Every cell, for the mel bands and a stft's bins: two channels of a ramp whose value is
        // its row's frequency (and 10000 more in the second) come out as the frequency that
        // moves to the row (linear interpolation of a ramp is exact), the ends clamped to the
        // first and last rows; alpha is read off a low row, where the warp is f / alpha.
        const std::vector<double> bins = Spectrogram(power).rowFrequencies();
        for (const std::vector<double> *rowHz : {&hz, &bins}) {
            const FrequencyWarp w(*rowHz, 8000, most, 1.0f);
            const int64_t n = int64_t(rowHz->size()), t = 3;
            const Shape rs{2, n, t};
            std::vector<float> ramp(size_t(rs.numel())), out(ramp.size());
            for (int64_t c = 0; c < 2; ++c)
                for (int64_t r = 0; r < n; ++r)
                    for (int64_t k = 0; k < t; ++k)
                        ramp[size_t((c * n + r) * t + k)] = float((*rowHz)[size_t(r)] + 10000 * c);
            QCOMPARE(w.outputShape(rs).value(), rs);
            for (uint64_t seed = 1; seed <= 10; ++seed) {
                w.apply(ramp.data(), out.data(), 1, rs, &seed);
                const double alpha = (*rowHz)[5] / double(out[size_t(5 * t)]);
                QVERIFY2(alpha >= 1 - most - 1e-4 && alpha <= 1 + most + 1e-4,
                         qPrintable(QString::number(alpha)));
                for (int64_t c = 0; c < 2; ++c)
                    for (int64_t r = 0; r < n; ++r) {
                        const double f = std::clamp(w.sourceFrequency((*rowHz)[size_t(r)], alpha),
                                                    rowHz->front(), rowHz->back());
                        for (int64_t k = 0; k < t; ++k) {
                            const double got = out[size_t((c * n + r) * t + k)] - 10000.0 * c;
                            QVERIFY2(std::abs(got - f) < 0.05,
                                     qPrintable(QString("row %1 of %2, channel %3: %4, not %5")
                                                    .arg(r)
                                                    .arg(n)
                                                    .arg(c)
                                                    .arg(got)
                                                    .arg(f)));
                        }
                    }
            }
        }
        SpectrogramOptions capped = o;
        capped.fMax = 4000;
        QCOMPARE(Spectrogram(capped).topFrequency(), 4000.0);
        QVERIFY(Spectrogram(capped).rowFrequencies().back() < 4000);

        // No change, or p 0: the features as they were.
        const uint64_t seed = 7;
        std::vector<float> same(x.size());
        FrequencyWarp(hz, 8000, 0.0f, 1.0f).apply(x.data(), same.data(), 1, s, &seed);
        QCOMPARE(same, x);
        FrequencyWarp(hz, 8000, most, 0.0f).apply(x.data(), same.data(), 1, s, &seed);
        QCOMPARE(same, x);

        // Rows that are not the spectrogram's frequencies are refused.
        QVERIFY(!warp.outputShape(Shape{1, rows + 1, frames}).ok());
        QVERIFY(!warp.outputShape(Shape{1, 1, 16000}).ok());
        QVERIFY(!FrequencyWarp({}, 8000, most, 1.0f).outputShape(s).ok());
        QVERIFY(!FrequencyWarp(hz, 8000, 1.0f, 1.0f).outputShape(s).ok());
    }

    // Found by fuzz_audio (fuzz/regressions/fuzz_audio): a float recording holding NaN is refused,
    // one beyond full scale is clipped (it made the spectrogram infinite), and a header that
    // claims 2^62 frames is an error naming the file (it ended the process).
    void damagedSamplesAndHeadersAreRefused()
    {
        AudioFilesOptions o;
        o.sampleRate = 16000;
        o.seconds = 0.01;
        o.trimDb = 0;
        auto nan = prepareAudio({0.5f, std::nanf(""), 0.1f}, 1, 16000, "mic", o);
        QVERIFY(!nan.ok());
        QVERIFY2(nan.error().str().find("mic: holds samples that are not numbers") !=
                     std::string::npos,
                 nan.error().str().c_str());
        auto loud = prepareAudio({1e30f, -1e30f, 0.5f}, 1, 16000, "mic", o);
        QVERIFY(loud.ok());
        for (float v : *loud)
            QVERIFY2(v >= -1 && v <= 1, qPrintable(QString::number(v)));

        QTemporaryDir dir;
        for (const char *name : {"float-wav-1e30", "header-claims-2e62-frames"}) {
            QFile in(QString(FLOWBENCH_SOURCE_DIR) + "/fuzz/regressions/fuzz_audio/" + name);
            QVERIFY(in.open(QIODevice::ReadOnly));
            QFile out(dir.filePath(name));
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(in.readAll().mid(3)); // the fuzzer's first 3 bytes choose its options
            out.close();
            auto x = decodeAudioFile(out.fileName().toStdString(), o);
            if (x.ok()) {
                for (float v : *x)
                    QVERIFY2(std::isfinite(v) && v >= -1 && v <= 1, name);
            } else {
                QVERIFY2(x.error().file == out.fileName().toStdString(), x.error().str().c_str());
            }
        }

        // A header's rate below 1 kHz is refused, naming it, before it is resampled: 63 Hz
        // said of these 64,000 frames would be 16.3 million samples at 16 kHz.
        const std::vector<float> second = tone(440, 16000, 4.0, 0.5f);
        const QString low = dir.filePath("rate63.wav"), least = dir.filePath("rate1000.wav");
        writeWav(low, second, 1, 63);
        writeWav(least, second, 1, 1000);
        auto refused = decodeAudioFile(low.toStdString(), o);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().file == low.toStdString(), refused.error().str().c_str());
        QVERIFY2(refused.error().str().find("sample rate of 63 Hz, too low for sound") !=
                     std::string::npos,
                 refused.error().str().c_str());
        QVERIFY(!readRecording(low.toStdString(), 16000).ok());
        auto read = readRecording(least.toStdString(), 16000);
        QVERIFY2(read.ok(), read.ok() ? "" : read.error().str().c_str());
        QVERIFY2(std::abs(int64_t(read->size()) - 64000 * 16) <= 16, // 64 s at 16 kHz
                 qPrintable(QString::number(read->size())));
    }

    void patternLabelsAndSpeakerSplit()
    {
        std::string label, speaker;
        QVERIFY(matchPattern("{label}_{speaker}_{index}", "7_en-gb-m3_2", label, speaker));
        QCOMPARE(label, std::string("7"));
        QCOMPARE(speaker, std::string("en-gb-m3"));
        QVERIFY(
            matchPattern("take{index}-{label}.by.{speaker}", "take1-yes.by.ann", label, speaker));
        QCOMPARE(label, std::string("yes"));
        QCOMPARE(speaker, std::string("ann"));
        QVERIFY(!matchPattern("{label}_{speaker}_{index}", "noise", label, speaker));

        QTemporaryDir dir;
        // Each speaker at its own loudness (0.1, 0.2, ...), so a sample's peak says who it is.
        const char *speakers[] = {"ann", "bob", "cid", "dan", "eve", "fay"};
        for (int d = 0; d < 3; ++d)
            for (int sp = 0; sp < 6; ++sp)
                for (int k = 0; k < 2; ++k)
                    writeWav(dir.filePath(QString("%1/%2_%3_%4.wav")
                                              .arg(sp % 2 ? "sub" : ".")
                                              .arg(d)
                                              .arg(speakers[sp])
                                              .arg(k)),
                             tone(300 + 200 * d, 16000, 0.2, 0.1f * float(sp + 1)), 1, 16000);
        QFile notes(dir.filePath("README.txt"));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("recorded in the kitchen\n");
        notes.close();

        auto all = loadAudioFolder(dir.path().toStdString(), byPattern());
        QVERIFY2(all.ok(), all.ok() ? "" : all.error().str().c_str());
        QCOMPARE(all->classNames, (std::vector<std::string>{"0", "1", "2"}));
        QCOMPARE(all->count, int64_t(36));
        QCOMPARE(all->width, int64_t(4000));
        QCOMPARE(all->values.size(), size_t(36 * 4000));
        QCOMPARE(all->skipped.size(), size_t(1)); // README.txt: its name does not match
        QVERIFY(all->skipped[0].reason.find("does not match the pattern") != std::string::npos);

        auto speakersIn = [](const ImageDataset &ds) {
            std::multiset<int> who;
            for (int64_t i = 0; i < ds.count; ++i) {
                float peak = 0;
                for (int64_t k = 0; k < ds.width; ++k)
                    peak = std::max(peak, std::abs(ds.values[size_t(i * ds.width + k)]));
                who.insert(int(std::lround(peak * 10)) - 1);
            }
            return who;
        };
        auto load = [&](const char *subset, bool bySpeaker) {
            AudioFilesOptions o = byPattern(subset);
            o.splitBySpeaker = bySpeaker;
            auto ds = loadAudioFolder(dir.path().toStdString(), o);
            if (!ds.ok()) qFatal("%s", ds.error().str().c_str());
            return speakersIn(ds.value());
        };
        // Whole speakers on one side: 6 speakers, 20% -> 1 held out, all 6 of their recordings.
        const std::multiset<int> train = load("train", true), val = load("validation", true);
        QCOMPARE(val.size(), size_t(6));
        const std::set<int> valSpeakers(val.begin(), val.end());
        QCOMPARE(valSpeakers.size(), size_t(1));
        for (int sp : train)
            QVERIFY2(!valSpeakers.count(sp), "a validation speaker is in the training part");
        std::multiset<int> both = train;
        both.insert(val.begin(), val.end());
        QCOMPARE(both, speakersIn(all.value()));
        // Split per file instead, the validation part hears several speakers.
        const std::multiset<int> mixed = load("validation", false);
        QCOMPARE(mixed.size(), size_t(3 * 2)); // round(0.2 * 12) per digit
        QVERIFY(std::set<int>(mixed.begin(), mixed.end()).size() > 1);

        // Chosen speakers held out by name (a whole speech engine, say): exactly those.
        auto chosen = [&](const char *subset, const char *which) {
            AudioFilesOptions o = byPattern(subset);
            o.validationSpeakers = which;
            auto ds = loadAudioFolder(dir.path().toStdString(), o);
            if (!ds.ok()) qFatal("%s", ds.error().str().c_str());
            const std::multiset<int> who = speakersIn(ds.value());
            return std::set<int>(who.begin(), who.end());
        };
        QCOMPARE(chosen("validation", "^(bob|eve)$"), (std::set<int>{1, 4}));
        QCOMPARE(chosen("train", "^(bob|eve)$"), (std::set<int>{0, 2, 3, 5}));
        QCOMPARE(chosen("validation", "a"), (std::set<int>{0, 3, 5})); // ann, dan, fay
    }

    // The speaker split ranks speakers by a seeded hash of their names: a folder that gains
    // speakers keeps its split. Adding speakers one at a time (30 to 60, with a fifth held out)
    // moves at most the newcomer in and one other out at each step; a seeded shuffle of the
    // whole list, as before, drew a different fifth at the first speaker added. Another
    // split_seed draws another fifth, and the held-out share is the fraction, rounded.
    void speakerSplitKeepsWhenSpeakersAreAdded()
    {
        auto heldOut = [](int speakers, uint64_t seed) {
            std::vector<LabelledFile> files;
            for (int s = 0; s < speakers; ++s)
                for (int label = 0; label < 2; ++label)
                    files.push_back(
                        {QString("%1_voice-%2_1.wav").arg(label).arg(s * 7919 % 1000).toStdString(),
                         label, "voice-" + std::to_string(s * 7919 % 1000)});
            SplitOptions o;
            o.subset = "validation";
            o.bySpeaker = true;
            o.splitSeed = seed;
            std::set<std::string> who;
            for (const LabelledFile &f : selectFiles(files, 2, o))
                who.insert(f.speaker);
            return who;
        };
        std::set<std::string> before = heldOut(30, 0);
        QCOMPARE(before.size(), size_t(6));
        for (int n = 31; n <= 60; ++n) {
            const std::set<std::string> after = heldOut(n, 0);
            QCOMPARE(after.size(), size_t(std::llround(0.2 * n)));
            std::vector<std::string> left, came;
            std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                                std::back_inserter(left));
            std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                                std::back_inserter(came));
            const std::string newcomer = "voice-" + std::to_string((n - 1) * 7919 % 1000);
            QVERIFY2(
                left.size() <= 1,
                qPrintable(QString("%1 speakers: %2 left validation").arg(n).arg(left.size())));
            for (const std::string &c : came)
                if (c != newcomer)
                    QVERIFY2(left.empty() && after.size() > before.size(),
                             qPrintable(QString("%1 speakers: %2 came into validation")
                                            .arg(n)
                                            .arg(QString::fromStdString(c))));
            QVERIFY(came.size() <= 1);
            before = after;
        }
        QVERIFY(heldOut(60, 1) != heldOut(60, 0));
        QCOMPARE(heldOut(60, 1).size(), size_t(12));
    }

    // Per-recording normalization: each row's mean over time removed (a microphone's colouring
    // is a constant added to a row of a log spectrogram), then the recording's spread; the same
    // features through two "microphones" (a row offset and a gain) come out the same.
    void featureNormRemovesTheChannel()
    {
        const Shape shape{1, 4, 50};
        std::vector<float> x(size_t(shape.numel()));
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t t = 0; t < 50; ++t)
                x[size_t(r * 50 + t)] = float(std::sin(0.3 * double(t) * double(r + 1)) * 10.0);
        std::vector<float> coloured = x;
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t t = 0; t < 50; ++t)
                coloured[size_t(r * 50 + t)] = 2.5f * x[size_t(r * 50 + t)] + 7.0f * float(r) - 30;
        auto run = [&shape](const Transform &t, const std::vector<float> &in) {
            std::vector<float> y(in.size());
            const uint64_t seed = 0;
            t.apply(in.data(), y.data(), 1, shape, &seed);
            return y;
        };
        const FeatureNorm norm(FeatureNorm::Mean::PerRow, true, 1.0f);
        const std::vector<float> a = run(norm, x), b = run(norm, coloured);
        double rowMean = 0, squares = 0;
        for (size_t i = 0; i < a.size(); ++i) {
            QVERIFY2(std::abs(a[i] - b[i]) < 1e-4, qPrintable(QString::number(i)));
            squares += double(a[i]) * a[i];
        }
        for (int64_t t = 0; t < 50; ++t)
            rowMean += a[size_t(2 * 50 + t)] / 50.0;
        QVERIFY(std::abs(rowMean) < 1e-5);
        QVERIFY(std::abs(std::sqrt(squares / double(a.size())) - 1.0) < 1e-4);
        // Near silence (a spread under min_std) is not blown up.
        std::vector<float> quiet(size_t(shape.numel()), -80.0f);
        quiet[7] = -79.5f;
        const std::vector<float> q = run(norm, quiet);
        for (float v : q)
            QVERIFY(std::abs(v) <= 0.5f);
        // The sample's mean only, without the spread.
        const FeatureNorm centre(FeatureNorm::Mean::PerSample, false, 1.0f);
        const std::vector<float> c = run(centre, coloured);
        double total = 0;
        for (float v : c)
            total += v;
        QVERIFY(std::abs(total / double(c.size())) < 1e-4);
        QCOMPARE(c[60] - c[10], coloured[60] - coloured[10]);
    }

    // A long take cut into one-word clips (the Record panel and its import): words found where
    // they are, a pause inside a word kept inside it, a click dropped, the clip centred.
    void longTakesAreCutIntoWords()
    {
        const int64_t rate = 16000;
        std::vector<float> x(size_t(rate * 4));
        uint64_t state = 7;
        for (float &v : x) { // a noise floor near -60 dB
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            v = 0.001f * (float(state >> 40) / float(1 << 24) - 0.5f) * 2.0f;
        }
        auto tone = [&](double from, double to, double amp) {
            for (int64_t k = int64_t(from * rate); k < int64_t(to * rate); ++k)
                x[size_t(k)] +=
                    float(amp * std::sin(2 * std::numbers::pi * 440.0 * double(k) / rate));
        };
        tone(0.50, 0.80, 0.3);                        // a word
        tone(1.50, 1.70, 0.2), tone(1.85, 2.05, 0.2); // a word with a 150 ms pause inside
        tone(2.80, 2.83, 0.5);                        // a click, 30 ms
        tone(3.30, 3.60, 0.05);                       // a quiet word (-29 dB)
        const auto words = data::findUtterances(x, rate);
        QCOMPARE(int(words.size()), 3);
        const double expected[3][2] = {{0.50, 0.80}, {1.50, 2.05}, {3.30, 3.60}};
        for (int i = 0; i < 3; ++i) {
            QVERIFY2(std::abs(double(words[size_t(i)].start) / rate - expected[i][0]) < 0.03,
                     qPrintable(QString::number(double(words[size_t(i)].start) / rate)));
            QVERIFY2(std::abs(double(words[size_t(i)].end) / rate - expected[i][1]) < 0.03,
                     qPrintable(QString::number(double(words[size_t(i)].end) / rate)));
        }
        QVERIFY(words[0].peakDb > -14 && words[0].peakDb < -12); // 0.3 amplitude: -13.5 dB

        const auto clips = data::cutUtterances(x, rate, rate);
        QCOMPARE(int(clips.size()), 3);
        for (const auto &c : clips)
            QCOMPARE(int64_t(c.size()), rate);
        // The first word (0.5 to 0.8 s) sits in the middle of its clip.
        const int64_t centre = words[0].centre();
        QVERIFY(std::abs(double(centre) / rate - 0.65) < 0.02);
        for (int64_t k : {int64_t(0), rate / 2, rate - 1})
            QCOMPARE(clips[0][size_t(k)], x[size_t(centre - rate / 2 + k)]);
        // Near the start, the clip is padded with silence.
        const auto early = data::clipAround(x, rate / 4, rate);
        QCOMPARE(early[0], 0.0f);
        QCOMPARE(early[size_t(rate / 4)], x[0]);

        // Words said close together (250 ms pauses, under the 300 ms that join the parts of
        // one word) are parted again at their pauses: three words, three clips.
        {
            std::vector<float> y(size_t(rate * 3));
            for (size_t k = 0; k < y.size(); ++k)
                y[k] = x[k] * 0.1f; // the same quiet floor
            for (double at : {0.5, 1.1, 1.7})
                for (int64_t k = int64_t(at * rate); k < int64_t((at + 0.35) * rate); ++k)
                    y[size_t(k)] +=
                        float(0.3 * std::sin(2 * std::numbers::pi * 300.0 * double(k) / rate));
            const auto close = data::findUtterances(y, rate);
            QCOMPARE(int(close.size()), 3);
            QVERIFY(std::abs(double(close[1].centre()) / rate - 1.275) < 0.03);
        }
        // Digital silence around a stretch of room noise (a zero-padded file) does not lower the
        // floor into the noise: only the word in it is found.
        {
            std::vector<float> y(size_t(rate * 3), 0.0f);
            for (size_t k = size_t(rate); k < size_t(2 * rate); ++k)
                y[k] = 0.006f * float(std::sin(double(k) * 0.7) * std::sin(double(k) * 0.013)) *
                       2; // about -45 dB
            for (int64_t k = int64_t(1.4 * rate); k < int64_t(1.7 * rate); ++k)
                y[size_t(k)] +=
                    float(0.3 * std::sin(2 * std::numbers::pi * 300.0 * double(k) / rate));
            const auto padded = data::findUtterances(y, rate);
            QCOMPARE(int(padded.size()), 1);
            QVERIFY(std::abs(double(padded[0].start) / rate - 1.4) < 0.03);
        }

        // Nothing above the floor: no words. Background noise is cut into whole windows.
        QVERIFY(data::findUtterances(std::vector<float>(size_t(rate * 2), 0.01f), rate).empty());
        QVERIFY(data::findUtterances(std::vector<float>(10, 0.5f), rate).empty());
        QCOMPARE(int(data::cutWindows(x, rate).size()), 4);
        QCOMPARE(int(data::cutWindows(std::vector<float>(size_t(rate * 5 / 2)), rate).size()), 2);

        // A clip written as WAV reads back at 16-bit precision; a folder that is not there is
        // named in the error.
        QTemporaryDir dir;
        const std::string path = dir.filePath("7_me_1.wav").toStdString();
        QVERIFY(data::writeWav(path, clips[0], rate).ok());
        QVERIFY(!QFile::exists(QString::fromStdString(path + ".part")));
        auto back = data::readRecording(path, rate);
        QVERIFY(back.ok());
        QCOMPARE(int64_t(back.value().size()), rate);
        for (size_t k = 0; k < back.value().size(); ++k)
            QVERIFY(std::abs(back.value()[k] - clips[0][k]) < 1.0f / 32767);
        const auto bad =
            data::writeWav(dir.filePath("no/such/folder/a.wav").toStdString(), x, rate);
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().str().find("no/such/folder/a.wav") != std::string::npos);
    }

    void damagedRecordingsAreSkippedAndNamed()
    {
        QTemporaryDir dir;
        for (int i = 0; i < 3; ++i)
            writeWav(dir.filePath(QString("yes/%1.wav").arg(i)), tone(500, 16000, 0.2), 1, 16000);
        writeWav(dir.filePath("no/ok.wav"), tone(200, 16000, 0.2), 1, 16000);
        // A header that promises a second of audio, followed by a tenth.
        writeWav(dir.filePath("no/cut.wav"), tone(200, 16000, 0.1), 1, 16000, 16000);
        QFile text(dir.filePath("no/notes.wav"));
        QVERIFY(text.open(QIODevice::WriteOnly));
        text.write("not a recording");
        text.close();
        QFile empty(dir.filePath("no/empty.flac"));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        AudioFilesOptions o;
        o.seconds = 0.2;
        auto ds = loadAudioFolder(dir.path().toStdString(), o);
        QVERIFY2(ds.ok(), ds.ok() ? "" : ds.error().str().c_str());
        QCOMPARE(ds->classNames, (std::vector<std::string>{"no", "yes"}));
        QCOMPARE(ds->count, int64_t(4));
        std::map<std::string, std::string> why;
        for (const SkippedFile &s : ds->skipped)
            why[QFileInfo(QString::fromStdString(s.path)).fileName().toStdString()] = s.reason;
        QCOMPARE(why.size(), size_t(3));
        QVERIFY2(why["cut.wav"].find("truncated") != std::string::npos, why["cut.wav"].c_str());
        QVERIFY2(why["notes.wav"].find("not audio") != std::string::npos, why["notes.wav"].c_str());
        QCOMPARE(why["empty.flac"], std::string("empty file"));
    }

    // Speech beside the sound: with p 1, each waveform of a batch keeps its own sound sample for
    // sample, keeps the gap (here exactly 20 ms) quiet, and gets the end or the start of another
    // waveform's sound beyond it, as loud as its own at 0 dB; a silent waveform gets nothing, and
    // a batch of one is left alone.
    void speechBesideBorrowsTheBatchsOtherSounds()
    {
        constexpr int64_t len = 16000;
        auto placed = [](double hz, int64_t from, int64_t to) {
            std::vector<float> x(len, 0.0f);
            const std::vector<float> t = tone(hz, 16000, double(to - from) / 16000);
            std::copy(t.begin(), t.end(), x.begin() + from);
            return x;
        };
        std::vector<std::vector<float>> waves{placed(440, 6000, 10000), placed(1000, 5000, 11000),
                                              placed(2000, 7000, 9000),
                                              std::vector<float>(len, 0.0f)};
        std::vector<float> in;
        for (const auto &w : waves)
            in.insert(in.end(), w.begin(), w.end());
        const Shape s{1, 1, len};
        SpeechBeside beside(0, 0, 1.0f, 0.02f, 0.02f);
        QVERIFY(beside.outputShape(s).ok());
        QVERIFY(!SpeechBeside(10, 0, 1.0f).outputShape(s).ok());
        QVERIFY(!SpeechBeside(0, 10, 1.0f, 0.3f, 0.2f).outputShape(s).ok());
        std::vector<float> out(in.size());
        const std::vector<uint64_t> seeds{11, 12, 13, 14};
        beside.apply(in.data(), out.data(), 4, s, seeds.data());
        for (int64_t i = 0; i < 3; ++i) {
            const float *x = in.data() + i * len, *y = out.data() + i * len;
            const auto [first, last] = audibleRange(waves[size_t(i)], 30);
            for (int64_t k = int64_t(first); k < int64_t(last); ++k)
                QCOMPARE(y[k], x[k]); // its own sound, untouched
            for (int64_t k = int64_t(first) - 320; k < int64_t(first); ++k)
                QCOMPARE(y[k], 0.0f); // the gap before it
            for (int64_t k = int64_t(last); k < int64_t(last) + 320; ++k)
                QCOMPARE(y[k], 0.0f); // and after it
            double before = 0, after = 0;
            for (int64_t k = 0; k < int64_t(first) - 320; ++k)
                before = std::max(before, double(std::abs(y[k])));
            for (int64_t k = int64_t(last) + 320; k < len; ++k)
                after = std::max(after, double(std::abs(y[k])));
            // Another tone of amplitude 0.5, scaled to this one's loudness (0 dB): about 0.5.
            const double loudest = std::max(before, after);
            QVERIFY2(loudest > 0.4 && loudest < 0.6,
                     qPrintable(QString("%1: %2 before, %3 after").arg(i).arg(before).arg(after)));
        }
        for (int64_t k = 3 * len; k < 4 * len; ++k)
            QCOMPARE(out[size_t(k)], 0.0f); // silence has no sound to be beside
        std::vector<float> alone(len);
        beside.apply(in.data(), alone.data(), 1, s, seeds.data());
        QVERIFY(std::equal(alone.begin(), alone.end(), in.begin()));
    }

    // Noise beside the sound: a 0.3 s tone in the middle of a second of silence keeps every
    // sample of itself, and gets white, pink or brown noise from an edge of the window up to
    // within 50 ms of it, on the left, the right or both, 10 dB below the tone's loudest frame.
    void noiseBesideLiesBesideTheSound()
    {
        std::vector<float> x(16000, 0.0f);
        const std::vector<float> t = tone(440, 16000, 0.3);
        std::copy(t.begin(), t.end(), x.begin() + 5600);
        const Shape s{1, 1, 16000};
        NoiseBeside beside(10, 10, 1.0f);
        QVERIFY(beside.outputShape(s).ok());
        QVERIFY(!beside.outputShape(Shape{1, 28, 28}).ok());
        QVERIFY(!NoiseBeside(20, 10, 1.0f).outputShape(s).ok());
        double toneRms = 0;
        for (float v : t)
            toneRms += double(v) * v;
        toneRms = std::sqrt(toneRms / double(t.size())); // a steady tone: its loudest frame's
        int left = 0, right = 0, both = 0, white = 0, brown = 0, between = 0;
        int64_t widestGap = 0; // samples of quiet between the tone and its noise
        // Each of 60 seeds: the tone kept, the noise where it belongs; the sides and colours
        // counted.
        auto tally = [&](const NoiseBeside &noise) {
            left = right = both = white = brown = between = 0;
            widestGap = 0;
            for (uint64_t seed = 1; seed <= 60; ++seed) {
                std::vector<float> y(16000), again(16000);
                noise.apply(x.data(), y.data(), 1, s, &seed);
                noise.apply(x.data(), again.data(), 1, s, &seed);
                QCOMPARE(y, again); // seeded
                for (int64_t k = 5600; k < 5600 + 4800; ++k)
                    QCOMPARE(y[size_t(k)], x[size_t(k)]);
                // Each side: nothing, or noise from the edge to 0..50 ms (+ a frame) from the tone.
                auto side = [&](int64_t edge, int64_t step, int64_t toneEdge) {
                    if (y[size_t(edge)] == 0.0f) {
                        for (int64_t k = edge; k != toneEdge; k += step)
                            if (y[size_t(k)] != 0.0f) return -1.0; // noise not from the edge
                        return 0.0;
                    }
                    int64_t k = edge;
                    double power = 0, diff = 0;
                    int64_t n = 0;
                    while (k != toneEdge && y[size_t(k)] != 0.0f) {
                        power += double(y[size_t(k)]) * y[size_t(k)];
                        if (k != edge)
                            diff += std::pow(double(y[size_t(k)] - y[size_t(k - step)]), 2);
                        k += step, ++n;
                    }
                    const int64_t gap = std::abs(toneEdge - k);
                    widestGap = std::max(widestGap, gap);
                    for (; k != toneEdge; k += step)
                        if (y[size_t(k)] != 0.0f) return -1.0; // noise in the gap
                    if (gap > 800 + 512) return -2.0;
                    const double rms = std::sqrt(power / double(n));
                    const double db = 20 * std::log10(toneRms / rms);
                    if (std::abs(db - 10) > 0.5) return -3.0 - db;
                    // Differences of neighbours: twice the power for white noise, far less for
                    // brown; pink between.
                    const double ratio = diff / power;
                    white += ratio > 1.5, brown += ratio < 0.05,
                        between += ratio >= 0.05 && ratio <= 1.5;
                    return 1.0;
                };
                const double l = side(0, 1, 5600), r = side(15999, -1, 5600 + 4800 - 1);
                QVERIFY2(l >= 0 && r >= 0,
                         qPrintable(QString("seed %1: %2 %3").arg(seed).arg(l).arg(r)));
                QVERIFY(l > 0 || r > 0);
                left += l > 0 && r == 0, right += r > 0 && l == 0, both += l > 0 && r > 0;
            }
        };
        tally(beside);
        if (QTest::currentTestFailed()) return;
        QVERIFY2(left > 10 && right > 10 && both > 4,
                 qPrintable(QString("%1 %2 %3").arg(left).arg(right).arg(both)));
        QVERIFY2(white > 10 && brown > 10 && between > 10,
                 qPrintable(QString("%1 %2 %3").arg(white).arg(brown).arg(between)));
        // Up to 50 ms of quiet by default (audibleRange's frame of 512 samples ends within the
        // tone's first or last 512); none asked for, none but that frame's.
        QVERIFY2(widestGap > 600, qPrintable(QString::number(widestGap)));
        tally(NoiseBeside(10, 10, 1.0f, NoiseColour::Any, 0.0f));
        if (QTest::currentTestFailed()) return;
        QVERIFY2(widestGap <= 512, qPrintable(QString::number(widestGap)));
        QVERIFY(left > 10 && right > 10 && white > 10);
        // pink_or_brown: never white (a hiss right beside a word is an "s"), both of the others.
        tally(NoiseBeside(10, 10, 1.0f, NoiseColour::PinkOrBrown));
        if (QTest::currentTestFailed()) return;
        QVERIFY2(white == 0 && brown > 10 && between > 10,
                 qPrintable(QString("%1 %2 %3").arg(white).arg(brown).arg(between)));
        QVERIFY2(left > 10 && right > 10 && both > 4,
                 qPrintable(QString("%1 %2 %3").arg(left).arg(right).arg(both)));
        // p 0: as it was.
        std::vector<float> y(16000);
        const uint64_t seed = 3;
        NoiseBeside(0, 30, 0.0f).apply(x.data(), y.data(), 1, s, &seed);
        QCOMPARE(y, x);
    }

    // add_noise's colours: white, pink and brown noise over the whole waveform at the SNR asked
    // for, told apart by how much of their power is in the differences of neighbouring samples
    // (about twice the power for white, far less for brown, pink between); "any" draws all
    // three; white is the same noise as before colours were added.
    void addNoiseHasColours()
    {
        const std::vector<float> x = tone(440, 16000, 1.0);
        const Shape s{1, 1, int64_t(x.size())};
        double signal = 0;
        for (float v : x)
            signal += double(v) * v;
        // The noise's SNR, and the power of its neighbours' differences against its own.
        auto measure = [&](const std::vector<float> &y) {
            double err = 0, diff = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                const double e = double(y[i]) - x[i];
                err += e * e;
                if (i) {
                    const double d = e - (double(y[i - 1]) - x[i - 1]);
                    diff += d * d;
                }
            }
            return std::pair{10 * std::log10(signal / err), diff / err};
        };
        using C = NoiseColour;
        const std::vector<std::pair<C, std::pair<double, double>>> colours = {
            {C::White, {1.5, 2.5}}, {C::Pink, {0.05, 1.5}}, {C::Brown, {0.0, 0.05}}};
        for (const auto &[colour, ratio] : colours) {
            const AddNoise noise(15, 15, 1.0f, colour);
            for (uint64_t seed = 1; seed <= 5; ++seed) {
                std::vector<float> y(x.size()), again(x.size());
                noise.apply(x.data(), y.data(), 1, s, &seed);
                noise.apply(x.data(), again.data(), 1, s, &seed);
                QCOMPARE(y, again); // seeded
                const auto [snr, r] = measure(y);
                QVERIFY2(std::abs(snr - 15) < 0.1, qPrintable(QString::number(snr)));
                QVERIFY2(r >= ratio.first && r <= ratio.second,
                         qPrintable(QString("colour %1: %2").arg(int(colour)).arg(r)));
            }
        }
        int white = 0, pink = 0, brown = 0;
        const AddNoise any(15, 15, 1.0f, C::Any);
        for (uint64_t seed = 1; seed <= 30; ++seed) {
            std::vector<float> y(x.size());
            any.apply(x.data(), y.data(), 1, s, &seed);
            const double r = measure(y).second;
            white += r > 1.5, brown += r < 0.05, pink += r >= 0.05 && r <= 1.5;
        }
        QVERIFY2(white >= 4 && pink >= 4 && brown >= 4,
                 qPrintable(QString("%1 %2 %3").arg(white).arg(pink).arg(brown)));
        const uint64_t seed = 7;
        std::vector<float> a(x.size()), b(x.size());
        AddNoise(10, 20, 1.0f).apply(x.data(), a.data(), 1, s, &seed);
        AddNoise(10, 20, 1.0f, C::White).apply(x.data(), b.data(), 1, s, &seed);
        QCOMPARE(a, b);
    }

    // add_noise's hum: at the SNR asked for, and nearly all of its power at 50 or 60 Hz (within
    // 1%) and their harmonics, none above 1 kHz; both mains drawn; hum_p 0 draws as before.
    void addNoiseCanBeMainsHum()
    {
        const std::vector<float> x = tone(440, 16000, 1.0);
        const int64_t n = int64_t(x.size());
        const Shape s{1, 1, n};
        double signal = 0;
        for (float v : x)
            signal += double(v) * v;
        // The power of e at whole hertz 1 to 1200 (1 s: one bin a hertz), by Goertzel's
        // recurrence, scaled so that the bins up to half the rate sum to e's energy (Parseval's).
        auto spectrum = [n](const std::vector<double> &e) {
            std::vector<double> p(1201, 0.0);
            for (int f = 1; f <= 1200; ++f) {
                const double c = 2 * std::cos(2 * M_PI * f / double(n));
                double s1 = 0, s2 = 0;
                for (int64_t t = 0; t < n; ++t) {
                    const double s0 = e[size_t(t)] + c * s1 - s2;
                    s2 = s1;
                    s1 = s0;
                }
                p[size_t(f)] = 2 * (s1 * s1 + s2 * s2 - c * s1 * s2) / double(n);
            }
            return p;
        };
        // What a stage added to x for a seed, and its energy.
        auto noiseOf = [&](const AddNoise &stage, uint64_t seed, double *energy) {
            std::vector<float> y(x.size());
            stage.apply(x.data(), y.data(), 1, s, &seed);
            std::vector<double> e(x.size());
            *energy = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                e[i] = double(y[i]) - x[i];
                *energy += e[i] * e[i];
            }
            return e;
        };
        const AddNoise hum(15, 15, 1.0f, NoiseColour::White, 1.0f, 16000);
        int fifty = 0, sixty = 0;
        for (uint64_t seed = 1; seed <= 12; ++seed) {
            double err = 0;
            const std::vector<double> e = noiseOf(hum, seed, &err);
            QVERIFY2(std::abs(10 * std::log10(signal / err) - 15) < 0.1,
                     qPrintable(QString::number(10 * std::log10(signal / err))));
            const std::vector<double> p = spectrum(e);
            const int f0 = int(std::max_element(p.begin() + 40, p.begin() + 70) - p.begin());
            QVERIFY2((f0 >= 49 && f0 <= 51) || (f0 >= 59 && f0 <= 61),
                     qPrintable(QString::number(f0)));
            (f0 < 55 ? fifty : sixty) += 1;
            // Near a harmonic: within 3 Hz of k times the fundamental, k up to 1 kHz's.
            const double base = f0 < 55 ? 50.0 : 60.0;
            double near = 0, above = 0;
            for (int f = 1; f <= 1200; ++f) {
                const double k = std::round(f / base);
                if (f > 1030)
                    above += p[size_t(f)];
                else if (k >= 1 && std::abs(f - k * base) <= 3 + 0.012 * k * base)
                    near += p[size_t(f)];
            }
            QVERIFY2(near > 0.9 * err, qPrintable(QString("%1 of %2").arg(near).arg(err)));
            QVERIFY2(above < 0.01 * err, qPrintable(QString("%1 of %2").arg(above).arg(err)));
        }
        QVERIFY2(fifty >= 2 && sixty >= 2, qPrintable(QString("%1 %2").arg(fifty).arg(sixty)));
        // hum_p 0.5: about half the samples hum (their power near 50 or 60 Hz), the rest the
        // colour's noise (white: an eighth of its power under 1 kHz).
        const AddNoise half(15, 15, 1.0f, NoiseColour::White, 0.5f, 16000);
        int hummed = 0, hissed = 0;
        for (uint64_t seed = 1; seed <= 16; ++seed) {
            double err = 0;
            const std::vector<double> e = noiseOf(half, seed, &err);
            const std::vector<double> p = spectrum(e);
            const double low = std::accumulate(p.begin() + 1, p.begin() + 1001, 0.0) / err;
            hummed += low > 0.9, hissed += low < 0.2;
        }
        QVERIFY2(hummed >= 3 && hissed >= 3 && hummed + hissed == 16,
                 qPrintable(QString("%1 %2").arg(hummed).arg(hissed)));
    }

    void randomStagesKeepTheirContracts()
    {
        const std::vector<float> x = tone(440, 16000, 0.5);
        const Shape s{1, 1, int64_t(x.size())};
        const uint64_t seeds[2] = {11, 12};
        std::vector<float> two(x);
        two.insert(two.end(), x.begin(), x.end());

        // Noise at 10..20 dB SNR: measured within the range, and seeded.
        AddNoise noise(10, 20, 1.0f);
        std::vector<float> a(two.size()), b(two.size());
        noise.apply(two.data(), a.data(), 2, s, seeds);
        noise.apply(two.data(), b.data(), 2, s, seeds);
        QCOMPARE(a, b);
        double signal = 0, err = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            signal += double(x[i]) * x[i];
            err += double(a[i] - x[i]) * (a[i] - x[i]);
        }
        const double snr = 10 * std::log10(signal / err);
        QVERIFY2(snr > 9.5 && snr < 20.5, qPrintable(QString::number(snr)));

        // A shift moves the waveform and fills with silence.
        TimeShift shift(0.1f);
        std::vector<float> ramp(1000);
        for (size_t i = 0; i < ramp.size(); ++i)
            ramp[i] = float(i + 1);
        std::vector<float> moved(1000);
        const Shape rs{1, 1, 1000};
        int nonzero = 0;
        for (uint64_t seed = 1; seed < 20; ++seed) {
            shift.apply(ramp.data(), moved.data(), 1, rs, &seed);
            // moved[k] = ramp[k - d]: the same d for every non-zero sample, |d| <= 100.
            int64_t d = 0;
            for (int64_t k = 0; k < 1000; ++k)
                if (moved[size_t(k)] != 0.0f) {
                    d = k - int64_t(moved[size_t(k)]) + 1;
                    break;
                }
            QVERIFY(std::abs(d) <= 100);
            for (int64_t k = 0; k < 1000; ++k) {
                const int64_t from = k - d;
                QCOMPARE(moved[size_t(k)], from >= 0 && from < 1000 ? ramp[size_t(from)] : 0.0f);
            }
            nonzero += d != 0;
        }
        QVERIFY(nonzero > 10);

        // keep_sound: a word late in the window moves anywhere up to max_shift earlier, but later
        // only as far as keeps it whole; a sound filling the window does not move.
        const std::vector<float> word = tone(300, 16000, 0.2); // 10000 to 13200 of 16000
        std::vector<float> late(16000, 0.0f), shifted(16000);
        std::copy(word.begin(), word.end(), late.begin() + 10000);
        const Shape ws{1, 1, 16000};
        TimeShift keeping(0.3f, true);
        int64_t earliest = 0, latest = 0;
        double energy = 0;
        for (float v : late)
            energy += double(v) * v;
        for (uint64_t seed = 1; seed <= 60; ++seed) {
            keeping.apply(late.data(), shifted.data(), 1, ws, &seed);
            double kept = 0;
            int64_t start = -1;
            for (int64_t k = 0; k < 16000; ++k) {
                kept += double(shifted[size_t(k)]) * shifted[size_t(k)];
                if (start < 0 && shifted[size_t(k)] != 0.0f) start = k;
            }
            QVERIFY2(std::abs(kept / energy - 1) < 1e-9, qPrintable(QString::number(seed)));
            const int64_t d = start - 10001; // tone(...)[0] is 0: the first non-zero is sample 1
            QVERIFY2(d >= -4800 && 13200 + d <= 16000, qPrintable(QString::number(d)));
            earliest = std::min(earliest, d);
            latest = std::max(latest, d);
        }
        QVERIFY2(earliest < -3600 && latest > 1800,
                 qPrintable(QString("%1 to %2").arg(earliest).arg(latest)));
        const std::vector<float> long_ = tone(300, 16000, 1.0);
        std::vector<float> unmoved(16000);
        const uint64_t one = 1;
        keeping.apply(long_.data(), unmoved.data(), 1, ws, &one);
        QCOMPARE(unmoved, long_);

        // SpecAugment sets whole bands and spans to the mean, no more than asked.
        SpecAugment masks(1, 4, 1, 6);
        const Shape fs{1, 20, 30};
        std::vector<float> feat(600);
        for (size_t i = 0; i < feat.size(); ++i)
            feat[i] = float(i);
        std::vector<float> m(feat);
        const uint64_t seed = 5;
        masks.apply(m.data(), m.data(), 1, fs, &seed);
        const float mean = 299.5f;
        int rows = 0, cols = 0;
        for (int r = 0; r < 20; ++r) {
            bool all = true;
            for (int t = 0; t < 30; ++t)
                all = all && m[size_t(r * 30 + t)] == mean;
            rows += all;
        }
        for (int t = 0; t < 30; ++t) {
            bool all = true;
            for (int r = 0; r < 20; ++r)
                all = all && m[size_t(r * 30 + t)] == mean;
            cols += all;
        }
        QVERIFY(rows <= 4 && cols <= 6);
        for (size_t i = 0; i < m.size(); ++i)
            QVERIFY(m[i] == feat[i] || m[i] == mean);
    }
};

QTEST_GUILESS_MAIN(TestAudio)
#include "test_audio.moc"
