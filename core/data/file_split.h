#pragma once

#include "core/base/result.h"
#include "core/base/bytes.h"
#include "core/data/dataset.h"
#include "core/data/sample_cache.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fb::data {

// A file of a folder or list source, with its class and, where the source knows it, who
// recorded it.
struct LabelledFile {
    std::string path;
    int32_t label = 0;
    std::string speaker; // "" when unknown
};

// The seeded train/validation split of file sources (docs/data.md).
struct SplitOptions {
    std::string subset = "all"; // all | train | validation
    double validationFraction = 0.2;
    uint64_t splitSeed = 0;
    // Split whole speakers (every file of a speaker on one side), so that validation measures
    // voices the model never heard: the first validationFraction of them ranked by a hash of
    // their names and splitSeed, so that a folder that gains speakers keeps its split. Otherwise
    // each class's files are split (a seeded shuffle per class).
    bool bySpeaker = false;
    int64_t limit = 0; // > 0: at most this many files, classes interleaved
    // With bySpeaker: when not empty, the speakers in whose names this regular expression
    // (ECMAScript) is found are the validation side, the others the training side, instead of
    // a seeded draw of validationFraction of them: "^flite-" holds out a whole speech engine.
    std::string validationSpeakers;
};

// The files of the subset, classes interleaved (so that a limit keeps them balanced), each
// class in path order. The split depends on the seed and the file names only: "train" and
// "validation" never share a file and together make "all".
std::vector<LabelledFile> selectFiles(std::vector<LabelledFile> files, int32_t classes,
                                      const SplitOptions &options);

// The visible folders directly in `dir` (a folder source's classes), sorted by name. Hidden
// files and folders (".name") are not data. Errors name the folder: missing, not a folder, or
// not listable.
Result<std::vector<std::string>> subfolders(const std::string &dir);
// The regular files under `dir` at any depth, hidden ones and those in hidden folders left out.
Result<std::vector<std::string>> filesUnder(const std::string &dir);

// The classes of a list of labels: when every label is a whole number they are class numbers
// (names "0" up to the largest); otherwise the distinct labels in sorted order.
struct LabelClasses {
    std::vector<std::string> names;
    std::map<std::string, int32_t> index; // each label text's class
};
LabelClasses classesOf(const std::vector<std::string> &labels);

// Decodes every file on all cores with decode(path) -> Result<std::vector<T>> (each sample
// `sampleSize` values), puts the readable ones' samples in `samples` and labels in ds.labels (in
// order), lists the others in ds.skipped with the reason, and sets ds.count. The samples are
// held once: each is copied into its place in one buffer as soon as it is decoded, so loading
// peaks at the data set plus a few samples per thread (decoding every file into a sample of its
// own first, then appending them to a growing buffer, peaked at 3 times the data set).
//
// When the samples would take more than budgetBytes (> 0), only the samples of the first files
// that fit are held (an unreadable one among them leaves its place empty); the others are decoded
// all the same, to know which files are readable (the batches must be the same whatever the
// budget), and then let go: ds.row and ds.paths say which are held and where the others are read
// from (ImageDataset, "streaming").
//
// With a disk cache (`disk`), a cache made from these very files and settings is read instead
// of decoding any file (only the held samples are read now; the others when a batch needs
// them); without one, one is written while the files are decoded when `disk` asks for it.
// ds.diskNote says which, or why not.
template <class T, class Decode>
void decodeFiles(const std::vector<LabelledFile> &files, size_t sampleSize, Decode decode,
                 std::vector<T> &samples, ImageDataset &ds, int64_t budgetBytes = 0,
                 const DiskCacheOptions &disk = {});

// The memory budget of a file source's decoded samples when its cache_mb is 0: a quarter of the
// memory the run can take (hostMemoryAvailable: free memory, capped by a container's limit, and
// never more than the machine has), so that a training and an evaluation source together leave
// half of it to the model, the batches and everything else; 1 GiB where that cannot be read.
int64_t defaultCacheBytes();

// fn(i) for every i in [0, n), on up to 16 threads: decoding dominates loading a folder of
// photos or recordings. fn must be safe to call concurrently for different i.
void forEachInParallel(size_t n, const std::function<void(size_t)> &fn);

template <class T, class Decode>
void decodeFiles(const std::vector<LabelledFile> &files, size_t sampleSize, Decode decode,
                 std::vector<T> &samples, ImageDataset &ds, int64_t budgetBytes,
                 const DiskCacheOptions &disk)
{
    for (const LabelledFile &f : files)
        ds.files.push_back(f.path);
    const size_t sampleBytes = std::max<size_t>(1, sampleSize * sizeof(T));
    const size_t holdable = budgetBytes > 0 ? size_t(budgetBytes) / sampleBytes : files.size();
    const size_t hold = std::min(files.size(), holdable); // files i < hold are held
    samples.assign(hold * sampleSize, T{});
    std::vector<std::string> reasons(files.size());
    std::vector<char> readable(files.size(), 0);
    // Every file's size and time before it is read, where something needs them: the disk
    // cache's key, and the streamed files' check that they are still the ones read (readSample).
    std::vector<std::pair<int64_t, int64_t>> stamps(files.size());
    if (disk.mode != DiskCacheOptions::Mode::Off || hold < files.size())
        forEachInParallel(files.size(), [&](size_t i) { stamps[i] = fileStamp(files[i].path); });

    std::shared_ptr<SampleCache> cache;
    std::optional<SampleCacheKey> key;
    std::string dir;
    if (disk.mode != DiskCacheOptions::Mode::Off) {
        key = sampleCacheKey(disk.settings, ds.files, stamps, int64_t(sampleBytes));
        dir = disk.dir.empty() ? sampleCacheDir() : disk.dir;
        cache = SampleCache::open(dir, *key, &ds.diskNote);
    }
    if (cache) {
        std::atomic<bool> damaged{false};
        forEachInParallel(files.size(), [&](size_t i) {
            if (!cache->readable(int64_t(i))) {
                reasons[i] = cache->reason(int64_t(i));
            } else {
                readable[i] = 1;
                if (i < hold && !cache->read(int64_t(i), samples.data() + i * sampleSize).ok())
                    damaged = true;
            }
        });
        if (damaged) {
            ds.diskNote = "the cache of decoded samples " + cache->path() +
                          " was damaged (removed): the files were decoded again";
            cache.reset();
            std::fill(readable.begin(), readable.end(), 0);
            std::fill(reasons.begin(), reasons.end(), std::string());
        } else {
            ds.diskCacheRead = true;
            ds.diskNote = "read the decoded samples from the disk cache " + cache->path() +
                          " instead of decoding " + std::to_string(files.size()) + " files";
        }
    }
    if (!cache) {
        std::unique_ptr<SampleCache::Writer> writer;
        if (key && (disk.mode == DiskCacheOptions::Mode::On || hold < files.size())) {
            auto w = SampleCache::Writer::create(dir, *key);
            if (w.ok())
                writer = std::move(w).value();
            else
                ds.diskNote += (ds.diskNote.empty() ? "" : "; ") +
                               ("no disk cache of decoded samples: " + w.error().message);
        }
        forEachInParallel(files.size(), [&](size_t i) {
            auto s = decode(files[i].path);
            if (!s.ok()) {
                reasons[i] = s.error().message;
            } else if (s.value().size() != sampleSize) { // a decoder's promise broken: not trusted
                reasons[i] = "decoded to " + std::to_string(s.value().size()) + " values, not " +
                             std::to_string(sampleSize);
            } else {
                if (i < hold)
                    std::copy(s.value().begin(), s.value().end(),
                              samples.begin() + ptrdiff_t(i * sampleSize));
                if (writer) writer->put(int64_t(i), s.value().data());
                readable[i] = 1;
            }
            if (writer && !readable[i]) writer->refuse(int64_t(i), reasons[i]);
        });
        if (writer) {
            auto made = writer->finish();
            // After what became of the cache that was there, if anything.
            if (!ds.diskNote.empty()) ds.diskNote += "; ";
            if (made.ok()) {
                cache = std::move(made).value();
                ds.diskNote += "wrote the decoded samples to the disk cache " + cache->path() +
                               " (" + wholeMegabytes(cache->fileBytes()) +
                               "): later epochs and runs read them instead of decoding the files";
            } else {
                ds.diskNote += "no disk cache of decoded samples: " + made.error().message;
            }
        }
    }
    // The unreadable files' places are closed up, in order.
    const bool streaming = hold < files.size();
    size_t kept = 0, held = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        if (!readable[i]) {
            ds.skipped.push_back({files[i].path, reasons[i]});
            continue;
        }
        if (i < hold) {
            if (held != i)
                std::copy_n(samples.begin() + ptrdiff_t(i * sampleSize), sampleSize,
                            samples.begin() + ptrdiff_t(held * sampleSize));
            if (streaming) ds.row.push_back(int64_t(held));
            ++held;
        } else {
            ds.row.push_back(-1);
        }
        if (streaming) {
            ds.paths.push_back(i < hold ? std::string() : files[i].path);
            ds.stamps.push_back(i < hold ? std::pair<int64_t, int64_t>() : stamps[i]);
            if (cache) ds.cacheSlots.push_back(i < hold ? -1 : int64_t(i));
        }
        ds.labels.push_back(files[i].label);
        ++kept;
    }
    samples.resize(held * sampleSize); // no reallocation: the capacity stays, unused
    ds.count = int64_t(kept);
    ds.held = int64_t(held);
    if (held == kept) { // the files past the budget were all unreadable: nothing streams
        ds.row.clear();
        ds.paths.clear();
        ds.stamps.clear();
        ds.cacheSlots.clear();
    }
    if (!ds.cacheSlots.empty()) ds.disk = cache;
}

} // namespace fb::data
