#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "core/base/result.h"

namespace fb {

// How deeply arrays and objects may nest in JSON that Flowbench reads from a file or a pipe
// (pipeline files, saved models' metadata, safetensors headers, commands on stdin).
//
// Why a limit, and why here: nlohmann::json copies, compares, prints and converts values
// recursively, one stack frame per level. A pipeline file may carry unknown fields, which are
// kept verbatim to be written back on save, so 100,000 nested brackets in one of them parse
// fine and then overflow the stack at the first copy (validate and run died with SIGSEGV). Real
// files nest about five levels deep. The text is scanned before nlohmann builds anything, in one
// place, so every reader refuses the same files with the same message; core/base knows no JSON
// library, so the scan is its own: brackets outside strings, nothing else.
inline constexpr int kMaxJsonNesting = 64;

// An error naming `source` (a file name, or "" for text without one) when `text` opens more
// than maxDepth arrays and objects inside one another, with the line and column of the first
// bracket too many. Brackets inside strings do not count. Says nothing about whether the text is
// valid JSON otherwise: that is the parser's business.
Status checkJsonNesting(std::string_view text, const std::string &source,
                        int maxDepth = kMaxJsonNesting);

// Line and column (both from 1) of a byte offset in a text, for messages about JSON text.
std::pair<int, int> lineAndColumn(std::string_view text, size_t offset);

} // namespace fb
