#include "app/cli/cli_common.h"

#include "core/base/safe_text.h"
#include "core/data/audio_files.h"
#include "core/exec/node_type.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/validate.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>

namespace fb::cli {

using nlohmann::json;

std::string jsonLine(const json &j)
{
    return j.dump(-1, ' ', true, json::error_handler_t::replace);
}

json errorJson(const Error &e)
{
    json j{{"message", e.message}};
    j["node"] = e.node.empty() ? json(nullptr) : json(e.node);
    if (!e.file.empty()) j["file"] = e.file;
    if (e.line > 0) j["line"] = e.line;
    return j;
}

void printProblems(const std::vector<Error> &problems)
{
    for (const auto &p : problems)
        std::fprintf(stderr, "%s\n", p.str().c_str());
}

Result<graph::PipelineDocument> loadAndValidate(const std::string &path,
                                                const std::vector<std::string> &settings,
                                                std::vector<Error> &problems)
{
    // "-": the pipeline comes on stdin (the window's unsaved document).
    auto doc = path == "-" ? graph::parsePipeline(std::string(std::istreambuf_iterator<char>(std::cin),
                                                              std::istreambuf_iterator<char>()),
                                                  "<stdin>")
                           : graph::loadPipeline(path);
    if (!doc.ok()) {
        problems.push_back(doc.error());
        return doc.error();
    }
    for (const auto &s : settings) {
        Status st = graph::applySetting(doc.value(), s, exec::nodeTypes());
        if (!st.ok()) problems.push_back(st.error());
    }
    if (!problems.empty()) return problems.front();
    problems = graph::validate(doc.value(), exec::nodeTypes());
    if (!problems.empty()) return problems.front();
    return doc;
}

Result<exec::RunSummary> runCatching(const std::function<Result<exec::RunSummary>()> &run)
{
    try {
        return run();
    } catch (const std::bad_alloc &) {
        return makeError("out of memory: the model's weights or activations do not fit; "
                         "lower the batch size or the layer sizes");
    } catch (const std::exception &e) {
        return makeError(std::string("internal error: ") + e.what());
    }
}

std::vector<std::string> split(const std::string &text, char sep)
{
    std::vector<std::string> out;
    size_t from = 0;
    while (true) {
        const size_t at = text.find(sep, from);
        out.push_back(text.substr(from, at == std::string::npos ? std::string::npos : at - from));
        if (at == std::string::npos) break;
        from = at + 1;
    }
    return out;
}

bool warpList(const std::string &text, std::vector<double> &out)
{
    out.clear();
    for (const std::string &part : split(text, ',')) {
        char *end = nullptr;
        const double w = std::strtod(part.c_str(), &end);
        if (part.empty() || *end != '\0' || !std::isfinite(w)) return false;
        out.push_back(w);
    }
    return true;
}

bool wholeNumber(const char *text, long lo, long hi, long &out)
{
    char *end = nullptr;
    const long n = std::strtol(text, &end, 10);
    if (!*text || *end || n < lo || n > hi) return false;
    out = n;
    return true;
}

bool noteClipped(nlohmann::json &line, const std::string &name, double share, const char *advice)
{
    if (share < data::FlatPeaks::kClipped) return false;
    line["clipped"] = std::round(share * 1e4) / 1e4;
    std::fprintf(stderr,
                 "%s: clipped: %.1f%% of its samples are cut off flat at its loudest (recorded too "
                 "loud for the microphone or its input gain); %s\n",
                 safeText(name).c_str(), 100.0 * share, advice);
    return true;
}

} // namespace fb::cli
