#include "widgets/editing/edited_pipeline.h"

#include <QFileInfo>
#include <QTimer>

#include "widgets/editing/node_types.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/validate.h"
#include "widgets/editing/commands.h"
#include "widgets/files/atomic_write.h"

namespace fb::widgets {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

} // namespace

EditedPipeline::EditedPipeline(QObject *parent)
    : QObject(parent)
    , m_registry(&nodeTypes())
{
    m_subscription = m_doc.subscribe([this](const graph::PipelineDocument::Change &c) {
        emit documentChanged(c);
        scheduleValidation();
    });
    connect(&m_undo, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
    validateNow();
}

EditedPipeline::~EditedPipeline()
{
    m_doc.unsubscribe(m_subscription);
    // QUndoStack's destructor emits cleanChanged: it must not reach observers (through
    // modifiedChanged) while this object, and perhaps its owner, is half destroyed (UBSan).
    QObject::disconnect(&m_undo, nullptr, this, nullptr);
    blockSignals(true);
}

QString EditedPipeline::displayName() const
{
    if (!m_path.isEmpty()) return QFileInfo(m_path).fileName();
    return m_copyOf.isEmpty() ? tr("Untitled") : tr("%1 (example copy)").arg(m_copyOf);
}

void EditedPipeline::newPipeline()
{
    m_undo.clear();
    const graph::PipelineDocument empty;
    m_doc = empty; // copy-assignment (not move) keeps our subscription
    m_path.clear();
    m_copyOf.clear();
    emit documentReplaced();
    emit filePathChanged(m_path);
    emit modifiedChanged(false);
    validateNow();
}

Status EditedPipeline::load(const QString &path)
{
    auto loaded = graph::loadPipeline(path.toStdString());
    if (!loaded) return loaded.error();
    m_undo.clear();
    // Copy-assign (not move): the document keeps its observers, this object among them.
    const graph::PipelineDocument &doc = loaded.value();
    m_doc = doc;
    m_path = QFileInfo(path).absoluteFilePath();
    m_copyOf.clear();
    m_undo.setClean();
    emit documentReplaced();
    emit filePathChanged(m_path);
    emit modifiedChanged(false);
    validateNow();
    return {};
}

Status EditedPipeline::loadCopy(const QString &path)
{
    FB_TRY(load(path));
    m_path.clear();
    m_copyOf = QFileInfo(path).fileName();
    emit filePathChanged(m_path);
    return {};
}

Status EditedPipeline::restore(const QString &file, const QString &originalPath)
{
    auto loaded = graph::loadPipeline(file.toStdString());
    if (!loaded) return loaded.error();
    m_undo.clear();
    const graph::PipelineDocument &doc = loaded.value();
    m_doc = doc;
    m_path = originalPath.isEmpty() ? QString() : QFileInfo(originalPath).absoluteFilePath();
    m_copyOf.clear();
    m_undo.resetClean(); // no clean state: the restored edits are not in any saved file
    emit documentReplaced();
    emit filePathChanged(m_path);
    emit modifiedChanged(true);
    validateNow();
    return {};
}

Status EditedPipeline::save(const QString &path)
{
    Status written = writeFileAtomically(path, graph::serializePipeline(m_doc), "the pipeline");
    if (!written) return written;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const bool renamed = absolute != m_path;
    m_path = absolute;
    m_copyOf.clear();
    m_undo.setClean();
    if (renamed) emit filePathChanged(m_path);
    return {};
}

void EditedPipeline::scheduleValidation()
{
    if (m_validationPending) return;
    m_validationPending = true;
    // One validation after a burst of changes (a paste, an undo of many steps), not one each.
    QTimer::singleShot(0, this, [this] { validateNow(); });
}

void EditedPipeline::validateNow()
{
    m_validationPending = false;
    m_problems = graph::validate(m_doc, *m_registry);
    emit problemsChanged();
}

std::string EditedPipeline::addNode(const std::string &type, QPointF position)
{
    const graph::NodeTypeSpec *spec = m_registry->find(type);
    if (!spec) return {};
    graph::Node n;
    n.id = m_doc.uniqueId(type);
    n.type = type;
    n.x = position.x();
    n.y = position.y();
    const std::string id = n.id;
    m_undo.push(new AddItemsCommand(m_doc, {std::move(n)}, {}, tr("Add %1").arg(q(spec->title))));
    return id;
}

Status EditedPipeline::addEdge(const graph::Edge &edge)
{
    Status ok = graph::checkEdge(m_doc, edge, *m_registry);
    if (!ok) return ok;
    m_undo.push(new AddItemsCommand(m_doc, {}, {edge}, tr("Connect %1").arg(q(edge.str()))));
    return {};
}

Status EditedPipeline::moveEdge(const graph::Edge &from, const graph::Edge &to)
{
    graph::PipelineDocument trial = m_doc;
    if (!trial.removeEdge(from).ok()) return nodeError(from.toNode, "no edge " + from.str());
    Status ok = graph::checkEdge(trial, to, *m_registry);
    if (!ok) return ok;
    m_undo.beginMacro(tr("Move wire to %1").arg(q(to.toNode + "." + to.toPort)));
    m_undo.push(new RemoveItemsCommand(m_doc, {}, {from}, {}));
    m_undo.push(new AddItemsCommand(m_doc, {}, {to}, {}));
    m_undo.endMacro();
    return {};
}

void EditedPipeline::remove(const std::vector<std::string> &nodeIds,
                            const std::vector<graph::Edge> &edges)
{
    if (nodeIds.empty() && edges.empty()) return;
    QString text;
    if (nodeIds.size() == 1 && edges.empty())
        text = tr("Delete %1").arg(q(nodeIds.front()));
    else if (nodeIds.empty() && edges.size() == 1)
        text = tr("Disconnect %1").arg(q(edges.front().str()));
    else
        text = tr("Delete %n item(s)", nullptr, int(nodeIds.size() + edges.size()));
    m_undo.push(new RemoveItemsCommand(m_doc, nodeIds, edges, text));
}

Status EditedPipeline::renameNode(const std::string &nodeId, const std::string &newId)
{
    if (!m_doc.node(nodeId)) return nodeError(nodeId, "no node '" + nodeId + "'");
    if (newId == nodeId) return {};
    // The same checks the document makes, on a copy, so a refusal leaves no undo step behind.
    graph::PipelineDocument trial = m_doc;
    Status ok = trial.renameNode(nodeId, newId);
    if (!ok) return ok;
    m_undo.push(new RenameNodeCommand(m_doc, nodeId, newId));
    return {};
}

Status EditedPipeline::setParam(const std::string &nodeId, const std::string &name,
                                nlohmann::json value)
{
    const graph::Node *n = m_doc.node(nodeId);
    if (!n) return nodeError(nodeId, "no node '" + nodeId + "'");
    if (!value.is_null()) {
        if (const graph::NodeTypeSpec *spec = m_registry->find(n->type)) {
            if (const graph::ParamSpec *p = spec->param(name)) {
                Status ok = graph::checkParamValue(*p, value, nodeId);
                if (!ok) return ok;
            }
        }
    }
    auto it = n->params.find(name);
    if (it != n->params.end() ? *it == value : value.is_null()) return {}; // nothing changes
    m_undo.push(new SetParamCommand(m_doc, nodeId, name, std::move(value)));
    return {};
}

std::string EditedPipeline::fragment(const std::vector<std::string> &nodeIds) const
{
    graph::PipelineDocument part;
    for (const graph::Node &n : m_doc.nodes())
        if (std::find(nodeIds.begin(), nodeIds.end(), n.id) != nodeIds.end()) (void)part.addNode(n);
    for (const graph::Edge &e : m_doc.edges())
        if (part.node(e.fromNode) && part.node(e.toNode)) (void)part.addEdge(e);
    return graph::serializePipeline(part);
}

Result<std::vector<std::string>> EditedPipeline::paste(const std::string &text, QPointF offset,
                                                       const QString &undoText)
{
    auto parsed = graph::parsePipeline(text, "clipboard");
    if (!parsed) return parsed.error();
    const graph::PipelineDocument &part = parsed.value();
    if (part.nodes().empty()) return makeError("the clipboard holds no nodes");

    // Fresh ids, unique against the document and against each other.
    graph::PipelineDocument taken = m_doc;
    std::map<std::string, std::string> rename;
    std::vector<graph::Node> nodes;
    std::vector<std::string> ids;
    for (graph::Node n : part.nodes()) {
        if (rename.count(n.id)) continue; // a repeated id in the text: the first one counts
        const std::string original = n.id;
        n.id = taken.uniqueId(n.id);
        n.x += offset.x();
        n.y += offset.y();
        if (!taken.addNode(n).ok()) continue;
        rename[original] = n.id;
        ids.push_back(n.id);
        nodes.push_back(std::move(n));
    }
    if (nodes.empty()) return makeError("the clipboard holds no nodes that can be pasted");
    // Only the wires between pasted nodes, each once: text from elsewhere (the clipboard holds
    // whatever the person copied) may name nodes it does not hold, or repeat a wire.
    std::vector<graph::Edge> edges;
    for (graph::Edge e : part.edges()) {
        auto from = rename.find(e.fromNode), to = rename.find(e.toNode);
        if (from == rename.end() || to == rename.end()) continue;
        e.fromNode = from->second;
        e.toNode = to->second;
        if (!taken.addEdge(e).ok()) continue; // a repeat (or an empty port name)
        edges.push_back(std::move(e));
    }
    m_undo.push(new AddItemsCommand(
        m_doc, std::move(nodes), std::move(edges),
        undoText.isEmpty() ? tr("Paste %n node(s)", nullptr, int(ids.size())) : undoText));
    return ids;
}

} // namespace fb::widgets
