#pragma once

#include "app/cli/run_file.h"
#include "core/exec/runner.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace fb::cli {

// Watches a run: progress for people on stderr (a live bar on a terminal, plain lines every few
// seconds otherwise) and, with --events, the JSON-lines event stream (docs/events.md).
class RunReporter : public exec::RunObserver {
public:
    explicit RunReporter(const std::string &eventsPath); // "" = none, "-" = stdout
    ~RunReporter() override;
    bool ok() const { return m_eventsOk; }
    // Also keeps the run in its folder (docs/runs.md): the event stream in OUT/events.jsonl
    // (appended to when the run resumes there), run.json, whatever --events says. Events before
    // training starts wait in memory: the folder may still hold an earlier run, which the
    // engine moves aside first.
    void keepInFolder(const std::string &outDir, const std::string &pipelineName,
                      const std::string &name = {}, const std::vector<std::string> &tags = {});
    bool started() const { return m_started; }

    void runStarted(const exec::RunInfo &info) override;
    void progress(const exec::Progress &p) override;
    void epochFinished(const exec::EpochResult &r) override;
    void checkpointWritten(const exec::CheckpointInfo &c) override;
    void dataflow(const exec::DataFlowReport &r) override;
    void commandHandled(const exec::CommandAck &a) override;
    void message(LogLevel level, const std::string &text) override;
    void nodeMessage(LogLevel level, const std::string &node, const std::string &text) override;
    void error(const Error &e);
    void summary(const nlohmann::json &s);
    void hardware(const metrics::HardwareSample &s) override;

private:
    int m_ranks = 1; // data-parallel ranks of the run (run_start)
    // To the --events stream (unless toStream is false) and to the run folder's log.
    void event(nlohmann::json e, bool toStream = true);
    void clearBar();
    void openFolderLog(bool append);

    std::string m_outDir;
    std::unique_ptr<RunFileWriter> m_runFile;
    std::FILE *m_folderLog = nullptr;  // OUT/events.jsonl
    std::vector<std::string> m_pending; // lines before it opened
    bool m_folderIsStream = false;      // --events names OUT/events.jsonl itself

    std::mutex m_eventMutex; // hardware samples arrive from the monitor's thread
    std::atomic<double> m_cpuPercent{-1};
    std::atomic<bool> m_gpuStatusSent{false};
    std::FILE *m_events = nullptr;
    bool m_ownsEvents = false;
    std::string m_eventsPath;
    bool m_eventsOk = true;
    bool m_started = false;
    bool m_tty = false;
    bool m_barShown = false;
    std::chrono::steady_clock::time_point m_start, m_lastLine, m_lastBar;
};

} // namespace fb::cli
