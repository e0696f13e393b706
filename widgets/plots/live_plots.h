#pragma once

#include <QHash>
#include <QPen>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <nlohmann/json.hpp>

#include <memory>
#include <vector>

class QComboBox;
class QCustomPlot;
class QCPRange;
class QGridLayout;
class QLabel;
class QSlider;
class QTimer;

namespace fb::widgets {

// The live plots dock: loss, accuracy, learning rate, throughput, CPU/GPU use and memory of a run,
// drawn from its event stream (docs/events.md) as it comes, or from a saved run log at once.
//
// Series (the names pointCount() and friends take), from these event fields:
//   train_loss        progress.recent_loss (mean loss since the previous progress event)
//   train_accuracy    progress.recent_accuracy when the engine sends it, else progress.accuracy
//                     (this epoch so far), in %
//   val_loss          epoch.evaluations[0].loss (the first evaluate node)
//   val_accuracy      epoch.evaluations[0].accuracy, in %
//                     (further evaluate nodes: "val_loss:NODE", "val_accuracy:NODE")
//   lr                progress.lr
//   samples_per_s     progress.samples_per_s
//   cpu               hardware.cpu_percent (the whole machine)
//   gpu               hardware.gpus[0].utilization_percent (further GPUs: "gpu:INDEX")
//   gpu_memory        hardware.gpus[0].memory_used_bytes, in MiB ("gpu_memory:INDEX")
//   memory            hardware.process_memory_bytes (the engine's resident set), in MiB
// A series exists once its first point arrives. Hardware samples carry no step: they are placed
// at the step (and epoch) of the latest progress event. Every point also has its wall time, the
// event's `t` (seconds since the engine started; a resumed part continues from where the earlier
// part's log ended), for the wall-time axis.
//
// Comparing runs (compareRuns()): each run's series are named "runK/SERIES" (K from 0, in the
// order given), all drawn in the run's own colour, validation dashed with markers; the legend
// names the runs. A JSON null value (NaN or infinity on the
// engine's side) is kept as a gap in the line.
//
// Every point is kept. A replot hands QCustomPlot only a min/max-per-pixel-column decimation of
// the visible x range (decimate.h), so a million points per series still draw quickly, and it
// happens at most 4 times a second, whatever the event rate. While following the data, every
// panel shows the whole x range of the data (all panels share it); a drag or wheel zoom stops
// that until resetView() (the toolbar's button, or a double click).
class LivePlots : public QWidget {
    Q_OBJECT
public:
    explicit LivePlots(QWidget *parent = nullptr);
    ~LivePlots() override;

    void clear();
    void addEvent(const nlohmann::json &event); // takes every event; picks what it plots
    // A saved run log at once: one replot at the end.
    void addEvents(const std::vector<nlohmann::json> &events);

    // Overlays whole runs, one colour each, in every panel (the Runs panel's Compare); the live
    // run's curves go. clear() (a new run) ends it.
    struct ComparedRun {
        QString label;
        std::vector<nlohmann::json> events;
    };
    void compareRuns(const std::vector<ComparedRun> &runs);
    bool comparing() const { return m_comparing; }
    QStringList comparedRuns() const; // the labels, in order; empty when not comparing
    // The colour run K is drawn in (for the Runs panel's legend swatches).
    QColor runColor(int run) const;

    enum class XAxis { Step, Epoch, WallTime };
    void setXAxis(XAxis axis); // also the combo box in the widget's toolbar; resets the x range
    XAxis xAxis() const { return m_xAxis; }
    // Exponential moving average like TensorBoard's (debiased), 0 (off) .. 0.99. The smoothed
    // curve is drawn over the faint raw one. Smooths the per-step series (train_loss,
    // train_accuracy, samples_per_s, cpu, gpu), not the learning rate, memory or the per-epoch
    // validation points.
    void setSmoothing(double weight);
    double smoothing() const { return m_smoothing; }

    QStringList seriesNames() const;
    int pointCount(const QString &series) const; // raw points kept (never dropped)
    // Points handed to QCustomPlot for the series' main curve (the smoothed one while smoothing)
    // at the last replot.
    int drawnPointCount(const QString &series) const;
    // The raw values (in the plot's units: accuracy in %, memory in MiB).
    std::vector<double> values(const QString &series) const;
    // The main curve's points as handed to QCustomPlot at the last replot (x in the current axis).
    std::vector<QPointF> drawnPoints(const QString &series) const;
    // The series' name in its panel's legend, and its pen.
    QString legendName(const QString &series) const;
    QPen pen(const QString &series) const;

    // Back to following the data (after the user zoomed or dragged); also a double click.
    void resetView();
    void replotNow();

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    struct Series;
    struct Panel;

    struct RunState;

    void addEventTo(RunState &run, const nlohmann::json &event);
    Series *series(const QString &name, const QString &legend = {});
    const Series *find(const QString &name) const;
    void addPoint(Series *s, const RunState &run, double step, double epoch, double value);
    void recomputeSmoothing(Series &s);
    void scheduleReplot();
    void redraw(Panel &panel, double xLo, double xHi);
    void onXRangeChanged(int panelIndex, const QCPRange &range);
    void applyColors();
    void styleGraphs(Series &s);
    void arrangePanels();

    std::vector<Panel> m_panels;
    std::vector<std::unique_ptr<Series>> m_series;
    QHash<QString, Series *> m_byName;
    // What reading one run's events needs to remember: the live run, or each compared run.
    std::vector<std::unique_ptr<RunState>> m_runs;
    bool m_comparing = false;

    XAxis m_xAxis = XAxis::Step;
    double m_smoothing = 0;
    bool m_autoX = true;
    bool m_settingRange = false; // our own range changes are not the user's
    bool m_bulk = false;         // addEvents(): replot once at the end
    bool m_dataChanged = true;
    bool m_replotWhenShown = false;
    double m_drawnXLo = 0, m_drawnXHi = 0;
    int m_columns = 0;

    QTimer *m_replotTimer = nullptr;
    QComboBox *m_xAxisBox = nullptr;
    QSlider *m_smoothingSlider = nullptr;
    QLabel *m_smoothingLabel = nullptr;
    QGridLayout *m_grid = nullptr;
    std::vector<double> m_bufX, m_bufY; // decimation output, reused
};

} // namespace fb::widgets
