#include "widgets/inspector/inspector.h"

#include <climits>
#include <cmath>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QMenu>
#include <QScrollArea>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/graph/document.h"
#include "core/graph/node_types.h"
#include "widgets/editing/edited_pipeline.h"

namespace fb::widgets {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

// A spin box for real numbers that shows and reads them the way people write them ("0.001",
// "1e-08", "0.9"), where QDoubleSpinBox would show a fixed number of decimals and round small
// values such as Adam's eps to zero.
class RealSpinBox : public QDoubleSpinBox {
public:
    explicit RealSpinBox(QWidget *parent = nullptr)
        : QDoubleSpinBox(parent)
    {
        setDecimals(15);
        setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
        setKeyboardTracking(false);
    }
    QString textFromValue(double v) const override { return QString::number(v, 'g', 10); }
    double valueFromText(const QString &text) const override
    {
        bool ok = false;
        const double v = locale().toDouble(text.trimmed(), &ok);
        return ok ? v : QString(text).trimmed().toDouble();
    }
    QValidator::State validate(QString &text, int &) const override
    {
        const QString t = text.trimmed();
        if (t.isEmpty() || t == "-" || t == "+" || t.endsWith('e') || t.endsWith('E') ||
            t.endsWith("e-") || t.endsWith("E-"))
            return QValidator::Intermediate;
        bool ok = false;
        const double v = t.toDouble(&ok);
        if (!ok) locale().toDouble(t, &ok);
        if (!ok) return QValidator::Invalid;
        return (v >= minimum() && v <= maximum()) ? QValidator::Acceptable
                                                  : QValidator::Intermediate;
    }
};

double bound(double v, double fallback)
{
    return std::isfinite(v) ? v : fallback;
}

} // namespace

Inspector::Inspector(EditedPipeline *pipeline, QWidget *parent)
    : QWidget(parent)
    , m_pipeline(pipeline)
    , m_title(new QLabel(this))
    , m_help(new QLabel(this))
    , m_error(new QLabel(this))
    , m_form(new QWidget)
    , m_layout(new QFormLayout(m_form))
{
    m_title->setTextFormat(Qt::RichText);
    m_title->setWordWrap(true);
    m_help->setWordWrap(true);
    m_help->setForegroundRole(QPalette::PlaceholderText);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #d63031"));
    m_error->hide();
    m_layout->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_layout->setLabelAlignment(Qt::AlignRight | Qt::AlignTop);

    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(m_form);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_title);
    layout->addWidget(m_help);
    layout->addWidget(m_error);
    layout->addWidget(scroll, 1);

    connect(pipeline, &EditedPipeline::documentReplaced, this, [this] { showNode({}); });
    connect(pipeline, &EditedPipeline::documentChanged, this,
            [this](const graph::PipelineDocument::Change &c) {
                if (c.nodeId != m_nodeId || m_nodeId.empty()) return;
                if (c.kind == graph::PipelineDocument::Change::NodeRemoved)
                    showNode({});
                else if (c.kind == graph::PipelineDocument::Change::NodeChanged)
                    refreshValues();
            });
    showNode({});
}

void Inspector::showSelectionCount(int count)
{
    showNode({});
    if (count > 1) m_title->setText(tr("<b>%n nodes selected</b>", nullptr, count));
}

void Inspector::showNode(const std::string &nodeId)
{
    m_nodeId = nodeId;
    m_error->hide();
    rebuild();
}

QWidget *Inspector::editor(const std::string &param) const
{
    auto it = m_editors.find(param);
    return it == m_editors.end() ? nullptr : it->second;
}

void Inspector::rename(const QString &newId)
{
    if (m_nodeId.empty() || newId.toStdString() == m_nodeId) return;
    const QString oldId = q(m_nodeId);
    Status ok = m_pipeline->renameNode(m_nodeId, newId.toStdString());
    if (!ok) {
        m_error->setText(q(ok.error().str()));
        m_error->show();
        if (m_idEdit) m_idEdit->setText(oldId);
        return;
    }
    m_error->hide();
    showNode(newId.toStdString());
    emit nodeRenamed(oldId, newId);
}

void Inspector::commitPending()
{
    QWidget *focus = QApplication::focusWidget();
    if (!focus || !isAncestorOf(focus)) return;
    if (focus == m_idEdit) {
        rename(m_idEdit->text());
        return;
    }
    for (const auto &[name, editor] : m_editors) {
        if (editor != focus && !editor->isAncestorOf(focus)) continue;
        if (auto *spin = qobject_cast<QAbstractSpinBox *>(editor))
            spin->interpretText(); // emits valueChanged when the text differs: a commit
        else if (auto *edit = qobject_cast<QLineEdit *>(editor)) {
            const std::string param = name.size() > 6 && name.ends_with("#field")
                                          ? name.substr(0, name.size() - 6)
                                          : name;
            commit(param, nlohmann::json(edit->text().toStdString()));
        }
        return;
    }
}

bool Inspector::eventFilter(QObject *watched, QEvent *event)
{
    // The wheel scrolls the inspector; it changes a spin box or a choice only when that editor
    // has the focus (clicked or tabbed into), so scrolling past never edits the pipeline.
    if (event->type() == QEvent::Wheel) {
        auto *w = qobject_cast<QWidget *>(watched);
        if (w && !w->hasFocus()) {
            event->ignore();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString Inspector::lastError() const
{
    return m_error->isVisible() ? m_error->text() : QString();
}

void Inspector::rebuild()
{
    while (m_layout->rowCount() > 0)
        m_layout->removeRow(0);
    m_editors.clear();
    m_labels.clear();
    m_idEdit = nullptr;
    m_typeShown.clear();

    const graph::Node *n = m_pipeline->document().node(m_nodeId);
    if (!n) {
        m_title->setText(tr("<i>Select a node to edit its parameters.</i>"));
        m_help->clear();
        m_help->hide();
        return;
    }
    const graph::NodeTypeSpec *spec = m_pipeline->registry().find(n->type);
    m_typeShown = n->type;
    if (!spec) {
        m_title->setText(QStringLiteral("<b>%1</b>").arg(q(n->id).toHtmlEscaped()));
        m_help->setText(
            tr("Unknown node type '%1': its parameters cannot be edited here.").arg(q(n->type)));
        m_help->show();
        return;
    }
    m_title->setText(QStringLiteral("<b>%1</b> &nbsp;<span>%2</span> <small>(%3)</small>")
                         .arg(q(n->id).toHtmlEscaped(), q(spec->title).toHtmlEscaped(),
                              q(spec->category).toHtmlEscaped()));
    m_help->setText(q(spec->help));
    m_help->setVisible(!spec->help.empty());
    // The id first: it names the node in wires, messages and the file.
    m_idEdit = new QLineEdit(q(n->id));
    m_idEdit->setObjectName(QStringLiteral("id"));
    m_idEdit->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("[A-Za-z0-9_-]+")), m_idEdit));
    m_idEdit->setToolTip(tr("The node's name in the pipeline: letters, digits, '_' and '-'. "
                            "Wires follow a rename."));
    connect(m_idEdit, &QLineEdit::editingFinished, this, [this] {
        // Later, not inside the field's own signal: a rename rebuilds this form, field included.
        const QString text = m_idEdit->text();
        QMetaObject::invokeMethod(
            this, [this, text] { rename(text); }, Qt::QueuedConnection);
    });
    auto *idLabel = new QLabel(tr("id"));
    QFont bold = idLabel->font();
    bold.setBold(true);
    idLabel->setFont(bold);
    m_layout->addRow(idLabel, m_idEdit);
    if (spec->params.empty()) {
        auto *none = new QLabel(tr("<i>This node has no parameters.</i>"));
        m_layout->addRow(none);
    }
    for (const graph::ParamSpec &p : spec->params) {
        QWidget *ed = makeEditor(p);
        auto *label = new QLabel(q(p.name));
        QString tip = q(p.help);
        const std::string range = p.rangeText();
        if (!range.empty()) tip += tr("<br>Range: %1").arg(q(range).toHtmlEscaped());
        tip += tr("<br>Default: %1").arg(q(graph::jsonText(p.defaultValue)).toHtmlEscaped());
        label->setToolTip(tip);
        ed->setToolTip(tip);
        // The editor with its help under it, as the issue asks: help is read, not hovered for.
        auto *cell = new QWidget;
        auto *v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 4);
        v->setSpacing(1);
        v->addWidget(ed);
        if (!p.help.empty()) {
            auto *help = new QLabel(
                q(p.help) + (range.empty() ? QString() : QStringLiteral(" (%1)").arg(q(range))));
            help->setWordWrap(true);
            help->setForegroundRole(QPalette::PlaceholderText);
            QFont f = help->font();
            f.setPointSizeF(f.pointSizeF() * 0.85);
            help->setFont(f);
            v->addWidget(help);
        }
        m_layout->addRow(label, cell);
        m_editors[p.name] = ed;
        m_labels[p.name] = label;
    }
    if (spec->role == graph::NodeRole::Optimizer && spec->param("lr")) {
        auto *find = new QPushButton(tr("Find Learning Rate…"));
        find->setObjectName("find_learning_rate");
        find->setToolTip(tr("Train a few steps with the rate rising from 1e-6 to 1 and plot the "
                            "loss against it: a suggested rate, never set without you"));
        const QString id = q(m_nodeId);
        connect(find, &QPushButton::clicked, this,
                [this, id] { emit findLearningRateRequested(id); });
        m_layout->addRow(find);
    }
    refreshValues();
}

QWidget *Inspector::makeEditor(const graph::ParamSpec &p)
{
    const std::string name = p.name;
    switch (p.type) {
    case graph::ParamType::Int: {
        auto *box = new QSpinBox;
        double lo = bound(p.min, double(INT_MIN)), hi = bound(p.max, double(INT_MAX));
        if (p.minExclusive) lo += 1;
        if (p.maxExclusive) hi -= 1;
        box->setRange(int(std::max(lo, double(INT_MIN))), int(std::min(hi, double(INT_MAX))));
        box->setKeyboardTracking(false);
        box->setObjectName(q(name));
        box->setFocusPolicy(Qt::StrongFocus);
        box->installEventFilter(this);
        connect(box, &QSpinBox::valueChanged, this,
                [this, name](int v) { commit(name, nlohmann::json(v)); });
        return box;
    }
    case graph::ParamType::Float: {
        auto *box = new RealSpinBox;
        box->setRange(bound(p.min, -1e15), bound(p.max, 1e15));
        box->setObjectName(q(name));
        box->setFocusPolicy(Qt::StrongFocus);
        box->installEventFilter(this);
        connect(box, &QDoubleSpinBox::valueChanged, this,
                [this, name](double v) { commit(name, nlohmann::json(v)); });
        return box;
    }
    case graph::ParamType::Bool: {
        auto *box = new QCheckBox;
        box->setObjectName(q(name));
        connect(box, &QCheckBox::toggled, this,
                [this, name](bool v) { commit(name, nlohmann::json(v)); });
        return box;
    }
    case graph::ParamType::Enum: {
        auto *box = new QComboBox;
        for (const std::string &c : p.choices)
            box->addItem(q(c));
        box->setObjectName(q(name));
        box->setFocusPolicy(Qt::StrongFocus);
        box->installEventFilter(this);
        connect(box, &QComboBox::activated, this, [this, name, box](int) {
            commit(name, nlohmann::json(box->currentText().toStdString()));
        });
        return box;
    }
    case graph::ParamType::String:
    case graph::ParamType::Path: {
        auto *edit = new QLineEdit;
        edit->setObjectName(q(name));
        connect(edit, &QLineEdit::editingFinished, this,
                [this, name, edit] { commit(name, nlohmann::json(edit->text().toStdString())); });
        if (p.type == graph::ParamType::String) return edit;
        // A path: the text field and a button that picks a file or a folder.
        auto *row = new QWidget;
        auto *h = new QHBoxLayout(row);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(edit, 1);
        auto *pick = new QToolButton;
        pick->setText(QStringLiteral("…"));
        pick->setToolTip(tr("Choose a file or a folder"));
        pick->setPopupMode(QToolButton::InstantPopup);
        auto *menu = new QMenu(pick);
        auto choose = [this, name, edit](bool folder) {
            const QString start = QFileInfo(edit->text()).exists() ? edit->text() : QString();
            const QString chosen =
                folder ? QFileDialog::getExistingDirectory(this, tr("Choose a folder"), start)
                       : QFileDialog::getOpenFileName(this, tr("Choose a file"), start);
            if (chosen.isEmpty()) return;
            edit->setText(chosen);
            commit(name, nlohmann::json(chosen.toStdString()));
        };
        menu->addAction(tr("Choose file…"), this, [choose] { choose(false); });
        menu->addAction(tr("Choose folder…"), this, [choose] { choose(true); });
        pick->setMenu(menu);
        h->addWidget(pick);
        row->setObjectName(q(name) + QStringLiteral("_row"));
        m_editors[name + "#field"] = edit;
        return row;
    }
    }
    return new QWidget;
}

void Inspector::refreshValues()
{
    const graph::Node *n = m_pipeline->document().node(m_nodeId);
    if (!n) return;
    if (n->type != m_typeShown) {
        rebuild();
        return;
    }
    const graph::NodeTypeSpec *spec = m_pipeline->registry().find(n->type);
    if (!spec) return;
    for (const graph::ParamSpec &p : spec->params) {
        auto it = m_editors.find(p.type == graph::ParamType::Path ? p.name + "#field" : p.name);
        if (it == m_editors.end()) continue;
        setEditorValue(it->second, p);
        // A value set in the file shows in bold; a default in the normal weight.
        if (QLabel *label = m_labels[p.name]) {
            QFont f = label->font();
            f.setBold(n->params.contains(p.name));
            label->setFont(f);
        }
    }
}

void Inspector::setEditorValue(QWidget *editor, const graph::ParamSpec &p)
{
    const nlohmann::json v = m_pipeline->document().param(m_nodeId, p.name, m_pipeline->registry());
    const QSignalBlocker block(editor);
    try {
        if (auto *box = qobject_cast<QSpinBox *>(editor)) {
            if (v.is_number()) box->setValue(v.get<int>());
        } else if (auto *dbox = qobject_cast<QDoubleSpinBox *>(editor)) {
            if (v.is_number()) dbox->setValue(v.get<double>());
        } else if (auto *check = qobject_cast<QCheckBox *>(editor)) {
            if (v.is_boolean()) check->setChecked(v.get<bool>());
        } else if (auto *combo = qobject_cast<QComboBox *>(editor)) {
            if (v.is_string()) {
                int i = combo->findText(q(v.get<std::string>()));
                if (i < 0) { // a value from a newer or damaged file: shown, not lost
                    combo->addItem(q(v.get<std::string>()));
                    i = combo->count() - 1;
                }
                combo->setCurrentIndex(i);
            }
        } else if (auto *edit = qobject_cast<QLineEdit *>(editor)) {
            const QString text =
                v.is_string() ? q(v.get<std::string>()) : (v.is_null() ? QString() : q(v.dump()));
            if (edit->text() != text) edit->setText(text);
        }
    } catch (const nlohmann::json::exception &) {
        // A value of the wrong JSON type in the file: validation reports it on the node.
    }
}

void Inspector::commit(const std::string &param, const nlohmann::json &value)
{
    Status ok = m_pipeline->setParam(m_nodeId, param, value);
    if (ok) {
        m_error->hide();
        return;
    }
    m_error->setText(q(ok.error().str()));
    m_error->show();
    // Show the document's value again: the refused one was not taken.
    refreshValues();
}

} // namespace fb::widgets
