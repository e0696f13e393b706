#include "core/base/result.h"

#include "core/base/safe_text.h"

namespace fb {

std::string Error::str() const
{
    // Built with append() rather than operator+: GCC 12 gives a false -Wrestrict for the latter.
    std::string out;
    if (!node.empty()) out.append("node '").append(node).append("': ");
    if (!file.empty()) {
        out.append(file);
        if (line > 0) out.append(":").append(std::to_string(line));
        out.append(": ");
    }
    return safeText(out.append(message));
}

Error makeError(std::string message)
{
    return Error{std::move(message), {}, {}, 0};
}

Error nodeError(std::string node, std::string message)
{
    return Error{std::move(message), std::move(node), {}, 0};
}

Error fileError(std::string file, std::string message, int line)
{
    return Error{std::move(message), {}, std::move(file), line};
}

} // namespace fb
