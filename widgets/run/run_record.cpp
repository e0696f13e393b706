#include "widgets/run/run_record.h"

#include "core/base/json_nesting.h"

#include "widgets/files/atomic_write.h"

#include <QFile>

#include <string>

namespace fb::widgets {

using nlohmann::json;

namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] ": not for people.
std::string withoutExceptionTag(const std::string &what)
{
    if (what.starts_with("[json.exception.")) {
        const auto close = what.find("] ");
        if (close != std::string::npos) return what.substr(close + 2);
    }
    return what;
}

} // namespace

RunRecord::RunRecord(QObject *parent)
    : QObject(parent)
{}

void RunRecord::clear()
{
    m_events.clear();
    emit cleared();
}

void RunRecord::addEvent(const json &event)
{
    m_events.push_back(event);
    // The caller's copy: a listener that adds an event itself must not leave the next listener
    // holding a reference into a reallocated vector.
    emit eventAdded(event);
}

void RunRecord::setEvents(std::vector<json> events)
{
    m_events.clear();
    emit cleared();
    m_events = std::move(events);
    emit eventsReplaced();
}

fb::Status RunRecord::save(const QString &path) const
{
    std::string text;
    for (const json &e : m_events) {
        // replace: a string that is not valid UTF-8 must not make the whole save throw.
        text += e.dump(-1, ' ', false, json::error_handler_t::replace);
        text += '\n';
    }
    return writeFileAtomically(path, text, "the run log");
}

fb::Result<std::vector<json>> RunRecord::load(const QString &path)
{
    const std::string file = path.toStdString();
    QFile in(path);
    if (!in.open(QIODevice::ReadOnly))
        return fb::fileError(file, "cannot open the run log: " + in.errorString().toStdString());

    std::vector<json> events;
    bool sawStart = false;
    int lineNo = 0;
    while (!in.atEnd()) {
        QByteArray line = in.readLine();
        ++lineNo;
        const bool complete = line.endsWith('\n');
        while (!line.isEmpty() && (line.endsWith('\n') || line.endsWith('\r')))
            line.chop(1);
        if (line.trimmed().isEmpty()) continue;

        // A saved log is a person's file: deep nesting is refused before parsing (it would
        // overflow the stack in nlohmann's recursive copies).
        if (!checkJsonNesting(std::string_view(line.constData(), size_t(line.size())), "").ok())
            return fb::fileError(file,
                                 "an event nests arrays and objects more than " +
                                     std::to_string(kMaxJsonNesting) + " levels deep",
                                 lineNo);
        json e = json::parse(line.constBegin(), line.constEnd(), nullptr, false);
        if (e.is_discarded()) {
            // A run killed while writing leaves its last line cut short, without a newline.
            if (!complete && in.atEnd()) break;
            std::string reason;
            try {
                [[maybe_unused]] const json again = json::parse(line.constBegin(), line.constEnd());
            } catch (const json::exception &ex) {
                reason = withoutExceptionTag(ex.what());
            }
            return fb::fileError(file, "not a JSON event" + (reason.empty() ? "" : ": " + reason),
                                 lineNo);
        }
        if (!e.is_object()) return fb::fileError(file, "an event must be a JSON object", lineNo);
        auto type = e.find("type");
        if (type == e.end()) {
            // The summary line of `--events -` on stdout has no type of its own.
            if (!e.contains("status"))
                return fb::fileError(file, "an event without a 'type'", lineNo);
            e["type"] = "summary";
            type = e.find("type");
        }
        if (!type->is_string())
            return fb::fileError(file, "an event's 'type' must be a string", lineNo);
        if (*type == "run_start") {
            sawStart = true;
            const auto version = e.find("version");
            if (version != e.end() && version->is_number() &&
                version->get<double>() > kStreamVersion)
                return fb::fileError(file,
                                     "the run log is version " + version->dump() +
                                         "; this Flowbench reads version " +
                                         std::to_string(kStreamVersion) + " and older",
                                     lineNo);
        }
        events.push_back(std::move(e));
    }
    if (in.error() != QFileDevice::NoError)
        return fb::fileError(file, "cannot read the run log: " + in.errorString().toStdString());
    if (lineNo == 0) return fb::fileError(file, "the run log is empty");
    if (!sawStart)
        return fb::fileError(file, "no run_start event: not a run log, or a run that failed "
                                   "before training started");
    return events;
}

} // namespace fb::widgets
