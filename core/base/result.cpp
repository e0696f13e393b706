#include "core/base/result.h"

namespace fb {

std::string Error::str() const
{
    std::string out;
    if (!node.empty()) out += "node '" + node + "': ";
    if (!file.empty()) {
        out += file;
        if (line > 0) out += ":" + std::to_string(line);
        out += ": ";
    }
    return out + message;
}

Error makeError(std::string message) { return Error{std::move(message), {}, {}, 0}; }

Error nodeError(std::string node, std::string message)
{
    return Error{std::move(message), std::move(node), {}, 0};
}

Error fileError(std::string file, std::string message, int line)
{
    return Error{std::move(message), {}, std::move(file), line};
}

} // namespace fb
