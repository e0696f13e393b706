// flowbench-cli: runs, validates and lists pipelines without a window (DESIGN.md contract).
// People read progress on stderr; programs read the last stdout line, one JSON object.

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/install_paths.h"
#include "app/cli/progress.h"
#include "app/cli/listen.h"
#include "app/cli/lr_find.h"
#include "app/cli/reproduce.h"
#include "app/cli/sweep.h"
#include "app/cli/spoken_digits.h"
#include "core/backend/backend.h"
#include "core/base/bytes.h"
#include "core/base/safe_text.h"
#include "core/data/sample_cache.h"
#include "core/dist/communicator.h"
#include "core/dist/scaling_plan.h"
#include "core/io/run_folder.h"
#include "core/exec/disk_cache.h"
#include "core/exec/evaluation.h"
#include "core/exec/inference.h"
#include "core/exec/listen_options.h"
#include "core/exec/node_type.h"
#include "core/exec/onnx_export.h"
#include "core/exec/runner.h"
#include "core/exec/summary.h"
#include "core/graph/graph.h"

#include <nlohmann/json.hpp>

#include "flowbench_commit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace fb;
using nlohmann::json;

namespace {

using cli::errorJson;
using cli::jsonLine;
using cli::kExitBadInput;
using cli::kExitOk;
using cli::loadAndValidate;
using cli::printProblems;
using cli::runCatching;
constexpr int kExitRunFailed = cli::kExitFailed;

const char *kUsage =
    R"(Usage: flowbench-cli <command> [options]

commands:
  run PIPELINE.json      train and evaluate a pipeline; an example's name alone (e.g.
                          fashion_mnist_mlp) runs that example from any folder
      --device cpu|cuda[:N]|auto  device (default: the train node's 'device' parameter;
                              auto = the first GPU, else the CPU)
      --threads N             CPU threads (default: every core)
      --data-workers N        threads preparing batches (default: the train node's data_workers)
      --set NODE.PARAM=VALUE  override a parameter (repeatable)
      --out DIR               output folder (default: runs/<name>-<time>)
      --events FILE|-         write the JSON-lines event stream (- = stdout) and take
                              commands as JSON lines on stdin (pause, resume, stop, ...)
      --resume DIR            continue from the newest checkpoint of run folder DIR, or
                              from DIR itself when it is one checkpoint's folder
      --accept-changes        with --resume: also from a checkpoint of a changed pipeline
                              (e.g. another optimizer.lr), with a warning saying what changed
      --profile               report the forward and backward time of every layer
      --name NAME             what the run is called in its run.json and the Runs panel
                              (default: its folder's name)
      --tag TAG               a tag for the run (repeatable)
  reproduce RUN           run a run folder's pipeline again with its seed, device, threads and
                          data workers, and check that every step's loss is bit-identical;
                          otherwise name the first step that differs and what in the two
                          manifests differs (docs/runs.md); exit 0 identical, 1 not
      --out DIR               the new run's folder (default RUN/reproduced-<time>)
      --json                  the result as one JSON object on stdout (the last line)
  sweep PIPELINE --set-range NODE.PARAM=V1,V2,... [...]
                          one ordinary run per combination (a grid; --random N of them), each
                          in a folder of its own named after its values; the results best first
                          and a record, DIR/NAME.sweep.json (docs/runs.md); see sweep --help
      --parallel K            K runs at a time (default 1)
      --out DIR               where the runs go (default runs/)
  lr-find PIPELINE        the learning-rate range test: the loss against a rising learning rate,
                          and a suggested rate (nothing is changed); see lr-find --help
  infer MODEL INPUT...    try a trained model on images or recordings: one JSON line per input
                          on stdout, {"input", "top": [{"class", "index", "probability"}, ...],
                          "ms"} or {"input", "error"}; MODEL is a run folder, its
                          model.safetensors or a checkpoint (the preprocessing it was trained
                          with is applied); a recording cut off flat at its loudest (recorded
                          too loud) also gets "clipped" (the share of its samples that are),
                          and a line on stderr saying so
      --top K                 classes per input (default 3)
      --inputs                also give each input as the model saw it: "input_shape" and
                              "sample" (base64 float32), for recordings "waveform" too
      --saliency              also "saliency": how much each cell of the input moved the
                              prediction (occlusion; base64 float32, the input's h x w)
      --warp W[,W2...]        a recording is also heard 1-W and 1+W times as fast, and its
                              probabilities are the mean of the hearings, as listen's windows
                              (default 0.08: three hearings; 0: once, as the evaluation)
      --balance B             how far the classes' shares of the training data are taken out
                              of the probabilities: 0 as trained (the evaluation's), 1 every
                              class as likely as every other (default 0.5 for recordings, 0
                              for pictures)
      --crop sound|middle     a recording longer than the model's window after trimming is
                              cropped around its sound (default) or its middle (the
                              evaluation's)
      --device cpu|cuda[:N]   (default cpu)
  listen MODEL (FILE | --mic)
                          keyword spotting over a recording or the microphone with a model
                          trained on recordings, loaded once: JSON lines {"kind": "detection",
                          "time", "class", "probability", ...}, then a summary with the
                          per-window latency (docs/audio.md); see listen --help
      --hop-ms MS, --average K, --threshold P, --suppress-ms S, --windows, --seconds S
  held-out-stream MODEL OUT.wav
                          the run's held-out recordings one after another as one recording and
                          its labels (OUT.txt), to tune listen on: listen MODEL OUT.wav --truth
                          OUT.txt --sweep (docs/audio.md); see held-out-stream --help
  export MODEL -o FILE.onnx
                          the trained model as ONNX (opset 17) with its preprocessing
                          (docs/onnx.md); MODEL as for infer. Checked before it is written: the
                          ONNX checker, then OpenCV's dnn module on the run's test set against
                          Flowbench's own results (same top class, logits within 1e-4); the
                          last stdout line is one JSON object with the figures
      --no-check              skip the runtime check (the ONNX checker still runs)
      --check-samples N       check on at most N test samples (default: all)
  validate PIPELINE.json  check a pipeline; exit 2 with one line per problem
  summary PIPELINE.json   the model before it trains, nothing loaded or run: per layer the
                          output shape, parameters, forward and backward FLOPs and activation
                          memory for the batch; totals, the dominant layer, training memory
                          (docs/summary.md); PIPELINE - reads the pipeline from stdin
      --json                  one JSON object on stdout instead of the table
      --batch N               for this batch size (default: the train node's batch_size)
      --set NODE.PARAM=VALUE  override a parameter (repeatable)
      --measure               also time a few training steps on synthetic data on the CPU
                              and on the GPU when there is one: ms per step, GFLOP/s achieved
      --device cpu|cuda[:N]   measure on this device only
      --threads N             CPU threads for --measure (default: every core)
      --steps N               timed steps for --measure (default 10, after 3 untimed)
  plan PIPELINE.json      estimate data-parallel training on N ranks: step time and
                          scaling efficiency from the model's gradient bytes, the step time
                          on one device and a ring all-reduce over the link
                          (docs/distributed.md)
      --ranks N,N,...         rank counts to estimate (default 1,2,8,64,1024)
      --link NAME             nvlink | infiniband | pcie | ethernet (default infiniband)
      --bandwidth GB/s        a link of your own (with --latency)
      --latency US            its latency in microseconds
      --step-ms MS            the one-device step time (default: measured on the CPU)
      --threads N, --set NODE.PARAM=VALUE, --json   as for summary
  nodes [--json|--markdown]
                          list every node type with its ports and parameters;
                          --markdown: the node table of README.md, a row per category
  make-data spoken-digits
                          make the spoken_digits example's recordings on this machine with
                          espeak-ng, flite, festival and sox (a few minutes): progress on
                          stderr ("made N of 19870"), last stdout line {"status", "path",
                          "recordings"}; run
                          again, it makes only what is missing
      --out DIR               where (default ~/.local/share/flowbench/spoken_digits, the
                              folder the example reads)
  cache PIPELINE.json     decode every file source of the pipeline (image_folder,
                          image_list, audio_folder) into its disk cache of decoded samples,
                          so that runs load and stream without decoding (docs/data.md): a
                          line per source on stderr, last stdout line {"status", "dir",
                          "sources": [{"node", "status" (written|reused|none|error),
                          "path", "bytes", "samples", "seconds"}]}
      --set NODE.PARAM=VALUE  override a parameter (repeatable)
  cache --clear           remove every cache file of decoded samples
                          (~/.cache/flowbench/samples, or $FLOWBENCH_CACHE_DIR)
  devices [--json]        list the compute devices (CPU, GPUs with memory and compute
                          capability) and, when there is no GPU, why
  --version               print the version

Ctrl-C stops a run after its current step and writes a checkpoint; a second Ctrl-C kills it.

Exit codes: 0 success (also a stopped run), 1 the run failed (infer: an input could not be
read; export: the export or its check failed; summary --measure: a device could not run it;
reproduce: a loss differs, or the reproduction failed; sweep: a run failed, or the sweep was
stopped; lr-find: the test could not run; plan: the step could not be measured),
2 bad input or usage (infer: the model cannot be opened)
)";

int usageError(const std::string &message)
{
    std::fprintf(stderr, "flowbench-cli: %s\n\n%s", safeText(message).c_str(), kUsage);
    return kExitBadInput;
}

// A failed verb: with `asJson`, {"status": "error", "error": {...}} on stdout for programs; a
// usage mistake (no node or file to blame) with the usage, anything else as one line on stderr.
int failed(int code, const Error &e, bool asJson)
{
    if (asJson)
        std::cout << jsonLine(json{{"status", "error"}, {"error", errorJson(e)}}) << std::endl;
    if (code == kExitBadInput && e.node.empty() && e.file.empty()) return usageError(e.message);
    std::fprintf(stderr, "%s\n", safeText(e.str()).c_str());
    return code;
}

int cmdValidate(int argc, char **argv)
{
    if (argc < 1) return usageError("validate needs a pipeline file");
    std::vector<Error> problems;
    auto doc = loadAndValidate(cli::resolvePipelineArgument(argv[0]), {}, problems);
    const std::string shown = safeText(argv[0]);
    if (!problems.empty()) {
        printProblems(problems);
        std::fprintf(stderr, "%s: %zu problem%s\n", shown.c_str(), problems.size(),
                     problems.size() == 1 ? "" : "s");
        return kExitBadInput;
    }
    std::fprintf(stderr, "%s: valid (%zu nodes, %zu edges)\n", shown.c_str(), doc->nodes().size(),
                 doc->edges().size());
    return kExitOk;
}

// `summary PIPELINE [--json] [--batch N] [--set ...] [--measure [--device D] [--threads N]
// [--steps N]]`. With --json, failures are JSON too ({"status": "error", "error": {...}}), so that
// the window's Model Summary view can show which node is at fault.
int cmdSummary(int argc, char **argv)
{
    bool asJson = false, measure = false;
    std::string pipeline, device;
    std::vector<std::string> settings;
    long batch = 0, threads = 0, steps = 10;
    for (int i = 0; i < argc; ++i)
        if (std::strcmp(argv[i], "--json") == 0) asJson = true;
    auto fail = [&](int code, const Error &e) { return failed(code, e, asJson); };
    const auto number = cli::wholeNumber;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") continue;
        if (a == "--measure") {
            measure = true;
            continue;
        }
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--batch" || a == "--set" || a == "--device" || a == "--threads" ||
            a == "--steps") {
            if (i + 1 >= argc) return fail(kExitBadInput, makeError(a + " needs a value"));
            const char *v = argv[++i];
            if (a == "--set")
                settings.push_back(v);
            else if (a == "--device")
                device = v;
            else if (a == "--batch" && !number(v, 1, 1 << 20, batch))
                return fail(kExitBadInput, makeError("--batch needs a whole number from 1"));
            else if (a == "--threads" && !number(v, 1, 1024, threads))
                return fail(kExitBadInput, makeError("--threads needs a whole number from 1"));
            else if (a == "--steps" && !number(v, 1, 1000, steps))
                return fail(kExitBadInput,
                            makeError("--steps needs a whole number from 1 to 1000"));
            continue;
        }
        if (a.starts_with("--")) return fail(kExitBadInput, makeError("unknown option " + a));
        if (!pipeline.empty()) return fail(kExitBadInput, makeError("unexpected argument " + a));
        pipeline = a;
    }
    if (pipeline.empty()) return fail(kExitBadInput, makeError("summary needs a pipeline file"));
    std::vector<Error> problems;
    auto doc = loadAndValidate(pipeline == "-" ? pipeline : cli::resolvePipelineArgument(pipeline),
                               settings, problems);
    if (!doc.ok()) {
        if (!asJson) printProblems(problems);
        return fail(kExitBadInput, doc.error());
    }
    auto summary = exec::summarizePipeline(doc.value(), batch);
    if (!summary.ok()) return fail(kExitBadInput, summary.error());
    if (measure) {
        const std::vector<std::string> devices =
            device.empty() ? exec::measurableDevices() : std::vector<std::string>{device};
        for (const std::string &d : devices) {
            if (!asJson) std::fprintf(stderr, "measuring %s ...\n", d.c_str());
            summary->measurements.push_back(
                exec::measureTraining(doc.value(), summary.value(), d, int(threads), int(steps)));
        }
    }
    if (asJson) {
        json j = exec::summaryToJson(summary.value());
        j["status"] = "ok";
        std::cout << jsonLine(j) << std::endl;
    } else {
        std::cout << exec::summaryToText(summary.value()) << std::flush;
    }
    for (const exec::Measurement &m : summary->measurements)
        if (!m.error.empty()) return kExitRunFailed;
    return kExitOk;
}

// `plan PIPELINE --ranks LIST --link NAME|--bandwidth GB/s --latency US [--step-ms MS]`: the
// scaling planner (core/dist/scaling_plan.h), for the machines we cannot reach.
int cmdPlan(int argc, char **argv)
{
    bool asJson = false;
    for (int i = 0; i < argc; ++i)
        if (std::strcmp(argv[i], "--json") == 0) asJson = true;
    auto fail = [&](int code, const Error &e) { return failed(code, e, asJson); };
    std::string pipeline, linkName = "infiniband", rankList = "1,2,8,64,1024";
    std::vector<std::string> settings;
    double bandwidth = 0, latency = -1, stepMs = 0;
    long threads = 0;
    // A finite number above 0 (zero too where allowed), the whole text of it.
    auto number = [](const std::string &v, bool zeroToo, double &out) {
        char *end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !std::isfinite(x) || x < 0 || (x == 0 && !zeroToo)) return false;
        out = x;
        return true;
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") continue;
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--ranks" || a == "--link" || a == "--bandwidth" || a == "--latency" ||
            a == "--step-ms" || a == "--set" || a == "--threads") {
            if (i + 1 >= argc) return fail(kExitBadInput, makeError(a + " needs a value"));
            const std::string v = argv[++i];
            double x = 0;
            if (a == "--ranks")
                rankList = v;
            else if (a == "--link")
                linkName = v;
            else if (a == "--set")
                settings.push_back(v);
            else if (a == "--threads") {
                if (!cli::wholeNumber(v.c_str(), 1, 1024, threads))
                    return fail(kExitBadInput,
                                makeError("--threads needs a whole number from 1 to 1024"));
            } else if (!number(v, a == "--latency", x))
                return fail(kExitBadInput,
                            makeError(a +
                                      (a == "--latency" ? " needs a number of 0 or more"
                                                        : " needs a number above 0") +
                                      ", got '" + v + "'"));
            else if (a == "--bandwidth")
                bandwidth = x;
            else if (a == "--latency")
                latency = x;
            else
                stepMs = x;
            continue;
        }
        if (a.starts_with("--")) return fail(kExitBadInput, makeError("unknown option " + a));
        if (!pipeline.empty()) return fail(kExitBadInput, makeError("unexpected argument " + a));
        pipeline = a;
    }
    if (pipeline.empty()) return fail(kExitBadInput, makeError("plan needs a pipeline file"));
    std::vector<int> ranks;
    for (size_t at = 0; at <= rankList.size();) {
        const size_t comma = std::min(rankList.find(',', at), rankList.size());
        const std::string item = rankList.substr(at, comma - at);
        char *end = nullptr;
        const long n = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end || n < 1 || n > 1000000)
            return fail(kExitBadInput, makeError("--ranks needs whole numbers from 1, separated by "
                                                 "commas; got '" +
                                                 rankList + "'"));
        ranks.push_back(int(n));
        at = comma + 1;
    }
    dist::Link link;
    if (bandwidth > 0 || latency >= 0) {
        if (!(bandwidth > 0) || latency < 0)
            return fail(kExitBadInput, makeError("--bandwidth and --latency go together"));
        link = {"custom", bandwidth * 1e9, latency * 1e-6};
    } else {
        auto preset = dist::linkPreset(linkName);
        if (!preset) return fail(kExitBadInput, preset.error());
        link = preset.value();
    }
    std::vector<Error> problems;
    auto doc = loadAndValidate(cli::resolvePipelineArgument(pipeline), settings, problems);
    if (!doc.ok()) {
        if (!asJson) printProblems(problems);
        return fail(kExitBadInput, doc.error());
    }
    auto summary = exec::summarizePipeline(doc.value());
    if (!summary.ok()) return fail(kExitBadInput, summary.error());
    std::string stepSource = "given (--step-ms)";
    double stepSeconds = stepMs / 1000;
    if (stepSeconds <= 0) {
        if (!asJson) std::fprintf(stderr, "measuring one step on the CPU ...\n");
        const exec::Measurement m =
            exec::measureTraining(doc.value(), summary.value(), "cpu", int(threads), 20, false);
        if (!m.error.empty()) return fail(kExitRunFailed, makeError(m.error));
        stepSeconds = m.stepSeconds;
        stepSource = "measured on " + m.name + " (" + std::to_string(m.threads) + " threads)";
    }
    // float32 gradients, one per trainable parameter: what every step sums across the ranks.
    const double gradientBytes = double(summary->parameters) * 4;
    json rows = json::array();
    std::string table;
    char line[256];
    std::snprintf(line, sizeof line, "%8s %12s %14s %12s %14s %9s %11s\n", "ranks", "compute ms",
                  "all-reduce ms", "step ms", "samples/s", "speedup", "efficiency");
    table += line;
    for (int n : ranks) {
        const dist::PlanRow r = dist::planRow(n, gradientBytes, stepSeconds, summary->batch, link);
        rows.push_back({{"ranks", n},
                        {"compute_s", r.computeSeconds},
                        {"all_reduce_s", r.allReduceSeconds},
                        {"step_s", r.stepSeconds},
                        {"samples_per_s", r.samplesPerSecond},
                        {"speedup", r.speedup},
                        {"efficiency", r.efficiency}});
        std::snprintf(line, sizeof line, "%8d %12.3f %14.3f %12.3f %14.0f %8.2fx %10.0f%%\n", n,
                      r.computeSeconds * 1e3, r.allReduceSeconds * 1e3, r.stepSeconds * 1e3,
                      r.samplesPerSecond, r.speedup, r.efficiency * 100);
        table += line;
    }
    if (asJson) {
        std::cout << jsonLine(json{{"status", "ok"},
                                   {"parameters", summary->parameters},
                                   {"gradient_bytes", gradientBytes},
                                   {"global_batch", summary->batch},
                                   {"step_s", stepSeconds},
                                   {"step_source", stepSource},
                                   {"link",
                                    {{"name", link.name},
                                     {"gb_per_s", link.bytesPerSecond / 1e9},
                                     {"latency_us", link.latencySeconds * 1e6}}},
                                   {"rows", rows}})
                  << std::endl;
        return kExitOk;
    }
    std::printf("%lld parameters: %.2f MB of gradients summed per step; global batch %lld\n"
                "one device: %.3f ms per step, %s\n"
                "link: %s, %.1f GB/s, %.1f us; ring all-reduce, global batch split across ranks, "
                "sums after the backward pass (no overlap assumed)\n\n%s",
                (long long)summary->parameters, gradientBytes / 1e6, (long long)summary->batch,
                stepSeconds * 1e3, stepSource.c_str(), link.name.c_str(), link.bytesPerSecond / 1e9,
                link.latencySeconds * 1e6, table.c_str());
    const int most = *std::max_element(ranks.begin(), ranks.end());
    auto job = exec::readTrainingJob(doc.value());
    if (most > summary->batch && job.ok())
        std::printf("\nnote: with more ranks than the %lld samples of a global batch, a rank "
                    "computes at least one sample and the others a padding sample that weighs "
                    "nothing; for many ranks raise the batch (--set %s.batch_size=N)\n",
                    (long long)summary->batch, job->trainNode.c_str());
    return kExitOk;
}

// `cache PIPELINE [--set ...]` and `cache --clear`: the disk cache of decoded samples
// (core/exec/disk_cache.h). People read stderr, programs the last stdout line.
int cmdCache(int argc, char **argv)
{
    std::string pipeline;
    std::vector<std::string> settings;
    bool clear = false;
    auto fail = [](int code, const Error &e) { return failed(code, e, true); };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--clear") {
            clear = true;
        } else if (a == "--set") {
            if (i + 1 >= argc) return fail(kExitBadInput, makeError("--set needs a value"));
            settings.push_back(argv[++i]);
        } else if (a.starts_with("--")) {
            return fail(kExitBadInput, makeError("unknown option " + a));
        } else if (!pipeline.empty()) {
            return fail(kExitBadInput, makeError("unexpected argument " + a));
        } else {
            pipeline = a;
        }
    }
    const std::string dir = data::sampleCacheDir();
    if (clear) {
        if (!pipeline.empty())
            return fail(kExitBadInput, makeError("cache --clear takes no pipeline"));
        auto freed = data::clearSampleCaches(dir);
        if (!freed.ok()) return fail(kExitRunFailed, freed.error());
        std::fprintf(stderr, "removed the caches of decoded samples in %s: %s freed\n",
                     safeText(dir).c_str(), humanBytes(double(freed.value())).c_str());
        std::cout << jsonLine(json{{"status", "ok"}, {"dir", dir}, {"freed_bytes", freed.value()}})
                  << std::endl;
        return kExitOk;
    }
    if (pipeline.empty()) return fail(kExitBadInput, makeError("cache needs a pipeline file"));
    std::vector<Error> problems;
    auto doc = loadAndValidate(cli::resolvePipelineArgument(pipeline), settings, problems);
    if (!doc.ok()) {
        printProblems(problems);
        return fail(kExitBadInput, doc.error());
    }
    auto job = exec::readTrainingJob(doc.value());
    if (!job.ok()) return fail(kExitBadInput, job.error());
    std::fprintf(stderr, "decoding every file source of %s into %s ...\n",
                 safeText(pipeline).c_str(), safeText(dir).c_str());
    const std::vector<exec::SourceCacheReport> reports = exec::cacheSources(job.value());
    json sources = json::array();
    bool ok = true;
    for (const exec::SourceCacheReport &r : reports) {
        ok = ok && r.status != "error";
        if (r.status == "none")
            std::fprintf(stderr, "%s: nothing to cache (%s)\n", r.node.c_str(), r.message.c_str());
        else if (r.status == "error")
            std::fprintf(stderr, "%s: no cache: %s\n", r.node.c_str(), safeText(r.message).c_str());
        else
            std::fprintf(stderr, "%s: %s %lld samples, %s, in %.1f s: %s\n", r.node.c_str(),
                         r.status == "reused" ? "already cached:" : "cached", (long long)r.samples,
                         humanBytes(double(r.bytes)).c_str(), r.seconds, safeText(r.path).c_str());
        sources.push_back({{"node", r.node},
                           {"type", r.type},
                           {"status", r.status},
                           {"path", r.path},
                           {"bytes", r.bytes},
                           {"samples", r.samples},
                           {"skipped", r.skipped},
                           {"seconds", std::round(r.seconds * 1000) / 1000},
                           {"message", r.message}});
    }
    std::cout << jsonLine(json{{"status", ok ? "ok" : "error"}, {"dir", dir}, {"sources", sources}})
              << std::endl;
    return ok ? kExitOk : kExitRunFailed;
}

// `export MODEL -o FILE.onnx [--no-check] [--check-samples N]`: people read the report on
// stderr, programs the last stdout line.
int cmdExport(int argc, char **argv)
{
    std::string model, output;
    exec::ExportOptions options;
    auto fail = [](int code, const Error &e) { return failed(code, e, true); };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--no-check") {
            options.check = false;
        } else if (a == "-o" || a == "--output" || a == "--check-samples") {
            if (i + 1 >= argc) return fail(kExitBadInput, makeError(a + " needs a value"));
            const std::string v = argv[++i];
            if (a == "--check-samples") {
                char *end = nullptr;
                const long long n = std::strtoll(v.c_str(), &end, 10);
                if (v.empty() || *end || n < 1)
                    return fail(kExitBadInput,
                                makeError("--check-samples needs a whole number from 1"));
                options.checkLimit = n;
            } else {
                output = v;
            }
        } else if (a.starts_with("-")) {
            return fail(kExitBadInput, makeError("unknown option " + a));
        } else if (model.empty()) {
            model = a;
        } else {
            return fail(kExitBadInput, makeError("unexpected argument " + a));
        }
    }
    if (model.empty() || output.empty())
        return fail(kExitBadInput,
                    makeError("export needs a model (a run folder or .safetensors) and -o FILE"));
    if (options.check) std::fprintf(stderr, "exporting and checking %s ...\n", safeText(model).c_str());
    auto r = exec::exportOnnx(model, output, options);
    if (!r.ok()) return fail(kExitRunFailed, r.error());
    json in = json::array();
    for (int64_t d : r->input.dims())
        in.push_back(d);
    json out{{"status", "ok"},
             {"output", r->output},
             {"model", r->modelFile},
             {"opset", 17},
             {"onnx", r->onnxVersion},
             {"nodes", r->nodes},
             {"input", in},
             {"classes", r->classNames.size()}};
    std::fprintf(stderr, "wrote %s: %lld ONNX operators, input 'input' [N, %s], outputs 'logits' "
                         "and 'probabilities' [N, %zu]; the ONNX checker accepts it\n",
                 safeText(r->output).c_str(), (long long)r->nodes,
                 r->input.str().substr(1, r->input.str().size() - 2).c_str(),
                 r->classNames.size());
    if (r->checked) {
        out["check"] = {{"runtime", r->runtime},
                        {"data", r->checkedOn},
                        {"samples", r->samples},
                        {"same_top1", r->sameTop1},
                        {"max_logit_difference", r->maxLogitDifference},
                        {"tolerance", exec::ExportReport::kTolerance}};
        std::fprintf(stderr,
                     "checked with %s on %s: the same top class for %lld of %lld, largest logit "
                     "difference %.3g (required below %.0e)\n",
                     r->runtime.c_str(), safeText(r->checkedOn).c_str(), (long long)r->sameTop1,
                     (long long)r->samples, r->maxLogitDifference, exec::ExportReport::kTolerance);
    } else {
        out["check"] = nullptr;
        std::fprintf(stderr, "not checked against a runtime (--no-check)\n");
    }
    std::cout << jsonLine(out) << std::endl;
    return kExitOk;
}

int cmdInfer(int argc, char **argv)
{
    std::string model, device = "cpu";
    int top = 3;
    bool withInputs = false, withSaliency = false;
    // Recordings are heard three ways by default, as listen hears each window: with three seeds
    // of the spoken-digits example, 0.3 to 2.1 points more of the recordings of voices it never
    // heard (their digits 0.3 to 2.3; docs/audio.md, "A recording heard three ways"). --warp 0
    // hears each once, as the evaluation does.
    std::optional<std::vector<double>> warps;
    // For recordings, halfway from the training data's class shares to every class alike by
    // default: a class the data set has many of (the spoken digits' `unknown`, 39% of it) wins
    // less often for that alone (docs/audio.md, "Every class alike, or halfway"). Pictures as
    // trained, as the evaluation reads them: nothing was measured for them.
    std::optional<double> balance;
    // A take longer than the window cropped around its sound, not its middle: its noise within
    // trim_db of the word is not trimmed (docs/audio.md, "Longer takes in noise, and mains
    // hum"). --crop middle crops as the evaluation does.
    bool cropToSound = true;
    std::vector<std::string> inputs;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--top" || a == "--device" || a == "--warp" || a == "--balance" || a == "--crop") {
            if (i + 1 >= argc) return usageError(a + " needs a value");
            const std::string v = argv[++i];
            if (a == "--device") {
                device = v;
                continue;
            }
            if (a == "--crop") {
                if (v != "sound" && v != "middle")
                    return usageError("--crop needs sound or middle, not '" + v + "'");
                cropToSound = v == "sound";
                continue;
            }
            if (a == "--balance") {
                char *end = nullptr;
                balance = std::strtod(v.c_str(), &end);
                if (v.empty() || *end || !(*balance >= 0 && *balance <= 1))
                    return usageError("--balance needs a number from 0 (as trained) to 1 (every "
                                      "class alike), not '" +
                                      v + "'");
                continue;
            }
            if (a == "--warp") {
                warps.emplace();
                if (!cli::warpList(v, *warps))
                    return usageError("--warp needs numbers separated by commas, not '" + v + "'");
                continue;
            }
            char *end = nullptr;
            const long k = std::strtol(v.c_str(), &end, 10);
            if (*end || k < 1 || k > 1000) return usageError("--top needs a whole number from 1");
            top = int(k);
        } else if (a == "--inputs") {
            withInputs = true;
        } else if (a == "--saliency") {
            withSaliency = true;
        } else if (a.starts_with("--")) {
            return usageError("unknown option " + a);
        } else if (model.empty()) {
            model = a;
        } else {
            inputs.push_back(a);
        }
    }
    if (model.empty() || inputs.empty())
        return usageError("infer needs a model (a run folder or .safetensors) and input files");
    if (warps)
        if (const std::string why = exec::warpsProblem(*warps); !why.empty())
            return usageError(why);
    auto predictor = exec::Predictor::open(model, device);
    if (!predictor.ok()) {
        std::fprintf(stderr, "error: %s\n", predictor.error().str().c_str());
        std::cout << jsonLine(json{{"status", "error"}, {"error", errorJson(predictor.error())}})
                  << std::endl;
        return kExitBadInput;
    }
    exec::Predictor &p = *predictor.value();
    if (p.audio() || warps) {
        if (Status set = p.setWarps(warps.value_or(exec::ListenOptions{}.warps)); !set.ok())
            return usageError(set.error().message);
    }
    if (!balance) balance = p.audio() ? 0.5 : 0.0;
    if (Status set = p.setBalance(*balance); !set.ok()) return usageError(set.error().message);
    p.setCropToSound(cropToSound);
    std::string heard;
    if (p.speeds().size() > 1) {
        std::vector<double> speeds = p.speeds();
        std::sort(speeds.begin(), speeds.end());
        heard = "; each recording heard at";
        for (size_t i = 0; i < speeds.size(); ++i) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%s %g",
                          i == 0                   ? ""
                          : i + 1 == speeds.size() ? " and"
                                                   : ",",
                          speeds[i]);
            heard += buf;
        }
        heard += " times its speed; --warp 0 hears it once, as the evaluation";
    }
    if (*balance > 0) {
        char buf[160];
        if (p.knowsClassShares())
            std::snprintf(buf, sizeof buf,
                          "; the training data's class shares taken out %s (--balance %g; 0: as "
                          "trained)",
                          *balance == 1     ? "wholly"
                          : *balance == 0.5 ? "halfway"
                                            : "in part",
                          *balance);
        else
            std::snprintf(buf, sizeof buf,
                          "; saved without its class counts (trained before 2026-12-07): "
                          "--balance changes nothing");
        heard += buf;
    }
    std::fprintf(stderr, "model: %s (%zu classes, input %s%s)\n", safeText(p.modelFile()).c_str(),
                 p.classNames().size(), p.sampleShape().str().c_str(), heard.c_str());
    const auto results = p.predictFiles(inputs, top, withSaliency);
    bool allRead = true;
    for (size_t i = 0; i < results.size(); ++i) {
        json line{{"input", inputs[i]}};
        if (!results[i].ok()) {
            allRead = false;
            line["error"] = results[i].error().str();
            std::fprintf(stderr, "%s: %s\n", safeText(inputs[i]).c_str(),
                         safeText(results[i].error().message).c_str());
        } else {
            const exec::Prediction &pred = results[i].value();
            json classes = json::array();
            std::string text;
            for (const exec::ClassScore &c : pred.top) {
                classes.push_back({{"class", c.name},
                                   {"index", c.index},
                                   {"probability", std::round(double(c.probability) * 1e6) / 1e6}});
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * c.probability);
                text.append(text.empty() ? "" : ", ").append(c.name).append(" ").append(buf);
            }
            line["top"] = classes;
            line["ms"] = std::round(pred.milliseconds * 1000.0) / 1000.0;
            auto floats = [](const std::vector<float> &v) {
                return exec::base64(reinterpret_cast<const uint8_t *>(v.data()),
                                    v.size() * sizeof(float));
            };
            if (withSaliency) line["saliency"] = floats(pred.saliency);
            if (withInputs) {
                line["kind"] = p.audio() ? "audio" : "image";
                line["input_shape"] = p.sampleShape().dims();
                line["sample"] = floats(pred.sample);
                if (p.audio()) {
                    line["waveform"] = floats(pred.waveform);
                    line["sample_rate"] = p.preprocessing().value("sample_rate", 0);
                }
            }
            std::fprintf(stderr, "%s: %s (%.2f ms)\n", safeText(inputs[i]).c_str(),
                         safeText(text).c_str(), pred.milliseconds);
            cli::noteClipped(line, inputs[i], pred.clipped,
                             "a clipped recording is heard less well, so record it again "
                             "quieter");
        }
        std::cout << jsonLine(line) << "\n";
    }
    std::cout.flush();
    return allRead ? kExitOk : kExitRunFailed;
}

int cmdNodes(int argc, char **argv)
{
    const std::string format = argc >= 1 ? argv[0] : "";
    if (argc > 1 || (!format.empty() && format != "--json" && format != "--markdown"))
        return usageError("nodes takes --json or --markdown");
    const auto &registry = exec::nodeTypes();
    if (format == "--json")
        std::cout << graph::nodeTypesJson(registry).dump(2) << "\n";
    else if (format == "--markdown")
        std::cout << graph::nodeTypesMarkdown(registry);
    else
        std::cout << graph::describeNodeTypes(registry);
    return kExitOk;
}

// `make-data spoken-digits [--out DIR] [--voices N]`. --voices (not in the usage: the example
// needs all 547) makes only the first N voices, for tests and quick tries.
int cmdMakeData(int argc, char **argv)
{
    auto fail = [](int code, const std::string &message) {
        std::cout << jsonLine(json{{"status", "error"}, {"error", {{"message", message}}}})
                  << std::endl;
        if (code == kExitBadInput) return usageError(message);
        std::fprintf(stderr, "error: %s\n", safeText(message).c_str());
        return code;
    };
    if (argc >= 1 && (std::strcmp(argv[0], "--help") == 0 || std::strcmp(argv[0], "-h") == 0)) {
        std::printf("%s", kUsage);
        return kExitOk;
    }
    if (argc < 1) return fail(kExitBadInput, "make-data needs a data set: spoken-digits");
    if (std::strcmp(argv[0], "spoken-digits") != 0)
        return fail(kExitBadInput,
                    "unknown data set '" + std::string(argv[0]) + "' (known: spoken-digits)");
    cli::SpokenDigitsRequest request;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a != "--out" && a != "--voices") return fail(kExitBadInput, "unknown option " + a);
        if (i + 1 >= argc) return fail(kExitBadInput, a + " needs a value");
        const std::string v = argv[++i];
        if (a == "--out") {
            request.outDir = v;
            continue;
        }
        char *end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1 || n > cli::kSpokenDigitsVoices)
            return fail(kExitBadInput, "--voices needs a whole number from 1 to " +
                                           std::to_string(cli::kSpokenDigitsVoices));
        request.voices = int(n);
    }
    const cli::SpokenDigitsOutcome outcome = cli::makeSpokenDigits(request);
    if (!outcome.ok) return fail(kExitRunFailed, outcome.message);
    std::cout << jsonLine(json{
                     {"status", "ok"}, {"path", outcome.path}, {"recordings", outcome.recordings}})
              << std::endl;
    return kExitOk;
}

int cmdDevices(int argc, char **argv)
{
    const bool asJson = argc >= 1 && std::strcmp(argv[0], "--json") == 0;
    const DeviceList list = listDevices();
    if (asJson) {
        json devices = json::array();
        for (const ComputeDevice &d : list.devices) {
            json j{{"device", d.device.str()},
                   {"kind", d.device.kind == Device::Kind::Cpu ? "cpu" : "cuda"},
                   {"name", d.name}};
            if (d.device.kind == Device::Kind::Cpu) {
                j["cores"] = d.multiprocessors;
            } else {
                j["memory_bytes"] = d.memoryBytes;
                j["compute_capability"] =
                    std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor);
                j["multiprocessors"] = d.multiprocessors;
            }
            devices.push_back(j);
        }
        json out{{"devices", devices}, {"default", defaultDevice().str()}};
        out["gpu_problem"] = list.gpuProblem.empty() ? json(nullptr) : json(list.gpuProblem);
        // Data-parallel training (docs/distributed.md): the MPI library, or null without one.
        out["mpi"] = dist::mpiBuilt() ? json(dist::mpiLibraryVersion()) : json(nullptr);
        out["nccl"] = dist::ncclBuilt();
        std::cout << out.dump(2) << "\n";
        return kExitOk;
    }
    for (const ComputeDevice &d : list.devices) {
        if (d.device.kind == Device::Kind::Cpu) {
            std::printf("%-8s %s, %d threads\n", d.device.str().c_str(), d.name.c_str(),
                        d.multiprocessors);
        } else {
            std::printf("%-8s %s, %.1f GiB, compute capability %d.%d, %d multiprocessors\n",
                        d.device.str().c_str(), d.name.c_str(),
                        double(d.memoryBytes) / double(int64_t(1) << 30), d.computeMajor,
                        d.computeMinor, d.multiprocessors);
        }
    }
    if (!list.gpuProblem.empty()) std::printf("no GPU: %s\n", list.gpuProblem.c_str());
    std::printf("auto means %s\n", defaultDevice().str().c_str());
    if (dist::mpiBuilt())
        std::printf("MPI: %s (mpirun -np N flowbench-cli run ... trains data-parallel)\n",
                    dist::mpiLibraryVersion().c_str());
    else
        std::printf("MPI: not built (apt install libopenmpi-dev openmpi-bin, then build again)\n");
    std::printf("NCCL: %s\n", dist::ncclBuilt()
                                  ? "built (mpirun -np N ... --device cuda: one GPU per rank)"
                                  : "not built (data-parallel training runs on CPUs)");
    return kExitOk;
}

std::string defaultOutDir(const std::string &pipelinePath)
{
    return "runs/" + std::filesystem::path(pipelinePath).stem().string() + "-" + io::timeStamp();
}

// The run summary of the CLI contract, before anything is known.
json emptySummary(const std::string &device, const std::string &outDir)
{
    return json{{"status", "error"},
                {"error", nullptr},
                {"epochs", 0},
                {"steps", 0},
                {"train_samples_per_s", 0},
                {"test_accuracy", nullptr},
                {"final_loss", nullptr},
                {"wall_s", 0},
                {"device", device.empty() ? "cpu" : device},
                {"out_dir", outDir}};
}

// A usage error of `run`: the usage on stderr and, as the contract promises, the summary line.
int runUsageError(const std::string &message)
{
    json summary = emptySummary("", "");
    summary["error"] = {{"node", nullptr}, {"message", message}};
    std::cout << jsonLine(summary) << std::endl;
    return usageError(message);
}

// What run.json calls the run (`run --name/--tag`).
struct RunLabels {
    std::string name;
    std::vector<std::string> tags;
};

// One run of a pipeline file, with everything the CLI contract promises: progress on stderr,
// the event stream, the run folder (events.jsonl, run.json, manifest.json, losses.csv), and the
// summary object: printed as the last stdout line, or handed back in `summaryOut` instead (a
// verb that runs a pipeline and prints its own result).
int executeRun(const std::string &pipeline, const std::vector<std::string> &settings,
               exec::RunOptions options, const std::string &events, json *summaryOut = nullptr,
               const RunLabels &labels = {})
{
    cli::RunReporter reporter(events);
    if (!reporter.ok())
        return runUsageError("cannot open the event file '" + events + "' for writing");
    if (!options.outDir.empty())
        reporter.keepInFolder(options.outDir,
                              options.pipelineName.empty() ? pipeline : options.pipelineName,
                              labels.name, labels.tags);
    options.software.emplace_back("flowbench", FLOWBENCH_VERSION);
    options.software.emplace_back("flowbench_commit", FLOWBENCH_COMMIT);
    // flowbench-cli itself uses no Qt: this is the Qt its window was built with.
    options.software.emplace_back("qt", FLOWBENCH_QT_VERSION);

    json summary = emptySummary(options.device, options.outDir);
    const auto start = std::chrono::steady_clock::now();
    auto finish = [&](int code) {
        summary["wall_s"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        reporter.summary(summary);
        if (summaryOut)
            *summaryOut = summary;
        else
            std::cout << jsonLine(summary) << std::endl;
        return code;
    };

    std::vector<Error> problems;
    auto doc = loadAndValidate(pipeline, settings, problems);
    if (!problems.empty()) {
        printProblems(problems);
        for (const auto &p : problems)
            reporter.error(p);
        summary["error"] = errorJson(problems.front());
        if (problems.size() > 1)
            summary["error"]["message"] = problems.front().message + " (and " +
                                          std::to_string(problems.size() - 1) + " more)";
        return finish(kExitBadInput);
    }

    exec::RunControl control;
    options.control = &control;
    int64_t stepsDone = 0;
    options.stepsDone = &stepsDone;
    const Result<exec::RunSummary> result = runCatching([&] {
        cli::CommandPump commands(control, !events.empty());
        return exec::runPipeline(doc.value(), options, reporter);
    });
    if (!result.ok()) {
        reporter.error(result.error());
        std::fprintf(stderr, "error: %s\n", result.error().str().c_str());
        summary["error"] = errorJson(result.error());
        summary["steps"] = stepsDone; // trained before it failed (a resumed run: in all)
        // Problems found before training started are bad input; later ones are a failed run.
        return finish(reporter.started() ? kExitRunFailed : kExitBadInput);
    }
    const exec::RunSummary &s = result.value();
    summary["status"] = "ok";
    summary["epochs"] = s.epochs;
    summary["steps"] = s.steps;
    summary["train_samples_per_s"] = std::round(s.trainSamplesPerSecond * 10) / 10;
    summary["test_accuracy"] = s.testAccuracy >= 0 ? json(s.testAccuracy) : json(nullptr);
    summary["final_loss"] = s.steps > 0 ? json(s.finalLoss) : json(nullptr);
    summary["device"] = s.device;
    summary["out_dir"] = s.outDir;
    summary["stopped"] = s.stopped;
    summary["data_wait_share"] = std::round(s.dataWaitShare * 1e4) / 1e4;
    summary["bottleneck"] = s.bottleneck;
    // A data-parallel run's, or "decoding" / "waiting on disk" where the data source held the
    // trainer up.
    if (!s.bottleneckCause.empty()) summary["bottleneck_cause"] = s.bottleneckCause;
    if (s.slowestRank >= 0) { // a data-parallel run
        summary["comm_share"] = std::round(s.commShare * 1e4) / 1e4;
        summary["rank_wait_share"] = std::round(s.rankWaitShare * 1e4) / 1e4;
        summary["allreduce_share"] = std::round(s.allReduceShare * 1e4) / 1e4;
        summary["slowest_rank"] = s.slowestRank;
    }
    return finish(kExitOk);
}

// A rank other than 0 of a data-parallel job: it trains its share and writes nothing (rank 0
// writes the one run folder, the events and the summary); a failure goes to stderr with the rank
// and host, and in its exit code, on which mpirun ends the whole job.
int runOtherRank(const std::string &pipeline, const std::vector<std::string> &settings,
                 exec::RunOptions options)
{
    const std::string who =
        "rank " + std::to_string(options.comm->rank()) + " (" + options.comm->host() + ")";
    std::vector<Error> problems;
    auto doc = loadAndValidate(pipeline, settings, problems);
    if (!problems.empty()) {
        std::fprintf(stderr, "%s: error: %s\n", who.c_str(), problems.front().str().c_str());
        return kExitBadInput;
    }
    options.outDir.clear();
    options.pipelineName = pipeline;
    exec::RunObserver quiet;
    const Result<exec::RunSummary> result =
        runCatching([&] { return exec::runPipeline(doc.value(), options, quiet); });
    if (!result.ok()) {
        std::fprintf(stderr, "%s: error: %s\n", who.c_str(), result.error().str().c_str());
        return kExitRunFailed;
    }
    return kExitOk;
}

int cmdRun(int argc, char **argv)
{
    std::string pipeline, events;
    std::vector<std::string> settings;
    exec::RunOptions options;
    RunLabels labels;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        const char *v = nullptr;
        if (a == "--device" || a == "--threads" || a == "--set" || a == "--out" ||
            a == "--events" || a == "--resume" || a == "--data-workers" || a == "--name" ||
            a == "--tag") {
            if (i + 1 >= argc) return runUsageError(a + " needs a value");
            v = argv[++i];
        }
        if (a == "--device")
            options.device = v;
        else if (a == "--threads" || a == "--data-workers") {
            const long max = a == "--threads" ? 1024 : 256;
            long n = 0;
            if (!cli::wholeNumber(v, 1, max, n))
                return runUsageError(a + " needs a whole number from 1 to " + std::to_string(max) +
                                     ", got '" + std::string(v) + "'");
            (a == "--threads" ? options.threads : options.dataWorkers) = int(n);
        } else if (a == "--set")
            settings.push_back(v);
        else if (a == "--out")
            options.outDir = v;
        else if (a == "--events")
            events = v;
        else if (a == "--name")
            labels.name = v;
        else if (a == "--tag")
            labels.tags.push_back(v);
        else if (a == "--resume")
            options.resumeDir = v;
        else if (a == "--profile")
            options.profile = true;
        else if (a == "--accept-changes")
            options.acceptChanges = true;
        else if (a.starts_with("--"))
            return runUsageError("unknown option " + a);
        else if (pipeline.empty())
            pipeline = a;
        else
            return runUsageError("unexpected argument " + a);
    }
    if (pipeline.empty()) return runUsageError("run needs a pipeline file");
    pipeline = cli::resolvePipelineArgument(pipeline);
    // Under mpirun or srun: one rank of a data-parallel job (docs/distributed.md).
    auto comm = dist::world();
    if (!comm) return runUsageError(comm.error().message);
    options.comm = comm.value();
    if (options.comm && options.comm->rank() != 0) return runOtherRank(pipeline, settings, options);
    if (options.outDir.empty()) options.outDir = defaultOutDir(pipeline);
    options.pipelineName = pipeline;
    return executeRun(pipeline, settings, options, events, nullptr, labels);
}

int cmdReproduce(int argc, char **argv)
{
    return cli::reproduce(argc, argv, [](const cli::ReproduceRun &r, json &summary) {
        exec::RunOptions options;
        options.device = r.device;
        options.threads = r.threads;
        options.dataWorkers = r.dataWorkers;
        options.outDir = r.outDir;
        options.maxSteps = r.maxSteps;
        options.pipelineName = r.pipelineName;
        return executeRun(r.pipeline, {}, options, "", &summary);
    });
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) return usageError("missing command");
    const std::string cmd = argv[1];
    try {
        if (cmd == "run") return cmdRun(argc - 2, argv + 2);
        if (cmd == "reproduce") return cmdReproduce(argc - 2, argv + 2);
        if (cmd == "sweep") return cli::sweep(argc - 2, argv + 2);
        if (cmd == "lr-find") return cli::lrFind(argc - 2, argv + 2);
        if (cmd == "validate") return cmdValidate(argc - 2, argv + 2);
        if (cmd == "summary") return cmdSummary(argc - 2, argv + 2);
        if (cmd == "plan") return cmdPlan(argc - 2, argv + 2);
        if (cmd == "export") return cmdExport(argc - 2, argv + 2);
        if (cmd == "infer") return cmdInfer(argc - 2, argv + 2);
        if (cmd == "listen") return cli::listen(argc - 2, argv + 2);
        if (cmd == "held-out-stream") return cli::heldOutStream(argc - 2, argv + 2);
        if (cmd == "nodes") return cmdNodes(argc - 2, argv + 2);
        if (cmd == "devices") return cmdDevices(argc - 2, argv + 2);
        if (cmd == "make-data") return cmdMakeData(argc - 2, argv + 2);
        if (cmd == "cache") return cmdCache(argc - 2, argv + 2);
        if (cmd == "--version" || cmd == "version") {
            std::printf("flowbench-cli %s\n", FLOWBENCH_VERSION);
            return kExitOk;
        }
        if (cmd == "--help" || cmd == "-h" || cmd == "help") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr, "error: out of memory\n");
        std::cout << jsonLine(json{{"status", "error"}, {"error", {{"message", "out of memory"}}}})
                  << std::endl;
        return kExitRunFailed;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        std::cout << jsonLine(json{{"status", "error"}, {"error", {{"message", e.what()}}}})
                  << std::endl;
        return kExitRunFailed;
    }
    return usageError("unknown command '" + cmd + "'");
}
