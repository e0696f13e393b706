#include "core/base/log.h"

#include <cstdio>
#include <mutex>

namespace fb {

static LogLevel g_level = LogLevel::Info;
static std::mutex g_mutex;

void setLogLevel(LogLevel level)
{
    g_level = level;
}

void log(LogLevel level, const std::string &message)
{
    if (level < g_level) return;
    static const char *prefix[] = {"debug: ", "", "warning: ", "error: "};
    std::lock_guard lock(g_mutex);
    std::fprintf(stderr, "%s%s\n", prefix[int(level)], message.c_str());
    std::fflush(stderr);
}

} // namespace fb
