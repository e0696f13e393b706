#include "core/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

namespace fb::data {

namespace {

// IDX arrays larger than this are refused before anything is allocated: no data set we read
// comes near it, and a corrupt header must not make us try to allocate terabytes.
constexpr uint64_t kMaxElements = uint64_t(1) << 31;

struct GzCloser {
    void operator()(gzFile_s *f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

std::string dimsString(const std::vector<int64_t> &dims)
{
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

std::string hexByte(unsigned v)
{
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", v & 0xffu);
    return buf;
}

// zlib prefixes its messages with the path it was opened with; fileError names the file already.
std::string gzMessage(gzFile f, const std::string &path, int &errnum)
{
    const char *raw = gzerror(f, &errnum);
    std::string msg = raw ? raw : "";
    const std::string prefix = path + ": ";
    if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
    switch (errnum) {
    case Z_ERRNO:
        return "read error: " + msg;
    case Z_BUF_ERROR:
        return "truncated gzip stream: " + msg;
    case Z_DATA_ERROR:
        return "corrupt gzip data: " + msg;
    case Z_MEM_ERROR:
        return "out of memory while decompressing";
    default:
        return "gzip error: " + msg;
    }
}

// Reads up to n bytes, fewer only at the end of the data. Returns the count, or -1 with `error`
// set when zlib reports any problem (a short read of a truncated gzip stream included: zlib then
// returns the bytes it got and records Z_BUF_ERROR, which we must not mistake for a clean end).
int64_t readSome(gzFile f, const std::string &path, uint8_t *buf, int64_t n, std::string &error)
{
    int64_t got = 0;
    while (got < n) {
        const unsigned chunk = unsigned(std::min<int64_t>(n - got, int64_t(1) << 30));
        const int r = gzread(f, buf + got, chunk);
        int errnum = Z_OK;
        std::string msg = gzMessage(f, path, errnum);
        if (r < 0 || errnum != Z_OK) {
            error = std::move(msg);
            return -1;
        }
        if (r == 0) break;
        got += r;
    }
    return got;
}

} // namespace

int idxElementSize(uint8_t typeCode)
{
    switch (typeCode) {
    case kIdxU8:
    case kIdxI8:
        return 1;
    case kIdxI16:
        return 2;
    case kIdxI32:
    case kIdxF32:
        return 4;
    case kIdxF64:
        return 8;
    default:
        return 0;
    }
}

namespace {

// Opens the file and reads its header (type code and dimensions, checked) into `out`.
Status openIdx(const std::string &path, GzFile &file, IdxArray &out)
{
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return fileError(path, "is a directory, not an IDX file");

    errno = 0;
    file.reset(gzopen(path.c_str(), "rb"));
    if (!file) {
        const int err = errno;
        return fileError(path, std::string("cannot open: ") +
                                   (err ? std::strerror(err) : "unknown error"));
    }
    gzbuffer(file.get(), 1 << 17);
    std::string error;

    // Header: two zero bytes, the element type code, the number of dimensions.
    uint8_t head[4];
    const int64_t headGot = readSome(file.get(), path, head, 4, error);
    if (headGot < 0) return fileError(path, error);
    if (headGot == 0) return fileError(path, "file is empty");
    if (headGot < 4)
        return fileError(path,
                         "truncated header: expected 4 bytes, got " + std::to_string(headGot));
    if (head[0] != 0 || head[1] != 0)
        return fileError(path, "bad magic " + hexByte(head[0]) + " " + hexByte(head[1]) +
                                   ": not an IDX file (it must start with two zero bytes)");
    out.typeCode = head[2];
    const int elemSize = idxElementSize(out.typeCode);
    if (elemSize == 0)
        return fileError(path, "unsupported IDX element type code " + hexByte(out.typeCode));
    const int rank = head[3];
    if (rank < 1 || rank > 4)
        return fileError(path, "unsupported number of dimensions " + std::to_string(rank) +
                                   " (expected 1 to 4)");

    uint8_t dimBytes[16];
    const int64_t dimGot = readSome(file.get(), path, dimBytes, 4 * rank, error);
    if (dimGot < 0) return fileError(path, error);
    if (dimGot < 4 * rank)
        return fileError(path, "truncated header: expected " + std::to_string(4 * rank) +
                                   " bytes of dimensions, got " + std::to_string(dimGot));
    uint64_t elements = 1;
    bool tooLarge = false;
    for (int i = 0; i < rank; ++i) {
        const uint8_t *p = dimBytes + 4 * i;
        const uint64_t d = (uint64_t(p[0]) << 24) | (uint64_t(p[1]) << 16) | (uint64_t(p[2]) << 8) |
                           uint64_t(p[3]);
        out.dims.push_back(int64_t(d));
        // Checked before multiplying, so the product can never overflow.
        if (d != 0 && elements > kMaxElements / d)
            tooLarge = true;
        else
            elements *= d;
    }
    if (tooLarge || elements > kMaxElements)
        return fileError(path, "dimensions " + dimsString(out.dims) +
                                   " are too large (more than 2^31 elements)");
    return {};
}

} // namespace

Result<IdxArray> readIdxHeader(const std::string &path)
{
    GzFile file;
    IdxArray out;
    FB_TRY(openIdx(path, file, out));
    return out;
}

Result<IdxArray> readIdx(const std::string &path)
{
    GzFile file;
    IdxArray out;
    FB_TRY(openIdx(path, file, out));
    std::string error;
    const int elemSize = idxElementSize(out.typeCode);
    uint64_t elements = 1;
    for (int64_t d : out.dims)
        elements *= uint64_t(d);

    // Read in slices that grow with what actually arrived (64 KiB, then as much again as was read,
    // up to 16 MiB), so a header that lies about a huge size costs at most twice what the file
    // really holds (found by fuzz_idx: 80 MB were reserved for a 20-byte file).
    const int64_t expected = int64_t(elements) * elemSize;
    int64_t got = 0;
    while (got < expected) {
        const int64_t chunk = std::min<int64_t>(
            expected - got, std::clamp<int64_t>(got, int64_t(64) << 10, int64_t(16) << 20));
        out.bytes.resize(size_t(got + chunk));
        const int64_t r = readSome(file.get(), path, out.bytes.data() + got, chunk, error);
        if (r < 0) return fileError(path, error);
        got += r;
        if (r < chunk) break;
    }
    if (got < expected)
        return fileError(path, "truncated data: dimensions " + dimsString(out.dims) + " need " +
                                   std::to_string(expected) + " bytes, got " + std::to_string(got));

    // Reading past the end also makes zlib verify the gzip trailer (CRC and length).
    uint8_t extra;
    const int64_t extraGot = readSome(file.get(), path, &extra, 1, error);
    if (extraGot < 0) return fileError(path, error);
    if (extraGot > 0)
        return fileError(path, "trailing data after the " + std::to_string(expected) +
                                   " bytes that dimensions " + dimsString(out.dims) + " describe");

    if constexpr (std::endian::native == std::endian::little) {
        if (elemSize > 1) {
            for (size_t i = 0; i < out.bytes.size(); i += size_t(elemSize))
                std::reverse(out.bytes.begin() + i, out.bytes.begin() + i + elemSize);
        }
    }
    return out;
}

} // namespace fb::data
