#include "widgets/runs/runs_panel.h"

#include "core/io/run_folder.h"

#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPixmap>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>

namespace fb::widgets {

namespace {

constexpr int kDirRole = Qt::UserRole;      // column 0: the run folder
constexpr int kSortRole = Qt::UserRole + 1; // every column: what it sorts by
constexpr int kResumableRole = Qt::UserRole + 2;

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

// "2026-11-25T20:26:18+0000" (strftime's %z has no colon, which Qt's ISO reader wants).
QDateTime parseStarted(const std::string &iso)
{
    QString s = q(iso);
    if (s.size() >= 5 && (s[s.size() - 5] == '+' || s[s.size() - 5] == '-') &&
        !s.right(5).contains(':'))
        s.insert(s.size() - 2, ':');
    return QDateTime::fromString(s, Qt::ISODate);
}

QString durationText(double s)
{
    if (s < 0) return QStringLiteral("—");
    if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', s < 10 ? 1 : 0);
    const qint64 t = qint64(s + 0.5);
    if (t < 3600) return QStringLiteral("%1 min %2 s").arg(t / 60).arg(t % 60, 2, 10, QChar('0'));
    return QStringLiteral("%1 h %2 min").arg(t / 3600).arg(t / 60 % 60, 2, 10, QChar('0'));
}

QString accuracyText(double a)
{
    return a < 0 ? QStringLiteral("—") : QStringLiteral("%1%").arg(100 * a, 0, 'f', 2);
}

QColor statusColour(const QString &status)
{
    if (status == "ok") return QColor(0x2e, 0x7d, 0x32);
    if (status == "failed" || status == "damaged") return QColor(0xc6, 0x28, 0x28);
    if (status == "killed") return QColor(0xe6, 0x51, 0x00);
    if (status == "running") return QColor(0x15, 0x65, 0xc0);
    return {};
}

QString runStatusTip(const io::RunEntry &r, const QString &status)
{
    if (!r.problem.empty()) return QObject::tr("Cannot be read: %1").arg(q(r.problem));
    if (status == "killed")
        return QObject::tr("Its engine ended without finishing (killed, or the machine went "
                           "down)%1")
            .arg(r.hasCheckpoint ? QObject::tr("; Resume continues from its last checkpoint")
                                 : QString());
    if (status == "failed") return q(r.error);
    if (status == "stopped")
        return r.hasCheckpoint ? QObject::tr("Stopped early; Resume continues it")
                               : QObject::tr("Stopped early");
    if (status == "unknown") return QObject::tr("Made by an older Flowbench, which did not say");
    return {};
}

} // namespace

RunsPanel::RunsPanel(QWidget *parent)
    : QWidget(parent)
{
    m_where = new QLabel;
    m_where->setObjectName("runs_where");
    m_where->setTextFormat(Qt::RichText);
    m_where->setOpenExternalLinks(false);
    connect(m_where, &QLabel::linkActivated, this,
            [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(m_root)); });
    m_search = new QLineEdit;
    m_search->setObjectName("runs_search");
    m_search->setClearButtonEnabled(true);
    m_search->setPlaceholderText(tr("Search names, pipelines, devices, status, tags…"));

    m_model = new QStandardItemModel(0, Count, this);
    m_model->setHorizontalHeaderLabels({tr("Name"), tr("Status"), tr("Test acc."), tr("Best acc."),
                                        tr("Started"), tr("Pipeline"), tr("Device"), tr("Duration"),
                                        tr("Tags")});
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(kSortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(m_search, &QLineEdit::textChanged, m_proxy,
            [this](const QString &t) { m_proxy->setFilterFixedString(t.trimmed()); });

    m_table = new QTableView;
    m_table->setObjectName("runs_table");
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(Started, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        const QString dir = m_proxy->index(index.row(), 0).data(kDirRole).toString();
        if (!dir.isEmpty()) emit openRequested(dir);
    });
    connect(m_table, &QTableView::customContextMenuRequested, this, &RunsPanel::showMenu);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunsPanel::updateButtons);

    auto button = [this](const QString &name, const QString &text, const QString &tip) {
        auto *b = new QPushButton(text);
        b->setObjectName(name);
        b->setToolTip(tip);
        return b;
    };
    m_open = button("runs_open", tr("Open"),
                    tr("Show the run's plots, evaluation and model (or double-click it)"));
    m_compare = button("runs_compare", tr("Compare"),
                       tr("Overlay the selected runs' curves in every plot, one colour each"));
    m_diff = button("runs_diff", tr("Diff…"),
                    tr("What differs between the two selected runs: nodes, parameters, manifest"));
    m_resume = button("runs_resume", tr("Resume"),
                      tr("Continue a stopped, killed or failed run from its last checkpoint"));
    m_rename = button("runs_rename", tr("Rename…"), tr("Give the run a name of your own"));
    m_tags = button("runs_tags", tr("Tags…"), tr("Tags to find and group runs by"));
    m_delete = button("runs_delete", tr("Delete…"), tr("Delete the run's folder"));
    m_sweep = button("runs_sweep", tr("Sweep…"),
                     tr("Train the pipeline once per combination of parameter values you give, "
                        "and compare the results"));
    connect(m_sweep, &QPushButton::clicked, this, [this] {
        if (m_sweepRunning)
            emit sweepStopRequested();
        else
            emit sweepRequested();
    });
    connect(m_open, &QPushButton::clicked, this, [this] {
        if (const QString d = selectedRun(); !d.isEmpty()) emit openRequested(d);
    });
    connect(m_compare, &QPushButton::clicked, this, [this] {
        if (const QStringList s = selectedRuns(); s.size() >= 2) emit compareRequested(s);
    });
    connect(m_diff, &QPushButton::clicked, this, [this] {
        if (const QStringList s = selectedRuns(); s.size() == 2) emit diffRequested(s[0], s[1]);
    });
    connect(m_resume, &QPushButton::clicked, this, [this] {
        if (const QString d = selectedRun(); resumable(d)) emit resumeRequested(d);
    });
    connect(m_rename, &QPushButton::clicked, this, &RunsPanel::renameSelected);
    connect(m_tags, &QPushButton::clicked, this, &RunsPanel::tagSelected);
    connect(m_delete, &QPushButton::clicked, this, &RunsPanel::deleteSelected);

    // The search on a line of its own and the buttons in two rows under it (looking at runs,
    // then keeping them): all stay whole in a dock a third of the window wide.
    auto *look = new QHBoxLayout, *keep = new QHBoxLayout;
    for (QPushButton *b : {m_open, m_compare, m_diff, m_resume})
        look->addWidget(b);
    for (QPushButton *b : {m_rename, m_tags, m_delete})
        keep->addWidget(b);
    keep->addSpacing(12);
    keep->addWidget(m_sweep);
    look->addStretch(1);
    keep->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_search);
    layout->addLayout(look);
    layout->addLayout(keep);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_where);

    m_watcher = new QFileSystemWatcher(this);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, [this] { refresh(); });
    m_poll = new QTimer(this);
    m_poll->setInterval(3000);
    connect(m_poll, &QTimer::timeout, this, &RunsPanel::refresh);

    m_ask = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::No,
                                     QMessageBox::No);
    };
    m_askText = [this](const QString &title, const QString &label, QString &text) {
        bool ok = false;
        text = QInputDialog::getText(this, title, label, QLineEdit::Normal, text, &ok);
        return ok;
    };
    updateButtons();
}

void RunsPanel::setRunsDirectory(const QString &dir)
{
    if (!m_watcher->directories().isEmpty()) m_watcher->removePaths(m_watcher->directories());
    m_root = dir;
    QDir().mkpath(dir);
    if (QFileInfo(dir).isDir()) m_watcher->addPath(dir);
    m_where->setText(tr("Runs are kept in <a href=\"open\">%1</a>")
                         .arg(QDir::toNativeSeparators(dir).toHtmlEscaped()));
    refresh();
}

void RunsPanel::setRunColors(const QHash<QString, QColor> &colors)
{
    QHash<QString, QColor> absolute;
    for (auto it = colors.begin(); it != colors.end(); ++it)
        absolute.insert(QFileInfo(it.key()).absoluteFilePath(), it.value());
    if (absolute == m_colors) return; // every new or opened run clears them: mostly no change
    m_colors = std::move(absolute);
    refresh();
}

void RunsPanel::setSweepRunning(bool running)
{
    m_sweepRunning = running;
    m_sweep->setText(running ? tr("Stop Sweep") : tr("Sweep…"));
    m_sweep->setToolTip(running ? tr("Stop every run of the sweep after its step (each keeps a "
                                     "checkpoint)")
                                : tr("Train the pipeline once per combination of parameter "
                                     "values you give, and compare the results"));
}

void RunsPanel::setActiveRun(const QString &dir)
{
    m_activeRun = dir.isEmpty() ? QString() : QFileInfo(dir).absoluteFilePath();
    refresh();
}

void RunsPanel::refresh()
{
    const QStringList selected = selectedRuns();
    const std::vector<io::RunEntry> runs = io::listRuns(m_root.toStdString());
    m_model->removeRows(0, m_model->rowCount());
    bool anyRunning = false;
    for (const io::RunEntry &r : runs) {
        const QString dir = QFileInfo(q(r.dir)).absoluteFilePath();
        const QString status = r.problem.empty() ? q(r.status) : QStringLiteral("damaged");
        anyRunning = anyRunning || status == "running";
        const QDateTime started = parseStarted(r.started);
        QStringList tags;
        for (const auto &t : r.tags)
            tags << q(t);
        QList<QStandardItem *> row;
        auto cell = [&](const QString &text, const QVariant &sortKey) {
            auto *item = new QStandardItem(text);
            item->setData(sortKey, kSortRole);
            row << item;
            return item;
        };
        QStandardItem *name = cell(q(r.name), q(r.name).toLower());
        name->setData(dir, kDirRole);
        name->setData(r.resumable() && dir != m_activeRun, kResumableRole);
        if (const QColor c = m_colors.value(dir); c.isValid()) {
            QPixmap swatch(10, 10);
            swatch.fill(c);
            name->setData(swatch, Qt::DecorationRole);
        }
        QStandardItem *st = cell(status, status);
        if (const QColor c = statusColour(status); c.isValid()) st->setForeground(c);
        st->setToolTip(runStatusTip(r, status));
        cell(accuracyText(r.testAccuracy), r.testAccuracy);
        cell(accuracyText(r.bestTestAccuracy), r.bestTestAccuracy);
        cell(started.isValid() ? started.toLocalTime().toString("yyyy-MM-dd HH:mm") : QString(),
             started.isValid() ? started.toMSecsSinceEpoch() : 0);
        cell(q(r.pipeline), q(r.pipeline));
        cell(q(r.device), q(r.device));
        cell(durationText(r.seconds), r.seconds);
        cell(tags.join(QStringLiteral(", ")), tags.join(QStringLiteral(", ")));
        const QString tip = QDir::toNativeSeparators(dir) +
                            (r.problem.empty() ? QString() : QStringLiteral("\n") + q(r.problem));
        for (QStandardItem *item : row)
            if (item->toolTip().isEmpty()) item->setToolTip(tip);
        m_model->appendRow(row);
    }
    // Fitted to the first runs listed; after that the widths are the person's (the list is read
    // again every few seconds while a run goes on).
    if (!m_columnsSized && m_model->rowCount() > 0) {
        m_table->resizeColumnsToContents();
        m_columnsSized = true;
    }
    if (anyRunning)
        m_poll->start();
    else
        m_poll->stop();
    selectRuns(selected);
    updateButtons();
    emit runsChanged();
}

int RunsPanel::visibleRows() const
{
    return m_proxy->rowCount();
}

QString RunsPanel::runAt(int visibleRow) const
{
    return m_proxy->index(visibleRow, 0).data(kDirRole).toString();
}

QString RunsPanel::cellText(int visibleRow, Column column) const
{
    return m_proxy->index(visibleRow, column).data(Qt::DisplayRole).toString();
}

int RunsPanel::rowOf(const QString &dir) const
{
    const QString abs = QFileInfo(dir).absoluteFilePath();
    for (int r = 0; r < m_proxy->rowCount(); ++r)
        if (runAt(r) == abs) return r;
    return -1;
}

QStringList RunsPanel::selectedRuns() const
{
    QStringList out;
    if (!m_table->selectionModel()) return out;
    for (const QModelIndex &i : m_table->selectionModel()->selectedRows(0))
        out << i.data(kDirRole).toString();
    return out;
}

void RunsPanel::selectRuns(const QStringList &dirs)
{
    QItemSelection selection;
    for (const QString &d : dirs) {
        const int r = rowOf(d);
        if (r >= 0) selection.select(m_proxy->index(r, 0), m_proxy->index(r, Count - 1));
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
}

void RunsPanel::setSearchText(const QString &text)
{
    m_search->setText(text);
}

QString RunsPanel::selectedRun() const
{
    const QStringList s = selectedRuns();
    return s.size() == 1 ? s.first() : QString();
}

bool RunsPanel::resumable(const QString &dir) const
{
    const int r = rowOf(dir);
    return r >= 0 && m_proxy->index(r, 0).data(kResumableRole).toBool();
}

void RunsPanel::updateButtons()
{
    const QStringList s = selectedRuns();
    const bool one = s.size() == 1;
    m_open->setEnabled(one);
    m_compare->setEnabled(s.size() >= 2);
    m_diff->setEnabled(s.size() == 2);
    m_resume->setEnabled(one && resumable(s.first()));
    m_rename->setEnabled(one);
    m_tags->setEnabled(one);
    m_delete->setEnabled(!s.isEmpty() && !s.contains(m_activeRun));
}

bool RunsPanel::renameRun(const QString &dir, const QString &name, QString *why)
{
    io::RunEntry r = io::readRun(dir.toStdString());
    std::vector<std::string> tags = r.tags;
    if (fb::Status s = io::setRunNameAndTags(dir.toStdString(), name.toStdString(), tags); !s) {
        if (why) *why = q(s.error().str());
        return false;
    }
    refresh();
    return true;
}

bool RunsPanel::setRunTags(const QString &dir, const QStringList &tags, QString *why)
{
    io::RunEntry r = io::readRun(dir.toStdString());
    std::vector<std::string> list;
    for (const QString &t : tags)
        list.push_back(t.toStdString());
    if (fb::Status s = io::setRunNameAndTags(dir.toStdString(), r.name, list); !s) {
        if (why) *why = q(s.error().str());
        return false;
    }
    refresh();
    return true;
}

bool RunsPanel::deleteRun(const QString &dir, QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        return false;
    };
    const QString abs = QFileInfo(dir).absoluteFilePath();
    if (abs == m_activeRun) return refuse(tr("The run is going on: stop it first."));
    // Only a run folder inside the runs folder: never whatever a damaged entry points at.
    if (QFileInfo(abs).absolutePath() != QFileInfo(m_root).absoluteFilePath() ||
        !io::isRunFolder(abs.toStdString()))
        return refuse(tr("%1 is not a run folder in %2").arg(abs, m_root));
    const io::RunEntry r = io::readRun(abs.toStdString());
    if (m_ask(tr("Delete run"),
              tr("Delete the run \"%1\" and everything in its folder (%2)? This cannot be "
                 "undone.")
                  .arg(q(r.name), QDir::toNativeSeparators(abs))) != QMessageBox::Yes)
        return refuse(tr("Not deleted."));
    if (!QDir(abs).removeRecursively()) {
        refresh();
        return refuse(tr("Could not delete all of %1").arg(abs));
    }
    refresh();
    return true;
}

void RunsPanel::renameSelected()
{
    const QString dir = selectedRun();
    if (dir.isEmpty()) return;
    QString name = q(io::readRun(dir.toStdString()).name);
    if (!m_askText(tr("Rename run"), tr("Name:"), name)) return;
    QString why;
    if (!renameRun(dir, name, &why)) QMessageBox::warning(this, tr("Rename run"), why);
}

void RunsPanel::tagSelected()
{
    const QString dir = selectedRun();
    if (dir.isEmpty()) return;
    QStringList tags;
    for (const auto &t : io::readRun(dir.toStdString()).tags)
        tags << q(t);
    QString text = tags.join(QStringLiteral(", "));
    if (!m_askText(tr("Tags"), tr("Tags, separated by commas:"), text)) return;
    QString why;
    if (!setRunTags(dir, text.split(','), &why)) QMessageBox::warning(this, tr("Tags"), why);
}

void RunsPanel::deleteSelected()
{
    for (const QString &dir : selectedRuns()) {
        QString why;
        if (!deleteRun(dir, &why) && why != tr("Not deleted."))
            QMessageBox::warning(this, tr("Delete run"), why);
    }
}

void RunsPanel::showMenu(const QPoint &pos)
{
    const QModelIndex index = m_table->indexAt(pos);
    if (!index.isValid()) return;
    if (!selectedRuns().contains(m_proxy->index(index.row(), 0).data(kDirRole).toString()))
        selectRuns({m_proxy->index(index.row(), 0).data(kDirRole).toString()});
    const QString dir = selectedRun();
    QMenu menu(this);
    const QStringList selected = selectedRuns();
    if (selected.size() >= 2)
        menu.addAction(tr("Compare"), this, [this, selected] { emit compareRequested(selected); });
    if (selected.size() == 2)
        menu.addAction(tr("Diff…"), this,
                       [this, selected] { emit diffRequested(selected[0], selected[1]); });
    if (!dir.isEmpty()) {
        menu.addAction(tr("Open"), this, [this, dir] { emit openRequested(dir); });
        QAction *resume =
            menu.addAction(tr("Resume"), this, [this, dir] { emit resumeRequested(dir); });
        resume->setEnabled(resumable(dir));
        menu.addAction(tr("Open Its Pipeline"), this, [this, dir] { emit pipelineRequested(dir); })
            ->setEnabled(QFileInfo::exists(dir + "/" + io::kPipelineFile));
        menu.addSeparator();
        menu.addAction(tr("Rename…"), this, &RunsPanel::renameSelected);
        menu.addAction(tr("Tags…"), this, &RunsPanel::tagSelected);
        menu.addAction(tr("Show Folder"), this,
                       [dir] { QDesktopServices::openUrl(QUrl::fromLocalFile(dir)); });
        menu.addSeparator();
    }
    menu.addAction(tr("Delete…"), this, &RunsPanel::deleteSelected)
        ->setEnabled(!selectedRuns().contains(m_activeRun));
    menu.exec(m_table->viewport()->mapToGlobal(pos));
}

} // namespace fb::widgets
