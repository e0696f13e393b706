#include "widgets/plots/lr_finder_view.h"

#include "widgets/plots/plot_style.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace fb::widgets {

namespace {

// Three significant digits: the value a person would type (0.0464, not 0.04641588...).
double roundTo3(double v)
{
    if (!(v > 0)) return v;
    const double scale = std::pow(10.0, 2 - std::floor(std::log10(v)));
    return std::round(v * scale) / scale;
}

} // namespace

LrFinderView::LrFinderView(QWidget *parent)
    : QWidget(parent)
{
    m_label = new QLabel;
    m_label->setWordWrap(true);
    m_plot = new QCustomPlot;
    m_plot->setMinimumSize(480, 300);
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->xAxis->setNumberFormat("eb");
    m_plot->xAxis->setNumberPrecision(0);
    m_plot->xAxis->setLabel(tr("learning rate (log)"));
    m_plot->yAxis->setLabel(tr("training loss"));
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    applyPlotPalette(m_plot, palette());
    m_use = new QPushButton(tr("Use"));
    m_use->setObjectName("lr_use");
    m_use->setEnabled(false);
    connect(m_use, &QPushButton::clicked, this,
            [this] { emit useRequested(m_optimizer, m_suggested); });
    auto *buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_use);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_label);
    layout->addWidget(m_plot, 1);
    layout->addLayout(buttons);
}

QString LrFinderView::text() const
{
    return m_label->text();
}

void LrFinderView::setRunning(const QString &what)
{
    m_label->setText(what);
    m_use->setEnabled(false);
    m_plot->clearGraphs();
    m_plot->clearItems();
    m_plot->replot();
}

void LrFinderView::setFailed(const QString &why)
{
    m_label->setText(tr("The range test did not run: %1").arg(why));
    m_use->setEnabled(false);
}

void LrFinderView::setResult(const QJsonObject &r)
{
    m_plot->clearGraphs();
    m_plot->clearItems();
    QVector<double> x, raw, smooth;
    double first = 0, lowest = 1e300;
    const double lowestAt = r["lowest_loss_lr"].toDouble();
    for (const auto &p : r["points"].toArray()) {
        const QJsonArray a = p.toArray();
        if (a.size() < 3 || !a[0].isDouble()) continue;
        x << a[0].toDouble();
        raw << (a[1].isDouble() ? a[1].toDouble() : qQNaN());
        smooth << (a[2].isDouble() ? a[2].toDouble() : qQNaN());
        if (a[2].isDouble() && first == 0) first = a[2].toDouble();
        // The range shown: everything up to the smoothed loss's lowest point, raw steps too.
        if (a[0].toDouble() <= lowestAt)
            for (int k : {1, 2})
                if (a[k].isDouble()) lowest = std::min(lowest, a[k].toDouble());
    }
    QCPGraph *g1 = m_plot->addGraph();
    g1->setName(tr("loss at each step"));
    g1->setPen(QPen(QColor(0x1f, 0x77, 0xb4, 90), 1));
    g1->setData(x, raw, true);
    QCPGraph *g2 = m_plot->addGraph();
    g2->setName(tr("smoothed"));
    g2->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 2));
    g2->setData(x, smooth, true);
    m_suggested = roundTo3(r["suggested_lr"].toDouble());
    m_optimizer = r["optimizer"].toString();
    auto *line = new QCPItemStraightLine(m_plot);
    line->setPen(QPen(QColor(0xe8, 0x71, 0x0a), 1.5, Qt::DashLine));
    line->point1->setCoords(m_suggested, 0);
    line->point2->setCoords(m_suggested, 1);
    auto *label = new QCPItemText(m_plot);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->position->setType(QCPItemPosition::ptAxisRectRatio);
    label->setText(tr("suggested: %1").arg(m_suggested));
    label->setColor(QColor(0xe8, 0x71, 0x0a));
    label->position->setCoords(0.6, 0.05);
    if (!x.isEmpty()) m_plot->xAxis->setRange(x.front(), x.back());
    // The divergence at the end would flatten the rest: show up to a little above the start.
    if (first > 0)
        m_plot->yAxis->setRange(std::max(0.0, lowest - 0.1 * (first - lowest)),
                                first + 0.5 * (first - lowest) + 1e-6);
    m_plot->replot();

    const QJsonValue current = r["current_lr"];
    QString text =
        tr("%1 steps with the learning rate rising from %2 to %3%4. The smoothed loss "
           "falls fastest at <b>%5</b> (the suggestion) and is lowest at %6.")
            .arg(r["steps"].toInt())
            .arg(x.isEmpty() ? 0 : x.front(), 0, 'g', 3)
            .arg(x.isEmpty() ? 0 : x.back(), 0, 'g', 3)
            .arg(r["diverged_at"].isDouble() ? tr(", where the loss diverged") : QString())
            .arg(m_suggested)
            .arg(r["lowest_loss_lr"].toDouble(), 0, 'g', 3);
    if (!m_optimizer.isEmpty())
        text += tr(" %1.lr is %2 now; nothing changes unless you press Use.")
                    .arg(m_optimizer, current.isDouble() ? QString::number(current.toDouble())
                                                         : QStringLiteral("?"));
    m_label->setText(text);
    m_use->setText(tr("Use %1 for %2.lr").arg(m_suggested).arg(m_optimizer));
    m_use->setEnabled(!m_optimizer.isEmpty() && m_suggested > 0);
}

void LrFinderView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        applyPlotPalette(m_plot, palette());
        m_plot->replot();
    }
}

} // namespace fb::widgets
