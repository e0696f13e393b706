// Audio: feature stages (spectrograms, docs/audio.md) and augmentation of waveforms and
// spectrograms.

#include "core/data/audio_transforms.h"
#include "core/exec/job.h"
#include "core/exec/node_type.h"
#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"

#include <algorithm>

namespace fb::exec::nodes {

namespace {

std::vector<ParamSpec> join(std::vector<std::vector<ParamSpec>> parts)
{
    std::vector<ParamSpec> out;
    for (auto &p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

// A spectrogram of the kind given, at the sample rate the chain's source resampled to.
NodeType spectrogram(NodeTypeSpec spec, data::SpectrogramOptions::Kind kind)
{
    NodeType t;
    t.spec = std::move(spec);
    t.spec.role = NodeRole::Transform;
    t.makeTransform = [kind](const NodeParams &p, const DataSpec &chain) {
        data::SpectrogramOptions o;
        o.kind = kind;
        o.sampleRate = chain.audioFiles.sampleRate;
        o.nFft = p.i("n_fft");
        o.hop = p.i("hop_length");
        o.topDb = p.d("top_db");
        const nlohmann::json &v = p.values();
        if (v.contains("to_db")) o.toDb = p.b("to_db");
        if (v.contains("n_mels")) {
            o.nMels = p.i("n_mels");
            o.fMin = p.d("f_min");
            o.fMax = p.d("f_max");
        }
        if (v.contains("n_mfcc")) o.nMfcc = p.i("n_mfcc");
        return std::make_shared<data::Spectrogram>(o);
    };
    return t;
}

// The spectrogram nearest before `node` in its chain, made as the chain makes it: what its rows
// stand for (vtlp's frequencies). Null when there is none before it.
std::shared_ptr<const data::Spectrogram> spectrogramBefore(const std::string &node,
                                                           const DataSpec &chain)
{
    const auto &steps = chain.transforms;
    auto at = std::find_if(steps.begin(), steps.end(),
                           [&](const DataSpec::TransformStep &t) { return t.node == node; });
    if (at == steps.end()) return nullptr; // not of this chain: nothing is before it
    while (at != steps.begin()) {
        --at;
        const NodeType *type = nodeCatalog().find(at->type);
        if (!type || !type->makeTransform) continue;
        auto made = type->makeTransform(NodeParams(at->node, at->params), chain);
        if (auto features = std::dynamic_pointer_cast<const data::Spectrogram>(made))
            return features;
    }
    return nullptr;
}

// add_noise's and noise_beside's `colour` (each lists the names it takes).
data::NoiseColour noiseColour(const std::string &name)
{
    using C = data::NoiseColour;
    return name == "pink"            ? C::Pink
           : name == "brown"         ? C::Brown
           : name == "any"           ? C::Any
           : name == "pink_or_brown" ? C::PinkOrBrown
                                     : C::White;
}

} // namespace

void addAudioFeatures(NodeCatalog &c)
{
    const std::vector<ParamSpec> stftParams = {
        intParam("n_fft", 512, closed(16, 65536), "FFT length and Hann window size (samples)."),
        intParam("hop_length", 160, closed(1, 65536),
                 "Samples between frames (160 = 10 ms at 16 kHz)."),
    };
    const std::vector<ParamSpec> melParams = {
        intParam("n_mels", 40, closed(1, 512), "Mel bands (Slaney scale and normalization)."),
        floatParam("f_min", 20, closed(0, 96000), "Lowest frequency of the mel bands (Hz)."),
        floatParam("f_max", 0, closed(0, 96000),
                   "Highest frequency (Hz); 0 = half the sample rate."),
    };
    const ParamSpec topDb = floatParam("top_db", 80, closed(0, 200),
                                       "Floor in dB below the sample's loudest cell; 0 = none.");
    using Kind = data::SpectrogramOptions::Kind;
    c.add(spectrogram(
        audioFeature(
            "stft", "Spectrogram (STFT)",
            "Power spectrogram |STFT|^2 of each waveform: centred frames, Hann window "
            "(librosa's conventions); n_fft / 2 + 1 rows.",
            join({stftParams, {boolParam("to_db", true, "In decibels: 10 log10(power)."), topDb}})),
        Kind::Power));
    c.add(spectrogram(
        audioFeature("mel_spectrogram", "Mel spectrogram",
                     "Mel spectrogram of each waveform (librosa's melspectrogram: "
                     "Slaney mel scale and normalization), in dB for a log-mel "
                     "spectrogram.",
                     join({stftParams,
                           melParams,
                           {boolParam("to_db", true, "Log-mel: 10 log10(power)."), topDb}})),
        Kind::Mel));
    c.add(spectrogram(
        audioFeature("mfcc", "MFCC",
                     "Mel-frequency cepstral coefficients: the orthonormal DCT-II of the "
                     "log-mel spectrogram (librosa's mfcc).",
                     join({stftParams,
                           melParams,
                           {intParam("n_mfcc", 13, closed(1, 512), "Coefficients kept."), topDb}})),
        Kind::Mfcc));
    NodeType pcen;
    pcen.spec = preprocessing(
        "pcen", "Per-channel energy normalization (PCEN)",
        "Divides each frequency band of a spectrogram's energies by its own recent past and "
        "compresses the result (Wang et al. 2017; librosa's pcen): steady noise in a band is "
        "divided away and the onsets of words stand out. After a stft or mel_spectrogram node "
        "with to_db false, instead of decibels.",
        {floatParam("time_constant", 0.4, closed(1e-3, 100),
                    "Seconds of the past each band is measured over (librosa's 0.4)."),
         floatParam("gain", 0.98, closed(0, 1),
                    "How much of the band's past level is divided away (1: all of it)."),
         floatParam("bias", 2, closed(0, 1e6), "Added before the compression."),
         floatParam("power", 0.5, closed(1e-3, 1), "The compression's exponent."),
         floatParam("eps", 1e-6, closed(1e-20, 1e6),
                    "Energy under which a band is no longer divided by its past (the energies' "
                    "units: power of a waveform in [-1, 1]).")});
    pcen.spec.category = "Audio";
    pcen.spec.role = NodeRole::Transform;
    pcen.makeTransform = [](const NodeParams &p, const DataSpec &chain) {
        data::Pcen::Options o;
        if (const auto features = spectrogramBefore(p.node(), chain);
            features && features->options().kind != data::SpectrogramOptions::Kind::Mfcc) {
            o.framesPerSecond =
                double(features->options().sampleRate) / double(features->options().hop);
            o.inDb = features->options().toDb;
        }
        o.timeConstant = p.f("time_constant");
        o.gain = p.f("gain");
        o.bias = p.f("bias");
        o.power = p.f("power");
        o.eps = p.f("eps");
        return std::make_shared<data::Pcen>(o);
    };
    c.add(std::move(pcen));
    NodeTypeSpec norm = preprocessing(
        "feature_norm", "Per-recording normalization",
        "Normalizes each recording's features on its own: subtracts their mean (or each "
        "row's mean over time, which also removes the microphone's and the room's "
        "colouring) and divides by their standard deviation (removes the loudness). The "
        "same at training and for every recording tried later.",
        {enumParam("mean", {"per_sample", "per_row", "none"}, "per_sample",
                   "per_sample: the recording's mean; per_row: each row's mean over time "
                   "(cepstral mean normalization, for whole utterances); none: keep it."),
         boolParam("variance", true, "Divide by the recording's standard deviation."),
         floatParam("min_std", 1.0, closed(1e-6, 1e6),
                    "Never divide by less (in the features' units: dB for a log-mel "
                    "spectrogram), so that silence stays quiet.")});
    norm.category = "Audio"; // in the palette beside the features it takes
    c.add(transformNode(std::move(norm), [](const NodeParams &p) {
        const std::string m = p.s("mean");
        using M = data::FeatureNorm::Mean;
        return std::make_shared<data::FeatureNorm>(m == "per_row"      ? M::PerRow
                                                   : m == "per_sample" ? M::PerSample
                                                                       : M::None,
                                                   p.b("variance"), p.f("min_std"));
    }));
}

void addAudioAugmentation(NodeCatalog &c)
{
    NodeType noise;
    noise.spec = augmentation(
        "add_noise", "Add noise",
        "Adds Gaussian noise over the whole waveform at a random signal-to-noise ratio: white, "
        "pink (a fan, a room, a microphone's floor), brown (wind, traffic) or any of them; or "
        "mains hum.",
        {floatParam("snr_min", 10, closed(-100, 100), "Lowest signal-to-noise ratio (dB)."),
         floatParam("snr_max", 30, closed(-100, 100), "Highest signal-to-noise ratio (dB)."),
         floatParam("p", 0.5, closed(0, 1), "Probability a sample gets noise."),
         enumParam("colour", {"white", "pink", "brown", "any"}, "white",
                   "white: flat; pink: -3 dB an octave; brown: -6 dB an octave; any: one of the "
                   "three, drawn for each sample."),
         floatParam("hum_p", 0, closed(0, 1),
                    "Probability a sample's noise is mains hum instead (50 or 60 Hz and its "
                    "harmonics up to 1 kHz: a microphone beside a charger), at the same ratio.")});
    noise.spec.role = NodeRole::Transform;
    noise.makeTransform = [](const NodeParams &p, const DataSpec &chain) {
        return std::make_shared<data::AddNoise>(p.f("snr_min"), p.f("snr_max"), p.f("p"),
                                                noiseColour(p.s("colour")), p.f("hum_p"),
                                                chain.audioFiles.sampleRate);
    };
    c.add(std::move(noise));
    c.add(transformNode(
        augmentation(
            "noise_beside", "Noise beside the sound",
            "Adds white, pink or brown noise from an edge of the waveform up to its sound, "
            "before it, after it or both: what a window cut from a long recording holds beside "
            "a word (a fan switched on, a car going by).",
            {floatParam("snr_min", 0, closed(-100, 100),
                        "Lowest level below the sound's loudest part (dB)."),
             floatParam("snr_max", 30, closed(-100, 100),
                        "Highest level below the sound's loudest part (dB)."),
             floatParam("p", 0.3, closed(0, 1), "Probability a sample gets noise beside it."),
             enumParam("colour", {"any", "white", "pink", "brown", "pink_or_brown"}, "any",
                       "any: white, pink or brown, drawn for each sample; pink_or_brown: one of "
                       "those two (white noise right beside a word is a hiss, as an 's' is)."),
             floatParam("max_gap", 0.05, closed(0, 0.5),
                        "Most quiet between the sound and the noise, as a fraction of the length "
                        "(0.05: 50 ms of a second), drawn uniformly from 0.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::NoiseBeside>(p.f("snr_min"), p.f("snr_max"), p.f("p"),
                                                       noiseColour(p.s("colour")), p.f("max_gap"));
        }));
    c.add(transformNode(
        augmentation(
            "speech_beside", "Speech beside the sound",
            "Puts the end of another recording of the batch before the sound and the start of "
            "a third after it (or one of the two), a little apart: what a window holds when "
            "words come close together. The label stays the middle word's.",
            {floatParam("snr_min", 0, closed(-100, 100),
                        "Lowest level of the other speech below the sound's loudest part (dB)."),
             floatParam("snr_max", 10, closed(-100, 100),
                        "Highest level of the other speech below the sound's loudest part (dB)."),
             floatParam("p", 0.3, closed(0, 1), "Probability a sample gets speech beside it."),
             floatParam("min_gap", 0.02, closed(0, 0.5),
                        "Least quiet between the sound and the other speech, as a fraction of "
                        "the length (0.02: 20 ms of a second)."),
             floatParam("max_gap", 0.3, closed(0, 0.5),
                        "Most quiet between them, as a fraction of the length; drawn uniformly "
                        "from min_gap.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::SpeechBeside>(p.f("snr_min"), p.f("snr_max"), p.f("p"),
                                                        p.f("min_gap"), p.f("max_gap"));
        }));
    c.add(transformNode(
        augmentation("time_shift", "Time shift",
                     "Shifts waveforms earlier or later by a random amount, "
                     "filling with silence.",
                     {floatParam("max_shift", 0.1, closed(0, 0.5),
                                 "Largest shift, as a fraction of the length."),
                      boolParam("keep_sound", false,
                                "Shift no further than keeps the sound (within 30 dB of its "
                                "loudest part) whole inside the window: words are heard at "
                                "every place, never cut at an edge. Put it before noise nodes, "
                                "whose noise would count as sound.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::TimeShift>(p.f("max_shift"), p.b("keep_sound"));
        }));
    c.add(transformNode(
        augmentation("speed_perturb", "Speed perturbation",
                     "Plays waveforms at a random speed: shorter or longer, and every "
                     "frequency (pitch, formants) as much higher or lower, as another "
                     "speaker's voice; kept centred.",
                     {floatParam("max_change", 0.1, closed(0, 0.5),
                                 "Speeds from 1 - max_change to 1 + max_change times, uniform "
                                 "(0.1: 0.9 to 1.1, Kaldi's)."),
                      floatParam("p", 1.0, closed(0, 1),
                                 "Probability a sample is played at another speed.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::SpeedPerturb>(p.f("max_change"), p.f("p"));
        }));
    c.add(transformNode(
        augmentation("clip", "Clipping",
                     "Drives waveforms past full scale, as a speaker close to the microphone or "
                     "a gain set too high does: each peak flattened at a level drawn under the "
                     "loudest, the level kept.",
                     {floatParam("gain_min", 0, closed(0, 40),
                                 "Least overdrive (dB): the peaks flattened this far under the "
                                 "loudest."),
                      floatParam("gain_max", 12, closed(0, 40),
                                 "Most overdrive (dB), drawn uniformly from gain_min up."),
                      floatParam("p", 0.25, closed(0, 1), "Probability a sample is clipped.")}),
        [](const NodeParams &p) {
            return std::make_shared<data::Clipping>(p.f("gain_min"), p.f("gain_max"), p.f("p"));
        }));
    NodeType room;
    room.spec = augmentation(
        "room_mic", "Room and microphone",
        "Hears each waveform in a room and through a microphone drawn for it: a reverberation "
        "(an impulse response made on the spot: the direct sound, then a tail decaying over the "
        "room's reverberation time) and a band (a cheap microphone's thin bass, a telephone's "
        "300 to 3400 Hz); its length, timing and loudness kept. Before the noise nodes.",
        {floatParam("p", 0.5, closed(0, 1), "Probability a sample is heard in a room."),
         floatParam("rt60_min", 0.1, closed(0, 5),
                    "Shortest reverberation time (seconds to fall 60 dB; a car 0.05, a living "
                    "room 0.4, a hall 2)."),
         floatParam("rt60_max", 0.7, closed(0, 5), "Longest reverberation time (seconds)."),
         floatParam("drr_min", 0, closed(-30, 60),
                    "Lowest direct-to-reverberant ratio (dB): the direct sound against the "
                    "room's; lower is farther from the microphone."),
         floatParam("drr_max", 12, closed(-30, 60), "Highest direct-to-reverberant ratio (dB)."),
         floatParam("band_p", 0.5, closed(0, 1),
                    "Probability a sample goes through a microphone's band (apart from the "
                    "room)."),
         floatParam("low_cut_min", 50, closed(1, 20000),
                    "Lowest high-pass corner (Hz), drawn log-uniformly up to low_cut_max."),
         floatParam("low_cut_max", 400, closed(1, 20000), "Highest high-pass corner (Hz)."),
         floatParam("high_cut_min", 3000, closed(1, 100000),
                    "Lowest low-pass corner (Hz; 3400: a telephone), drawn log-uniformly up to "
                    "high_cut_max."),
         floatParam("high_cut_max", 7500, closed(1, 100000),
                    "Highest low-pass corner (Hz; at half the sample rate or above: hardly "
                    "any cut)."),
         intParam("band_order", 2, closed(1, 16),
                  "The band's Butterworth order: 2 falls 12 dB an octave past a corner (a "
                  "microphone's), 12 and up is nearly a wall (a recording made at a lower sample "
                  "rate, 8 kHz's 4 kHz).")});
    room.spec.role = NodeRole::Transform;
    room.makeTransform = [](const NodeParams &p, const DataSpec &chain) {
        data::RoomMicrophone::Options o;
        o.sampleRate = chain.audioFiles.sampleRate;
        o.p = p.f("p");
        o.rt60Min = p.f("rt60_min");
        o.rt60Max = p.f("rt60_max");
        o.drrMinDb = p.f("drr_min");
        o.drrMaxDb = p.f("drr_max");
        o.bandP = p.f("band_p");
        o.lowCutMin = p.f("low_cut_min");
        o.lowCutMax = p.f("low_cut_max");
        o.highCutMin = p.f("high_cut_min");
        o.highCutMax = p.f("high_cut_max");
        o.bandOrder = int(p.i("band_order"));
        return std::make_shared<data::RoomMicrophone>(o);
    };
    c.add(std::move(room));
    NodeType vtlp;
    vtlp.spec = augmentation(
        "vtlp", "Vocal tract length perturbation",
        "Moves every frequency of a spectrogram's features by a random factor, formants and "
        "pitch together, as another speaker's shorter or longer vocal tract would (Jaitly and "
        "Hinton 2013); durations stay. After a stft or mel_spectrogram node.",
        {floatParam("max_change", 0.1, closed(0, 0.5),
                    "Factors from 1 - max_change to 1 + max_change, uniform (0.1: 0.9 to 1.1, "
                    "theirs)."),
         floatParam("p", 1.0, closed(0, 1), "Probability a sample is warped.")});
    vtlp.spec.role = NodeRole::Transform;
    vtlp.makeTransform = [](const NodeParams &p, const DataSpec &chain) {
        const auto features = spectrogramBefore(p.node(), chain);
        return std::make_shared<data::FrequencyWarp>(
            features ? features->rowFrequencies() : std::vector<double>{},
            features ? features->topFrequency() : 0.0, p.f("max_change"), p.f("p"));
    };
    c.add(std::move(vtlp));
    c.add(transformNode(
        augmentation("spec_augment", "SpecAugment",
                     "Masks random frequency bands and time spans of spectrogram features "
                     "(Park et al. 2019), set to the sample's mean.",
                     {intParam("freq_masks", 2, closed(0, 64), "Frequency masks per sample."),
                      intParam("freq_width", 5, closed(0, 4096), "Widest frequency mask (rows)."),
                      intParam("time_masks", 2, closed(0, 64), "Time masks per sample."),
                      intParam("time_width", 10, closed(0, 4096), "Widest time mask (frames).")}),
        [](const NodeParams &p) {
            return std::make_shared<data::SpecAugment>(p.i("freq_masks"), p.i("freq_width"),
                                                       p.i("time_masks"), p.i("time_width"));
        }));
}

} // namespace fb::exec::nodes
