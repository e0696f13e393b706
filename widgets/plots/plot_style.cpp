#include "widgets/plots/plot_style.h"

#include <qcustomplot.h>

namespace fb::widgets {

void applyPlotPalette(QCustomPlot *plot, const QPalette &pal)
{
    const QColor background = pal.color(QPalette::Base);
    const QColor text = pal.color(QPalette::Text);
    QColor grid = text;
    grid.setAlpha(35);
    QColor axis = text;
    axis.setAlpha(160);
    QColor legendBackground = background;
    legendBackground.setAlpha(210);
    QColor legendBorder = text;
    legendBorder.setAlpha(60);
    plot->setBackground(background);
    for (QCPAxis *a : {plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}) {
        a->setBasePen(QPen(axis));
        a->setTickPen(QPen(axis));
        a->setSubTickPen(QPen(axis));
        a->setLabelColor(text);
        a->setTickLabelColor(text);
        a->grid()->setPen(QPen(grid, 0, Qt::DotLine));
        a->grid()->setZeroLinePen(Qt::NoPen);
    }
    plot->legend->setBrush(legendBackground);
    plot->legend->setBorderPen(QPen(legendBorder));
    plot->legend->setTextColor(text);
}

} // namespace fb::widgets
