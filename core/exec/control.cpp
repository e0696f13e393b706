#include "core/exec/control.h"

#include "core/base/json_nesting.h"
#include "core/base/safe_text.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace fb::exec {

std::string Command::name() const
{
    switch (kind) {
    case Kind::Pause:
        return "pause";
    case Kind::Resume:
        return "resume";
    case Kind::Stop:
        return "stop";
    case Kind::Checkpoint:
        return "checkpoint";
    case Kind::SetLr:
        return "set_lr";
    }
    return "?";
}

ParsedCommand parseCommand(const std::string &line)
{
    ParsedCommand out;
    out.rejection.ok = false;
    auto reject = [&](const std::string &message) {
        out.rejection.message = safeText(message); // it may quote the line as it came
        return out;
    };
    // Nesting is limited before parsing, as in every JSON Flowbench reads (json_nesting.h): a
    // line of a hundred thousand brackets parses, but a copy or a dump of it overflows the stack.
    if (Status deep = checkJsonNesting(line, ""); !deep.ok())
        return reject("not a command: " + deep.error().message);
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return reject("a command is one JSON object per line, like {\"command\": \"pause\"}");
    Command c;
    if (j.contains("id")) c.id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
    out.rejection.id = c.id;
    if (!j.contains("command") || !j["command"].is_string())
        return reject("the command object needs a \"command\" string");
    const std::string name = j["command"].get<std::string>();
    out.rejection.command = name;
    if (name == "pause")
        c.kind = Command::Kind::Pause;
    else if (name == "resume")
        c.kind = Command::Kind::Resume;
    else if (name == "stop")
        c.kind = Command::Kind::Stop;
    else if (name == "checkpoint")
        c.kind = Command::Kind::Checkpoint;
    else if (name == "set_lr") {
        c.kind = Command::Kind::SetLr;
        if (!j.contains("lr") || !j["lr"].is_number())
            return reject("set_lr needs a number \"lr\"");
        c.lr = j["lr"].get<double>();
        // Used as a float: 1e-50 would be 0 there, and 1e39 infinite.
        if (!std::isfinite(float(c.lr)) || float(c.lr) <= 0)
            return reject("set_lr needs a positive, finite \"lr\", got " + j["lr"].dump());
    } else {
        return reject("unknown command '" + name +
                      "'; commands: pause, resume, stop, checkpoint, set_lr");
    }
    out.command = c;
    return out;
}

void RunControl::post(Command c)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back({std::move(c), {}});
    }
    m_cv.notify_all();
}

void RunControl::postInvalid(CommandAck rejection)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back({std::nullopt, std::move(rejection)});
    }
    m_cv.notify_all();
}

void RunControl::closeInput()
{
    m_inputClosed = true;
    m_cv.notify_all();
}

std::optional<RunControl::Entry> RunControl::take(std::chrono::milliseconds timeout)
{
    std::unique_lock lock(m_mutex);
    if (m_queue.empty() && timeout.count() > 0)
        m_cv.wait_for(lock, timeout, [&] { return !m_queue.empty(); });
    if (m_queue.empty()) return std::nullopt;
    Entry e = std::move(m_queue.front());
    m_queue.pop_front();
    return e;
}

} // namespace fb::exec
