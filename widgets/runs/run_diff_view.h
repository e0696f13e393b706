#pragma once

#include "core/graph/diff.h"
#include "core/io/manifest.h"
#include "widgets/canvas/diff_mark.h"

#include <QWidget>

#include <map>
#include <string>
#include <vector>

class QLabel;
class QTreeWidget;

namespace fb::widgets {

// What differs between two runs (the Runs panel's Diff…): their pipelines node by node, with
// each changed parameter as "before → after", added and removed nodes and wires, and the keys in
// which their manifests differ (data files, device, threads, software). A node's line, double-
// clicked, shows the node on the canvas, where the second run's pipeline is open with the
// differing nodes marked (diffMarks()).
class RunDiffView : public QWidget {
    Q_OBJECT
public:
    explicit RunDiffView(QWidget *parent = nullptr);

    void setDiff(const QString &before, const QString &after, const graph::PipelineDiff &pipeline,
                 const std::vector<io::ManifestDifference> &manifest, const QString &manifestNote);

    QTreeWidget *tree() const { return m_tree; }
    // Every line as shown, "section: text", for tests and copying.
    QStringList lines() const;

signals:
    void nodeActivated(const QString &nodeId);

private:
    QLabel *m_title;
    QTreeWidget *m_tree;
};

// The canvas marks for a diff: changed nodes (with what changed) and added ones. Removed nodes
// are not on the second pipeline's canvas; the view lists them.
std::map<std::string, std::pair<DiffMark, QString>> diffMarks(const graph::PipelineDiff &diff);

} // namespace fb::widgets
