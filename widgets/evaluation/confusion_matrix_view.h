#pragma once

#include <QColor>
#include <QRect>
#include <QStringList>
#include <QWidget>

#include <vector>

namespace fb::widgets {

// A confusion matrix as a heatmap: one square cell per (true class, predicted class), true
// classes down the left, predicted ones along the bottom, the count written in each cell. The
// colour follows the count (or, row-normalized, the share of the true class), so the few
// confusions that matter stand out; the text is black or white, whichever reads better on its
// cell, in light and dark palettes alike. Hovering a cell says what it counts; clicking selects
// it (clicking it again, or outside the grid, clears the selection).
class ConfusionMatrixView : public QWidget {
    Q_OBJECT
public:
    explicit ConfusionMatrixView(QWidget *parent = nullptr);

    // classes.size() squared counts, row-major; rows are true classes.
    void setMatrix(const QStringList &classes, const std::vector<qint64> &counts);
    void clear();
    int classCount() const { return int(m_classes.size()); }

    // Colour by the share of each true class instead of by the count over the whole matrix:
    // a class with few samples then shows its confusions as clearly as a large one.
    void setRowNormalized(bool on);
    bool rowNormalized() const { return m_rowNormalized; }

    QString cellText(int trueClass, int predicted) const;    // what the cell shows
    QString cellToolTip(int trueClass, int predicted) const; // what hovering it says
    QColor cellColor(int trueClass, int predicted) const;
    QColor cellTextColor(int trueClass, int predicted) const;
    QRect cellRect(int trueClass, int predicted) const; // in widget coordinates
    // The cell under `pos` as (true, predicted), or (-1, -1).
    std::pair<int, int> cellAt(const QPoint &pos) const;

    void setSelectedCell(int trueClass, int predicted); // (-1, -1) clears it
    std::pair<int, int> selectedCell() const { return m_selected; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    // A cell was clicked ((-1, -1): the selection was cleared).
    void cellSelected(int trueClass, int predicted);

protected:
    bool event(QEvent *e) override;
    void paintEvent(QPaintEvent *) override;
    void mouseMoveEvent(QMouseEvent *e) override;
    void mousePressEvent(QMouseEvent *e) override;
    void leaveEvent(QEvent *e) override;

private:
    struct Layout {
        int labelWidth = 0;  // room for the longest class name
        int titleHeight = 0; // room for an axis title
        QRect grid;          // the cells
        int cell = 0;        // side of a cell
    };
    Layout layout() const;
    qint64 count(int t, int p) const
    {
        return m_counts[size_t(t) * size_t(m_classes.size()) + size_t(p)];
    }
    double shade(int t, int p) const; // 0..1: how strongly the cell is coloured
    bool darkPalette() const;

    QStringList m_classes;
    std::vector<qint64> m_counts;
    std::vector<qint64> m_rowSums;
    qint64 m_max = 0;
    bool m_rowNormalized = false;
    std::pair<int, int> m_hover{-1, -1}, m_selected{-1, -1};
};

} // namespace fb::widgets
