#pragma once

#include "core/base/result.h"
#include "core/exec/runner.h"
#include "core/graph/graph.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fb::cli {

// What every verb of flowbench-cli shares: its exit codes, its JSON output, reading a pipeline
// with --set settings, and running one.

// 0 success, 1 the work failed, 2 bad input or usage (the CLI contract, DESIGN.md).
inline constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;

// One JSON line for stdout. ASCII only (other characters as \u escapes), so an id or file name
// holding a right-to-left override cannot reorder the line in a terminal, and invalid UTF-8
// from a command line is replaced rather than thrown on: JSON readers see the same values.
std::string jsonLine(const nlohmann::json &j);
// The `error` object of a verb's JSON: message, node (null when none), file and line.
nlohmann::json errorJson(const Error &e);
void printProblems(const std::vector<Error> &problems);

// The pipeline at `path` ("-": stdin) with the settings applied and validated; every problem in
// `problems`, the first also as the error.
Result<graph::PipelineDocument> loadAndValidate(const std::string &path,
                                                const std::vector<std::string> &settings,
                                                std::vector<Error> &problems);

// A run with no exception crossing out of it: out of memory (a layer far too large) and the
// like end as an error, like any other failure.
Result<exec::RunSummary> runCatching(const std::function<Result<exec::RunSummary>()> &run);

// The parts of text between each sep ("a,,b" has an empty one in the middle; "" is one empty
// part): sweep's value lists, listen's --warp and --ignore.
std::vector<std::string> split(const std::string &text, char sep);

// --warp's value, numbers separated by commas ("0.04,0.08"), for listen and infer; false when a
// part is not a finite number. Their range is the engine's to judge (exec::warpsProblem).
bool warpList(const std::string &text, std::vector<double> &out);

// A whole number from lo to hi, the whole text of it.
bool wholeNumber(const char *text, long lo, long hi, long &out);

// A recording or stream whose flat-peak share (data::FlatPeaks) counts as clipped: `"clipped"`
// (the share, to 4 places) in its JSON line, and a line on stderr naming `name`, ending in
// `advice`; false, and nothing done, for one that is not. infer's and listen's.
bool noteClipped(nlohmann::json &line, const std::string &name, double share, const char *advice);

} // namespace fb::cli
