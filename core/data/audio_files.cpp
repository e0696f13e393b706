#include "core/data/audio_files.h"

#include "core/data/file_split.h"

#include "core/base/safe_text.h"

#include <samplerate.h>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <regex>

namespace fb::data {

namespace fs = std::filesystem;

double powerAboutMean(const float *x, size_t n)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; ++i) {
        sum += double(x[i]);
        sq += double(x[i]) * double(x[i]);
    }
    const double mean = sum / double(n);
    return std::max(0.0, sq / double(n) - mean * mean);
}

namespace {

constexpr size_t kSoundFrame = 512, kSoundHop = 128; // audibleRange's frames

// The quietest tenth of frames' RMS, linearly interpolated: a recording's noise floor.
double noiseFloor(std::vector<double> rms)
{
    std::sort(rms.begin(), rms.end());
    const double at = 0.1 * double(rms.size() - 1);
    const size_t below = size_t(at);
    return below + 1 < rms.size()
               ? rms[below] + (at - double(below)) * (rms[below + 1] - rms[below])
               : rms[below];
}

// Which frames of x (kSoundFrame samples every kSoundHop) are sound, by audibleRange's rule;
// empty when x is shorter than a frame or no frame stands out.
std::vector<char> soundFrames(const std::vector<float> &x, double trimDb, double floorDb)
{
    if (x.size() <= kSoundFrame) return {};
    // Each frame's loudness about its own mean (its standard deviation): a DC offset (a cheap
    // sound card's) is no sound, and a slow drift (festival's Hindi voice wanders 23 dB under
    // its words) counts for less. Counted as sound, they kept a recording's silence from being
    // trimmed, and so its word from the middle of the window. Over a frame of 512 samples a
    // sine keeps 1 - sinc^2 of its power: at 16 kHz a constant is gone, 4 Hz is 13 dB weaker,
    // 10 Hz 5 dB, 20 Hz 1 dB. (A step, an offset that starts inside a frame, still counts.)
    std::vector<double> rms;
    for (size_t start = 0; start + kSoundFrame <= x.size(); start += kSoundHop)
        rms.push_back(std::sqrt(powerAboutMean(x.data() + start, kSoundFrame)));
    const double peak = *std::max_element(rms.begin(), rms.end());
    if (peak <= 0) return {};
    double threshold = peak * std::pow(10.0, -trimDb / 20.0);
    if (floorDb > 0) {
        threshold = std::max(threshold, noiseFloor(rms) * std::pow(10.0, floorDb / 20.0));
        if (threshold > peak) return {}; // nothing stands out of the noise
    }
    std::vector<char> loud(rms.size());
    for (size_t i = 0; i < rms.size(); ++i)
        loud[i] = rms[i] >= threshold;
    return loud;
}

// The samples [first, last) of soundFrames' frames [firstFrame, lastFrame) in x of n samples.
std::pair<size_t, size_t> framesToSamples(size_t firstFrame, size_t lastFrame, size_t n)
{
    return {firstFrame * kSoundHop, std::min(n, (lastFrame - 1) * kSoundHop + kSoundFrame)};
}

} // namespace

std::pair<size_t, size_t> audibleRange(const std::vector<float> &x, double trimDb, double floorDb)
{
    const std::vector<char> loud = soundFrames(x, trimDb, floorDb);
    if (loud.empty()) return {0, x.size()};
    size_t first = 0, last = loud.size();
    while (first < loud.size() && !loud[first])
        ++first;
    while (last > first && !loud[last - 1])
        --last;
    return framesToSamples(first, last, x.size());
}

std::pair<size_t, size_t> soundNearestMiddle(const std::vector<float> &x, double trimDb,
                                             double floorDb, size_t gap)
{
    const std::vector<char> loud = soundFrames(x, trimDb, floorDb);
    if (loud.empty()) return {0, x.size()};
    // Quiet frames that lie wholly inside a silence of `gap` samples.
    const size_t quietFrames = gap > kSoundFrame ? (gap - kSoundFrame) / kSoundHop + 1 : size_t(1);
    // The stretches: [first, last) loud frames with no quiet run of quietFrames between them.
    std::vector<std::pair<size_t, size_t>> parts;
    for (size_t i = 0; i < loud.size();) {
        if (!loud[i]) {
            ++i;
            continue;
        }
        size_t last = i + 1, quiet = 0;
        for (size_t j = i + 1; j < loud.size() && quiet < quietFrames; ++j) {
            if (loud[j]) {
                last = j + 1;
                quiet = 0;
            } else {
                ++quiet;
            }
        }
        parts.emplace_back(i, last);
        i = last;
    }
    const double middle = double(x.size()) / 2.0;
    auto samplesOf = [&](const std::pair<size_t, size_t> &p) {
        return framesToSamples(p.first, p.second, x.size());
    };
    size_t best = 0;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < parts.size(); ++k) {
        const auto [a, b] = samplesOf(parts[k]);
        const double distance = middle < double(a)   ? double(a) - middle
                                : middle > double(b) ? middle - double(b)
                                                     : 0;
        if (distance < bestDistance) {
            bestDistance = distance;
            best = k;
        }
    }
    // Its part of the silences either side: up to halfway to the stretch before and after it,
    // so that what is quieter than trimDb but belongs to the word (the release of "fork"'s k,
    // a breath) stays with it; with none before or after it, from x's start or to its end, so
    // that a word alone in its window is heard whole.
    auto [first, last] = samplesOf(parts[best]);
    first = best > 0 ? first - (first - std::min(first, samplesOf(parts[best - 1]).second)) / 2 : 0;
    last = best + 1 < parts.size()
               ? last + (std::max(last, samplesOf(parts[best + 1]).first) - last) / 2
               : x.size();
    return {first, last};
}

void quietenAllBut(std::vector<float> &x, size_t first, size_t last, size_t fade)
{
    const size_t n = x.size();
    if (n <= kSoundFrame || (first == 0 && last >= n)) return;
    // The RMS of the frame around each hop's block, and the gain that brings it down to the floor.
    const size_t blocks = (n + kSoundHop - 1) / kSoundHop;
    std::vector<double> rms(blocks);
    for (size_t b = 0; b < blocks; ++b) {
        const size_t centre = b * kSoundHop + kSoundHop / 2;
        const size_t start =
            std::min(centre > kSoundFrame / 2 ? centre - kSoundFrame / 2 : 0, n - kSoundFrame);
        rms[b] = std::sqrt(powerAboutMean(x.data() + start, kSoundFrame));
    }
    const double floor = noiseFloor(rms);
    std::vector<double> gain(blocks);
    for (size_t b = 0; b < blocks; ++b)
        gain[b] = rms[b] > floor ? floor / rms[b] : 1.0;
    const double ramp = double(std::max<size_t>(fade, 1));
    for (size_t i = 0; i < n; ++i) {
        const double away = i < first ? double(first - i) : i >= last ? double(i - last + 1) : 0;
        if (away <= 0) continue;
        // Between the gains of the blocks whose centres lie either side of i.
        const double at = (double(i) - double(kSoundHop) / 2) / double(kSoundHop);
        const size_t b0 = at <= 0 ? 0 : std::min(size_t(at), blocks - 1);
        const size_t b1 = std::min(b0 + 1, blocks - 1);
        const double t = std::clamp(at - double(b0), 0.0, 1.0);
        const double g = gain[b0] + t * (gain[b1] - gain[b0]);
        const double w = std::min(1.0, away / ramp);
        x[i] *= float(1.0 - w * (1.0 - g));
    }
}

FilePattern::FilePattern(const std::string &pattern)
{
    static const std::string special = R"(\^$.|?*+()[]{})";
    std::string re;
    for (size_t i = 0; i < pattern.size();) {
        if (pattern[i] == '{') {
            const size_t end = pattern.find('}', i);
            if (end != std::string::npos) {
                m_names.push_back(pattern.substr(i + 1, end - i - 1));
                re += "(.+?)";
                i = end + 1;
                continue;
            }
        }
        if (special.find(pattern[i]) != std::string::npos) re += '\\';
        re += pattern[i++];
    }
    m_re = std::regex(re);
}

bool FilePattern::match(const std::string &stem, std::string &label, std::string &speaker) const
{
    std::smatch m;
    if (!std::regex_match(stem, m, m_re)) return false;
    label.clear();
    speaker.clear();
    for (size_t k = 0; k < m_names.size(); ++k) {
        if (m_names[k] == "label") label = m[k + 1].str();
        if (m_names[k] == "speaker") speaker = m[k + 1].str();
    }
    return !label.empty();
}

bool matchPattern(const std::string &pattern, const std::string &stem, std::string &label,
                  std::string &speaker)
{
    return FilePattern(pattern).match(stem, label, speaker);
}

namespace {

// `frames` interleaved frames mixed to mono (the mean of the channels) into `mono`; `first` is
// the first frame's number in the recording, for the message.
Status mixedToMono(const float *interleaved, size_t frames, size_t channels, size_t first,
                   float *mono, const std::string &name)
{
    for (size_t i = 0; i < frames; ++i) {
        double sum = 0;
        for (size_t c = 0; c < channels; ++c) {
            const float v = interleaved[i * channels + c];
            // Floating-point recordings may hold anything: a NaN or an infinity is damage (it
            // would make every feature and then the loss NaN); values beyond full scale are
            // clipped, as a sound card would play them (found by fuzz_audio: a float WAV with
            // 1e30 in it gave an infinite spectrogram).
            if (!std::isfinite(v))
                return fileError(name, "holds samples that are not numbers (NaN or infinite) "
                                       "at frame " +
                                           std::to_string(first + i) + ": is it damaged?");
            sum += std::clamp(v, -1.0f, 1.0f);
        }
        mono[i] = float(sum / double(channels));
    }
    return {};
}

} // namespace

Result<std::vector<float>> monoAt(const std::vector<float> &interleaved, int channels, int64_t rate,
                                  const std::string &name, int64_t sampleRate)
{
    if (channels < 1 || interleaved.size() < size_t(channels))
        return fileError(name, "holds no audio");
    const size_t frames = interleaved.size() / size_t(channels);
    std::vector<float> mono(frames);
    if (Status mixed =
            mixedToMono(interleaved.data(), frames, size_t(channels), 0, mono.data(), name);
        !mixed)
        return mixed.error();
    if (rate != sampleRate) {
        const double ratio = double(sampleRate) / double(rate);
        std::vector<float> out(size_t(std::ceil(double(frames) * ratio)) + 16);
        SRC_DATA d{};
        d.data_in = mono.data();
        d.input_frames = long(frames);
        d.data_out = out.data();
        d.output_frames = long(out.size());
        d.src_ratio = ratio;
        if (int err = src_simple(&d, SRC_SINC_MEDIUM_QUALITY, 1))
            return fileError(name, std::string("cannot be resampled: ") + src_strerror(err));
        out.resize(size_t(d.output_frames_gen));
        mono = std::move(out);
    }
    return mono;
}

std::vector<float> stretchedAroundMiddle(std::span<const float> x, double factor)
{
    if (x.empty() || factor == 1.0) return {x.begin(), x.end()};
    std::vector<float> y(size_t(std::ceil(double(x.size()) / factor)) + 16);
    SRC_DATA d{};
    d.data_in = x.data();
    d.input_frames = long(x.size());
    d.data_out = y.data();
    d.output_frames = long(y.size());
    d.src_ratio = 1.0 / factor;
    if (src_simple(&d, SRC_SINC_FASTEST, 1) != 0) // (only for a ratio out of range)
        return {x.begin(), x.end()};
    y.resize(size_t(d.output_frames_gen));
    // Centre what came out on the original's middle.
    std::vector<float> out(x.size(), 0.0f);
    const auto shift = (int64_t(y.size()) - int64_t(x.size())) / 2;
    for (int64_t i = 0; i < int64_t(out.size()); ++i) {
        const int64_t j = i + shift;
        if (j >= 0 && j < int64_t(y.size())) out[size_t(i)] = y[size_t(j)];
    }
    return out;
}

namespace {

// Mono samples at the options' rate trimmed, then padded or cropped to the options' length.
std::vector<float> fitted(std::vector<float> mono, const AudioFilesOptions &o)
{
    if (o.trimDb > 0) {
        const auto [first, last] = audibleRange(mono, o.trimDb);
        mono = std::vector<float>(mono.begin() + std::ptrdiff_t(first),
                                  mono.begin() + std::ptrdiff_t(last));
    }
    // Pad around the centre: a short word sits in the middle of its window.
    const size_t length = size_t(o.samples());
    std::vector<float> out(length, 0.0f);
    if (mono.size() <= length) {
        std::copy(mono.begin(), mono.end(),
                  out.begin() + std::ptrdiff_t((length - mono.size()) / 2));
        return out;
    }
    // Crop around the middle, or around the sound (cropToSound): a take of 2.5 s with the word
    // 0.2 to 0.5 s in and pink noise 20 dB under it, which trimming keeps whole, had 9% of
    // flite's never-heard digits named right cropped about its middle, 88% about the sound
    // (92% as recorded; bench/results/hum-and-long-takes-20261207.md). The sound is what stands
    // kCropFloorDb above the recording's noise floor as well (listen's centring gate's 6 dB);
    // its middle is the crop's, with silence where the window runs past the recording's start
    // or end, as a short recording is padded.
    auto start = std::ptrdiff_t((mono.size() - length) / 2);
    if (o.trimDb > 0 && o.cropToSound) {
        constexpr double kCropFloorDb = 6.0;
        const auto [first, last] = audibleRange(mono, o.trimDb, kCropFloorDb);
        start = std::ptrdiff_t(first + (last - first) / 2) - std::ptrdiff_t(length / 2);
    }
    const std::ptrdiff_t from = std::max<std::ptrdiff_t>(start, 0),
                         to = std::min(start + std::ptrdiff_t(length), std::ptrdiff_t(mono.size()));
    if (to > from) std::copy(mono.begin() + from, mono.begin() + to, out.begin() + (from - start));
    return out;
}

} // namespace

Result<std::vector<float>> prepareAudio(const std::vector<float> &interleaved, int channels,
                                        int64_t rate, const std::string &name,
                                        const AudioFilesOptions &o)
{
    auto converted = monoAt(interleaved, channels, rate, name, o.sampleRate);
    if (!converted.ok()) return converted.error();
    return fitted(std::move(converted).value(), o);
}

namespace {

// The lowest sample rate a recording is read at (a pipeline's own is 1 to 192 kHz).
constexpr int kLowestSampleRate = 1000;

// A file libsndfile opened, closed with it.
struct OpenSound {
    SNDFILE *f = nullptr;
    SF_INFO info{};
    uintmax_t bytes = 0; // the file's size
    OpenSound() = default;
    OpenSound(const OpenSound &) = delete;
    OpenSound &operator=(const OpenSound &) = delete;
    ~OpenSound()
    {
        if (f) sf_close(f);
    }
};

// Opens a recording, with the checks its header alone allows.
Status openSound(const std::string &path, OpenSound &s)
{
    std::error_code ec;
    if (fs::is_directory(path, ec)) return fileError(path, "is a folder, not a recording");
    // A symbolic-link loop or a dangling link says why (ELOOP, ENOENT) rather than "no such file".
    if (!fs::is_regular_file(path, ec))
        return fileError(path, ec && ec != std::errc::no_such_file_or_directory
                                   ? "cannot be read: " + ec.message()
                                   : "no such file");
    s.bytes = fs::file_size(path, ec);
    if (s.bytes == 0) return fileError(path, "empty file");
    s.f = sf_open(path.c_str(), SFM_READ, &s.info);
    if (!s.f) {
        // A file too short for mpg123 to find a frame in gets libsndfile's "File does not exist
        // or is not a regular file": it does exist, and is a regular file (checked above).
        std::string why = sf_strerror(nullptr);
        if (why.find("does not exist") != std::string::npos)
            why = "no audio format it knows begins this file";
        return fileError(path, "not audio libsndfile can read: " + why);
    }
    if (s.info.frames <= 0 || s.info.channels <= 0) {
        // A header whose sizes were left at 0 (a recorder stopped before it wrote them) says
        // "no audio" of a file full of it; libsndfile cannot read past it, so say what it means.
        if (s.bytes > 4096)
            return fileError(path, "holds no audio by its header, though the file has " +
                                       std::to_string(s.bytes) +
                                       " bytes: was its recording stopped before the header "
                                       "was written?");
        return fileError(path, "holds no audio");
    }
    if (s.info.samplerate < 1 || s.info.samplerate > 1000000)
        return fileError(path, "has an impossible sample rate (" +
                                   std::to_string(s.info.samplerate) + " Hz): is it damaged?");
    // Below 1 kHz a file holds no sound a spectrogram of speech or of most other sounds can use,
    // and a damaged header's rate (63 Hz said of a 1 MB file) would be resampled into hundreds
    // of millions of samples, gigabytes, before anything could say so.
    if (s.info.samplerate < kLowestSampleRate)
        return fileError(path, "has a sample rate of " + std::to_string(s.info.samplerate) +
                                   " Hz, too low for sound (" + std::to_string(kLowestSampleRate) +
                                   " Hz at least): is its header damaged?");
    return {};
}

// Whether libsndfile's log of a header (SFC_GET_LOG_INFO) says that the file holds less than the
// header promises. Each "LABEL : A (should be B)" line is a number of the header that does not
// add up. A chunk's size ("data", "RIFF", AIFF's "SSND", AU's "Data Size") is a file cut short,
// except a size of 2 GiB or more on a smaller file: a header written before the length was
// known, by a writer to a pipe (`espeak-ng --stdout > x.wav` leaves 0x7ffff000, ffmpeg
// 0xffffffff), whose audio is all there. A field of the format ("Bytes/sec : 8111 (should be
// 8110)", which sox writes in every IMA ADPCM file) is a writer's rounding, not damage.
// libsndfile has no call that tells these apart, so its log is read.
bool headerPromisesMore(const char *log, uintmax_t fileBytes)
{
    static const char *const formatFields[] = {"Bytes/sec", "Block Align", "Bit Width",
                                               "No. of Coeffs", "Valid Bits"};
    const std::string text(log);
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        if (line.find("(should be") == std::string::npos) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) return true;
        std::string label = line.substr(0, colon);
        label.erase(0, label.find_first_not_of(' '));
        label.erase(label.find_last_not_of(' ') + 1);
        if (std::find(std::begin(formatFields), std::end(formatFields), label) !=
            std::end(formatFields))
            continue;
        const unsigned long long promised = std::strtoull(line.c_str() + colon + 1, nullptr, 10);
        if (promised >= 0x7fff0000ULL && promised > fileBytes) continue;
        return true;
    }
    return false;
}

} // namespace

void FlatPeaks::push(const float *x, size_t n)
{
    for (size_t k = 0; k < n; ++k) {
        const float a = std::abs(x[k]);
        if (a > m_peak * 1.0001f) { // a new peak: what was flat below it was not the top
            m_peak = a;
            m_flat = 0;
            m_run = 1;
        } else if (a > 0.0f && a >= m_peak * 0.9999f) {
            ++m_run;
        } else {
            if (m_run >= 3) m_flat += m_run;
            m_run = 0;
        }
    }
    m_total += n;
}

double FlatPeaks::share() const
{
    const size_t flat = m_flat + (m_run >= 3 ? m_run : 0);
    return m_total > 0 ? double(flat) / double(m_total) : 0.0;
}

// Every frame of a file mixed to mono and resampled to sampleRate, after the checks that tell a
// damaged file. It is read in slices of 64 Ki frames, each mixed and resampled as it arrives
// (StreamResampler: the same samples as resampling the whole at once), so that a recording of
// hours at 48 kHz in stereo costs its mono samples at sampleRate and little more. Read whole
// and converted after, a 20-minute file took 970 MB (2026-12-06).
Result<std::vector<float>> readRecording(const std::string &path, int64_t sampleRate,
                                         FlatPeaks *flat)
{
    OpenSound sound;
    if (Status opened = openSound(path, sound); !opened) return opened.error();
    SNDFILE *f = sound.f;
    const SF_INFO &info = sound.info;
    // libsndfile reads a WAV cut short as far as it goes, and notes the chunk sizes that do not
    // add up in its log ("data : 32000 (should be 3200)").
    char log[4096] = {};
    sf_command(f, SFC_GET_LOG_INFO, log, sizeof log);
    if (headerPromisesMore(log, sound.bytes))
        return fileError(path, "truncated: its header promises more audio than the file holds");
    // The header's numbers are the file's word only: a damaged one may claim any rate (refused
    // by openSound), channel count or length (found by fuzz_audio: a header claiming 2^62 frames
    // made the vector for them throw, which ended the process).
    if (info.channels > 256)
        return fileError(path, "has " + std::to_string(info.channels) +
                                   " channels; at most 256 are read");
    // Memory grows with what is read, never with what the header claims.
    constexpr sf_count_t kSlice = 65536;
    const size_t channels = size_t(info.channels);
    // An MP3's frame count is libsndfile's estimate from its bit rate (34,720 for a file of
    // 34,560, the encoder's padding): it is read to its end, and a count it falls short of is no
    // damage.
    const bool estimated = (info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_MPEG;
    StreamResampler resample(info.samplerate, sampleRate);
    // A short file's slice is its length (256 channels of 4 frames took 70 MB at 64 Ki frames).
    const sf_count_t sliceFrames = estimated ? kSlice : std::min(kSlice, info.frames);
    std::vector<float> slice(size_t(sliceFrames) * channels), out;
    std::vector<float> mono(static_cast<size_t>(sliceFrames));
    sf_count_t got = 0;
    while (estimated || got < info.frames) {
        const sf_count_t want = estimated ? kSlice : std::min(info.frames - got, sliceFrames);
        const sf_count_t r = sf_readf_float(f, slice.data(), want);
        if (r > 0) {
            if (Status mixed =
                    mixedToMono(slice.data(), size_t(r), channels, size_t(got), mono.data(), path);
                !mixed)
                return mixed.error();
            got += r;
            if (flat) flat->push(mono.data(), size_t(r));
            const std::vector<float> y = resample.push(mono.data(), size_t(r));
            if (!resample.error().empty()) return fileError(path, resample.error());
            out.insert(out.end(), y.begin(), y.end());
        }
        if (r < want) break;
    }
    // A file cut short says so in its header's frame count.
    if (!estimated && got < info.frames)
        return fileError(path, "truncated: " + std::to_string(got) + " of " +
                                   std::to_string(info.frames) + " frames could be read");
    if (got == 0) return fileError(path, "holds no audio");
    const std::vector<float> tail = resample.push(mono.data(), 0, true);
    if (!resample.error().empty()) return fileError(path, resample.error());
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

Result<std::vector<float>> decodeAudioFile(const std::string &path, const AudioFilesOptions &o,
                                           FlatPeaks *flat)
{
    auto r = readRecording(path, o.sampleRate, flat);
    if (!r.ok()) return r.error();
    return fitted(std::move(r).value(), o);
}

const std::vector<std::string> &recordingSuffixes()
{
    static const std::vector<std::string> suffixes{"wav",  "wave", "flac", "ogg", "oga",
                                                   "opus", "mp3",  "aiff", "aif", "aifc",
                                                   "au",   "snd",  "caf",  "w64", "rf64"};
    return suffixes;
}

Result<double> recordingSeconds(const std::string &path)
{
    OpenSound sound;
    if (Status opened = openSound(path, sound); !opened) return opened.error();
    return double(sound.info.frames) / double(sound.info.samplerate);
}

Result<ImageDataset> loadAudioFolder(const std::string &dir, const AudioFilesOptions &o)
{
    if (o.sampleRate < 1000 || o.sampleRate > 192000)
        return makeError("the sample rate must be 1000 to 192000 Hz");
    if (!(o.seconds > 0 && o.seconds <= 60)) return makeError("the length must be 0 to 60 seconds");
    const bool byPattern = o.labels == AudioFilesOptions::Labels::Pattern;
    if (byPattern && o.pattern.find("{label}") == std::string::npos)
        return makeError("the file-name pattern '" + o.pattern + "' has no {label}");

    // Every file with its label name (and speaker), or the reason it cannot be used.
    struct Named {
        std::string path, label, speaker;
    };
    std::vector<Named> named;
    const FilePattern pattern(o.pattern);
    std::vector<SkippedFile> skipped;
    auto walk = [&](const std::string &root, const std::string &folderLabel) -> Status {
        auto files = filesUnder(root);
        if (!files.ok()) return files.error();
        for (const std::string &path : files.value()) {
            if (!byPattern) {
                named.push_back({path, folderLabel, {}});
                continue;
            }
            std::string label, speaker;
            if (!pattern.match(fs::path(path).stem().string(), label, speaker)) {
                skipped.push_back({path, "its name does not match the pattern " + o.pattern});
                continue;
            }
            named.push_back({path, label, speaker});
        }
        return {};
    };
    if (byPattern) {
        FB_TRY(walk(dir, {}));
    } else {
        auto folders = subfolders(dir);
        if (!folders.ok()) return folders.error();
        if (folders->empty())
            return fileError(dir, "has no class folders: put each class's recordings in a folder "
                                  "of its own, or read the labels from the file names (labels = "
                                  "pattern)");
        for (const std::string &c : folders.value())
            FB_TRY(walk((fs::path(dir) / c).string(), c));
    }
    if (named.empty())
        return fileError(dir, byPattern ? "has no file whose name matches " + o.pattern
                                        : std::string("has no files in its class folders"));

    std::vector<std::string> labels;
    for (const Named &n : named)
        labels.push_back(n.label);
    const LabelClasses classes = classesOf(labels);
    std::vector<LabelledFile> files;
    for (const Named &n : named)
        files.push_back({n.path, classes.index.at(n.label), n.speaker});
    const bool hasSpeakers = byPattern && o.pattern.find("{speaker}") != std::string::npos;
    files =
        selectFiles(std::move(files), int32_t(classes.names.size()),
                    SplitOptions{o.subset, o.validationFraction, o.splitSeed,
                                 o.splitBySpeaker && hasSpeakers, o.limit, o.validationSpeakers});
    if (files.empty()) return fileError(dir, "has no files for subset " + o.subset);

    ImageDataset ds;
    ds.name = fs::path(dir).filename().string();
    if (ds.name.empty()) ds.name = fs::path(dir).parent_path().filename().string();
    ds.channels = 1;
    ds.height = 1;
    ds.width = o.samples();
    ds.classes = int32_t(classes.names.size());
    ds.classNames = classes.names;
    ds.skipped = std::move(skipped);
    const size_t unmatched = ds.skipped.size();
    ds.audio = true;
    ds.decodeValues = [o](const std::string &path) { return decodeAudioFile(path, o); };
    // Everything besides the file that decides its sample; raise the revision whenever
    // decodeAudioFile makes other samples from the same file (as for images).
    constexpr int kDecodeRevision = 2; // 2: trimming measures each frame about its mean
    DiskCacheOptions disk;
    disk.mode = o.diskCache;
    disk.dir = o.diskCacheDir;
    char settings[256];
    std::snprintf(settings, sizeof settings,
                  "audio decode %d, %s, %s, %lld Hz, %.17g s, trim %.17g dB", kDecodeRevision,
                  sf_version_string(), src_get_version(), static_cast<long long>(o.sampleRate),
                  o.seconds, o.trimDb);
    disk.settings = settings;
    decodeFiles(files, size_t(ds.width), ds.decodeValues, ds.values, ds, o.cacheBytes, disk);
    if (ds.count == 0)
        return fileError(dir, "none of its " + std::to_string(files.size()) +
                                  " files is a readable recording (the first, " +
                                  safeText(ds.skipped[unmatched].path) + ": " +
                                  ds.skipped[unmatched].reason + ")");
    return ds;
}

StreamResampler::StreamResampler(int64_t fromRate, int64_t toRate)
    : m_ratio(double(toRate) / double(std::max<int64_t>(1, fromRate)))
{
    int err = 0;
    if (fromRate != toRate) {
        m_state = src_new(SRC_SINC_MEDIUM_QUALITY, 1, &err);
        if (!m_state) m_error = std::string("cannot resample: ") + src_strerror(err);
    }
}

StreamResampler::~StreamResampler()
{
    if (m_state) src_delete(static_cast<SRC_STATE *>(m_state));
}

std::vector<float> StreamResampler::push(const float *x, size_t n, bool last)
{
    if (!m_error.empty()) return {};
    if (!m_state) return std::vector<float>(x, x + n); // the same rate
    std::vector<float> out;
    std::vector<float> buf(size_t(double(n) * m_ratio) + 256);
    size_t used = 0;
    while (true) {
        SRC_DATA d{};
        d.data_in = x + used;
        d.input_frames = long(n - used);
        d.data_out = buf.data();
        d.output_frames = long(buf.size());
        d.src_ratio = m_ratio;
        d.end_of_input = last ? 1 : 0;
        if (int err = src_process(static_cast<SRC_STATE *>(m_state), &d)) {
            m_error = std::string("cannot resample: ") + src_strerror(err);
            return {};
        }
        used += size_t(d.input_frames_used);
        out.insert(out.end(), buf.begin(), buf.begin() + d.output_frames_gen);
        // Done when all the input is taken and, at the end, nothing more comes out.
        if (used >= n && (!last || d.output_frames_gen == 0)) break;
        if (d.input_frames_used == 0 && d.output_frames_gen == 0) break;
    }
    return out;
}

} // namespace fb::data
