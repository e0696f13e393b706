#pragma once

#include "core/base/result.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fb::data {

// The on-disk cache of a file source's decoded samples (docs/data.md, "The disk cache"): every
// file of the source decoded once, resized to the sample's shape, in one file per source and
// decode setting, so that later epochs and later runs read samples instead of decoding photos
// or recordings again (FFCV's and DALI's lesson).
//
// One cache file holds one sample slot per file of the source, in the source's order, and what
// became of each file: its sample (with a CRC-32 of it), or why it is not readable. It is keyed
// by the source's files, in order, with each one's size and modification time, and by the
// decode settings (the key text, held whole in the file: a cache is used only for exactly the
// files and settings it was made from). Any change makes another key, so a cache is never
// patched, only made again. Damage is never trusted: a header, index or key that does not
// check out, a file of the wrong size, or a sample whose CRC-32 differs, and the cache file is
// removed (made again by the next run that writes one), the sample decoded from its file.
//
// Samples are read with pread, not through a memory map: a map turns a cache file cut short
// under the run (another program, a full disk) into SIGBUS, a crash, where pread returns short
// and the sample is decoded instead; and a map's pages count in the run's resident memory, which
// the cache_mb budget bounds. The kernel's page cache keeps the hot part in memory all the same.

// A file source's disk cache of decoded samples (sample_cache.h; the disk_cache parameter).
struct DiskCacheOptions {
    // auto: read when there is one, written when the samples do not fit the memory budget (the
    // data set streams); on: also written when they fit (later runs load without decoding);
    // off: neither read nor written.
    enum class Mode { Auto, On, Off } mode = Mode::Off;
    std::string settings; // what besides the files decides a sample (part of the cache's key)
    std::string dir;      // "" = sampleCacheDir()
};

// What a cache file is named by and checked against.
struct SampleCacheKey {
    std::string text; // the decode settings, then one line per file: path, size, time
    int64_t slotCount = 0, sampleBytes = 0;
};
// `decodeSettings`: everything besides the files that decides a sample ("image 3x128x128
// stretch"); the files with their sizes and modification times (fileStamp).
SampleCacheKey sampleCacheKey(const std::string &decodeSettings,
                              const std::vector<std::string> &paths,
                              const std::vector<std::pair<int64_t, int64_t>> &stamps,
                              int64_t sampleBytes);

// Where cache files live: $FLOWBENCH_CACHE_DIR, else $XDG_CACHE_HOME/flowbench/samples, else
// ~/.cache/flowbench/samples.
std::string sampleCacheDir();
class SampleCache {
public:
    // The cache for `key` in `dir`, or nullptr when there is none. A file that is there but does
    // not check out (damaged, cut short, another version, another key under the same name) is
    // removed, and `why` says so.
    static std::shared_ptr<SampleCache> open(const std::string &dir, const SampleCacheKey &key,
                                             std::string *why = nullptr);
    ~SampleCache();
    SampleCache(const SampleCache &) = delete;
    SampleCache &operator=(const SampleCache &) = delete;

    const std::string &path() const { return m_path; }
    int64_t slotCount() const { return int64_t(m_crc.size()); }
    int64_t sampleBytes() const { return m_sampleBytes; }
    int64_t fileBytes() const { return m_fileBytes; }
    // Whether file `slot` decoded, and why not when it did not.
    bool readable(int64_t slot) const { return m_reasons[size_t(slot)].empty(); }
    const std::string &reason(int64_t slot) const { return m_reasons[size_t(slot)]; }
    // Reads sample `slot` (sampleBytes bytes) into dst and checks it. Safe from any thread. On
    // an error the cache is damaged: its file is removed (once) and damaged() turns true.
    Status read(int64_t slot, void *dst) const;
    bool damaged() const { return m_damaged.load(); }

    // Makes a cache file while the files are decoded: put() each readable file's sample and
    // refuse() each unreadable one, from any threads, then finish(). Written under a temporary
    // name and renamed when whole, so that no reader ever sees half a cache.
    class Writer {
    public:
        // Fails (with the reason) when `dir` cannot be made or written, or when the disk lacks
        // the room for the cache plus 1 GiB.
        static Result<std::unique_ptr<Writer>> create(const std::string &dir,
                                                      const SampleCacheKey &key);
        ~Writer(); // removes the temporary file unless finish() renamed it
        Writer(const Writer &) = delete;
        Writer &operator=(const Writer &) = delete;
        void put(int64_t slot, const void *sample);
        void refuse(int64_t slot, const std::string &reason);
        // The finished cache, opened; an error when a write failed (the disk filled up).
        Result<std::shared_ptr<SampleCache>> finish();

    private:
        Writer() = default;
        std::string m_dir, m_path, m_tmp;
        SampleCacheKey m_key;
        int m_fd = -1;
        std::vector<uint32_t> m_crc;
        std::vector<std::string> m_reasons;
        std::atomic<bool> m_failed{false};
    };

private:
    SampleCache() = default;
    void discard() const; // removes the damaged file, once
    std::string m_path;
    int m_fd = -1;
    int64_t m_sampleBytes = 0, m_fileBytes = 0;
    std::vector<uint32_t> m_crc;
    std::vector<std::string> m_reasons;
    mutable std::atomic<bool> m_damaged{false};
};

// Removes every cache file in `dir` (flowbench-cli cache --clear); returns the bytes freed.
Result<int64_t> clearSampleCaches(const std::string &dir);

} // namespace fb::data
