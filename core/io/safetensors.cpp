// We implement safetensors ourselves: the format is small, and no Debian package provides a C++
// safetensors library (the reference implementation is Rust with Python bindings).
#include "core/io/safetensors.h"

#include "core/base/json_nesting.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fb::io {

// The format stores little-endian data and we copy it straight to and from tensor memory.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little endian");

namespace {

using Json = nlohmann::ordered_json; // keeps the header's tensor order

constexpr const char *kMetadataKey = "__metadata__";
// The CRC-32 of the data section, written into the metadata and checked on reading (then left
// out of SafetensorsFile::metadata: it describes the file, not what it holds).
constexpr const char *kChecksumKey = "flowbench_data_crc32";
// The reference implementation refuses larger headers too; it bounds what garbage can make us
// allocate before the header is even parsed.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

std::string errnoText()
{
    return std::strerror(errno);
}

bool writeAll(int fd, const void *data, size_t size)
{
    const char *p = static_cast<const char *>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, p, std::min<size_t>(size, size_t(1) << 30));
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        size -= size_t(n);
    }
    return true;
}

// Closes the descriptor and removes the temporary file unless the write was committed.
struct TempFile {
    std::string path;
    int fd = -1;
    bool committed = false;
    ~TempFile()
    {
        if (fd >= 0) ::close(fd);
        if (!committed) ::unlink(path.c_str());
    }
};

struct FileCloser {
    void operator()(std::FILE *f) const { std::fclose(f); }
};

struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> dims;
    uint64_t begin, end;
};

std::string shapeText(const std::vector<int64_t> &dims)
{
    return Shape(dims).str();
}

// One tensor's header entry, checked against the size of the data section.
Result<Entry> parseEntry(const std::string &path, const std::string &name, const Json &v,
                         uint64_t dataSize)
{
    const std::string where = "tensor '" + name + "': ";
    if (!v.is_object()) return fileError(path, where + "entry is not a JSON object");
    const auto dtypeIt = v.find("dtype");
    if (dtypeIt == v.end() || !dtypeIt->is_string())
        return fileError(path, where + "missing string \"dtype\"");
    Entry e;
    e.name = name;
    const std::string &dtypeName = dtypeIt->get_ref<const std::string &>();
    if (!dtypeFromSafetensors(dtypeName, e.dtype))
        return fileError(path, where + "unsupported dtype \"" + dtypeName + "\"");

    const auto shapeIt = v.find("shape");
    if (shapeIt == v.end() || !shapeIt->is_array())
        return fileError(path, where + "missing array \"shape\"");
    bool hasZero = false;
    for (const Json &d : *shapeIt) {
        if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
            return fileError(path, where + "shape entries must be non-negative integers");
        e.dims.push_back(int64_t(d.get<uint64_t>()));
        hasZero = hasZero || e.dims.back() == 0;
    }
    uint64_t bytes = 0;
    if (!hasZero) {
        uint64_t n = dtypeSize(e.dtype);
        for (int64_t d : e.dims) {
            if (__builtin_mul_overflow(n, uint64_t(d), &n))
                return fileError(path, where + "shape " + shapeText(e.dims) + " is too large");
        }
        bytes = n;
    }

    const auto offIt = v.find("data_offsets");
    if (offIt == v.end() || !offIt->is_array() || offIt->size() != 2 ||
        !(*offIt)[0].is_number_unsigned() || !(*offIt)[1].is_number_unsigned())
        return fileError(path, where + "\"data_offsets\" must be two non-negative integers");
    e.begin = (*offIt)[0].get<uint64_t>();
    e.end = (*offIt)[1].get<uint64_t>();
    const std::string range = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
    if (e.begin > e.end) return fileError(path, where + "data_offsets " + range + " are reversed");
    if (e.end > dataSize)
        return fileError(path, where + "data_offsets " + range + " run past the end of the " +
                                   std::to_string(dataSize) + "-byte data section (truncated?)");
    if (e.end - e.begin != bytes)
        return fileError(path, where + "data_offsets " + range + " hold " +
                                   std::to_string(e.end - e.begin) + " bytes but " + dtypeName +
                                   " " + shapeText(e.dims) + " needs " + std::to_string(bytes));
    return e;
}

} // namespace

Status writeSafetensors(const std::string &path, const NamedTensors &tensors,
                        const std::map<std::string, std::string> &metadata)
{
    Json header = Json::object();
    {
        Json meta = Json::object();
        for (const auto &[k, v] : metadata)
            meta[k] = v;
        // safetensors itself has no checksum: a flipped bit in the weights would load silently.
        // zlib's CRC-32 of the data section goes into the metadata, and the reader checks it.
        uLong crc = crc32(0L, Z_NULL, 0);
        for (const auto &[name, t] : tensors)
            if (t.defined() && t.bytes() > 0)
                crc = crc32_z(crc, static_cast<const Bytef *>(t.raw()), t.bytes());
        char hex[16];
        std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
        meta[kChecksumKey] = hex;
        header[kMetadataKey] = std::move(meta);
    }
    std::set<std::string> names;
    uint64_t offset = 0;
    for (const auto &[name, t] : tensors) {
        if (name.empty()) return fileError(path, "a tensor has an empty name");
        if (name == kMetadataKey)
            return fileError(path, "\"__metadata__\" is reserved and cannot name a tensor");
        if (!names.insert(name).second)
            return fileError(path, "two tensors are named '" + name + "'");
        if (!t.defined()) return fileError(path, "tensor '" + name + "' is undefined");
        if (!(t.device() == Device::cpu()))
            return fileError(path, "tensor '" + name + "' is on " + t.device().str() +
                                       "; copy it to the CPU before saving");
        const uint64_t bytes = t.bytes();
        header[name] = {{"dtype", std::string(safetensorsName(t.dtype()))},
                        {"shape", t.shape().dims()},
                        {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string json;
    try {
        json = header.dump();
    } catch (const nlohmann::json::exception &) {
        return fileError(path, "tensor names and metadata must be valid UTF-8");
    }
    // Pad with spaces so the data section starts 8-byte aligned (the length field is 8 bytes).
    json.append((8 - json.size() % 8) % 8, ' ');
    uint8_t lengthBytes[8];
    for (int i = 0; i < 8; ++i)
        lengthBytes[i] = uint8_t(uint64_t(json.size()) >> (8 * i));

    TempFile tmp;
    tmp.path = path + ".tmp";
    tmp.fd = ::open(tmp.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (tmp.fd < 0) return fileError(path, "cannot create " + tmp.path + ": " + errnoText());
    bool ok = writeAll(tmp.fd, lengthBytes, 8) && writeAll(tmp.fd, json.data(), json.size());
    for (size_t i = 0; ok && i < tensors.size(); ++i)
        ok = writeAll(tmp.fd, tensors[i].second.raw(), tensors[i].second.bytes());
    if (!ok) return fileError(path, "cannot write " + tmp.path + ": " + errnoText());
    if (::fsync(tmp.fd) != 0)
        return fileError(path, "cannot flush " + tmp.path + " to disk: " + errnoText());
    const int fd = std::exchange(tmp.fd, -1);
    if (::close(fd) != 0) return fileError(path, "cannot close " + tmp.path + ": " + errnoText());
    if (std::rename(tmp.path.c_str(), path.c_str()) != 0)
        return fileError(path, "cannot rename " + tmp.path + " over it: " + errnoText());
    tmp.committed = true;

    // Make the rename itself durable; failing here loses nothing already written, so ignore it.
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
    return {};
}

const Tensor *SafetensorsFile::find(const std::string &name) const
{
    for (const auto &[n, t] : tensors)
        if (n == name) return &t;
    return nullptr;
}

Result<SafetensorsFile> readSafetensors(const std::string &path)
{
    std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
    if (!file) return fileError(path, "cannot open: " + errnoText());
    struct stat st;
    if (::fstat(::fileno(file.get()), &st) != 0)
        return fileError(path, "cannot stat: " + errnoText());
    if (S_ISDIR(st.st_mode)) return fileError(path, "is a directory, not a safetensors file");
    const uint64_t fileSize = uint64_t(st.st_size);
    if (fileSize < 8)
        return fileError(path, "truncated: " + std::to_string(fileSize) +
                                   " bytes, too short for the 8-byte header length");

    uint8_t lengthBytes[8];
    if (std::fread(lengthBytes, 1, 8, file.get()) != 8)
        return fileError(path, "cannot read the header length: " + errnoText());
    uint64_t headerSize = 0;
    for (int i = 0; i < 8; ++i)
        headerSize |= uint64_t(lengthBytes[i]) << (8 * i);
    if (headerSize > kMaxHeaderBytes)
        return fileError(path, "header length " + std::to_string(headerSize) +
                                   " is implausible (not a safetensors file?)");
    if (headerSize > fileSize - 8)
        return fileError(path, "truncated: the header needs " + std::to_string(headerSize) +
                                   " bytes but only " + std::to_string(fileSize - 8) + " follow");
    std::string text(size_t(headerSize), '\0');
    if (std::fread(text.data(), 1, text.size(), file.get()) != text.size())
        return fileError(path, "cannot read the header: " + errnoText());
    const uint64_t dataSize = fileSize - 8 - headerSize;

    SafetensorsFile out;
    std::vector<Entry> entries;
    try {
        // The parser callback sees each top-level key; the DOM alone would let a duplicate
        // silently replace the first entry.
        std::set<std::string> seen;
        std::string duplicate;
        const Json::parser_callback_t onEvent = [&](int depth, Json::parse_event_t event,
                                                    Json &parsed) {
            if (event == Json::parse_event_t::key && depth == 1 && parsed.is_string() &&
                !seen.insert(parsed.get<std::string>()).second && duplicate.empty())
                duplicate = parsed.get<std::string>();
            return true;
        };
        FB_TRY(checkJsonNesting(text, path)); // before parsing (json_nesting.h)
        const Json header = Json::parse(text, onEvent, /*allow_exceptions=*/false);
        if (header.is_discarded()) return fileError(path, "the header is not valid JSON");
        if (!header.is_object()) return fileError(path, "the header is not a JSON object");
        if (!duplicate.empty())
            return fileError(path, "the header names '" + duplicate + "' twice");

        for (const auto &[key, value] : header.items()) {
            if (key == kMetadataKey) {
                if (!value.is_object())
                    return fileError(path, "\"__metadata__\" is not a JSON object");
                for (const auto &[mk, mv] : value.items()) {
                    if (!mv.is_string())
                        return fileError(path, "metadata '" + mk + "' is not a string");
                    out.metadata[mk] = mv.get<std::string>();
                }
                continue;
            }
            Result<Entry> e = parseEntry(path, key, value, dataSize);
            if (!e) return std::move(e.error());
            entries.push_back(std::move(*e));
        }
    } catch (const std::exception &e) {
        // The checks above should leave nothing to throw; this keeps a missed case an error.
        return fileError(path, std::string("invalid header: ") + e.what());
    }

    std::vector<const Entry *> byOffset;
    for (const Entry &e : entries)
        byOffset.push_back(&e);
    // The tensors must cover the data section exactly, as writers lay it out: a header length
    // off by a byte shifts every tensor, which would otherwise load as garbage without a word.
    uint64_t covered = 0;
    std::sort(byOffset.begin(), byOffset.end(), [](const Entry *a, const Entry *b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    for (size_t i = 1; i < byOffset.size(); ++i) {
        const Entry &a = *byOffset[i - 1], &b = *byOffset[i];
        // Empty tensors occupy no bytes and cannot overlap anything.
        if (b.begin < a.end && b.begin != b.end)
            return fileError(path, "tensors '" + a.name + "' and '" + b.name +
                                       "' overlap in the data section");
    }
    for (const Entry *e : byOffset)
        covered += e->end - e->begin;
    if (covered != dataSize)
        return fileError(path, "the tensors hold " + std::to_string(covered) +
                                   " bytes but the data "
                                   "section has " +
                                   std::to_string(dataSize) + " (a damaged header or file)");

    for (const Entry &e : entries) {
        Tensor t = Tensor::empty(Shape(e.dims), e.dtype);
        if (t.bytes() > 0) {
            if (::fseeko(file.get(), off_t(8 + headerSize + e.begin), SEEK_SET) != 0 ||
                std::fread(t.raw(), 1, t.bytes(), file.get()) != t.bytes())
                return fileError(path, "cannot read tensor '" + e.name + "' (file changed?)");
        }
        out.tensors.emplace_back(e.name, std::move(t));
    }
    if (const auto sum = out.metadata.find(kChecksumKey); sum != out.metadata.end()) {
        uLong crc = crc32(0L, Z_NULL, 0);
        for (const Entry *e : byOffset) {
            const Tensor *t = out.find(e->name);
            if (t && t->bytes() > 0)
                crc = crc32_z(crc, static_cast<const Bytef *>(t->raw()), t->bytes());
        }
        char hex[16];
        std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
        if (sum->second != hex)
            return fileError(path, "the data does not match its checksum (" + sum->second +
                                       ", read " + hex + "): the file is damaged");
        out.metadata.erase(sum);
    }
    return out;
}

} // namespace fb::io
