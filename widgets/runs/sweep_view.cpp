#include "widgets/runs/sweep_view.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSplitter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fb::widgets {

namespace {

constexpr int kDirRole = Qt::UserRole;

// A table cell that sorts by its number, not its text.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(const QString &text, double value)
        : QTableWidgetItem(text)
    {
        setData(Qt::UserRole + 1, value);
    }
    bool operator<(const QTableWidgetItem &other) const override
    {
        return data(Qt::UserRole + 1).toDouble() < other.data(Qt::UserRole + 1).toDouble();
    }
};

// Red (worst) through amber to green (best).
QColor scoreColour(double t)
{
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromHsvF(float(t * 0.33), 0.85f, 0.85f);
}

QString numberText(double v)
{
    return QString::number(v, 'g', 4);
}

} // namespace

// ---- ParallelCoordinates ----------------------------------------------------------------------

ParallelCoordinates::ParallelCoordinates(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setObjectName("sweep_parallel_coordinates");
}

void ParallelCoordinates::setData(std::vector<Axis> axes, std::vector<Line> lines)
{
    m_axes = std::move(axes);
    m_lines = std::move(lines);
    m_hover = -1;
    update();
}

QRectF ParallelCoordinates::plotArea() const
{
    return QRectF(50, 34, std::max(10, width() - 100), std::max(10, height() - 70));
}

double ParallelCoordinates::fraction(int axis, const QVariant &value) const
{
    const Axis &a = m_axes[size_t(axis)];
    if (!value.isValid()) return std::numeric_limits<double>::quiet_NaN();
    if (!a.numeric) {
        const qsizetype i = a.categories.indexOf(value.toString());
        if (i < 0) return std::numeric_limits<double>::quiet_NaN();
        return a.categories.size() == 1 ? 0.5 : double(i) / double(a.categories.size() - 1);
    }
    bool ok = false;
    double v = value.toDouble(&ok);
    if (!ok || !std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
    double lo = a.lo, hi = a.hi;
    if (a.log) {
        v = std::log10(std::max(v, 1e-300));
        lo = std::log10(lo);
        hi = std::log10(hi);
    }
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
}

QPointF ParallelCoordinates::pointOf(int line, int axis) const
{
    const QRectF area = plotArea();
    const double x = m_axes.size() <= 1
                         ? area.center().x()
                         : area.left() + area.width() * axis / double(m_axes.size() - 1);
    const double f = fraction(axis, m_lines[size_t(line)].values[size_t(axis)]);
    return {x, std::isnan(f) ? std::numeric_limits<double>::quiet_NaN()
                             : area.bottom() - f * area.height()};
}

int ParallelCoordinates::lineAt(const QPointF &pos) const
{
    int best = -1;
    double bestDistance = 6; // pixels
    for (int l = 0; l < int(m_lines.size()); ++l) {
        for (int a = 0; a + 1 < int(m_axes.size()); ++a) {
            const QPointF p = pointOf(l, a), q = pointOf(l, a + 1);
            if (std::isnan(p.y()) || std::isnan(q.y())) continue;
            if (pos.x() < p.x() || pos.x() > q.x()) continue;
            const double t = (pos.x() - p.x()) / std::max(1e-9, q.x() - p.x());
            const double y = p.y() + t * (q.y() - p.y());
            if (std::abs(pos.y() - y) < bestDistance) {
                bestDistance = std::abs(pos.y() - y);
                best = l;
            }
        }
    }
    return best;
}

void ParallelCoordinates::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    if (m_axes.empty()) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No sweep to show: start one with Sweep… in Runs"));
        return;
    }
    const QRectF area = plotArea();
    // The lines, worst first, so the best lie on top; the best and the hovered one thicker.
    std::vector<int> order(m_lines.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return m_lines[size_t(a)].score < m_lines[size_t(b)].score;
    });
    const int best = order.empty() ? -1 : order.back();
    for (int l : order) {
        QPainterPath path;
        bool started = false;
        for (int a = 0; a < int(m_axes.size()); ++a) {
            const QPointF pt = pointOf(l, a);
            if (std::isnan(pt.y())) {
                started = false;
                continue;
            }
            if (started)
                path.lineTo(pt);
            else
                path.moveTo(pt);
            started = true;
        }
        const double s = m_lines[size_t(l)].score;
        const QColor c = s < 0 ? pal.color(QPalette::Mid) : scoreColour(s);
        p.setPen(QPen(c, l == m_hover ? 4.0 : l == best ? 3.0 : 1.6));
        p.setBrush(Qt::NoBrush);
        p.drawPath(path);
    }
    // Axes with their titles and a few values.
    QFont f = font();
    QFont bold = f;
    bold.setBold(true);
    for (int a = 0; a < int(m_axes.size()); ++a) {
        const Axis &axis = m_axes[size_t(a)];
        const double x = m_axes.size() <= 1
                             ? area.center().x()
                             : area.left() + area.width() * a / double(m_axes.size() - 1);
        p.setPen(QPen(pal.color(QPalette::Text), 1.2));
        p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
        p.setFont(bold);
        p.drawText(QRectF(x - 80, 4, 160, 20), Qt::AlignCenter, axis.title);
        p.setFont(f);
        QStringList ticks;
        std::vector<double> at;
        if (!axis.numeric) {
            for (int i = 0; i < axis.categories.size(); ++i) {
                ticks << axis.categories[i];
                at.push_back(axis.categories.size() == 1
                                 ? 0.5
                                 : double(i) / double(axis.categories.size() - 1));
            }
        } else {
            for (double t : {0.0, 0.5, 1.0}) {
                const double v =
                    axis.log ? std::pow(10.0, std::log10(axis.lo) +
                                                  t * (std::log10(axis.hi) - std::log10(axis.lo)))
                             : axis.lo + t * (axis.hi - axis.lo);
                ticks << numberText(v);
                at.push_back(t);
            }
        }
        for (size_t i = 0; i < at.size(); ++i) {
            const double y = area.bottom() - at[i] * area.height();
            p.drawLine(QPointF(x - 3, y), QPointF(x + 3, y));
            p.drawText(QRectF(x + 5, y - 9, 90, 18), Qt::AlignLeft | Qt::AlignVCenter,
                       ticks[int(i)]);
        }
        if (axis.log) {
            p.drawText(QRectF(x - 40, area.bottom() + 4, 80, 16), Qt::AlignCenter, tr("(log)"));
        }
    }
}

void ParallelCoordinates::mouseMoveEvent(QMouseEvent *event)
{
    const int hover = lineAt(event->position());
    if (hover != m_hover) {
        m_hover = hover;
        update();
    }
    if (hover >= 0)
        QToolTip::showText(event->globalPosition().toPoint(), m_lines[size_t(hover)].label, this);
    else
        QToolTip::hideText();
}

void ParallelCoordinates::mousePressEvent(QMouseEvent *event)
{
    const int l = lineAt(event->position());
    if (l >= 0) emit lineClicked(m_lines[size_t(l)].id);
}

// ---- SweepView --------------------------------------------------------------------------------

SweepView::SweepView(QWidget *parent)
    : QWidget(parent)
{
    m_records = new QComboBox;
    m_records->setObjectName("sweep_records");
    m_records->setToolTip(tr("The sweeps in the runs folder, newest first"));
    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    m_plot = new ParallelCoordinates;
    m_table = new QTableWidget;
    m_table->setObjectName("sweep_table");
    m_table->setSortingEnabled(true);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto *splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(m_plot);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Sweep:")));
    top->addWidget(m_records, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(splitter, 1);

    connect(m_records, &QComboBox::currentIndexChanged, this,
            [this](int) { showRecord(m_records->currentData().toString()); });
    connect(m_plot, &ParallelCoordinates::lineClicked, this, &SweepView::runActivated);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const QString dir = m_table->item(row, 0)->data(kDirRole).toString();
        if (!dir.isEmpty()) emit runActivated(dir);
    });
    m_watcher = new QFileSystemWatcher(this);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, [this] { refresh(); });
    m_plot->setData({}, {});
}

void SweepView::setRunsDirectory(const QString &dir)
{
    if (!m_watcher->directories().isEmpty()) m_watcher->removePaths(m_watcher->directories());
    m_root = dir;
    if (QFileInfo(dir).isDir()) m_watcher->addPath(dir);
    refresh();
}

QString SweepView::currentRecord() const
{
    return m_records->currentData().toString();
}

void SweepView::refresh(const QString &record)
{
    const QString keep = record.isEmpty() ? currentRecord() : QFileInfo(record).absoluteFilePath();
    const QFileInfoList files =
        QDir(m_root).entryInfoList({QStringLiteral("*.sweep.json")}, QDir::Files, QDir::Time);
    {
        const QSignalBlocker block(m_records);
        m_records->clear();
        for (const QFileInfo &f : files)
            m_records->addItem(f.fileName().chopped(int(QStringLiteral(".sweep.json").size())),
                               f.absoluteFilePath());
        const int i = m_records->findData(keep);
        m_records->setCurrentIndex(i >= 0 ? i : 0);
    }
    showRecord(currentRecord());
}

void SweepView::showRecord(const QString &record)
{
    m_sweep = {};
    QFile f(record);
    if (record.isEmpty() || !f.open(QIODevice::ReadOnly)) {
        m_summary->setText(m_records->count() == 0
                               ? tr("No sweep yet. Runs > Sweep… (or flowbench-cli sweep) trains "
                                    "one run per combination of the values you give.")
                               : tr("Cannot read %1").arg(record));
        m_plot->setData({}, {});
        m_table->setRowCount(0);
        m_shownRecord.clear();
        return;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    if (!doc.isObject() || doc.object()["format"].toString() != "flowbench.sweep") {
        m_summary->setText(tr("%1 is not a sweep record: %2")
                               .arg(QFileInfo(record).fileName(), error.errorString()));
        m_plot->setData({}, {});
        m_table->setRowCount(0);
        return;
    }
    m_sweep = doc.object();
    const QString status = m_sweep["status"].toString();

    // Axes: each swept parameter, then the test accuracy.
    const QJsonArray params = m_sweep["parameters"].toArray();
    const QJsonArray labels = m_sweep["labels"].toArray();
    const QJsonArray trials = m_sweep["trials"].toArray();
    // The known accuracies in rising order: a run's rank is where its own falls among them.
    std::vector<double> accuracies;
    for (const auto &t : trials)
        if (const QJsonValue a = t.toObject()["test_accuracy"]; a.isDouble())
            accuracies.push_back(a.toDouble());
    std::sort(accuracies.begin(), accuracies.end());
    std::vector<ParallelCoordinates::Axis> axes;
    QStringList keys;
    for (int i = 0; i < params.size(); ++i) {
        const QJsonObject p = params[i].toObject();
        keys << p["key"].toString();
        ParallelCoordinates::Axis axis;
        axis.title = i < labels.size() ? labels[i].toString() : p["key"].toString();
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const auto &v : p["values"].toArray()) {
            bool ok = false;
            const double d = v.toString().toDouble(&ok);
            if (!ok) axis.numeric = false;
            axis.categories << v.toString();
            if (ok) {
                lo = std::min(lo, d);
                hi = std::max(hi, d);
            }
        }
        if (axis.numeric) {
            axis.lo = lo;
            axis.hi = hi;
            axis.log = lo > 0 && hi / lo >= 100;
            axis.categories.clear();
        }
        axes.push_back(axis);
    }
    ParallelCoordinates::Axis accuracy;
    accuracy.title = tr("test accuracy");
    double lo = 1, hi = 0;
    for (const auto &t : trials) {
        const QJsonValue a = t.toObject()["test_accuracy"];
        if (a.isDouble()) {
            lo = std::min(lo, a.toDouble());
            hi = std::max(hi, a.toDouble());
        }
    }
    accuracy.lo = hi >= lo ? lo : 0;
    accuracy.hi = hi >= lo ? hi : 1;
    axes.push_back(accuracy);

    std::vector<ParallelCoordinates::Line> lines;
    const QString root = QFileInfo(record).absolutePath();
    m_table->setSortingEnabled(false);
    m_table->clear();
    QStringList headers{tr("Run")};
    for (const auto &a : axes)
        if (&a != &axes.back()) headers << a.title;
    headers << tr("Status") << tr("Test acc.") << tr("Final loss") << tr("Seconds");
    m_table->setColumnCount(int(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    m_table->setRowCount(int(trials.size()));
    int done = 0;
    for (int r = 0; r < trials.size(); ++r) {
        const QJsonObject t = trials[r].toObject();
        const QString dir = root + QStringLiteral("/") + t["dir"].toString();
        ParallelCoordinates::Line line;
        line.id = dir;
        line.label = t["name"].toString();
        const QJsonObject values = t["params"].toObject();
        auto *name = new QTableWidgetItem(t["name"].toString());
        name->setData(kDirRole, dir);
        m_table->setItem(r, 0, name);
        for (int k = 0; k < keys.size(); ++k) {
            const QJsonValue v = values[keys[k]];
            const QString text = v.isDouble() ? numberText(v.toDouble()) : v.toString();
            line.values.push_back(axes[size_t(k)].numeric ? QVariant(v.toDouble())
                                                          : QVariant(v.toString()));
            m_table->setItem(r, 1 + k,
                             v.isDouble() ? new NumberItem(text, v.toDouble())
                                          : new QTableWidgetItem(text));
        }
        const QJsonValue acc = t["test_accuracy"];
        line.values.push_back(acc.isDouble() ? QVariant(acc.toDouble()) : QVariant());
        // Coloured by rank, not by value: one diverged run at 10% must not paint every other
        // run the same green.
        if (acc.isDouble()) {
            const auto below =
                std::lower_bound(accuracies.begin(), accuracies.end(), acc.toDouble()) -
                accuracies.begin();
            const size_t known = accuracies.size();
            line.score = known > 1 ? double(below) / double(known - 1) : 1.0;
        }
        lines.push_back(line);
        const QString st = t["status"].toString();
        done += st != "running" && st != "pending";
        int c = 1 + int(keys.size());
        m_table->setItem(r, c++, new QTableWidgetItem(st));
        auto number = [&](const char *key, int decimals) {
            const QJsonValue v = t[key];
            return v.isDouble()
                       ? new NumberItem(QString::number(v.toDouble(), 'f', decimals), v.toDouble())
                       : new NumberItem(QStringLiteral("—"), -1);
        };
        m_table->setItem(r, c++, number("test_accuracy", 4));
        m_table->setItem(r, c++, number("final_loss", 4));
        m_table->setItem(r, c++, number("wall_s", 1));
        if (acc.isDouble()) name->setForeground(scoreColour(line.score).darker(130));
    }
    m_table->setSortingEnabled(true);
    // Best first when a record is chosen; as it grows, the person's sort and widths stay.
    if (record != m_shownRecord) {
        m_table->sortByColumn(int(headers.size()) - 3, Qt::DescendingOrder);
        m_table->resizeColumnsToContents();
        m_shownRecord = record;
    }
    m_plot->setData(std::move(axes), std::move(lines));
    m_summary->setText(tr("%1: %2 of %n run(s) done, %3. Click a line or double-click a row to "
                          "open its run.",
                          nullptr, int(trials.size()))
                           .arg(m_sweep["name"].toString())
                           .arg(done)
                           .arg(status));
}

} // namespace fb::widgets
