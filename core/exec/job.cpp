#include "core/exec/job.h"

#include "core/exec/node_type.h"
#include "core/graph/node_types.h"
#include "core/graph/pipeline_file.h"

#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/nn/layers.h"

#include <algorithm>
#include <map>
#include <set>

namespace fb::exec {

using graph::PipelineDocument;
using nlohmann::json;

namespace {

// The node's type in the catalog; null when the node or its type is unknown.
const NodeType *typeOf(const PipelineDocument &doc, const std::string &id)
{
    const graph::Node *n = doc.node(id);
    return n ? nodeCatalog().find(n->type) : nullptr;
}

NodeParams paramsOf(const PipelineDocument &doc, const NodeType &type, const std::string &id)
{
    return NodeParams::of(doc, type.spec, id, nodeTypes());
}

const graph::Edge *inputEdge(const PipelineDocument &doc, const std::string &node, const char *port)
{
    return doc.edgeInto(node, port);
}

Result<DataSpec> readData(const PipelineDocument &doc, const std::string &consumer,
                          const char *port)
{
    const graph::Edge *e = inputEdge(doc, consumer, port);
    if (!e) return nodeError(consumer + "." + port, "no data is connected");
    DataSpec spec;
    std::string id = e->fromNode;
    std::set<std::string> seen;
    while (true) {
        if (!seen.insert(id).second) return nodeError(id, "the data chain loops");
        const graph::Node *n = doc.node(id);
        if (!n) return nodeError(id, "missing node");
        const NodeType *type = nodeCatalog().find(n->type);
        if (type && type->spec.role == NodeRole::Transform) {
            spec.transforms.insert(spec.transforms.begin(),
                                   {id, n->type, paramsOf(doc, *type, id).values()});
            const graph::Edge *up = inputEdge(doc, id, "samples");
            if (!up) return nodeError(id + ".samples", "no data is connected");
            id = up->fromNode;
            continue;
        }
        if (!type || type->spec.role != NodeRole::Source)
            return nodeError(id,
                             "a '" + n->type + "' node cannot feed samples to '" + consumer + "'");
        spec.sourceNode = id;
        spec.sourceType = n->type;
        if (Status read = type->readSource(paramsOf(doc, *type, id), spec); !read.ok()) {
            // A source names the parameter at fault; the error names the node too.
            Error e = std::move(read.error());
            e.node = e.node.empty() ? id : id + "." + e.node;
            return e;
        }
        return spec;
    }
}

} // namespace

Result<TrainingJob> readTrainingJob(const PipelineDocument &doc)
{
    TrainingJob job;
    std::vector<std::string> trains;
    for (const auto &n : doc.nodes())
        if (const NodeType *t = nodeCatalog().find(n.type);
            t && t->spec.role == NodeRole::Train)
            trains.push_back(n.id);
    if (trains.empty()) return makeError("the pipeline has no 'train' node");
    if (trains.size() > 1)
        return nodeError(trains[1], "only one 'train' node per pipeline is supported");
    job.trainNode = trains[0];
    const NodeType &train = *typeOf(doc, job.trainNode);
    train.readTrain(paramsOf(doc, train, job.trainNode), job);

    auto data = readData(doc, job.trainNode, "data");
    if (!data.ok()) return data.error();
    job.trainData = data.value();

    // The model: everything upstream of train.model back to one input node.
    const graph::Edge *me = doc.edgeInto(job.trainNode, "model");
    if (!me) return nodeError(job.trainNode + ".model", "no model is connected");
    job.outputNode = me->fromNode;
    std::map<std::string, TrainingJob::LayerNode> found;
    std::vector<std::string> stack{job.outputNode};
    std::vector<std::string> inputs;
    while (!stack.empty()) {
        const std::string id = stack.back();
        stack.pop_back();
        if (found.count(id) || std::find(inputs.begin(), inputs.end(), id) != inputs.end())
            continue;
        const graph::Node *n = doc.node(id);
        if (!n) return nodeError(id, "missing node");
        const NodeType *type = nodeCatalog().find(n->type);
        if (type && type->spec.role == NodeRole::Input) {
            inputs.push_back(id);
            continue;
        }
        if (!type || type->spec.role != NodeRole::Layer)
            return nodeError(id, "a '" + n->type + "' node cannot be part of the model");
        TrainingJob::LayerNode ln{id, n->type, {}, paramsOf(doc, *type, id).values()};
        for (const graph::PortSpec &port : type->spec.inputs) {
            const graph::Edge *e = doc.edgeInto(id, port.name);
            if (!e) return nodeError(id + "." + port.name, "input is not connected");
            ln.inputs.push_back(e->fromNode);
            stack.push_back(e->fromNode);
        }
        found[id] = ln;
    }
    if (inputs.empty())
        return nodeError(job.outputNode, "the model has no 'input' node upstream of it");
    if (inputs.size() > 1)
        return nodeError(inputs[1], "the model has more than one 'input' node ('" + inputs[0] +
                                        "' and '" + inputs[1] + "'); only one is supported");
    job.inputNode = inputs[0];

    // Topological order (Kahn), ties broken by document order so runs are reproducible.
    std::set<std::string> done{job.inputNode};
    while (done.size() < found.size() + 1) {
        bool progressed = false;
        for (const auto &n : doc.nodes()) {
            auto it = found.find(n.id);
            if (it == found.end() || done.count(n.id)) continue;
            if (std::all_of(it->second.inputs.begin(), it->second.inputs.end(),
                            [&](const std::string &u) { return done.count(u) > 0; })) {
                job.layers.push_back(it->second);
                done.insert(n.id);
                progressed = true;
            }
        }
        if (!progressed) return nodeError(job.outputNode, "the model contains a cycle");
    }

    const graph::Edge *le = doc.edgeInto(job.trainNode, "loss");
    if (!le) return nodeError(job.trainNode + ".loss", "no loss is connected");
    job.lossNode = le->fromNode;
    job.lossType = doc.node(le->fromNode)->type;
    const NodeType *lossType = typeOf(doc, job.lossNode);
    if (!lossType || lossType->spec.role != NodeRole::Loss)
        return nodeError(job.lossNode, "'" + job.lossType + "' is not a loss");
    job.lossParams = paramsOf(doc, *lossType, job.lossNode).values();

    const graph::Edge *oe = doc.edgeInto(job.trainNode, "optimizer");
    if (!oe) return nodeError(job.trainNode + ".optimizer", "no optimizer is connected");
    OptimizerSpec &o = job.optimizer;
    o.node = oe->fromNode;
    o.type = doc.node(o.node)->type;
    const NodeType *opt = typeOf(doc, o.node);
    if (!opt || opt->spec.role != NodeRole::Optimizer)
        return nodeError(o.node, "'" + o.type + "' is not an optimizer");
    opt->readOptimizer(paramsOf(doc, *opt, o.node), o);

    for (const auto &n : doc.nodes()) {
        const NodeType *t = nodeCatalog().find(n.type);
        if (!t || t->spec.role != NodeRole::Evaluate) continue;
        const graph::Edge *em = doc.edgeInto(n.id, "model");
        if (!em || em->fromNode != job.trainNode) continue;
        auto ed = readData(doc, n.id, "data");
        if (!ed.ok()) return ed.error();
        job.evaluations.push_back({n.id, ed.value(), paramsOf(doc, *t, n.id).i("batch_size")});
    }
    return job;
}

Result<nn::Model> buildModel(const TrainingJob &job, const Shape &inputSample, bool rewrites)
{
    nn::Model model;
    model.setRewrites(rewrites);
    // The weights are made in host memory first: a layer too large for it is refused by name.
    model.setMemoryLimit(hostMemoryAvailable());
    model.setInput(job.inputNode);
    for (const auto &n : job.layers) {
        const NodeType *type = nodeCatalog().find(n.type);
        if (!type || type->spec.role != NodeRole::Layer)
            return nodeError(n.id, "'" + n.type + "' is not a layer");
        auto layer = type->makeLayer(NodeParams(n.id, n.params));
        if (!layer.ok()) return layer.error();
        FB_TRY(model.addLayer(n.id, std::move(layer).value(), n.inputs));
    }
    FB_TRY(model.setOutput(job.outputNode));
    FB_TRY(model.compile(inputSample));
    return model;
}

std::vector<data::Stage> buildStages(const DataSpec &spec)
{
    std::vector<data::Stage> stages;
    for (const auto &t : spec.transforms) {
        const NodeType *type = nodeCatalog().find(t.type);
        FB_ASSERT(type && type->spec.role == NodeRole::Transform,
                  "readTrainingJob accepted a transform that is not one");
        stages.push_back({t.node, type->makeTransform(NodeParams(t.node, t.params), spec)});
    }
    return stages;
}

std::unique_ptr<nn::Loss> buildLoss(const TrainingJob &job)
{
    const NodeType *type = nodeCatalog().find(job.lossType);
    FB_ASSERT(type && type->spec.role == NodeRole::Loss,
              "readTrainingJob accepted a loss that is not");
    return type->makeLoss(NodeParams(job.lossNode, job.lossParams));
}

std::unique_ptr<nn::Optimizer> buildOptimizer(const OptimizerSpec &spec)
{
    const NodeType *type = nodeCatalog().find(spec.type);
    FB_ASSERT(type && type->spec.role == NodeRole::Optimizer,
              "readTrainingJob accepted an optimizer that is not");
    return type->makeOptimizer(spec);
}

Result<SourceData> loadEvaluatedData(const std::string &pipelineText, bool orTraining)
{
    auto doc = graph::parsePipeline(pipelineText, "the saved pipeline");
    if (!doc.ok()) return doc.error();
    auto job = readTrainingJob(doc.value());
    if (!job.ok()) return job.error();
    if (job->evaluations.empty() && !orTraining)
        return makeError("the pipeline evaluates nothing: it holds no recordings out (add an "
                         "evaluate node on a validation subset)");
    SourceData out;
    out.spec = job->evaluations.empty() ? job->trainData : job->evaluations.front().data;
    out.node = out.spec.sourceNode;
    const NodeType *source = nodeCatalog().find(out.spec.sourceType);
    if (!source || !source->loadSource)
        return nodeError(out.node, "'" + out.spec.sourceType + "' is not a data source");
    auto loaded = source->loadSource(out.spec);
    if (!loaded.ok()) {
        Error e = loaded.error();
        if (e.node.empty()) e.node = out.node;
        return e;
    }
    out.data = std::move(loaded).value();
    return out;
}

} // namespace fb::exec
