#pragma once

#include "core/graph/document.h"

#include <string>
#include <vector>

namespace fb::graph {

// What differs between two pipelines, node by node (by id) and wire by wire: what a person asks
// of two runs ("what did I change?"). Positions and unknown fields are left out; they change
// nothing a run computes.
struct PipelineDiff {
    struct Param {
        std::string name;
        std::string before, after; // JSON text; "(not set)" where neither the file nor a
                                   // default gives one
        bool beforeIsDefault = false, afterIsDefault = false;
    };
    struct NodeChange {
        enum class Kind { Added, Removed, Changed } kind = Kind::Changed;
        std::string node;
        std::string type;       // in the second pipeline (the first's for a removed node)
        std::string typeBefore; // set when the type itself changed
        std::vector<Param> params;
    };
    std::vector<NodeChange> nodes;       // in the order of the second pipeline, removed last
    std::vector<std::string> edgesAdded; // "NODE.PORT -> NODE.PORT"
    std::vector<std::string> edgesRemoved;

    bool empty() const { return nodes.empty() && edgesAdded.empty() && edgesRemoved.empty(); }
};

// `before` against `after`. With a registry, a parameter one file leaves out counts as its
// default, so that writing the default out is no difference.
PipelineDiff diffPipelines(const PipelineDocument &before, const PipelineDocument &after,
                           const NodeTypeRegistry *registry = nullptr);

} // namespace fb::graph
