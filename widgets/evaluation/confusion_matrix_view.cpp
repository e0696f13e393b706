#include "widgets/evaluation/confusion_matrix_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace fb::widgets {

namespace {

constexpr int kPad = 6;

// WCAG relative luminance: decides which text colour reads on a cell.
double luminance(const QColor &c)
{
    auto lin = [](double v) {
        return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
}

QColor mix(const QColor &a, const QColor &b, double t)
{
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                            float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

QString percentText(double share)
{
    return QString::number(share * 100.0, 'f', 1) + QLatin1Char('%');
}

} // namespace

ConfusionMatrixView::ConfusionMatrixView(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ConfusionMatrixView::setMatrix(const QStringList &classes, const std::vector<qint64> &counts)
{
    Q_ASSERT(counts.size() == size_t(classes.size()) * size_t(classes.size()));
    m_classes = classes;
    m_counts = counts;
    const int k = int(classes.size());
    m_rowSums.assign(size_t(k), 0);
    m_max = 0;
    for (int t = 0; t < k; ++t)
        for (int p = 0; p < k; ++p) {
            m_rowSums[size_t(t)] += count(t, p);
            m_max = std::max(m_max, count(t, p));
        }
    m_hover = m_selected = {-1, -1};
    updateGeometry();
    update();
}

void ConfusionMatrixView::clear()
{
    setMatrix({}, {});
}

void ConfusionMatrixView::setRowNormalized(bool on)
{
    if (m_rowNormalized == on) return;
    m_rowNormalized = on;
    update();
}

double ConfusionMatrixView::shade(int t, int p) const
{
    const qint64 n = count(t, p);
    if (n == 0) return 0;
    const qint64 scale = m_rowNormalized ? m_rowSums[size_t(t)] : m_max;
    // A floor, so a single confusion among thousands of hits is still visibly not zero.
    return 0.08 + 0.92 * double(n) / double(std::max<qint64>(scale, 1));
}

bool ConfusionMatrixView::darkPalette() const
{
    return palette().color(QPalette::Base).lightnessF() < 0.5;
}

QColor ConfusionMatrixView::cellColor(int t, int p) const
{
    // Light palettes: from near-white to deep blue (the "Blues" ramp people know from
    // scikit-learn's plots). Dark ones: from the view's own background to a light blue, so an
    // empty cell does not glare.
    const QColor low = darkPalette() ? palette().color(QPalette::Base) : QColor(0xf7, 0xfb, 0xff);
    const QColor high = darkPalette() ? QColor(0x9e, 0xca, 0xe1) : QColor(0x08, 0x30, 0x6b);
    return mix(low, high, shade(t, p));
}

QColor ConfusionMatrixView::cellTextColor(int t, int p) const
{
    // Black on a light cell, white on a dark one: the choice with the higher contrast ratio.
    const double l = luminance(cellColor(t, p));
    return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? QColor(Qt::black) : QColor(Qt::white);
}

QString ConfusionMatrixView::cellText(int t, int p) const
{
    return QString::number(count(t, p));
}

QString ConfusionMatrixView::cellToolTip(int t, int p) const
{
    const QString &truth = m_classes[t];
    const qint64 row = m_rowSums[size_t(t)];
    const QString share =
        row > 0
            ? QStringLiteral("%1 of %2").arg(percentText(double(count(t, p)) / double(row)), truth)
            : QStringLiteral("no %1 samples").arg(truth);
    return QStringLiteral("true %1, predicted %2: %3 (%4)")
        .arg(truth, m_classes[p], QString::number(count(t, p)), share);
}

ConfusionMatrixView::Layout ConfusionMatrixView::layout() const
{
    Layout l;
    const QFontMetrics fm = fontMetrics();
    for (const QString &c : m_classes)
        l.labelWidth = std::max(l.labelWidth, fm.horizontalAdvance(c));
    l.labelWidth += kPad;
    l.titleHeight = fm.height() + kPad;
    const int k = std::max(int(m_classes.size()), 1);
    // Left: the "True class" title (turned) and the row names; bottom: the column names (turned)
    // and the "Predicted class" title.
    const int left = l.titleHeight + l.labelWidth, top = kPad;
    const int bottom = kPad / 2 + l.labelWidth + l.titleHeight;
    const int side = std::min(width() - left - kPad, height() - top - bottom);
    l.cell = std::max(side / k, 1);
    // Centred in the room the labels leave, rather than pushed into a corner.
    const int spare = std::max(width() - left - kPad - l.cell * k, 0);
    l.grid = QRect(left + spare / 2, top, l.cell * k, l.cell * k);
    return l;
}

QRect ConfusionMatrixView::cellRect(int t, int p) const
{
    const Layout l = layout();
    return QRect(l.grid.left() + p * l.cell, l.grid.top() + t * l.cell, l.cell, l.cell);
}

std::pair<int, int> ConfusionMatrixView::cellAt(const QPoint &pos) const
{
    const Layout l = layout();
    if (m_classes.isEmpty() || !l.grid.contains(pos)) return {-1, -1};
    const int k = int(m_classes.size());
    return {std::min((pos.y() - l.grid.top()) / l.cell, k - 1),
            std::min((pos.x() - l.grid.left()) / l.cell, k - 1)};
}

void ConfusionMatrixView::setSelectedCell(int t, int p)
{
    m_selected = {t, p};
    update();
}

QSize ConfusionMatrixView::sizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    const int k = std::max(int(m_classes.size()), 10);
    const int cell = fm.horizontalAdvance(QStringLiteral("00000")) + kPad;
    const Layout l = layout();
    const int margin = l.titleHeight + l.labelWidth;
    return {margin + k * cell + kPad, margin + k * cell + kPad};
}

QSize ConfusionMatrixView::minimumSizeHint() const
{
    return {160, 160};
}

bool ConfusionMatrixView::event(QEvent *e)
{
    if (e->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(e);
        const auto [t, p] = cellAt(help->pos());
        if (t >= 0)
            QToolTip::showText(help->globalPos(), cellToolTip(t, p), this, cellRect(t, p));
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

void ConfusionMatrixView::mouseMoveEvent(QMouseEvent *e)
{
    const auto cell = cellAt(e->position().toPoint());
    if (cell != m_hover) {
        m_hover = cell;
        update();
    }
    QWidget::mouseMoveEvent(e);
}

void ConfusionMatrixView::mousePressEvent(QMouseEvent *e)
{
    if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
    auto cell = cellAt(e->position().toPoint());
    if (cell == m_selected) cell = {-1, -1};
    setSelectedCell(cell.first, cell.second);
    emit cellSelected(cell.first, cell.second);
}

void ConfusionMatrixView::leaveEvent(QEvent *e)
{
    m_hover = {-1, -1};
    update();
    QWidget::leaveEvent(e);
}

void ConfusionMatrixView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    const QColor text = palette().color(QPalette::Text);
    if (m_classes.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(rect().adjusted(kPad, kPad, -kPad, -kPad),
                         Qt::AlignCenter | Qt::TextWordWrap,
                         tr("No evaluation yet. Run a pipeline with an Evaluate node to see which "
                            "classes the model confuses."));
        return;
    }
    const Layout l = layout();
    const int k = int(m_classes.size());

    // Counts in a font that fits the cell; when even a small one does not, the tooltip tells.
    QFont cellFont = font();
    const QFontMetrics fm(cellFont);
    const QString widest = QString::number(m_max);
    const double fit = 0.8 * l.cell / std::max(fm.horizontalAdvance(widest), 1);
    const double fitHeight = 0.6 * l.cell / std::max(fm.height(), 1);
    const double scale = std::min({fit, fitHeight, 1.4});
    bool writeCounts = false;
    if (cellFont.pointSizeF() > 0) {
        const qreal size = cellFont.pointSizeF() * scale;
        writeCounts = size >= 5.5;
        if (writeCounts) cellFont.setPointSizeF(size);
    } else {
        const int size = int(cellFont.pixelSize() * scale);
        writeCounts = size >= 7;
        if (writeCounts) cellFont.setPixelSize(size);
    }

    painter.setFont(cellFont);
    for (int t = 0; t < k; ++t)
        for (int p = 0; p < k; ++p) {
            const QRect r = cellRect(t, p);
            painter.fillRect(r, cellColor(t, p));
            if (writeCounts) {
                painter.setPen(cellTextColor(t, p));
                painter.drawText(r, Qt::AlignCenter, cellText(t, p));
            }
        }

    // Grid lines, the diagonal (the correct predictions) framed, hover and selection outlined.
    painter.setPen(QPen(palette().color(QPalette::Mid), 0));
    for (int i = 0; i <= k; ++i) {
        painter.drawLine(l.grid.left(), l.grid.top() + i * l.cell, l.grid.right() + 1,
                         l.grid.top() + i * l.cell);
        painter.drawLine(l.grid.left() + i * l.cell, l.grid.top(), l.grid.left() + i * l.cell,
                         l.grid.bottom() + 1);
    }
    auto outline = [&](std::pair<int, int> cell, const QColor &color, int width) {
        if (cell.first < 0) return;
        painter.setPen(QPen(color, width));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(cellRect(cell.first, cell.second).adjusted(1, 1, -1, -1));
    };
    outline(m_hover, palette().color(QPalette::Highlight), 1);
    outline(m_selected, palette().color(QPalette::Highlight), 3);

    // Class names: rows on the left, columns along the bottom (turned to read upwards).
    painter.setFont(font());
    painter.setPen(text);
    const int labelRight = l.grid.left() - kPad / 2;
    for (int t = 0; t < k; ++t)
        painter.drawText(
            QRect(labelRight - l.labelWidth, l.grid.top() + t * l.cell, l.labelWidth, l.cell),
            Qt::AlignRight | Qt::AlignVCenter, m_classes[t]);
    for (int p = 0; p < k; ++p) {
        painter.save();
        painter.translate(l.grid.left() + p * l.cell, l.grid.bottom() + 1 + kPad / 2);
        painter.rotate(-90);
        painter.drawText(QRect(-l.labelWidth, 0, l.labelWidth, l.cell),
                         Qt::AlignRight | Qt::AlignVCenter, m_classes[p]);
        painter.restore();
    }

    // Axis titles.
    QFont bold = font();
    bold.setBold(true);
    painter.setFont(bold);
    painter.drawText(QRect(l.grid.left(), l.grid.bottom() + 1 + kPad / 2 + l.labelWidth,
                           l.grid.width(), l.titleHeight),
                     Qt::AlignCenter, tr("Predicted class"));
    painter.save();
    painter.translate(0, l.grid.bottom() + 1);
    painter.rotate(-90);
    painter.drawText(QRect(0, 0, l.grid.height(), l.titleHeight), Qt::AlignCenter,
                     tr("True class"));
    painter.restore();
}

} // namespace fb::widgets
