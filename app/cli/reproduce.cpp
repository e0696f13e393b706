#include "app/cli/reproduce.h"

#include "app/cli/cli_common.h"

#include "core/base/safe_text.h"
#include "core/io/loss_log.h"
#include "core/io/manifest.h"
#include "core/io/run_folder.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

namespace fb::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kExitDiffers = kExitFailed;

const char *kUsage = R"(Usage: flowbench-cli reproduce RUN [--out DIR] [--json]

Runs the pipeline of run folder RUN again, with the seed, device, threads and data workers its
manifest.json records, stopping where it stopped, and checks that every step's loss is
bit-identical to its losses.csv. Otherwise names the first step that differs and what differs
between the two manifests (data files, device, driver, libraries, Flowbench's commit, the OS).
  --out DIR   the reproduction's run folder (default RUN/reproduced-<time>)
  --json      the result as one JSON object on stdout
Exit 0 identical, 1 a loss differs or the reproduction failed, 2 bad input.
)";

const auto str = io::jsonString;

int intValue(const json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

bool sameBits(float a, float b)
{
    uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
}

// Learning rates set by hand while the original ran (the window's Set Learning Rate): a
// reproduction cannot repeat them.
std::vector<std::string> handMadeChanges(const fs::path &events)
{
    std::vector<std::string> notes;
    std::ifstream in(events);
    std::string line;
    while (std::getline(in, line)) {
        if (line.find("\"ack\"") == std::string::npos) continue;
        const json e = json::parse(line, nullptr, false);
        if (!e.is_object() || str(e, "type") != "ack" || !e.value("ok", false)) continue;
        if (str(e, "command") == "set_lr")
            notes.push_back("the original's learning rate was set by hand (" + str(e, "message") +
                            "); a reproduction does not repeat that");
    }
    return notes;
}

} // namespace

int reproduce(int argc, char **argv, const RunFunction &run)
{
    std::string runDir, outDir;
    bool asJson = false;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--json") {
            asJson = true;
        } else if (a == "--out") {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "flowbench-cli reproduce: --out needs a folder\n\n%s", kUsage);
                return kExitBadInput;
            }
            outDir = argv[++i];
        } else if (a.starts_with("--") || !runDir.empty()) {
            std::fprintf(stderr, "flowbench-cli reproduce: unexpected argument %s\n\n%s",
                         safeText(a).c_str(), kUsage);
            return kExitBadInput;
        } else {
            runDir = a;
        }
    }
    auto badInput = [&](const Error &e) {
        if (asJson)
            std::cout << jsonLine(json{{"status", "error"}, {"error", errorJson(e)}}) << std::endl;
        std::fprintf(stderr, "%s\n", safeText(e.str()).c_str());
        return kExitBadInput;
    };
    if (runDir.empty()) {
        std::fprintf(stderr, "flowbench-cli reproduce: which run folder?\n\n%s", kUsage);
        return kExitBadInput;
    }
    std::error_code ec;
    if (!fs::is_directory(runDir, ec)) return badInput(fileError(runDir, "is not a folder"));
    const fs::path root(runDir);
    if (!fs::exists(root / io::kManifestFile, ec))
        return badInput(fileError(
            runDir, "has no manifest.json: not a run folder, or a run made by a Flowbench "
                    "from before manifests, which cannot be reproduced exactly"));
    Result<json> manifest = io::readJsonFile((root / io::kManifestFile).string());
    if (!manifest) return badInput(manifest.error());
    if (!manifest->is_object() || str(*manifest, "format") != "flowbench.manifest")
        return badInput(
            fileError((root / io::kManifestFile).string(), "is not a Flowbench manifest"));
    Result<std::vector<float>> original = io::readLossLog((root / io::kLossesFile).string());
    if (!original) return badInput(original.error());
    if (original->empty())
        return badInput(fileError((root / io::kLossesFile).string(),
                                  "holds no step: the run trained nothing to compare"));
    if (!fs::exists(root / io::kPipelineFile, ec))
        return badInput(fileError(runDir, "has no pipeline.json, the pipeline as run"));

    const json device = manifest->value("device", json::object());
    ReproduceRun r;
    r.pipeline = (root / io::kPipelineFile).string();
    // The original's name, so that the two manifests name the same pipeline.
    r.pipelineName = str(manifest->value("pipeline", json::object()), "name");
    if (r.pipelineName.empty()) r.pipelineName = r.pipeline;
    r.device = str(device, "name");
    r.threads = intValue(*manifest, "threads");
    r.dataWorkers = intValue(*manifest, "data_workers");
    r.maxSteps = int64_t(original->size());
    if (outDir.empty()) {
        const std::string stamp = io::timeStamp();
        outDir = (root / ("reproduced-" + stamp)).string();
        for (int i = 2; fs::exists(outDir, ec); ++i)
            outDir = (root / ("reproduced-" + stamp + "-" + std::to_string(i))).string();
    }
    r.outDir = outDir;
    std::fprintf(stderr,
                 "reproducing %s: %zu steps on %s with %d threads and %d data workers, seed %s\n",
                 safeText(runDir).c_str(), original->size(), safeText(r.device).c_str(), r.threads,
                 r.dataWorkers, manifest->value("seed", json()).dump().c_str());

    json summary;
    const int runCode = run(r, summary);

    json result{{"run", runDir},
                {"out_dir", outDir},
                {"original_steps", original->size()},
                {"first_difference", nullptr},
                {"manifest_differences", json::array()},
                {"notes", json::array()}};
    for (const std::string &n : handMadeChanges(root / io::kEventsFile))
        result["notes"].push_back(n);
    if (const int64_t first = intValue(*manifest, "first_step"); first > 0)
        result["notes"].push_back("the original was resumed at step " + std::to_string(first) +
                                  "; its manifest describes the part from there on");

    Result<json> again = io::readJsonFile((fs::path(outDir) / io::kManifestFile).string());
    if (again && again->is_object()) {
        for (const auto &d : io::manifestDifferences(*manifest, *again))
            result["manifest_differences"].push_back(
                {{"key", d.key}, {"original", d.original}, {"reproduced", d.other}});
    }
    Result<std::vector<float>> reproduced =
        io::readLossLog((fs::path(outDir) / io::kLossesFile).string());
    const std::vector<float> none;
    const std::vector<float> &now = reproduced ? *reproduced : none;
    result["reproduced_steps"] = now.size();
    const size_t n = std::min(original->size(), now.size());
    result["steps_compared"] = n;
    for (size_t i = 0; i < n; ++i) {
        if (!sameBits((*original)[i], now[i])) {
            result["first_difference"] = {{"step", i + 1},
                                          {"original", io::lossText((*original)[i])},
                                          {"reproduced", io::lossText(now[i])}};
            break;
        }
    }
    const bool failed = runCode != 0 || summary.value("status", "") != "ok";
    std::string status;
    if (!result["first_difference"].is_null())
        status = "different";
    else if (failed || now.size() < original->size())
        status = "failed";
    else
        status = "identical";
    result["status"] = status;
    if (failed && summary.contains("error")) result["error"] = summary["error"];

    // For people: the verdict, then what differs.
    std::string text;
    char line[512];
    if (status == "identical") {
        std::snprintf(line, sizeof line,
                      "identical: all %zu steps' losses are bit-identical to the original's\n", n);
        text += line;
    } else if (status == "different") {
        const json &d = result["first_difference"];
        std::snprintf(line, sizeof line,
                      "different: step %lld is the first whose loss differs (the original %s, "
                      "now %s); %zu steps compared\n",
                      (long long)d["step"].get<int64_t>(), str(d, "original").c_str(),
                      str(d, "reproduced").c_str(), n);
        text += line;
    } else {
        std::string why = "the reproduction stopped after " + std::to_string(now.size()) + " of " +
                          std::to_string(original->size()) + " steps";
        if (result.contains("error") && result["error"].is_object())
            why += ": " + str(result["error"], "message");
        text +=
            "failed: " + why +
            (n > 0 ? " (the " + std::to_string(n) + " steps it trained match)" : std::string()) +
            "\n";
    }
    const auto &diffs = result["manifest_differences"];
    if (diffs.empty()) {
        text += "the manifests agree (data files, device, threads, software, OS)\n";
    } else {
        text += status == "identical" ? "the manifests differ, without changing the losses:\n"
                                      : "what differs in the manifests (original -> now):\n";
        for (const auto &d : diffs)
            text += "  " + str(d, "key") + ": " + str(d, "original") + " -> " +
                    str(d, "reproduced") + "\n";
    }
    for (const auto &note : result["notes"])
        text += "note: " + note.get<std::string>() + "\n";
    text += "the reproduction's run folder: " + outDir + "\n";
    if (asJson)
        std::cout << jsonLine(result) << std::endl;
    else {
        // Line by line: safeText escapes the newlines themselves.
        size_t from = 0;
        for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1)
            std::cout << safeText(text.substr(from, nl - from)) << "\n";
        std::cout << std::flush;
    }
    return status == "identical" ? kExitOk : kExitDiffers;
}

} // namespace fb::cli
