#pragma once

#include "core/base/result.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace fb::io {

// Writes `text` to `path` through a temporary file in the same folder, flushed and synced, then
// renamed over it: a reader (or a crash) sees the previous file or the new one, never half of
// one. The folder is synced too, so the rename survives a power cut.
Status writeFileAtomically(const std::filesystem::path &path, std::string_view text);

// The whole file, or an error naming it ("no such file", "cannot be read").
Result<std::string> readWholeFile(const std::filesystem::path &path);

// fsync of a folder, so that files renamed into it stay there after a crash.
void syncDirectory(const std::filesystem::path &dir);

} // namespace fb::io
