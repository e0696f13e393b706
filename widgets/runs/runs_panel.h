#pragma once

#include <QColor>
#include <QHash>
#include <QMessageBox>
#include <QStringList>
#include <QWidget>

#include <functional>

class QFileSystemWatcher;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTableView;
class QTimer;

namespace fb::widgets {

// The Runs panel: every run in the runs folder (docs/runs.md), one row each with its name,
// pipeline, start, device, duration, status, final and best test accuracy and tags; sortable by
// any column and searchable by any text in a row. A run is opened (its plots, evaluation and
// model), resumed (a stopped, killed or failed run with a checkpoint), renamed, tagged or
// deleted from here. Folders are read with core/io's readRun, which never fails: a damaged
// folder is listed with the reason, a folder from an older Flowbench with what its files say.
class RunsPanel : public QWidget {
    Q_OBJECT
public:
    // What matters most comes first, so that a narrow dock shows it: which run, how it went.
    enum Column { Name, Status, Accuracy, Best, Started, Pipeline, Device, Duration, Tags, Count };

    explicit RunsPanel(QWidget *parent = nullptr);

    void setRunsDirectory(const QString &dir);
    QString runsDirectory() const { return m_root; }
    // Reads the folder again, keeping the selection. Also done when the folder changes and,
    // while a listed run is going on, every few seconds.
    void refresh();

    // The run folder the window's own run writes to: it cannot be deleted or resumed meanwhile.
    void setActiveRun(const QString &dir);

    // Rows as shown (sorted and filtered).
    int visibleRows() const;
    QString runAt(int visibleRow) const;
    QString cellText(int visibleRow, Column column) const;
    int rowOf(const QString &dir) const; // -1 when not shown
    QStringList selectedRuns() const;
    void selectRuns(const QStringList &dirs);
    void setSearchText(const QString &text);

    // What the buttons and the context menu do, for the selected run(s); false, with the reason,
    // when it cannot be done.
    bool renameRun(const QString &dir, const QString &name, QString *why = nullptr);
    bool setRunTags(const QString &dir, const QStringList &tags, QString *why = nullptr);
    bool deleteRun(const QString &dir, QString *why = nullptr); // asks first

    // How questions are asked (tests answer them): a yes/no, and a line of text.
    using Asker =
        std::function<QMessageBox::StandardButton(const QString &title, const QString &text)>;
    using TextAsker =
        std::function<bool(const QString &title, const QString &label, QString &text)>;
    void setAsker(Asker asker) { m_ask = std::move(asker); }
    void setTextAsker(TextAsker asker) { m_askText = std::move(asker); }

    QTableView *table() const { return m_table; }

    // The colour each compared run is drawn in: a swatch before its name (empty: none).
    void setRunColors(const QHash<QString, QColor> &colors);
    // While a sweep goes on, the Sweep… button stops it instead.
    void setSweepRunning(bool running);

signals:
    void compareRequested(const QStringList &dirs); // two or more
    void diffRequested(const QString &a, const QString &b);
    void sweepRequested();     // Sweep…: the window asks what to sweep
    void sweepStopRequested(); // Stop Sweep
    void openRequested(const QString &dir);
    void resumeRequested(const QString &dir);
    void pipelineRequested(const QString &dir); // open the pipeline as run, on the canvas
    void runsChanged();                         // after every refresh

private:
    void updateButtons();
    void showMenu(const QPoint &pos);
    void renameSelected();
    void tagSelected();
    void deleteSelected();
    QString selectedRun() const;
    bool resumable(const QString &dir) const;

    QString m_root, m_activeRun;
    QLabel *m_where;
    QLineEdit *m_search;
    QTableView *m_table;
    QStandardItemModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QPushButton *m_open, *m_compare, *m_diff, *m_resume, *m_rename, *m_tags, *m_delete, *m_sweep;
    bool m_sweepRunning = false;
    bool m_columnsSized = false;
    QHash<QString, QColor> m_colors;
    QFileSystemWatcher *m_watcher;
    QTimer *m_poll;
    Asker m_ask;
    TextAsker m_askText;
};

} // namespace fb::widgets
