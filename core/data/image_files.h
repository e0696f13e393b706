#pragma once

#include "core/base/result.h"
#include "core/data/dataset.h"
#include "core/data/sample_cache.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb::data {

// How image files become samples of one size (the image_folder and image_list nodes;
// docs/data.md). Every file is decoded once, when the data set is loaded, and kept as uint8
// pixels at the model's input size: the random stages (crop, flip, affine, jitter) then run per
// batch on those.
struct ImageFilesOptions {
    int64_t height = 32, width = 32;
    bool colour = false; // 3 channels (RGB) instead of 1 (grey)
    // stretch: scaled to height x width, the aspect ratio lost; pad: scaled to fit inside,
    // aspect kept, the rest black (letterboxing).
    enum class Resize { Stretch, Pad } resize = Resize::Stretch;
    // The seeded train/validation split, per class: "all" keeps every file; "train" and
    // "validation" the two parts, which never share a file and always add up to "all".
    std::string subset = "all";
    double validationFraction = 0.2;
    uint64_t splitSeed = 0;
    int64_t limit = 0; // > 0: at most this many files of the subset, classes interleaved
    // Memory for decoded samples, in bytes: a data set that needs more is streamed (the samples
    // that fit are held, the others decoded again each time a batch needs them; decodeFiles).
    // 0: no limit.
    int64_t cacheBytes = 0;
    // The disk cache of decoded samples (its settings are filled in by the loaders).
    DiskCacheOptions::Mode diskCache = DiskCacheOptions::Mode::Off;
    std::string diskCacheDir; // "" = sampleCacheDir()
};

// Decodes one image file (PNG, JPEG, BMP, TIFF, WebP or PBM/PGM/PPM, by content, through OpenCV)
// into a sample:
// channels x height x width uint8, planar, RGB order for colour. The error says why a file is
// not a readable image (missing, not an image, truncated, empty).
Result<std::vector<uint8_t>> decodeImageFile(const std::string &path,
                                             const ImageFilesOptions &options);
// The same from bytes in memory (a dropped file's, a test's); `name` is for the message.
Result<std::vector<uint8_t>> decodeImageBytes(const std::vector<uint8_t> &bytes,
                                              const std::string &name,
                                              const ImageFilesOptions &options);

// A folder with one subfolder per class (`dir/cat/1.png`, `dir/dog/7.jpg`): classes are the
// subfolders' names in sorted order. Hidden files and folders (".name") are ignored; files that
// are not readable images are skipped and listed in `skipped`, with the reason.
Result<ImageDataset> loadImageFolder(const std::string &dir, const ImageFilesOptions &options);

// A CSV file of `path,label` lines (an optional header line `path,label`; fields may be quoted).
// Relative paths are read from the CSV's folder. Labels that are all whole numbers are class
// numbers (classes: the largest plus one); otherwise they are class names, numbered in sorted
// order. Unreadable images are skipped as with folders.
Result<ImageDataset> loadImageList(const std::string &csvPath, const ImageFilesOptions &options);

} // namespace fb::data
