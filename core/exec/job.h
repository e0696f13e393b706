#pragma once

#include "core/graph/graph.h"
#include "core/nn/loss.h"
#include "core/nn/model.h"
#include "core/nn/optimizer.h"

#include <memory>
#include <string>
#include <vector>

namespace fb::exec {

// A data chain: one source node and the transforms after it, in order.
struct DataSpec {
    std::string sourceNode;
    std::string sourceType; // "fashion_mnist" | "idx_dataset"
    std::string path, split, images, labels;
    int64_t limit = 0;
    struct NormalizeStep {
        std::string node;
        float mean, stddev;
    };
    std::vector<NormalizeStep> normalize;
};

struct OptimizerSpec {
    std::string node;
    std::string type; // sgd | adam | adamw
    SgdParams sgd;
    AdamParams adam;
    nn::LrSchedule schedule; // stepsPerEpoch/totalSteps filled in at run time
};

struct EvaluateSpec {
    std::string node;
    DataSpec data;
    int64_t batchSize = 1000;
};

// Everything a run needs, read from a validated pipeline document: describing a pipeline and
// running it are separate (DESIGN.md), so this holds no data and no kernels.
struct TrainingJob {
    std::string trainNode;
    DataSpec trainData;
    std::string inputNode, outputNode;
    struct LayerNode {
        std::string id, type;
        std::vector<std::string> inputs;
        nlohmann::json params;
    };
    std::vector<LayerNode> layers; // topological order
    std::string lossNode, lossType;
    OptimizerSpec optimizer;
    std::vector<EvaluateSpec> evaluations;
    int64_t epochs = 1, batchSize = 128, checkpointEvery = 1;
    uint64_t seed = 0;
    bool shuffle = true;
    std::string device = "auto";
};

// Reads the job out of a document that passed graph::validate(); errors name the node.
Result<TrainingJob> readTrainingJob(const graph::PipelineDocument &doc);

// The model part as layers, compiled for a sample shape (errors name the node and shapes).
Result<nn::Model> buildModel(const TrainingJob &job, const Shape &inputSample);
std::unique_ptr<nn::Loss> buildLoss(const TrainingJob &job);
std::unique_ptr<nn::Optimizer> buildOptimizer(const OptimizerSpec &spec);

} // namespace fb::exec
