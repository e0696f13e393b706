#pragma once

#include "core/base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::data {

// IDX element type codes (the format of the MNIST family of data sets).
enum IdxType : uint8_t {
    kIdxU8 = 0x08,
    kIdxI8 = 0x09,
    kIdxI16 = 0x0B,
    kIdxI32 = 0x0C,
    kIdxF32 = 0x0D,
    kIdxF64 = 0x0E,
};

// Bytes per element of an IDX type code, 0 for an unknown code.
int idxElementSize(uint8_t typeCode);

// One IDX array. Multi-byte elements are stored big-endian in the file; `bytes` holds them in
// host byte order so callers can reinterpret them directly.
struct IdxArray {
    uint8_t typeCode = kIdxU8;
    std::vector<int64_t> dims;
    std::vector<uint8_t> bytes;

    int64_t count() const { return dims.empty() ? 0 : dims[0]; }
};

// Reads a gzip-compressed or plain IDX file (zlib reads both transparently). Every failure (a
// missing file, bad magic or type, absurd dimensions, truncated or trailing data, a corrupt gzip
// stream) is a fileError naming `path`; no input makes it crash or allocate more than the data
// actually present.
Result<IdxArray> readIdx(const std::string &path);
// The type code and dimensions alone (bytes stays empty), with the same checks.
Result<IdxArray> readIdxHeader(const std::string &path);

} // namespace fb::data
