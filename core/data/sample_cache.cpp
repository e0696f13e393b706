#include "core/data/sample_cache.h"

#include "core/base/bytes.h"
#include "core/base/safe_text.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace fb::data {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'F', 'B', 'S', 'A', 'M', 'P', 'L', 'E'};
constexpr uint32_t kVersion = 1;
constexpr int64_t kDataOffset = 4096; // the header's page; samples start page-aligned
constexpr const char *kSuffix = ".samples";

// The first bytes of a cache file. Native byte order: a cache is made and read on one machine.
struct Header {
    char magic[8];
    uint32_t version, pad;
    int64_t slotCount, sampleBytes, dataOffset, indexOffset, indexBytes;
    uint32_t indexCrc, headerCrc; // headerCrc: of every byte before it
};
static_assert(sizeof(Header) == 64);

uint32_t crcOf(const void *data, size_t n)
{
    return uint32_t(crc32_z(crc32_z(0, Z_NULL, 0), static_cast<const Bytef *>(data), n));
}

uint32_t headerCrc(const Header &h)
{
    return crcOf(&h, offsetof(Header, headerCrc));
}

bool preadAll(int fd, void *dst, int64_t n, int64_t at)
{
    auto *p = static_cast<char *>(dst);
    while (n > 0) {
        const ssize_t got = ::pread(fd, p, size_t(n), off_t(at));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false; // an error, or the file ends early
        p += got, n -= got, at += got;
    }
    return true;
}

bool pwriteAll(int fd, const void *src, int64_t n, int64_t at)
{
    const auto *p = static_cast<const char *>(src);
    while (n > 0) {
        const ssize_t put = ::pwrite(fd, p, size_t(n), off_t(at));
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return false;
        p += put, n -= put, at += put;
    }
    return true;
}

int64_t indexOffset(const SampleCacheKey &key)
{
    return kDataOffset + key.slotCount * key.sampleBytes;
}

// The index: the key text, then per slot its sample's CRC-32 and why the file is not readable
// ("" when it is).
std::string encodeIndex(const SampleCacheKey &key, const std::vector<uint32_t> &crc,
                        const std::vector<std::string> &reasons)
{
    std::string out;
    auto u64 = [&](uint64_t v) { out.append(reinterpret_cast<const char *>(&v), sizeof v); };
    auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char *>(&v), sizeof v); };
    u64(key.text.size());
    out += key.text;
    for (size_t i = 0; i < crc.size(); ++i) {
        u32(crc[i]);
        u32(uint32_t(reasons[i].size()));
        out += reasons[i];
    }
    return out;
}

bool decodeIndex(const std::string &in, const SampleCacheKey &key, std::vector<uint32_t> &crc,
                 std::vector<std::string> &reasons)
{
    size_t at = 0;
    auto take = [&](void *dst, size_t n) {
        if (in.size() - at < n) return false;
        std::memcpy(dst, in.data() + at, n);
        at += n;
        return true;
    };
    uint64_t keyBytes = 0;
    if (!take(&keyBytes, sizeof keyBytes) || keyBytes != key.text.size() ||
        in.compare(at, keyBytes, key.text) != 0)
        return false;
    at += keyBytes;
    crc.assign(size_t(key.slotCount), 0);
    reasons.assign(size_t(key.slotCount), {});
    for (size_t i = 0; i < size_t(key.slotCount); ++i) {
        uint32_t n = 0;
        if (!take(&crc[i], 4) || !take(&n, 4) || in.size() - at < n) return false;
        reasons[i].assign(in, at, n);
        at += n;
    }
    return at == in.size();
}

int64_t freeBytes(const std::string &dir)
{
    struct statvfs s {};
    if (::statvfs(dir.c_str(), &s) != 0) return -1;
    return int64_t(s.f_bavail) * int64_t(s.f_frsize);
}

// How much all cache files together may take: $FLOWBENCH_CACHE_MB, else 64 GiB.
int64_t cacheCapBytes()
{
    if (const char *mb = std::getenv("FLOWBENCH_CACHE_MB"); mb && *mb) {
        char *end = nullptr;
        const long long v = std::strtoll(mb, &end, 10);
        if (end && *end == '\0' && v > 0) return int64_t(v) << 20;
    }
    return int64_t(64) << 30;
}

// The cache file for a key in `dir`.
std::string sampleCachePath(const std::string &dir, const SampleCacheKey &key)
{
    return (fs::path(dir) / (hex64(fnv1a(key.text)) + kSuffix)).string();
}

// So that a new cache leaves the disk room: the cache files in `dir` beyond `keepBytes` in all,
// least recently used first, are removed, and temporary files left by killed runs.
void evictSampleCaches(const std::string &dir, int64_t keepBytes)
{
    struct Entry {
        fs::path path;
        int64_t bytes;
        fs::file_time_type used;
    };
    std::vector<Entry> entries;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        std::error_code e2;
        const auto used = e.last_write_time(e2);
        if (e2) continue;
        // A temporary file a day old is left over from a run that was killed.
        if (name.find(std::string(kSuffix) + ".tmp-") != std::string::npos) {
            if (now - used > std::chrono::hours(24)) fs::remove(e.path(), e2);
            continue;
        }
        if (name.size() <= std::strlen(kSuffix) ||
            name.compare(name.size() - std::strlen(kSuffix), std::string::npos, kSuffix) != 0)
            continue;
        const auto bytes = e.file_size(e2);
        if (!e2) entries.push_back({e.path(), int64_t(bytes), used});
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) { return a.used > b.used; });
    int64_t kept = 0;
    for (const Entry &e : entries) {
        if (kept + e.bytes <= keepBytes) {
            kept += e.bytes;
            continue;
        }
        std::error_code e2;
        fs::remove(e.path, e2);
    }
}

} // namespace

SampleCacheKey sampleCacheKey(const std::string &decodeSettings,
                              const std::vector<std::string> &paths,
                              const std::vector<std::pair<int64_t, int64_t>> &stamps,
                              int64_t sampleBytes)
{
    SampleCacheKey key;
    key.slotCount = int64_t(paths.size());
    key.sampleBytes = sampleBytes;
    key.text = "flowbench samples " + std::to_string(kVersion) + "\n" + decodeSettings + "\n" +
               std::to_string(sampleBytes) + " bytes a sample\n";
    for (size_t i = 0; i < paths.size(); ++i) {
        // The path as the source gave it, absolute, so that two folders never share a key.
        std::error_code ec;
        const fs::path abs = fs::absolute(paths[i], ec);
        key.text += (ec ? paths[i] : abs.lexically_normal().string()) + '\t' +
                    std::to_string(stamps[i].first) + '\t' + std::to_string(stamps[i].second) +
                    '\n';
    }
    return key;
}

std::string sampleCacheDir()
{
    if (const char *d = std::getenv("FLOWBENCH_CACHE_DIR"); d && *d) return d;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return (fs::path(x) / "flowbench" / "samples").string();
    if (const char *home = std::getenv("HOME"); home && *home)
        return (fs::path(home) / ".cache" / "flowbench" / "samples").string();
    return (fs::temp_directory_path() / "flowbench-samples").string();
}

std::shared_ptr<SampleCache> SampleCache::open(const std::string &dir, const SampleCacheKey &key,
                                               std::string *why)
{
    const std::string path = sampleCachePath(dir, key);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    auto refuse = [&](const std::string &what) -> std::shared_ptr<SampleCache> {
        ::close(fd);
        ::unlink(path.c_str());
        if (why) *why = "the cache of decoded samples " + safeText(path) + " " + what + "; removed";
        return nullptr;
    };
    Header h{};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !preadAll(fd, &h, sizeof h, 0))
        return refuse("cannot be read");
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
        h.headerCrc != headerCrc(h))
        return refuse("has a damaged header");
    if (h.slotCount != key.slotCount || h.sampleBytes != key.sampleBytes ||
        h.dataOffset != kDataOffset || h.indexOffset != indexOffset(key) || h.indexBytes < 8 ||
        h.indexBytes > (int64_t(1) << 34))
        return refuse("was made for other files");
    if (int64_t(st.st_size) != h.indexOffset + h.indexBytes)
        return refuse("is " + std::to_string(st.st_size) + " bytes, not " +
                      std::to_string(h.indexOffset + h.indexBytes) + " (cut short or grown)");
    std::string index(size_t(h.indexBytes), '\0');
    if (!preadAll(fd, index.data(), h.indexBytes, h.indexOffset))
        return refuse("cannot be read");
    if (crcOf(index.data(), index.size()) != h.indexCrc) return refuse("has a damaged index");
    std::shared_ptr<SampleCache> c(new SampleCache);
    if (!decodeIndex(index, key, c->m_crc, c->m_reasons))
        return refuse("was made for other files");
    c->m_path = path;
    c->m_fd = fd;
    c->m_sampleBytes = h.sampleBytes;
    c->m_fileBytes = int64_t(st.st_size);
    // Used now: the eviction of least recently used caches goes by modification time.
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    return c;
}

SampleCache::~SampleCache()
{
    if (m_fd >= 0) ::close(m_fd);
}

void SampleCache::discard() const
{
    if (m_damaged.exchange(true)) return;
    // Only the file this cache read: another run may have made a new one under the name since.
    struct stat mine {}, there {};
    if (::fstat(m_fd, &mine) == 0 && ::stat(m_path.c_str(), &there) == 0 &&
        mine.st_ino == there.st_ino && mine.st_dev == there.st_dev)
        ::unlink(m_path.c_str());
}

Status SampleCache::read(int64_t slot, void *dst) const
{
    if (slot < 0 || slot >= slotCount() || !readable(slot))
        return makeError("sample " + std::to_string(slot) + " is not in the cache");
    if (!preadAll(m_fd, dst, m_sampleBytes, kDataOffset + slot * m_sampleBytes)) {
        discard();
        return makeError("the cache of decoded samples " + safeText(m_path) +
                         " was cut short while the run read it");
    }
    if (crcOf(dst, size_t(m_sampleBytes)) != m_crc[size_t(slot)]) {
        discard();
        return makeError("sample " + std::to_string(slot) + " of the cache of decoded samples " +
                         safeText(m_path) + " does not match its checksum");
    }
    return {};
}

Result<std::unique_ptr<SampleCache::Writer>> SampleCache::Writer::create(const std::string &dir,
                                                                         const SampleCacheKey &key)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return makeError("cannot make the folder " + safeText(dir) + ": " + ec.message());
    const int64_t bytes = indexOffset(key) + int64_t(key.text.size()) + key.slotCount * 8 + 8;
    evictSampleCaches(dir, std::max<int64_t>(0, cacheCapBytes() - bytes));
    const int64_t room = freeBytes(dir);
    constexpr int64_t kMargin = int64_t(1) << 30;
    if (room >= 0 && room < bytes + kMargin)
        return makeError("not enough room on the disk of " + safeText(dir) + " for " +
                         wholeMegabytes(bytes) + " of decoded samples (" +
                         wholeMegabytes(room) + " free, and 1 GB is left free)");
    std::unique_ptr<Writer> w(new Writer);
    w->m_dir = dir;
    w->m_key = key;
    w->m_path = sampleCachePath(dir, key);
    static std::atomic<int> counter{0};
    w->m_tmp = w->m_path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    w->m_fd = ::open(w->m_tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (w->m_fd < 0)
        return makeError("cannot write " + safeText(w->m_tmp) + ": " + std::strerror(errno));
    // The room now, so that a disk filling up fails here and not half-way through the load.
    if (const int err = ::posix_fallocate(w->m_fd, 0, off_t(indexOffset(key))); err != 0)
        return makeError("cannot make room for " + safeText(w->m_tmp) + ": " +
                         std::strerror(err));
    w->m_crc.assign(size_t(key.slotCount), 0);
    w->m_reasons.assign(size_t(key.slotCount), std::string());
    return w;
}

SampleCache::Writer::~Writer()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        ::unlink(m_tmp.c_str());
    }
}

void SampleCache::Writer::put(int64_t slot, const void *sample)
{
    m_crc[size_t(slot)] = crcOf(sample, size_t(m_key.sampleBytes));
    if (!pwriteAll(m_fd, sample, m_key.sampleBytes, kDataOffset + slot * m_key.sampleBytes))
        m_failed = true;
}

void SampleCache::Writer::refuse(int64_t slot, const std::string &reason)
{
    // A file that is not readable has a reason: never "", which marks a readable one.
    m_reasons[size_t(slot)] = reason.empty() ? std::string("not readable") : reason;
}

Result<std::shared_ptr<SampleCache>> SampleCache::Writer::finish()
{
    const std::string index = encodeIndex(m_key, m_crc, m_reasons);
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.slotCount = m_key.slotCount;
    h.sampleBytes = m_key.sampleBytes;
    h.dataOffset = kDataOffset;
    h.indexOffset = indexOffset(m_key);
    h.indexBytes = int64_t(index.size());
    h.indexCrc = crcOf(index.data(), index.size());
    h.headerCrc = headerCrc(h);
    // No fdatasync: waiting for gigabytes to reach the disk cost the first run seconds, and a
    // cache that a crash left with pages missing is caught all the same, by the CRC-32 of every
    // sample read from it (the samples are decoded then, and the cache removed).
    const bool ok = !m_failed && pwriteAll(m_fd, index.data(), h.indexBytes, h.indexOffset) &&
                    pwriteAll(m_fd, &h, sizeof h, 0);
    const int err = errno;
    ::close(m_fd);
    m_fd = -1;
    if (!ok || ::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
        const std::string why = std::strerror(ok ? errno : err);
        ::unlink(m_tmp.c_str());
        return makeError("cannot write the cache of decoded samples " + safeText(m_path) + ": " +
                         why);
    }
    std::string why;
    std::shared_ptr<SampleCache> c = SampleCache::open(m_dir, m_key, &why);
    if (!c) return makeError(why.empty() ? "the cache just written cannot be opened" : why);
    return c;
}

Result<int64_t> clearSampleCaches(const std::string &dir)
{
    std::error_code ec;
    if (!fs::exists(dir, ec)) return int64_t(0);
    int64_t freed = 0;
    for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.find(kSuffix) == std::string::npos) continue;
        std::error_code size_ec;
        const auto size = e.file_size(size_ec);
        if (fs::remove(e.path(), size_ec) && !size_ec) freed += int64_t(size);
    }
    if (ec) return makeError("cannot list " + safeText(dir) + ": " + ec.message());
    return freed;
}

} // namespace fb::data
