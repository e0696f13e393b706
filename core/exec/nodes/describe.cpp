#include "core/exec/nodes/describe.h"

namespace fb::exec::nodes {

Range closed(double lo, double hi)
{
    return {lo, hi, false, false};
} // [lo, hi]
Range halfOpen(double lo, double hi)
{
    return {lo, hi, false, true};
} // [lo, hi)
Range leftOpen(double lo, double hi)
{
    return {lo, hi, true, false};
} // (lo, hi]

namespace {

ParamSpec param(std::string name, ParamType type, nlohmann::json def, std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.type = type;
    p.defaultValue = std::move(def);
    p.help = std::move(help);
    return p;
}

ParamSpec numberParam(std::string name, ParamType type, nlohmann::json def, Range r,
                      std::string help)
{
    ParamSpec p = param(std::move(name), type, std::move(def), std::move(help));
    p.min = r.min;
    p.max = r.max;
    p.minExclusive = r.minExclusive;
    p.maxExclusive = r.maxExclusive;
    return p;
}

} // namespace

ParamSpec intParam(std::string name, long long def, Range r, std::string help)
{
    return numberParam(std::move(name), ParamType::Int, def, r, std::move(help));
}

ParamSpec floatParam(std::string name, double def, Range r, std::string help)
{
    return numberParam(std::move(name), ParamType::Float, def, r, std::move(help));
}

ParamSpec boolParam(std::string name, bool def, std::string help)
{
    return param(std::move(name), ParamType::Bool, def, std::move(help));
}

ParamSpec pathParam(std::string name, std::string def, std::string help)
{
    return param(std::move(name), ParamType::Path, std::move(def), std::move(help));
}

ParamSpec stringParam(std::string name, std::string def, std::string help)
{
    return param(std::move(name), ParamType::String, std::move(def), std::move(help));
}

ParamSpec enumParam(std::string name, std::vector<std::string> choices, std::string def,
                    std::string help)
{
    ParamSpec p = param(std::move(name), ParamType::Enum, std::move(def), std::move(help));
    p.choices = std::move(choices);
    return p;
}

PortSpec port(std::string name, PortType type, std::string help)
{
    return {std::move(name), type, std::move(help), false};
}

PortSpec tensorIn(std::string help)
{
    return port("in", PortType::Tensor, std::move(help));
}

PortSpec tensorOut(std::string help)
{
    return port("out", PortType::Tensor, std::move(help));
}

// A model layer: one tensor in, one tensor out.
NodeTypeSpec layer(std::string type, std::string title, std::string help,
                   std::vector<ParamSpec> params)
{
    NodeTypeSpec t;
    t.type = std::move(type);
    t.category = "Model";
    t.title = std::move(title);
    t.help = std::move(help);
    t.inputs = {tensorIn()};
    t.outputs = {tensorOut()};
    t.params = std::move(params);
    return t;
}

// A stage of a data chain: samples in, samples out.
NodeTypeSpec chainStage(std::string category, std::string inputHelp, std::string outputHelp,
                        std::string type, std::string title, std::string help,
                        std::vector<ParamSpec> params)
{
    NodeTypeSpec t;
    t.type = std::move(type);
    t.category = std::move(category);
    t.title = std::move(title);
    t.help = std::move(help);
    t.inputs = {port("samples", PortType::Samples, std::move(inputHelp))};
    t.outputs = {port("samples", PortType::Samples, std::move(outputHelp))};
    t.params = std::move(params);
    return t;
}

// A random augmentation of sample streams: samples in, the same number of samples out.
NodeTypeSpec augmentation(std::string type, std::string title, std::string help,
                          std::vector<ParamSpec> params)
{
    return chainStage("Augment", "Samples to augment.", "The augmented samples.", std::move(type),
                      std::move(title), std::move(help), std::move(params));
}

// A deterministic stage of a data chain (computed once and cached while no random stage precedes
// it).
NodeTypeSpec preprocessing(std::string type, std::string title, std::string help,
                           std::vector<ParamSpec> params)
{
    return chainStage("Preprocess", "Samples to preprocess.", "The preprocessed samples.",
                      std::move(type), std::move(title), std::move(help), std::move(params));
}

// A feature stage of an audio chain: waveforms in, an image of features out.
NodeTypeSpec audioFeature(std::string type, std::string title, std::string help,
                          std::vector<ParamSpec> params)
{
    return chainStage("Audio", "Waveforms from an audio source.",
                      "Features: [1, rows, frames] images.", std::move(type), std::move(title),
                      std::move(help), std::move(params));
}

NodeType nodeType(NodeRole role, std::string type, std::string category, std::string title,
                  std::string help)
{
    NodeType t;
    t.spec.role = role;
    t.spec.type = std::move(type);
    t.spec.category = std::move(category);
    t.spec.title = std::move(title);
    t.spec.help = std::move(help);
    return t;
}

NodeType layerNode(NodeTypeSpec spec,
                   std::function<std::unique_ptr<nn::Layer>(const NodeParams &)> make)
{
    NodeType t;
    t.spec = std::move(spec);
    t.spec.role = NodeRole::Layer;
    t.makeLayer = [make =
                       std::move(make)](const NodeParams &p) -> Result<std::unique_ptr<nn::Layer>> {
        return make(p);
    };
    return t;
}

std::vector<ParamSpec> batchNormParams()
{
    return {
        floatParam("eps", 1e-5, leftOpen(0, 1), "Added to the variance for numerical stability."),
        floatParam("momentum", 0.1, closed(0, 1),
                   "Weight of the current batch in the running mean and variance.")};
}

NodeType
transformNode(NodeTypeSpec spec,
              std::function<std::shared_ptr<const data::Transform>(const NodeParams &)> make)
{
    NodeType t;
    t.spec = std::move(spec);
    t.spec.role = NodeRole::Transform;
    t.makeTransform = [make = std::move(make)](const NodeParams &p, const DataSpec &) {
        return make(p);
    };
    return t;
}

ParamSpec numberListParam(std::string name, std::string def, Range r, std::string help)
{
    ParamSpec p =
        numberParam(std::move(name), ParamType::String, std::move(def), r, std::move(help));
    p.numberList = true;
    return p;
}

ParamSpec atMost(ParamSpec p, std::string other)
{
    p.atMost = std::move(other);
    return p;
}

ParamSpec runOnly(ParamSpec p)
{
    p.runOnly = true;
    return p;
}

} // namespace fb::exec::nodes
