// Node types as units (core/exec/node_type.h): every registered type has the hooks its role
// needs and ports that fit it, nothing outside core/exec/nodes chooses behaviour by comparing
// type names, the descriptions survive their JSON form, and the window's copy
// (resources/node_types.json) is the engine's.

#include "core/data/transforms.h"
#include "core/exec/job.h"
#include "core/exec/node_type.h"
#include "core/nn/layer.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/validate.h"

#include <QtTest>

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>

#include <set>

using namespace fb;
using namespace fb::exec;
using graph::NodeRole;
using graph::PortType;

namespace {

// Comparisons of something named like a type with a string literal, either way round:
// `n.type == "train"`, `spec.sourceType != "audio_folder"`, `"mse" == lossType`.
const QRegularExpression kTypeComparison(
    R"re((\w*[Tt]ype\w*(?:\(\))?\s*[!=]=\s*"([a-z0-9_]+)")|("([a-z0-9_]+)"\s*[!=]=\s*(?:[\w.]|->)*[Tt]ype\b))re");

// The registered type names that a line compares with something named like a type.
QStringList typeNameComparisons(const QString &line, const std::set<std::string> &names)
{
    QStringList found;
    for (auto it = kTypeComparison.globalMatch(line); it.hasNext();) {
        const auto m = it.next();
        const QString name = m.captured(2).isEmpty() ? m.captured(4) : m.captured(2);
        if (names.count(name.toStdString())) found << name;
    }
    return found;
}

} // namespace

class TestNodeTypes : public QObject {
    Q_OBJECT

private slots:
    void everyTypeHasTheHooksAndPortsOfItsRole()
    {
        QVERIFY(nodeCatalog().all().size() >= 40);
        for (const NodeType &t : nodeCatalog().all()) {
            const graph::NodeTypeSpec &s = t.spec;
            const QByteArray what = QByteArray::fromStdString(
                s.type + " (" + std::string(graph::nodeRoleName(s.role)) + ")");
            const std::vector<std::string> missing = t.missingHooks();
            QVERIFY2(missing.empty(),
                     (what + " lacks " +
                      QByteArray::fromStdString(missing.empty() ? "" : missing.front()))
                         .constData());
            QCOMPARE(nodeTypes().find(s.type)->type, s.type); // described in the registry
            auto only = [](const std::vector<graph::PortSpec> &ports, PortType type) {
                return ports.size() == 1 && ports[0].type == type;
            };
            switch (s.role) {
            case NodeRole::Source:
                QVERIFY2(s.inputs.empty() && only(s.outputs, PortType::Samples), what);
                break;
            case NodeRole::Transform:
                QVERIFY2(only(s.inputs, PortType::Samples) && only(s.outputs, PortType::Samples),
                         what);
                break;
            case NodeRole::Input:
                QVERIFY2(s.inputs.empty() && only(s.outputs, PortType::Tensor), what);
                break;
            case NodeRole::Layer:
                QVERIFY2(!s.inputs.empty() && only(s.outputs, PortType::Tensor), what);
                for (const auto &in : s.inputs)
                    QVERIFY2(in.type == PortType::Tensor && !in.optional, what);
                break;
            case NodeRole::Loss:
                QVERIFY2(only(s.outputs, PortType::Loss), what);
                break;
            case NodeRole::Optimizer:
                QVERIFY2(only(s.outputs, PortType::Optimizer), what);
                break;
            case NodeRole::Train:
            case NodeRole::Evaluate:
                QVERIFY2(s.input("data") && s.input("model"), what);
                break;
            }
        }
        // The check itself: a layer without its maker is reported.
        NodeType bare;
        bare.spec.type = "bare";
        bare.spec.role = NodeRole::Layer;
        QCOMPARE(bare.missingHooks(), std::vector<std::string>{"makeLayer"});
        bare.spec.role = NodeRole::Optimizer;
        QCOMPARE(bare.missingHooks(), (std::vector<std::string>{"readOptimizer", "makeOptimizer"}));
    }

    // The model summary and the ONNX export need every layer type's cost and ONNX form (both
    // pure virtual on nn::Layer, so a layer cannot leave them out), and every data stage that is
    // not random an ONNX form: made with their default parameters, each writes operators.
    void everyLayerAndStageHasCostAndOnnxForm()
    {
        struct Recorder : ExportGraph {
            std::vector<std::string> ops;
            int names = 0;
            std::string name(const std::string &hint) override
            {
                return hint + "#" + std::to_string(++names);
            }
            std::string constant(const std::string &hint, const std::vector<int64_t> &,
                                 const std::vector<float> &) override
            {
                return name(hint);
            }
            std::string constantInts(const std::string &hint, const std::vector<int64_t> &) override
            {
                return name(hint);
            }
            void node(const std::string &op, const std::vector<std::string> &,
                      const std::vector<std::string> &,
                      const std::vector<ExportAttribute> &) override
            {
                ops.push_back(op);
            }
        };
        auto defaults = [](const NodeType &t) {
            graph::PipelineDocument doc;
            graph::Node n;
            n.id = "n";
            n.type = t.spec.type;
            if (!doc.addNode(n).ok()) qFatal("cannot add a %s node", t.spec.type.c_str());
            return NodeParams::of(doc, t.spec, "n", nodeTypes());
        };
        int layers = 0, stages = 0;
        for (const NodeType &t : nodeCatalog().all()) {
            const QByteArray what = QByteArray::fromStdString(t.spec.type);
            Recorder g;
            if (t.spec.role == NodeRole::Layer) {
                auto layer = t.makeLayer(defaults(t));
                QVERIFY2(layer.ok(), what);
                // A picture for layers that take one, features for those that take a vector.
                std::vector<Shape> in(size_t(layer.value()->inputCount()), Shape{8, 12, 12});
                if (!layer.value()->build(in).ok()) in.assign(in.size(), Shape{32});
                auto out = layer.value()->build(in);
                QVERIFY2(out.ok(), what);
                const nn::LayerCost c = layer.value()->cost(in, out.value());
                QVERIFY2(c.forward >= 0 && c.backwardInput >= 0 && c.backwardParams >= 0, what);
                std::vector<std::string> names(in.size(), "x");
                QVERIFY2(layer.value()->exportTo(g, names, "y", in).ok(), what);
                QVERIFY2(!g.ops.empty(), what);
                ++layers;
            } else if (t.spec.role == NodeRole::Transform) {
                DataSpec spec;
                auto stage = t.makeTransform(defaults(t), spec);
                if (stage->random()) continue; // never part of an exported model
                Shape in{3, 40, 40};
                if (!stage->outputShape(in).ok()) in = Shape{1, 1, 16000}; // a recording
                if (!stage->outputShape(in).ok()) {
                    // One that reads the spectrogram before it (pcen): after mel energies.
                    const NodeType &mel = *nodeCatalog().find("mel_spectrogram");
                    nlohmann::json energies = defaults(mel).values();
                    energies["to_db"] = false;
                    spec.transforms = {{"mel", "mel_spectrogram", energies},
                                       {"n", t.spec.type, defaults(t).values()}};
                    stage = t.makeTransform(defaults(t), spec);
                    in = Shape{1, 40, 101};
                }
                QVERIFY2(stage->outputShape(in).ok(), what);
                QVERIFY2(stage->exportTo(g, "x", "y", in).ok(), what);
                QVERIFY2(!g.ops.empty(), what);
                ++stages;
            }
        }
        QVERIFY(layers >= 16); // every type of the Model category but input
        // normalize, normalize_channels, center_crop, grayscale; stft, mel_spectrogram, mfcc,
        // pcen, feature_norm
        QVERIFY(stages >= 9);
    }

    // Behaviour is the node type's: a comparison of a type name anywhere else would bring back
    // the eight scattered dispatches this replaced, where a new data source needed six edits.
    void noTypeNameDispatchOutsideTheCatalog()
    {
        std::set<std::string> names;
        for (const NodeType &t : nodeCatalog().all())
            names.insert(t.spec.type);
        // The pattern finds what it is meant to find.
        QCOMPARE(typeNameComparisons(R"(if (n.type == "train") {)", names), QStringList{"train"});
        QCOMPARE(typeNameComparisons(R"(spec.sourceType != "audio_folder" ? a : b)", names),
                 QStringList{"audio_folder"});
        QCOMPARE(typeNameComparisons(R"(return "mse" == job.lossType;)", names),
                 QStringList{"mse"});
        QVERIFY(typeNameComparisons(R"(if (type == "progress"))", names).isEmpty()); // an event
        QVERIFY(typeNameComparisons(R"(o.subset == "train")", names).isEmpty());     // not a type

        const QString root = FLOWBENCH_SOURCE_DIR;
        QStringList found;
        int files = 0;
        for (const char *dir : {"core", "widgets", "app"}) {
            QDirIterator it(root + "/" + dir, {"*.cpp", "*.h"}, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString path = it.next();
                const QString rel = path.mid(root.size() + 1);
                if (rel.startsWith("core/exec/nodes/")) continue; // where types are defined
                QFile f(path);
                QVERIFY(f.open(QIODevice::ReadOnly));
                ++files;
                int number = 0;
                for (const QByteArray &line : f.readAll().split('\n')) {
                    ++number;
                    for (const QString &name : typeNameComparisons(QString::fromUtf8(line), names))
                        found << QString("%1:%2 compares a type with '%3'")
                                     .arg(rel)
                                     .arg(number)
                                     .arg(name);
                }
            }
        }
        QVERIFY(files > 100);
        QVERIFY2(found.isEmpty(),
                 qPrintable("ask the node's NodeType instead (core/exec/node_type.h):\n" +
                            found.join('\n')));
    }

    void descriptionsSurviveTheirJson()
    {
        const nlohmann::json j = graph::nodeTypesJson(nodeTypes());
        auto back = graph::nodeTypesFromJson(j);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().str().c_str());
        QCOMPARE(QString::fromStdString(graph::nodeTypesJson(back.value()).dump()),
                 QString::fromStdString(j.dump()));
        const graph::NodeTypeSpec *train = back->find("train");
        QVERIFY(train && train->role == NodeRole::Train && train->param("epochs")->runOnly &&
                !train->param("seed")->runOnly);
        QCOMPARE(back->find("random_affine")->param("scale_min")->atMost, std::string("scale_max"));

        nlohmann::json damaged = j;
        damaged["node_types"][3]["role"] = "wizard";
        auto bad = graph::nodeTypesFromJson(damaged);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().str().find("unknown role of 'image_list'") != std::string::npos,
                 bad.error().str().c_str());
        QVERIFY(!graph::nodeTypesFromJson(nlohmann::json::array()).ok());
    }

    // The window does not link the engine; it reads this file (widgets/editing/node_types.h).
    void windowsCopyIsTheEngines()
    {
        QFile f(QString(FLOWBENCH_SOURCE_DIR) + "/resources/node_types.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        const auto copy = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
        QVERIFY2(copy == graph::nodeTypesJson(nodeTypes()),
                 "resources/node_types.json differs from the engine's node types: run "
                 "scripts/update_node_table.sh");
    }

    // Rules that a single number's range cannot say are described as data too, so the window
    // checks them as the engine does.
    void rulesBetweenAndWithinParameters()
    {
        auto doc = graph::parsePipeline(R"({"format": "flowbench.pipeline", "version": 1,
            "nodes": [{"id": "n", "type": "normalize_channels", "params": {"std": "0.2, 0"}},
                      {"id": "w", "type": "random_affine",
                       "params": {"scale_min": 2, "scale_max": 1}}],
            "edges": []})",
                                        "t.json");
        QVERIFY2(doc.ok(), doc.ok() ? "" : doc.error().str().c_str());
        QStringList messages;
        for (const Error &e : graph::validate(doc.value(), nodeTypes()))
            messages << QString::fromStdString(e.str());
        QVERIFY2(messages.contains("node 'n.std': n.std = \"0.2, 0\": 0 is out of range; allowed: "
                                   "(0, 1000000]"),
                 qPrintable(messages.join('\n')));
        QVERIFY2(messages.contains("node 'w.scale_min': scale_min (2) is above scale_max (1)"),
                 qPrintable(messages.join('\n')));
    }
};

QTEST_GUILESS_MAIN(TestNodeTypes)
#include "test_node_types.moc"
