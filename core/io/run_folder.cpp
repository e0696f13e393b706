#include "core/io/run_folder.h"

#include "core/base/json_nesting.h"
#include "core/io/files.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include <signal.h>
#include <unistd.h>

namespace fb::io {

namespace fs = std::filesystem;
using nlohmann::json;

std::string jsonString(const json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double jsonNumber(const json &j, const char *key, double fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

namespace {

const auto str = jsonString;
const auto num = jsonNumber;

// Whether process `pid` on this machine is still a Flowbench engine: a pid may have been taken
// by another program since.
bool engineAlive(int64_t pid)
{
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0) return false;
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    if (!cmdline) return true; // no /proc: trust the pid
    std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    return text.find("flowbench-cli") != std::string::npos;
}

std::string fileTimeText(const fs::path &path)
{
    std::error_code ec;
    const auto t = fs::last_write_time(path, ec);
    if (ec) return {};
    const auto sys = std::chrono::file_clock::to_sys(t);
    const std::time_t tt = std::chrono::system_clock::to_time_t(sys);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&tt));
    return buf;
}

bool hasWholeCheckpoint(const fs::path &dir)
{
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir / kCheckpointsDir, ec))
        if (e.path().filename().string().starts_with("step-") &&
            fs::exists(e.path() / kCheckpointFile, ec))
            return true;
    return false;
}

// A folder from before run.json: what its event log says (run_start, epochs, the summary).
void readFromEvents(const fs::path &events, RunEntry &r)
{
    std::ifstream in(events);
    std::string line;
    bool started = false, ended = false;
    while (std::getline(in, line)) {
        if (line.empty() || !checkJsonNesting(line, "").ok()) continue;
        const json e = json::parse(line, nullptr, false);
        if (!e.is_object()) continue;
        const std::string type = str(e, "type");
        if (type == "run_start") {
            started = true;
            r.device = str(e, "device");
            r.epochsPlanned = int64_t(num(e, "epochs", 0));
            if (r.pipeline.empty()) r.pipeline = fs::path(str(e, "pipeline")).stem().string();
        } else if (type == "epoch") {
            r.epochs = int64_t(num(e, "epoch", double(r.epochs)));
            if (auto ev = e.find("evaluations"); ev != e.end() && ev->is_array() && !ev->empty()) {
                const double acc = num(ev->front(), "accuracy", -1);
                if (acc >= 0) {
                    r.testAccuracy = acc;
                    r.bestTestAccuracy = std::max(r.bestTestAccuracy, acc);
                }
            }
        } else if (type == "summary" || (type.empty() && e.contains("status"))) {
            ended = true;
            const std::string status = str(e, "status");
            const bool stopped = e.value("stopped", false);
            r.status = status == "ok" ? (stopped ? "stopped" : "ok") : "failed";
            r.seconds = num(e, "wall_s", r.seconds);
            r.steps = int64_t(num(e, "steps", 0));
            r.finalLoss = num(e, "final_loss", -1);
            if (auto err = e.find("error"); err != e.end() && err->is_object())
                r.error = str(*err, "message");
            if (r.device.empty()) r.device = str(e, "device");
        }
    }
    // Without a summary the run never ended: killed (no older folder is still running now).
    if (started && !ended) r.status = "killed";
}

} // namespace

std::string hostName()
{
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return {};
    return buf;
}

std::string isoTimeNow()
{
    const std::time_t now = std::time(nullptr);
    char buf[40];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
    return buf;
}

std::string timeStamp()
{
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&now));
    return buf;
}

Result<json> readJsonFile(const std::string &path)
{
    Result<std::string> text = readWholeFile(path);
    if (!text) return std::move(text.error());
    FB_TRY(checkJsonNesting(*text, path));
    json j = json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fileError(path, "is not valid JSON");
    return j;
}

bool isRunFolder(const std::string &dir)
{
    std::error_code ec;
    const fs::path d(dir);
    if (!fs::is_directory(d, ec)) return false;
    for (const char *name : {kRunFile, kEventsFile, kPipelineFile, kCheckpointsDir, kManifestFile})
        if (fs::exists(d / name, ec)) return true;
    return false;
}

Result<json> readRunFile(const std::string &dir)
{
    const std::string path = (fs::path(dir) / kRunFile).string();
    Result<json> j = readJsonFile(path);
    if (!j) return j;
    if (!j->is_object()) return fileError(path, "is not a JSON object");
    if (str(*j, "format") != "flowbench.run")
        return fileError(path, "is not a Flowbench run file (no \"format\": \"flowbench.run\")");
    const double version = num(*j, "version", 0);
    if (version > kRunFileVersion)
        return fileError(path, "is version " + std::to_string(int(version)) +
                                   "; this Flowbench reads version " +
                                   std::to_string(kRunFileVersion) + " and older");
    return j;
}

Status writeRunFile(const std::string &dir, const json &run)
{
    json j = run;
    j["format"] = "flowbench.run";
    j["version"] = kRunFileVersion;
    return writeFileAtomically(fs::path(dir) / kRunFile,
                               j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

RunEntry readRun(const std::string &dir)
{
    RunEntry r;
    const fs::path d(dir);
    r.dir = dir;
    r.id = d.filename().string();
    if (r.id.empty()) r.id = d.parent_path().filename().string();
    r.name = r.id;
    std::error_code ec;
    r.hasModel = fs::exists(d / kModelFile, ec);
    r.hasCheckpoint = hasWholeCheckpoint(d);
    r.hasEvents = fs::exists(d / kEventsFile, ec);
    r.status = "unknown";
    try {
        if (!fs::exists(d / kRunFile, ec)) {
            // An older Flowbench's folder: what its files say.
            if (r.hasEvents) readFromEvents(d / kEventsFile, r);
            if (r.started.empty())
                r.started = fileTimeText(fs::exists(d / kPipelineFile, ec) ? d / kPipelineFile : d);
            return r;
        }
        Result<json> run = readRunFile(dir);
        if (!run) {
            r.problem = run.error().str();
            r.started = fileTimeText(d);
            return r;
        }
        const json &j = *run;
        r.version = int(num(j, "version", 0));
        if (std::string name = str(j, "name"); !name.empty()) r.name = name;
        if (auto tags = j.find("tags"); tags != j.end() && tags->is_array())
            for (const auto &t : *tags)
                if (t.is_string()) r.tags.push_back(t.get<std::string>());
        r.pipeline = str(j, "pipeline");
        r.device = str(j, "device");
        r.status = str(j, "status");
        if (r.status.empty()) r.status = "unknown";
        r.started = str(j, "started");
        r.error = str(j, "error");
        r.seconds = num(j, "wall_s", -1);
        r.testAccuracy = num(j, "test_accuracy", -1);
        r.bestTestAccuracy = num(j, "best_test_accuracy", -1);
        r.finalLoss = num(j, "final_loss", -1);
        r.steps = int64_t(num(j, "steps", 0));
        r.epochs = int64_t(num(j, "epochs_done", 0));
        r.epochsPlanned = int64_t(num(j, "epochs", 0));
        if (r.status == "running" && str(j, "host") == hostName() &&
            !engineAlive(int64_t(num(j, "pid", 0))))
            r.status = "killed";
        if (r.started.empty()) r.started = fileTimeText(d);
    } catch (const std::exception &e) {
        // A value of the wrong kind somewhere nlohmann does not forgive: listed, not fatal.
        r.problem = (d / kRunFile).string() + ": " + e.what();
    }
    return r;
}

std::vector<RunEntry> listRuns(const std::string &root)
{
    std::vector<RunEntry> runs;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(root, ec)) {
        std::error_code ec2;
        if (!e.is_directory(ec2)) continue;
        if (!isRunFolder(e.path().string())) continue;
        runs.push_back(readRun(e.path().string()));
    }
    // ISO times with the same offset sort as text; newest first, ties by folder name.
    std::sort(runs.begin(), runs.end(), [](const RunEntry &a, const RunEntry &b) {
        return a.started != b.started ? a.started > b.started : a.id > b.id;
    });
    return runs;
}

Status setRunNameAndTags(const std::string &dir, const std::string &name,
                         const std::vector<std::string> &tags)
{
    json j;
    std::error_code ec;
    if (fs::exists(fs::path(dir) / kRunFile, ec)) {
        Result<json> run = readRunFile(dir);
        if (!run) return std::move(run.error());
        j = std::move(run).value();
    } else {
        // An older folder: run.json starts with what its files say.
        const RunEntry r = readRun(dir);
        j = {{"status", r.status},
             {"pipeline", r.pipeline},
             {"device", r.device},
             {"started", r.started}};
    }
    auto trim = [](std::string s) {
        const auto b = s.find_first_not_of(" \t\r\n");
        const auto e = s.find_last_not_of(" \t\r\n");
        return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string cleanName = trim(name);
    if (cleanName.empty()) return fileError(dir, "a run's name cannot be empty");
    j["name"] = cleanName;
    json list = json::array();
    std::set<std::string> seen;
    for (const std::string &t : tags) {
        const std::string clean = trim(t);
        if (!clean.empty() && seen.insert(clean).second) list.push_back(clean);
    }
    j["tags"] = list;
    return writeRunFile(dir, j);
}

Result<std::string> modelFileOf(const std::string &path)
{
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return path;
    if (!fs::is_directory(path, ec)) return fileError(path, "no such file or folder");
    for (const char *name : {kModelFile, kCheckpointFile})
        if (fs::is_regular_file(fs::path(path) / name, ec)) return (fs::path(path) / name).string();
    // Checkpoint folders are step-NNNNNNNN: the greatest name is the newest.
    std::string newest;
    for (const auto &e : fs::directory_iterator(fs::path(path) / kCheckpointsDir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with("step-") && fs::exists(e.path() / kCheckpointFile))
            newest = std::max(newest, name);
    }
    if (!newest.empty())
        return (fs::path(path) / kCheckpointsDir / newest / kCheckpointFile).string();
    return fileError(path, "holds no model.safetensors and no checkpoint");
}

} // namespace fb::io
