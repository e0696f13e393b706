#pragma once

#include <string>
#include <vector>

#include <QObject>
#include <QPointF>
#include <QString>
#include <QUndoStack>

#include "core/base/result.h"
#include "core/graph/document.h"
#include "core/graph/node_types.h"

namespace fb::widgets {

// The pipeline a person is editing: the document, its undo stack, the file it came from, whether
// it is saved, and its validation problems. The canvas, the inspector and the problems list all
// observe this one object; every edit goes through its undo stack.
class EditedPipeline : public QObject {
    Q_OBJECT
public:
    explicit EditedPipeline(QObject *parent = nullptr);
    ~EditedPipeline() override;

    graph::PipelineDocument &document() { return m_doc; }
    const graph::PipelineDocument &document() const { return m_doc; }
    const graph::NodeTypeRegistry &registry() const { return *m_registry; }
    QUndoStack *undoStack() { return &m_undo; }

    // Empty for a new pipeline that was never saved.
    QString filePath() const { return m_path; }
    // "fashion_mnist_cnn.json", "fashion_mnist_cnn.json (example copy)" for a copy not saved
    // yet, or "Untitled" for a new pipeline.
    QString displayName() const;
    // The file name a first Save suggests: the copied file's, or empty.
    QString suggestedFileName() const { return m_copyOf; }
    bool isModified() const { return !m_undo.isClean(); }

    // An empty pipeline, no file, nothing to undo.
    void newPipeline();
    // Replaces the document with the file's; on error nothing changes. Unknown fields survive
    // (core/graph keeps them), and a newer format version is refused with a clear message.
    Status load(const QString &path);
    // The same, as an untitled copy of the file (a shipped example): Save asks where to keep
    // it, so the original is never overwritten.
    Status loadCopy(const QString &path);
    // Atomic (QSaveFile): a failed save leaves the old file whole. Marks the document saved.
    Status save(const QString &path);
    // Replaces the document with a recovered copy (crash recovery: `file` is the autosave),
    // under the name of the file it was edited as (`originalPath`, empty for "Untitled"), and
    // marks it modified: it is not saved until the person saves it.
    Status restore(const QString &file, const QString &originalPath);

    // Every validation problem, recomputed (coalesced) after each change.
    const std::vector<Error> &problems() const { return m_problems; }

    // --- edits, each one undo step ---------------------------------------------------------
    // Adds a node of this type at the scene position; returns its id (empty if the type is
    // unknown). The id is made from the type ("conv2d", "conv2d2", ...).
    std::string addNode(const std::string &type, QPointF position);
    // Adds an edge after checking it (graph::checkEdge): the error says why it was refused.
    Status addEdge(const graph::Edge &edge);
    // Moves a wire to other ends (a wire picked up at its input and dropped on another): one
    // undo step; refused, with the reason, when the new wire would not be valid without the old.
    Status moveEdge(const graph::Edge &from, const graph::Edge &to);
    // Removes nodes (and their edges) and edges.
    void remove(const std::vector<std::string> &nodeIds, const std::vector<graph::Edge> &edges);
    // Renames a node (its wires follow); the error says why a name is refused.
    Status renameNode(const std::string &nodeId, const std::string &newId);
    // Sets a parameter after checking it against its description; null removes it.
    Status setParam(const std::string &nodeId, const std::string &name, nlohmann::json value);

    // Copy and paste: a fragment is a small pipeline file (same format) holding the nodes and
    // the edges between them; pasting gives the nodes fresh ids, keeps their inner edges and
    // shifts them by `offset`. Returns the ids of the pasted nodes.
    std::string fragment(const std::vector<std::string> &nodeIds) const;
    Result<std::vector<std::string>> paste(const std::string &fragmentText, QPointF offset,
                                           const QString &undoText = {});

signals:
    // The whole document was swapped (new, load): observers rebuild from scratch.
    void documentReplaced();
    // One change, as the document reported it.
    void documentChanged(const fb::graph::PipelineDocument::Change &change);
    void problemsChanged();
    void modifiedChanged(bool modified);
    void filePathChanged(const QString &path);

private:
    void scheduleValidation();
    void validateNow();

    graph::PipelineDocument m_doc;
    const graph::NodeTypeRegistry *m_registry;
    QUndoStack m_undo;
    QString m_path;
    QString m_copyOf; // the file name of what this is an unsaved copy of
    std::vector<Error> m_problems;
    bool m_validationPending = false;
    int m_subscription = 0;
};

} // namespace fb::widgets
