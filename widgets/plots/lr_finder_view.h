#pragma once

#include <QJsonObject>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QPushButton;

namespace fb::widgets {

// The learning-rate range test's result (`flowbench-cli lr-find --json`, docs/runs.md): the loss
// against the learning rate on a logarithmic axis, raw and smoothed, the suggested rate marked,
// and a button that sets it on the optimizer. The suggestion is a hint: nothing changes until
// the person presses that button (an ordinary, undoable edit).
class LrFinderView : public QWidget {
    Q_OBJECT
public:
    explicit LrFinderView(QWidget *parent = nullptr);

    void setRunning(const QString &what); // while the test runs
    void setResult(const QJsonObject &result);
    void setFailed(const QString &why);

    double suggested() const { return m_suggested; }
    QString optimizer() const { return m_optimizer; }
    QCustomPlot *plot() const { return m_plot; }
    QPushButton *useButton() const { return m_use; }
    QString text() const; // the label's text, for tests

signals:
    // "Use" was pressed: set this node's lr to this value.
    void useRequested(const QString &node, double lr);

protected:
    // The plot follows the theme (plot_style.h).
    void changeEvent(QEvent *event) override;

private:
    QLabel *m_label;
    QCustomPlot *m_plot;
    QPushButton *m_use;
    double m_suggested = 0;
    QString m_optimizer;
};

} // namespace fb::widgets
