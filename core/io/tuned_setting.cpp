#include "core/io/tuned_setting.h"

#include "core/io/files.h"
#include "core/io/run_folder.h"
#include "core/io/sha256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace fb::io {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string fixed(double x, int digits)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, x);
    return text;
}

// Options are given as decimal text and compared after a JSON round trip: equal to a millionth.
bool same(double a, double b)
{
    return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(a));
}

bool sameList(const std::vector<double> &a, const std::vector<double> &b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!same(a[i], b[i])) return false;
    return true;
}

std::vector<std::string> sortedNames(std::vector<std::string> names)
{
    std::ranges::sort(names);
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

} // namespace

std::string tunedSettingPath(const std::string &modelFile)
{
    const fs::path file(modelFile);
    const std::string name = file.filename().string();
    if (name == kModelFile || name == kCheckpointFile)
        return (file.parent_path() / kTunedSettingFile).string();
    return (file.parent_path() / (file.stem().string() + "." + kTunedSettingFile)).string();
}

Result<TunedSetting> tunedSettingFromJson(const json &j, const std::string &path)
{
    if (!j.is_object() || jsonString(j, "format") != "flowbench.listen")
        return fileError(path, "is not a tuned listening setting (no \"format\": "
                               "\"flowbench.listen\")");
    const double version = jsonNumber(j, "version", 0);
    if (!(version <= kTunedSettingVersion)) {
        char said[32];
        std::snprintf(said, sizeof said, "%g", version);
        return fileError(path, std::string("is version ") + said +
                                   "; this Flowbench reads version " +
                                   std::to_string(kTunedSettingVersion) + " and older");
    }
    TunedSetting s;
    s.threshold = jsonNumber(j, "threshold", -1);
    const double average = jsonNumber(j, "average", -1);
    if (!(s.threshold > 0 && s.threshold <= 1))
        return fileError(path, "\"threshold\" must be a probability above 0, at most 1");
    if (!(average >= 1 && average <= 1000 && average == std::floor(average)))
        return fileError(path, "\"average\" must be a whole number of windows from 1 to 1000");
    s.average = int(average);
    const json empty = json::object();
    const json &f = j.contains("for") && j["for"].is_object() ? j["for"] : empty;
    s.modelSha256 = jsonString(f, "model_sha256");
    if (s.modelSha256.empty())
        return fileError(path, "does not say which model it was tuned for (\"for\": "
                               "{\"model_sha256\"})");
    auto strings = [&](const char *key) {
        std::vector<std::string> out;
        if (f.contains(key) && f[key].is_array())
            for (const json &x : f[key])
                if (x.is_string()) out.push_back(x.get<std::string>());
        return out;
    };
    s.withSha256 = strings("with_sha256");
    std::ranges::sort(s.withSha256);
    s.ignore = sortedNames(strings("ignore"));
    if (f.contains("warps") && f["warps"].is_array())
        for (const json &x : f["warps"])
            if (x.is_number()) s.warps.push_back(x.get<double>());
    s.defaultDetector = f.contains("default_detector") && f["default_detector"].is_boolean() &&
                        f["default_detector"].get<bool>();
    s.hopMs = jsonNumber(f, "hop_ms", 0);
    s.centreMs = jsonNumber(f, "centre_ms", 0);
    s.floorDb = jsonNumber(f, "floor_db", 0);
    s.isolateMs = jsonNumber(f, "isolate_ms", 0);
    s.suppressMs = jsonNumber(f, "suppress_ms", 0);
    const json &how = j.contains("found_on") && j["found_on"].is_object() ? j["found_on"] : empty;
    s.recording = jsonString(how, "recording");
    s.labels = jsonString(how, "labels");
    s.tuned = jsonString(how, "when");
    // Counts for people, kept within what an int holds whatever the file says.
    auto count = [&](const char *key) {
        return int(std::clamp(jsonNumber(how, key, 0), 0.0, 1e9));
    };
    s.keywords = count("keywords");
    s.found = count("found");
    s.falseAlarmsPerHour = jsonNumber(how, "false_alarms_per_hour", 0);
    s.budget = jsonNumber(how, "budget", 0);
    return s;
}

json tunedSettingJson(const TunedSetting &s)
{
    std::vector<std::string> with = s.withSha256;
    std::ranges::sort(with);
    return {{"format", "flowbench.listen"},
            {"version", kTunedSettingVersion},
            {"threshold", s.threshold},
            {"average", s.average},
            {"for",
             {{"model_sha256", s.modelSha256},
              {"with_sha256", with},
              {"warps", s.warps},
              {"default_detector", s.defaultDetector},
              {"hop_ms", s.hopMs},
              {"centre_ms", s.centreMs},
              {"floor_db", s.floorDb},
              {"isolate_ms", s.isolateMs},
              {"suppress_ms", s.suppressMs},
              {"ignore", sortedNames(s.ignore)}}},
            {"found_on",
             {{"recording", s.recording},
              {"labels", s.labels},
              {"when", s.tuned.empty() ? isoTimeNow() : s.tuned},
              {"keywords", s.keywords},
              {"found", s.found},
              {"false_alarms_per_hour", s.falseAlarmsPerHour},
              {"budget", s.budget}}}};
}

Result<std::optional<TunedSetting>> readTunedSetting(const std::string &modelFile)
{
    const std::string path = tunedSettingPath(modelFile);
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::optional<TunedSetting>{};
    Result<json> read = readJsonFile(path);
    if (!read) return read.error();
    Result<TunedSetting> s = tunedSettingFromJson(*read, path);
    if (!s) return s.error();
    return std::optional<TunedSetting>(std::move(s).value());
}

Status writeTunedSetting(const std::string &modelFile, const TunedSetting &s)
{
    if (!(s.threshold > 0 && s.threshold <= 1) || s.average < 1 || s.modelSha256.empty())
        return makeError("a tuned setting needs a threshold, windows and its model's digest");
    return writeFileAtomically(
        tunedSettingPath(modelFile),
        tunedSettingJson(s).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

Result<TunedSetting> modelsHeard(const std::vector<std::string> &modelFiles)
{
    TunedSetting h;
    for (size_t i = 0; i < modelFiles.size(); ++i) {
        auto digest = sha256File(modelFiles[i]);
        if (!digest) return digest.error();
        (i == 0 ? h.modelSha256 : h.withSha256.emplace_back()) = digest->sha256;
    }
    std::ranges::sort(h.withSha256);
    return h;
}

std::string hearingDiffers(const TunedSetting &t, const TunedSetting &h)
{
    if (t.modelSha256 != h.modelSha256)
        return "it was tuned for another model file (this one has been trained again or "
               "replaced since)";
    if (t.withSha256 != h.withSha256)
        return t.withSha256.empty() ? "it was tuned for the model alone, not with others (--with)"
                                    : "it was tuned with other models listening too (--with)";
    // 0 warps mean none: {0.08} and {0.08, 0} hear alike, and so do 0.04,0.08 and 0.08,0.04.
    auto heard = [](std::vector<double> w) {
        std::erase_if(w, [](double x) { return !(x > 0); });
        std::ranges::sort(w);
        return w;
    };
    if (!sameList(heard(t.warps), heard(h.warps)))
        return "it was tuned with other hearings of each window (--warp)";
    if (!same(t.hopMs, h.hopMs))
        return "it was tuned with windows another distance apart (--hop-ms)";
    if (!same(t.centreMs, h.centreMs) || !same(t.floorDb, h.floorDb))
        return "it was tuned with another centring gate (--centre-ms, --floor-db)";
    if (!same(t.isolateMs, h.isolateMs))
        return t.isolateMs > 0 ? "it was tuned hearing each window's word otherwise isolated "
                                 "(--isolate-ms)"
                               : "it was tuned hearing each window whole, before words were "
                                 "heard apart (--isolate-ms)";
    if (!same(t.suppressMs, h.suppressMs))
        return "it was tuned with another time between detections (--suppress-ms)";
    if (sortedNames(t.ignore) != sortedNames(h.ignore))
        return "it was tuned ignoring other classes (--ignore)";
    return "";
}

std::string describeTuned(const TunedSetting &t)
{
    std::string text = "threshold " + fixed(t.threshold, 2) + " over " + std::to_string(t.average) +
                       " window" + (t.average == 1 ? "" : "s");
    if (!t.recording.empty()) {
        text += ", tuned on " + fs::path(t.recording).filename().string();
        if (t.keywords > 0)
            text += ": " + std::to_string(t.found) + " of " + std::to_string(t.keywords) +
                    " words found at " + fixed(t.falseAlarmsPerHour, 1) + " false alarms an hour";
    }
    return text;
}

double secondsToTell(double budget)
{
    return budget > 0 ? 3600.0 / budget : 0.0;
}

} // namespace fb::io
