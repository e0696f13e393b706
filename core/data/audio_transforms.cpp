#include "core/data/audio_transforms.h"

#include "core/base/rng.h"
#include "core/data/audio_files.h"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace fb::data {

namespace {

// Slaney's mel scale (librosa's htk=False): linear up to 1 kHz, logarithmic above.
constexpr double kFsp = 200.0 / 3.0, kMinLogHz = 1000.0, kMinLogMel = kMinLogHz / kFsp;
const double kLogStep = std::log(6.4) / 27.0;

double hzToMel(double hz)
{
    return hz < kMinLogHz ? hz / kFsp : kMinLogMel + std::log(hz / kMinLogHz) / kLogStep;
}

double melToHz(double mel)
{
    return mel < kMinLogMel ? mel * kFsp : kMinLogHz * std::exp(kLogStep * (mel - kMinLogMel));
}

// What the stages that take waveforms accept: [1, 1, samples] from an audio source.
Status checkWaveforms(const Shape &in)
{
    if (in.rank() != 3 || in[0] != 1 || in[1] != 1)
        return makeError("expects waveforms [1, 1, samples] from an audio source, not " + in.str());
    return {};
}

// v scaled so that its RMS is `rms` (silence as it is).
void scaleToRms(std::vector<double> &v, double rms)
{
    double power = 0;
    for (double s : v)
        power += s * s;
    const double scale =
        rms / std::sqrt(std::max(power / double(std::max<size_t>(v.size(), 1)), 1e-30));
    for (double &s : v)
        s *= scale;
}

// n samples of white, pink or brown (not Any) Gaussian noise scaled to the RMS `rms`. Pink by
// Paul Kellet's economy filter (three poles, within 0.05 dB of -3 dB an octave above 1/500 of the
// rate), brown by a leaky integrator: a few lines each, where no library of ours has coloured
// noise.
std::vector<double> colouredNoise(Rng &rng, size_t n, NoiseColour colour, double rms)
{
    std::vector<double> v(n);
    double b0 = 0, b1 = 0, b2 = 0;
    for (double &s : v) {
        const double w = rng.normal();
        if (colour == NoiseColour::White) {
            s = w;
        } else if (colour == NoiseColour::Pink) {
            b0 = 0.99765 * b0 + w * 0.0990460;
            b1 = 0.96300 * b1 + w * 0.2965164;
            b2 = 0.57000 * b2 + w * 1.0526913;
            s = b0 + b1 + b2 + w * 0.1848;
        } else {
            b0 = 0.995 * b0 + w;
            s = b0;
        }
    }
    scaleToRms(v, rms);
    return v;
}

// n samples of mains hum at `rate` scaled to the RMS `rms`: 50 or 60 Hz within 1% and its
// harmonics up to 1 kHz at 1/k^a (a from 0.5 to 2), each at a random phase (AddNoise).
std::vector<double> mainsHum(Rng &rng, size_t n, double rate, double rms)
{
    const double f0 = (rng.below(2) ? 50.0 : 60.0) * rng.uniform(0.99, 1.01);
    const double slope = rng.uniform(0.5, 2.0);
    std::vector<double> v(n, 0.0);
    for (int k = 1; k * f0 <= std::min(1000.0, rate / 2); ++k) {
        const double a = std::pow(double(k), -slope), w = 2 * std::numbers::pi * k * f0 / rate;
        const double phase = rng.uniform(0.0, 2 * std::numbers::pi);
        for (size_t t = 0; t < n; ++t)
            v[t] += a * std::sin(w * double(t) + phase);
    }
    scaleToRms(v, rms);
    return v;
}

// The sum of the squares of n samples (their energy), in double.
double sumOfSquares(const float *x, int64_t n)
{
    double e = 0;
    for (int64_t k = 0; k < n; ++k)
        e += double(x[k]) * double(x[k]);
    return e;
}

// The colour a sample gets: Any draws white, pink or brown, PinkOrBrown one of those two, the
// others are themselves.
NoiseColour drawColour(Rng &rng, NoiseColour colour)
{
    if (colour == NoiseColour::Any) return NoiseColour(rng.below(3));
    if (colour == NoiseColour::PinkOrBrown) return NoiseColour(1 + rng.below(2));
    return colour;
}

} // namespace

AddNoise::AddNoise(float snrMinDb, float snrMaxDb, float p, NoiseColour colour, float humP,
                   int64_t sampleRate)
    : m_min(snrMinDb)
    , m_max(snrMaxDb)
    , m_p(p)
    , m_humP(humP)
    , m_colour(colour)
    , m_rate(std::max<int64_t>(sampleRate, 1))
{}

void AddNoise::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                     const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        float *y = out + i * len;
        if (rng.uniform() >= m_p) {
            std::copy_n(x, len, y);
            continue;
        }
        const double power = sumOfSquares(x, len) / double(std::max<int64_t>(len, 1));
        const double snr = rng.uniform(m_min, m_max);
        // Silence gets the noise of a quiet signal rather than none.
        const float sigma = float(std::sqrt(std::max(power, 1e-6) / std::pow(10.0, snr / 10.0)));
        // (Drawn only where hum can come, so that a node without it draws as it always did.)
        const bool hum = m_humP > 0 && rng.uniform() < m_humP;
        if (!hum && m_colour == NoiseColour::White) { // as before colours: the same draws
            for (int64_t k = 0; k < len; ++k)
                y[k] = x[k] + sigma * rng.normal();
            continue;
        }
        const std::vector<double> v =
            hum ? mainsHum(rng, size_t(len), double(m_rate), sigma)
                : colouredNoise(rng, size_t(len), drawColour(rng, m_colour), sigma);
        for (int64_t k = 0; k < len; ++k)
            y[k] = x[k] + float(v[size_t(k)]);
    }
}

namespace {

// A waveform's sound (audibleRange at 30 dB, frames of 512 every 128) and its loudest frame's
// power about its mean: what noise_beside and speech_beside set their levels against. Loudest 0:
// no sound (silence, or a waveform shorter than a frame).
struct Sound {
    int64_t first = 0, last = 0;
    double loudest = 0;
};

Sound soundOf(const float *x, int64_t len)
{
    constexpr int64_t kFrame = 512; // audibleRange's
    Sound s;
    if (len <= kFrame) return s;
    const auto [first, last] = audibleRange(std::vector<float>(x, x + len), 30);
    s.first = int64_t(first);
    s.last = int64_t(last);
    for (int64_t k = s.first; k + kFrame <= s.last; k += kFrame / 4)
        s.loudest = std::max(s.loudest, powerAboutMean(x + k, size_t(kFrame)));
    return s;
}

} // namespace

NoiseBeside::NoiseBeside(float snrMinDb, float snrMaxDb, float p, NoiseColour colour, float maxGap)
    : m_min(snrMinDb)
    , m_max(snrMaxDb)
    , m_p(p)
    , m_colour(colour)
    , m_maxGap(maxGap)
{}

Result<Shape> NoiseBeside::outputShape(const Shape &in) const
{
    if (Status waves = checkWaveforms(in); !waves) return waves.error();
    if (!(m_min <= m_max)) return makeError("snr_min must not be above snr_max");
    return in;
}

void NoiseBeside::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                        const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    constexpr int64_t kFrame = 512; // audibleRange's
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        float *y = out + i * len;
        std::copy_n(x, len, y);
        if (rng.uniform() >= m_p || len <= kFrame) continue;
        const Sound sound = soundOf(x, len);
        const int64_t first = sound.first, last = sound.last;
        const double loudest = sound.loudest;
        if (loudest <= 0) continue; // silence: no sound to be beside
        // Any draws as it did before there was a choice.
        const NoiseColour colour = drawColour(rng, m_colour);
        const uint64_t side = rng.below(5); // 2 : 2 : 1
        const bool left = side < 2 || side == 4, right = side >= 2;
        const double rms = std::sqrt(loudest) * std::pow(10.0, -rng.uniform(m_min, m_max) / 20.0);
        auto block = [&](int64_t from, int64_t to) {
            if (to - from < kFrame / 4) return;
            const std::vector<double> v = colouredNoise(rng, size_t(to - from), colour, rms);
            for (size_t k = 0; k < v.size(); ++k)
                y[from + int64_t(k)] += float(v[k]);
        };
        const uint64_t gaps = uint64_t(std::floor(double(m_maxGap) * double(len))) + 1;
        const int64_t gapLeft = int64_t(rng.below(gaps));
        const int64_t gapRight = int64_t(rng.below(gaps));
        if (left) block(0, int64_t(first) - gapLeft);
        if (right) block(int64_t(last) + gapRight, len);
    }
}

SpeechBeside::SpeechBeside(float snrMinDb, float snrMaxDb, float p, float minGap, float maxGap)
    : m_min(snrMinDb)
    , m_max(snrMaxDb)
    , m_p(p)
    , m_minGap(minGap)
    , m_maxGap(maxGap)
{}

Result<Shape> SpeechBeside::outputShape(const Shape &in) const
{
    if (Status waves = checkWaveforms(in); !waves) return waves.error();
    if (!(m_min <= m_max)) return makeError("snr_min must not be above snr_max");
    if (!(m_minGap >= 0 && m_minGap <= m_maxGap))
        return makeError("min_gap must be from 0 to max_gap");
    return in;
}

void SpeechBeside::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                         const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    // Each waveform's sound, from the batch as it came, and those with sound to lend.
    std::vector<Sound> sounds;
    std::vector<int64_t> voiced;
    for (int64_t i = 0; i < n; ++i) {
        std::copy_n(in + i * len, len, out + i * len);
        sounds.push_back(soundOf(in + i * len, len));
        if (sounds.back().loudest > 0) voiced.push_back(i);
    }
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const Sound &own = sounds[size_t(i)];
        if (rng.uniform() >= m_p || own.loudest <= 0) continue;
        const uint64_t side = rng.below(4); // 1 : 1 : 2
        const bool left = side != 1, right = side != 0;
        float *y = out + i * len;
        const double level = rng.uniform(m_min, m_max);
        auto gap = [&] {
            return int64_t(std::llround(rng.uniform(m_minGap, m_maxGap) * double(len)));
        };
        // Another waveform of the batch with sound, scaled to `level` below this one's.
        auto other = [&](int64_t &j, double &gain) {
            if (voiced.size() < 2) return false; // this one is voiced: no other is
            do {
                j = voiced[size_t(rng.below(uint64_t(voiced.size())))];
            } while (j == i);
            const Sound &o = sounds[size_t(j)];
            gain = std::sqrt(own.loudest / o.loudest) * std::pow(10.0, -level / 20.0);
            return true;
        };
        // Before the sound, the end of another's, ending a gap before it; after it, the start
        // of another's, starting a gap after it: as much of theirs as the window has room for.
        auto lend = [&](bool before) {
            const int64_t at = before ? own.first - gap() : own.last + gap();
            int64_t j = 0;
            double gain = 0;
            if (!other(j, gain) || (before ? at <= 0 : at >= len)) return;
            const Sound &o = sounds[size_t(j)];
            const float *x = in + j * len;
            const int64_t take = std::min(before ? at : len - at, o.last - o.first);
            const int64_t to = before ? at - take : at, from = before ? o.last - take : o.first;
            for (int64_t k = 0; k < take; ++k)
                y[to + k] += float(gain * x[from + k]);
        };
        if (left) lend(true);
        if (right) lend(false);
    }
}

TimeShift::TimeShift(float maxFraction, bool keepSound)
    : m_max(maxFraction)
    , m_keepSound(keepSound)
{}

void TimeShift::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                      const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    const int64_t most = int64_t(std::floor(double(m_max) * double(len)));
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        int64_t shift = 0;
        if (!m_keepSound) {
            shift = most > 0 ? int64_t(rng.below(uint64_t(2 * most + 1))) - most : 0;
        } else {
            const auto [first, last] = audibleRange(std::vector<float>(x, x + len), 30);
            const int64_t lo = std::max(-most, -int64_t(first)),
                          hi = std::min(most, len - int64_t(last));
            if (hi > lo) shift = lo + int64_t(rng.below(uint64_t(hi - lo + 1)));
        }
        float *y = out + i * len;
        std::fill_n(y, len, 0.0f);
        for (int64_t k = std::max<int64_t>(0, shift); k < std::min(len, len + shift); ++k)
            y[k] = x[k - shift];
    }
}

SpeedPerturb::SpeedPerturb(float maxChange, float p)
    : m_max(maxChange)
    , m_p(p)
{}

Result<Shape> SpeedPerturb::outputShape(const Shape &in) const
{
    if (Status waves = checkWaveforms(in); !waves) return waves.error();
    if (!(m_max >= 0.0f && m_max < 1.0f))
        return makeError("max_change must be at least 0, below 1");
    return in;
}

void SpeedPerturb::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                         const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *src = in + i * len;
        // Both draws always, so that p does not change which speed a sample gets.
        const bool perturb = rng.uniform() < m_p;
        const double factor = rng.uniform(1.0f - m_max, 1.0f + m_max);
        if (!perturb) {
            std::copy_n(src, len, out + i * len);
            continue;
        }
        const std::vector<float> y = stretchedAroundMiddle({src, size_t(len)}, factor);
        std::copy_n(y.begin(), len, out + i * len);
    }
}

Clipping::Clipping(float gainMinDb, float gainMaxDb, float p)
    : m_min(gainMinDb)
    , m_max(gainMaxDb)
    , m_p(p)
{}

Result<Shape> Clipping::outputShape(const Shape &in) const
{
    if (Status waves = checkWaveforms(in); !waves) return waves.error();
    if (!(m_min >= 0 && m_min <= m_max))
        return makeError("gain_min must be at least 0 dB and not above gain_max");
    return in;
}

void Clipping::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                     const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        float *y = out + i * len;
        // Both draws always, so that p does not change the level a sample gets.
        const bool clip = rng.uniform() < m_p;
        const double overDb = rng.uniform(m_min, m_max);
        float peak = 0.0f;
        for (int64_t k = 0; clip && k < len; ++k)
            peak = std::max(peak, std::abs(x[k]));
        if (peak <= 0.0f) { // not clipped, or silence
            if (y != x) std::copy_n(x, len, y);
            continue;
        }
        // Flattened at the peak's level less overDb, the rest as it was.
        const auto ceiling = float(double(peak) * std::pow(10.0, -overDb / 20.0));
        for (int64_t k = 0; k < len; ++k)
            y[k] = std::clamp(x[k], -ceiling, ceiling);
    }
}

RoomMicrophone::RoomMicrophone(Options o)
    : m_o(o)
{}

Result<Shape> RoomMicrophone::outputShape(const Shape &in) const
{
    if (Status waves = checkWaveforms(in); !waves) return waves.error();
    const Options &o = m_o;
    if (!(o.rt60Min >= 0 && o.rt60Min <= o.rt60Max))
        return makeError("rt60_min must be at least 0 and not above rt60_max");
    if (!(o.drrMinDb <= o.drrMaxDb)) return makeError("drr_min must not be above drr_max");
    if (!(o.lowCutMin > 0 && o.lowCutMin <= o.lowCutMax))
        return makeError("low_cut_min must be above 0 and not above low_cut_max");
    if (!(o.highCutMin <= o.highCutMax))
        return makeError("high_cut_min must not be above high_cut_max");
    if (!(o.bandOrder >= 1 && o.bandOrder <= 16)) return makeError("band_order must be 1 to 16");
    if (!(o.lowCutMax < o.highCutMin))
        return makeError("low_cut_max must be below high_cut_min, or the band holds nothing");
    return in;
}

void RoomMicrophone::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                           const uint64_t *seeds) const
{
    const int64_t len = inShape.numel();
    const double rate = double(m_o.sampleRate);
    auto logUniform = [](Rng &rng, float lo, float hi) {
        return std::exp(double(rng.uniform(std::log(lo), std::log(hi))));
    };
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        float *y = out + i * len;
        // Every draw always, so that p and band_p do not change what else a sample gets.
        const bool room = rng.uniform() < m_o.p;
        const double rt60 = rng.uniform(m_o.rt60Min, m_o.rt60Max);
        const double drrDb = rng.uniform(m_o.drrMinDb, m_o.drrMaxDb);
        const double preDelay = rng.uniform(0.001f, 0.02f);
        const bool band = rng.uniform() < m_o.bandP;
        const double lowCut = logUniform(rng, m_o.lowCutMin, m_o.lowCutMax);
        const double highCut = logUniform(rng, m_o.highCutMin, m_o.highCutMax);
        const uint64_t tailSeed = rng.next();
        const bool reverb = room && rt60 * rate >= 1.0;
        const double inPower = sumOfSquares(x, len);
        if ((!reverb && !band) || inPower <= 0 || len < 2) { // silence stays silence
            std::copy_n(x, len, y);
            continue;
        }
        // The impulse response: the direct sound (1 at 0), then the tail.
        std::vector<float> h{1.0f};
        if (reverb) {
            const auto delay = std::max<int64_t>(1, std::llround(preDelay * rate));
            const auto tail = std::min<int64_t>(len, int64_t(std::ceil(rt60 * rate)));
            h.assign(size_t(delay + tail), 0.0f);
            h[0] = 1.0f;
            Rng noise(tailSeed);
            const double decay = std::log(1000.0) / (rt60 * rate); // amplitude: -60 dB at rt60
            float *t = h.data() + delay;
            for (int64_t k = 0; k < tail; ++k)
                t[k] = float(double(noise.normal()) * std::exp(-decay * double(k)));
            const double scale = std::sqrt(std::pow(10.0, -drrDb / 10.0) /
                                           std::max(sumOfSquares(t, tail), 1e-30));
            for (int64_t k = 0; k < tail; ++k)
                t[k] = float(double(t[k]) * scale);
        }
        // Linear convolution by the DFT, with room past the end for the band's zero-phase
        // ringing before the start (it wraps there and is never read).
        const int64_t margin = band ? int64_t(0.05 * rate) : 0;
        const int nFft = cv::getOptimalDFTSize(int(len + int64_t(h.size()) - 1 + margin));
        cv::Mat a = cv::Mat::zeros(1, nFft, CV_32F), b = cv::Mat::zeros(1, nFft, CV_32F);
        std::copy_n(x, len, a.ptr<float>());
        std::copy(h.begin(), h.end(), b.ptr<float>());
        // Real DFTs in OpenCV's packed layout (CCS: bin 0's real part, then each bin's real and
        // imaginary parts, then the last bin's real part when nFft is even): half the work of
        // complex ones.
        cv::Mat fa, fb, product;
        cv::dft(a, fa);
        cv::dft(b, fb);
        cv::mulSpectrums(fa, fb, product, 0);
        if (band) {
            float *packed = product.ptr<float>();
            for (int j = 0; j < nFft; ++j) {
                const double f = double((j + 1) / 2) * rate / double(nFft); // element j's bin
                // Butterworth high-pass and low-pass magnitudes of the order asked for:
                // |H|^2 = 1 / (1 + (f / corner)^(2 order)), and the high-pass's the mirror. The
                // powers by multiplication: this runs for every bin of every sample banded.
                const double r2 = (f / lowCut) * (f / lowCut), q2 = (f / highCut) * (f / highCut);
                double r = r2, q = q2;
                for (int k = 1; k < m_o.bandOrder; ++k) {
                    r *= r2;
                    q *= q2;
                }
                const double hp2 = r / (1.0 + r); // |H|^2, 0 at 0 Hz
                packed[j] *= float(std::sqrt(hp2 / (1.0 + q)));
            }
        }
        cv::Mat z;
        cv::dft(product, z, cv::DFT_INVERSE | cv::DFT_REAL_OUTPUT | cv::DFT_SCALE);
        const float *heard = z.ptr<float>();
        const double outPower = sumOfSquares(heard, len);
        const float gain = outPower > 0 ? float(std::sqrt(inPower / outPower)) : 0.0f;
        for (int64_t k = 0; k < len; ++k)
            y[k] = heard[k] * gain;
    }
}

Spectrogram::Spectrogram(SpectrogramOptions o)
    : m_o(o)
{
    const int64_t nFft = m_o.nFft, bins = nFft / 2 + 1;
    m_window.resize(size_t(nFft));
    for (int64_t k = 0; k < nFft; ++k)
        m_window[size_t(k)] =
            float(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * double(k) / double(nFft)));
    if (m_o.kind == SpectrogramOptions::Kind::Power) return;
    const double fMax = m_o.fMax > 0 ? m_o.fMax : double(m_o.sampleRate) / 2.0;
    const int64_t nMels = m_o.nMels;
    std::vector<double> melF(size_t(nMels + 2));
    const double lo = hzToMel(m_o.fMin), hi = hzToMel(fMax);
    for (int64_t m = 0; m < nMels + 2; ++m)
        melF[size_t(m)] = melToHz(lo + (hi - lo) * double(m) / double(nMels + 1));
    m_mel.assign(size_t(nMels * bins), 0.0f);
    for (int64_t m = 0; m < nMels; ++m) {
        const double left = melF[size_t(m)], centre = melF[size_t(m + 1)],
                     right = melF[size_t(m + 2)];
        const double norm = 2.0 / (right - left);
        for (int64_t b = 0; b < bins; ++b) {
            const double f = double(b) * double(m_o.sampleRate) / double(nFft);
            const double w = std::max(
                0.0, std::min((f - left) / (centre - left), (right - f) / (right - centre)));
            m_mel[size_t(m * bins + b)] = float(w * norm);
        }
    }
    if (m_o.kind != SpectrogramOptions::Kind::Mfcc) return;
    // A matrix, not cv::dct: that one takes even lengths only, and nMels may be odd.
    m_dct.resize(size_t(m_o.nMfcc * nMels));
    for (int64_t k = 0; k < m_o.nMfcc; ++k)
        for (int64_t m = 0; m < nMels; ++m)
            m_dct[size_t(k * nMels + m)] =
                float(std::sqrt((k == 0 ? 1.0 : 2.0) / double(nMels)) *
                      std::cos(std::numbers::pi * double(k) * (2.0 * double(m) + 1.0) /
                               (2.0 * double(nMels))));
}

Result<Shape> Spectrogram::outputShape(const Shape &in) const
{
    if (Status waves = checkWaveforms(in); !waves) return waves.error();
    if (m_o.nFft < 16 || m_o.hop < 1) return makeError("n_fft must be at least 16, hop at least 1");
    if (m_o.kind != SpectrogramOptions::Kind::Power &&
        (m_o.nMels < 1 || (m_o.fMax > 0 && m_o.fMax <= m_o.fMin) ||
         (m_o.fMax > double(m_o.sampleRate) / 2.0)))
        return makeError("the mel bands need n_mels >= 1 and f_min < f_max <= sample_rate / 2");
    if (m_o.kind == SpectrogramOptions::Kind::Mfcc && (m_o.nMfcc < 1 || m_o.nMfcc > m_o.nMels))
        return makeError("n_mfcc must be 1 to n_mels");
    const int64_t frames = 1 + in[2] / m_o.hop;
    const int64_t rows = m_o.kind == SpectrogramOptions::Kind::Power ? m_o.nFft / 2 + 1
                         : m_o.kind == SpectrogramOptions::Kind::Mel ? m_o.nMels
                                                                     : m_o.nMfcc;
    return Shape{1, rows, frames};
}

void Spectrogram::apply(const float *in, float *out, int64_t n, const Shape &inShape,
                        const uint64_t *) const
{
    const int64_t len = inShape[2], nFft = m_o.nFft, hop = m_o.hop, bins = nFft / 2 + 1;
    const int64_t frames = 1 + len / hop, pad = nFft / 2;
    const Shape outShape = outputShape(inShape).value();
    const int64_t rows = outShape[1];
    cv::Mat windowed(int(frames), int(nFft), CV_32F), spectrum;
    std::vector<float> power(size_t(bins * frames)), mel, db;
    for (int64_t i = 0; i < n; ++i) {
        const float *x = in + i * len;
        for (int64_t t = 0; t < frames; ++t) {
            float *row = windowed.ptr<float>(int(t));
            for (int64_t k = 0; k < nFft; ++k) {
                const int64_t s = t * hop + k - pad; // centred, zeros beyond the ends
                row[k] = s >= 0 && s < len ? x[s] * m_window[size_t(k)] : 0.0f;
            }
        }
        cv::dft(windowed, spectrum, cv::DFT_ROWS | cv::DFT_COMPLEX_OUTPUT);
        for (int64_t t = 0; t < frames; ++t) {
            const cv::Vec2f *c = spectrum.ptr<cv::Vec2f>(int(t));
            for (int64_t b = 0; b < bins; ++b)
                power[size_t(b * frames + t)] = c[b][0] * c[b][0] + c[b][1] * c[b][1];
        }
        const std::vector<float> *feature = &power;
        if (m_o.kind != SpectrogramOptions::Kind::Power) {
            mel.assign(size_t(m_o.nMels * frames), 0.0f);
            for (int64_t m = 0; m < m_o.nMels; ++m) {
                float *dst = mel.data() + m * frames;
                for (int64_t b = 0; b < bins; ++b) {
                    const float w = m_mel[size_t(m * bins + b)];
                    if (w == 0.0f) continue;
                    const float *src = power.data() + b * frames;
                    for (int64_t t = 0; t < frames; ++t)
                        dst[t] += w * src[t];
                }
            }
            feature = &mel;
        }
        if (m_o.toDb || m_o.kind == SpectrogramOptions::Kind::Mfcc) {
            db.resize(feature->size());
            float top = -std::numeric_limits<float>::infinity();
            for (size_t k = 0; k < db.size(); ++k) {
                db[k] = float(10.0 * std::log10(std::max(1e-10, double((*feature)[k]))));
                top = std::max(top, db[k]);
            }
            if (m_o.topDb > 0)
                for (float &v : db)
                    v = std::max(v, float(top - m_o.topDb));
            feature = &db;
        }
        float *y = out + i * rows * frames;
        if (m_o.kind == SpectrogramOptions::Kind::Mfcc) {
            for (int64_t k = 0; k < m_o.nMfcc; ++k)
                for (int64_t t = 0; t < frames; ++t) {
                    double sum = 0;
                    for (int64_t m = 0; m < m_o.nMels; ++m)
                        sum += double(m_dct[size_t(k * m_o.nMels + m)]) *
                               double((*feature)[size_t(m * frames + t)]);
                    y[k * frames + t] = float(sum);
                }
        } else {
            std::copy(feature->begin(), feature->end(), y);
        }
    }
}

Status Spectrogram::exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                             const Shape &inShape) const
{
    auto outShape = outputShape(inShape);
    if (!outShape.ok()) return outShape.error();
    const int64_t len = inShape[2], nFft = m_o.nFft, hop = m_o.hop, bins = nFft / 2 + 1;
    const int64_t frames = (*outShape)[2], rows = (*outShape)[1], pad = nFft / 2;
    // [N, 1, 1, len] padded so that frame t covers samples t * hop - pad .. + nFft, as apply().
    const int64_t right = std::max<int64_t>(0, (frames - 1) * hop + nFft - pad - len);
    const std::string padded = g.name(output + ".padded");
    g.node("Pad", {input, g.constantInts(output + ".pads", {0, 0, 0, pad, 0, 0, 0, right})},
           {padded});
    // The windowed DFT of every frame: bins kernels of window x cos, then bins of window x sin
    // (the sign of the imaginary part does not reach the power).
    std::vector<float> basis(size_t(2 * bins * nFft));
    for (int64_t b = 0; b < bins; ++b)
        for (int64_t k = 0; k < nFft; ++k) {
            const double angle = 2.0 * std::numbers::pi * double(b * k % nFft) / double(nFft);
            basis[size_t(b * nFft + k)] = float(double(m_window[size_t(k)]) * std::cos(angle));
            basis[size_t((bins + b) * nFft + k)] =
                float(double(m_window[size_t(k)]) * std::sin(angle));
        }
    const std::string dft = g.name(output + ".dft"), squared = g.name(output + ".squared"),
                      re = g.name(output + ".re2"), im = g.name(output + ".im2"),
                      power = g.name(output + ".power");
    g.node("Conv", {padded, g.constant(output + ".dft_basis", {2 * bins, 1, 1, nFft}, basis)},
           {dft},
           {ExportAttribute::integers("kernel_shape", {1, nFft}),
            ExportAttribute::integers("strides", {1, hop})});
    g.node("Mul", {dft, dft}, {squared}); // [N, 2 bins, 1, frames]
    const std::string axis = g.constantInts(output + ".bin_axis", {1});
    g.node("Slice",
           {squared, g.constantInts(output + ".re_start", {0}),
            g.constantInts(output + ".re_end", {bins}), axis},
           {re});
    g.node("Slice",
           {squared, g.constantInts(output + ".im_start", {bins}),
            g.constantInts(output + ".im_end", {2 * bins}), axis},
           {im});
    g.node("Add", {re, im}, {power}); // [N, bins, 1, frames]
    std::string feature = power;
    if (m_o.kind != SpectrogramOptions::Kind::Power) {
        feature = g.name(output + ".mel");
        g.node("Conv", {power, g.constant(output + ".mel_weights", {m_o.nMels, bins, 1, 1}, m_mel)},
               {feature}, {ExportAttribute::integers("kernel_shape", {1, 1})});
    }
    // max(x, floor) as floor + relu(x - floor): OpenCV 4.6's dnn reads no Max with a constant,
    // no opset-11 Clip, and no Max of two computed tensors.
    auto atLeast = [&](const std::string &x, const std::string &floor, const std::string &hint) {
        const std::string above = g.name(hint + ".above"), kept = g.name(hint + ".kept"),
                          out = g.name(hint);
        g.node("Sub", {x, floor}, {above});
        g.node("Relu", {above}, {kept});
        g.node("Add", {kept, floor}, {out});
        return out;
    };
    if (m_o.toDb || m_o.kind == SpectrogramOptions::Kind::Mfcc) {
        const std::string floored =
            atLeast(feature, g.constant(output + ".amin", {}, {1e-10f}), output + ".floored");
        const std::string ln = g.name(output + ".ln"), db = g.name(output + ".db");
        g.node("Log", {floored}, {ln});
        g.node("Mul", {ln, g.constant(output + ".to_db", {}, {float(10.0 / std::log(10.0))})},
               {db});
        feature = db;
        if (m_o.topDb > 0) {
            // max(db, top - top_db) with top each sample's largest value. OpenCV 4.6's dnn turns
            // a ReduceMax over three axes into a Reshape it cannot run, and subtracts no [N, 1, 1,
            // 1] from a whole sample: so top is spread over the sample's plane by two max pools
            // whose windows cover it from any cell (along time, then along the bands: 2 rows +
            // 2 frames compares per value).
            const int64_t bands = m_o.kind == SpectrogramOptions::Kind::Power ? bins : m_o.nMels;
            const std::string planes = g.name(output + ".planes"),
                              rowTop = g.name(output + ".row_top"), top = g.name(output + ".top"),
                              floor = g.name(output + ".floor");
            g.node("Reshape",
                   {db, g.constantInts(output + ".planes_shape", {-1, 1, bands, frames})},
                   {planes});
            g.node("MaxPool", {planes}, {rowTop},
                   {ExportAttribute::integers("kernel_shape", {1, 2 * frames - 1}),
                    ExportAttribute::integers("pads", {0, frames - 1, 0, frames - 1})});
            g.node("MaxPool", {rowTop}, {top},
                   {ExportAttribute::integers("kernel_shape", {2 * bands - 1, 1}),
                    ExportAttribute::integers("pads", {bands - 1, 0, bands - 1, 0})});
            g.node("Sub", {top, g.constant(output + ".top_db", {}, {float(m_o.topDb)})}, {floor});
            const std::string clipped = atLeast(planes, floor, output + ".clipped");
            feature = g.name(output + ".bands");
            g.node("Reshape",
                   {clipped, g.constantInts(output + ".bands_shape", {-1, bands, 1, frames})},
                   {feature});
        }
    }
    if (m_o.kind == SpectrogramOptions::Kind::Mfcc) {
        const std::string mfcc = g.name(output + ".mfcc");
        g.node("Conv", {feature, g.constant(output + ".dct", {m_o.nMfcc, m_o.nMels, 1, 1}, m_dct)},
               {mfcc}, {ExportAttribute::integers("kernel_shape", {1, 1})});
        feature = mfcc;
    }
    // [N, rows, 1, frames] holds the same numbers as [N, 1, rows, frames].
    g.node("Reshape", {feature, g.constantInts(output + ".shape", {-1, 1, rows, frames})},
           {output});
    return {};
}

SpecAugment::SpecAugment(int64_t freqMasks, int64_t freqWidth, int64_t timeMasks, int64_t timeWidth)
    : m_freqMasks(freqMasks)
    , m_freqWidth(freqWidth)
    , m_timeMasks(timeMasks)
    , m_timeWidth(timeWidth)
{}

void SpecAugment::apply(const float *in, float *out, int64_t n, const Shape &s,
                        const uint64_t *seeds) const
{
    const int64_t channels = s[0], rows = s[1], frames = s[2], len = s.numel();
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        float *y = out + i * len;
        double sum = 0;
        for (int64_t k = 0; k < len; ++k)
            sum += x[k];
        const float mean = float(sum / double(std::max<int64_t>(len, 1)));
        if (y != x) std::copy_n(x, len, y);
        // A mask of width w (0..most) starting anywhere it fits.
        auto span = [&rng](int64_t most, int64_t size) {
            const int64_t w = int64_t(rng.below(uint64_t(std::min(most, size) + 1)));
            const int64_t start = int64_t(rng.below(uint64_t(size - w + 1)));
            return std::pair{start, start + w};
        };
        for (int64_t m = 0; m < m_freqMasks; ++m) {
            const auto [a, b] = span(m_freqWidth, rows);
            for (int64_t c = 0; c < channels; ++c)
                for (int64_t r = a; r < b; ++r)
                    std::fill_n(y + (c * rows + r) * frames, frames, mean);
        }
        for (int64_t m = 0; m < m_timeMasks; ++m) {
            const auto [a, b] = span(m_timeWidth, frames);
            for (int64_t c = 0; c < channels; ++c)
                for (int64_t r = 0; r < rows; ++r)
                    std::fill(y + (c * rows + r) * frames + a, y + (c * rows + r) * frames + b,
                              mean);
        }
    }
}

std::vector<double> Spectrogram::rowFrequencies() const
{
    std::vector<double> hz;
    if (m_o.kind == SpectrogramOptions::Kind::Power) {
        for (int64_t b = 0; b <= m_o.nFft / 2; ++b)
            hz.push_back(double(b) * double(m_o.sampleRate) / double(m_o.nFft));
    } else if (m_o.kind == SpectrogramOptions::Kind::Mel) {
        // Each band's centre: the middle of its triangle's three mel points (the constructor's).
        const double lo = hzToMel(m_o.fMin), hi = hzToMel(topFrequency());
        for (int64_t m = 1; m <= m_o.nMels; ++m)
            hz.push_back(melToHz(lo + (hi - lo) * double(m) / double(m_o.nMels + 1)));
    }
    return hz;
}

double Spectrogram::topFrequency() const
{
    return m_o.kind != SpectrogramOptions::Kind::Power && m_o.fMax > 0
               ? m_o.fMax
               : double(m_o.sampleRate) / 2.0;
}

FrequencyWarp::FrequencyWarp(std::vector<double> rowHz, double topHz, float maxChange, float p)
    : m_rowHz(std::move(rowHz))
    , m_topHz(topHz)
    , m_max(maxChange)
    , m_p(p)
{}

Result<Shape> FrequencyWarp::outputShape(const Shape &in) const
{
    if (m_rowHz.empty())
        return makeError("needs rows that are frequencies: put it after a stft or "
                         "mel_spectrogram node of its chain (MFCCs' rows are not)");
    if (in.rank() != 3 || in[1] != int64_t(m_rowHz.size()))
        return makeError("expects the " + std::to_string(m_rowHz.size()) +
                         " rows of the spectrogram before it, [c, rows, frames], not " + in.str());
    if (!(m_max >= 0.0f && m_max < 1.0f))
        return makeError("max_change must be at least 0, below 1");
    return in;
}

double FrequencyWarp::sourceFrequency(double f, double alpha) const
{
    // The warp: f -> alpha f up to f0 = 0.6 topHz min(alpha, 1) / alpha, which lands on g0 =
    // alpha f0; then a straight line from (f0, g0) to (topHz, topHz). Its inverse, for the
    // frequency g a row stands for:
    const double g0 = 0.6 * m_topHz * std::min(alpha, 1.0), f0 = g0 / alpha;
    if (f <= g0) return f / alpha;
    return m_topHz - (m_topHz - f) * (m_topHz - f0) / (m_topHz - g0);
}

void FrequencyWarp::apply(const float *in, float *out, int64_t n, const Shape &s,
                          const uint64_t *seeds) const
{
    const int64_t channels = s[0], rows = s[1], frames = s[2], len = s.numel();
    std::vector<int64_t> below(static_cast<size_t>(rows));
    std::vector<float> share(static_cast<size_t>(rows)); // of the row above `below`
    for (int64_t i = 0; i < n; ++i) {
        Rng rng(seeds[i]);
        const float *x = in + i * len;
        float *y = out + i * len;
        if (rng.uniform() >= m_p) {
            std::copy_n(x, len, y);
            continue;
        }
        const double alpha = 1.0 + double(m_max) * (2.0 * double(rng.uniform()) - 1.0);
        for (int64_t r = 0; r < rows; ++r) {
            const double f = sourceFrequency(m_rowHz[size_t(r)], alpha);
            // The rows around f: the first row above it, and the one before (f itself when a
            // row stands for f, so that alpha 1 gives the features back as they were).
            const auto up = std::upper_bound(m_rowHz.begin(), m_rowHz.end(), f);
            if (up == m_rowHz.begin() || up == m_rowHz.end()) {
                below[size_t(r)] = up == m_rowHz.begin() ? 0 : rows - 1;
                share[size_t(r)] = 0.0f;
                continue;
            }
            const int64_t k = int64_t(up - m_rowHz.begin()) - 1;
            below[size_t(r)] = k;
            share[size_t(r)] =
                float((f - m_rowHz[size_t(k)]) / (m_rowHz[size_t(k + 1)] - m_rowHz[size_t(k)]));
        }
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t r = 0; r < rows; ++r) {
                const float *lo = x + (c * rows + below[size_t(r)]) * frames;
                const float *hi = share[size_t(r)] > 0.0f ? lo + frames : lo;
                const float w = share[size_t(r)];
                float *dst = y + (c * rows + r) * frames;
                for (int64_t t = 0; t < frames; ++t)
                    dst[t] = lo[t] + w * (hi[t] - lo[t]);
            }
    }
}

FeatureNorm::FeatureNorm(Mean mean, bool variance, float minStd)
    : m_mean(mean)
    , m_variance(variance)
    , m_minStd(minStd)
{}

Pcen::Pcen(Options o)
    : m_o(o)
{}

double Pcen::smoothing() const
{
    // librosa.pcen's coefficient for a time constant of t frames:
    // b = (sqrt(1 + 4 t^2) - 1) / (2 t^2).
    const double t = double(m_o.timeConstant) * m_o.framesPerSecond;
    return t > 0 ? (std::sqrt(1.0 + 4.0 * t * t) - 1.0) / (2.0 * t * t) : 1.0;
}

Result<Shape> Pcen::outputShape(const Shape &in) const
{
    if (m_o.framesPerSecond <= 0)
        return makeError("needs energies per frequency: put it after a stft or mel_spectrogram "
                         "node of its chain (MFCCs are not energies)");
    if (m_o.inDb)
        return makeError("needs energies, not decibels: set to_db false on the spectrogram "
                         "before it");
    if (in.rank() != 3) return makeError("expects features [c, rows, frames], not " + in.str());
    if (!(m_o.timeConstant > 0) || !(m_o.eps > 0) || !(m_o.power > 0) || !(m_o.bias >= 0))
        return makeError("time_constant, eps and power must be above 0, bias at least 0");
    return in;
}

void Pcen::apply(const float *in, float *out, int64_t n, const Shape &s, const uint64_t *) const
{
    const int64_t rows = s[0] * s[1], frames = s[2];
    const double b = smoothing();
    // The powers as exp and log in float (std::pow in double took a fifth of the example's
    // training step); the recursion in double.
    const float gain = m_o.gain, bias = m_o.bias, power = m_o.power, eps = m_o.eps,
                floor = std::pow(bias, power);
    const bool root = power == 0.5f;
    for (int64_t r = 0; r < n * rows; ++r) {
        const float *x = in + r * frames;
        float *y = out + r * frames;
        double m = frames > 0 ? std::max(0.0, double(x[0])) : 0.0;
        for (int64_t t = 0; t < frames; ++t) {
            const float e = std::max(0.0f, x[t]);
            m = (1.0 - b) * m + b * double(e);
            const float v = e * std::exp(-gain * std::log(eps + float(m))) + bias;
            y[t] = (root ? std::sqrt(v) : (v > 0 ? std::exp(power * std::log(v)) : 0.0f)) - floor;
        }
    }
}

Status Pcen::exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                      const Shape &s) const
{
    const int64_t channels = s[0], frames = s[2];
    const double b = smoothing();
    // M[t] = sum over lags l <= t of b (1 - b)^l E[t - l], a causal Conv (the kernel's last tap is
    // lag 0), plus (1 - b)^(t + 1) E[0]: a Conv over the first frame alone, padded so that the
    // kernel's tap frames - 1 - t meets it at output t.
    std::vector<float> past(size_t(channels * frames)), first(size_t(channels * frames));
    for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < frames; ++i) {
            past[size_t(c * frames + i)] = float(b * std::pow(1.0 - b, double(frames - 1 - i)));
            first[size_t(c * frames + i)] = float(std::pow(1.0 - b, double(frames - i)));
        }
    auto conv = [&](const std::string &in, const std::string &hint, const std::vector<float> &w,
                    int64_t right) {
        const std::string out = g.name(output + hint);
        g.node("Conv", {in, g.constant(output + hint + ".w", {channels, 1, 1, frames}, w)}, {out},
               {ExportAttribute::integer("group", channels),
                ExportAttribute::integers("kernel_shape", {1, frames}),
                ExportAttribute::integers("pads", {0, frames - 1, 0, right})});
        return out;
    };
    const std::string e0 = g.name(output + ".first_frame");
    g.node("Slice",
           {input, g.constantInts(output + ".first_start", {0}),
            g.constantInts(output + ".first_end", {1}), g.constantInts(output + ".time_axis", {3})},
           {e0});
    const std::string m = g.name(output + ".smooth"), shifted = g.name(output + ".smooth_eps"),
                      divisor = g.name(output + ".divisor"), v = g.name(output + ".divided"),
                      biased = g.name(output + ".biased"), compressed = g.name(output + ".power");
    g.node("Add", {conv(input, ".past", past, 0), conv(e0, ".start", first, frames - 1)}, {m});
    g.node("Add", {m, g.constant(output + ".eps", {}, {m_o.eps})}, {shifted});
    g.node("Pow", {shifted, g.constant(output + ".neg_gain", {}, {-m_o.gain})}, {divisor});
    g.node("Mul", {input, divisor}, {v});
    g.node("Add", {v, g.constant(output + ".bias", {}, {m_o.bias})}, {biased});
    g.node("Pow", {biased, g.constant(output + ".exponent", {}, {m_o.power})}, {compressed});
    // - bias^power as a 1x1 Conv's bias: OpenCV 4.6's dnn folds a Sub of a constant after a Pow
    // into the power's base ((x + bias - bias^power)^power, measured), a Conv it leaves alone.
    g.node(
        "Conv",
        {compressed,
         g.constant(output + ".one", {channels, 1, 1, 1},
                    std::vector<float>(size_t(channels), 1.0f)),
         g.constant(output + ".minus_bias_power", {channels},
                    std::vector<float>(size_t(channels), -float(std::pow(m_o.bias, m_o.power))))},
        {output},
        {ExportAttribute::integer("group", channels),
         ExportAttribute::integers("kernel_shape", {1, 1})});
    return {};
}

void FeatureNorm::apply(const float *in, float *out, int64_t n, const Shape &s,
                        const uint64_t *) const
{
    const int64_t rows = s[0] * s[1], frames = s[2], len = s.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float *x = in + i * len;
        float *y = out + i * len;
        if (m_mean == Mean::PerRow) {
            for (int64_t r = 0; r < rows; ++r) {
                double sum = 0;
                for (int64_t t = 0; t < frames; ++t)
                    sum += x[r * frames + t];
                const float mean = float(sum / double(std::max<int64_t>(frames, 1)));
                for (int64_t t = 0; t < frames; ++t)
                    y[r * frames + t] = x[r * frames + t] - mean;
            }
        } else if (m_mean == Mean::PerSample) {
            double sum = 0;
            for (int64_t k = 0; k < len; ++k)
                sum += x[k];
            const float mean = float(sum / double(std::max<int64_t>(len, 1)));
            for (int64_t k = 0; k < len; ++k)
                y[k] = x[k] - mean;
        } else if (y != x) {
            std::copy_n(x, len, y);
        }
        if (!m_variance) continue;
        double squares = 0;
        for (int64_t k = 0; k < len; ++k)
            squares += double(y[k]) * double(y[k]);
        const float sd =
            std::max(float(std::sqrt(squares / double(std::max<int64_t>(len, 1)))), m_minStd);
        for (int64_t k = 0; k < len; ++k)
            y[k] /= sd;
    }
}

Status FeatureNorm::exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                             const Shape &s) const
{
    const int64_t channels = s[0], rows = s[1], frames = s[2];
    // The mean along one axis, at every cell: a depthwise Conv whose kernel of 2 * size - 1
    // cells of 1 / size, padded by size - 1 on both sides, covers the whole axis from anywhere.
    auto meanAlong = [&](const std::string &in, bool overFrames, const std::string &hint) {
        const int64_t size = overFrames ? frames : rows, k = 2 * size - 1;
        const std::vector<int64_t> dims = overFrames ? std::vector<int64_t>{channels, 1, 1, k}
                                                     : std::vector<int64_t>{channels, 1, k, 1};
        const std::string w = g.constant(
            hint + ".w", dims, std::vector<float>(size_t(channels * k), 1.0f / float(size)));
        const std::string out = g.name(hint);
        const std::vector<int64_t> kernel =
            overFrames ? std::vector<int64_t>{1, k} : std::vector<int64_t>{k, 1};
        const std::vector<int64_t> pads = overFrames
                                              ? std::vector<int64_t>{0, size - 1, 0, size - 1}
                                              : std::vector<int64_t>{size - 1, 0, size - 1, 0};
        g.node("Conv", {in, w}, {out},
               {ExportAttribute::integer("group", channels),
                ExportAttribute::integers("kernel_shape", kernel),
                ExportAttribute::integers("pads", pads)});
        return out;
    };
    std::string centred = input;
    if (m_mean != Mean::None) {
        std::string mean = meanAlong(input, true, output + ".row_mean");
        if (m_mean == Mean::PerSample) mean = meanAlong(mean, false, output + ".mean");
        centred = m_variance ? g.name(output + ".centred") : output;
        g.node("Sub", {input, mean}, {centred});
    }
    if (!m_variance) {
        if (centred == input) g.node("Identity", {input}, {output});
        return {};
    }
    const std::string squares = g.name(output + ".squares");
    g.node("Mul", {centred, centred}, {squares});
    const std::string variance =
        meanAlong(meanAlong(squares, true, output + ".row_var"), false, output + ".var");
    // max(sd, min_std) as min_std + relu(sd - min_std): OpenCV 4.6's dnn runs no Max with a
    // constant.
    const std::string sd = g.name(output + ".sd"), over = g.name(output + ".sd_over"),
                      kept = g.name(output + ".sd_kept"), floored = g.name(output + ".sd_floor");
    const std::string minStd = g.constant(output + ".min_std", {}, {m_minStd});
    g.node("Sqrt", {variance}, {sd});
    g.node("Sub", {sd, minStd}, {over});
    g.node("Relu", {over}, {kept});
    g.node("Add", {kept, minStd}, {floored});
    g.node("Div", {centred, floored}, {output});
    return {};
}

} // namespace fb::data
