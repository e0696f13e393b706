#include "widgets/log/log_view.h"

#include <QAbstractTableModel>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <deque>

namespace fb::widgets {

namespace {

enum Level : quint8 { Debug, Info, Warning, Error };
enum Column { TimeColumn, LevelColumn, NodeColumn, MessageColumn, ColumnCount };

const char *const kLevelNames[] = {"debug", "info", "warning", "error"};

Level levelFrom(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n == "error" || n == "fatal" || n == "critical") return Error;
    if (n == "warning" || n == "warn") return Warning;
    if (n == "debug" || n == "trace") return Debug;
    return Info;
}

struct LogLine {
    qint64 msecs = 0; // since the epoch, local time shown
    Level level = Info;
    QString node, text;
};

// An error names "node", "node.port" or "node.param"; node ids have no '.', so the first one
// ends the id. The row shows it all, the window selects the node.
QString nodeIdOf(const QString &node)
{
    return node.section('.', 0, 0);
}

QString timeText(qint64 msecs)
{
    return QDateTime::fromMSecsSinceEpoch(msecs).toString("HH:mm:ss");
}

QString plainText(const LogLine &l)
{
    return QString("%1  %2  %3%4")
        .arg(timeText(l.msecs), QString(kLevelNames[l.level]).leftJustified(7),
             l.node.isEmpty() ? QString() : l.node + ": ", l.text);
}

} // namespace

// The kept lines. Rows only ever arrive at the end and leave at the front.
class LogModel : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : int(m_lines.size());
    }
    int columnCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : ColumnCount;
    }
    const LogLine &line(int row) const { return m_lines[std::size_t(row)]; }

    // Lines waiting for the next batch: addLine stays cheap, and a burst is one insertion.
    std::vector<LogLine> pending;

    void append(std::vector<LogLine> &lines)
    {
        if (lines.empty()) return;
        const int first = int(m_lines.size());
        beginInsertRows({}, first, first + int(lines.size()) - 1);
        for (LogLine &l : lines)
            m_lines.push_back(std::move(l));
        endInsertRows();
        lines.clear();
    }
    void dropOldest(int count)
    {
        count = std::min(count, int(m_lines.size()));
        if (count <= 0) return;
        beginRemoveRows({}, 0, count - 1);
        m_lines.erase(m_lines.begin(), m_lines.begin() + count);
        endRemoveRows();
    }
    void clear()
    {
        beginResetModel();
        m_lines.clear();
        endResetModel();
    }
    void setColors(QColor debug, QColor warning, QColor error, QColor link)
    {
        m_colors[Debug] = debug;
        m_colors[Warning] = warning;
        m_colors[Error] = error;
        m_link = link;
        if (!m_lines.empty())
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1),
                             {Qt::ForegroundRole});
    }
    void setIcons(QIcon info, QIcon warning, QIcon error)
    {
        m_icons[Info] = info;
        m_icons[Warning] = warning;
        m_icons[Error] = error;
    }

    QVariant data(const QModelIndex &index, int role) const override
    {
        if (!index.isValid() || index.row() >= rowCount()) return {};
        const LogLine &l = line(index.row());
        const int column = index.column();
        switch (role) {
        case Qt::DisplayRole:
            switch (column) {
            case TimeColumn:
                return timeText(l.msecs);
            case LevelColumn:
                return QString(kLevelNames[l.level]);
            case NodeColumn:
                return l.node;
            case MessageColumn:
                return l.text;
            }
            break;
        case Qt::DecorationRole:
            if (column == LevelColumn && !m_icons[l.level].isNull()) return m_icons[l.level];
            break;
        case Qt::ForegroundRole:
            if (column == NodeColumn && !l.node.isEmpty()) return m_link;
            if (m_colors[l.level].isValid()) return m_colors[l.level];
            break;
        case Qt::FontRole:
            if (column == NodeColumn && !l.node.isEmpty()) {
                QFont f;
                f.setUnderline(true);
                return f;
            }
            break;
        case Qt::ToolTipRole:
            if (column == NodeColumn && !l.node.isEmpty())
                return LogView::tr("Select node %1 in the pipeline").arg(l.node);
            if (column == MessageColumn) return l.text;
            if (column == TimeColumn)
                return QDateTime::fromMSecsSinceEpoch(l.msecs).toString(Qt::ISODateWithMs);
            break;
        }
        return {};
    }

    QVariant headerData(int section, Qt::Orientation orientation, int role) const override
    {
        if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
        switch (section) {
        case TimeColumn:
            return LogView::tr("Time");
        case LevelColumn:
            return LogView::tr("Level");
        case NodeColumn:
            return LogView::tr("Node");
        case MessageColumn:
            return LogView::tr("Message");
        }
        return {};
    }

private:
    std::deque<LogLine> m_lines;
    QColor m_colors[4];
    QColor m_link;
    QIcon m_icons[4];
};

// The level filter and the find text.
class LogFilter : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void set(Level minimum, const QString &find)
    {
        if (minimum == m_minimum && find == m_find) return;
        m_minimum = minimum;
        m_find = find;
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex &parent) const override
    {
        const auto *model = static_cast<const LogModel *>(sourceModel());
        const LogLine &l = model->line(row);
        if (l.level < m_minimum) return false;
        if (m_find.isEmpty()) return true;
        return l.text.contains(m_find, Qt::CaseInsensitive) ||
               l.node.contains(m_find, Qt::CaseInsensitive);
    }

private:
    Level m_minimum = Debug;
    QString m_find;
};

LogView::LogView(QWidget *parent)
    : QWidget(parent)
    , m_model(new LogModel(this))
    , m_filter(new LogFilter(this))
    , m_view(new QTableView(this))
    , m_level(new QComboBox(this))
    , m_find(new QLineEdit(this))
    , m_note(new QLabel(this))
    , m_flushTimer(new QTimer(this))
    , m_findTimer(new QTimer(this))
{
    m_filter->setSourceModel(m_model);
    m_filter->setDynamicSortFilter(false); // rows arrive in order; nothing to sort

    m_level->addItem(tr("All levels"), int(Debug));
    m_level->addItem(tr("Info and above"), int(Info));
    m_level->addItem(tr("Warnings and errors"), int(Warning));
    m_level->addItem(tr("Errors only"), int(Error));
    m_level->setToolTip(tr("Show only lines of this level and above"));
    m_find->setPlaceholderText(tr("Find"));
    m_find->setClearButtonEnabled(true);
    m_find->setToolTip(tr("Show only lines containing this text"));
    m_note->setVisible(false);
    m_note->setTextFormat(Qt::PlainText);
    auto *clearButton = new QToolButton(this);
    clearButton->setText(tr("Clear"));
    clearButton->setToolTip(tr("Remove every line from the log"));

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_level);
    bar->addWidget(m_find, 1);
    bar->addWidget(m_note);
    bar->addWidget(clearButton);

    m_view->setModel(m_filter);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setWordWrap(false);
    m_view->setShowGrid(false);
    m_view->setAlternatingRowColors(true);
    m_view->setMouseTracking(true);
    m_view->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_view->verticalHeader()->hide();
    // Fixed row heights and column widths: measuring 100k rows to fit them would stall the view.
    const QFontMetrics fm(font());
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(fm.height() + 6);
    QHeaderView *header = m_view->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setStretchLastSection(true);
    header->resizeSection(TimeColumn, fm.horizontalAdvance("00:00:00") + 16);
    header->resizeSection(LevelColumn, fm.horizontalAdvance("warning") + fm.height() + 24);
    header->resizeSection(NodeColumn, fm.horizontalAdvance("normalize_test") + 16);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    m_flushTimer->setSingleShot(true);
    m_flushTimer->setInterval(30);
    connect(m_flushTimer, &QTimer::timeout, this, &LogView::flush);
    m_findTimer->setSingleShot(true);
    m_findTimer->setInterval(150); // filter once the user pauses typing, not per key
    connect(m_findTimer, &QTimer::timeout, this, &LogView::applyFilter);
    connect(m_find, &QLineEdit::textChanged, m_findTimer, qOverload<>(&QTimer::start));
    connect(m_level, &QComboBox::currentIndexChanged, this, &LogView::applyFilter);
    connect(clearButton, &QToolButton::clicked, this, &LogView::clear);

    // Follow new lines while the view is at its bottom; a user who scrolls up stops that.
    QScrollBar *bar_ = m_view->verticalScrollBar();
    connect(bar_, &QScrollBar::valueChanged, this,
            [this, bar_](int value) { m_follow = value >= bar_->maximum(); });
    connect(bar_, &QScrollBar::rangeChanged, this, [this, bar_](int, int max) {
        if (m_follow) bar_->setValue(max);
    });

    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex &index) {
        if (index.column() != NodeColumn) return;
        const QString node = m_model->line(m_filter->mapToSource(index).row()).node;
        if (!node.isEmpty()) emit nodeActivated(nodeIdOf(node));
    });
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex &index) {
        if (index.column() == NodeColumn) return; // clicked() has it, or it would come twice
        const QString node = m_model->line(m_filter->mapToSource(index).row()).node;
        if (!node.isEmpty()) emit nodeActivated(nodeIdOf(node));
    });
    connect(m_view, &QTableView::entered, this, [this](const QModelIndex &index) {
        const bool link = index.column() == NodeColumn &&
                          !m_model->line(m_filter->mapToSource(index).row()).node.isEmpty();
        m_view->viewport()->setCursor(link ? Qt::PointingHandCursor : Qt::ArrowCursor);
    });

    auto *copy = new QAction(tr("Copy"), m_view);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copy, &QAction::triggered, this, &LogView::copySelection);
    m_view->addAction(copy);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);

    updateColors();
}

LogView::~LogView()
{
    // The view (a child, destroyed after this body) still resizes its scroll bar on the way out:
    // the follow-the-bottom lambdas must not run on this half-destroyed object (UBSan).
    m_view->verticalScrollBar()->disconnect(this);
}

void LogView::addLine(const QString &level, const QString &text, const QString &node)
{
    addLineAt(QDateTime::currentDateTime(), level, text, node);
}

void LogView::addLineAt(const QDateTime &time, const QString &level, const QString &text,
                        const QString &node)
{
    const Level l = levelFrom(level);
    const qint64 msecs = time.toMSecsSinceEpoch();
    std::vector<LogLine> &batch = m_model->pending;
    const QStringList parts = text.split('\n');
    for (const QString &part : parts) {
        QString t = part;
        if (t.endsWith('\r')) t.chop(1);
        if (t.isEmpty() && parts.size() > 1) continue;
        batch.push_back({msecs, l, node, t});
    }
    if (!m_flushTimer->isActive()) m_flushTimer->start();
}

void LogView::flush()
{
    m_flushTimer->stop();
    std::vector<LogLine> &batch = m_model->pending;
    if (batch.empty()) return;
    // Only the newest m_maxLines of the batch can stay; the rest is let go before it is shown.
    if (int(batch.size()) > m_maxLines) {
        const std::size_t extra = batch.size() - std::size_t(m_maxLines);
        batch.erase(batch.begin(), batch.begin() + std::ptrdiff_t(extra));
        m_dropped += qint64(extra);
    }
    const int over = m_model->rowCount() + int(batch.size()) - m_maxLines;
    if (over > 0) {
        m_model->dropOldest(over);
        m_dropped += over;
    }
    m_model->append(batch);
    updateNote();
}

void LogView::clear()
{
    m_model->pending.clear();
    m_flushTimer->stop();
    m_model->clear();
    m_dropped = 0;
    m_follow = true;
    updateNote();
}

int LogView::lineCount() const
{
    const_cast<LogView *>(this)->flush(); // the batch is part of the log already
    return m_model->rowCount();
}

int LogView::visibleLineCount() const
{
    const_cast<LogView *>(this)->flush();
    return m_filter->rowCount();
}

int LogView::droppedLineCount() const
{
    const_cast<LogView *>(this)->flush();
    return int(m_dropped);
}

QString LogView::text() const
{
    const_cast<LogView *>(this)->flush();
    QStringList lines;
    lines.reserve(m_model->rowCount());
    for (int i = 0; i < m_model->rowCount(); ++i)
        lines << plainText(m_model->line(i));
    return lines.join('\n');
}

void LogView::setMaximumLines(int lines)
{
    m_maxLines = std::max(lines, 1);
    const int over = m_model->rowCount() - m_maxLines;
    if (over > 0) {
        m_model->dropOldest(over);
        m_dropped += over;
        updateNote();
    }
}

void LogView::setMinimumLevel(const QString &level)
{
    const int index = m_level->findData(int(levelFrom(level)));
    if (index >= 0) m_level->setCurrentIndex(index); // applies the filter
}

void LogView::setFindText(const QString &text)
{
    m_find->setText(text);
    applyFilter();
}

void LogView::applyFilter()
{
    m_findTimer->stop();
    flush();
    m_filter->set(Level(m_level->currentData().toInt()), m_find->text());
    if (m_follow) m_view->scrollToBottom();
}

void LogView::updateNote()
{
    m_note->setVisible(m_dropped > 0);
    if (m_dropped > 0)
        m_note->setText(tr("%L1 older lines removed (the log keeps the newest %L2)")
                            .arg(m_dropped)
                            .arg(m_maxLines));
}

void LogView::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        updateColors();
}

void LogView::updateColors()
{
    // Colours that read on the palette in use, light or dark.
    const QPalette p = palette();
    const bool dark = p.color(QPalette::Base).lightness() < 128;
    m_model->setColors(p.color(QPalette::Disabled, QPalette::Text),
                       dark ? QColor(0xff, 0xc1, 0x4d) : QColor(0xa8, 0x5f, 0x00),
                       dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xc6, 0x28, 0x28),
                       p.color(QPalette::Link));
    QStyle *s = style();
    m_model->setIcons(s->standardIcon(QStyle::SP_MessageBoxInformation),
                      s->standardIcon(QStyle::SP_MessageBoxWarning),
                      s->standardIcon(QStyle::SP_MessageBoxCritical));
}

void LogView::copySelection()
{
    QModelIndexList rows = m_view->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(),
              [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    QStringList lines;
    for (const QModelIndex &index : rows)
        lines << plainText(m_model->line(m_filter->mapToSource(index).row()));
    if (!lines.isEmpty()) QApplication::clipboard()->setText(lines.join('\n'));
}

} // namespace fb::widgets
