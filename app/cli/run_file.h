#pragma once

#include "core/exec/runner.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fb::cli {

// The run folder's run.json (docs/runs.md): who the run is to people (its name and tags, kept
// from an earlier part of the run when it resumes) and how it is going. Written atomically when
// training starts, after every epoch and when the run ends, so that the Runs panel can list a
// run that is still going, and tell a killed one (status still "running", process gone).
class RunFileWriter {
public:
    // name and tags: what the run is called and tagged (`run --name/--tag`); an empty name is
    // the folder's name. A resumed run keeps its own unless new ones are given.
    RunFileWriter(std::string outDir, std::string pipelineName, std::string name = {},
                  std::vector<std::string> tags = {});

    void started(const exec::RunInfo &info);
    void epoch(double testAccuracy); // -1: no evaluation
    // The CLI's summary object; also for a run that failed before training started, when its
    // folder exists (the window makes it first).
    void finished(const nlohmann::json &summary);

private:
    void write();

    std::string m_outDir;
    nlohmann::json m_run;
    nlohmann::json m_before;   // the folder's run.json before this part, if any
    std::string m_name;        // given by --name ("": none)
    std::vector<std::string> m_tags;
    double m_previousWall = 0; // the wall time of the parts before a resume
    int64_t m_startedAt = 0;   // steady-clock milliseconds at this part's start
    bool m_started = false;    // training started (started() was called)
};

} // namespace fb::cli
