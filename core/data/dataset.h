#pragma once

#include "core/base/result.h"
#include "core/tensor/shape.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fb::data {

class SampleCache;

// A file a source could not read as a sample, and why.
struct SkippedFile {
    std::string path, reason;
};

// A labelled image data set held in memory as it came from disk (uint8 pixels); conversion to
// float and normalization happen per batch in the Loader, which keeps the resident set 4x smaller.
struct ImageDataset {
    std::string name;
    int64_t count = 0, channels = 1, height = 0, width = 0;
    int32_t classes = 0;
    // What each label means, when the source knows it (Fashion-MNIST does); otherwise empty and
    // readers fall back to the label numbers (classNames()).
    std::vector<std::string> classNames;
    std::vector<uint8_t> pixels; // count * channels * height * width, NCHW per sample
    // Sources whose samples are not bytes (audio waveforms) hold them here as float instead,
    // with `pixels` empty: the data flow takes them as they are, without the scaling to [0, 1].
    std::vector<float> values;
    std::vector<int32_t> labels; // count
    // Files of the source that were not readable images (image folders and lists): left out of
    // `count`, reported by the run as a warning naming the node.
    std::vector<SkippedFile> skipped;
    // Every file read to make this data set, skipped ones included: the run's manifest names
    // them with their SHA-256 (core/exec/run_manifest.h).
    std::vector<std::string> files;

    // Streaming (docs/data.md, "Data larger than memory"): a file source whose decoded samples
    // do not fit its memory budget (cache_mb) holds only some of them. Sample i is row row[i] of
    // `pixels` or `values` when row[i] >= 0; otherwise the data workers decode paths[i] again with
    // `decode` whenever a batch needs it, and get the same values (the decoders are
    // deterministic). `row` is empty when every sample is held: then sample i is row i.
    std::vector<int64_t> row;
    std::vector<std::string> paths; // per sample, for the ones not held
    // Per sample not held: its file's size and modification time when the run read it, so that
    // a file changed since is refused instead of giving other values (fileStamp).
    std::vector<std::pair<int64_t, int64_t>> stamps;
    // Decodes a file into one sample: uint8 pixels (as bytes) or float values (as floats), the
    // kind `pixels` or `values` hold.
    std::function<Result<std::vector<uint8_t>>(const std::string &)> decodePixels;
    std::function<Result<std::vector<float>>(const std::string &)> decodeValues;
    int64_t held = 0;   // samples held in memory (count, when not streaming)
    bool audio = false; // float samples (`values`), even when none is held
    // The source's disk cache (sample_cache.h), when it has one: a sample not held is read from
    // slot cacheSlots[i] there instead of decoded from paths[i] (decoded after all when the cache
    // turns out damaged).
    std::shared_ptr<const SampleCache> disk;
    std::vector<int64_t> cacheSlots; // per sample, streaming with a disk cache only
    // What loading did with the disk cache, for the run's log: read from it, wrote it, or why
    // not ("" when there was nothing to say); and whether it read its samples from one.
    std::string diskNote;
    bool diskCacheRead = false;

    int64_t sampleSize() const { return channels * height * width; }
    bool streaming() const { return !row.empty(); }
    int64_t heldSamples() const { return streaming() ? held : count; }
    // Bytes of one sample as held: uint8 pixels or float values.
    int64_t sampleBytes() const
    {
        return sampleSize() * int64_t(floatSamples() ? sizeof(float) : 1);
    }
    // Held samples only (!streaming(), or row[i] >= 0).
    const uint8_t *sample(int64_t i) const
    {
        return pixels.data() + (streaming() ? row[size_t(i)] : i) * sampleSize();
    }
    const float *sampleValues(int64_t i) const
    {
        return values.data() + (streaming() ? row[size_t(i)] : i) * sampleSize();
    }
    bool isHeld(int64_t i) const { return !streaming() || row[size_t(i)] >= 0; }
    bool floatSamples() const { return audio || !values.empty(); }
};

// A file's size and modification time (ns), or (-1, -1) when it cannot be read.
std::pair<int64_t, int64_t> fileStamp(const std::string &path);

// Sample i as the data flow takes it: pixels scaled to [0, 1], float samples as they are, into
// dst (sampleSize() floats). A sample not held is read from the disk cache, or decoded from its
// file; the error names the file when that fails (it changed or went away since the run
// started).
// `from`, when given, says where the sample came from.
enum class SampleOrigin { Memory, DiskCache, File };
Status readSample(const ImageDataset &ds, int64_t i, float *dst, SampleOrigin *from = nullptr);

// Images from an IDX file of uint8 with dimensions [N, H, W] (one channel) or [N, C, H, W],
// labels from an IDX file of uint8 with dimensions [N]. `classes` is the largest label in the
// whole labels file plus one, so a `limit`ed subset still has the full class count. `limit` > 0
// keeps the first `limit` samples; 0 keeps all.
Result<ImageDataset> loadIdxImages(const std::string &imagesPath, const std::string &labelsPath,
                                   int64_t limit = 0);

// Fashion-MNIST (or MNIST) in `dir`: split "train" reads train-images-idx3-ubyte and
// train-labels-idx1-ubyte, split "test" the t10k-* files; each either gzip-compressed (".gz",
// preferred when both exist) or plain.
Result<ImageDataset> loadFashionMnist(const std::string &dir, const std::string &split,
                                      int64_t limit = 0);

// One sample's [channels, height, width] as loadIdxImages would make it, from the images file's
// header alone (the model summary's shape inference).
Result<Shape> idxImageSampleShape(const std::string &imagesPath);
// The same for loadFashionMnist; [1, 28, 28], the data set's own, where the files are not there
// (a summary needs no data).
Shape fashionMnistSampleShape(const std::string &dir, const std::string &split);

// The ten Fashion-MNIST labels in label order ("T-shirt/top", "Trouser", ... "Ankle boot").
const std::vector<std::string> &fashionMnistClassNames();

// The names of labels 0..classes-1: the data set's own when it has one per class, otherwise the
// label numbers ("0", "1", ...), so every class has a name to show.
std::vector<std::string> classNames(const ImageDataset &dataset, int32_t classes);

} // namespace fb::data
