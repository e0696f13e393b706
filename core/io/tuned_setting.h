#pragma once

#include "core/base/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fb::io {

// A listening setting tuned for one model on a labelled recording of its user's own (listen
// --truth --sweep --keep, or Try the Model's Tune… and its Use button): the threshold and the
// windows averaged that found the most words within a budget of false alarms an hour. It is kept
// beside the model file, as listen.json, so that it goes with the run folder and the model
// listens at it from the command line and in the window without being told (docs/audio.md, "A
// tuned setting stays with its model"). A setting is only as good as the hearing it was found
// for: it applies only where the model file, the models listening with it and the rest of the
// detector are those it was tuned with (hearingDiffers). Here, not in the engine, because the
// window reads and writes it too, and the window does not link the engine.
inline constexpr const char *kTunedSettingFile = "listen.json";
// 2 since 2026-12-06, when "isolate_ms" came: a Flowbench before it would read a setting tuned on
// isolated windows and apply it to whole ones. Version 1 files read as isolate_ms 0.
inline constexpr int kTunedSettingVersion = 2;

struct TunedSetting {
    double threshold = 0;
    int average = 0;
    // The hearing it was tuned for (exec::describeHearing makes one for a listener).
    std::string modelSha256;             // the model file's
    std::vector<std::string> withSha256; // the models listening with it (--with), sorted
    std::vector<double> warps;           // each window also heard 1 -+ w times as fast
    // The detector's other options (--hop-ms, --centre-ms, --floor-db, --isolate-ms,
    // --suppress-ms, --ignore)
    // and whether they were listen's defaults (for people: the options themselves are what is
    // compared, so that a setting tuned under older defaults is not taken under newer ones).
    // exec::describeDetector fills them in, for the engine and the window alike.
    bool defaultDetector = true;
    double hopMs = 0, centreMs = 0, floorDb = 0, suppressMs = 0;
    double isolateMs = 0;            // 0 in a file written before --isolate-ms: windows heard whole
    std::vector<std::string> ignore; // plain class names, sorted
    // How it was found, for people.
    std::string recording, labels; // the files, as given
    std::string tuned;             // when (ISO 8601)
    int keywords = 0, found = 0;
    double falseAlarmsPerHour = 0, budget = 0;
};

// Where the setting of `modelFile` is kept: listen.json beside a run's model.safetensors (or a
// checkpoint folder's checkpoint.safetensors, in that folder); NAME.listen.json beside any other
// NAME.safetensors, so that two model files in one folder keep a setting each.
std::string tunedSettingPath(const std::string &modelFile);

// The setting kept beside `modelFile`: nullopt where there is none; an error naming the file
// where it cannot be read, is not a tuned setting, or is of a newer version.
Result<std::optional<TunedSetting>> readTunedSetting(const std::string &modelFile);

// Writes it beside `modelFile`, atomically (a reader sees the previous setting or this one).
Status writeTunedSetting(const std::string &modelFile, const TunedSetting &setting);

// listen.json's content, and back (`where` names the file or stream in errors): listen --sweep
// puts it in its summary ("best"."setting"), which the window writes when its user takes it.
nlohmann::json tunedSettingJson(const TunedSetting &setting);
Result<TunedSetting> tunedSettingFromJson(const nlohmann::json &j, const std::string &where);

// A hearing's models: the digests of `modelFiles` (the first the model's, the rest those
// listening with it, sorted), the rest of the setting empty; the error names a file that
// cannot be read. The detector's options are added by exec::describeDetector (the engine's
// exec::describeHearing, and the window, from the header alone).
Result<TunedSetting> modelsHeard(const std::vector<std::string> &modelFiles);

// "" where `tuned` was found for `hearing`; otherwise what differs, for people ("it was tuned
// for another model file", "... with other models listening too", "... with other hearings
// (--warp)", ...).
std::string hearingDiffers(const TunedSetting &tuned, const TunedSetting &hearing);

// How long a recording must be away from its keywords, in seconds, for one false alarm there
// to be at most `budget` an hour (1,800 for 2): shorter, a sweep cannot tell `budget` false
// alarms an hour from none, and keeps no setting. 0 for a budget of 0, which no recording can
// tell.
double secondsToTell(double budget);

// One line for people: "threshold 0.80 over 4 windows, tuned on talk.wav: 184 of 205 words found
// at 1.8 false alarms an hour".
std::string describeTuned(const TunedSetting &tuned);

} // namespace fb::io
