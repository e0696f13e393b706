#pragma once

#include <cstdint>
#include <functional>
#include <map>
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
};

// The files of the subset, classes interleaved (so that a limit keeps them balanced), each
// class in path order. The split depends on the seed and the file names only: "train" and
// "validation" never share a file and together make "all".
std::vector<LabelledFile> selectFiles(std::vector<LabelledFile> files, int32_t classes,
                                      const SplitOptions &options);

// Hidden files and folders (".name") are not data.
bool isHidden(const std::string &fileName);

// The classes of a list of labels: when every label is a whole number they are class numbers
// (names "0" up to the largest); otherwise the distinct labels in sorted order.
struct LabelClasses {
    std::vector<std::string> names;
    std::map<std::string, int32_t> index; // each label text's class
};
LabelClasses classesOf(const std::vector<std::string> &labels);

// fn(i) for every i in [0, n), on up to 16 threads: decoding dominates loading a folder of
// photos or recordings. fn must be safe to call concurrently for different i.
void forEachInParallel(size_t n, const std::function<void(size_t)> &fn);

} // namespace fb::data
