#pragma once

#include <map>
#include <string>

#include <QWidget>
#include <nlohmann/json.hpp>

class QLabel;
class QLineEdit;
class QFormLayout;
class QScrollArea;

namespace fb::graph {
struct ParamSpec;
}

namespace fb::widgets {

class EditedPipeline;

// The inspector: edits the selected node's parameters with editors that fit their types (spin
// boxes with the parameter's range, combo boxes for choices, checkboxes, file pickers), each with
// its help shown under it. Every change is one undo step through EditedPipeline; undo and redo
// show up here because the inspector observes the document, not its own editors.
class Inspector : public QWidget {
    Q_OBJECT
public:
    explicit Inspector(EditedPipeline *pipeline, QWidget *parent = nullptr);

    // Shows this node (empty: nothing selected).
    void showNode(const std::string &nodeId);
    // Several selected: says so instead of editing one.
    void showSelectionCount(int count);
    const std::string &nodeId() const { return m_nodeId; }
    // The editor of a parameter (for tests), or nullptr.
    QWidget *editor(const std::string &param) const;
    // The last refusal (a value out of range...), empty when the last edit was taken.
    QString lastError() const;
    // The field that renames the shown node (nullptr when none is shown).
    QLineEdit *idEditor() const { return m_idEdit; }
    // Commits what is typed in the focused editor and not yet committed (a spin box or a text
    // field commits on Enter or leaving it; Save, Run and Close call this first, since keyboard
    // shortcuts and toolbar buttons leave the focus where it is).
    void commitPending();

signals:
    // The shown node was renamed here (the canvas selects it under its new id).
    void nodeRenamed(const QString &oldId, const QString &newId);
    // Find Learning Rate… on an optimizer node: the window runs the range test.
    void findLearningRateRequested(const QString &nodeId);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void rebuild();
    void refreshValues();
    QWidget *makeEditor(const graph::ParamSpec &spec);
    void setEditorValue(QWidget *editor, const graph::ParamSpec &spec);
    void commit(const std::string &param, const nlohmann::json &value);
    void rename(const QString &newId);

    EditedPipeline *m_pipeline;
    std::string m_nodeId;
    std::string m_typeShown;
    QLabel *m_title;
    QLabel *m_help;
    QLabel *m_error;
    QWidget *m_form;
    QFormLayout *m_layout;
    std::map<std::string, QWidget *> m_editors;
    std::map<std::string, QLabel *> m_labels;
    QLineEdit *m_idEdit = nullptr;
};

} // namespace fb::widgets
