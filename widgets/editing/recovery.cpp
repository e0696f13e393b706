#include "widgets/editing/recovery.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <nlohmann/json.hpp>

#include "core/graph/pipeline_file.h"
#include "widgets/editing/edited_pipeline.h"
#include "widgets/files/atomic_write.h"
#include "widgets/run/event_fields.h"

namespace fb::widgets {

namespace {

constexpr const char *kFormat = "flowbench.recovery";
constexpr int kVersion = 1;
// Larger info files are not ours (it holds a path, a name and a time).
constexpr qint64 kMaxInfoBytes = 64 * 1024;

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

} // namespace

QString RecoveryStore::defaultDirectory()
{
    const QByteArray env = qgetenv("FLOWBENCH_RECOVERY_DIR");
    if (!env.isEmpty()) return QString::fromLocal8Bit(env);
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
           QStringLiteral("/recovery");
}

RecoveryStore::RecoveryStore(EditedPipeline *pipeline, const QString &directory, QObject *parent)
    : QObject(parent)
    , m_pipeline(pipeline)
    , m_dir(directory)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDelayMs);
    // A failure is reported through failed().
    connect(&m_timer, &QTimer::timeout, this, [this] { (void)saveNow(); });

    if (!QDir().mkpath(m_dir)) {
        m_error = tr("cannot make the recovery folder %1").arg(m_dir);
        return;
    }
    // The process id keeps ids of running windows apart; the time and a random part keep apart
    // a reused pid and a window started twice in one millisecond.
    m_id = QStringLiteral("%1-%2-%3")
               .arg(QCoreApplication::applicationPid())
               .arg(QDateTime::currentMSecsSinceEpoch())
               .arg(QRandomGenerator::global()->bounded(1u << 30), 8, 16, QLatin1Char('0'));
    auto lock = std::make_unique<QLockFile>(path(m_id, ".lock"));
    lock->setStaleLockTime(0); // only a dead owner makes a lock stale, never its age
    if (!lock->tryLock(0)) {
        m_error = tr("cannot lock %1 (error %2)").arg(path(m_id, ".lock")).arg(int(lock->error()));
        return;
    }
    m_lock = std::move(lock);

    connect(m_pipeline, &EditedPipeline::documentChanged, this, &RecoveryStore::documentTouched);
    connect(m_pipeline, &EditedPipeline::documentReplaced, this, &RecoveryStore::documentTouched);
    connect(m_pipeline, &EditedPipeline::filePathChanged, this, &RecoveryStore::documentTouched);
    connect(m_pipeline, &EditedPipeline::modifiedChanged, this, &RecoveryStore::documentTouched);
}

RecoveryStore::~RecoveryStore()
{
    if (m_lock) removeOwnFiles();
    for (auto &[id, lock] : m_orphanLocks)
        lock->unlock();
    // m_lock unlocks (and removes the lock file) as it goes.
}

QString RecoveryStore::path(const QString &id, const char *suffix) const
{
    return m_dir + QLatin1Char('/') + id + QLatin1String(suffix);
}

QString RecoveryStore::pipelineFile() const
{
    return m_lock ? path(m_id, ".pipeline.json") : QString();
}

void RecoveryStore::documentTouched()
{
    if (!m_lock) return;
    if (!m_pipeline->isModified()) {
        // Saved, or undone back to the saved state: the file on disk is the truth again.
        m_timer.stop();
        removeOwnFiles();
        return;
    }
    // Started by the first change and not restarted by later ones, so a person who never stops
    // editing still gets an autosave every kDelayMs.
    if (!m_timer.isActive()) m_timer.start();
}

Status RecoveryStore::saveNow()
{
    m_timer.stop();
    if (!m_lock || !m_pipeline->isModified()) return {};
    const QString pipeline = path(m_id, ".pipeline.json");
    Status s = writeFileAtomically(pipeline, graph::serializePipeline(m_pipeline->document()),
                                   "the autosaved pipeline");
    if (s) {
        const nlohmann::json info = {
            {"format", kFormat},
            {"version", kVersion},
            {"original_path", m_pipeline->filePath().toStdString()},
            {"display_name", m_pipeline->displayName().toStdString()},
            {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toStdString()},
        };
        s = writeFileAtomically(path(m_id, ".info.json"),
                                info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace),
                                "the autosave's description");
    }
    if (!s) {
        // Tried again at the next change; said once until an autosave succeeds.
        if (!m_failing) emit failed(q(s.error().message));
        m_failing = true;
        return s;
    }
    m_failing = false;
    emit saved(pipeline);
    return {};
}

void RecoveryStore::removeOwnFiles()
{
    QFile::remove(path(m_id, ".info.json"));
    QFile::remove(path(m_id, ".pipeline.json"));
}

std::vector<RecoveryStore::Orphan> RecoveryStore::orphans()
{
    std::vector<Orphan> found;
    if (!m_lock) return found;
    const QStringList infos =
        QDir(m_dir).entryList({QStringLiteral("*.info.json")}, QDir::Files, QDir::Name);
    for (const QString &name : infos) {
        const QString id = name.chopped(int(qstrlen(".info.json")));
        if (id == m_id) continue;
        if (m_orphanLocks.count(id) == 0) {
            // Free, or stale (its process is gone): its window crashed. Held: it runs.
            auto lock = std::make_unique<QLockFile>(path(id, ".lock"));
            lock->setStaleLockTime(0);
            if (!lock->tryLock(0)) continue;
            m_orphanLocks[id] = std::move(lock);
        }
        QFile f(path(id, ".info.json"));
        if (f.size() > kMaxInfoBytes || !f.open(QIODevice::ReadOnly)) continue;
        const QByteArray text = f.readAll();
        const nlohmann::json info = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                                          /*allow_exceptions=*/false);
        if (!info.is_object() || eventString(info, "format") != kFormat ||
            !info.value("version", nlohmann::json()).is_number_integer() ||
            info.value("version", 0) > kVersion)
            continue;
        const QString pipelineFile = path(id, ".pipeline.json");
        if (!QFileInfo::exists(pipelineFile)) continue;
        Orphan o;
        o.id = id;
        o.pipelineFile = pipelineFile;
        auto textOf = [&](const char *key) {
            const auto it = info.find(key);
            return it != info.end() && it->is_string() ? q(it->get<std::string>()) : QString();
        };
        o.originalPath = textOf("original_path");
        o.displayName = textOf("display_name");
        if (o.displayName.isEmpty())
            o.displayName =
                o.originalPath.isEmpty() ? tr("Untitled") : QFileInfo(o.originalPath).fileName();
        o.savedAt = QDateTime::fromString(textOf("saved_at"), Qt::ISODateWithMs);
        if (!o.savedAt.isValid()) o.savedAt = QFileInfo(pipelineFile).lastModified();
        found.push_back(std::move(o));
    }
    std::sort(found.begin(), found.end(),
              [](const Orphan &a, const Orphan &b) { return a.savedAt > b.savedAt; });
    return found;
}

Status RecoveryStore::adopt(const Orphan &orphan)
{
    Status s = m_pipeline->restore(orphan.pipelineFile, orphan.originalPath);
    if (!s) return s;
    // Ours now: written under this window's id at once, then the orphan's files go.
    (void)saveNow(); // a failure is reported through failed()
    discard(orphan);
    return {};
}

void RecoveryStore::discard(const Orphan &orphan)
{
    QFile::remove(path(orphan.id, ".info.json"));
    QFile::remove(path(orphan.id, ".pipeline.json"));
    release(orphan);
}

void RecoveryStore::release(const Orphan &orphan)
{
    auto it = m_orphanLocks.find(orphan.id);
    if (it == m_orphanLocks.end()) return;
    it->second->unlock();
    m_orphanLocks.erase(it);
}

} // namespace fb::widgets
