#include "widgets/palette/node_palette.h"

#include <map>

#include <QHeaderView>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMimeData>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "core/graph/node_types.h"
#include "widgets/canvas/canvas_style.h"
#include "widgets/canvas/graph_view.h"

namespace fb::widgets {

namespace {

constexpr int kTypeRole = Qt::UserRole + 1;
constexpr int kSearchRole = Qt::UserRole + 2; // plain words to match: title, type, help

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

// The tree that drags node types: the MIME data holds the type name.
class PaletteTree : public QTreeWidget {
public:
    using QTreeWidget::QTreeWidget;

protected:
    QStringList mimeTypes() const override { return {GraphView::kNodeTypeMime}; }
    QMimeData *mimeData(const QList<QTreeWidgetItem *> &items) const override
    {
        if (items.isEmpty() || items.front()->data(0, kTypeRole).toString().isEmpty())
            return nullptr;
        auto *mime = new QMimeData;
        const QString type = items.front()->data(0, kTypeRole).toString();
        mime->setData(GraphView::kNodeTypeMime, type.toUtf8());
        mime->setText(type);
        return mime;
    }
};

QString portList(const std::vector<graph::PortSpec> &ports)
{
    QStringList names;
    for (const auto &p : ports)
        names << QStringLiteral("%1 (%2)").arg(q(p.name),
                                               q(std::string(graph::portTypeName(p.type))));
    return names.isEmpty() ? QObject::tr("none") : names.join(QStringLiteral(", "));
}

} // namespace

NodePalette::NodePalette(const graph::NodeTypeRegistry &registry, QWidget *parent)
    : QWidget(parent)
    , m_search(new QLineEdit(this))
    , m_tree(new PaletteTree(this))
{
    m_search->setPlaceholderText(tr("Search node types"));
    m_search->setClearButtonEnabled(true);
    m_search->setToolTip(tr("Filter by name, category or description"));
    m_tree->setHeaderHidden(true);
    m_tree->setDragEnabled(true);
    m_tree->setDragDropMode(QAbstractItemView::DragOnly);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->setRootIsDecorated(true);
    m_tree->setUniformRowHeights(true);

    std::map<std::string, QTreeWidgetItem *> categories;
    for (const graph::NodeTypeSpec &spec : registry.all()) {
        QTreeWidgetItem *&cat = categories[spec.category];
        if (!cat) {
            cat = new QTreeWidgetItem(m_tree, {q(spec.category)});
            cat->setFlags(Qt::ItemIsEnabled);
            QFont f = cat->font(0);
            f.setBold(true);
            cat->setFont(0, f);
            cat->setForeground(0, categoryColor(spec.category).darker(130));
        }
        auto *item = new QTreeWidgetItem(cat, {q(spec.title)});
        item->setData(0, kTypeRole, q(spec.type));
        item->setData(0, kSearchRole, q(spec.title + " " + spec.type + " " + spec.help));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
        item->setToolTip(0, QStringLiteral("<b>%1</b> <code>%2</code><br>%3<br><i>%4</i> %5<br>"
                                           "<i>%6</i> %7")
                                .arg(q(spec.title).toHtmlEscaped(), q(spec.type),
                                     q(spec.help).toHtmlEscaped(), tr("inputs:"),
                                     portList(spec.inputs).toHtmlEscaped(), tr("outputs:"),
                                     portList(spec.outputs).toHtmlEscaped()));
    }
    m_tree->expandAll();

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_search);
    layout->addWidget(m_tree);

    connect(m_search, &QLineEdit::textChanged, this, &NodePalette::setFilter);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        const QString type = item->data(0, kTypeRole).toString();
        if (!type.isEmpty()) emit nodeTypeActivated(type);
    });
    // Enter in the search field adds the best match: a type whose title or name is the text,
    // else one whose title or name starts with it, else the first match. Type, Enter, done.
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        const QString type = bestMatch();
        if (!type.isEmpty()) emit nodeTypeActivated(type);
    });
}

void NodePalette::setFilter(const QString &text)
{
    if (m_search->text() != text) m_search->setText(text);
    const QString needle = text.trimmed();
    for (int c = 0; c < m_tree->topLevelItemCount(); ++c) {
        QTreeWidgetItem *cat = m_tree->topLevelItem(c);
        const bool catMatches =
            !needle.isEmpty() && cat->text(0).contains(needle, Qt::CaseInsensitive);
        int shown = 0;
        for (int i = 0; i < cat->childCount(); ++i) {
            QTreeWidgetItem *item = cat->child(i);
            const bool match =
                needle.isEmpty() || catMatches ||
                item->data(0, kSearchRole).toString().contains(needle, Qt::CaseInsensitive);
            item->setHidden(!match);
            shown += match;
        }
        cat->setHidden(shown == 0);
        cat->setExpanded(true);
    }
}

QStringList NodePalette::visibleTypes() const
{
    QStringList out;
    for (int c = 0; c < m_tree->topLevelItemCount(); ++c) {
        QTreeWidgetItem *cat = m_tree->topLevelItem(c);
        if (cat->isHidden()) continue;
        for (int i = 0; i < cat->childCount(); ++i)
            if (!cat->child(i)->isHidden()) out << cat->child(i)->data(0, kTypeRole).toString();
    }
    return out;
}

QString NodePalette::bestMatch() const
{
    const QString needle = m_search->text().trimmed();
    const QStringList types = visibleTypes();
    if (types.isEmpty()) return {};
    int best = 3, bestIndex = 0;
    for (int i = 0; i < types.size(); ++i) {
        const QString title = itemFor(types[i])->text(0);
        int rank = 2;
        if (title.compare(needle, Qt::CaseInsensitive) == 0 ||
            types[i].compare(needle, Qt::CaseInsensitive) == 0)
            rank = 0;
        else if (title.startsWith(needle, Qt::CaseInsensitive) ||
                 types[i].startsWith(needle, Qt::CaseInsensitive))
            rank = 1;
        if (rank < best) {
            best = rank;
            bestIndex = i;
        }
    }
    return types[bestIndex];
}

QTreeWidgetItem *NodePalette::itemFor(const QString &type) const
{
    for (int c = 0; c < m_tree->topLevelItemCount(); ++c) {
        QTreeWidgetItem *cat = m_tree->topLevelItem(c);
        for (int i = 0; i < cat->childCount(); ++i)
            if (cat->child(i)->data(0, kTypeRole).toString() == type) return cat->child(i);
    }
    return nullptr;
}

} // namespace fb::widgets
