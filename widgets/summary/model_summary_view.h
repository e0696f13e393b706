#pragma once

#include <QJsonObject>
#include <QWidget>

class QLabel;
class QProcess;
class QPushButton;
class QTableWidget;
class QTimer;

namespace fb::widgets {

class EditedPipeline;

// The Model Summary view: what the model being edited is, before it trains, following every
// edit. Per layer the output shape, parameters, forward and backward FLOPs, activation memory for
// the train node's batch and its share of the step (a bar), totals and the dominant layer above
// the table; Measure times a few training steps on each device and adds the achieved GFLOP/s and,
// on the CPU, each layer's measured time. Like runs and predictions, the figures come from a
// `flowbench-cli summary - --json` child process that reads the unsaved document on stdin: the
// engine never runs inside the window (docs/summary.md).
class ModelSummaryView : public QWidget {
    Q_OBJECT

public:
    explicit ModelSummaryView(EditedPipeline *pipeline, QWidget *parent = nullptr);
    ~ModelSummaryView() override;

    void setCliPath(const QString &path) { m_cli = path; }
    // Asks again now (edits ask after a short pause, so that typing does not start a process per
    // key).
    void refresh();
    // Times training steps on each device (a few seconds); the result arrives with updated().
    void measure();
    bool busy() const;

    // What the view shows: the last answer (status "ok" or "error"), as docs/summary.md has it.
    const QJsonObject &summary() const { return m_summary; }
    QString headline() const;
    QString errorText() const;
    QTableWidget *table() const { return m_table; }

signals:
    // A new answer is shown (after an edit, refresh() or measure()).
    void updated();
    // A row (or the error's node) was double-clicked: the canvas shows that node.
    void nodeActivated(const QString &nodeId);

protected:
    void showEvent(QShowEvent *event) override;

private:
    void start(bool measure);
    void finished();
    void showAnswer(const QJsonObject &summary);

    EditedPipeline *m_pipeline;
    QString m_cli;
    QTimer *m_debounce;
    QProcess *m_process = nullptr;
    bool m_again = false;      // an edit arrived while a process ran: ask again when it ends
    bool m_stale = false;      // edited while hidden: ask when shown
    bool m_measureNext = false; // Measure was pressed while a process ran
    QJsonObject m_summary;
    QLabel *m_headline, *m_error, *m_measured;
    QPushButton *m_measure;
    QTableWidget *m_table;
};

} // namespace fb::widgets
