// Tests for core/graph: the pipeline document, node-type registry, file format, --set overrides
// and validation.
#include "core/base/json_nesting.h"
#include "core/base/safe_text.h"
#include "core/exec/control.h"
#include "core/exec/inference.h"
#include "core/exec/job.h"
#include "core/nn/loss.h"
#include "core/graph/graph.h"
#include "core/io/safetensors.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include "core/exec/node_type.h"

#include <QtTest>

#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

using namespace fb;
using namespace fb::graph;
using nlohmann::json;

namespace {

// The smallest complete pipeline: data -> normalize -> train, an MLP model, loss, optimizer, and
// evaluation on the test split.
const char *minimalPipelineText()
{
    return R"({
      "format": "flowbench.pipeline",
      "version": 1,
      "nodes": [
        {"id": "fm_train", "type": "fashion_mnist", "params": {}, "position": [0, 0]},
        {"id": "norm", "type": "normalize", "params": {}, "position": [200, 0]},
        {"id": "input", "type": "input", "params": {}, "position": [0, 200]},
        {"id": "flatten", "type": "flatten", "params": {}, "position": [100, 200]},
        {"id": "linear", "type": "linear", "params": {"out_features": 10}, "position": [200, 200]},
        {"id": "loss", "type": "cross_entropy", "params": {}, "position": [300, 300]},
        {"id": "sgd", "type": "sgd", "params": {"lr": 0.1}, "position": [300, 400]},
        {"id": "train", "type": "train", "params": {"epochs": 2}, "position": [400, 100]},
        {"id": "fm_test", "type": "fashion_mnist", "params": {"split": "test"},
         "position": [400, 0]},
        {"id": "eval", "type": "evaluate", "params": {}, "position": [600, 100]}
      ],
      "edges": [
        {"from": "fm_train.samples", "to": "norm.samples"},
        {"from": "norm.samples", "to": "train.data"},
        {"from": "input.out", "to": "flatten.in"},
        {"from": "flatten.out", "to": "linear.in"},
        {"from": "linear.out", "to": "train.model"},
        {"from": "loss.loss", "to": "train.loss"},
        {"from": "sgd.optimizer", "to": "train.optimizer"},
        {"from": "train.trained", "to": "eval.model"},
        {"from": "fm_test.samples", "to": "eval.data"}
      ]
    })";
}

json minimalPipeline()
{
    return json::parse(minimalPipelineText());
}

json &nodeOf(json &p, const std::string &id)
{
    for (json &n : p["nodes"])
        if (n["id"] == id) return n;
    qFatal("test setup: no node %s", id.c_str());
}

void addNode(json &p, const std::string &id, const std::string &type, json params = json::object())
{
    p["nodes"].push_back({{"id", id}, {"type", type}, {"params", params}, {"position", {0, 0}}});
}

void wire(json &p, const std::string &from, const std::string &to)
{
    p["edges"].push_back({{"from", from}, {"to", to}});
}

void unwire(json &p, const std::string &from, const std::string &to)
{
    json &edges = p["edges"];
    for (size_t i = 0; i < edges.size(); ++i) {
        if (edges[i]["from"] == from && edges[i]["to"] == to) {
            edges.erase(i);
            return;
        }
    }
    qFatal("test setup: no edge %s -> %s", from.c_str(), to.c_str());
}

// Puts a layer between flatten and linear.
json withLayer(const std::string &id, const std::string &type, json params = json::object())
{
    json p = minimalPipeline();
    addNode(p, id, type, std::move(params));
    unwire(p, "flatten.out", "linear.in");
    wire(p, "flatten.out", id + ".in");
    wire(p, id + ".out", "linear.in");
    return p;
}

json withParam(const std::string &id, const std::string &name, json value)
{
    json p = minimalPipeline();
    nodeOf(p, id)["params"][name] = std::move(value);
    return p;
}

QByteArray bytes(const json &j)
{
    return QByteArray::fromStdString(j.dump(2));
}

PipelineDocument parseOrFail(const json &j)
{
    auto doc = parsePipeline(j.dump(), "test.json");
    if (!doc.ok()) qFatal("test setup: %s", doc.error().str().c_str());
    return std::move(doc).value();
}

QString listErrors(const std::vector<Error> &errors)
{
    QString out;
    for (const Error &e : errors)
        out += "\n  [" + QString::fromStdString(e.node) + "] " + QString::fromStdString(e.message);
    return out;
}

} // namespace

class TestGraph : public QObject {
    Q_OBJECT

private slots:
    void builtinTypes();
    void builtinDefaultsAreValid();
    void minimalPipelineIsValid();
    void validationErrors_data();
    void validationErrors();
    void allProblemsReported();
    void floatParamAcceptsInteger();
    void floatParamsAreCheckedAsFloats_data();
    void floatParamsAreCheckedAsFloats();
    void floatRoundingWithoutARange();
    void everyNumberHasARange();
    void parseErrors_data();
    void parseErrors();
    void roundTrip();
    void unknownFieldsKept();
    void saveAndLoad();
    void loadMissingFile();
    void applySettings_data();
    void applySettings();
    void badTextNeverThrows();
    void observerNotifications();
    void removeNodeRemovesEdges();
    void editingRefusesBadData();
    void paramDefaults();
    void lossParamsReachTheLoss();
    void checkEdgeBeforeAdding();
    void describeListsEverything();
    void nodeTypesJsonListsEverything();
    void deepNestingIsRefused();
    void otherJsonReadersRefuseDeepNesting();
    void safeTextEscapesWhatHidesOrReorders();
    void oddIdsAreQuotedSafely();
    void diffNamesWhatChanged();
    void savingKeepsTheFilesKeyOrder();
};

void TestGraph::builtinTypes()
{
    const std::set<std::string> expected = {"fashion_mnist",
                                            "idx_dataset",
                                            "image_folder",
                                            "image_list",
                                            "normalize",
                                            "input",
                                            "linear",
                                            "conv2d",
                                            "maxpool2d",
                                            "avgpool2d",
                                            "relu",
                                            "sigmoid",
                                            "tanh",
                                            "gelu",
                                            "flatten",
                                            "leaky_relu",
                                            "dropout",
                                            "batchnorm2d",
                                            "add",
                                            "cross_entropy",
                                            "mse",
                                            "sgd",
                                            "adam",
                                            "adamw",
                                            "train",
                                            "evaluate",
                                            "random_hflip",
                                            "random_affine",
                                            "random_crop",
                                            "audio_folder",
                                            "stft",
                                            "mel_spectrogram",
                                            "mfcc",
                                            "feature_norm",
                                            "add_noise",
                                            "time_shift",
                                            "noise_beside",
                                            "speech_beside",
                                            "speed_perturb",
                                            "clip",
                                            "room_mic",
                                            "vtlp",
                                            "pcen",
                                            "spec_augment",
                                            "normalize_channels",
                                            "center_crop",
                                            "grayscale",
                                            "color_jitter",
                                            "silu",
                                            "global_avg_pool",
                                            "batchnorm1d"};
    const auto &reg = exec::nodeTypes();
    std::set<std::string> actual;
    for (const NodeTypeSpec &t : reg.all()) {
        actual.insert(t.type);
        QVERIFY2(!t.help.empty() && !t.title.empty(), t.type.c_str());
        for (const auto *ports : {&t.inputs, &t.outputs})
            for (const PortSpec &p : *ports)
                QVERIFY2(!p.help.empty(), (t.type + "." + p.name).c_str());
        for (const ParamSpec &p : t.params)
            QVERIFY2(!p.help.empty(), (t.type + "." + p.name).c_str());
    }
    QCOMPARE(actual, expected);
    QCOMPARE(reg.all().size(), expected.size());

    QCOMPARE(reg.find("fashion_mnist")->category, std::string("Data"));
    QCOMPARE(reg.find("normalize")->category, std::string("Preprocess"));
    QCOMPARE(reg.find("conv2d")->category, std::string("Model"));
    QCOMPARE(reg.find("random_affine")->category, std::string("Augment"));
    QCOMPARE(reg.find("adamw")->category, std::string("Training"));
    QVERIFY(reg.find("nope") == nullptr);

    const ParamSpec *std_ = reg.find("normalize")->param("std");
    QVERIFY(std_ && std_->min == 1e-6 && !std_->minExclusive && std_->max == 1e6);
    const ParamSpec *p = reg.find("dropout")->param("p");
    QVERIFY(p && p->max == 1 && p->maxExclusive && p->min == 0 && !p->minExclusive);
    QCOMPARE(reg.find("adamw")->param("weight_decay")->defaultValue, json(0.01));
    QCOMPARE(reg.find("adam")->param("weight_decay")->defaultValue, json(0.0));
    QCOMPARE(reg.find("train")->param("device")->choices,
             (std::vector<std::string>{"auto", "cpu", "cuda"}));
    QCOMPARE(reg.find("fashion_mnist")->param("path")->defaultValue,
             json("/usr/share/datasets/fashion-mnist"));
    QVERIFY(reg.find("sgd")->param("schedule") && reg.find("adam")->param("min_lr"));
    QCOMPARE(reg.find("train")->input("model")->type, PortType::Tensor);
    QCOMPARE(reg.find("train")->output("trained")->type, PortType::Model);
    QCOMPARE(reg.find("evaluate")->input("model")->type, PortType::Model);
    QCOMPARE(reg.find("add")->inputs.size(), size_t(2));
    QCOMPARE(portTypeName(PortType::Optimizer), std::string_view("optimizer"));
}

void TestGraph::builtinDefaultsAreValid()
{
    for (const NodeTypeSpec &t : exec::nodeTypes().all()) {
        for (const ParamSpec &p : t.params) {
            Status s = checkParamValue(p, p.defaultValue, "n");
            QVERIFY2(s.ok(), (t.type + ": " + (s.ok() ? "" : s.error().message)).c_str());
        }
    }
}

void TestGraph::minimalPipelineIsValid()
{
    PipelineDocument doc = parseOrFail(minimalPipeline());
    QCOMPARE(doc.nodes().size(), size_t(10));
    QCOMPARE(doc.edges().size(), size_t(9));
    auto errors = validate(doc, exec::nodeTypes());
    QVERIFY2(errors.empty(), qPrintable(listErrors(errors)));
}

void TestGraph::validationErrors_data()
{
    QTest::addColumn<QByteArray>("pipeline");
    QTest::addColumn<QString>("node");
    QTest::addColumn<QStringList>("substrings");

    json p;

    p = minimalPipeline();
    nodeOf(p, "flatten")["type"] = "flaten";
    QTest::newRow("unknown type") << bytes(p) << "flatten"
                                  << QStringList{"unknown node type 'flaten'", "'flatten'"};

    p = minimalPipeline();
    addNode(p, "flatten", "relu");
    QTest::newRow("duplicate id") << bytes(p) << "flatten" << QStringList{"duplicate node id"};

    p = minimalPipeline();
    addNode(p, "warp", "random_affine");
    nodeOf(p, "warp")["params"] = {{"scale_min", 1.2}, {"scale_max", 0.8}};
    QTest::newRow("affine scale range")
        << bytes(p) << "warp.scale_min" << QStringList{"scale_min (1.2) is above scale_max (0.8)"};

    p = minimalPipeline();
    addNode(p, "bad id!", "cross_entropy");
    QTest::newRow("bad id chars") << bytes(p) << "bad id!" << QStringList{"invalid node id"};

    p = minimalPipeline();
    wire(p, "ghost.out", "train.model");
    QTest::newRow("edge from missing node")
        << bytes(p) << "ghost.out" << QStringList{"no node 'ghost'", "ghost.out -> train.model"};

    p = minimalPipeline();
    unwire(p, "train.trained", "eval.model");
    wire(p, "train.trained", "phantom.model");
    QTest::newRow("edge to missing node")
        << bytes(p) << "phantom.model" << QStringList{"no node 'phantom'"};

    p = minimalPipeline();
    unwire(p, "linear.out", "train.model");
    wire(p, "linear.outt", "train.model");
    QTest::newRow("missing output port")
        << bytes(p) << "linear.outt" << QStringList{"no output port 'outt'", "outputs: out"};

    p = minimalPipeline();
    unwire(p, "linear.out", "train.model");
    wire(p, "linear.out", "train.modle");
    QTest::newRow("missing input port")
        << bytes(p) << "train.modle"
        << QStringList{"no input port 'modle'", "data, model, loss, optimizer"};

    p = minimalPipeline();
    wire(p, "train.data", "eval.data");
    QTest::newRow("from an input port")
        << bytes(p) << "train.data" << QStringList{"train.data", "is an input port"};

    p = minimalPipeline();
    wire(p, "norm.samples", "fm_test.samples");
    QTest::newRow("into an output port")
        << bytes(p) << "fm_test.samples" << QStringList{"fm_test.samples", "is an output port"};

    p = minimalPipeline();
    unwire(p, "loss.loss", "train.loss");
    wire(p, "sgd.optimizer", "train.loss");
    QTest::newRow("type mismatch")
        << bytes(p) << "train.loss"
        << QStringList{"sgd.optimizer gives optimizer", "train.loss takes loss"};

    p = minimalPipeline();
    unwire(p, "train.trained", "eval.model");
    wire(p, "linear.out", "eval.model");
    QTest::newRow("tensor into model")
        << bytes(p) << "eval.model" << QStringList{"linear.out gives tensor", "takes model"};

    p = minimalPipeline();
    wire(p, "fm_test.samples", "norm.samples");
    QTest::newRow("two edges into one input")
        << bytes(p) << "norm.samples"
        << QStringList{"2 edges", "fm_train.samples", "fm_test.samples", "takes one"};

    p = minimalPipeline();
    unwire(p, "sgd.optimizer", "train.optimizer");
    QTest::newRow("required input unconnected")
        << bytes(p) << "train.optimizer" << QStringList{"required input", "not connected"};

    p = minimalPipeline();
    addNode(p, "res", "add");
    unwire(p, "flatten.out", "linear.in");
    wire(p, "flatten.out", "res.a");
    wire(p, "res.out", "linear.in");
    wire(p, "linear.out", "res.b");
    QTest::newRow("cycle") << bytes(p) << "linear"
                           << QStringList{"cycle", "linear -> res -> linear"};

    p = withLayer("act", "relu");
    wire(p, "act.out", "act.in");
    QTest::newRow("self loop") << bytes(p) << "act" << QStringList{"cycle: act -> act"};

    QTest::newRow("unknown param")
        << bytes(withParam("linear", "out_feature", 3)) << "linear.out_feature"
        << QStringList{"unknown parameter 'out_feature'", "'out_features'"};
    QTest::newRow("unknown param, type without params")
        << bytes(withParam("flatten", "dims", 1)) << "flatten.dims"
        << QStringList{"unknown parameter 'dims'", "no parameters"};
    QTest::newRow("int given string") << bytes(withParam("train", "epochs", "3")) << "train.epochs"
                                      << QStringList{"expects an integer"};
    QTest::newRow("int given float") << bytes(withParam("train", "epochs", 2.5)) << "train.epochs"
                                     << QStringList{"expects an integer", "2.5"};
    QTest::newRow("float given string") << bytes(withParam("sgd", "lr", "fast")) << "sgd.lr"
                                        << QStringList{"expects a number", "fast"};
    QTest::newRow("bool given int") << bytes(withParam("linear", "bias", 1)) << "linear.bias"
                                    << QStringList{"expects true or false"};
    QTest::newRow("path given number") << bytes(withParam("fm_train", "path", 5)) << "fm_train.path"
                                       << QStringList{"expects a path"};
    QTest::newRow("enum given number") << bytes(withParam("fm_train", "split", 1))
                                       << "fm_train.split" << QStringList{"train, test"};
    QTest::newRow("below min") << bytes(withParam("linear", "out_features", 0))
                               << "linear.out_features"
                               << QStringList{"= 0", "allowed: [1, 65536]"};
    QTest::newRow("negative int") << bytes(withParam("train", "seed", -1)) << "train.seed"
                                  << QStringList{"= -1", "out of range", "[0, 2147483647]"};
    QTest::newRow("above an int max")
        << bytes(withParam("train", "data_workers", 100000)) << "train.data_workers"
        << QStringList{"= 100000", "out of range", "allowed: [0, 256]"};
    QTest::newRow("std zero") << bytes(withParam("norm", "std", 0)) << "norm.std"
                              << QStringList{"= 0", "allowed: [1e-06, 1000000]"};
    QTest::newRow("exclusive min lr")
        << bytes(withParam("sgd", "lr", 0.0)) << "sgd.lr" << QStringList{"out of range", "(0, 10]"};
    QTest::newRow("above max") << bytes(withParam("sgd", "momentum", 1.5)) << "sgd.momentum"
                               << QStringList{"= 1.5", "allowed: [0, 1]"};
    QTest::newRow("exclusive max") << bytes(withLayer("drop", "dropout", {{"p", 1.0}})) << "drop.p"
                                   << QStringList{"out of range", "allowed: [0, 1)"};
    QTest::newRow("exclusive max beta") << bytes([] {
        json p = minimalPipeline();
        nodeOf(p, "sgd")["type"] = "adam";
        nodeOf(p, "sgd")["params"] = {{"beta2", 1}};
        return p;
    }()) << "sgd.beta2" << QStringList{"= 1", "[0, 1)"};
    QTest::newRow("enum not a choice")
        << bytes(withParam("fm_train", "split", "validation")) << "fm_train.split"
        << QStringList{"\"validation\"", "not one of: train, test"};
    QTest::newRow("enum device") << bytes(withParam("train", "device", "tpu")) << "train.device"
                                 << QStringList{"auto, cpu, cuda"};
    QTest::newRow("schedule") << bytes(withParam("sgd", "schedule", "linear")) << "sgd.schedule"
                              << QStringList{"constant, step, cosine"};
}

void TestGraph::validationErrors()
{
    QFETCH(QByteArray, pipeline);
    QFETCH(QString, node);
    QFETCH(QStringList, substrings);

    auto doc = parsePipeline(pipeline.toStdString(), "test.json");
    QVERIFY2(doc.ok(), doc.ok() ? "" : doc.error().str().c_str());
    auto errors = validate(doc.value(), exec::nodeTypes());
    bool found = false;
    for (const Error &e : errors) {
        if (QString::fromStdString(e.node) != node) continue;
        const QString message = QString::fromStdString(e.message);
        bool all = true;
        for (const QString &s : substrings)
            all = all && message.contains(s);
        found = found || all;
    }
    QVERIFY2(found, qPrintable("no error on '" + node + "' containing " + substrings.join(" | ") +
                               "; got:" + listErrors(errors)));
}

void TestGraph::allProblemsReported()
{
    json p = minimalPipeline();
    nodeOf(p, "linear")["params"]["out_features"] = 0;
    nodeOf(p, "train")["params"]["epochs"] = "many";
    nodeOf(p, "flatten")["type"] = "flattn";
    unwire(p, "loss.loss", "train.loss");
    auto errors = validate(parseOrFail(p), exec::nodeTypes());
    std::set<std::string> nodes;
    for (const Error &e : errors)
        nodes.insert(e.node);
    QCOMPARE(errors.size(), size_t(4));
    QCOMPARE(nodes, (std::set<std::string>{"linear.out_features", "train.epochs", "flatten",
                                           "train.loss"}));
}

void TestGraph::floatParamAcceptsInteger()
{
    auto errors = validate(parseOrFail(withParam("sgd", "lr", 1)), exec::nodeTypes());
    QVERIFY2(errors.empty(), qPrintable(listErrors(errors)));
    errors = validate(parseOrFail(withParam("sgd", "momentum", 1)), exec::nodeTypes());
    QVERIFY2(errors.empty(), qPrintable(listErrors(errors)));
}

// Float parameters are used as floats: the value, rounded to float, must be finite and inside
// the range (std = 1e-50 passed a check in double, became 0 and aborted the run).
void TestGraph::floatParamsAreCheckedAsFloats_data()
{
    QTest::addColumn<QString>("param"); // node.param of minimalPipeline()
    QTest::addColumn<QString>("value"); // as typed in --set and written in the file
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("expect"); // substring of the message

    QTest::newRow("std rounds to 0") << "norm.std"
                                     << "1e-50" << false << "norm.std = 1e-50 is out of range";
    QTest::newRow("std below its range") << "norm.std"
                                         << "1e-7" << false << "allowed: [1e-06, 1000000]";
    QTest::newRow("std at its documented end") << "norm.std"
                                               << "1e-6" << true << "";
    QTest::newRow("std at its upper end") << "norm.std"
                                          << "1e6" << true << "";
    QTest::newRow("mean beyond a float") << "norm.mean"
                                         << "1e39" << false << "allowed: [-1000000, 1000000]";
    QTest::newRow("mean beyond its range") << "norm.mean"
                                           << "-2e6" << false << "out of range";
    QTest::newRow("mean at its end") << "norm.mean"
                                     << "-1e6" << true << "";
    QTest::newRow("lr rounds to 0") << "sgd.lr"
                                    << "1e-50" << false << "allowed: (0, 10]";
    QTest::newRow("lr small but a float") << "sgd.lr"
                                          << "1e-30" << true << "";
    QTest::newRow("lr above its range") << "sgd.lr"
                                        << "10.5" << false << "allowed: (0, 10]";
    QTest::newRow("momentum rounds to 0, which is in range") << "sgd.momentum"
                                                             << "1e-60" << true << "";
}

void TestGraph::floatParamsAreCheckedAsFloats()
{
    QFETCH(QString, param);
    QFETCH(QString, value);
    QFETCH(bool, ok);
    QFETCH(QString, expect);
    const std::string id = param.section('.', 0, 0).toStdString();
    const std::string name = param.section('.', 1).toStdString();

    // In a file.
    auto errors = validate(parseOrFail(withParam(id, name, json::parse(value.toStdString()))), exec::nodeTypes());
    QVERIFY2(errors.empty() == ok, qPrintable(listErrors(errors)));
    if (!ok) {
        QCOMPARE(errors.size(), size_t(1));
        QCOMPARE(QString::fromStdString(errors[0].node), param);
        QVERIFY2(QString::fromStdString(errors[0].message).contains(expect),
                 errors[0].message.c_str());
    }

    // On the command line (--set).
    PipelineDocument doc = parseOrFail(minimalPipeline());
    Status s = applySetting(doc, (param + "=" + value).toStdString(), exec::nodeTypes());
    QCOMPARE(s.ok(), ok);
    if (!ok) {
        QCOMPARE(QString::fromStdString(s.error().node), param);
        QVERIFY2(QString::fromStdString(s.error().message).contains(expect),
                 s.error().message.c_str());
    }
}

// The rounding itself, on parameters whose range says nothing about floats' limits.
void TestGraph::floatRoundingWithoutARange()
{
    ParamSpec unbounded;
    unbounded.name = "x";
    unbounded.type = ParamType::Float;
    unbounded.defaultValue = 0.0;
    QVERIFY(checkParamValue(unbounded, 3.4e38, "n").ok());
    Status s = checkParamValue(unbounded, 1e39, "n");
    QVERIFY(!s.ok());
    QCOMPARE(s.error().node, std::string("n.x"));
    QVERIFY2(QString::fromStdString(s.error().message).contains("too large for a float"),
             s.error().message.c_str());
    QVERIFY(!checkParamValue(unbounded, -1e39, "n").ok());

    ParamSpec positive = unbounded;
    positive.min = 0;
    positive.minExclusive = true;
    QVERIFY(checkParamValue(positive, 1e-45, "n").ok()); // the smallest float above 0
    s = checkParamValue(positive, 1e-50, "n");
    QVERIFY(!s.ok());
    QVERIFY2(QString::fromStdString(s.error().message).contains("allowed: > 0"),
             s.error().message.c_str());

    // Ints are not rounded: 16777217 is no float, but a fine int.
    ParamSpec count;
    count.name = "k";
    count.type = ParamType::Int;
    count.defaultValue = 0;
    count.max = 16777217;
    QVERIFY(checkParamValue(count, 16777217, "n").ok());
    QVERIFY(!checkParamValue(count, 16777218, "n").ok());
}

// Every number a node takes has both ends, inside what the engine's int or float holds, and its
// default in between (100000 data workers aborted the run).
void TestGraph::everyNumberHasARange()
{
    for (const NodeTypeSpec &t : exec::nodeTypes().all()) {
        for (const ParamSpec &p : t.params) {
            if (p.type != ParamType::Int && p.type != ParamType::Float) continue;
            const std::string name = t.type + "." + p.name;
            QVERIFY2(std::isfinite(p.min) && std::isfinite(p.max), name.c_str());
            QVERIFY2(p.min < p.max, name.c_str());
            if (p.type == ParamType::Int) {
                QVERIFY2(p.min >= INT_MIN && p.max <= INT_MAX, name.c_str());
                QVERIFY2(std::floor(p.min) == p.min && std::floor(p.max) == p.max, name.c_str());
            } else {
                QVERIFY2(std::isfinite(float(p.min)) && std::isfinite(float(p.max)), name.c_str());
            }
            QVERIFY2(checkParamValue(p, p.defaultValue, "n").ok(), name.c_str());
            // The ends themselves, as the inspector's spin boxes offer them, and beyond.
            auto value = [&](double v) {
                return p.type == ParamType::Int ? json(static_cast<long long>(v)) : json(v);
            };
            if (!p.minExclusive) QVERIFY2(checkParamValue(p, value(p.min), "n").ok(), name.c_str());
            if (!p.maxExclusive) QVERIFY2(checkParamValue(p, value(p.max), "n").ok(), name.c_str());
            QVERIFY2(!checkParamValue(p, value(p.max * 2 + 1), "n").ok(), name.c_str());
        }
    }
}

void TestGraph::parseErrors_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("node");
    QTest::addColumn<QString>("substring");

    QTest::newRow("not json") << QByteArray("hello world") << 1 << ""
                              << "not valid JSON";
    QTest::newRow("empty") << QByteArray("") << 1 << ""
                           << "not valid JSON";
    QTest::newRow("syntax error on line 3")
        << QByteArray("{\n  \"format\": \"flowbench.pipeline\",\n  \"version\": 1 oops\n}") << 3
        << ""
        << "not valid JSON (line 3";

    // Cut the pretty text after its 12th line: the error is where the text stops.
    QByteArray full = bytes(minimalPipeline());
    int cut = 0;
    for (int i = 0; i < 12; ++i)
        cut = full.indexOf('\n', cut) + 1;
    QTest::newRow("truncated") << full.left(cut) << 12 << ""
                               << "end of input";
    QTest::newRow("truncated no newline") << full.left(cut - 1) << 12 << ""
                                          << "line 12";

    QTest::newRow("number overflow")
        << QByteArray(R"({"format": "flowbench.pipeline", "version": 1e999, "nodes": []})") << 0
        << ""
        << "number overflow";
    QTest::newRow("newer version")
        << QByteArray(R"({"format": "flowbench.pipeline", "version": 2, "nodes": []})") << 0 << ""
        << "written by a newer Flowbench (version 2); this build reads version 1";
    QTest::newRow("version 0")
        << QByteArray(R"({"format": "flowbench.pipeline", "version": 0, "nodes": []})") << 0 << ""
        << "unsupported version 0";
    QTest::newRow("version string")
        << QByteArray(R"({"format": "flowbench.pipeline", "version": "1", "nodes": []})") << 0 << ""
        << "\"version\" must be an integer";
    QTest::newRow("no version") << QByteArray(R"({"format": "flowbench.pipeline", "nodes": []})")
                                << 0 << ""
                                << "no \"version\"";
    QTest::newRow("wrong format") << QByteArray(
                                         R"({"format": "other.thing", "version": 1, "nodes": []})")
                                  << 0 << ""
                                  << "not a Flowbench pipeline: \"format\" is \"other.thing\"";
    QTest::newRow("no format") << QByteArray(R"({"version": 1, "nodes": []})") << 0 << ""
                               << "no \"format\"";
    QTest::newRow("array") << QByteArray("[1, 2]") << 0 << ""
                           << "expected a JSON object";

    auto withNodes = [](const char *nodes) {
        return QByteArray(R"({"format": "flowbench.pipeline", "version": 1, "nodes": )") + nodes +
               "}";
    };
    QTest::newRow("nodes not array") << withNodes("{}") << 0 << ""
                                     << "\"nodes\" must be an array";
    QTest::newRow("node not object") << withNodes("[3]") << 0 << ""
                                     << "nodes[0] must be an object";
    QTest::newRow("node without id") << withNodes(R"([{"type": "relu"}])") << 0 << ""
                                     << "nodes[0] has no \"id\"";
    QTest::newRow("id not string") << withNodes(R"([{"id": 7, "type": "relu"}])") << 0 << ""
                                   << "nodes[0]: \"id\" must be a string";
    QTest::newRow("empty id") << withNodes(R"([{"id": "", "type": "relu"}])") << 0 << ""
                              << "\"id\" is empty";
    QTest::newRow("type not string")
        << withNodes(R"([{"id": "a", "type": "relu"}, {"id": "b", "type": 5}])") << 0 << "b"
        << "nodes[1] (id 'b'): \"type\" must be a string";
    QTest::newRow("no type") << withNodes(R"([{"id": "a"}])") << 0 << "a"
                             << "nodes[0] (id 'a') has no \"type\"";
    QTest::newRow("params not object")
        << withNodes(R"([{"id": "a", "type": "relu", "params": [1]}])") << 0 << "a"
        << "\"params\" must be an object";
    QTest::newRow("bad position") << withNodes(R"([{"id": "a", "type": "relu", "position": [1]}])")
                                  << 0 << "a"
                                  << "\"position\" must be [x, y]";

    auto withEdges = [](const char *edges) {
        return QByteArray(R"({"format": "flowbench.pipeline", "version": 1, "nodes": [],
                             "edges": )") +
               edges + "}";
    };
    QTest::newRow("edges not array") << withEdges("3") << 0 << ""
                                     << "\"edges\" must be an array";
    QTest::newRow("edge without dot") << withEdges(R"([{"from": "a", "to": "b.in"}])") << 0 << ""
                                      << "edges[0]: \"from\" must be \"NODE.PORT\"";
    QTest::newRow("edge without to")
        << withEdges(R"([{"from": "a.out", "to": "b.in"}, {"from": "a.out"}])") << 0 << ""
        << "edges[1] has no \"to\"";
}

void TestGraph::parseErrors()
{
    QFETCH(QByteArray, text);
    QFETCH(int, line);
    QFETCH(QString, node);
    QFETCH(QString, substring);

    auto doc = parsePipeline(text.toStdString(), "dir/pipe.json");
    QVERIFY(!doc.ok());
    const Error &e = doc.error();
    QVERIFY2(QString::fromStdString(e.message).contains(substring), e.message.c_str());
    QCOMPARE(e.file, std::string("dir/pipe.json"));
    QCOMPARE(e.line, line);
    QCOMPARE(QString::fromStdString(e.node), node);
    QVERIFY(QString::fromStdString(e.str()).contains("dir/pipe.json"));
}

void TestGraph::roundTrip()
{
    const json original = minimalPipeline();
    auto parsed = parsePipeline(minimalPipelineText(), "test.json"); // in the literal's order
    QVERIFY(parsed.ok());
    PipelineDocument doc = std::move(parsed).value();
    const std::string text = serializePipeline(doc);
    QCOMPARE(json::parse(text), original);

    // Pretty, 2-space indent, the fields in the order people expect to read them.
    QVERIFY(text.rfind("{\n  \"format\": \"flowbench.pipeline\",\n  \"version\": 1,\n", 0) == 0);
    QVERIFY(text.find("\"nodes\"") < text.find("\"edges\""));
    QVERIFY(text.find("\"id\": \"fm_train\",\n      \"type\"") != std::string::npos);
    QCOMPARE(text.back(), '\n');

    // Non-integral positions survive; integral ones stay integers.
    doc.setPosition("norm", 12.5, -3);
    const json again = json::parse(serializePipeline(doc));
    QCOMPARE(again["nodes"][1]["position"], json::parse("[12.5, -3]"));
    QVERIFY(again["nodes"][1]["position"][1].is_number_integer());
    QVERIFY(again["nodes"][1]["position"][0].is_number_float());
}

void TestGraph::unknownFieldsKept()
{
    json original = minimalPipeline();
    original["description"] = "an MLP";
    original["gui"] = {{"zoom", 1.5}, {"grid", true}};
    nodeOf(original, "linear")["comment"] = "the classifier";
    nodeOf(original, "linear")["collapsed"] = true;
    original["edges"][2]["waypoints"] = json::parse("[[1, 2], [3, 4]]");
    original["edges"][2]["label"] = "pixels";

    PipelineDocument doc = parseOrFail(original);
    QCOMPARE(doc.extra()["description"], json("an MLP"));
    QCOMPARE(doc.node("linear")->extra["comment"], json("the classifier"));
    QCOMPARE(doc.edges()[2].extra["label"], json("pixels"));
    QVERIFY(!doc.node("linear")->extra.contains("params"));
    QVERIFY(!doc.extra().contains("nodes"));

    const json written = json::parse(serializePipeline(doc));
    QCOMPARE(written, original);
    QCOMPARE(written["gui"]["zoom"], json(1.5));
    QCOMPARE(written["nodes"][4]["collapsed"], json(true));
    QCOMPARE(written["edges"][2]["waypoints"][1][0], json(3));
}

void TestGraph::saveAndLoad()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("pipe.json").toStdString();
    json original = minimalPipeline();
    original["extra_top"] = {1, 2, 3};
    PipelineDocument doc = parseOrFail(original);

    Status saved = savePipeline(doc, path);
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().str().c_str());
    auto loaded = loadPipeline(path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().str().c_str());
    QCOMPARE(serializePipeline(loaded.value()), serializePipeline(doc));
    QCOMPARE(json::parse(serializePipeline(loaded.value())), original);

    // Saving over an existing file replaces it and leaves no temporary file behind.
    QVERIFY(doc.setParam("train", "epochs", 7).ok());
    QVERIFY(savePipeline(doc, path).ok());
    auto reloaded = loadPipeline(path);
    QVERIFY(reloaded.ok());
    QCOMPARE(reloaded->param("train", "epochs", exec::nodeTypes()), json(7));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"pipe.json"});

    QFile file(QString::fromStdString(path));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll().toStdString(), serializePipeline(doc));

    Status bad = savePipeline(doc, dir.filePath("no/such/dir/p.json").toStdString());
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.error().file).endsWith("no/such/dir/p.json"));
}

void TestGraph::loadMissingFile()
{
    auto doc = loadPipeline("/nonexistent/flowbench/pipe.json");
    QVERIFY(!doc.ok());
    QCOMPARE(doc.error().file, std::string("/nonexistent/flowbench/pipe.json"));
    QVERIFY(QString::fromStdString(doc.error().message).contains("cannot open"));

    QTemporaryDir dir;
    QFile file(dir.filePath("broken.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\n  \"format\": \"flowbench.pipeline\",\n  \"version\": 1,\n  \"nodes\": [\n");
    file.close();
    const std::string path = dir.filePath("broken.json").toStdString();
    auto broken = loadPipeline(path);
    QVERIFY(!broken.ok());
    QCOMPARE(broken.error().file, path);
    QCOMPARE(broken.error().line, 4);
}

void TestGraph::applySettings_data()
{
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("node");   // the error's node, or the changed node
    QTest::addColumn<QString>("expect"); // the message substring, or the new value as JSON

    QTest::newRow("int") << "train.epochs=5" << true << "train.epochs"
                         << "5";
    QTest::newRow("int plus") << "train.epochs=+5" << true << "train.epochs"
                              << "5";
    QTest::newRow("float") << "sgd.lr=0.05" << true << "sgd.lr"
                           << "0.05";
    QTest::newRow("float from int text") << "sgd.lr=1" << true << "sgd.lr"
                                         << "1.0";
    QTest::newRow("float exponent") << "sgd.weight_decay=5e-4" << true << "sgd.weight_decay"
                                    << "0.0005";
    QTest::newRow("bool false") << "linear.bias=false" << true << "linear.bias"
                                << "false";
    QTest::newRow("bool 1") << "train.shuffle=1" << true << "train.shuffle"
                            << "true";
    QTest::newRow("bool 0") << "train.shuffle=0" << true << "train.shuffle"
                            << "false";
    QTest::newRow("enum") << "fm_train.split=test" << true << "fm_train.split"
                          << "\"test\"";
    QTest::newRow("path verbatim") << "fm_train.path=/data/a=b c" << true << "fm_train.path"
                                   << "\"/data/a=b c\"";
    QTest::newRow("empty path") << "fm_train.path=" << true << "fm_train.path"
                                << "\"\"";

    QTest::newRow("unknown node") << "ghost.epochs=3" << false << "ghost"
                                  << "no node 'ghost'";
    QTest::newRow("unknown param") << "train.epoch=3" << false << "train.epoch"
                                   << "has no parameter 'epoch'";
    QTest::newRow("int given text") << "train.epochs=abc" << false << "train.epochs"
                                    << "expects an integer, got 'abc'";
    QTest::newRow("int given float") << "train.epochs=2.5" << false << "train.epochs"
                                     << "expects an integer";
    QTest::newRow("int trailing junk") << "train.epochs=3x" << false << "train.epochs"
                                       << "expects an integer";
    QTest::newRow("float given text") << "sgd.lr=fast" << false << "sgd.lr"
                                      << "expects a number, got 'fast'";
    QTest::newRow("float nan") << "sgd.lr=nan" << false << "sgd.lr"
                               << "expects a number";
    QTest::newRow("bool given text") << "train.shuffle=yes" << false << "train.shuffle"
                                     << "expects true or false";
    QTest::newRow("out of range") << "train.epochs=0" << false << "train.epochs"
                                  << "allowed: [1, 1000000]";
    QTest::newRow("data workers at most")
        << "train.data_workers=256" << true << "train.data_workers"
        << "256";
    QTest::newRow("data workers too many")
        << "train.data_workers=100000" << false << "train.data_workers"
        << "allowed: [0, 256]";
    QTest::newRow("not a choice") << "train.device=tpu" << false << "train.device"
                                  << "not one of: auto, cpu, cuda";
    QTest::newRow("no equals") << "train.epochs" << false << ""
                               << "expected NODE.PARAM=VALUE";
    QTest::newRow("no dot") << "epochs=3" << false << ""
                            << "expected NODE.PARAM=VALUE";
}

void TestGraph::applySettings()
{
    QFETCH(QString, assignment);
    QFETCH(bool, ok);
    QFETCH(QString, node);
    QFETCH(QString, expect);

    PipelineDocument doc = parseOrFail(minimalPipeline());
    const std::string before = serializePipeline(doc);
    Status s = applySetting(doc, assignment.toStdString(), exec::nodeTypes());
    QCOMPARE(s.ok(), ok);
    if (!ok) {
        QCOMPARE(QString::fromStdString(s.error().node), node);
        QVERIFY2(QString::fromStdString(s.error().message).contains(expect),
                 s.error().message.c_str());
        QCOMPARE(serializePipeline(doc), before); // nothing changed
        return;
    }
    const std::string id = node.section('.', 0, 0).toStdString();
    const std::string name = node.section('.', 1).toStdString();
    const json expected = json::parse(expect.toStdString());
    const json actual = doc.node(id)->params.value(name, json());
    QCOMPARE(actual, expected);
    QCOMPARE(actual.is_number_float(), expected.is_number_float());
    QCOMPARE(actual.is_string(), expected.is_string());
    QVERIFY(validate(doc, exec::nodeTypes()).empty());
}

void TestGraph::badTextNeverThrows()
{
    PipelineDocument doc = parseOrFail(minimalPipeline());
    // Invalid UTF-8 from a command line: stored, written with replacement characters, no throw.
    QVERIFY(applySetting(doc, "fm_train.path=/data/\xff\xfe", exec::nodeTypes()).ok());
    const std::string text = serializePipeline(doc);
    QVERIFY(text.find("/data/") != std::string::npos);
    QVERIFY(parsePipeline(text, "t.json").ok());

    // A huge wrong value is cut short in the message.
    json big = json::array();
    for (int i = 0; i < 1000; ++i)
        big.push_back(i);
    auto errors = validate(parseOrFail(withParam("train", "epochs", big)), exec::nodeTypes());
    QCOMPARE(errors.size(), size_t(1));
    QVERIFY(errors[0].message.size() < 200);
    QVERIFY(QString::fromStdString(errors[0].message).contains("[0,1,2,"));
}

void TestGraph::observerNotifications()
{
    using Change = PipelineDocument::Change;
    PipelineDocument doc;
    std::vector<Change> seen;
    int handle = doc.subscribe([&](const Change &c) { seen.push_back(c); });

    QVERIFY(doc.addNode({"a", "relu"}).ok());
    QVERIFY(doc.addNode({"b", "relu"}).ok());
    QCOMPARE(seen.size(), size_t(2));
    QCOMPARE(seen[0].kind, Change::NodeAdded);
    QCOMPARE(seen[1].nodeId, std::string("b"));

    QVERIFY(doc.addEdge({"a", "out", "b", "in"}).ok());
    QCOMPARE(seen.back().kind, Change::EdgeAdded);
    QCOMPARE(seen.back().edge.str(), std::string("a.out -> b.in"));

    QVERIFY(doc.setParam("a", "foo", 3).ok());
    QCOMPARE(seen.back().kind, Change::NodeChanged);
    QCOMPARE(seen.back().nodeId, std::string("a"));

    seen.clear();
    doc.setPosition("b", 10, 20);
    QCOMPARE(seen.size(), size_t(1));
    QCOMPARE(seen.back().kind, Change::NodeChanged);
    QCOMPARE(doc.node("b")->x, 10.0);

    seen.clear();
    QVERIFY(doc.removeEdge({"a", "out", "b", "in"}).ok());
    QCOMPARE(seen.size(), size_t(1));
    QCOMPARE(seen.back().kind, Change::EdgeRemoved);
    QVERIFY(!doc.removeEdge({"a", "out", "b", "in"}).ok());
    QCOMPARE(seen.size(), size_t(1)); // a failed edit tells no one

    QVERIFY(doc.addEdge({"a", "out", "b", "in"}).ok());
    seen.clear();
    QVERIFY(doc.removeNode("a").ok());
    QCOMPARE(seen.size(), size_t(2));
    QCOMPARE(seen[0].kind, Change::EdgeRemoved); // edges go before their node
    QCOMPARE(seen[1].kind, Change::NodeRemoved);
    QCOMPARE(seen[1].nodeId, std::string("a"));

    // Copies do not carry observers; unsubscribed observers hear nothing.
    PipelineDocument copy = doc;
    seen.clear();
    QVERIFY(copy.addNode({"c", "relu"}).ok());
    QVERIFY(seen.empty());
    doc.unsubscribe(handle);
    QVERIFY(doc.addNode({"d", "relu"}).ok());
    QVERIFY(seen.empty());
}

void TestGraph::removeNodeRemovesEdges()
{
    PipelineDocument doc = parseOrFail(minimalPipeline());
    QCOMPARE(doc.edgesInto("train").size(), size_t(4));
    QCOMPARE(doc.edgesFrom("train").size(), size_t(1));
    QVERIFY(doc.removeNode("train").ok());
    QVERIFY(doc.node("train") == nullptr);
    QCOMPARE(doc.nodes().size(), size_t(9));
    QCOMPARE(doc.edges().size(), size_t(4));
    for (const Edge &e : doc.edges())
        QVERIFY(e.fromNode != "train" && e.toNode != "train");
    QVERIFY(!doc.removeNode("train").ok());
}

void TestGraph::editingRefusesBadData()
{
    PipelineDocument doc = parseOrFail(minimalPipeline());
    Status dup = doc.addNode({"linear", "relu"});
    QVERIFY(!dup.ok());
    QCOMPARE(dup.error().node, std::string("linear"));
    QVERIFY(!doc.addNode({"a.b", "relu"}).ok());
    QVERIFY(!doc.addNode({"", "relu"}).ok());
    Status missing = doc.addEdge({"linear", "out", "nowhere", "in"});
    QVERIFY(!missing.ok());
    QVERIFY(QString::fromStdString(missing.error().message).contains("no node 'nowhere'"));
    QVERIFY(!doc.addEdge({"linear", "out", "train", "model"}).ok()); // already there
    QVERIFY(!doc.setParam("nowhere", "x", 1).ok());
    QCOMPARE(doc.nodes().size(), size_t(10));
    QCOMPARE(doc.edges().size(), size_t(9));

    QCOMPARE(doc.uniqueId("relu"), std::string("relu"));
    QCOMPARE(doc.uniqueId("linear"), std::string("linear2"));
    QVERIFY(doc.addNode({"linear2", "linear"}).ok());
    QCOMPARE(doc.uniqueId("linear"), std::string("linear3"));
    // A base ending in a number is renumbered, not extended ("linear22").
    QCOMPARE(doc.uniqueId("linear2"), std::string("linear3"));

    // Insertion at a place (undo puts a removed node or edge back where it was).
    QVERIFY(doc.addNode({"first", "relu"}, 0).ok());
    QCOMPARE(doc.nodes().front().id, std::string("first"));
    QCOMPARE(doc.nodeIndex("first"), 0);
    QVERIFY(doc.addNode({"late", "relu"}, 1000).ok()); // past the end: appended
    QCOMPARE(doc.nodes().back().id, std::string("late"));
    QVERIFY(doc.addEdge({"first", "out", "late", "in"}, 1).ok());
    QCOMPARE(doc.edges()[1].str(), std::string("first.out -> late.in"));
    QCOMPARE(doc.edgeIndex({"first", "out", "late", "in"}), 1);
    QCOMPARE(doc.edgeIndex({"late", "out", "first", "in"}), -1);
    QCOMPARE(doc.nodeIndex("nowhere"), -1);

    // Renaming keeps the node's and its edges' places and rewires the edges.
    const int place = doc.nodeIndex("first");
    QVERIFY(doc.renameNode("first", "renamed").ok());
    QCOMPARE(doc.nodeIndex("renamed"), place);
    QCOMPARE(doc.edges()[1].str(), std::string("renamed.out -> late.in"));
    QVERIFY(!doc.renameNode("renamed", "late").ok()); // taken
    QVERIFY(!doc.renameNode("renamed", "a b").ok());  // malformed
    QVERIFY(!doc.renameNode("nowhere", "x").ok());
    QVERIFY(doc.node("renamed"));
}

void TestGraph::paramDefaults()
{
    PipelineDocument doc = parseOrFail(minimalPipeline());
    QCOMPARE(doc.param("train", "epochs", exec::nodeTypes()), json(2));       // set in the file
    QCOMPARE(doc.param("train", "batch_size", exec::nodeTypes()), json(128)); // the type's default
    QCOMPARE(doc.param("fm_test", "split", exec::nodeTypes()), json("test"));
    QCOMPARE(doc.param("fm_train", "split", exec::nodeTypes()), json("train"));
    QVERIFY(doc.param("train", "nonsense", exec::nodeTypes()).is_null());
    QVERIFY(doc.param("nowhere", "epochs", exec::nodeTypes()).is_null());

    QVERIFY(doc.setParam("train", "epochs", nullptr).ok()); // null: back to the default
    QVERIFY(!doc.node("train")->params.contains("epochs"));
    QCOMPARE(doc.param("train", "epochs", exec::nodeTypes()), json(1));

    // A registry of one's own.
    NodeTypeRegistry reg;
    NodeTypeSpec t;
    t.type = "train";
    ParamSpec batch;
    batch.name = "batch_size";
    batch.defaultValue = 64;
    t.params.push_back(batch);
    reg.add(t);
    QCOMPARE(doc.param("train", "batch_size", reg), json(64));
    t.params[0].defaultValue = 32;
    reg.add(t); // replaces
    QCOMPARE(reg.all().size(), size_t(1));
    QCOMPARE(doc.param("train", "batch_size", reg), json(32));
}

// The loss node's parameters reach the loss the run trains with: cross_entropy's label_smoothing
// (0.3 makes the target 0.7 onehot + 0.1; test_reference_kernels has the arithmetic).
void TestGraph::lossParamsReachTheLoss()
{
    // NaN where the setting or the job is refused (std::nan's argument is no message).
    auto lossWith = [](const char *setting) {
        PipelineDocument doc = parseOrFail(minimalPipeline());
        if (setting && !applySetting(doc, setting, exec::nodeTypes()).ok()) return std::nan("");
        auto job = exec::readTrainingJob(doc);
        if (!job.ok()) return std::nan("");
        const std::unique_ptr<nn::Loss> loss = exec::buildLoss(job.value());
        Tensor logits = Tensor::empty({2, 3}), labels = Tensor::empty({2}, DType::I32);
        const float l[] = {1, 2, 3, 0, 0, 0};
        std::copy(std::begin(l), std::end(l), logits.f32());
        labels.data<int32_t>()[0] = 2, labels.data<int32_t>()[1] = 1;
        return double(loss->compute(referenceBackend(), logits, labels, nullptr).loss);
    };
    QVERIFY2(std::abs(lossWith(nullptr) - 0.753109127) < 1e-6, "the default: no smoothing");
    QVERIFY(std::abs(lossWith("loss.label_smoothing=0.3") - 0.903109127) < 1e-6);
    // logit_adjustment: evaluation reads the outputs as they are; training adds tau x log(the
    // class's share of the training labels): counts 1, 1, 2 add log(1/4), log(1/4), log(1/2),
    // and the gradient is the adjusted softmax's.
    QVERIFY(std::abs(lossWith("loss.logit_adjustment=1") - 0.753109127) < 1e-6);
    {
        PipelineDocument doc = parseOrFail(minimalPipeline());
        QVERIFY(applySetting(doc, "loss.logit_adjustment=1", exec::nodeTypes()).ok());
        auto job = exec::readTrainingJob(doc);
        QVERIFY(job.ok());
        const std::unique_ptr<nn::Loss> loss = exec::buildLoss(job.value());
        QVERIFY2(!loss->capturable(), "the adjusted step uploads its offsets");
        loss->setClassCounts({1, 1, 2});
        Tensor logits = Tensor::empty({2, 3}), labels = Tensor::empty({2}, DType::I32),
               grad = Tensor::empty({2, 3});
        const float l[] = {1, 2, 3, 0, 0, 0};
        std::copy(std::begin(l), std::end(l), logits.f32());
        labels.data<int32_t>()[0] = 2, labels.data<int32_t>()[1] = 1;
        const LossResult r = loss->compute(referenceBackend(), logits, labels, &grad);
        QVERIFY2(std::abs(r.loss - 0.805361488) < 1e-6,
                 qPrintable(QString::number(r.loss, 'g', 9)));
        const double want[] = {0.0270323, 0.0734814, -0.1005137, 0.125, -0.375, 0.25};
        for (int i = 0; i < 6; ++i)
            QVERIFY(std::abs(grad.f32()[i] - want[i]) < 1e-6);
        // 0.5 with counts 0, 2, 4: a class with no sample counts as half of one.
        PipelineDocument half = parseOrFail(minimalPipeline());
        QVERIFY(applySetting(half, "loss.logit_adjustment=0.5", exec::nodeTypes()).ok());
        const std::unique_ptr<nn::Loss> halfLoss =
            exec::buildLoss(exec::readTrainingJob(half).value());
        halfLoss->setClassCounts({0, 2, 4});
        const float h = halfLoss->compute(referenceBackend(), logits, labels, &grad).loss;
        QVERIFY2(std::abs(h - 0.669041326) < 1e-6, qPrintable(QString::number(h, 'g', 9)));
    }
    // 1 would make every class the target alike: refused, naming the parameter.
    PipelineDocument doc = parseOrFail(minimalPipeline());
    const Status s = applySetting(doc, "loss.label_smoothing=1", exec::nodeTypes());
    QVERIFY(!s.ok());
    QCOMPARE(QString::fromStdString(s.error().node), QString("loss.label_smoothing"));
}

void TestGraph::checkEdgeBeforeAdding()
{
    PipelineDocument doc = parseOrFail(minimalPipeline());
    QVERIFY(doc.addNode({"extra", "relu"}).ok());
    QVERIFY(checkEdge(doc, {"linear", "out", "extra", "in"}, exec::nodeTypes()).ok());
    Status taken = checkEdge(doc, {"extra", "out", "train", "model"}, exec::nodeTypes());
    QVERIFY(!taken.ok());
    QVERIFY(QString::fromStdString(taken.error().message).contains("already connected"));
    Status types = checkEdge(doc, {"sgd", "optimizer", "extra", "in"}, exec::nodeTypes());
    QVERIFY(!types.ok());
    QCOMPARE(types.error().node, std::string("extra.in"));
    QVERIFY(QString::fromStdString(types.error().message).contains("gives optimizer"));
    Status cycle = checkEdge(doc, {"linear", "out", "flatten", "in"}, exec::nodeTypes());
    QVERIFY(!cycle.ok());
    QVERIFY(doc.removeEdge({"input", "out", "flatten", "in"}).ok());
    cycle = checkEdge(doc, {"linear", "out", "flatten", "in"}, exec::nodeTypes());
    QVERIFY(!cycle.ok());
    QVERIFY(QString::fromStdString(cycle.error().message).contains("cycle"));
}

void TestGraph::describeListsEverything()
{
    const auto &reg = exec::nodeTypes();
    const QString text = QString::fromStdString(describeNodeTypes(reg));
    // One block per type, blank line between: "type - Title", help, ports, parameters.
    const QStringList blocks = text.split("\n\n", Qt::SkipEmptyParts);
    for (const NodeTypeSpec &t : reg.all()) {
        const QString header = QString::fromStdString(t.type + " - " + t.title + "\n");
        QString block;
        for (const QString &b : blocks)
            if (b.startsWith(header)) block = b;
        QVERIFY2(!block.isEmpty(), qPrintable(header));
        QVERIFY(block.contains(QString::fromStdString(t.help)));
        for (const auto *ports : {&t.inputs, &t.outputs}) {
            for (const PortSpec &p : *ports) {
                const QString line = QString::fromStdString("    " + p.name + " ");
                QVERIFY2(block.contains(line) && block.contains(QString::fromStdString(p.help)),
                         qPrintable(header + line));
            }
        }
        for (const ParamSpec &p : t.params) {
            QVERIFY2(block.contains(QString::fromStdString("    " + p.name + " ")),
                     qPrintable(header + QString::fromStdString(p.name)));
            QVERIFY(block.contains(QString::fromStdString(p.help)));
            QVERIFY(block.contains(QString::fromStdString("default " + p.defaultValue.dump())));
        }
    }
    QVERIFY(text.contains("== Data =="));
    QVERIFY(text.contains("== Training =="));
    QVERIFY(text.contains("float [0, 1)")); // dropout's p: the range is half-open
    QVERIFY(text.contains("enum {auto|cpu|cuda}"));
}

void TestGraph::nodeTypesJsonListsEverything()
{
    const auto &reg = exec::nodeTypes();
    const json j = nodeTypesJson(reg);
    QCOMPARE(j["format"], json("flowbench.node-types"));
    QCOMPARE(j["node_types"].size(), reg.all().size());
    for (size_t i = 0; i < reg.all().size(); ++i) {
        const NodeTypeSpec &t = reg.all()[i];
        const json &jt = j["node_types"][i];
        QCOMPARE(jt["type"], json(t.type));
        QCOMPARE(jt["category"], json(t.category));
        QCOMPARE(jt["inputs"].size(), t.inputs.size());
        QCOMPARE(jt["outputs"].size(), t.outputs.size());
        QCOMPARE(jt["params"].size(), t.params.size());
        for (size_t k = 0; k < t.inputs.size(); ++k) {
            QCOMPARE(jt["inputs"][k]["name"], json(t.inputs[k].name));
            QCOMPARE(jt["inputs"][k]["type"], json(std::string(portTypeName(t.inputs[k].type))));
        }
        for (size_t k = 0; k < t.outputs.size(); ++k)
            QCOMPARE(jt["outputs"][k]["name"], json(t.outputs[k].name));
        for (size_t k = 0; k < t.params.size(); ++k) {
            const ParamSpec &p = t.params[k];
            const json &jp = jt["params"][k];
            QCOMPARE(jp["name"], json(p.name));
            QCOMPARE(jp["type"], json(std::string(paramTypeName(p.type))));
            QCOMPARE(jp["default"], p.defaultValue);
            QCOMPARE(jp.contains("min"), std::isfinite(p.min));
            QCOMPARE(jp.contains("choices"), p.type == ParamType::Enum);
        }
    }
    const auto dropoutIndex = static_cast<size_t>(reg.find("dropout") - reg.all().data());
    const json &dropout = j["node_types"][dropoutIndex]["params"][0];
    QCOMPARE(dropout["max"], json(1.0));
    QCOMPARE(dropout["max_exclusive"], json(true));
    QCOMPARE(dropout["min_exclusive"], json(false));
}

namespace {

// A pipeline with an unknown top-level field "deep": arrays nested `levels` deep, so the file
// nests levels + 1 deep (its own object is one level).
std::string deeplyNested(int levels)
{
    return R"({"format": "flowbench.pipeline", "version": 1, "nodes": [], "deep": )" +
           std::string(size_t(levels), '[') + std::string(size_t(levels), ']') + "}";
}

} // namespace

// Unknown fields are kept verbatim, so 100,000 nested brackets in one parsed fine and then
// overflowed the stack when copied (SIGSEGV in validate and run). Refused before parsing.
void TestGraph::deepNestingIsRefused()
{
    const std::string deep = deeplyNested(100000);
    auto doc = parsePipeline(deep, "dir/deep.json");
    QVERIFY(!doc.ok());
    QCOMPARE(doc.error().file, std::string("dir/deep.json"));
    QCOMPARE(doc.error().line, 1);
    const QString text = QString::fromStdString(doc.error().str());
    // The bracket too many: the 64th of "deep", inside the file's object.
    const QString column = QString("(line 1, column %1)").arg(deep.find("[[") + 64);
    QVERIFY2(text.startsWith("dir/deep.json:1: ") && text.contains("more than 64 levels deep") &&
                 text.contains(column) && text.contains("Flowbench reads at most 64 levels"),
             qPrintable(text));

    // The limit, exactly: 64 levels are read (and kept), 65 are not.
    auto deepest = parsePipeline(deeplyNested(kMaxJsonNesting - 1), "ok.json");
    QVERIFY2(deepest.ok(), deepest.ok() ? "" : deepest.error().str().c_str());
    QVERIFY(deepest->extra().contains("deep"));
    QVERIFY(!parsePipeline(deeplyNested(kMaxJsonNesting), "no.json").ok());

    // Brackets inside strings, escaped quotes included, are text, not nesting.
    const std::string brackets(1000, '[');
    auto inString = parsePipeline(R"({"format": "flowbench.pipeline", "version": 1, "nodes": [],
        "note": "\"[)" + brackets + R"(", "more": ")" +
                                      brackets + R"(\\"})",
                                  "s.json");
    QVERIFY2(inString.ok(), inString.ok() ? "" : inString.error().str().c_str());

    // Line and column of the bracket too many.
    Status s = checkJsonNesting("{\n  \"a\": [[[\n", "f.json", 3);
    QVERIFY(!s.ok());
    QCOMPARE(s.error().line, 2);
    QVERIFY2(QString::fromStdString(s.error().message).contains("(line 2, column 10)"),
             s.error().message.c_str());
    QVERIFY(checkJsonNesting("{\n  \"a\": [[]]\n}", "f.json", 3).ok());
}

// The other readers of JSON from files and pipes use the same limit (json_nesting.h).
void TestGraph::otherJsonReadersRefuseDeepNesting()
{
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');

    // Commands on stdin.
    exec::ParsedCommand command = exec::parseCommand(deep);
    QVERIFY(!command.command);
    QVERIFY2(QString::fromStdString(command.rejection.message).contains("64 levels"),
             command.rejection.message.c_str());
    QVERIFY(exec::parseCommand(R"({"command": "pause", "id": [[[1]]]})").command);
    // set_lr takes a rate that is one as a float.
    QVERIFY(!exec::parseCommand(R"({"command": "set_lr", "lr": 1e-50})").command);
    QVERIFY(!exec::parseCommand(R"({"command": "set_lr", "lr": 1e39})").command);

    // Safetensors files: the header, and a model's saved preprocessing inside its metadata.
    QTemporaryDir dir;
    auto writeSafetensors = [&](const QString &name, const std::string &header) {
        const QString path = dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) qFatal("test setup: cannot write %s", qPrintable(path));
        QByteArray size(8, '\0');
        for (int i = 0; i < 8; ++i)
            size[i] = char((uint64_t(header.size()) >> (8 * i)) & 0xFF);
        f.write(size);
        f.write(header.data(), qint64(header.size()));
        return path.toStdString();
    };
    const std::string headerPath = writeSafetensors("header.safetensors", "{\"x\": " + deep + "}");
    auto header = io::readSafetensors(headerPath);
    QVERIFY(!header.ok());
    QCOMPARE(header.error().file, headerPath);
    QVERIFY2(QString::fromStdString(header.error().message).contains("64 levels"),
             header.error().message.c_str());

    const std::string modelPath = writeSafetensors(
        "model.safetensors", R"({"__metadata__": {"format": "flowbench.model", "pipeline": "{}",
            "class_names": "[]", "preprocessing": ")" +
                                 deep + "\"}}");
    auto model = exec::Predictor::open(modelPath, "cpu");
    QVERIFY(!model.ok());
    QCOMPARE(model.error().file, modelPath + " (saved preprocessing)");
    QVERIFY2(QString::fromStdString(model.error().message).contains("64 levels"),
             model.error().message.c_str());
}

void TestGraph::safeTextEscapesWhatHidesOrReorders()
{
    QCOMPARE(safeText("conv1.out_channels"), std::string("conv1.out_channels"));
    QCOMPARE(safeText(std::string("a\0b", 3)), std::string("a\\x00b"));
    QCOMPARE(safeText("one\ntwo\tthree\x1b[31m\x7f"),
             std::string("one\\x0Atwo\\x09three\\x1B[31m\\x7F"));
    // Bidirectional overrides and isolates, marks, line and paragraph separators, C1 controls.
    QCOMPARE(safeText("\u202Eevil\u202A\u2066x\u2069\u200F\u061C\u2028\xc2\x85"),
             std::string("\\u{202E}evil\\u{202A}\\u{2066}x\\u{2069}\\u{200F}\\u{061C}\\u{2028}"
                         "\\u{0085}"));
    // Other scripts stay; bytes that are not UTF-8 (stray, cut short, overlong, surrogates) not.
    QCOMPARE(safeText("caf\u00e9 \u4e2d\u6587 \U0001F600"),
             std::string("caf\u00e9 \u4e2d\u6587 \U0001F600"));
    QCOMPARE(safeText("\xff\xc3 \xc0\xaf \xed\xa0\x80"),
             std::string("\\xFF\\xC3 \\xC0\\xAF \\xED\\xA0\\x80"));
    // Escaping twice changes nothing more.
    const std::string once = safeText(std::string("a\0\u202E\\x", 7));
    QCOMPARE(safeText(once), once);
}

// A NUL in an id cut the message off at "node 'a"; control and bidirectional characters were
// printed as they were. Ids are refused, and every message quotes them escaped.
void TestGraph::oddIdsAreQuotedSafely()
{
    const std::string nul("a\0b", 3), rlo = "\u202Eevil", newline = "x\ny";
    json p = minimalPipeline();
    addNode(p, nul, "mse");
    addNode(p, rlo, "mse");
    addNode(p, newline, "mse");
    const auto errors = validate(parseOrFail(p), exec::nodeTypes());
    QCOMPARE(errors.size(), size_t(3));
    const std::map<std::string, std::string> shown{
        {nul, "a\\x00b"}, {rlo, "\\u{202E}evil"}, {newline, "x\\x0Ay"}};
    for (const Error &e : errors) {
        QVERIFY(shown.count(e.node)); // the node field keeps the id, so an editor can find it
        const std::string expected = "node '" + shown.at(e.node) + "': invalid node id '" +
                                     shown.at(e.node) + "': use only letters, digits";
        const std::string line = e.str();
        QVERIFY2(line.rfind(expected, 0) == 0, line.c_str());
        QCOMPARE(std::strlen(line.c_str()), line.size());
        QVERIFY(line.find('\n') == std::string::npos && line.find("\u202E") == std::string::npos);
    }

    // Edges, --set and the file's own structure errors quote them the same way.
    json q = minimalPipeline();
    wire(q, rlo + ".loss", "train.loss");
    bool edgeQuoted = false;
    for (const Error &e : validate(parseOrFail(q), exec::nodeTypes()))
        edgeQuoted = edgeQuoted || e.message.find("no node '\\u{202E}evil'") != std::string::npos;
    QVERIFY(edgeQuoted);
    PipelineDocument doc = parseOrFail(minimalPipeline());
    Status s = applySetting(doc, rlo + ".epochs=1", exec::nodeTypes());
    QVERIFY(!s.ok());
    QCOMPARE(s.error().node, rlo);
    QVERIFY2(s.error().message.find("no node '\\u{202E}evil'") != std::string::npos,
             s.error().message.c_str());
    auto noType = parsePipeline(
        R"({"format": "flowbench.pipeline", "version": 1, "nodes": [{"id": "a\u0000b"}]})",
        "dir/\u202Egnp.json");
    QVERIFY(!noType.ok());
    QCOMPARE(noType.error().str(),
             std::string("node 'a\\x00b': dir/\\u{202E}gnp.json: nodes[0] (id 'a\\x00b') has no "
                         "\"type\""));
}

// What differs between two runs' pipelines: changed parameters (a default written out is no
// change), a changed type, added and removed nodes and wires; positions are no difference.
void TestGraph::diffNamesWhatChanged()
{
    const json base = minimalPipeline();
    const PipelineDocument a = parseOrFail(base);
    const graph::NodeTypeRegistry &registry = exec::nodeTypes();

    json same = base;
    nodeOf(same, "linear")["position"] = json::array({900, 900});
    // The train node's default batch size, written out.
    nodeOf(same, "train")["params"]["batch_size"] =
        registry.find("train")->param("batch_size")->defaultValue;
    QVERIFY(diffPipelines(a, parseOrFail(same), &registry).empty());
    // Without the registry, the written-out default is a difference.
    QVERIFY(!diffPipelines(a, parseOrFail(same)).empty());

    json changed = base;
    nodeOf(changed, "sgd")["params"]["lr"] = 0.05;
    nodeOf(changed, "linear")["params"]["out_features"] = 12;
    nodeOf(changed, "loss")["type"] = "mse"; // a made-up type: the diff does not validate
    addNode(changed, "extra", "relu");
    json nodes = json::array();
    for (const json &n : changed["nodes"])
        if (n["id"] != "flatten") nodes.push_back(n);
    changed["nodes"] = nodes;
    json edges = json::array();
    for (const json &e : changed["edges"])
        if (e["from"] != "input.out" && e["from"] != "flatten.out") edges.push_back(e);
    edges.push_back({{"from", "input.out"}, {"to", "linear.in"}});
    changed["edges"] = edges;

    const PipelineDiff d = diffPipelines(a, parseOrFail(changed), &registry);
    std::map<std::string, const PipelineDiff::NodeChange *> byNode;
    for (const auto &n : d.nodes)
        byNode[n.node] = &n;
    QCOMPARE(byNode.size(), size_t(5));
    QCOMPARE(int(byNode["sgd"]->kind), int(PipelineDiff::NodeChange::Kind::Changed));
    QCOMPARE(byNode["sgd"]->params.size(), size_t(1));
    QCOMPARE(byNode["sgd"]->params[0].name, std::string("lr"));
    QCOMPARE(byNode["sgd"]->params[0].before, std::string("0.1"));
    QCOMPARE(byNode["sgd"]->params[0].after, std::string("0.05"));
    QCOMPARE(byNode["linear"]->params[0].after, std::string("12"));
    QCOMPARE(byNode["loss"]->typeBefore, std::string("cross_entropy"));
    QCOMPARE(byNode["loss"]->type, std::string("mse"));
    QCOMPARE(int(byNode["extra"]->kind), int(PipelineDiff::NodeChange::Kind::Added));
    QCOMPARE(int(byNode["flatten"]->kind), int(PipelineDiff::NodeChange::Kind::Removed));
    QCOMPARE(d.nodes.back().node, std::string("flatten")); // removed ones last
    QCOMPARE(d.edgesAdded, std::vector<std::string>{"input.out -> linear.in"});
    QCOMPARE(d.edgesRemoved.size(), size_t(2));

    // A parameter set to its default on one side only: shown as the default.
    json lrDefault = base;
    nodeOf(lrDefault, "sgd")["params"].erase("lr");
    const PipelineDiff d2 = diffPipelines(a, parseOrFail(lrDefault), &registry);
    QCOMPARE(d2.nodes.size(), size_t(1));
    QVERIFY(d2.nodes[0].params[0].afterIsDefault);
    QVERIFY(!d2.nodes[0].params[0].beforeIsDefault);
}

// A file saved again is the same text, and one changed value is a one-line diff: the keys stay
// where the file had them (the examples list "path" before "limit", "name" before "nodes").
void TestGraph::savingKeepsTheFilesKeyOrder()
{
    for (const char *name : {"fashion_mnist_mlp", "fashion_mnist_cnn", "spoken_digits"}) {
        const QString path = QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/") + name +
                             QStringLiteral(".json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::string text = f.readAll().toStdString();
        auto doc = parsePipeline(text, name);
        QVERIFY(doc.ok());
        if (text.back() != '\n') text += '\n'; // saved files end with a newline
        QCOMPARE(serializePipeline(*doc), text);
        QVERIFY(doc->setParam("train", "epochs", 7).ok());
        const QStringList before = QString::fromStdString(text).split('\n'),
                          after = QString::fromStdString(serializePipeline(*doc)).split('\n');
        QCOMPARE(after.size(), before.size());
        int changed = 0;
        for (int i = 0; i < before.size(); ++i)
            changed += before[i] != after[i];
        QCOMPARE(changed, 1);
    }
    // A new parameter goes after the ones the file had; unknown fields stay where they were.
    auto doc = parsePipeline(R"({"format": "flowbench.pipeline", "version": 1, "zeta": 1,
        "nodes": [{"type": "sgd", "note": "x", "id": "o", "params": {"momentum": 0.5, "lr": 0.1}}],
        "edges": []})",
                             "order.json");
    QVERIFY(doc.ok());
    QVERIFY(doc->setParam("o", "nesterov", true).ok());
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(serializePipeline(*doc));
    std::vector<std::string> rootKeys, nodeKeys, paramKeys;
    for (auto it = ordered.begin(); it != ordered.end(); ++it)
        rootKeys.push_back(it.key());
    for (auto it = ordered["nodes"][0].begin(); it != ordered["nodes"][0].end(); ++it)
        nodeKeys.push_back(it.key());
    for (auto it = ordered["nodes"][0]["params"].begin(); it != ordered["nodes"][0]["params"].end();
         ++it)
        paramKeys.push_back(it.key());
    QCOMPARE(rootKeys, (std::vector<std::string>{"format", "version", "zeta", "nodes", "edges"}));
    // The id and type lead, as format and version do: the rest as the file had them.
    QCOMPARE(nodeKeys, (std::vector<std::string>{"id", "type", "note", "params", "position"}));
    QCOMPARE(paramKeys, (std::vector<std::string>{"momentum", "lr", "nesterov"}));
}

QTEST_GUILESS_MAIN(TestGraph)
#include "test_graph.moc"
