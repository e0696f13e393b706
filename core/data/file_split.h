#pragma once

#include "core/base/result.h"
#include "core/data/dataset.h"

#include <algorithm>
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
    // voices the model never heard; otherwise each class's files are split.
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
template <class T, class Decode>
void decodeFiles(const std::vector<LabelledFile> &files, size_t sampleSize, Decode decode,
                 std::vector<T> &samples, ImageDataset &ds, int64_t budgetBytes = 0);

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
                 std::vector<T> &samples, ImageDataset &ds, int64_t budgetBytes)
{
    for (const LabelledFile &f : files)
        ds.files.push_back(f.path);
    const size_t sampleBytes = std::max<size_t>(1, sampleSize * sizeof(T));
    const size_t holdable = budgetBytes > 0 ? size_t(budgetBytes) / sampleBytes : files.size();
    const size_t hold = std::min(files.size(), holdable); // files i < hold are held
    samples.assign(hold * sampleSize, T{});
    std::vector<std::string> reasons(files.size());
    std::vector<char> readable(files.size(), 0);
    std::vector<std::pair<int64_t, int64_t>> stamps(files.size() - hold);
    forEachInParallel(files.size(), [&](size_t i) {
        if (i >= hold) stamps[i - hold] = fileStamp(files[i].path); // before it is read
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
            readable[i] = 1;
        }
    });
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
            ds.stamps.push_back(i < hold ? std::pair<int64_t, int64_t>() : stamps[i - hold]);
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
    }
}

} // namespace fb::data
