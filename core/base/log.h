#pragma once

#include <string>

namespace fb {

enum class LogLevel { Debug, Info, Warning, Error };

// Human-readable progress goes to stderr (the CLI contract keeps stdout for the summary line).
void setLogLevel(LogLevel level);
void log(LogLevel level, const std::string &message);
inline void logInfo(const std::string &m)
{
    log(LogLevel::Info, m);
}
inline void logWarning(const std::string &m)
{
    log(LogLevel::Warning, m);
}

} // namespace fb
