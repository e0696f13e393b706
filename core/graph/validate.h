#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.h"
#include "core/graph/document.h"
#include "core/graph/node_types.h"

namespace fb::graph {

// Every problem in the document, one Error each, in a stable order: nodes and their parameters,
// then edges, then unconnected inputs, then cycles. Error.node is "node", "node.port" or
// "node.param". Empty means valid.
std::vector<Error> validate(const PipelineDocument &doc, const NodeTypeRegistry &registry);

// One value against its parameter's description: JSON type, range, choices. The error names
// "nodeId.param".
Status checkParamValue(const ParamSpec &spec, const nlohmann::json &value, std::string_view nodeId);

// Whether an editor may add this edge: both nodes and ports exist, output to input, same port
// type, the input is free, and no cycle would form. Lets the canvas refuse a bad wire with a
// reason before it is added (QtNodes, Orange).
Status checkEdge(const PipelineDocument &doc, const Edge &edge, const NodeTypeRegistry &registry);

} // namespace fb::graph
