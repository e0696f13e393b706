#include "core/base/json_nesting.h"

namespace fb {

std::pair<int, int> lineAndColumn(std::string_view text, size_t offset)
{
    int line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

Status checkJsonNesting(std::string_view text, const std::string &source, int maxDepth)
{
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i; // the escaped character, '"' included, cannot end the string
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth <= maxDepth) continue;
            const auto [line, column] = lineAndColumn(text, i);
            const std::string message = "arrays and objects nest more than " +
                                        std::to_string(maxDepth) + " levels deep (line " +
                                        std::to_string(line) + ", column " +
                                        std::to_string(column) + "); Flowbench reads at most " +
                                        std::to_string(maxDepth) + " levels";
            return source.empty() ? makeError(message) : fileError(source, message, line);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return {};
}

} // namespace fb
