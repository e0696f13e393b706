#include "core/base/number_list.h"

#include <algorithm>
#include <cstdlib>

namespace fb {

Result<std::vector<float>> parseNumberList(const std::string &text)
{
    std::vector<float> out;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t end = std::min(text.find(',', pos), text.size());
        const std::string part = text.substr(pos, end - pos);
        char *stop = nullptr;
        const float v = std::strtof(part.c_str(), &stop);
        if (stop == part.c_str() || std::string(stop).find_first_not_of(" \t") != std::string::npos)
            return makeError("'" + part + "' is not a number (write numbers separated by commas)");
        out.push_back(v);
        pos = end + 1;
    }
    return out;
}

} // namespace fb
