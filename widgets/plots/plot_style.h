#pragma once

#include <QPalette>

class QCustomPlot;

namespace fb::widgets {

// A QCustomPlot in the colours of the widget palette (the light or dark theme): background,
// axes, grid, labels and legend. QCustomPlot paints white with black text whatever the theme;
// every plot of the window goes through this, on creation and on every palette change.
void applyPlotPalette(QCustomPlot *plot, const QPalette &palette);

// Whether the palette is a dark theme's: series colours are picked to read on it.
inline bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

} // namespace fb::widgets
