#pragma once

#include "core/base/result.h"

#include <string>
#include <vector>

namespace fb {

// "0.485, 0.456,0.406" as numbers (float, as the engine uses them); an error names what is not
// a number. For parameters that take one value per channel.
Result<std::vector<float>> parseNumberList(const std::string &text);

} // namespace fb
