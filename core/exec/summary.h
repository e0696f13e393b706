#pragma once

// The model summary (`flowbench-cli summary`, the window's Model Summary view): what a pipeline's
// model is before it trains. Shapes come from the data source's parameters (at most a file's
// header: NodeType::sampleShape) through the data chain's transforms, so no data is loaded and
// nothing runs; each layer says what it costs (nn::Layer::cost). A measurement, when asked for,
// times a few training steps on synthetic data on each device. docs/summary.md says how FLOPs
// and memory are counted.

#include "core/base/result.h"
#include "core/graph/document.h"
#include "core/tensor/shape.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fb::exec {

struct SummaryRow {
    std::string id, type;
    std::vector<std::string> inputs;
    Shape output;           // per sample
    int64_t parameters = 0; // trainable
    int64_t buffers = 0;    // saved, not trained (batch norm's running statistics)
    // For one training step of the batch: the forward pass, and the backward pass (the input's
    // gradient, skipped for the model's first layer, and the parameters').
    double forwardFlops = 0, backwardFlops = 0;
    double activationBytes = 0; // its output for the batch in float32
    double share = 0;           // of the step's FLOPs, forward and backward
};

// A short timed training run on one device, on random inputs of the model's shape.
struct Measurement {
    std::string device;  // "cpu", "cuda:0"
    std::string name;    // the device's own name ("NVIDIA H100 80GB HBM3", "CPU (oneDNN)")
    int threads = 0;     // CPU threads (0 on a GPU)
    int64_t steps = 0;   // timed steps (after warm-up steps, not counted)
    double stepSeconds = 0; // the mean step
    double samplesPerSecond = 0;
    double gflops = 0;   // the estimate's FLOPs per step over the measured step time
    // Per layer, forward and backward seconds per step, where the device's clock sees them (the
    // CPU: every kernel runs to completion on the host). Empty on a GPU.
    std::vector<std::pair<std::string, double>> layerSeconds;
    std::string slowestLayer;
    double slowestShare = 0;
    std::string error; // set when the micro-run could not run (out of GPU memory, ...)
};

struct ModelSummary {
    std::string inputNode, sourceNode; // the model's input, and the data source feeding it
    Shape input;                       // one sample as it reaches the model
    int64_t batch = 0;                 // the train node's batch_size (or the one asked for)
    std::string precision;             // the train node's
    std::vector<SummaryRow> rows;      // in the order the layers run, as drawn
    int64_t parameters = 0, buffers = 0;
    double forwardFlops = 0, backwardFlops = 0, activationBytes = 0;
    double inputBytes = 0;    // the batch itself
    double trainingBytes = 0; // at least: weights, gradients, optimizer state, activations and
                              // their gradients, the batch (nn::Model::estimateMemory)
    std::string dominantLayer; // the largest share of the step's FLOPs
    double dominantShare = 0;
    std::vector<std::string> notes; // how the compiler rewrites the graph when it runs
    std::vector<Measurement> measurements;
};

// The summary of a pipeline that passed graph::validate(nodeTypes()). batch > 0 replaces the
// train node's batch size. Errors name the node at fault (a layer whose input does not fit).
Result<ModelSummary> summarizePipeline(const graph::PipelineDocument &doc, int64_t batch = 0);

// Times `steps` training steps (after a few untimed ones) of the pipeline's model on `device`
// ("cpu", "cuda:0"), with `threads` CPU threads (0: every core). On the CPU each layer's time
// is measured too, unless `perLayer` is false: timing every kernel on its own costs time of its
// own (a step's whole time is then the one a run would see). Never throws: a failure is the
// measurement's error.
Measurement measureTraining(const graph::PipelineDocument &doc, const ModelSummary &summary,
                            const std::string &device, int threads, int steps,
                            bool perLayer = true);

// The devices a measurement runs on by default: the CPU, and the first GPU when there is one.
std::vector<std::string> measurableDevices();

// `summary --json`: {"format": "flowbench.summary", "version": 1, ...} (docs/summary.md).
nlohmann::json summaryToJson(const ModelSummary &s);
// The table people read.
std::string summaryToText(const ModelSummary &s);

} // namespace fb::exec
