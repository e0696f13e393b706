#pragma once

#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/graph/document.h"

namespace fb::graph {

// The pipeline file format (DESIGN.md):
// {"format": "flowbench.pipeline", "version": 1,
//  "nodes": [{"id", "type", "params": {...}, "position": [x, y]}],
//  "edges": [{"from": "NODE.PORT", "to": "NODE.PORT"}]}
// Unknown fields at every level are kept and written back on save.
inline constexpr const char *kPipelineFormat = "flowbench.pipeline";
inline constexpr int kPipelineVersion = 1;

// Checks structure only (JSON syntax, format, version, field types); what the nodes mean is
// validate()'s business. sourceName (the file path) goes into Error.file for messages.
Result<PipelineDocument> parsePipeline(std::string_view text, const std::string &sourceName);
Result<PipelineDocument> loadPipeline(const std::string &path);

// The document as a JSON value, fields in file order.
nlohmann::ordered_json pipelineJson(const PipelineDocument &doc);
// Pretty JSON, 2-space indent, ending in a newline.
std::string serializePipeline(const PipelineDocument &doc);
// Atomic: writes a temporary file beside path, fsyncs it, then renames it over path.
Status savePipeline(const PipelineDocument &doc, const std::string &path);

} // namespace fb::graph
