#pragma once

#include "core/data/dataflow.h"
#include "core/data/audio_files.h"
#include "core/data/image_files.h"
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
    std::string sourceType; // its node type (core/exec/nodes/data_sources.cpp), which loads it
    // What the source's samples are, as its type says (NodeType::readSource).
    enum class SampleKind { Images, Audio } samples = SampleKind::Images;
    bool fromImageFiles = false; // decoded from picture files as imageFiles says
    bool pathsAsListed = false;  // skipped files are named as a list gave them, not by folder
    std::string path, split, images, labels;
    int64_t limit = 0;
    data::ImageFilesOptions imageFiles; // image_folder and image_list
    data::AudioFilesOptions audioFiles; // audio_folder
    struct TransformStep {
        std::string node, type; // a node type of role Transform, which makes the stage
        nlohmann::json params;  // every parameter, defaults filled in
    };
    std::vector<TransformStep> transforms; // in data-flow order
};

struct OptimizerSpec {
    std::string node;
    std::string type;    // its node type (core/exec/nodes/training.cpp), which makes it
    int stateCopies = 0; // tensors of state per parameter (momentum: 1; Adam's moments: 2)
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
    std::vector<LayerNode> layers;  // topological order
    std::string lossNode, lossType; // the loss node and its type, which makes it
    nlohmann::json lossParams;      // every parameter of the loss node
    OptimizerSpec optimizer;
    std::vector<EvaluateSpec> evaluations;
    int64_t epochs = 1, batchSize = 128, checkpointEvery = 1, checkpointSteps = 0;
    int64_t keepCheckpoints = 3;
    int dataWorkers = 0; // 0 = automatic
    uint64_t seed = 0;
    bool shuffle = true;
    std::string device = "auto";
    std::string precision = "float32"; // or "tf32", "bf16" (GPU convolutions and matrix products)
    bool deterministic = false;        // GPU: deterministic cuDNN algorithms only
    double averageLast = 0; // the share of the epochs at the end whose weights are averaged
};

// Reads the job out of a document that passed graph::validate(nodeTypes()); errors name the
// node.
Result<TrainingJob> readTrainingJob(const graph::PipelineDocument &doc);

// The model part as layers, compiled for a sample shape (errors name the node and shapes).
// rewrites false keeps the graph as drawn (nn::Model::setRewrites): the model summary's rows.
Result<nn::Model> buildModel(const TrainingJob &job, const Shape &inputSample,
                             bool rewrites = true);
// The chain's transforms as data-flow stages.
std::vector<data::Stage> buildStages(const DataSpec &spec);
// The samples of a saved pipeline's evaluate node's data source (the run's held-out set), as
// the source gives them, before any transform; with `orTraining`, the training data's where
// nothing is evaluated. The error names the node at fault.
struct SourceData {
    std::string node; // the data source's id
    DataSpec spec;
    data::ImageDataset data;
};
Result<SourceData> loadEvaluatedData(const std::string &pipelineText, bool orTraining);
std::unique_ptr<nn::Loss> buildLoss(const TrainingJob &job);
std::unique_ptr<nn::Optimizer> buildOptimizer(const OptimizerSpec &spec);

} // namespace fb::exec
