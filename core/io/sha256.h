#pragma once

#include "core/base/result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fb::io {

// SHA-256 with OpenSSL's libcrypto, as lowercase hex: what `sha256sum` prints.
std::string sha256Hex(std::string_view bytes);

struct FileDigest {
    int64_t bytes = 0;
    std::string sha256;
};
// A file's size and SHA-256, read in 1 MiB pieces (a data set's files may be large).
Result<FileDigest> sha256File(const std::string &path);

} // namespace fb::io
