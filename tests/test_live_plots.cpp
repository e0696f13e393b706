// The live plots: which event fields become which series, the min/max decimation that keeps a
// million points per series drawable without dropping any, smoothing, the epoch axis, replaying a
// saved run log, the user's zoom against the auto range, and colours on a dark palette.

#include "widgets/plots/decimate.h"
#include "widgets/plots/live_plots.h"
#include "widgets/run/run_record.h"

#include <QtTest>

#include <QTemporaryDir>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace fb::widgets;
using nlohmann::json;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Events in the schema of docs/events.md, with the fields the plots read.
json runStart(int stepsPerEpoch, int epochs)
{
    return {{"type", "run_start"},
            {"t", 0.0},
            {"version", RunRecord::kStreamVersion},
            {"pipeline", "test.json"},
            {"device", "cpu"},
            {"threads", 2},
            {"data_workers", 1},
            {"epochs", epochs},
            {"first_epoch", 0},
            {"first_step", 0},
            {"steps_per_epoch", stepsPerEpoch},
            {"train_samples", stepsPerEpoch * 128},
            {"parameters", 1000},
            {"out_dir", "/tmp/x"},
            {"flowbench", "0.1.0"},
            {"libraries", json::object()}};
}

json progress(long step, int stepsPerEpoch, int epochs, double loss, double accuracy = 0.5,
              double lr = 0.05, double samplesPerSecond = 1000)
{
    return {
        {"type", "progress"},     {"t", step * 0.01}, {"epoch", (step - 1) / stepsPerEpoch + 1},
        {"epochs", epochs},       {"step", step},     {"total_steps", long(stepsPerEpoch) * epochs},
        {"samples", step * 128},  {"loss", loss},     {"recent_loss", loss},
        {"accuracy", accuracy},   {"lr", lr},         {"samples_per_s", samplesPerSecond},
        {"data_wait_share", 0.1}, {"eta_s", 1.0}};
}

json epochEnd(int epoch, int epochs, const std::vector<std::pair<std::string, double>> &evals)
{
    json list = json::array();
    for (const auto &[node, loss] : evals)
        list.push_back({{"node", node}, {"loss", loss}, {"accuracy", 0.8}, {"samples", 500}});
    return {{"type", "epoch"},  {"t", epoch * 1.0},      {"epoch", epoch},
            {"epochs", epochs}, {"train_loss", 0.5},     {"train_accuracy", 0.8},
            {"seconds", 1.0},   {"samples_per_s", 1000}, {"evaluations", list}};
}

json hardware(double cpu, double rssBytes, bool withGpu)
{
    json gpus = json::array();
    if (withGpu)
        gpus.push_back({{"index", 0},
                        {"name", "Test GPU"},
                        {"utilization_percent", 40.0},
                        {"memory_utilization_percent", 10.0},
                        {"memory_used_bytes", 2.0 * 1024 * 1024 * 1024},
                        {"memory_total_bytes", 8.0 * 1024 * 1024 * 1024}});
    return {{"type", "hardware"},
            {"t", 0.5},
            {"cpu_percent", cpu},
            {"cpu_per_core", {cpu, cpu}},
            {"process_memory_bytes", rssBytes},
            {"gpus", gpus}};
}

// A small run: 3 epochs of 10 steps, two evaluate nodes, hardware samples with a GPU, and the
// events the plots do not draw.
std::vector<json> smallRun()
{
    std::vector<json> events{runStart(10, 3)};
    for (int step = 1; step <= 30; ++step) {
        events.push_back(progress(step, 10, 3, 2.0 / step, 0.1 + step * 0.02, 0.05 / step));
        if (step % 5 == 0) events.push_back(hardware(50 + step, 100.0 * 1024 * 1024, true));
        if (step % 10 == 0)
            events.push_back(epochEnd(step / 10, 3, {{"evaluate", 1.0 / step}, {"test", 2.0}}));
    }
    events.push_back({{"type", "log"}, {"t", 3.0}, {"level", "info"}, {"message", "hello"}});
    events.push_back({{"type", "dataflow"}, {"t", 3.0}, {"edges", json::array()}});
    events.push_back({{"type", "ack"}, {"t", 3.0}, {"command", "pause"}, {"ok", true}});
    events.push_back({{"type", "summary"}, {"status", "ok"}, {"t", 3.1}});
    return events;
}

std::vector<double> ys(const std::vector<QPointF> &points)
{
    std::vector<double> out;
    for (const QPointF &p : points)
        out.push_back(p.y());
    return out;
}

std::vector<double> xs(const std::vector<QPointF> &points)
{
    std::vector<double> out;
    for (const QPointF &p : points)
        out.push_back(p.x());
    return out;
}

bool sameValues(const std::vector<double> &a, const std::vector<double> &b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
    return true;
}

// TensorBoard's debiased exponential moving average.
std::vector<double> ema(const std::vector<double> &y, double w)
{
    std::vector<double> out;
    double last = 0, pow = 1;
    for (double v : y) {
        last = last * w + (1 - w) * v;
        pow *= w;
        out.push_back(last / (1 - pow));
    }
    return out;
}

QCustomPlot *firstPlot(LivePlots &plots)
{
    const auto all = plots.findChildren<QCustomPlot *>();
    return all.isEmpty() ? nullptr : all.first();
}

} // namespace

class TestLivePlots : public QObject {
    Q_OBJECT

private slots:
    void decimateReproducesSmallInputs()
    {
        const std::vector<double> x{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        const std::vector<double> y{3, -1, 4, 1, -5, 9, 2, 6, 5, 3};
        std::vector<double> ox{42}, oy{42}; // overwritten, not appended to
        decimateMinMax(x.data(), y.data(), x.size(), 0, 9, 5, ox, oy);
        QCOMPARE(ox, x);
        QCOMPARE(oy, y);
        // A part of the range: its points and one neighbour on each side, exactly.
        decimateMinMax(x.data(), y.data(), x.size(), 2.5, 6.5, 5, ox, oy);
        QCOMPARE(ox, (std::vector<double>{2, 3, 4, 5, 6, 7}));
        QCOMPARE(oy, (std::vector<double>{4, 1, -5, 9, 2, 6}));
    }

    void decimateKeepsExtremes()
    {
        const std::size_t n = 100000;
        std::vector<double> x(n), y(n);
        std::mt19937 rng(7);
        std::normal_distribution<double> noise(0, 0.1);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = double(i) * 0.5;
            y[i] = std::sin(double(i) * 0.001) + noise(rng);
        }
        y[31234] = 25; // one-sample spikes that a plain stride would miss
        y[65431] = -17;
        y[90000] = 99;                       // outside the range: not the visible maximum
        const double lo = 10000, hi = 40000; // x: points 20000 .. 80000
        const int buckets = 300;
        std::vector<double> ox, oy;
        decimateMinMax(x.data(), y.data(), n, lo, hi, buckets, ox, oy);
        QVERIFY(ox.size() <= std::size_t(2 * buckets + 2));
        QVERIFY(ox.size() >= std::size_t(buckets)); // every column has points
        QVERIFY(std::is_sorted(ox.begin(), ox.end()));
        QCOMPARE(ox.front(), x[19999]); // the neighbours outside the range
        QCOMPARE(ox.back(), x[80001]);
        const double visibleMax = *std::max_element(y.begin() + 20000, y.begin() + 80001);
        const double visibleMin = *std::min_element(y.begin() + 20000, y.begin() + 80001);
        QCOMPARE(visibleMax, 25.0);
        QCOMPARE(visibleMin, -17.0);
        QVERIFY(std::find(oy.begin(), oy.end(), visibleMax) != oy.end());
        QVERIFY(std::find(oy.begin(), oy.end(), visibleMin) != oy.end());
        // Every output point is an input point.
        for (std::size_t i = 0; i < ox.size(); ++i)
            QCOMPARE(oy[i], y[std::size_t(ox[i] * 2)]);
        // Per column, the output's extremes are the input's.
        const double width = (hi - lo) / buckets;
        for (int b = 0; b < buckets; b += 37) {
            const double cLo = lo + b * width, cHi = cLo + width;
            double inMax = -1e300, outMax = -1e300;
            for (std::size_t i = 1; i + 1 < n; ++i)
                if (x[i] >= cLo && x[i] < cHi) inMax = std::max(inMax, y[i]);
            for (std::size_t i = 1; i + 1 < ox.size(); ++i)
                if (ox[i] >= cLo && ox[i] < cHi) outMax = std::max(outMax, oy[i]);
            QCOMPARE(outMax, inMax);
        }
    }

    void decimateEdgeCases()
    {
        std::vector<double> ox{1}, oy{1};
        decimateMinMax(nullptr, nullptr, 0, 0, 1, 10, ox, oy);
        QVERIFY(ox.empty() && oy.empty());

        const double one[] = {5}, oneY[] = {2};
        decimateMinMax(one, oneY, 1, 0, 10, 10, ox, oy);
        QCOMPARE(ox, std::vector<double>{5});
        QCOMPARE(oy, std::vector<double>{2});
        decimateMinMax(one, oneY, 1, 0, 10, 0, ox, oy); // no columns: read as one
        QCOMPARE(ox.size(), std::size_t(1));

        // A range between two points: the two neighbours, so the line crosses the plot.
        const double two[] = {0, 10}, twoY[] = {1, 2};
        decimateMinMax(two, twoY, 2, 4, 6, 10, ox, oy);
        QCOMPARE(ox, (std::vector<double>{0, 10}));
        // A reversed range reads as the same range.
        decimateMinMax(two, twoY, 2, 6, 4, 10, ox, oy);
        QCOMPARE(ox, (std::vector<double>{0, 10}));

        // NaN values: copied as they are in small inputs, kept as a gap in large ones, and never
        // taken for a column's extreme.
        const std::vector<double> x{0, 1, 2, 3}, y{1, kNaN, 3, 4};
        decimateMinMax(x.data(), y.data(), 4, 0, 3, 10, ox, oy);
        QVERIFY(sameValues(oy, y));
        std::vector<double> bx(10000), by(10000);
        for (std::size_t i = 0; i < bx.size(); ++i) {
            bx[i] = double(i);
            by[i] = i >= 4000 && i < 4100 ? kNaN : double(i % 7);
        }
        by[5000] = 100;
        decimateMinMax(bx.data(), by.data(), bx.size(), 0, 9999, 50, ox, oy);
        QVERIFY(ox.size() <= std::size_t(3 * 50 + 2));
        QVERIFY(std::any_of(oy.begin(), oy.end(), [](double v) { return std::isnan(v); }));
        QVERIFY(std::find(oy.begin(), oy.end(), 100.0) != oy.end());
        QVERIFY(std::is_sorted(ox.begin(), ox.end()));

        // All x equal (a zero-width range): one column, its extremes.
        const std::vector<double> same(100, 3.0);
        std::vector<double> vals(100);
        for (int i = 0; i < 100; ++i)
            vals[std::size_t(i)] = i == 50 ? -9 : i;
        decimateMinMax(same.data(), vals.data(), 100, 3, 3, 10, ox, oy);
        QVERIFY(ox.size() <= 4);
        QVERIFY(std::find(oy.begin(), oy.end(), -9.0) != oy.end());
        QVERIFY(std::find(oy.begin(), oy.end(), 99.0) != oy.end());
    }

    void eventsBecomeSeries()
    {
        LivePlots plots;
        for (const json &e : smallRun())
            plots.addEvent(e);
        // What the plots must shrug off: not objects, no type, wrong field types.
        plots.addEvent(json(42));
        plots.addEvent(json::object());
        plots.addEvent({{"type", "progress"}, {"step", "seven"}});
        plots.addEvent({{"type", "epoch"}, {"epoch", 1}, {"evaluations", "none"}});
        plots.addEvent({{"type", "hardware"}, {"gpus", 3}});

        QCOMPARE(plots.pointCount("train_loss"), 30);
        QCOMPARE(plots.pointCount("train_accuracy"), 30);
        QCOMPARE(plots.pointCount("lr"), 30);
        QCOMPARE(plots.pointCount("samples_per_s"), 30);
        QCOMPARE(plots.pointCount("val_loss"), 3);
        QCOMPARE(plots.pointCount("val_accuracy"), 3);
        QCOMPARE(plots.pointCount("val_loss:test"), 3);
        QCOMPARE(plots.pointCount("cpu"), 6);
        QCOMPARE(plots.pointCount("memory"), 6);
        QCOMPARE(plots.pointCount("gpu"), 6);
        QCOMPARE(plots.pointCount("gpu_memory"), 6);
        QCOMPARE(plots.pointCount("no_such_series"), 0);
        QVERIFY(plots.seriesNames().contains("val_accuracy:test"));

        // Units: accuracy in %, memory in MiB; validation at the epoch's last step.
        QCOMPARE(plots.values("train_accuracy").front(), (0.1 + 0.02) * 100);
        QCOMPARE(plots.values("memory").front(), 100.0);
        QCOMPARE(plots.values("gpu_memory").front(), 2048.0);
        QCOMPARE(plots.values("val_loss"), (std::vector<double>{0.1, 0.05, 1.0 / 30}));
        plots.replotNow();
        QCOMPARE(xs(plots.drawnPoints("val_loss")), (std::vector<double>{10, 20, 30}));
        // Hardware samples sit at the step of the latest progress event.
        QCOMPARE(xs(plots.drawnPoints("cpu")), (std::vector<double>{5, 10, 15, 20, 25, 30}));
        QCOMPARE(plots.drawnPointCount("train_loss"), 30); // few points: all drawn

        // A NaN loss arrives as null: a gap, still a point.
        json nanLoss = progress(31, 10, 3, 0);
        nanLoss["recent_loss"] = nullptr;
        plots.addEvent(nanLoss);
        QCOMPARE(plots.pointCount("train_loss"), 31);
        QVERIFY(std::isnan(plots.values("train_loss").back()));
    }

    void clearForgetsEverything()
    {
        LivePlots plots;
        plots.addEvents(smallRun());
        QVERIFY(plots.pointCount("train_loss") > 0);
        plots.clear();
        QVERIFY(plots.seriesNames().isEmpty());
        QCOMPARE(plots.pointCount("train_loss"), 0);
        QCOMPARE(plots.drawnPointCount("train_loss"), 0);
        plots.addEvents(smallRun());
        QCOMPARE(plots.pointCount("train_loss"), 30);
    }

    void millionPointsAreDecimatedNotDropped()
    {
        LivePlots plots;
        plots.resize(1200, 800);
        plots.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plots));
        const long n = 1000000;
        const int stepsPerEpoch = 1000;
        plots.addEvent(runStart(stepsPerEpoch, int(n / stepsPerEpoch)));
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> noise(0, 0.2);
        for (long step = 1; step <= n; ++step) {
            double loss = 1.0 + noise(rng);
            if (step == 333333) loss = -1; // the extremes must survive the decimation
            if (step == 777777) loss = 50;
            plots.addEvent(progress(step, stepsPerEpoch, int(n / stepsPerEpoch), loss));
            plots.addEvent(hardware(step % 100, 1e8 + double(step), false));
        }
        for (const char *s :
             {"train_loss", "train_accuracy", "lr", "samples_per_s", "cpu", "memory"})
            QCOMPARE(plots.pointCount(s), int(n));
        plots.replotNow();
        const int limit = 4 * plots.width();
        for (const char *s : {"train_loss", "lr", "cpu", "memory"}) {
            const int drawn = plots.drawnPointCount(s);
            QVERIFY2(drawn <= limit && drawn >= 100,
                     qPrintable(QString("%1: %2 points drawn").arg(s).arg(drawn)));
        }
        const std::vector<double> drawn = ys(plots.drawnPoints("train_loss"));
        QVERIFY(std::find(drawn.begin(), drawn.end(), -1.0) != drawn.end());
        QVERIFY(std::find(drawn.begin(), drawn.end(), 50.0) != drawn.end());
        QCOMPARE(plots.pointCount("train_loss"), int(n)); // a replot keeps every point

        // The epoch axis of the same data, and smoothing over a million points.
        plots.setXAxis(LivePlots::XAxis::Epoch);
        plots.setSmoothing(0.9);
        plots.replotNow();
        QVERIFY(plots.drawnPointCount("train_loss") <= limit);
        const std::vector<double> x = xs(plots.drawnPoints("train_loss"));
        QCOMPARE(x.front(), 1.0 / stepsPerEpoch);
        QCOMPARE(x.back(), double(n) / stepsPerEpoch);
    }

    void smoothingChangesDrawnNotRaw()
    {
        LivePlots plots;
        plots.resize(1000, 700);
        std::vector<double> loss;
        std::mt19937 rng(11);
        std::uniform_real_distribution<double> noise(-0.5, 0.5);
        plots.addEvent(runStart(100, 2));
        for (int step = 1; step <= 100; ++step) {
            loss.push_back(2.0 - step * 0.01 + noise(rng));
            plots.addEvent(progress(step, 100, 2, loss.back(), 0.5, 0.01 * step));
        }
        plots.replotNow();
        QCOMPARE(ys(plots.drawnPoints("train_loss")), loss);

        plots.setSmoothing(0.6);
        // Points that arrive while smoothing is on are smoothed as they come.
        for (int step = 101; step <= 200; ++step) {
            loss.push_back(1.0 + noise(rng));
            plots.addEvent(progress(step, 100, 2, loss.back(), 0.5, 0.01 * step));
        }
        plots.replotNow();
        QCOMPARE(plots.values("train_loss"), loss); // the raw points are untouched
        const std::vector<double> smoothed = ys(plots.drawnPoints("train_loss"));
        const std::vector<double> expected = ema(loss, 0.6);
        QCOMPARE(smoothed.size(), expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i)
            QVERIFY(std::abs(smoothed[i] - expected[i]) < 1e-9);
        QVERIFY(smoothed != loss);
        // The learning rate is a schedule, not noise: never smoothed.
        QCOMPARE(ys(plots.drawnPoints("lr")), plots.values("lr"));

        plots.setSmoothing(5); // clamped to 0.99
        QCOMPARE(plots.smoothing(), 0.99);
        plots.setSmoothing(0);
        plots.replotNow();
        QCOMPARE(ys(plots.drawnPoints("train_loss")), loss);
    }

    void epochAxis()
    {
        LivePlots plots;
        plots.addEvents(smallRun());
        QCustomPlot *plot = firstPlot(plots);
        QVERIFY(plot);
        QCOMPARE(plot->xAxis->label(), QString("step"));
        plots.setXAxis(LivePlots::XAxis::Epoch);
        QCOMPARE(plots.xAxis(), LivePlots::XAxis::Epoch);
        QCOMPARE(plot->xAxis->label(), QString("epoch"));
        const std::vector<double> x = xs(plots.drawnPoints("train_loss"));
        QCOMPARE(x.size(), std::size_t(30));
        QCOMPARE(x.front(), 0.1); // step 1 of 10 per epoch
        QCOMPARE(x.back(), 3.0);
        QCOMPARE(xs(plots.drawnPoints("val_loss")), (std::vector<double>{1, 2, 3}));
        QVERIFY(plot->xAxis->range().contains(0.1) && plot->xAxis->range().contains(3.0));
        QVERIFY(plot->xAxis->range().upper < 3.1); // a little room at the ends, no more
        // The toolbar's combo box is the same switch.
        auto *box = plots.findChild<QComboBox *>();
        QVERIFY(box);
        QCOMPARE(box->currentIndex(), 1);
        box->setCurrentIndex(0);
        QCOMPARE(plots.xAxis(), LivePlots::XAxis::Step);
        QCOMPARE(xs(plots.drawnPoints("val_loss")), (std::vector<double>{10, 20, 30}));
    }

    // Wall time: each point at its event's `t`; a resumed part's `t` starts again from 0 and
    // goes on from where the earlier part's log ended.
    void wallTimeAxis()
    {
        LivePlots plots;
        std::vector<json> events{runStart(10, 2)};
        for (int step = 1; step <= 10; ++step)
            events.push_back(progress(step, 10, 2, 1.0 / step));
        json resumed = runStart(10, 2);
        resumed["first_step"] = 10;
        events.push_back(resumed); // t = 0 again
        for (int step = 11; step <= 20; ++step) {
            json p = progress(step, 10, 2, 1.0 / step);
            p["t"] = (step - 10) * 0.5;
            events.push_back(p);
        }
        plots.addEvents(events);
        plots.setXAxis(LivePlots::XAxis::WallTime);
        QCOMPARE(firstPlot(plots)->xAxis->label(), QString("wall time (s)"));
        const std::vector<double> x = xs(plots.drawnPoints("train_loss"));
        QCOMPARE(x.size(), std::size_t(20));
        QCOMPARE(x[0], 0.01);
        QCOMPARE(x[9], 0.1);
        QCOMPARE(x[10], 0.1 + 0.5); // after the first part's last `t`
        QCOMPARE(x[19], 0.1 + 5.0);
        auto *box = plots.findChild<QComboBox *>();
        QCOMPARE(box->currentIndex(), 2);
        QCOMPARE(box->itemText(2), QString("Wall time"));
    }

    // Compared runs: every run's series under its own prefix, in its own colour, named by the
    // run in the legend; validation dashed. A live event does not mix in; clear() ends it.
    void comparedRunsOverlayOneColourEach()
    {
        LivePlots plots;
        std::vector<json> a = smallRun(), b = smallRun();
        for (json &e : b)
            if (e["type"] == "progress") e["recent_loss"] = e["recent_loss"].get<double>() * 2;
        plots.compareRuns({{"baseline", a}, {"lr 0.2", b}, {"third", smallRun()}});
        QVERIFY(plots.comparing());
        QCOMPARE(plots.comparedRuns(), (QStringList{"baseline", "lr 0.2", "third"}));
        QCOMPARE(plots.pointCount("run0/train_loss"), 30);
        QCOMPARE(plots.pointCount("run1/train_loss"), 30);
        QCOMPARE(plots.pointCount("train_loss"), 0);
        QCOMPARE(plots.values("run1/train_loss")[0], 2 * plots.values("run0/train_loss")[0]);
        QCOMPARE(plots.legendName("run0/train_loss"), QString("baseline"));
        QCOMPARE(plots.legendName("run1/val_loss"), QString("lr 0.2 (validation)"));
        QCOMPARE(plots.legendName("run1/val_loss:test"), QString("lr 0.2 (validation) test"));
        // One colour per run, the same in every panel; validation dashed.
        QCOMPARE(plots.pen("run1/train_loss").color(), plots.runColor(1));
        QCOMPARE(plots.pen("run1/val_accuracy").color(), plots.runColor(1));
        QCOMPARE(plots.pen("run1/cpu").color(), plots.runColor(1));
        QVERIFY(plots.runColor(0) != plots.runColor(1) && plots.runColor(1) != plots.runColor(2));
        QCOMPARE(plots.pen("run0/val_loss").style(), Qt::DashLine);
        QCOMPARE(plots.pen("run0/train_loss").style(), Qt::SolidLine);
        // The legend names each run once: three entries in the loss panel, not six.
        QCOMPARE(firstPlot(plots)->legend->itemCount(), 3);
        // Every axis works on compared runs.
        plots.setXAxis(LivePlots::XAxis::Epoch);
        QCOMPARE(xs(plots.drawnPoints("run2/val_loss")), (std::vector<double>{1, 2, 3}));
        plots.setXAxis(LivePlots::XAxis::Step);

        plots.addEvent(progress(31, 10, 3, 0.1));
        QCOMPARE(plots.pointCount("train_loss"), 0);
        plots.clear();
        QVERIFY(!plots.comparing());
        QVERIFY(plots.comparedRuns().isEmpty());
        plots.addEvent(runStart(10, 3));
        plots.addEvent(progress(1, 10, 3, 0.1));
        QCOMPARE(plots.pointCount("train_loss"), 1);
    }

    void replayOfSavedRunLog()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("run.jsonl");
        RunRecord record;
        for (const json &e : smallRun())
            record.addEvent(e);
        QVERIFY(record.save(path).ok());
        auto loaded = RunRecord::load(path);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().str().c_str());
        QCOMPARE(loaded.value().size(), record.events().size());

        LivePlots live, replay;
        for (const json &e : record.events())
            live.addEvent(e);
        live.replotNow();
        replay.addEvents(loaded.value()); // replots once, at the end
        QCOMPARE(replay.seriesNames(), live.seriesNames());
        for (const QString &s : live.seriesNames()) {
            QCOMPARE(replay.pointCount(s), live.pointCount(s));
            QCOMPARE(replay.drawnPoints(s), live.drawnPoints(s));
        }
    }

    void userZoomStopsFollowingUntilReset()
    {
        LivePlots plots;
        plots.resize(1000, 700);
        for (int step = 1; step <= 100; ++step)
            plots.addEvent(progress(step, 100, 2, 1.0));
        plots.replotNow();
        const auto all = plots.findChildren<QCustomPlot *>();
        QVERIFY(all.size() >= 6);
        const QCPRange following = all[0]->xAxis->range();
        QVERIFY(following.lower <= 1 && following.upper >= 100 && following.upper < 102);

        all[0]->xAxis->setRange(10, 20); // as a drag or wheel zoom does
        for (QCustomPlot *p : all)       // the panels stay lined up
            QCOMPARE(p->xAxis->range().upper, 20.0);
        for (int step = 101; step <= 200; ++step)
            plots.addEvent(progress(step, 100, 2, 1.0));
        plots.replotNow();
        QCOMPARE(all[0]->xAxis->range().upper, 20.0); // the user's view stays
        for (double x : xs(plots.drawnPoints("train_loss")))
            QVERIFY(x >= 4 && x <= 26); // the visible range, half as much again, neighbours

        plots.resetView();
        QVERIFY(all[0]->xAxis->range().upper >= 200 && all[0]->xAxis->range().upper < 203);
        QCOMPARE(plots.drawnPointCount("train_loss"), 200);
    }

    void colorsFollowThePalette()
    {
        LivePlots plots;
        plots.addEvents(smallRun());
        QCustomPlot *plot = firstPlot(plots);
        const QColor lightCurve = plot->graph(1)->pen().color();

        QPalette dark = plots.palette();
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
        dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
        plots.setPalette(dark);
        QCOMPARE(plot->xAxis->labelColor(), QColor(0xe6, 0xe6, 0xe6));
        QCOMPARE(plot->yAxis->tickLabelColor(), QColor(0xe6, 0xe6, 0xe6));
        QCOMPARE(plot->legend->textColor(), QColor(0xe6, 0xe6, 0xe6));
        // Curves get lighter on a dark background, so they stand out from it.
        QVERIFY(plot->graph(1)->pen().color().lightness() > lightCurve.lightness());
    }
};

QTEST_MAIN(TestLivePlots)
#include "test_live_plots.moc"
