#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fb::widgets {

// Reading a field of an event from the engine's stream (docs/events.md). The stream comes from
// another process, or from a file a person may have edited, so it is not trusted to be whole: a
// missing field, or one of another type, reads as the fallback instead of throwing.
inline double eventNumber(const nlohmann::json &e, const char *key, double fallback = 0)
{
    auto it = e.find(key);
    return (it != e.end() && it->is_number()) ? it->get<double>() : fallback;
}

inline bool eventFlag(const nlohmann::json &e, const char *key)
{
    auto it = e.find(key);
    return it != e.end() && it->is_boolean() && it->get<bool>();
}

inline std::string eventString(const nlohmann::json &e, const char *key)
{
    auto it = e.find(key);
    return (it != e.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

} // namespace fb::widgets
