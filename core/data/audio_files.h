#pragma once

#include "core/base/result.h"
#include "core/data/dataset.h"
#include "core/data/sample_cache.h"

#include <cmath>
#include <cstdint>
#include <regex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace fb::data {

// How recordings become samples of one length (the audio_folder node; docs/data.md). Every file
// is read once, when the data set is loaded (libsndfile: WAV, FLAC, OGG, ...), mixed to mono,
// resampled (libsamplerate), trimmed of silence at both ends and padded or cropped around its
// centre. A sample is the waveform, [1, 1, sampleRate * seconds] floats in [-1, 1]; the feature
// stages (spectrograms, MFCC) run per batch on those.
struct AudioFilesOptions {
    int64_t sampleRate = 16000;
    double seconds = 1.0;
    // > 0: leading and trailing frames more than this many dB below the loudest frame are cut
    // (frames of 512 samples, hop 128, by RMS about each frame's mean: audibleRange) before
    // padding; 0: no trimming.
    double trimDb = 40;
    // A recording still longer than `seconds` after trimming is cropped around its middle, or
    // with this set (infer's: exec::Predictor), around its sound: the part within trimDb of the
    // loudest frame that also stands 6 dB above the recording's noise floor (audibleRange's
    // floorDb), with silence where the window runs past its start or end. Noise within trimDb
    // of the word fills a take longer than the window and is not trimmed, and the take's middle
    // need not be the word's. Training keeps the middle: on the spoken-digits data set, whose
    // recordings are clean, cropping so moved 322 of 19,870 crops more than 0.1 s and gained nothing
    // (two seeds; bench/results/hum-and-long-takes-20261207.md).
    bool cropToSound = false;
    // Labels from the class subfolders, or from each file name by `pattern`, where {label}
    // and {speaker} mark the parts to read ("{label}_{speaker}_{index}" reads 7_alice_03.wav),
    // any other {name} matches anything and the rest must match literally.
    enum class Labels { Folder, Pattern } labels = Labels::Folder;
    std::string pattern = "{label}_{speaker}_{index}";
    std::string subset = "all"; // all | train | validation (data::SplitOptions)
    double validationFraction = 0.2;
    uint64_t splitSeed = 0;
    bool splitBySpeaker = true; // with a pattern that has {speaker}: hold out whole speakers
    std::string validationSpeakers; // SplitOptions::validationSpeakers
    int64_t limit = 0;
    // Memory for decoded samples, in bytes, as ImageFilesOptions::cacheBytes. 0: no limit.
    int64_t cacheBytes = 0;
    // The disk cache of decoded samples, as ImageFilesOptions::diskCache.
    DiskCacheOptions::Mode diskCache = DiskCacheOptions::Mode::Off;
    std::string diskCacheDir;
    // The length of every sample, in samples.
    int64_t samples() const { return int64_t(std::llround(seconds * double(sampleRate))); }
};

// The mean power of n samples about their own mean (their variance): how loud a frame is when
// a DC offset is no sound. audibleRange, the Record panel's voice-activity detection and
// noise_beside measure frames this way.
double powerAboutMean(const float *x, size_t n);

// [first, last) of the samples whose frames (512 samples, hop 128, by RMS about each frame's
// mean, so that a DC offset is no sound and a slow drift counts for less) are within trimDb of
// the loudest frame: the part of a recording that trimming keeps. With floorDb above 0 a frame
// must also stand floorDb above the recording's noise floor (the quietest tenth of its frames'
// RMS, linearly interpolated), so that noise filling much of a window (a gap of brown noise up
// to a word) is not taken for its sound; [0, size) when no frame stands out.
std::pair<size_t, size_t> audibleRange(const std::vector<float> &x, double trimDb,
                                       double floorDb = 0);

// The stretch of sound (audibleRange's frames and rule) nearest the middle of x, where a
// silence of `gap` samples or more parts one stretch from the next: the word a listening window
// is centred on, apart from the words said before and after it. [first, last) from halfway
// through the silence before it (or x's start) to halfway through the one after it (or x's
// end); [0, size) when no frame stands out.
std::pair<size_t, size_t> soundNearestMiddle(const std::vector<float> &x, double trimDb,
                                             double floorDb, size_t gap);

// Turns all of x but [first, last) down to its noise floor (the quietest tenth of its frames'
// RMS, audibleRange's frames): each frame louder than the floor is brought to it, the floor
// itself is kept, and the gain eases in over `fade` samples either side. A window's other words
// become the quiet around the one it is centred on, as a recording of it alone would have.
void quietenAllBut(std::vector<float> &x, size_t first, size_t last, size_t fade);

// How much of a recording is cut off flat at its loudest: the samples (mono, as the file has
// them, before any resampling) in runs of 3 or more at its peak level (within 0.01%), over all
// its samples. A recording driven past full scale (too loud for its microphone or input gain)
// has flat tops there: sox's `gain -n 6`, 6 dB past, left 0.2% or more of each of 196 of the
// spoken-digits voices' recordings flat (median 1.8%); none of 3,311 of the data set's
// recordings as made (a sixth of it) reached 0.1%, and a natural waveform's peak is one sample or
// two. Counted as the samples stream past (the peak so
// far and the runs at it; a higher peak starts the count again). Its own code: libsndfile and
// sox report clipping only as they write.
class FlatPeaks {
public:
    void push(const float *x, size_t n);
    double share() const;                     // 0 for no samples
    float peak() const { return m_peak; }     // the loudest sample so far (full scale 1)
    static constexpr double kClipped = 0.001; // a share from which a recording counts as clipped

private:
    float m_peak = 0.0f;
    size_t m_run = 0, m_flat = 0, m_total = 0;
};

// Samples of one recording: mono, at the options' rate, trimmed, padded or cropped. The error
// says why a file is not a readable recording (missing, not audio, truncated, empty). flat, when
// given, counts its flat peaks.
Result<std::vector<float>> decodeAudioFile(const std::string &path, const AudioFilesOptions &o,
                                           FlatPeaks *flat = nullptr);
// The same from interleaved samples in memory (a microphone's), `name` for messages.
Result<std::vector<float>> prepareAudio(const std::vector<float> &interleaved, int channels,
                                        int64_t sampleRate, const std::string &name,
                                        const AudioFilesOptions &o);

// The file suffixes of the recordings libsndfile reads that people keep speech in (lower case,
// no dot): what the Record panel takes from a dropped folder and the file dialogs offer. WAV
// (PCM, float, A-law, mu-law, IMA and MS ADPCM, GSM), FLAC, Ogg Vorbis and Opus, MP3, AIFF, AU,
// CAF, W64 and RF64; any file libsndfile reads is read when named on its own.
const std::vector<std::string> &recordingSuffixes();

// A whole recording, mixed to mono and resampled to sampleRate, neither trimmed nor cut (what
// `flowbench-cli listen` slides its windows over). flat, when given, counts its flat peaks.
Result<std::vector<float>> readRecording(const std::string &path, int64_t sampleRate,
                                         FlatPeaks *flat = nullptr);
// How long a recording lasts, in seconds, from its header alone (nothing decoded): what the
// Tune dialog says of a file before minutes go into hearing it. The error says why it is not a
// recording libsndfile can read.
Result<double> recordingSeconds(const std::string &path);
// Interleaved samples mixed to mono and resampled; `name` for messages.
Result<std::vector<float>> monoAt(const std::vector<float> &interleaved, int channels, int64_t rate,
                                  const std::string &name, int64_t sampleRate);

// The samples played `factor` times as fast (above 1: shorter, and every frequency in them
// that much higher: a smaller vocal tract and a higher voice; below 1: the other way), then cut
// or padded with silence to their own length around their middle, so that a sound in the
// middle stays there. libsamplerate (its fastest sinc), as for every other resampling here.
// factor must be above 0.
std::vector<float> stretchedAroundMiddle(std::span<const float> x, double factor);

// Resampling a stream that arrives in pieces (a microphone's, `flowbench-cli listen --stdin`):
// libsamplerate's state carries across the pieces, so the result is the same as resampling the
// whole at once, not a click at every boundary. Mono.
class StreamResampler {
public:
    StreamResampler(int64_t fromRate, int64_t toRate);
    ~StreamResampler();
    StreamResampler(const StreamResampler &) = delete;
    StreamResampler &operator=(const StreamResampler &) = delete;
    // The samples at toRate that these samples complete; `last` at the end of the stream flushes
    // what the filter still holds. Empty, with error() set, when libsamplerate fails.
    std::vector<float> push(const float *x, size_t n, bool last = false);
    const std::string &error() const { return m_error; }

private:
    void *m_state = nullptr; // SRC_STATE
    double m_ratio;
    std::string m_error;
};

// A folder of recordings, labelled by class subfolders or by the file-name pattern (files in
// any subfolder). Classes are sorted names, or class numbers when every label is a whole number.
// Unreadable files, and names that do not match the pattern, are skipped and listed.
Result<ImageDataset> loadAudioFolder(const std::string &dir, const AudioFilesOptions &o);

// A file-name pattern made into a regular expression once: {name} parts capture, the rest is
// literal.
class FilePattern {
public:
    explicit FilePattern(const std::string &pattern);
    // What the pattern reads from a file name (without its extension); false when it does not
    // match or reads no label.
    bool match(const std::string &stem, std::string &label, std::string &speaker) const;

private:
    std::regex m_re;
    std::vector<std::string> m_names;
};

// FilePattern(pattern).match(stem, label, speaker).
bool matchPattern(const std::string &pattern, const std::string &stem, std::string &label,
                  std::string &speaker);

} // namespace fb::data
