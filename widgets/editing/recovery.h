#pragma once

#include <map>
#include <memory>
#include <vector>

#include <QDateTime>
#include <QLockFile>
#include <QObject>
#include <QString>
#include <QTimer>

#include "core/base/result.h"

namespace fb::widgets {

class EditedPipeline;

// Crash recovery for the pipeline being edited (Qt Creator's and KiCad's behaviour): a few
// seconds after the first unsaved change, the document is written to a recovery folder with
// QSaveFile, again after each later change, and removed once it is saved (or the changes are
// undone, or the window ends in order). Each window holds a QLockFile there while it lives, so
// a window that starts later tells the files of a crashed window (lock free or stale: its
// process is gone) from those of a running one (lock held), and offers to restore them.
//
// Per window, in the folder: <id>.lock, <id>.pipeline.json (the document exactly as Save
// writes it) and <id>.info.json ({"format": "flowbench.recovery", "version": 1,
// "original_path", "display_name", "saved_at"}). The pipeline is written first, so an info file
// always has a whole pipeline beside it.
class RecoveryStore : public QObject {
    Q_OBJECT
public:
    // A pipeline left behind by a window that is gone.
    struct Orphan {
        QString id;
        QString pipelineFile;
        QString originalPath; // empty: the pipeline was never saved ("Untitled")
        QString displayName;
        QDateTime savedAt;
    };

    // The folder: $FLOWBENCH_RECOVERY_DIR when set, else <app data>/recovery.
    static QString defaultDirectory();
    // Milliseconds from the first unsaved change to the autosave (at most this much work, plus
    // the write, is lost to a crash).
    static constexpr int kDelayMs = 3000;

    RecoveryStore(EditedPipeline *pipeline, const QString &directory, QObject *parent = nullptr);
    // Removes this window's files: it ends in order.
    ~RecoveryStore() override;

    QString directory() const { return m_dir; }
    // False when the folder cannot be made or locked; error() says why (autosave is then off).
    bool isActive() const { return m_lock != nullptr; }
    QString error() const { return m_error; }
    // The file this window autosaves to (it exists only while there are unsaved changes).
    QString pipelineFile() const;

    // Writes the autosave now if there are unsaved changes (the timer does it by itself).
    Status saveNow();

    // The pipelines of windows that are gone, newest first. Their locks are taken by this window
    // until adopt(), discard() or release() answers for each, so no other window offers them too.
    std::vector<Orphan> orphans();
    // Loads the orphan into the edited pipeline (modified, under its original file name) and
    // removes its files: from now on this window's autosave keeps it.
    Status adopt(const Orphan &orphan);
    // Removes the orphan's files.
    void discard(const Orphan &orphan);
    // Leaves the orphan's files for the next start.
    void release(const Orphan &orphan);

signals:
    // After each autosave (tests wait for it), with the file written.
    void saved(const QString &file);
    // An autosave that failed (disk full, folder gone): the reason, once per failure streak.
    void failed(const QString &why);

private:
    void documentTouched();
    void removeOwnFiles();
    QString path(const QString &id, const char *suffix) const;

    EditedPipeline *m_pipeline;
    QString m_dir;
    QString m_id;
    QString m_error;
    std::unique_ptr<QLockFile> m_lock;
    QTimer m_timer;
    bool m_failing = false;
    std::map<QString, std::unique_ptr<QLockFile>> m_orphanLocks;
};

} // namespace fb::widgets
