#pragma once

#include <QJsonObject>
#include <QWidget>

class QComboBox;
class QLabel;
class QTableWidget;
class QFileSystemWatcher;

namespace fb::widgets {

class ParallelCoordinates;

// A sweep's results (`flowbench-cli sweep`, docs/runs.md): a parallel-coordinates plot, one
// axis per swept parameter and one for the test accuracy, one line per run coloured by its
// rank (the best drawn thickest); and a sortable table of the same. Clicking a line or
// double-clicking a row opens that run. Reads the runs folder's *.sweep.json records, newest
// first, and follows the one shown while its sweep goes on.
class SweepView : public QWidget {
    Q_OBJECT
public:
    explicit SweepView(QWidget *parent = nullptr);

    void setRunsDirectory(const QString &dir);
    // Reads the records again; shows `record` (a path) when given, else keeps the one shown.
    void refresh(const QString &record = {});
    QString currentRecord() const;
    const QJsonObject &sweep() const { return m_sweep; }

    QTableWidget *table() const { return m_table; }
    ParallelCoordinates *plot() const { return m_plot; }

signals:
    void runActivated(const QString &dir);

private:
    void showRecord(const QString &record);

    QString m_root;
    QJsonObject m_sweep;
    QComboBox *m_records;
    QLabel *m_summary;
    ParallelCoordinates *m_plot;
    QTableWidget *m_table;
    // The runs folder: the CLI writes a record by renaming a new file into it, so every write of a
    // running sweep is seen here.
    QFileSystemWatcher *m_watcher;
    QString m_shownRecord; // the record the table shows (sorted and sized when it was chosen)
};

// Parallel coordinates, written here: QCustomPlot draws x/y plots and has no such chart. Each
// axis is numeric (linear, or logarithmic when its values span two decades or more, as
// learning rates do) or a list of names; a line's colour goes from red (worst) to green (best)
// by the run's rank.
class ParallelCoordinates : public QWidget {
    Q_OBJECT
public:
    struct Axis {
        QString title;
        bool numeric = true, log = false;
        QStringList categories; // for a non-numeric axis, in order
        double lo = 0, hi = 1;
    };
    struct Line {
        QString id; // the run's folder
        QString label;
        std::vector<QVariant> values; // one per axis: a number, or a name; invalid: missing
        double score = -1;            // 0 worst .. 1 best (rank by test accuracy); -1 unknown: grey
    };
    explicit ParallelCoordinates(QWidget *parent = nullptr);
    void setData(std::vector<Axis> axes, std::vector<Line> lines);
    const std::vector<Axis> &axes() const { return m_axes; }
    const std::vector<Line> &lines() const { return m_lines; }
    // Where a line crosses an axis, in widget coordinates (for tests and hit testing).
    QPointF pointOf(int line, int axis) const;
    int lineAt(const QPointF &pos) const; // -1: none within a few pixels
    QSize minimumSizeHint() const override { return {320, 180}; }

signals:
    void lineClicked(const QString &id);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;

private:
    QRectF plotArea() const;
    double fraction(int axis, const QVariant &value) const; // 0 bottom .. 1 top; NaN missing

    std::vector<Axis> m_axes;
    std::vector<Line> m_lines;
    int m_hover = -1;
};

} // namespace fb::widgets
