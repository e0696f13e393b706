#include "widgets/runs/run_diff_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace fb::widgets {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

constexpr int kNodeRole = Qt::UserRole;

QString paramText(const graph::PipelineDiff::Param &p)
{
    return QObject::tr("%1: %2%3 → %4%5")
        .arg(q(p.name), q(p.before), p.beforeIsDefault ? QObject::tr(" (default)") : QString(),
             q(p.after), p.afterIsDefault ? QObject::tr(" (default)") : QString());
}

} // namespace

RunDiffView::RunDiffView(QWidget *parent)
    : QWidget(parent)
{
    m_title = new QLabel;
    m_title->setWordWrap(true);
    m_title->setTextFormat(Qt::RichText);
    m_tree = new QTreeWidget;
    m_tree->setObjectName("run_diff_tree");
    m_tree->setHeaderHidden(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setToolTip(tr("Double-click a node's line to show it on the canvas"));
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) {
        const QString id = item->data(0, kNodeRole).toString();
        if (!id.isEmpty()) emit nodeActivated(id);
    });
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addWidget(m_tree, 1);
}

void RunDiffView::setDiff(const QString &before, const QString &after,
                          const graph::PipelineDiff &pipeline,
                          const std::vector<io::ManifestDifference> &manifest,
                          const QString &manifestNote)
{
    m_title->setText(tr("From <b>%1</b> to <b>%2</b>. The canvas shows %2's pipeline: changed "
                        "nodes outlined in purple, added ones in green.")
                         .arg(before.toHtmlEscaped(), after.toHtmlEscaped()));
    m_tree->clear();
    using Kind = graph::PipelineDiff::NodeChange::Kind;
    auto *nodes = new QTreeWidgetItem(m_tree);
    int nodeCount = 0;
    for (const auto &n : pipeline.nodes) {
        auto *item = new QTreeWidgetItem(nodes);
        item->setData(0, kNodeRole, q(n.node));
        ++nodeCount;
        if (n.kind == Kind::Added) {
            item->setText(0, tr("%1 (%2): added").arg(q(n.node), q(n.type)));
            item->setForeground(0, QColor(0x2e, 0x9e, 0x3e));
            continue;
        }
        if (n.kind == Kind::Removed) {
            item->setText(0, tr("%1 (%2): removed").arg(q(n.node), q(n.type)));
            item->setForeground(0, QColor(0xc6, 0x28, 0x28));
            item->setData(0, kNodeRole, QString()); // not on this canvas
            continue;
        }
        QStringList what;
        if (!n.typeBefore.empty()) what << tr("type %1 → %2").arg(q(n.typeBefore), q(n.type));
        for (const auto &p : n.params)
            what << paramText(p);
        item->setText(0, tr("%1: %2").arg(q(n.node), what.join(QStringLiteral("; "))));
        item->setForeground(0, QColor(0x8e, 0x5c, 0xc4));
    }
    for (const auto &e : pipeline.edgesAdded)
        new QTreeWidgetItem(nodes, {tr("wire added: %1").arg(q(e))});
    for (const auto &e : pipeline.edgesRemoved)
        new QTreeWidgetItem(nodes, {tr("wire removed: %1").arg(q(e))});
    nodes->setText(0, pipeline.empty()
                          ? tr("Pipeline: the same")
                          : tr("Pipeline: %n node(s) differ", nullptr, nodeCount) +
                                (pipeline.edgesAdded.empty() && pipeline.edgesRemoved.empty()
                                     ? QString()
                                     : tr(", wires too")));

    auto *man = new QTreeWidgetItem(m_tree);
    if (!manifestNote.isEmpty()) {
        man->setText(0, tr("Manifest: %1").arg(manifestNote));
    } else {
        man->setText(0, manifest.empty()
                            ? tr("Manifest: the same (data files, device, threads, software)")
                            : tr("Manifest: %n key(s) differ", nullptr, int(manifest.size())));
        for (const auto &d : manifest)
            new QTreeWidgetItem(man, {tr("%1: %2 → %3").arg(q(d.key), q(d.original), q(d.other))});
    }
    m_tree->expandAll();
}

QStringList RunDiffView::lines() const
{
    QStringList out;
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        const QTreeWidgetItem *top = m_tree->topLevelItem(i);
        out << top->text(0);
        for (int c = 0; c < top->childCount(); ++c)
            out << QStringLiteral("  ") + top->child(c)->text(0);
    }
    return out;
}

std::map<std::string, std::pair<DiffMark, QString>> diffMarks(const graph::PipelineDiff &diff)
{
    using Kind = graph::PipelineDiff::NodeChange::Kind;
    std::map<std::string, std::pair<DiffMark, QString>> marks;
    for (const auto &n : diff.nodes) {
        if (n.kind == Kind::Added) {
            marks[n.node] = {DiffMark::Added, QObject::tr("added")};
        } else if (n.kind == Kind::Changed) {
            QStringList what;
            if (!n.typeBefore.empty()) what << QObject::tr("was %1").arg(q(n.typeBefore));
            for (const auto &p : n.params)
                what << QStringLiteral("%1 %2 → %3").arg(q(p.name), q(p.before), q(p.after));
            marks[n.node] = {DiffMark::Changed, what.join(QStringLiteral(", "))};
        }
    }
    return marks;
}

} // namespace fb::widgets
