#pragma once

#include "core/graph/node_types.h"

namespace fb::widgets {

// The node types the window offers, read once from resources/node_types.json (compiled in as a
// Qt resource). The engine registers them, each described together with what it does
// (core/exec/nodes), but the window does not link the engine: a run happens in a flowbench-cli
// child process. scripts/update_node_table.sh writes the file from `flowbench-cli nodes --json`,
// and test_cli fails when the two differ.
const graph::NodeTypeRegistry &nodeTypes();

} // namespace fb::widgets
