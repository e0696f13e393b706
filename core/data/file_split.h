#pragma once

#include "core/base/result.h"
#include "core/data/dataset.h"

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

// Decodes every file on all cores with decode(path) -> Result<std::vector<T>>, appends the
// readable ones' samples to `samples` and labels to ds.labels (in order), lists the others in
// ds.skipped with the reason, and sets ds.count.
template <class T, class Decode>
void decodeFiles(const std::vector<LabelledFile> &files, Decode decode, std::vector<T> &samples,
                 ImageDataset &ds);

// fn(i) for every i in [0, n), on up to 16 threads: decoding dominates loading a folder of
// photos or recordings. fn must be safe to call concurrently for different i.
void forEachInParallel(size_t n, const std::function<void(size_t)> &fn);

template <class T, class Decode>
void decodeFiles(const std::vector<LabelledFile> &files, Decode decode, std::vector<T> &samples,
                 ImageDataset &ds)
{
    for (const LabelledFile &f : files)
        ds.files.push_back(f.path);
    std::vector<std::optional<std::vector<T>>> decoded(files.size());
    std::vector<std::string> reasons(files.size());
    forEachInParallel(files.size(), [&](size_t i) {
        auto s = decode(files[i].path);
        if (s.ok())
            decoded[i] = std::move(s).value();
        else
            reasons[i] = s.error().message;
    });
    for (size_t i = 0; i < files.size(); ++i) {
        if (!decoded[i]) {
            ds.skipped.push_back({files[i].path, reasons[i]});
            continue;
        }
        samples.insert(samples.end(), decoded[i]->begin(), decoded[i]->end());
        ds.labels.push_back(files[i].label);
    }
    ds.count = int64_t(ds.labels.size());
}

} // namespace fb::data
