#pragma once

#include "core/base/result.h"

#include <QObject>
#include <QString>

#include <nlohmann/json.hpp>

#include <vector>

namespace fb::widgets {

// Every event of one run, in the order it arrived (docs/events.md): what the plots, the canvas and
// the log were drawn from. Saved, it is a run log (JSON lines, the same format as
// `flowbench-cli run --events FILE`) that can be opened and replayed later.
class RunRecord : public QObject {
    Q_OBJECT
public:
    // The newest event stream version this reader knows (docs/events.md); older ones read too.
    static constexpr int kStreamVersion = 6;

    explicit RunRecord(QObject *parent = nullptr);

    void clear();                               // emits cleared()
    void addEvent(const nlohmann::json &event); // emits eventAdded(event)
    // Replaces every event at once (an opened run log): emits cleared(), then eventsReplaced();
    // listeners re-read events() instead of hearing each event on its own.
    void setEvents(std::vector<nlohmann::json> events);
    const std::vector<nlohmann::json> &events() const { return m_events; }
    bool isEmpty() const { return m_events.empty(); }

    // Writes the events as JSON lines, atomically (QSaveFile): a failed save leaves an existing
    // file as it was. The error's file is `path` (Error::str() names it).
    fb::Status save(const QString &path) const;

    // Reads a run log. Errors carry the file and, for a bad line, its line number (Error::str()
    // reads "FILE:LINE: what is wrong"). A truncated last line (the run was killed while writing
    // it: no newline at its end) is skipped without an error. An empty file, a file with no
    // run_start event (not a run log, or a run that failed before training started) and a
    // version newer than kStreamVersion are errors. A stdout capture of `--events -`, whose last
    // line is the summary object without a `type`, reads too: that line becomes a `summary`.
    static fb::Result<std::vector<nlohmann::json>> load(const QString &path);

signals:
    void eventAdded(const nlohmann::json &event);
    void cleared();
    void eventsReplaced();

private:
    std::vector<nlohmann::json> m_events;
};

} // namespace fb::widgets
