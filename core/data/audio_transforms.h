#pragma once

#include "core/data/transforms.h"

#include <vector>

namespace fb::data {

// Stages of an audio chain (docs/audio.md). Waveforms arrive as [1, 1, samples] from an audio
// source; the feature stages turn them into [1, rows, frames] images that the convolutions take
// like any other.

// The colours of noise the noise stages add: white (flat), pink (-3 dB an octave: a fan, a
// room's hum and rumble, most microphones' floor), brown (-6 dB an octave: wind, traffic), or
// any of the three, drawn for each sample.
// The first three in the order drawn; PinkOrBrown (noise_beside's) draws one of those two.
enum class NoiseColour { White, Pink, Brown, Any, PinkOrBrown };

// Adds Gaussian noise over the whole waveform at a signal-to-noise ratio drawn uniformly from
// [snrMinDb, snrMaxDb] (against the waveform's mean power), to each sample with probability p:
// white, or pink, brown or any of them (NoiseColour). With probability humP a sample's noise is
// mains hum instead, at the same ratio: a transformer's buzz as a microphone beside a charger or
// on a ground loop picks it up, 50 or 60 Hz (drawn, within 1%) and its harmonics up to 1 kHz at
// 1/k^a of the fundamental (a drawn from 0.5 to 2: a pure hum to a buzz), each at a random phase,
// at sampleRate. Hum 5 dB under a recording's power took 8 to 16 points off the spoken-digits
// example's never-heard digits, mostly to `unknown`; a training with hum_p 0.25 got 1 to 5 of
// them back and cost up to 3 of the recordings as made, so the example has none
// (bench/results/hum-and-long-takes-20261207.md).
class AddNoise : public Transform {
public:
    AddNoise(float snrMinDb, float snrMaxDb, float p, NoiseColour colour = NoiseColour::White,
             float humP = 0.0f, int64_t sampleRate = 16000);
    bool random() const override { return true; }
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_min, m_max, m_p, m_humP;
    NoiseColour m_colour;
    int64_t m_rate;
};

// Noise that starts or stops beside the sound: a fan switched on, a car going by, the noise
// between two words of a long recording. Each waveform, with probability p, gets coloured noise
// (white, pink or brown, drawn) from one edge of the window up to its sound (the part within
// 30 dB of its loudest frame, audibleRange), on the left, the right or both sides (2 : 2 : 1),
// 0 to maxGap of the window apart from it (a twentieth by default: 50 ms of a second), at a level
// drawn uniformly from snrMinDb to snrMaxDb below the sound's loudest frame; `colour` Any draws
// white, pink or brown, PinkOrBrown one of those two (white noise right beside a word is a hiss, as
// an "s" is). A window that listening (docs/audio.md, "Listen") cuts from a stream holds such noise
// beside a word as often as not; a model that heard words only in silence or over steady noise
// heard a digit there half as surely as one in silence.
class NoiseBeside : public Transform {
public:
    NoiseBeside(float snrMinDb, float snrMaxDb, float p, NoiseColour colour = NoiseColour::Any,
                float maxGap = 0.05f);
    bool random() const override { return true; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_min, m_max, m_p;
    NoiseColour m_colour;
    float m_maxGap;
};

// Other speech beside the sound: what a window cut from a stream holds when words come close
// together ("three seven one", 0.1 to 0.3 s apart), where the example, which learned every word
// alone in its second, heard 13 of 144 digits against 134 with 0.4 to 1.6 s between them
// (bench/results/recordings-real-files-20261206.md). Each waveform, with probability p, gets the
// end of another waveform of its batch's sound (audibleRange, 30 dB) before its own sound and the
// start of a third after it, or one of the two (1 : 1 : 2), minGap to maxGap of the window apart
// from it, at a level drawn from snrMinDb to snrMaxDb below the sound's loudest frame (their
// loudest frames compared). The label stays the sound's: the word in the middle is the word.
// The others are drawn among the batch's waveforms with sound: a waveform alone, or the only one
// with sound, is left as it is, and a waveform without sound (silence) gets none.
class SpeechBeside : public Transform {
public:
    SpeechBeside(float snrMinDb, float snrMaxDb, float p, float minGap = 0.02f,
                 float maxGap = 0.3f);
    bool random() const override { return true; }
    bool inPlace() const override { return false; } // reads the batch's other waveforms
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_min, m_max, m_p, m_minGap, m_maxGap;
};

// Shifts each waveform by a whole number of samples drawn uniformly from
// [-maxFraction * length, maxFraction * length], filling with silence. With keepSound, only as far
// as its sound (the part within 30 dB of its loudest frame, audibleRange) stays whole inside the
// window: a short word goes anywhere within maxFraction, a word as long as the window nowhere.
// Meant for listening, which hears each word at every place from a third of a window early to a
// third late; on the spoken-digits example it made the model less sure everywhere, and it found
// fewer digits (docs/audio-history.md, "Where the example errs, where in the window it is sure").
class TimeShift : public Transform {
public:
    explicit TimeShift(float maxFraction, bool keepSound = false);
    bool random() const override { return true; }
    bool inPlace() const override { return false; }
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_max;
    bool m_keepSound;
};

// Speed perturbation (Ko et al. 2015; Kaldi's recipes, torchaudio's SpeedPerturbation): each
// waveform, with probability p, played at a speed drawn uniformly from [1 - maxChange,
// 1 + maxChange] by resampling, so that it is that much shorter or longer and every frequency in
// it, the voice's pitch and its formants, that much higher or lower: another speaker's vocal
// tract and rate. Centred again on its middle and kept at its length (stretchedAroundMiddle), so
// that a word the source centred stays centred. Waveforms [1, 1, samples] only.
class SpeedPerturb : public Transform {
public:
    SpeedPerturb(float maxChange, float p);
    bool random() const override { return true; }
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_max, m_p;
};

// A recording driven past full scale (a speaker close to a laptop's microphone, an input gain
// set too high): each waveform, with probability p, scaled so that its peak lies a level drawn
// uniformly from [gainMinDb, gainMaxDb] over full scale, cut off at full scale, and scaled back,
// so that its level is kept and every peak above that many dB under the loudest is flattened.
// Hard clipping, as an ADC's: a waveform's peak then reads flat tops, whose harmonics spread over
// the whole band. Silence stays silence. Waveforms [1, 1, samples].
class Clipping : public Transform {
public:
    Clipping(float gainMinDb, float gainMaxDb, float p);
    bool random() const override { return true; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    float m_min, m_max, m_p;
};

// A room and a microphone, drawn for each waveform (multi-condition training, as keyword
// spotters trained for rooms they never heard are: Ko et al. 2017's simulated reverberation,
// Kaldi's and Google's room-simulated recipes). With probability p the waveform is heard in a
// room: convolved with an impulse response made on the spot, the direct sound followed after a
// pre-delay (1 to 20 ms) by a diffuse tail of Gaussian noise decaying 60 dB over a reverberation
// time drawn uniformly from [rt60Min, rt60Max] s, as loud against the direct sound as a
// direct-to-reverberant ratio drawn from [drrMinDb, drrMaxDb] says. With probability bandP, apart
// from it, the result goes through a microphone's or a channel's band: a high-pass corner drawn
// log-uniformly from [lowCutMin, lowCutMax] Hz and a low-pass corner from [highCutMin, highCutMax]
// Hz (Butterworth magnitudes of bandOrder, 2 by default; zero phase), so that a cheap microphone's
// thin bass or a telephone's 300 to 3400 Hz is heard; a high order (8 and up) is nearly a wall, as
// a recording made at a lower sample rate holds nothing above half of it. The output keeps the
// input's length, its direct sound at the same time (the tail past the end is cut), and its RMS
// (the level is feature_norm's and the noise stages' business). The data set's recordings may each
// carry one room or channel baked in (scripts/make_spoken_digits.sh); this gives every epoch
// another, and a data set recorded in one room (the Record panel's) rooms it never had. Its own
// code: our libraries have a DFT (OpenCV's, used here) but no room or impulse-response model; the
// exponentially decaying noise tail is the textbook one (Schroeder's statistical model of a diffuse
// field). Waveforms [1, 1, samples].
class RoomMicrophone : public Transform {
public:
    struct Options {
        int64_t sampleRate = 16000;
        float p = 0.5f;
        float rt60Min = 0.1f, rt60Max = 0.7f; // seconds
        float drrMinDb = 0.0f, drrMaxDb = 12.0f;
        float bandP = 0.5f;
        float lowCutMin = 50.0f, lowCutMax = 400.0f;     // Hz
        float highCutMin = 3000.0f, highCutMax = 7500.0f; // Hz
        int bandOrder = 2;                                // the Butterworth filters' order, 1 to 16
    };
    explicit RoomMicrophone(Options o);
    bool random() const override { return true; }
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    Options m_o;
};

// Spectrograms with librosa's conventions (librosa 0.10: stft, feature.melspectrogram,
// power_to_db, feature.mfcc):
// - frames centred: the waveform is padded with nFft / 2 zeros at both ends, frame t starts at
//   t * hop, 1 + samples / hop frames;
// - a periodic Hann window of nFft samples; power |X|^2 of bins 0 .. nFft / 2;
// - mel: Slaney's mel scale (linear below 1 kHz, logarithmic above) and Slaney normalization
//   (each triangle scaled by 2 / its width in Hz), nMels filters from fMin to fMax;
// - dB: 10 log10(max(1e-10, S)), then at most topDb below the sample's maximum (topDb 0: no
//   floor);
// - MFCC: the orthonormal DCT-II of the dB mel spectrogram along the mel axis, the first nMfcc.
struct SpectrogramOptions {
    enum class Kind { Power, Mel, Mfcc } kind = Kind::Mel;
    int64_t sampleRate = 16000;
    int64_t nFft = 512, hop = 160;
    int64_t nMels = 40;
    double fMin = 0, fMax = 0; // fMax 0: sampleRate / 2
    bool toDb = true;          // Power and Mel; Mfcc always works on dB
    double topDb = 80;
    int64_t nMfcc = 13;
};

class Spectrogram : public Transform {
public:
    explicit Spectrogram(SpectrogramOptions o);
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    // The same arithmetic as ONNX operators that every runtime runs (OpenCV's dnn has no STFT):
    // the centring Pad, the windowed DFT as a strided Conv whose kernels are the window times
    // cos and sin, power from the two halves, mel weights and the DCT as 1x1 Convs, dB through
    // Log, the top_db floor from ReduceMax.
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;
    // The mel filter bank, [nMels, nFft / 2 + 1] row-major (tests).
    const std::vector<float> &melFilters() const { return m_mel; }
    // The frequency (Hz) each output row stands for, increasing: a bin's own, a mel band's
    // centre. Empty for MFCCs, whose rows are not frequencies.
    std::vector<double> rowFrequencies() const;
    // The top of the rows' range: f_max for mel bands, else half the sample rate.
    double topFrequency() const;
    const SpectrogramOptions &options() const { return m_o; }

private:
    SpectrogramOptions m_o;
    std::vector<float> m_window; // periodic Hann
    std::vector<float> m_mel;    // [nMels, bins]
    std::vector<float> m_dct;    // [nMfcc, nMels], orthonormal DCT-II rows
};

// SpecAugment's masks (Park et al. 2019) on [c, rows, frames] features: `freqMasks` bands of up
// to `freqWidth` rows and `timeMasks` spans of up to `timeWidth` frames, widths and positions
// drawn uniformly per sample, set to the sample's mean.
class SpecAugment : public Transform {
public:
    SpecAugment(int64_t freqMasks, int64_t freqWidth, int64_t timeMasks, int64_t timeWidth);
    bool random() const override { return true; }
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;

private:
    int64_t m_freqMasks, m_freqWidth, m_timeMasks, m_timeWidth;
};

// Vocal tract length perturbation (Jaitly and Hinton 2013) of [c, rows, frames] features whose
// rows are frequencies (rowHz, increasing: Spectrogram::rowFrequencies of the stft or mel
// spectrogram before it): each sample, with probability p, as another speaker's vocal tract would
// say it, alpha drawn uniformly from [1 - maxChange, 1 + maxChange]. A sound at f moves to
// alpha f up to a boundary, 0.6 of topHz (their 4.8 of 8 kHz), and the axis above it is
// stretched or squeezed linearly so that topHz stays; each row takes the features at the
// frequency that moves to its own, interpolated linearly between the two rows around it (the edge
// rows beyond the ends). Formants and the pitch's harmonics move together, as across people;
// unlike speed_perturb the durations stay, and it costs one pass over the features instead of a
// resampling of the waveform. Why not only speed_perturb: a voice whose formants sit 30% above
// every training voice's (espeak-ng's Alicia) was the one the spoken-digits model missed most.
class FrequencyWarp : public Transform {
public:
    FrequencyWarp(std::vector<double> rowHz, double topHz, float maxChange, float p);
    bool random() const override { return true; }
    bool inPlace() const override { return false; }
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    // The frequency that alpha moves to f (the inverse of the warp; tests).
    double sourceFrequency(double f, double alpha) const;

private:
    std::vector<double> m_rowHz;
    double m_topHz;
    float m_max, m_p;
};

// Per-channel energy normalization (PCEN; Wang et al. 2017, "Trainable frontend for robust and
// far-field keyword spotting", with its parameters fixed as librosa.pcen has them) of the
// energies of a stft or mel spectrogram (to_db false), [c, rows, frames]: each row divided by
// its own recent past, M[t] = (1 - s) M[t - 1] + s E[t] (s from `timeConstant` seconds at the
// spectrogram's frame rate, librosa's formula), raised to `gain`, then compressed:
// (E / (eps + M)^gain + bias)^power - bias^power. Steady noise in a band (a fan, traffic's
// rumble) is divided away and the onset of a word stands out, where a log spectrogram keeps the
// noise as a constant added to each row, as loud as the word when it is loud. M starts as if
// the window's first frame had lasted forever (M[-1] = E[0]): a window cut from a long recording
// has heard what came before it. (librosa starts from 1 in the input's units, near nothing for
// the integer-scaled magnitudes it is shown with.) No library we use has PCEN; it is this loop.
class Pcen : public Transform {
public:
    struct Options {
        double framesPerSecond = 0; // 0: no spectrogram before it (refused)
        bool inDb = false;          // the spectrogram before it gives dB (refused)
        float timeConstant = 0.4f, gain = 0.98f, bias = 2.0f, power = 0.5f, eps = 1e-6f;
    };
    explicit Pcen(Options o);
    Result<Shape> outputShape(const Shape &in) const override;
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    // The recursion over a window of fixed length written out as two Convs along time (OpenCV
    // 4.6's dnn runs no Scan or Loop): the past's weights s (1 - s)^lag over the frames so far,
    // and the first frame's (1 - s)^(t + 1) spread from it; then Add, Pow, Mul and a 1x1 Conv.
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;

private:
    // The smoothing coefficient s (librosa's b) for the frame rate and time constant.
    double smoothing() const;

    Options m_o;
};

// Per-recording normalization of [c, rows, frames] features, the same for training and for
// every recording tried later: what makes a model heard through one microphone work through
// another. Each sample on its own:
// - `Mean::PerRow`: each row's mean over time is subtracted (cepstral mean normalization: a
//   microphone's or a room's frequency response is a constant added to each row of a log
//   spectrogram); `PerSample`: the sample's mean; `None`: nothing;
// - with `variance`: then divided by the sample's standard deviation (over all its cells), at
//   least `minStd`, so that near silence is not blown up into loud noise.
class FeatureNorm : public Transform {
public:
    enum class Mean { None, PerRow, PerSample };
    FeatureNorm(Mean mean, bool variance, float minStd);
    void apply(const float *in, float *out, int64_t n, const Shape &inShape,
               const uint64_t *seeds) const override;
    // Means as ONNX Convs whose one-row (or one-column) kernels of 1 / count span the whole
    // axis from any cell (OpenCV 4.6's dnn cannot broadcast a reduced [N, c, rows, 1] back).
    Status exportTo(ExportGraph &g, const std::string &input, const std::string &output,
                    const Shape &inShape) const override;

private:
    Mean m_mean;
    bool m_variance;
    float m_minStd;
};

} // namespace fb::data
