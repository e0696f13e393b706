#pragma once

#include <string_view>

#include "core/base/result.h"
#include "core/graph/document.h"
#include "core/graph/node_types.h"

namespace fb::graph {

// Applies "node.param=value" (the CLI's --set). The value is read by the parameter's type: int,
// float, bool (true/false/1/0), and string/enum/path verbatim (everything after the first '=').
// Range and choices are checked too. Errors name the node or "node.param".
Status applySetting(PipelineDocument &doc, std::string_view assignment,
                    const NodeTypeRegistry &registry);

} // namespace fb::graph
