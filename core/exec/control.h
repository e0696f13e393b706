#pragma once

#include "core/base/result.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace fb::exec {

// A command for a running pipeline (DESIGN.md: commands go back on stdin).
struct Command {
    enum class Kind { Pause, Resume, Stop, Checkpoint, SetLr };
    Kind kind = Kind::Pause;
    double lr = 0;  // SetLr
    std::string id; // echoed in the acknowledgement, when the sender gave one
    std::string name() const;
};

// How a command was handled, for the acknowledgement event.
struct CommandAck {
    std::string command, id, message;
    bool ok = true;
};

// Parses one command line: {"command": "pause" | "resume" | "stop" | "checkpoint" | "set_lr",
// "lr": 0.01, "id": "..."}. For a line that is not a valid command, the acknowledgement to send
// back: ok = false, the message says what is wrong, and the command name and id are echoed as far
// as they could be read.
struct ParsedCommand {
    std::optional<Command> command;
    CommandAck rejection;
};
ParsedCommand parseCommand(const std::string &line);

// The queue between whoever sends commands (the CLI's stdin reader, a test) and the training
// loop, which takes them between steps. Thread-safe.
class RunControl {
public:
    void post(Command c);
    // A line that is not a command: acknowledged as failed by the training loop, so the sender
    // hears about its mistake in the stream.
    void postInvalid(CommandAck rejection);
    // The next command, waiting up to `timeout` for one.
    struct Entry {
        std::optional<Command> command; // empty for an invalid line
        CommandAck rejection;
    };
    std::optional<Entry> take(std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
    // The sender will send nothing more (stdin closed): a paused run must not wait forever.
    void closeInput();
    bool inputClosed() const { return m_inputClosed; }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<Entry> m_queue;
    std::atomic<bool> m_inputClosed{false};
};

} // namespace fb::exec
