#include "widgets/plots/live_plots.h"

#include "widgets/plots/decimate.h"
#include "widgets/plots/plot_style.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fb::widgets {

using nlohmann::json;

namespace {

// At most 4 replots a second: smooth enough to watch a curve grow, and six antialiased panels
// redrawn more often would take CPU from the training it shows (bench/gui_responsiveness.py).
constexpr int kReplotIntervalMs = 250;
constexpr double kMiB = 1024.0 * 1024.0;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

enum PanelId {
    LossPanel,
    AccuracyPanel,
    LearningRatePanel,
    ThroughputPanel,
    UtilizationPanel,
    MemoryPanel,
    PanelCount
};

struct PanelSpec {
    const char *title, *yLabel;
    bool percent;         // 0..100: a fixed range reads better than one that jumps
    Qt::Alignment legend; // the corner the curves leave free: falling loss, rising accuracy
};

const PanelSpec kPanels[PanelCount] = {
    {QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "Loss"),
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "loss"), false, Qt::AlignTop | Qt::AlignRight},
    {QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "Accuracy"),
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "accuracy (%)"), false,
     Qt::AlignBottom | Qt::AlignRight},
    {QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "Learning rate"),
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "learning rate"), false,
     Qt::AlignTop | Qt::AlignRight},
    {QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "Throughput"),
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "training samples/s"), false,
     Qt::AlignBottom | Qt::AlignRight},
    {QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "CPU and GPU"),
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "utilization (%)"), true,
     Qt::AlignBottom | Qt::AlignRight},
    {QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "Memory"),
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "memory (MiB)"), false,
     Qt::AlignBottom | Qt::AlignRight},
};

struct SeriesSpec {
    const char *name;
    PanelId panel;
    int colorSlot;
    bool smoothable; // dense per-step series; not the schedule, memory or per-epoch points
    bool markers;    // few points: show each
    const char *legend;
};

const SeriesSpec kSeries[] = {
    {"train_loss", LossPanel, 0, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "training")},
    {"val_loss", LossPanel, 1, false, true,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "validation")},
    {"train_accuracy", AccuracyPanel, 0, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "training")},
    {"val_accuracy", AccuracyPanel, 1, false, true,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "validation")},
    {"lr", LearningRatePanel, 2, false, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "learning rate")},
    {"samples_per_s", ThroughputPanel, 3, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "samples/s")},
    // Data-parallel runs: each rank's own compute rate ("rank_samples_per_s:R"), and the shares
    // of the step in collectives, next to the utilization (both are percentages of time).
    {"rank_samples_per_s", ThroughputPanel, 4, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "rank")},
    {"allreduce_share", UtilizationPanel, 6, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "all-reduce (% of step)")},
    {"rank_wait_share", UtilizationPanel, 7, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "waiting on other ranks (% of step)")},
    {"cpu", UtilizationPanel, 0, true, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "CPU (all cores)")},
    {"gpu", UtilizationPanel, 4, true, false, QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "GPU")},
    {"memory", MemoryPanel, 5, false, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "engine process")},
    {"gpu_memory", MemoryPanel, 4, false, false,
     QT_TRANSLATE_NOOP("fb::widgets::LivePlots", "GPU memory")},
};

// Distinct hues that read on white and on near-black: a deeper and a lighter variant of each.
QColor seriesColor(int slot, bool dark)
{
    static const QRgb light[] = {0x1f77b4, 0xe8710a, 0x2e9e3e, 0x8e5cc4,
                                 0xd62728, 0x0f9aa8, 0x8c564b, 0xc2459b};
    static const QRgb darkBg[] = {0x5eaaf0, 0xffa24f, 0x62cf6e, 0xb894ec,
                                  0xff6b6b, 0x4fd6e6, 0xc99a8b, 0xf08bd0};
    const int n = int(std::size(light));
    slot = ((slot % n) + n) % n;
    return QColor(dark ? darkBg[slot] : light[slot]);
}

// A number from the event; missing or not a number: nothing to plot (nullopt-like NaN with
// `present` false). JSON null (nlohmann writes NaN and infinity as null): a gap.
// A line per rank reads up to this many ranks; a larger job shows the job's throughput and
// shares only (its ranks are in the event log).
constexpr std::size_t kMaxRankSeries = 16;

bool field(const json &e, const char *key, double &out)
{
    const auto it = e.find(key);
    if (it == e.end()) return false;
    if (it->is_number()) {
        out = it->get<double>();
        return true;
    }
    if (it->is_null()) {
        out = kNaN;
        return true;
    }
    return false;
}

QString text(const json &e, const char *key)
{
    const auto it = e.find(key);
    return it != e.end() && it->is_string() ? QString::fromStdString(it->get<std::string>())
                                            : QString();
}

} // namespace

struct LivePlots::Series {
    QString name;
    int panel = 0;
    int colorSlot = 0;
    bool smoothable = false;
    bool markers = false;
    // One entry per point: its x on either axis and its value. Step and epoch are both kept so
    // switching the axis costs nothing and needs no knowledge of how the run was cut in epochs.
    std::vector<double> step, epoch, wall, y;
    std::vector<double> smooth; // the EMA of y while smoothing is on, else empty
    double emaLast = 0, emaWeightPow = 1;
    bool smoothStale = false;  // the weight changed: recomputed at the next replot, not per tick
    QCPGraph *faint = nullptr; // the raw curve behind the smoothed one
    QCPGraph *main = nullptr;
    int drawn = 0;
    bool dashed = false; // a compared run's validation curve

    const std::vector<double> &x(XAxis axis) const
    {
        return axis == XAxis::Step ? step : axis == XAxis::Epoch ? epoch : wall;
    }
};

struct LivePlots::RunState {
    QString prefix; // "" for the live run, "runK/" for compared run K
    QString label;
    int color = 0;
    QStringList evalNodes;    // evaluate nodes in the order they first reported
    double stepsPerEpoch = 0; // 0 until run_start or a progress event says
    double lastStep = 0;      // of the latest progress event: where hardware samples go
    double lastEpochX = 0;
    double t = 0;         // the current event's wall time (with the offset below)
    double lastRawT = 0;  // the latest `t` as the stream has it
    double tOffset = 0;   // a resumed part's `t` starts again at 0: it goes on from here
    bool started = false; // a run_start has been read
};

struct LivePlots::Panel {
    QCustomPlot *plot = nullptr;
    QCPTextElement *title = nullptr;
    bool autoY = true;
    bool dirty = true;
    bool percent = false;
    std::vector<Series *> series;
};

LivePlots::LivePlots(QWidget *parent)
    : QWidget(parent)
    , m_replotTimer(new QTimer(this))
    , m_xAxisBox(new QComboBox(this))
    , m_smoothingSlider(new QSlider(Qt::Horizontal, this))
    , m_smoothingLabel(new QLabel(this))
    , m_grid(new QGridLayout)
{
    m_xAxisBox->addItem(tr("Step"));
    m_xAxisBox->addItem(tr("Epoch"));
    m_xAxisBox->addItem(tr("Wall time"));
    m_xAxisBox->setToolTip(
        tr("What the horizontal axis counts: steps, epochs, or seconds since the run started"));
    m_smoothingSlider->setRange(0, 99);
    m_smoothingSlider->setToolTip(
        tr("Smoothing: an exponential moving average; the raw curve stays faint behind"));
    m_smoothingSlider->setMaximumWidth(160);
    m_smoothingLabel->setText("0.00");
    m_smoothingLabel->setMinimumWidth(m_smoothingLabel->fontMetrics().horizontalAdvance("0.00 "));
    auto *reset = new QToolButton(this);
    reset->setText(tr("Reset view"));
    reset->setToolTip(tr("Fit every plot to its data again (also: double-click a plot)"));

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 0);
    bar->addWidget(new QLabel(tr("X axis:"), this));
    bar->addWidget(m_xAxisBox);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Smoothing:"), this));
    bar->addWidget(m_smoothingSlider);
    bar->addWidget(m_smoothingLabel);
    bar->addStretch(1);
    bar->addWidget(reset);

    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setSpacing(2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addLayout(m_grid, 1);

    QFont titleFont = font();
    titleFont.setBold(true);
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.9));
    m_panels.resize(PanelCount);
    for (int i = 0; i < PanelCount; ++i) {
        Panel &p = m_panels[std::size_t(i)];
        p.percent = kPanels[i].percent;
        p.plot = new QCustomPlot(this);
        QCustomPlot *plot = p.plot;
        plot->setMinimumSize(180, 130);
        plot->setNoAntialiasingOnDrag(true);
        plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
        plot->plotLayout()->insertRow(0);
        p.title = new QCPTextElement(plot, tr(kPanels[i].title), titleFont);
        plot->plotLayout()->addElement(0, 0, p.title);
        plot->xAxis->setLabel(tr("step"));
        plot->yAxis->setLabel(tr(kPanels[i].yLabel));
        plot->xAxis->setLabelFont(small);
        plot->yAxis->setLabelFont(small);
        plot->xAxis->setTickLabelFont(small);
        plot->yAxis->setTickLabelFont(small);
        plot->legend->setFont(small);
        plot->legend->setVisible(false); // until a series arrives
        plot->axisRect()->insetLayout()->setInsetAlignment(0, kPanels[i].legend);
        if (p.percent) plot->yAxis->setRange(0, 100);
        connect(plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
                [this, i](const QCPRange &r) { onXRangeChanged(i, r); });
        connect(plot->yAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
                [this, i](const QCPRange &) {
                    if (m_settingRange) return;
                    m_panels[std::size_t(i)].autoY = false;
                });
        connect(plot, &QCustomPlot::mouseDoubleClick, this, [this] { resetView(); });
    }
    arrangePanels();

    m_replotTimer->setSingleShot(true);
    m_replotTimer->setInterval(kReplotIntervalMs);
    connect(m_replotTimer, &QTimer::timeout, this, [this] {
        if (!isVisible()) {
            m_replotWhenShown = true; // a hidden dock costs nothing but keeping the points
            return;
        }
        replotNow();
    });
    connect(m_xAxisBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { setXAxis(XAxis(std::clamp(index, 0, 2))); });
    connect(m_smoothingSlider, &QSlider::valueChanged, this,
            [this](int value) { setSmoothing(value / 100.0); });
    connect(reset, &QToolButton::clicked, this, &LivePlots::resetView);

    m_runs.push_back(std::make_unique<RunState>());
    applyColors();
    replotNow();
}

LivePlots::~LivePlots() = default;

void LivePlots::clear()
{
    for (int i = 0; i < PanelCount; ++i)
        m_panels[std::size_t(i)].title->setText(tr(kPanels[i].title));
    for (Panel &p : m_panels) {
        p.plot->clearGraphs();
        p.plot->legend->setVisible(false);
        p.series.clear();
        p.autoY = true;
        p.dirty = true;
    }
    m_series.clear();
    m_byName.clear();
    m_runs.clear();
    m_runs.push_back(std::make_unique<RunState>());
    m_comparing = false;
    m_autoX = true;
    m_dataChanged = true;
    replotNow();
}

LivePlots::Series *LivePlots::series(const QString &name, const QString &legend)
{
    if (Series *s = m_byName.value(name)) return s;
    // "run2/train_loss" belongs to compared run 2.
    const qsizetype slash = name.indexOf('/');
    const QString local = slash < 0 ? name : name.mid(slash + 1);
    const RunState *run = nullptr;
    if (slash >= 0)
        for (const auto &r : m_runs)
            if (r->prefix == name.left(slash + 1)) run = r.get();
    // "val_loss:test" is a val_loss of another evaluate node, "gpu:1" the second GPU.
    const qsizetype colon = local.indexOf(':');
    const QString base = colon < 0 ? local : local.left(colon);
    const SeriesSpec *spec = nullptr;
    for (const SeriesSpec &s : kSeries)
        if (base == QLatin1String(s.name)) spec = &s;
    if (!spec) return nullptr;

    auto owned = std::make_unique<Series>();
    Series *s = owned.get();
    s->name = name;
    s->panel = spec->panel;
    s->colorSlot = spec->colorSlot + (colon < 0 ? 0 : int(m_series.size()) + 2);
    if (base == QLatin1String("rank_samples_per_s") && colon >= 0) {
        // Each rank its own hue, never the job's samples/s (slot 3) beside it.
        static const int rankSlots[] = {1, 2, 4, 5, 6, 7, 0};
        s->colorSlot = rankSlots[local.mid(colon + 1).toInt() % int(std::size(rankSlots))];
    }
    s->smoothable = spec->smoothable;
    s->markers = spec->markers;
    QString name2 = legend.isEmpty() ? tr(spec->legend) : legend;
    if (run) {
        // One colour per run; validation dashed, with its markers.
        s->colorSlot = run->color;
        s->dashed = spec->markers;
        name2 = spec->markers ? tr("%1 (validation)").arg(run->label) : run->label;
        if (colon >= 0) name2 += QStringLiteral(" ") + local.mid(colon + 1);
    }
    Panel &panel = m_panels[std::size_t(s->panel)];
    QCustomPlot *plot = panel.plot;
    s->faint = plot->addGraph();
    s->faint->removeFromLegend();
    s->main = plot->addGraph();
    s->main->setName(name2);
    // Compared runs: the legend names each run once; the panel's title says validation is dashed.
    if (run && s->dashed) s->main->removeFromLegend();
    styleGraphs(*s);
    plot->legend->setVisible(true);
    panel.series.push_back(s);
    m_byName.insert(name, s);
    m_series.push_back(std::move(owned));
    return s;
}

const LivePlots::Series *LivePlots::find(const QString &name) const
{
    return m_byName.value(name);
}

void LivePlots::addPoint(Series *s, const RunState &run, double step, double epoch, double value)
{
    if (!s || std::isnan(step) || std::isnan(epoch)) return;
    s->step.push_back(step);
    s->epoch.push_back(epoch);
    s->wall.push_back(run.t);
    s->y.push_back(value);
    if (m_smoothing > 0 && s->smoothable && !s->smoothStale) {
        // TensorBoard's debiased EMA, one point at a time: O(1) per point, no pass over the rest.
        if (std::isfinite(value)) {
            s->emaLast = s->emaLast * m_smoothing + (1 - m_smoothing) * value;
            s->emaWeightPow *= m_smoothing;
            s->smooth.push_back(s->emaLast / (1 - s->emaWeightPow));
        } else {
            s->smooth.push_back(value);
        }
    }
    m_panels[std::size_t(s->panel)].dirty = true;
    m_dataChanged = true;
    scheduleReplot();
}

void LivePlots::recomputeSmoothing(Series &s)
{
    s.smoothStale = false;
    s.smooth.clear();
    s.emaLast = 0;
    s.emaWeightPow = 1;
    if (m_smoothing <= 0 || !s.smoothable) {
        s.smooth.shrink_to_fit();
        return;
    }
    s.smooth.reserve(s.y.size());
    for (double v : s.y) {
        if (std::isfinite(v)) {
            s.emaLast = s.emaLast * m_smoothing + (1 - m_smoothing) * v;
            s.emaWeightPow *= m_smoothing;
            s.smooth.push_back(s.emaLast / (1 - s.emaWeightPow));
        } else {
            s.smooth.push_back(v);
        }
    }
}

void LivePlots::addEvent(const json &e)
{
    if (m_comparing) return; // a comparison shows whole runs; a new run clears it first
    addEventTo(*m_runs.front(), e);
}

void LivePlots::addEventTo(RunState &run, const json &e)
{
    // Events come from another process or a file: read defensively, never throw.
    if (!e.is_object()) return;
    const auto typeIt = e.find("type");
    if (typeIt == e.end() || !typeIt->is_string()) return;
    const std::string &type = typeIt->get_ref<const std::string &>();
    try {
        // Wall time: the event's `t`; a resumed part's stream starts again from 0, so it goes
        // on from where the earlier part ended.
        double t = 0;
        if (field(e, "t", t) && std::isfinite(t)) {
            if (type == "run_start" && run.started) run.tOffset += run.lastRawT;
            run.lastRawT = t;
            run.t = run.tOffset + t;
        }
        if (type == "progress") {
            double step = 0;
            if (!field(e, "step", step) || std::isnan(step)) return;
            double total = 0, epochs = 0;
            if (run.stepsPerEpoch <= 0 && field(e, "total_steps", total) &&
                field(e, "epochs", epochs) && epochs > 0 && total > 0)
                run.stepsPerEpoch = total / epochs;
            double epochX = 0;
            if (run.stepsPerEpoch > 0)
                epochX = step / run.stepsPerEpoch;
            else if (field(e, "epoch", epochX))
                epochX -= 1; // the epoch in progress, from 1: its start
            run.lastStep = step;
            run.lastEpochX = epochX;
            double v;
            if (field(e, "recent_loss", v) || field(e, "loss", v))
                addPoint(series(run.prefix + "train_loss"), run, step, epochX, v);
            // recent_accuracy (since the previous event, like recent_loss) where the engine
            // sends it; `accuracy` is the epoch's running mean and restarts every epoch.
            if (field(e, "recent_accuracy", v) || field(e, "accuracy", v))
                addPoint(series(run.prefix + "train_accuracy"), run, step, epochX, v * 100);
            if (field(e, "lr", v)) addPoint(series(run.prefix + "lr"), run, step, epochX, v);
            if (field(e, "samples_per_s", v))
                addPoint(series(run.prefix + "samples_per_s"), run, step, epochX, v);
            if (const auto ranks = e.find("rank_samples_per_s");
                ranks != e.end() && ranks->is_array() && ranks->size() <= kMaxRankSeries) {
                for (std::size_t r = 0; r < ranks->size(); ++r)
                    if ((*ranks)[r].is_number())
                        addPoint(series(run.prefix + "rank_samples_per_s:" + QString::number(r),
                                        tr("rank %1 (its own compute)").arg(r)),
                                 run, step, epochX, (*ranks)[r].get<double>());
            }
            if (field(e, "allreduce_share", v))
                addPoint(series(run.prefix + "allreduce_share"), run, step, epochX, v * 100);
            if (field(e, "rank_wait_share", v))
                addPoint(series(run.prefix + "rank_wait_share"), run, step, epochX, v * 100);
        } else if (type == "epoch") {
            double epoch = 0;
            if (!field(e, "epoch", epoch) || std::isnan(epoch)) return;
            const double step = run.stepsPerEpoch > 0 ? epoch * run.stepsPerEpoch : run.lastStep;
            const auto evals = e.find("evaluations");
            if (evals == e.end() || !evals->is_array()) return;
            for (const json &ev : *evals) {
                if (!ev.is_object()) continue;
                const QString node = text(ev, "node");
                qsizetype index = run.evalNodes.indexOf(node);
                if (index < 0) {
                    index = run.evalNodes.size();
                    run.evalNodes << node;
                }
                const QString suffix = index == 0 ? QString() : ":" + node;
                const QString legend = index == 0 ? QString() : tr("validation (%1)").arg(node);
                double v;
                if (field(ev, "loss", v))
                    addPoint(series(run.prefix + "val_loss" + suffix, legend), run, step, epoch, v);
                if (field(ev, "accuracy", v))
                    addPoint(series(run.prefix + "val_accuracy" + suffix, legend), run, step, epoch,
                             v * 100);
            }
        } else if (type == "hardware") {
            const double step = run.lastStep, epochX = run.lastEpochX;
            double v;
            if (field(e, "cpu_percent", v))
                addPoint(series(run.prefix + "cpu"), run, step, epochX, v);
            if (field(e, "process_memory_bytes", v))
                addPoint(series(run.prefix + "memory"), run, step, epochX, v / kMiB);
            const auto gpus = e.find("gpus");
            if (gpus == e.end() || !gpus->is_array()) return;
            int position = 0;
            for (const json &g : *gpus) {
                if (!g.is_object()) continue;
                double index = position;
                field(g, "index", index);
                const QString suffix = position == 0 ? QString() : ":" + QString::number(index);
                const QString name = text(g, "name");
                const QString gpuLabel =
                    tr("GPU %1%2").arg(index).arg(name.isEmpty() ? QString() : " (" + name + ")");
                if (field(g, "utilization_percent", v))
                    addPoint(series(run.prefix + "gpu" + suffix, gpuLabel), run, step, epochX, v);
                if (field(g, "memory_used_bytes", v))
                    addPoint(
                        series(run.prefix + "gpu_memory" + suffix, tr("%1 memory").arg(gpuLabel)),
                        run, step, epochX, v / kMiB);
                ++position;
            }
        } else if (type == "run_start") {
            run.started = true;
            double v;
            if (field(e, "steps_per_epoch", v) && v > 0) run.stepsPerEpoch = v;
            if (field(e, "first_step", v) && std::isfinite(v)) {
                run.lastStep = v;
                run.lastEpochX = run.stepsPerEpoch > 0 ? v / run.stepsPerEpoch : 0;
            }
        }
    } catch (const std::exception &) {
        // A malformed event is skipped; the rest of the run still plots.
    }
}

void LivePlots::compareRuns(const std::vector<ComparedRun> &runs)
{
    clear();
    m_runs.clear();
    m_comparing = true;
    m_bulk = true;
    for (int i : {int(LossPanel), int(AccuracyPanel)})
        m_panels[std::size_t(i)].title->setText(
            tr("%1 (dashed: validation)").arg(tr(kPanels[i].title)));
    for (size_t i = 0; i < runs.size(); ++i) {
        auto run = std::make_unique<RunState>();
        run->prefix = QStringLiteral("run%1/").arg(i);
        run->label = runs[i].label;
        run->color = int(i);
        RunState &state = *run;
        m_runs.push_back(std::move(run));
        for (const json &e : runs[i].events)
            addEventTo(state, e);
    }
    m_bulk = false;
    replotNow();
}

QStringList LivePlots::comparedRuns() const
{
    QStringList labels;
    if (!m_comparing) return labels;
    for (const auto &r : m_runs)
        labels << r->label;
    return labels;
}

QColor LivePlots::runColor(int run) const
{
    return seriesColor(run, isDarkPalette(palette()));
}

void LivePlots::addEvents(const std::vector<json> &events)
{
    m_bulk = true;
    for (const json &e : events)
        addEvent(e);
    m_bulk = false;
    replotNow();
}

void LivePlots::setXAxis(XAxis axis)
{
    if (m_xAxisBox->currentIndex() != int(axis)) {
        const QSignalBlocker block(m_xAxisBox);
        m_xAxisBox->setCurrentIndex(int(axis));
    }
    if (axis == m_xAxis) return;
    m_xAxis = axis;
    for (Panel &p : m_panels) {
        p.plot->xAxis->setLabel(axis == XAxis::Epoch      ? tr("epoch")
                                : axis == XAxis::WallTime ? tr("wall time (s)")
                                                          : tr("step"));
        p.dirty = true;
    }
    m_autoX = true; // a zoomed range in steps means nothing in epochs
    m_dataChanged = true;
    replotNow();
}

void LivePlots::setSmoothing(double weight)
{
    weight = std::isfinite(weight) ? std::clamp(weight, 0.0, 0.99) : 0.0;
    const int sliderValue = int(std::lround(weight * 100));
    if (m_smoothingSlider->value() != sliderValue) {
        const QSignalBlocker block(m_smoothingSlider);
        m_smoothingSlider->setValue(sliderValue);
    }
    m_smoothingLabel->setText(QString::number(weight, 'f', 2));
    if (weight == m_smoothing) return;
    m_smoothing = weight;
    // A slider drag sends many values: the O(points) pass happens once, at the next replot.
    for (auto &s : m_series) {
        s->smoothStale = s->smoothable;
        styleGraphs(*s);
        m_panels[std::size_t(s->panel)].dirty = true;
    }
    m_dataChanged = true;
    scheduleReplot();
}

QStringList LivePlots::seriesNames() const
{
    QStringList names;
    for (const auto &s : m_series)
        names << s->name;
    return names;
}

int LivePlots::pointCount(const QString &name) const
{
    const Series *s = find(name);
    return s ? int(s->y.size()) : 0;
}

int LivePlots::drawnPointCount(const QString &name) const
{
    const Series *s = find(name);
    return s ? s->drawn : 0;
}

std::vector<double> LivePlots::values(const QString &name) const
{
    const Series *s = find(name);
    return s ? s->y : std::vector<double>{};
}

std::vector<QPointF> LivePlots::drawnPoints(const QString &name) const
{
    std::vector<QPointF> points;
    const Series *s = find(name);
    if (!s) return points;
    const QSharedPointer<QCPGraphDataContainer> data = s->main->data();
    points.reserve(std::size_t(data->size()));
    for (auto it = data->constBegin(); it != data->constEnd(); ++it)
        points.emplace_back(it->key, it->value);
    return points;
}

QString LivePlots::legendName(const QString &name) const
{
    const Series *s = find(name);
    return s ? s->main->name() : QString();
}

QPen LivePlots::pen(const QString &name) const
{
    const Series *s = find(name);
    return s ? s->main->pen() : QPen();
}

void LivePlots::resetView()
{
    m_autoX = true;
    for (Panel &p : m_panels) {
        p.autoY = true;
        p.dirty = true;
    }
    replotNow();
}

void LivePlots::scheduleReplot()
{
    if (m_bulk || m_replotTimer->isActive()) return;
    m_replotTimer->start();
}

void LivePlots::replotNow()
{
    m_replotTimer->stop();
    m_replotWhenShown = false;

    if (m_autoX) {
        // Follow the data: every panel shares one x range, so the plots line up.
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const auto &s : m_series) {
            const std::vector<double> &x = s->x(m_xAxis);
            if (x.empty()) continue;
            lo = std::min(lo, x.front());
            hi = std::max(hi, x.back());
        }
        if (!(lo <= hi)) {
            lo = 0;
            hi = 1;
        } else if (lo == hi) {
            lo -= 0.5;
            hi += 0.5;
        } else {
            // A little room at the ends, so the first and last markers show whole.
            const double pad = (hi - lo) * 0.01;
            lo -= pad;
            hi += pad;
        }
        m_settingRange = true;
        for (Panel &p : m_panels)
            p.plot->xAxis->setRange(lo, hi);
        m_settingRange = false;
    }
    const QCPRange x = m_panels.front().plot->xAxis->range();
    const bool rangeMoved = x.lower != m_drawnXLo || x.upper != m_drawnXHi;
    m_drawnXLo = x.lower;
    m_drawnXHi = x.upper;
    for (Panel &p : m_panels) {
        if (!p.dirty && !rangeMoved) continue;
        redraw(p, x.lower, x.upper);
        p.dirty = false;
    }
    m_dataChanged = false;
}

void LivePlots::redraw(Panel &panel, double xLo, double xHi)
{
    QCustomPlot *plot = panel.plot;
    // One bucket per pixel column over the visible range and as much again on either side, so
    // that a drag shows data at once, before the next decimation: at most 4 points a pixel.
    int pixels = plot->axisRect()->width();
    if (pixels <= 0 || pixels > plot->width()) pixels = plot->width();
    pixels = std::max(pixels, 32);
    const double width = xHi - xLo;
    const double lo = xLo - width / 2, hi = xHi + width / 2;
    const int buckets = pixels * 2;

    double yLo = std::numeric_limits<double>::infinity(), yHi = -yLo;
    QVector<QCPGraphData> points;
    auto hand = [&](QCPGraph *graph, const std::vector<double> &xs, const std::vector<double> &ys) {
        if (xs.empty() || ys.size() != xs.size()) {
            graph->data()->clear();
            return 0;
        }
        decimateMinMax(xs.data(), ys.data(), xs.size(), lo, hi, buckets, m_bufX, m_bufY);
        points.resize(qsizetype(m_bufX.size()));
        for (std::size_t i = 0; i < m_bufX.size(); ++i) {
            points[qsizetype(i)] = QCPGraphData(m_bufX[i], m_bufY[i]);
            // The decimation keeps each column's extremes, so these bound the visible data.
            if (m_bufX[i] >= xLo && m_bufX[i] <= xHi && std::isfinite(m_bufY[i])) {
                yLo = std::min(yLo, m_bufY[i]);
                yHi = std::max(yHi, m_bufY[i]);
            }
        }
        graph->data()->set(points, true);
        return int(points.size());
    };
    for (Series *s : panel.series) {
        if (s->smoothStale) recomputeSmoothing(*s);
        const std::vector<double> &xs = s->x(m_xAxis);
        const bool smoothed = m_smoothing > 0 && s->smoothable;
        s->drawn = hand(s->main, xs, smoothed ? s->smooth : s->y);
        if (smoothed)
            hand(s->faint, xs, s->y);
        else
            s->faint->data()->clear();
    }

    if (panel.autoY) {
        double a, b;
        if (panel.percent) {
            a = 0;
            b = std::max(100.0, std::isfinite(yHi) ? yHi : 100.0);
        } else if (!(yLo <= yHi)) {
            a = 0;
            b = 1;
        } else {
            const double pad = yHi > yLo ? (yHi - yLo) * 0.05 : std::max(std::abs(yHi) * 0.1, 1e-9);
            a = yLo - pad;
            b = yHi + pad;
        }
        m_settingRange = true;
        plot->yAxis->setRange(a, b);
        m_settingRange = false;
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::onXRangeChanged(int panelIndex, const QCPRange &range)
{
    if (m_settingRange) return;
    // The user dragged or zoomed: stop following the data, and keep the panels lined up.
    m_autoX = false;
    m_settingRange = true;
    for (int i = 0; i < int(m_panels.size()); ++i) {
        if (i == panelIndex) continue;
        m_panels[std::size_t(i)].plot->xAxis->setRange(range);
        m_panels[std::size_t(i)].plot->replot(QCustomPlot::rpQueuedReplot);
    }
    m_settingRange = false;
    if (!m_replotTimer->isActive()) m_replotTimer->start(); // decimate the new range
}

void LivePlots::styleGraphs(Series &s)
{
    const bool dark = isDarkPalette(palette());
    const QColor color = seriesColor(s.colorSlot, dark);
    const bool smoothed = m_smoothing > 0 && s.smoothable;
    s.main->setPen(QPen(color, smoothed ? 2.0 : 1.5, s.dashed ? Qt::DashLine : Qt::SolidLine));
    QColor faint = color;
    faint.setAlpha(dark ? 90 : 70);
    s.faint->setPen(QPen(faint, 1.0));
    s.faint->setVisible(smoothed);
    if (s.markers)
        s.main->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssCircle, color, palette().color(QPalette::Base), 6));
}

void LivePlots::applyColors()
{
    const QColor text = palette().color(QPalette::Text);
    for (Panel &p : m_panels) {
        applyPlotPalette(p.plot, palette());
        p.title->setTextColor(text);
        p.dirty = true;
    }
    for (auto &s : m_series)
        styleGraphs(*s);
    for (Panel &p : m_panels)
        p.plot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::arrangePanels()
{
    // Wide and short (a dock at the bottom): three columns; a narrow side dock: one.
    const int w = width();
    const int columns = w >= 1000 ? 3 : (w >= 560 ? 2 : 1);
    if (columns == m_columns) return;
    m_columns = columns;
    for (Panel &p : m_panels)
        m_grid->removeWidget(p.plot);
    for (int i = 0; i < int(m_panels.size()); ++i)
        m_grid->addWidget(m_panels[std::size_t(i)].plot, i / columns, i % columns);
}

void LivePlots::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        applyColors();
}

void LivePlots::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    arrangePanels();
    for (Panel &p : m_panels)
        p.dirty = true; // columns are pixels: decimate for the new width
    scheduleReplot();
}

void LivePlots::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_replotWhenShown || m_dataChanged) scheduleReplot();
}

} // namespace fb::widgets
