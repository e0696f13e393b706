#pragma once

#include "widgets/evaluation/evaluation_data.h"

#include <QImage>
#include <QWidget>

#include <nlohmann/json_fwd.hpp>

#include <optional>

class QCheckBox;
class QLabel;
class QFile;
class QListWidget;
class QSplitter;
class QTableWidget;

namespace fb::widgets {

class ConfusionMatrixView;

// What an evaluate node found (docs/events.md, the `evaluation` event): a summary line with the
// accuracy, the confusion matrix as a heatmap with its counts, a sortable table of precision,
// recall, F1 and support per class, and a gallery of misclassified test images (true and
// predicted class, the predicted probability), scaled up without smoothing so each pixel stays
// a crisp square. Clicking a matrix cell shows only that confusion's images.
class EvaluationView : public QWidget {
    Q_OBJECT
public:
    enum Column { ClassColumn, PrecisionColumn, RecallColumn, F1Column, SupportColumn };

    explicit EvaluationView(QWidget *parent = nullptr);

    void clear();
    // Shows an `evaluation` event, or an entry of OUT/evaluation.json. A malformed one is
    // refused: false, the view keeps what it showed, lastError() says why. Never throws.
    // An event without `misclassified` (epochs before the last) keeps no gallery and says why.
    bool setEvaluation(const nlohmann::json &evaluationEvent);
    bool hasEvaluation() const { return m_data.has_value(); }
    const EvaluationData *evaluation() const { return m_data ? &*m_data : nullptr; }
    QString lastError() const { return m_lastError; }

    // What the view shows, in the user's words (the tests read these).
    int classCount() const;
    QString className(int cls) const;
    QString cellText(int trueClass, int predicted) const;    // the count in the matrix cell
    QString cellToolTip(int trueClass, int predicted) const; // what hovering the cell says
    QString summaryText() const;
    QString galleryNote() const;                  // the line above the gallery
    QString tableText(int row, int column) const; // the table as sorted now
    int galleryCount() const;        // the images the gallery lists (the selected cell's)
    int visibleGalleryCount() const; // the same: the gallery is filled with the cell's only
    QString galleryCaption(int i) const;          // "true: Shirt / predicted: T-shirt/top (0.87)"
    QImage galleryImage(int i) const;             // at the sample's own size

    // Colour the matrix by the share of each true class rather than by the count.
    void setRowNormalized(bool on);
    bool rowNormalized() const;
    // Shows only the misclassified images of one (true, predicted) cell; (-1, -1) shows all.
    void filterGallery(int trueClass, int predicted);
    // The run folder the pictures of every misclassified sample are read from (its
    // misclassified-NODE.u8), when a cell is clicked; empty: only the ones the event carries.
    void setPicturesFolder(const QString &dir);

    ConfusionMatrixView *matrixView() const { return m_matrix; }
    QTableWidget *classTable() const { return m_table; }
    QListWidget *gallery() const { return m_gallery; }

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void display(EvaluationData data);
    void fillTable();
    void updateGalleryNote();

    std::optional<EvaluationData> m_data;
    QString m_lastError;
    std::pair<int, int> m_filter{-1, -1};
    QLabel *m_summary = nullptr;
    QCheckBox *m_rowNormalized = nullptr;
    ConfusionMatrixView *m_matrix = nullptr;
    QTableWidget *m_table = nullptr;
    QLabel *m_galleryNote = nullptr;
    QListWidget *m_gallery = nullptr;
    QSplitter *m_split = nullptr;
    bool m_splitSized = false; // the person's own splitter positions are kept after the first
    QString m_picturesFolder;
    bool m_cellComplete = false; // the gallery shows every misclassified sample of its cell
    // Of the run's misclassified_all, from its open pictures file; null when not kept.
    QImage pictureAt(QFile &pictures, qsizetype position) const;
};

} // namespace fb::widgets
