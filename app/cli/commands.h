#pragma once

#include "core/exec/control.h"

#include <signal.h>

#include <atomic>
#include <thread>

namespace fb::cli {

// Feeds a run's command queue: JSON-line commands from stdin (when readStdin; docs/events.md)
// and a graceful stop on the first Ctrl-C (SIGINT) or SIGTERM; a second Ctrl-C kills as usual.
// Its thread polls so it can stop at any time, even while stdin stays silent.
class CommandPump {
public:
    CommandPump(exec::RunControl &control, bool readStdin);
    ~CommandPump();
    CommandPump(const CommandPump &) = delete;
    CommandPump &operator=(const CommandPump &) = delete;

private:
    void run();

    exec::RunControl &m_control;
    bool m_readStdin;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    sigset_t m_oldMask{}; // the constructing thread's, given back by the destructor
};

} // namespace fb::cli
