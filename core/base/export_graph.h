#pragma once

// What a layer (core/nn) or a data transform (core/data) writes its exported form into: ONNX
// operators, with their attributes as operator set 17 defines them, and float constants. It is an
// interface down here so that layers and transforms can describe themselves without the protobuf
// library, which is optional at configure time; core/io/onnx_model.h implements it
// (docs/onnx.md).

#include <cstdint>
#include <string>
#include <vector>

namespace fb {

struct ExportAttribute {
    enum class Kind { Int, Float, Ints };
    std::string name;
    Kind kind = Kind::Int;
    int64_t i = 0;
    float f = 0;
    std::vector<int64_t> ints;

    static ExportAttribute integer(std::string name, int64_t v)
    {
        return {std::move(name), Kind::Int, v, 0, {}};
    }
    static ExportAttribute real(std::string name, float v)
    {
        return {std::move(name), Kind::Float, 0, v, {}};
    }
    static ExportAttribute integers(std::string name, std::vector<int64_t> v)
    {
        return {std::move(name), Kind::Ints, 0, 0, std::move(v)};
    }
};

class ExportGraph {
public:
    virtual ~ExportGraph() = default;
    // A value name not used yet in the graph, made from the hint ("conv1", "conv1_2").
    virtual std::string name(const std::string &hint) = 0;
    // A float32 constant of these dimensions (row-major values); returns its name.
    virtual std::string constant(const std::string &hint, const std::vector<int64_t> &dims,
                                 const std::vector<float> &values) = 0;
    // An int64 constant of one dimension (a Slice's starts, a Reshape's shape); returns its name.
    virtual std::string constantInts(const std::string &hint,
                                     const std::vector<int64_t> &values) = 0;
    // One operator of the default domain (operator set 17).
    virtual void node(const std::string &op, const std::vector<std::string> &inputs,
                      const std::vector<std::string> &outputs,
                      const std::vector<ExportAttribute> &attributes = {}) = 0;
};

} // namespace fb
