#include "app/cli/run_file.h"

#include "core/io/run_folder.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <unistd.h>

namespace fb::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

int64_t nowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

RunFileWriter::RunFileWriter(std::string outDir, std::string pipelineName, std::string name,
                             std::vector<std::string> tags)
    : m_outDir(std::move(outDir))
    , m_name(std::move(name))
    , m_tags(std::move(tags))
{
    m_startedAt = nowMs();
    m_run = {{"name", fs::path(m_outDir).filename().string()},
             {"tags", json::array()},
             {"pipeline", fs::path(pipelineName).stem().string()},
             {"pipeline_file", pipelineName},
             {"status", "running"},
             {"started", io::isoTimeNow()},
             {"host", io::hostName()},
             {"pid", int64_t(::getpid())},
             {"resumes", 0}};
    std::error_code ec;
    if (fs::exists(fs::path(m_outDir) / io::kRunFile, ec))
        if (auto before = io::readRunFile(m_outDir); before.ok())
            m_before = std::move(before).value();
}

void RunFileWriter::started(const exec::RunInfo &info)
{
    // A resumed run keeps its name, tags, pipeline, start, best accuracy and earlier wall time;
    // a new run in a folder that held an earlier one (moved aside by the engine) keeps nothing.
    m_started = true;
    if (info.firstStep > 0 && m_before.is_object()) {
        for (const char *key : {"name", "tags", "pipeline", "started", "best_test_accuracy"})
            if (m_before.contains(key)) m_run[key] = m_before[key];
        m_previousWall = io::jsonNumber(m_before, "wall_s");
        m_run["resumes"] = int(io::jsonNumber(m_before, "resumes")) + 1;
    }
    if (!m_name.empty()) m_run["name"] = m_name;
    if (!m_tags.empty()) m_run["tags"] = m_tags;
    m_run["device"] = info.device;
    m_run["threads"] = info.threads;
    m_run["epochs"] = info.epochs;
    m_run["epochs_done"] = info.firstEpoch;
    m_run["steps_per_epoch"] = info.stepsPerEpoch;
    m_run["steps"] = info.firstStep;
    write();
}

void RunFileWriter::epoch(double testAccuracy)
{
    m_run["epochs_done"] = m_run.value("epochs_done", 0) + 1;
    if (testAccuracy >= 0) {
        m_run["test_accuracy"] = testAccuracy;
        if (testAccuracy > m_run.value("best_test_accuracy", -1.0))
            m_run["best_test_accuracy"] = testAccuracy;
    }
    m_run["wall_s"] = m_previousWall + double(nowMs() - m_startedAt) / 1000.0;
    write();
}

void RunFileWriter::finished(const json &summary)
{
    std::error_code ec;
    if (!fs::is_directory(m_outDir, ec)) return; // failed before anything was made
    // A resume (or a new run in an old run's folder) that failed before training started leaves
    // the run that is there as it was.
    if (!m_started && m_before.is_object()) return;
    const bool ok = summary.value("status", "") == "ok";
    m_run["status"] = ok ? (summary.value("stopped", false) ? "stopped" : "ok") : "failed";
    m_run["ended"] = io::isoTimeNow();
    m_run["wall_s"] = m_previousWall + double(nowMs() - m_startedAt) / 1000.0;
    if (summary.contains("steps") && summary["steps"].is_number())
        m_run["steps"] = summary["steps"];
    for (const char *key : {"final_loss", "test_accuracy", "train_samples_per_s", "device"})
        if (summary.contains(key) && !summary[key].is_null()) m_run[key] = summary[key];
    if (!ok && summary.contains("error") && summary["error"].is_object()) {
        m_run["error"] = summary["error"].value("message", "");
        if (summary["error"].contains("node") && summary["error"]["node"].is_string())
            m_run["error_node"] = summary["error"]["node"];
    } else {
        m_run.erase("error");
        m_run.erase("error_node");
    }
    m_run.erase("pid");
    write();
}

void RunFileWriter::write()
{
    if (Status s = io::writeRunFile(m_outDir, m_run); !s)
        std::fprintf(stderr, "warning: %s\n", s.error().str().c_str());
}

} // namespace fb::cli
