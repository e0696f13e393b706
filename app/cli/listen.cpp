#include "app/cli/listen.h"

#include "app/cli/cli_common.h"
#include "core/base/safe_text.h"
#include "core/data/audio_files.h"
#include "core/exec/inference.h"
#include "core/exec/listen.h"
#include "core/exec/listen_score.h"
#include "core/exec/listen_stream.h"
#include "core/data/utterances.h"
#include "core/io/tuned_setting.h"

#include <dlfcn.h>
#include <unistd.h>
#include <pulse/error.h>
#include <pulse/simple.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace fb::cli {

using nlohmann::json;

namespace {

const char *kUsage = R"(Usage: flowbench-cli listen MODEL (FILE | --mic | --stdin) [options]

Keyword spotting: windows of the model's length slide over a recording (WAV, FLAC, OGG, ...) or
the microphone; one model, loaded once, hears every window. The class probabilities are
averaged over the last few windows, and a class other than background noise and unknown words
is detected when its average reaches the threshold (docs/audio.md, "Listen").

MODEL is a run folder, its model.safetensors or a checkpoint of a model trained on recordings.
--with MODEL2 (repeatable) has other models listen too: every window's probabilities are the
mean of the models'; models trained apart (another seed) usually raise fewer false alarms
together at the same digits found. They need the same classes, sample rate and length.
--stdin reads the stream from standard input instead, as raw 16-bit signed little-endian mono
samples at --rate (what the window's Listen mode sends from its microphone), until it ends or
Ctrl-C (or SIGTERM) stops it; either way what came is heard and the summary follows.

Options:
  --window-ms MS     the window (default and only value: the length the model was trained on)
  --hop-ms MS        from one window to the next (default 100)
  --average K        windows averaged (default 4, or the model's tuned setting)
  --threshold P      averaged probability of a detection (default 0.85, or the model's tuned
                     setting: lower finds more words and raises more false alarms)
  --suppress-ms S    no detection this soon after another (default 500)
  --centre-ms C      a window counts only when its sound's middle is within C ms of its own,
                     as the model learnt words (default 300; 0: every window)
  --floor-db F       ... and its sound is what stands F dB above the window's noise floor
                     (its quietest tenth), so noise filling a window is not taken for a
                     centred sound (default 6; 0: within the model's trim_db of the loudest)
  --isolate-ms G     each window is heard as the word it is centred on alone: its stretch of
                     sound parted from the others by G ms of quiet or more is kept, and the
                     rest is turned down to the window's noise floor, so that digits said
                     one after another are each heard apart (default 130; 0: whole)
  --ignore A,B,...   classes never detected (default background,unknown,silence,noise)
  --with MODEL2      another model listening too (repeatable; probabilities averaged)
  --warp W[,W2...]   each model also hears every window 1-W and 1+W times as fast (a lower
                     and a higher voice), for each W given, probabilities averaged (default
                     0.08; 0: only as it is, a tenth of the work; each at most 0.3, at most 4)
  --windows          also one line per window: its top classes and time
  --seconds S        with --mic: stop after S seconds (default: at Ctrl-C)
  --rate HZ          with --stdin: the samples' rate (default: the model's)
  --device cpu|cuda[:N]  (default cpu)
  --threads N        CPU threads for the models (default 1: a window is too little work to
                     share out, and OpenMP's idle threads spin, taking the cores of whatever
                     else runs: beside another listener, windows took 450 ms instead of 10)
  --truth LABELS     what was said when: START<tab>END<tab>LABEL lines in seconds (Audacity's
                     exported labels). A label naming a class the model detects is a keyword
                     to find; any other marks a stretch where a detection is a false alarm.
                     Each detection says whether it was right, and the summary gains "score":
                     keywords found at their time, missed, false alarms and an hour's worth
  --sweep            with --truth: also replay the detector over the windows heard, at 1 to 8
                     windows averaged and thresholds 0.5 to 0.95, and name the setting that
                     finds the most keywords within --budget false alarms an hour
  --budget F         false alarms an hour the sweep's "best" may raise (default 2)
  --keep             with --sweep: keep the best setting beside the model file (listen.json),
                     where the model then listens at it without --threshold and --average.
                     Only where the recording can tell the budget: one false alarm in its
                     time away from the keywords must be at most --budget an hour
  --progress         with a recording: a "progress" line every 2 s of hearing it

The model's tuned setting: listen.json beside the model file (written by --keep, or by Try the
Model's Tune... in the window) gives the threshold and windows averaged that you do not give,
where it was tuned for this model file, these --with models and this detector (--warp,
--hop-ms, --centre-ms, --floor-db, --isolate-ms, --suppress-ms, --ignore); stderr says when
it is used, or why not. Give --threshold and --average to listen at another.

Output (stdout, JSON lines):
  {"kind": "detection", "time", "start", "end", "class", "index", "probability", "window"}
  {"kind": "window", "window", "start", "end", "top": [{"class", "probability"}, ...],
   "probabilities": {class: this window's probability, ...}, "sound_offset", "centred", "ms",
   "sound": [start, end] (the part of the stream it was heard as; absent with --isolate-ms 0
   and for a model trained with trim_db 0)}
  {"kind": "progress", "seconds" (heard so far), "of" (the recording's)}   (with --progress)
  {"kind": "summary", "status": "ok", "input", "seconds", "windows", "detections",
   "models", "threads", "detector": {"average", "threshold", "hop_ms", "centre_ms",
   "floor_db", "isolate_ms", "suppress_ms", "warp" (the largest W), "warps" (every W),
   "tuned" (the listen.json used, or null)},
   "latency_ms": {"p50", "p99", "max"}, "clipped" (the share of its samples cut off flat at
   its loudest, where 0.1% or more: recorded too loud)}  (last line; "status": "error" on
   failure)
  with --truth, detections gain "truth" (right, wrong or false_alarm), "said" (the label
  there, or null) and "note" (what the label's line holds after it, where it holds more: the
  recording, in held-out-stream's labels), and the summary "score": {"keywords", "found",
  "missed": [{"label", "start", "end", "note"}], "wrong", "false_alarms", "other_seconds",
  "false_alarms_per_hour"}; with --sweep,
  "sweep": [{"average", "threshold", "found", "false_alarms", "false_alarms_per_hour"}] and
  "best": {"budget", "average", "threshold", "found", "keywords", "false_alarms_per_hour",
  "one_false_alarm_per_hour", "setting" (listen.json's content for it), "file" (where it is
  kept), "model_file" (the model it is for), "kept" (whether --keep wrote it)}
Exit codes: 0 ok, 1 the recording or microphone could not be read, 2 bad usage or model.
)";

std::atomic<bool> g_stop{false};

void onSignal(int)
{
    g_stop = true;
}

double rounded(double v, double scale)
{
    return std::round(v * scale) / scale;
}

json detectionJson(const exec::Detection &d)
{
    return {{"kind", "detection"},
            {"time", rounded(d.time, 1000)},
            {"start", rounded(d.start, 1000)},
            {"end", rounded(d.end, 1000)},
            {"class", d.label},
            {"index", d.index},
            {"probability", rounded(d.probability, 1e4)},
            {"window", d.window}};
}

json windowJson(const exec::ListenWindow &w, const std::vector<std::string> &names)
{
    std::vector<int32_t> order(w.averaged.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int32_t(i);
    std::sort(order.begin(), order.end(),
              [&](int32_t a, int32_t b) { return w.averaged[size_t(a)] > w.averaged[size_t(b)]; });
    json top = json::array();
    for (size_t i = 0; i < std::min<size_t>(3, order.size()); ++i) {
        const int32_t c = order[i];
        top.push_back({{"class", size_t(c) < names.size() ? names[size_t(c)] : std::to_string(c)},
                       {"probability", rounded(w.averaged[size_t(c)], 1e4)},
                       {"window_probability", rounded(w.probabilities[size_t(c)], 1e4)}});
    }
    // Every class's probability in this window alone, for detectors tried outside the engine
    // (docs/audio-history.md's tables of detector settings were simulated from these).
    json all = json::object();
    for (size_t c = 0; c < w.probabilities.size(); ++c)
        all[c < names.size() ? names[c] : std::to_string(c)] = rounded(w.probabilities[c], 1e4);
    json line = {{"kind", "window"},
                 {"window", w.index},
                 {"start", rounded(w.start, 1000)},
                 {"end", rounded(w.end, 1000)},
                 {"top", top},
                 {"probabilities", all},
                 {"sound_offset", rounded(w.soundOffset, 1000)},
                 {"centred", w.centred},
                 {"ms", rounded(w.milliseconds, 1000)}};
    if (w.soundEnd > w.soundStart)
        line["sound"] = {rounded(w.soundStart, 1000), rounded(w.soundEnd, 1000)};
    return line;
}

double percentile(std::vector<double> v, double q)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t i = size_t(std::ceil(q * double(v.size()))) - (q > 0 ? 1 : 0);
    return v[std::min(i, v.size() - 1)];
}

int fail(int code, const std::string &message, const std::string &input)
{
    std::fprintf(stderr, "error: %s\n", safeText(message).c_str());
    std::cout << jsonLine(json{{"kind", "summary"},
                               {"status", "error"},
                               {"input", input},
                               {"error", {{"message", message}}}})
              << std::endl;
    return code;
}

// The default microphone through PulseAudio's simple API (PipeWire serves it too), loaded when
// --mic asks for it: the CLI runs on servers and in the GPU machine's bundle, where no sound
// server is, and Qt Multimedia (what the window records with) would bring Qt and ICU along.
// Mono float samples at `rate`, 50 ms at a time, to `take`, until g_stop or `seconds`.
int fromMicrophone(int64_t rate, double seconds,
                   const std::function<void(const std::vector<float> &)> &take, std::string &error)
{
    void *lib = dlopen("libpulse-simple.so.0", RTLD_NOW);
    if (!lib) {
        error = "no microphone: libpulse-simple.so.0 is not installed (sudo apt install "
                "libpulse0)";
        return kExitFailed;
    }
    using New = pa_simple *(*)(const char *, const char *, pa_stream_direction_t, const char *,
                               const char *, const pa_sample_spec *, const pa_channel_map *,
                               const pa_buffer_attr *, int *);
    using Read = int (*)(pa_simple *, void *, size_t, int *);
    using Free = void (*)(pa_simple *);
    using Strerror = const char *(*)(int);
    auto paNew = reinterpret_cast<New>(dlsym(lib, "pa_simple_new"));
    auto paRead = reinterpret_cast<Read>(dlsym(lib, "pa_simple_read"));
    auto paFree = reinterpret_cast<Free>(dlsym(lib, "pa_simple_free"));
    void *pulse = dlopen("libpulse.so.0", RTLD_NOW);
    auto paStrerror =
        pulse ? reinterpret_cast<Strerror>(dlsym(pulse, "pa_strerror")) : Strerror(nullptr);
    if (!paNew || !paRead || !paFree) {
        error = "no microphone: libpulse-simple.so.0 lacks pa_simple_new";
        return kExitFailed;
    }
    pa_sample_spec spec{};
    spec.format = PA_SAMPLE_FLOAT32LE;
    spec.rate = uint32_t(rate);
    spec.channels = 1;
    // Small fragments: a window is heard as soon as its last 50 ms arrive.
    pa_buffer_attr attr{};
    attr.maxlength = uint32_t(-1);
    attr.fragsize = uint32_t(rate / 20 * int64_t(sizeof(float)));
    int code = 0;
    pa_simple *s = paNew(nullptr, "flowbench-cli", PA_STREAM_RECORD, nullptr, "listen", &spec,
                         nullptr, &attr, &code);
    if (!s) {
        error = std::string("no microphone: PulseAudio says ") +
                (paStrerror ? paStrerror(code) : "it cannot record") +
                " (is PulseAudio or PipeWire running?)";
        return kExitFailed;
    }
    std::fprintf(stderr,
                 "listening to the default microphone (PulseAudio, %lld Hz); Ctrl-C "
                 "stops\n",
                 static_cast<long long>(rate));
    std::vector<float> chunk(size_t(rate / 20));
    const int64_t limit = seconds > 0 ? int64_t(std::llround(seconds * double(rate))) : -1;
    int64_t got = 0;
    int status = kExitOk;
    while (!g_stop && (limit < 0 || got < limit)) {
        if (paRead(s, chunk.data(), chunk.size() * sizeof(float), &code) < 0) {
            error = std::string("the microphone stopped: ") +
                    (paStrerror ? paStrerror(code) : "a read failed");
            status = kExitFailed;
            break;
        }
        got += int64_t(chunk.size());
        take(chunk);
    }
    paFree(s);
    return status;
}

} // namespace

int listen(int argc, char **argv)
{
    std::string input, device = "cpu", truthFile;
    bool sweeping = false, progress = false, keep = false;
    bool thresholdGiven = false, averageGiven = false;
    double budget = 2;
    std::vector<std::string> models(1); // MODEL, then every --with
    bool mic = false, windows = false, fromStdin = false;
    double windowMs = 0, seconds = 0, rate = 0;
    int threads = 1;
    exec::ListenOptions o;
    auto number = [](const std::string &text, double &out) {
        char *end = nullptr;
        out = std::strtod(text.c_str(), &end);
        return !text.empty() && *end == '\0' && std::isfinite(out);
    };
    auto usage = [](const std::string &message) {
        std::fprintf(stderr, "flowbench-cli listen: %s\n\n%s", safeText(message).c_str(), kUsage);
        return kExitBadInput;
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--mic") {
            mic = true;
        } else if (a == "--stdin") {
            fromStdin = true;
        } else if (a == "--windows") {
            windows = true;
        } else if (a == "--sweep") {
            sweeping = true;
        } else if (a == "--progress") {
            progress = true;
        } else if (a == "--keep") {
            keep = true;
        } else if (a == "--window-ms" || a == "--hop-ms" || a == "--average" ||
                   a == "--threshold" || a == "--suppress-ms" || a == "--centre-ms" ||
                   a == "--floor-db" || a == "--isolate-ms" || a == "--seconds" ||
                   a == "--device" || a == "--ignore" || a == "--rate" || a == "--with" ||
                   a == "--warp" || a == "--threads" || a == "--truth" || a == "--budget") {
            if (i + 1 >= argc) return usage(a + " needs a value");
            const std::string v = argv[++i];
            if (a == "--with") {
                models.push_back(v);
                continue;
            }
            if (a == "--device") {
                device = v;
                continue;
            }
            if (a == "--truth") {
                truthFile = v;
                continue;
            }
            if (a == "--warp") {
                if (!warpList(v, o.warps))
                    return usage("--warp needs numbers separated by commas, not '" + v + "'");
                continue;
            }
            if (a == "--ignore") {
                o.ignore.clear();
                for (const std::string &part : split(v, ','))
                    if (!part.empty()) o.ignore.push_back(part);
                continue;
            }
            double x = 0;
            if (!number(v, x)) return usage(a + " needs a number, not '" + v + "'");
            if (a == "--window-ms") windowMs = x;
            if (a == "--hop-ms") o.hopMs = x;
            if (a == "--threshold") o.threshold = x, thresholdGiven = true;
            if (a == "--suppress-ms") o.suppressMs = x;
            if (a == "--centre-ms") o.centreMs = x;
            if (a == "--floor-db") o.floorDb = x;
            if (a == "--isolate-ms") o.isolateMs = x;
            if (a == "--seconds") seconds = x;
            if (a == "--rate") rate = x;
            if (a == "--budget") budget = x;
            if (a == "--threads") {
                if (x != std::floor(x) || x < 1 || x > 1024)
                    return usage("--threads needs a whole number from 1 to 1024");
                threads = int(x);
            }
            if (a == "--average") {
                if (x != std::floor(x)) return usage("--average needs a whole number");
                o.average = int(std::clamp(x, -1.0, 1000.0));
                averageGiven = true;
            }
        } else if (a.starts_with("--")) {
            return usage("unknown option " + a);
        } else if (models.front().empty()) {
            models.front() = a;
        } else if (input.empty()) {
            input = a;
        } else {
            return usage("listen takes one recording (or --mic or --stdin), not '" + a +
                         "' as well");
        }
    }
    if (models.front().empty()) return usage("listen needs a model (a run folder or .safetensors)");
    if (int(mic) + int(fromStdin) + int(!input.empty()) != 1)
        return usage(mic || fromStdin ? "listen takes one of a recording, --mic and --stdin"
                                      : "listen needs a recording, --mic or --stdin");
    if (rate != 0 && (!fromStdin || rate < 1000 || rate > 384000 || rate != std::floor(rate)))
        return usage(fromStdin ? "--rate must be a whole number of Hz from 1000 to 384000"
                               : "--rate goes with --stdin");
    if (seconds < 0) return usage("--seconds must not be negative");
    if (sweeping && truthFile.empty())
        return usage("--sweep needs --truth: what was said when, to count what it finds");
    if (!(budget >= 0)) return usage("--budget must be a number of false alarms an hour, 0 or more");
    if (keep && !sweeping)
        return usage("--keep goes with --truth and --sweep: it keeps the sweep's best setting");
    if (!truthFile.empty() && mic)
        return usage("--truth goes with a recording or --stdin, whose times it labels");

    std::vector<std::unique_ptr<exec::Predictor>> opened;
    std::vector<exec::Predictor *> predictors;
    for (const std::string &path : models) {
        auto predictor = exec::Predictor::open(path, device);
        if (!predictor.ok()) return fail(kExitBadInput, predictor.error().str(), input);
        opened.push_back(std::move(predictor).value());
        predictors.push_back(opened.back().get());
    }
    exec::Predictor &p = *predictors.front();
    p.setThreads(threads); // the process's, so every model's
    // The model's tuned setting fills in what was not given, where it was tuned for this
    // hearing; the digests are read only where one is kept or the sweep needs them.
    std::vector<std::string> modelFiles;
    for (const exec::Predictor *q : predictors)
        modelFiles.push_back(q->modelFile());
    std::optional<io::TunedSetting> hearing;
    auto describe = [&]() -> const io::TunedSetting * {
        if (!hearing) {
            auto h = exec::describeHearing(modelFiles, o);
            if (!h.ok()) {
                std::fprintf(stderr, "note: %s\n", h.error().str().c_str());
                return nullptr;
            }
            hearing = std::move(h).value();
        }
        return &*hearing;
    };
    std::string tunedFile;
    if (!thresholdGiven || !averageGiven) {
        const std::string path = io::tunedSettingPath(p.modelFile());
        auto tuned = io::readTunedSetting(p.modelFile());
        if (!tuned.ok()) {
            std::fprintf(stderr, "note: %s; it is not used\n", tuned.error().str().c_str());
        } else if (tuned.value()) {
            const io::TunedSetting &t = *tuned.value();
            const io::TunedSetting *h = describe();
            const std::string differs = h ? io::hearingDiffers(t, *h) : "its model cannot be read";
            if (!differs.empty()) {
                std::fprintf(stderr, "note: %s is not used: %s\n", safeText(path).c_str(),
                             differs.c_str());
            } else {
                if (!thresholdGiven) o.threshold = t.threshold;
                if (!averageGiven) o.average = t.average;
                tunedFile = path;
                const std::string gives = thresholdGiven ? "the windows averaged ("
                                          : averageGiven ? "the threshold ("
                                                         : "the threshold and windows averaged (";
                std::fprintf(stderr, "the model's tuned setting (%s) gives %s%s)\n",
                             safeText(path).c_str(), gives.c_str(),
                             safeText(io::describeTuned(t)).c_str());
            }
        }
    }
    auto made = exec::Listener::make(predictors, o);
    if (!made.ok()) {
        const Error &e = made.error();
        return e.file.empty() ? usage(e.message) : fail(kExitBadInput, e.str(), input);
    }
    exec::Listener listener = std::move(made).value();
    const double modelMs =
        1000.0 * double(listener.windowSamples()) / double(listener.sampleRate());
    if (windowMs > 0 && std::abs(windowMs - modelMs) > 0.5)
        return usage("--window-ms: the model hears windows of " +
                     std::to_string(int64_t(std::llround(modelMs))) +
                     " ms, the length of the recordings it was trained on");
    std::string heardBy = p.modelFile();
    for (size_t i = 1; i < predictors.size(); ++i)
        heardBy += " with " + predictors[i]->modelFile();
    std::fprintf(stderr, "model: %s (%zu classes; %.0f ms windows every %.0f ms)\n",
                 safeText(heardBy).c_str(), p.classNames().size(), modelMs,
                 1000.0 * double(listener.hopSamples()) / double(listener.sampleRate()));

    std::vector<double> latencies;
    int64_t detections = 0;
    const auto names = p.classNames();
    std::optional<exec::TruthJudge> judge;
    if (!truthFile.empty()) {
        auto truth = exec::readTruth(truthFile, names, o.ignore);
        if (!truth.ok()) return fail(kExitBadInput, truth.error().str(), input);
        // Labels of none of the model's classes: a recording of other words and noise, whose
        // false alarms are still worth counting (how often does it cry wolf in my kitchen?);
        // but a sweep over it would crown any setting, and a misspelt label file looks the
        // same, so the sweep refuses it and a score says so.
        if (std::ranges::none_of(truth.value(),
                                 [](const exec::TruthWord &w) { return w.index >= 0; })) {
            std::string detected;
            for (size_t c = 0; c < names.size(); ++c)
                if (!listener.ignored(int32_t(c)))
                    detected += (detected.empty() ? "" : ", ") + names[c];
            const std::string none =
                truthFile + ": no label names a class the model detects (" + detected + ")";
            if (sweeping) return fail(kExitBadInput, none + ": nothing to find", input);
            std::fprintf(stderr, "note: %s: counting its false alarms only\n",
                         safeText(none).c_str());
        }
        judge.emplace(std::move(truth).value());
    }
    std::vector<exec::ListenWindow> heardWindows; // for --sweep
    double total = 0;                     // a recording's seconds, for --progress
    auto lastProgress = std::chrono::steady_clock::now();
    auto onWindow = [&](const exec::ListenWindow &w) {
        latencies.push_back(w.milliseconds);
        if (progress && total > 0 &&
            std::chrono::steady_clock::now() - lastProgress > std::chrono::seconds(2)) {
            lastProgress = std::chrono::steady_clock::now();
            std::cout << jsonLine(json{{"kind", "progress"},
                                       {"seconds", rounded(std::min(w.start, total), 10)},
                                       {"of", rounded(total, 10)}})
                      << std::endl;
        }
        if (windows) std::cout << jsonLine(windowJson(w, names)) << "\n";
        if (sweeping) {
            heardWindows.push_back(w);
            heardWindows.back().averaged.clear(); // the replay averages again
        }
    };
    auto onDetection = [&](const exec::Detection &d) {
        ++detections;
        json line = detectionJson(d);
        if (judge) {
            int64_t near = -1;
            line["truth"] = exec::outcomeName(judge->judge(d, near));
            line["said"] = near >= 0 ? json(judge->truth()[size_t(near)].label) : json();
            if (near >= 0 && !judge->truth()[size_t(near)].note.empty())
                line["note"] = judge->truth()[size_t(near)].note;
        }
        std::cout << jsonLine(line) << std::endl;
        std::fprintf(stderr, "%8.2f s  %s (%.0f%%)\n", d.time, safeText(d.label).c_str(),
                     100.0 * d.probability);
    };

    double heard = 0;
    // Flat tops at the stream's loudest (a recording or microphone driven too hot), counted in
    // the samples as they come (a file's and stdin's before resampling, the microphone's as it
    // gives them at the model's rate): the summary says so (as infer does).
    data::FlatPeaks flat;
    if (mic) {
        std::signal(SIGINT, onSignal);
        std::signal(SIGTERM, onSignal);
        std::string error;
        const int code = fromMicrophone(
            listener.sampleRate(), seconds,
            [&](const std::vector<float> &samples) {
                heard += double(samples.size()) / double(listener.sampleRate());
                flat.push(samples.data(), samples.size());
                listener.push(samples.data(), samples.size(), onWindow, onDetection);
                std::cout.flush();
            },
            error);
        if (code != kExitOk) return fail(code, error, "microphone");
        input = "microphone";
    } else if (fromStdin) {
        // Raw samples as they come: each read hears every window they complete, and the lines
        // go out at once (the window reads them as they happen). Ctrl-C or SIGTERM ends the
        // stream as its end does (`arecord | flowbench-cli listen MODEL --stdin` stopped by
        // Ctrl-C still gets its summary): installed without SA_RESTART, so that a read waiting
        // for samples returns at once.
        struct sigaction stop {};
        stop.sa_handler = onSignal;
        sigemptyset(&stop.sa_mask);
        stop.sa_flags = 0;
        sigaction(SIGINT, &stop, nullptr);
        sigaction(SIGTERM, &stop, nullptr);
        const int64_t from = rate > 0 ? int64_t(rate) : listener.sampleRate();
        data::StreamResampler resample(from, listener.sampleRate());
        std::vector<int16_t> raw(size_t(std::max<int64_t>(1, from / 50))); // 20 ms
        std::vector<float> samples;
        char odd = 0;
        bool haveOdd = false;
        while (true) {
            // read(2), not fread: it returns what the pipe holds now instead of waiting for
            // the whole buffer.
            char *bytes = reinterpret_cast<char *>(raw.data());
            size_t have = 0;
            if (haveOdd) bytes[have++] = odd, haveOdd = false;
            ssize_t got = g_stop ? 0 : ::read(0, bytes + have, raw.size() * 2 - have);
            if (got < 0 && errno == EINTR) {
                if (!g_stop) { // another signal: read again, keeping the odd byte
                    if (have) odd = bytes[0], haveOdd = true;
                    continue;
                }
                got = 0; // stopped: the end of the stream
            }
            if (got < 0)
                return fail(kExitFailed, std::string("standard input: ") + std::strerror(errno),
                            "stdin");
            have += size_t(got);
            const bool end = got == 0;
            if (have % 2) odd = bytes[have - 1], haveOdd = true, --have;
            samples.resize(have / 2);
            for (size_t k = 0; k < samples.size(); ++k)
                samples[k] = float(raw[k]) / 32768.0f;
            flat.push(samples.data(), samples.size());
            const std::vector<float> x = resample.push(samples.data(), samples.size(), end);
            if (!resample.error().empty()) return fail(kExitFailed, resample.error(), "stdin");
            heard += double(x.size()) / double(listener.sampleRate());
            listener.push(x.data(), x.size(), onWindow, onDetection);
            std::cout.flush();
            if (end) break;
        }
        input = "stdin";
    } else {
        auto recording = data::readRecording(input, listener.sampleRate(), &flat);
        if (!recording.ok()) return fail(kExitFailed, recording.error().str(), input);
        const std::vector<float> &x = recording.value();
        heard = double(x.size()) / double(listener.sampleRate());
        total = heard;
        listener.push(x.data(), x.size(), onWindow, onDetection);
    }
    listener.finish(onWindow, onDetection);
    json summary{{"kind", "summary"},
                 {"status", "ok"},
                 {"input", input},
                 {"seconds", rounded(heard, 1000)},
                 {"windows", int64_t(latencies.size())},
                 {"detections", detections},
                 // What heard it, so that a log (or the window's status) says how.
                 {"models", int64_t(models.size())},
                 {"threads", threads},
                 {"detector",
                  {{"average", o.average},
                   {"threshold", o.threshold},
                   {"hop_ms", o.hopMs},
                   {"centre_ms", o.centreMs},
                   {"floor_db", o.floorDb},
                   {"isolate_ms", o.isolateMs},
                   {"suppress_ms", o.suppressMs},
                   {"warp", o.warps.empty() ? 0.0 : *std::ranges::max_element(o.warps)},
                   {"warps", o.warps},
                   {"tuned", tunedFile.empty() ? json() : json(tunedFile)}}},
                 {"latency_ms",
                  {{"p50", rounded(percentile(latencies, 0.5), 1000)},
                   {"p99", rounded(percentile(latencies, 0.99), 1000)},
                   {"max", rounded(percentile(latencies, 1.0), 1000)}}}};
    cli::noteClipped(summary, input, flat.share(),
                     "clipped words are heard less well, so turn the gain down");
    exec::ListenScore s;
    if (judge) {
        s = judge->score(heard);
        json missed = json::array();
        for (size_t i : s.missed) {
            const exec::TruthWord &w = judge->truth()[i];
            missed.push_back({{"label", w.label}, {"start", w.start}, {"end", w.end}});
            if (!w.note.empty()) missed.back()["note"] = w.note;
        }
        summary["score"] = {{"keywords", s.keywords},
                            {"found", s.found},
                            {"missed", missed},
                            {"wrong", s.wrong},
                            {"false_alarms", s.falseAlarms},
                            {"other_seconds", rounded(s.otherSeconds, 1000)},
                            {"false_alarms_per_hour", rounded(s.falseAlarmsPerHour(), 100)}};
        std::fprintf(stderr,
                     "found %lld of %lld keywords at their time; %lld false alarms in %.0f s "
                     "away from them (%.1f an hour); %lld wrong\n",
                     static_cast<long long>(s.found), static_cast<long long>(s.keywords),
                     static_cast<long long>(s.falseAlarms), s.otherSeconds,
                     s.falseAlarmsPerHour(), static_cast<long long>(s.wrong));
    }
    if (sweeping) {
        const std::vector<int> averages{1, 2, 3, 4, 5, 6, 7, 8};
        const std::vector<double> thresholds{0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95};
        const auto points =
            exec::sweep(heardWindows, listener.options(), names, listener.sampleRate(),
                        listener.hopSamples(), judge->truth(), heard, averages, thresholds);
        json all = json::array();
        for (const exec::SweepPoint &q : points)
            all.push_back({{"average", q.average},
                           {"threshold", q.threshold},
                           {"found", q.score.found},
                           {"false_alarms", q.score.falseAlarms},
                           {"false_alarms_per_hour", rounded(q.score.falseAlarmsPerHour(), 100)}});
        summary["sweep"] = all;
        // What a person reads: the most found within each budget of false alarms an hour.
        std::vector<double> limits{0.0, budget, 5.0, 10.0, 20.0};
        std::sort(limits.begin(), limits.end());
        limits.erase(std::unique(limits.begin(), limits.end()), limits.end());
        std::fprintf(stderr, "false alarms an hour at most | keywords found | setting\n");
        for (double limit : limits) {
            const exec::SweepPoint *b = exec::bestWithin(points, limit, o.average);
            if (b)
                std::fprintf(stderr, "%6g | %lld of %lld (%.1f%%) at %.1f an hour | --average %d "
                                     "--threshold %g\n",
                             limit, static_cast<long long>(b->score.found),
                             static_cast<long long>(b->score.keywords),
                             b->score.keywords ? 100.0 * double(b->score.found) /
                                                     double(b->score.keywords)
                                               : 0.0,
                             b->score.falseAlarmsPerHour(), b->average, b->threshold);
            else
                std::fprintf(stderr, "%6g | none of the settings keeps to it\n", limit);
        }
        // One false alarm in a short recording is many an hour: say how finely it measures.
        const double oneAlarm = s.oneFalseAlarmPerHour();
        if (oneAlarm > budget && budget > 0)
            std::fprintf(stderr,
                         "note: %.0f s of the recording lie away from the keywords, so one false "
                         "alarm there is %.1f an hour: it cannot tell %g an hour from none. "
                         "Record at least %.0f minutes of other words and noise for that.\n",
                         s.otherSeconds, oneAlarm, budget,
                         std::ceil(io::secondsToTell(budget) / 60));
        else if (oneAlarm > budget)
            std::fprintf(stderr,
                         "note: no recording can tell 0 false alarms an hour from none (one "
                         "false alarm in any is more); the best within 0 is the best with none "
                         "in this one\n");
        const exec::SweepPoint *b = exec::bestWithin(points, budget, o.average);
        summary["best"] =
            b ? json{{"budget", budget},
                     {"average", b->average},
                     {"threshold", b->threshold},
                     {"found", b->score.found},
                     {"keywords", b->score.keywords},
                     {"false_alarms_per_hour", rounded(b->score.falseAlarmsPerHour(), 100)},
                     {"one_false_alarm_per_hour", rounded(oneAlarm, 100)}}
              : json{{"budget", budget}};
        // The best as the model's tuned setting: what --keep (or the window) keeps. Not kept
        // is said on stderr and in the summary; the sweep's result stands either way.
        const io::TunedSetting *h = b ? describe() : nullptr;
        bool kept = false;
        std::string notKept;
        char budgetText[32];
        std::snprintf(budgetText, sizeof budgetText, "%g", budget);
        if (!b)
            notKept = std::string("no setting keeps to ") + budgetText + " false alarms an hour";
        if (b && !h) notKept = "its model file cannot be read to say which model it is for";
        if (h) {
            io::TunedSetting t = *h;
            t.threshold = b->threshold;
            t.average = b->average;
            t.recording = input;
            t.labels = truthFile;
            t.keywords = int(b->score.keywords);
            t.found = int(b->score.found);
            t.falseAlarmsPerHour = rounded(b->score.falseAlarmsPerHour(), 100);
            t.budget = budget;
            const std::string file = io::tunedSettingPath(p.modelFile());
            summary["best"]["setting"] = io::tunedSettingJson(t);
            summary["best"]["file"] = file;
            summary["best"]["model_file"] = p.modelFile();
            if (budget <= 0) {
                notKept = "a budget of 0 false alarms an hour cannot be told from a recording "
                          "(one false alarm in any is more): keep with --budget above 0";
            } else if (oneAlarm > budget) {
                notKept = std::string("the recording is too short to tell ") + budgetText +
                          " false alarms an hour from none";
            } else if (keep) {
                const Status written = io::writeTunedSetting(p.modelFile(), t);
                if (written.ok()) {
                    kept = true;
                    std::fprintf(stderr, "kept in %s: %s\n", safeText(file).c_str(),
                                 safeText(io::describeTuned(t)).c_str());
                } else {
                    notKept = written.error().str();
                }
            }
        }
        if (keep && !kept) std::fprintf(stderr, "not kept: %s\n", safeText(notKept).c_str());
        summary["best"]["kept"] = kept;
    }
    std::cout << jsonLine(summary) << std::endl;
    std::fprintf(stderr,
                 "%lld detections in %.1f s (%zu windows, %.2f ms each at p50, %.2f at p99)\n",
                 static_cast<long long>(detections), heard, latencies.size(),
                 percentile(latencies, 0.5), percentile(latencies, 0.99));
    return kExitOk;
}

namespace {

const char *const kStreamUsage = R"(Usage: flowbench-cli held-out-stream MODEL OUT.wav [options]

A run's held-out recordings (its evaluate node's: voices and words it never trained on) one
after another, with silence between them, as one recording and its labels: OUT.wav and
OUT.txt (START<tab>END<tab>LABEL a line, as Audacity exports labels, and the recording's file
name after another tab: which one was missed, which one raised a false alarm). Tune a detector on them
without recording and labelling anything:

  flowbench-cli listen MODEL OUT.wav --truth OUT.txt --sweep [--keep]

Every class is labelled by name except those of noise (background, background_noise, noise,
silence), which lie unlabelled between the words; listen counts the classes it ignores
("unknown") as other words, where a detection is a false alarm. The data set's recordings in
silence are easier to hear than a room: a measure of voices and words, not of a microphone.

MODEL: a run folder, its model.safetensors or a checkpoint.
  --seed N           the order of the recordings and the gaps (default 1)
  --gap-ms A,B       silence after each recording, drawn from A to B ms (default 300,1200)
  --limit N          at most N recordings, drawn at random (default: every one)

Output: stderr says what was made; stdout's last line is {"kind": "summary", "status": "ok",
"recording", "labels", "seconds", "recordings", "labelled", "noises", "node"} ("status":
"error" and "error": {"message"} on failure).
Exit codes: 0 ok, 1 the run holds no recordings out (or only noise), they could not be read,
or the files could not be written; 2 bad usage or model.
)";

} // namespace

int heldOutStream(int argc, char **argv)
{
    std::string model, out;
    exec::HeldOutStreamOptions o;
    auto usage = [](const std::string &message) {
        std::fprintf(stderr, "flowbench-cli held-out-stream: %s\n\n%s", safeText(message).c_str(),
                     kStreamUsage);
        return kExitBadInput;
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kStreamUsage);
            return kExitOk;
        }
        if (a == "--seed" || a == "--gap-ms" || a == "--limit") {
            if (i + 1 >= argc) return usage(a + " needs a value");
            const std::string v = argv[++i];
            long x = 0;
            if (a == "--seed") {
                if (!wholeNumber(v.c_str(), 0, LONG_MAX, x))
                    return usage("--seed needs a whole number, 0 or more");
                o.seed = uint64_t(x);
            } else if (a == "--limit") {
                if (!wholeNumber(v.c_str(), 0, LONG_MAX, x))
                    return usage("--limit needs a whole number, 0 or more");
                o.limit = x;
            } else {
                const std::vector<std::string> parts = split(v, ',');
                char *e1 = nullptr, *e2 = nullptr;
                if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
                    return usage("--gap-ms needs two numbers of ms, A,B");
                o.gapMinMs = std::strtod(parts[0].c_str(), &e1);
                o.gapMaxMs = std::strtod(parts[1].c_str(), &e2);
                if (*e1 != '\0' || *e2 != '\0' || !(o.gapMinMs >= 0) ||
                    !(o.gapMaxMs >= o.gapMinMs) || !(o.gapMaxMs <= 60000))
                    return usage("--gap-ms needs two numbers of ms from 0 to 60000, the smaller "
                                 "first");
            }
        } else if (a.starts_with("--")) {
            return usage("unknown option " + a);
        } else if (model.empty()) {
            model = a;
        } else if (out.empty()) {
            out = a;
        } else {
            return usage("held-out-stream takes a model and one file to write, not '" + a +
                         "' as well");
        }
    }
    if (model.empty() || out.empty()) return usage("held-out-stream needs MODEL and OUT.wav");
    const std::filesystem::path wav(out);
    const std::string labels = (wav.parent_path() / wav.stem()).string() + ".txt";
    if (std::filesystem::path(labels).lexically_normal() == wav.lexically_normal())
        return usage("OUT is the recording; its labels go beside it as NAME.txt, so it must "
                     "not be a .txt itself");
    auto predictor = exec::Predictor::open(model, "cpu");
    if (!predictor.ok()) return fail(kExitBadInput, predictor.error().str(), model);
    if (!(*predictor)->audio())
        return fail(kExitBadInput,
                    model + ": the model reads images; a stream is made of recordings", model);
    std::fprintf(stderr, "reading the held-out recordings of %s…\n", safeText(model).c_str());
    auto stream = exec::heldOutStream((*predictor)->savedPipeline(), o);
    if (!stream.ok()) return fail(kExitFailed, stream.error().str(), model);
    if (stream->labelled == 0)
        return fail(kExitFailed,
                    "the " + std::to_string(stream->recordings) + " recordings '" + stream->node +
                        "' holds out are all noise (background, noise, silence): nothing to "
                        "find in a stream of them",
                    model);
    const exec::HeldOutStream &h = *stream;
    if (Status st = data::writeWav(out, h.samples, h.rate); !st.ok())
        return fail(kExitFailed, st.error().str(), model);
    {
        std::ofstream f(labels, std::ios::binary | std::ios::trunc);
        f << exec::labelsText(h.labels, h.files);
        f.close();
        if (!f) return fail(kExitFailed, labels + ": cannot write the labels", model);
    }
    const double seconds = double(h.samples.size()) / double(h.rate);
    std::fprintf(stderr,
                 "wrote %s (%.1f min: %lld recordings of '%s', %lld of them labelled, %lld of "
                 "noise) and its labels %s\n",
                 safeText(out).c_str(), seconds / 60, static_cast<long long>(h.recordings),
                 safeText(h.node).c_str(), static_cast<long long>(h.labelled),
                 static_cast<long long>(h.noises), safeText(labels).c_str());
    std::cout << jsonLine(json{{"kind", "summary"},
                               {"status", "ok"},
                               {"recording", out},
                               {"labels", labels},
                               {"seconds", rounded(seconds, 1000)},
                               {"recordings", h.recordings},
                               {"labelled", h.labelled},
                               {"noises", h.noises},
                               {"node", h.node}})
              << std::endl;
    return kExitOk;
}

} // namespace fb::cli
