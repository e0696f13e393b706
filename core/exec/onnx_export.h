#pragma once

// Exports a trained model to ONNX (opset 17) with the preprocessing it was trained with, and
// checks the file: the ONNX checker, then an independent runtime (OpenCV's dnn module) on the
// run's test set against our own predictions (docs/onnx.md).

#include "core/base/result.h"
#include "core/tensor/shape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::exec {

struct ExportOptions {
    bool check = true; // the runtime check (the ONNX checker always runs)
    int64_t checkLimit = 0; // at most this many test samples; 0 = all of them
};

struct ExportReport {
    std::string modelFile; // the .safetensors read
    std::string output;    // the .onnx written
    Shape input;           // one sample as the exported model reads it ([C, H, W])
    std::vector<std::string> classNames;
    int64_t nodes = 0; // ONNX operators
    std::string onnxVersion;
    // The check, when it ran: which runtime, on what, how many samples gave the same top class as
    // Flowbench, and the largest difference of any logit.
    bool checked = false;
    std::string runtime;    // "OpenCV 4.6.0 dnn"
    std::string checkedOn;  // "test_data (10000 samples)"
    int64_t samples = 0, sameTop1 = 0;
    double maxLogitDifference = 0;
    static constexpr double kTolerance = 1e-4; // float32, what the check requires
};

// model: a run folder, its model.safetensors or a checkpoint (as `infer` takes). The file is
// written only when the export succeeds and, with options.check, the check passes: a model that
// loads wrong is never left behind. Errors name the node that cannot be exported, or the check's
// figures.
Result<ExportReport> exportOnnx(const std::string &model, const std::string &output,
                                const ExportOptions &options = {});

} // namespace fb::exec
