#include "widgets/evaluation/evaluation_view.h"

#include "widgets/evaluation/confusion_matrix_view.h"

#include <QCheckBox>
#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QScopeGuard>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <map>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace fb::widgets {

namespace {

constexpr int kIndexRole = Qt::UserRole;       // gallery: the sample's test index
constexpr int kImageRole = Qt::UserRole + 3;   // gallery: the image at its own size
constexpr int kCaptionRole = Qt::UserRole + 4; // gallery: the caption on one line
constexpr int kSortRole = Qt::UserRole;        // table: the number a column sorts by

// Gallery images are scaled up by a whole factor to about this size, pixel by pixel.
constexpr int kIconTarget = 96;

// Sorts by the number behind the text, not by the text: "0.95" < "0.123" as strings, and an
// undefined "–" belongs below every value.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(double sortKey, const QString &text)
        : QTableWidgetItem(text)
    {
        setData(kSortRole, sortKey);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    }
    bool operator<(const QTableWidgetItem &other) const override
    {
        return data(kSortRole).toDouble() < other.data(kSortRole).toDouble();
    }
};

// Asks for the width of all its columns: the figures are the point of the table, so the
// splitter should not hide them behind a scroll bar.
class ClassTable : public QTableWidget {
public:
    explicit ClassTable(QWidget *parent)
        : QTableWidget(0, 5, parent)
    {}
    QSize minimumSizeHint() const override
    {
        return {horizontalHeader()->length() + 2 * frameWidth() +
                    verticalScrollBar()->sizeHint().width() + 2,
                QTableWidget::minimumSizeHint().height()};
    }
    QSize sizeHint() const override { return {minimumSizeHint().width(), 300}; }
};

QString ratioText(double v)
{
    return v < 0 ? QStringLiteral("–") : QString::number(v, 'f', 3);
}

QString percentText(double share)
{
    return QString::number(share * 100.0, 'f', 1) + QLatin1Char('%');
}

} // namespace

EvaluationView::EvaluationView(QWidget *parent)
    : QWidget(parent)
{
    m_summary = new QLabel(this);
    m_summary->setObjectName("summary");
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    QFont summaryFont = m_summary->font();
    summaryFont.setBold(true);
    m_summary->setFont(summaryFont);

    m_rowNormalized = new QCheckBox(tr("Colour by share of each true class"), this);
    m_rowNormalized->setToolTip(tr("Colour each row by the share of that class's samples, so "
                                   "confusions of a small class show as clearly as a large "
                                   "one's. The cells still show counts."));
    m_matrix = new ConfusionMatrixView(this);
    m_matrix->setObjectName("confusionMatrix");
    connect(m_rowNormalized, &QCheckBox::toggled, m_matrix, &ConfusionMatrixView::setRowNormalized);
    connect(m_matrix, &ConfusionMatrixView::cellSelected, this, &EvaluationView::filterGallery);

    m_table = new ClassTable(this);
    m_table->setObjectName("classTable");
    m_table->setHorizontalHeaderLabels(
        {tr("Class"), tr("Precision"), tr("Recall"), tr("F1"), tr("Support")});
    m_table->horizontalHeaderItem(PrecisionColumn)
        ->setToolTip(tr("Of the samples predicted as the class, the share that are of it"));
    m_table->horizontalHeaderItem(RecallColumn)
        ->setToolTip(tr("Of the samples of the class, the share predicted as it"));
    m_table->horizontalHeaderItem(F1Column)->setToolTip(
        tr("The harmonic mean of precision and recall"));
    m_table->horizontalHeaderItem(SupportColumn)->setToolTip(tr("Test samples of the class"));
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(ClassColumn, Qt::AscendingOrder);

    m_galleryNote = new QLabel(this);
    m_galleryNote->setObjectName("galleryNote");
    m_galleryNote->setTextFormat(Qt::PlainText);
    m_galleryNote->setWordWrap(true);
    m_gallery = new QListWidget(this);
    m_gallery->setObjectName("misclassifiedGallery");
    m_gallery->setViewMode(QListView::IconMode);
    m_gallery->setMovement(QListView::Static);
    m_gallery->setResizeMode(QListView::Adjust);
    // Captions carry their own line break and the grid is sized for their longest line:
    // wrapping would break them at the icon's width instead.
    m_gallery->setWordWrap(false);
    m_gallery->setSpacing(4);
    m_gallery->setSelectionMode(QAbstractItemView::SingleSelection);

    auto *matrixPane = new QWidget(this);
    auto *matrixLayout = new QVBoxLayout(matrixPane);
    matrixLayout->setContentsMargins(0, 0, 0, 0);
    matrixLayout->addWidget(m_matrix, 1);
    matrixLayout->addWidget(m_rowNormalized);

    auto *galleryPane = new QWidget(this);
    auto *galleryLayout = new QVBoxLayout(galleryPane);
    galleryLayout->setContentsMargins(0, 0, 0, 0);
    galleryLayout->addWidget(m_galleryNote);
    galleryLayout->addWidget(m_gallery, 1);

    // Side by side: the matrix, the per-class table and the gallery. The dock is wide and
    // short (about 1000 x 380 px in a 1600 x 1000 window): stacked, the matrix got cells too
    // small for their counts, the table scrolled and the gallery showed half a row of pictures
    // without their labels. In a row, the matrix takes the whole height, the table's eleven
    // short rows fit, and the gallery scrolls whole pictures with their captions.
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    auto *split = new QSplitter(Qt::Horizontal, this);
    m_split = split;
    split->setObjectName("evaluationSplitter");
    split->addWidget(matrixPane);
    split->addWidget(m_table);
    split->addWidget(galleryPane);
    // The table as wide as its columns; the matrix and the gallery share the rest.
    m_table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_table->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Expanding);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 0);
    split->setStretchFactor(2, 1);
    split->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
    clear();
}

void EvaluationView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    // The first time it has a width: the table as wide as its columns, the matrix and the
    // gallery about half of the rest each (the matrix's own size hint would take most).
    if (m_splitSized || m_split->width() < 300) return;
    m_splitSized = true;
    const int table = m_table->sizeHint().width();
    const int rest = std::max(0, m_split->width() - table - 2 * m_split->handleWidth());
    m_split->setSizes({rest / 2, table, rest - rest / 2});
}

void EvaluationView::clear()
{
    m_data.reset();
    m_lastError.clear();
    m_filter = {-1, -1};
    m_matrix->clear();
    m_summary->setText(tr("No evaluation yet."));
    fillTable();
    filterGallery(m_filter.first, m_filter.second);
}

bool EvaluationView::setEvaluation(const nlohmann::json &evaluationEvent)
{
    Result<EvaluationData> data = parseEvaluation(evaluationEvent);
    if (!data.ok()) {
        m_lastError = QString::fromStdString(data.error().message);
        return false;
    }
    m_lastError.clear();
    display(std::move(data).value());
    return true;
}

void EvaluationView::display(EvaluationData data)
{
    m_data = std::move(data);
    m_filter = {-1, -1};
    const EvaluationData &d = *m_data;
    m_matrix->setMatrix(d.classes, d.confusion);

    QStringList parts;
    const double accuracy = d.accuracy();
    parts << (accuracy < 0 ? tr("No test samples")
                           : tr("Accuracy %1 (%2 of %3 test samples)")
                                 .arg(percentText(accuracy))
                                 .arg(d.correct())
                                 .arg(d.total()));
    if (d.loss >= 0) parts << tr("loss %1").arg(d.loss, 0, 'f', 4);
    QString where = d.node;
    if (d.epoch > 0)
        where += (where.isEmpty() ? QString() : QStringLiteral(", ")) +
                 (d.epochs > 0 ? tr("epoch %1 of %2").arg(d.epoch).arg(d.epochs)
                               : tr("epoch %1").arg(d.epoch));
    if (!where.isEmpty()) parts << where;
    m_summary->setText(parts.join(QStringLiteral(" · ")));

    fillTable();
    filterGallery(m_filter.first, m_filter.second);
}

void EvaluationView::fillTable()
{
    // Sorting while rows are filled would move them under our feet.
    m_table->setSortingEnabled(false);
    m_table->clearContents();
    const int k = m_data ? m_data->classCount() : 0;
    m_table->setRowCount(k);
    for (int c = 0; c < k; ++c) {
        const EvaluationData &d = *m_data;
        auto *name = new NumberItem(c, d.classes[c]);
        name->setTextAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        m_table->setItem(c, ClassColumn, name);
        const double precision = d.precision(c), recall = d.recall(c), f1 = d.f1(c);
        auto *p = new NumberItem(precision, ratioText(precision));
        if (precision < 0)
            p->setToolTip(tr("No test sample was predicted as %1").arg(d.classes[c]));
        auto *r = new NumberItem(recall, ratioText(recall));
        if (recall < 0) r->setToolTip(tr("No test sample is of class %1").arg(d.classes[c]));
        m_table->setItem(c, PrecisionColumn, p);
        m_table->setItem(c, RecallColumn, r);
        m_table->setItem(c, F1Column, new NumberItem(f1, ratioText(f1)));
        m_table->setItem(c, SupportColumn,
                         new NumberItem(double(d.support(c)), QString::number(d.support(c))));
    }
    m_table->setSortingEnabled(true); // sorts again by the column the user chose
}

void EvaluationView::setPicturesFolder(const QString &dir)
{
    m_picturesFolder = dir;
}

QImage EvaluationView::pictureAt(QFile &pictures, qsizetype position) const
{
    // The run folder's file of every kept picture, read where this one is: a cell's pictures
    // are loaded when the cell is clicked, not all of them with the event.
    if (!pictures.isOpen() || position >= m_data->picturesKept) return {};
    const qint64 size = qint64(m_data->imageChannels) * m_data->imageHeight * m_data->imageWidth;
    if (size <= 0 || !pictures.seek(position * size)) return {};
    const QByteArray bytes = pictures.read(size);
    if (bytes.size() != size) return {};
    return imageFromPixels(bytes, m_data->imageHeight, m_data->imageWidth, m_data->imageChannels);
}

void EvaluationView::filterGallery(int trueClass, int predicted)
{
    const int k = classCount();
    if (trueClass < 0 || predicted < 0 || trueClass >= k || predicted >= k)
        trueClass = predicted = -1;
    m_filter = {trueClass, predicted};
    if (m_matrix->selectedCell() != m_filter) m_matrix->setSelectedCell(trueClass, predicted);

    // What to show: a cell's every misclassified sample when the run lists them all (the
    // pictures from the ones the event carries, else from the run folder's file), otherwise
    // the first ones the event carries, those of the cell when one is chosen.
    std::vector<MisclassifiedImage> shown;
    m_cellComplete = false;
    if (m_data && trueClass >= 0 && !m_data->all.empty()) {
        m_cellComplete = true;
        // Opened once for the cell (a missing folder or file: only the carried pictures).
        QFile pictures(m_picturesFolder + QLatin1Char('/') + m_data->picturesFile);
        if (!m_picturesFolder.isEmpty() && !m_data->picturesFile.isEmpty())
            (void)pictures.open(QIODevice::ReadOnly);
        std::map<qint64, const MisclassifiedImage *> carried;
        for (const MisclassifiedImage &m : m_data->misclassified)
            carried[m.index] = &m;
        for (size_t i = 0; i < m_data->all.size(); ++i) {
            const EvaluationData::Ref &r = m_data->all[i];
            if (r.trueClass != trueClass || r.predicted != predicted) continue;
            MisclassifiedImage m{r.index, r.trueClass, r.predicted, r.probability, {}};
            if (auto it = carried.find(r.index); it != carried.end())
                m.image = it->second->image;
            else
                m.image = pictureAt(pictures, qsizetype(i));
            shown.push_back(std::move(m));
        }
    } else if (m_data) {
        for (const MisclassifiedImage &m : m_data->misclassified)
            if (trueClass < 0 || (m.trueClass == trueClass && m.predicted == predicted))
                shown.push_back(m);
    }

    // One layout and one repaint for the whole gallery, not one per image.
    m_gallery->setUpdatesEnabled(false);
    const auto restore = qScopeGuard([this] { m_gallery->setUpdatesEnabled(true); });
    m_gallery->clear();
    if (!shown.empty()) {
        // One whole scale factor for all, from the run's image size: nearest-neighbour scaling
        // by a whole factor keeps every pixel a crisp square of the same size.
        QSize own(m_data->imageWidth, m_data->imageHeight);
        for (const MisclassifiedImage &m : shown)
            if (!m.image.isNull()) {
                own = m.image.size();
                break;
            }
        if (own.isEmpty()) own = QSize(28, 28);
        const int factor = std::max(1, kIconTarget / std::max({own.width(), own.height(), 1}));
        const QSize icon = own * factor;
        m_gallery->setIconSize(icon);
        // Wide enough for either line of the longest caption.
        const QFontMetrics fm = m_gallery->fontMetrics();
        // Measured once per class, not once per image.
        int textWidth = 0;
        for (const QString &name : m_data->classes)
            textWidth = std::max({textWidth, fm.horizontalAdvance(tr("true: %1").arg(name)),
                                  fm.horizontalAdvance(tr("predicted: %1 (0.00)").arg(name))});
        m_gallery->setGridSize(QSize(std::max(icon.width(), std::min(textWidth, 400)) + 24,
                                     icon.height() + 3 * fm.lineSpacing() + 12));
        for (const MisclassifiedImage &m : shown) {
            QIcon pixmaps;
            if (m.image.isNull()) {
                // Not kept (beyond the pictures' budget, or the file is gone): said, not blank.
                QPixmap none(icon);
                none.fill(palette().color(QPalette::Mid));
                pixmaps.addPixmap(none);
            } else {
                // The 2x copy serves high-DPI screens; without it QIcon would scale up smoothly.
                for (int dpr : {1, 2}) {
                    QImage scaled =
                        m.image.scaled(icon * dpr, Qt::KeepAspectRatio, Qt::FastTransformation);
                    pixmaps.addPixmap(QPixmap::fromImage(scaled));
                }
            }
            auto *item = new QListWidgetItem(pixmaps, QString(), m_gallery);
            const QString truth = m_data->classes[m.trueClass];
            const QString predictedName = m_data->classes[m.predicted];
            const QString probability = m.probability >= 0
                                            ? QStringLiteral(" (%1)").arg(m.probability, 0, 'f', 2)
                                            : QString();
            // Shown on two lines, broken where the reader expects it rather than wherever the
            // words happen to fill the cell; one line for the caption's other uses.
            item->setText(tr("true: %1").arg(truth) + QLatin1Char('\n') +
                          tr("predicted: %1").arg(predictedName) + probability);
            item->setData(kCaptionRole,
                          tr("true: %1 / predicted: %2").arg(truth, predictedName) + probability);
            item->setToolTip(
                tr("Test sample %1: a %2 the model took for a %3%4%5")
                    .arg(m.index)
                    .arg(truth, predictedName,
                         m.probability >= 0
                             ? tr(" with probability %1").arg(m.probability, 0, 'f', 3)
                             : QString(),
                         m.image.isNull() ? tr(" (its picture was not kept)") : QString()));
            item->setData(kIndexRole, m.index);
            item->setData(kImageRole, m.image);
            item->setTextAlignment(Qt::AlignHCenter | Qt::AlignTop);
        }
    }
    updateGalleryNote();
}

void EvaluationView::updateGalleryNote()
{
    QString note;
    if (!m_data) {
        note = tr("Misclassified test images appear here after an evaluation.");
    } else if (!m_data->hasGallery) {
        note = tr("%n misclassified test sample(s). Their images come with the last epoch's "
                  "evaluation.",
                  nullptr, int(m_data->misclassifiedTotal));
    } else if (m_data->misclassified.empty()) {
        note = tr("No misclassified test images.");
    } else {
        const qint64 shown = qint64(m_data->misclassified.size());
        note = shown < m_data->misclassifiedTotal
                   ? tr("Misclassified test images: the first %1 of %2, in test order.")
                         .arg(shown)
                         .arg(m_data->misclassifiedTotal)
                   : tr("Misclassified test images: all %1.").arg(shown);
        if (m_filter.first >= 0 && m_cellComplete)
            note = tr("%1 predicted as %2: all %3 of them (click the cell again for the first "
                      "%4 of every kind).")
                       .arg(m_data->classes[m_filter.first], m_data->classes[m_filter.second])
                       .arg(visibleGalleryCount())
                       .arg(shown);
        else if (m_filter.first >= 0)
            note += QLatin1Char(' ') +
                    tr("Showing %1 predicted as %2: %3 of them (click the cell again for all).")
                        .arg(m_data->classes[m_filter.first], m_data->classes[m_filter.second])
                        .arg(visibleGalleryCount());
        else
            note += QLatin1Char(' ') + tr("Click a cell of the matrix to see only its images.");
    }
    m_galleryNote->setText(note);
}

int EvaluationView::classCount() const
{
    return m_data ? m_data->classCount() : 0;
}

QString EvaluationView::className(int cls) const
{
    return m_data && cls >= 0 && cls < classCount() ? m_data->classes[cls] : QString();
}

QString EvaluationView::cellText(int trueClass, int predicted) const
{
    const int k = classCount();
    if (trueClass < 0 || predicted < 0 || trueClass >= k || predicted >= k) return {};
    return m_matrix->cellText(trueClass, predicted);
}

QString EvaluationView::cellToolTip(int trueClass, int predicted) const
{
    const int k = classCount();
    if (trueClass < 0 || predicted < 0 || trueClass >= k || predicted >= k) return {};
    return m_matrix->cellToolTip(trueClass, predicted);
}

QString EvaluationView::summaryText() const
{
    return m_summary->text();
}

QString EvaluationView::galleryNote() const
{
    return m_galleryNote->text();
}

QString EvaluationView::tableText(int row, int column) const
{
    const QTableWidgetItem *item = m_table->item(row, column);
    return item ? item->text() : QString();
}

int EvaluationView::galleryCount() const
{
    return m_gallery->count();
}

int EvaluationView::visibleGalleryCount() const
{
    return m_gallery->count(); // the gallery holds only what the selected cell lets through
}

QString EvaluationView::galleryCaption(int i) const
{
    const QListWidgetItem *item = m_gallery->item(i);
    return item ? item->data(kCaptionRole).toString() : QString();
}

QImage EvaluationView::galleryImage(int i) const
{
    const QListWidgetItem *item = m_gallery->item(i);
    return item ? item->data(kImageRole).value<QImage>() : QImage();
}

void EvaluationView::setRowNormalized(bool on)
{
    m_rowNormalized->setChecked(on);
}

bool EvaluationView::rowNormalized() const
{
    return m_matrix->rowNormalized();
}

} // namespace fb::widgets
