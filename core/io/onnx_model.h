#pragma once

// An ONNX model being written (opset 17, IR version 8), with Debian's ONNX library and protobuf
// (libonnx-dev, libprotobuf-dev): optional at configure time, like CUDA. Without them create()
// says so and nothing else is reachable.

#include "core/base/export_graph.h"
#include "core/base/result.h"

#include <memory>
#include <string>
#include <vector>

namespace fb::io {

// Whether this build writes ONNX; onnxLibraryVersion() is "1.12.0" then, "" otherwise.
bool onnxAvailable();
std::string onnxLibraryVersion();

class OnnxModel final : public ExportGraph {
public:
    // An empty model, or why this build cannot write one.
    static Result<std::unique_ptr<OnnxModel>> create(const std::string &graphName);
    ~OnnxModel() override;

    std::string name(const std::string &hint) override;
    std::string constant(const std::string &hint, const std::vector<int64_t> &dims,
                         const std::vector<float> &values) override;
    std::string constantInts(const std::string &hint, const std::vector<int64_t> &values) override;
    void node(const std::string &op, const std::vector<std::string> &inputs,
              const std::vector<std::string> &outputs,
              const std::vector<ExportAttribute> &attributes = {}) override;

    // A float32 graph input or output; a dimension of -1 is the batch, named "N" (symbolic, so
    // that any batch size runs). `doc` says what it holds, for people.
    void input(const std::string &name, const std::vector<int64_t> &dims, const std::string &doc);
    void output(const std::string &name, const std::vector<int64_t> &dims, const std::string &doc);
    void metadata(const std::string &key, const std::string &value);
    void documentation(const std::string &text);
    int64_t nodeCount() const;

    // The ONNX checker, then shape inference in strict mode (on a copy): a model either accepts
    // is well-formed. The error says what it found.
    Status check() const;
    // Written to a temporary file beside `path`, flushed, then renamed into place.
    Status save(const std::string &path) const;

private:
    OnnxModel();
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace fb::io
