#pragma once

#include <QString>
#include <QWidget>

class QLineEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace fb::graph {
class NodeTypeRegistry;
}

namespace fb::widgets {

// The palette: every node type of the registry, grouped by category, with a search field. A type
// is dragged onto the canvas, or double-clicked (or Enter) to add it at the view's centre.
class NodePalette : public QWidget {
    Q_OBJECT
public:
    explicit NodePalette(const graph::NodeTypeRegistry &registry, QWidget *parent = nullptr);

    QLineEdit *searchField() const { return m_search; }
    QTreeWidget *tree() const { return m_tree; }
    // Shows only the types whose title, name, category or help contain the text.
    void setFilter(const QString &text);
    // The visible node types, in palette order.
    QStringList visibleTypes() const;
    // What Enter in the search field adds: an exact title or type name first, then one that
    // starts with the text, then the first match; empty when nothing matches.
    QString bestMatch() const;
    // The tree entry of a type (for tests and keyboard focus), or nullptr.
    QTreeWidgetItem *itemFor(const QString &type) const;

signals:
    void nodeTypeActivated(const QString &type);

private:
    QLineEdit *m_search;
    QTreeWidget *m_tree;
};

} // namespace fb::widgets
