#include "core/io/onnx_model.h"

#ifdef FLOWBENCH_HAVE_ONNX
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#endif

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

namespace fb::io {

#ifdef FLOWBENCH_HAVE_ONNX

bool onnxAvailable()
{
    return true;
}

std::string onnxLibraryVersion()
{
    return FLOWBENCH_ONNX_VERSION;
}

struct OnnxModel::Impl {
    onnx::ModelProto model;
    std::set<std::string> names;
};

OnnxModel::OnnxModel()
    : m(std::make_unique<Impl>())
{}

OnnxModel::~OnnxModel() = default;

Result<std::unique_ptr<OnnxModel>> OnnxModel::create(const std::string &graphName)
{
    std::unique_ptr<OnnxModel> out(new OnnxModel);
    onnx::ModelProto &m = out->m->model;
    m.set_ir_version(8); // what ONNX 1.12 writes (onnx::IR_VERSION), the one opset 17 needs
    m.set_producer_name("flowbench");
    onnx::OperatorSetIdProto *opset = m.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    m.mutable_graph()->set_name(graphName);
    return out;
}

std::string OnnxModel::name(const std::string &hint)
{
    std::string n = hint.empty() ? "value" : hint;
    for (int i = 2; m->names.count(n); ++i)
        n = hint + "_" + std::to_string(i);
    m->names.insert(n);
    return n;
}

std::string OnnxModel::constant(const std::string &hint, const std::vector<int64_t> &dims,
                                const std::vector<float> &values)
{
    const std::string n = name(hint);
    onnx::TensorProto *t = m->model.mutable_graph()->add_initializer();
    t->set_name(n);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
        t->add_dims(d);
    // raw_data is little-endian float32, as this machine's memory (x86-64, aarch64).
    t->set_raw_data(std::string(reinterpret_cast<const char *>(values.data()),
                                values.size() * sizeof(float)));
    return n;
}

std::string OnnxModel::constantInts(const std::string &hint, const std::vector<int64_t> &values)
{
    const std::string n = name(hint);
    onnx::TensorProto *t = m->model.mutable_graph()->add_initializer();
    t->set_name(n);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values)
        t->add_int64_data(v);
    return n;
}

void OnnxModel::node(const std::string &op, const std::vector<std::string> &inputs,
                     const std::vector<std::string> &outputs,
                     const std::vector<ExportAttribute> &attributes)
{
    onnx::NodeProto *n = m->model.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(outputs.empty() ? op : outputs.front() + "/" + op);
    for (const auto &i : inputs)
        n->add_input(i);
    for (const auto &o : outputs) {
        n->add_output(o);
        m->names.insert(o);
    }
    for (const ExportAttribute &a : attributes) {
        onnx::AttributeProto *p = n->add_attribute();
        p->set_name(a.name);
        switch (a.kind) {
        case ExportAttribute::Kind::Int:
            p->set_type(onnx::AttributeProto::INT);
            p->set_i(a.i);
            break;
        case ExportAttribute::Kind::Float:
            p->set_type(onnx::AttributeProto::FLOAT);
            p->set_f(a.f);
            break;
        case ExportAttribute::Kind::Ints:
            p->set_type(onnx::AttributeProto::INTS);
            for (int64_t v : a.ints)
                p->add_ints(v);
            break;
        }
    }
}

namespace {

void describe(onnx::ValueInfoProto *v, const std::string &name, const std::vector<int64_t> &dims,
              const std::string &doc)
{
    v->set_name(name);
    v->set_doc_string(doc);
    onnx::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) {
        onnx::TensorShapeProto_Dimension *dim = t->mutable_shape()->add_dim();
        if (d < 0)
            dim->set_dim_param("N");
        else
            dim->set_dim_value(d);
    }
}

} // namespace

void OnnxModel::input(const std::string &name, const std::vector<int64_t> &dims,
                      const std::string &doc)
{
    m->names.insert(name);
    describe(m->model.mutable_graph()->add_input(), name, dims, doc);
}

void OnnxModel::output(const std::string &name, const std::vector<int64_t> &dims,
                       const std::string &doc)
{
    describe(m->model.mutable_graph()->add_output(), name, dims, doc);
}

void OnnxModel::metadata(const std::string &key, const std::string &value)
{
    onnx::StringStringEntryProto *p = m->model.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
}

void OnnxModel::documentation(const std::string &text)
{
    m->model.set_doc_string(text);
}

int64_t OnnxModel::nodeCount() const
{
    return m->model.graph().node_size();
}

Status OnnxModel::check() const
{
    try {
        onnx::checker::check_model(m->model);
        onnx::ModelProto inferred = m->model;
        onnx::ShapeInferenceOptions options(true, 1, false); // types checked, errors strict
        onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception &e) {
        return makeError(std::string("the ONNX checker refuses the model: ") + e.what());
    }
    return {};
}

Status OnnxModel::save(const std::string &path) const
{
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path temp = target.string() + ".part";
    {
        std::ofstream f(temp, std::ios::binary | std::ios::trunc);
        if (!f) return fileError(path, "cannot be written (its folder is missing or read-only)");
        if (!m->model.SerializeToOstream(&f) || !f.flush())
            return fileError(path, "could not be written in full (is the disk full?)");
    }
    std::error_code ec;
    fs::rename(temp, target, ec);
    if (ec) {
        fs::remove(temp, ec);
        return fileError(path, "could not be put in place: " + ec.message());
    }
    return {};
}

#else // no ONNX library at configure time

bool onnxAvailable()
{
    return false;
}

std::string onnxLibraryVersion()
{
    return {};
}

struct OnnxModel::Impl {};
OnnxModel::OnnxModel() = default;
OnnxModel::~OnnxModel() = default;

Result<std::unique_ptr<OnnxModel>> OnnxModel::create(const std::string &)
{
    return makeError("this build of Flowbench has no ONNX export: install libonnx-dev and "
                     "libprotobuf-dev (scripts/deps.sh does) and build again");
}

// Unreachable: create() never makes one.
std::string OnnxModel::name(const std::string &hint)
{
    return hint;
}
std::string OnnxModel::constant(const std::string &hint, const std::vector<int64_t> &,
                                const std::vector<float> &)
{
    return hint;
}
std::string OnnxModel::constantInts(const std::string &hint, const std::vector<int64_t> &)
{
    return hint;
}
void OnnxModel::node(const std::string &, const std::vector<std::string> &,
                     const std::vector<std::string> &, const std::vector<ExportAttribute> &)
{}
void OnnxModel::input(const std::string &, const std::vector<int64_t> &, const std::string &) {}
void OnnxModel::output(const std::string &, const std::vector<int64_t> &, const std::string &) {}
void OnnxModel::metadata(const std::string &, const std::string &) {}
void OnnxModel::documentation(const std::string &) {}
int64_t OnnxModel::nodeCount() const
{
    return 0;
}
Status OnnxModel::check() const
{
    return makeError("no ONNX library in this build");
}
Status OnnxModel::save(const std::string &) const
{
    return makeError("no ONNX library in this build");
}

#endif

} // namespace fb::io
