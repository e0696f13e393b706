#include "core/data/dataset.h"

#include "core/data/sample_cache.h"

#include "core/base/check.h"
#include "core/base/safe_text.h"
#include "core/data/idx.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace fb::data {

namespace fs = std::filesystem;

namespace {

std::string dimsString(const std::vector<int64_t> &dims)
{
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i)
        s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

// `base` or `base.gz`, preferring the compressed file as the Debian package installs it.
Result<std::string> findIdxFile(const std::string &base)
{
    std::error_code ec;
    const std::string gz = base + ".gz";
    if (std::filesystem::is_regular_file(gz, ec)) return gz;
    if (std::filesystem::is_regular_file(base, ec)) return base;
    return fileError(gz, "not found (nor the uncompressed " + base + ")");
}

// IDX images are unsigned bytes [N, H, W] or [N, C, H, W].
Status checkImageArray(const std::string &path, const IdxArray &images)
{
    if (images.typeCode != kIdxU8)
        return fileError(path, "images must be unsigned bytes (IDX type 0x08)");
    if (images.dims.size() != 3 && images.dims.size() != 4)
        return fileError(path, "images must have dimensions [N, H, W] or [N, C, H, W], not " +
                                   dimsString(images.dims));
    return {};
}

} // namespace

Result<ImageDataset> loadIdxImages(const std::string &imagesPath, const std::string &labelsPath,
                                   int64_t limit)
{
    if (limit < 0)
        return makeError("sample limit must be 0 (all) or positive, not " + std::to_string(limit));
    Result<IdxArray> images = readIdx(imagesPath);
    if (!images) return std::move(images.error());
    FB_TRY(checkImageArray(imagesPath, *images));
    const std::vector<int64_t> &idims = images->dims;

    Result<IdxArray> labels = readIdx(labelsPath);
    if (!labels) return std::move(labels.error());
    if (labels->typeCode != kIdxU8)
        return fileError(labelsPath, "labels must be unsigned bytes (IDX type 0x08)");
    if (labels->dims.size() != 1)
        return fileError(labelsPath,
                         "labels must have dimensions [N], not " + dimsString(labels->dims));

    const int64_t n = idims[0];
    if (labels->dims[0] != n)
        return fileError(imagesPath, "holds " + std::to_string(n) + " images but " + labelsPath +
                                         " holds " + std::to_string(labels->dims[0]) + " labels");
    if (n == 0) return fileError(imagesPath, "holds no samples");

    ImageDataset ds;
    ds.name = std::filesystem::path(imagesPath).filename().string();
    ds.channels = idims.size() == 4 ? idims[1] : 1;
    ds.height = idims[idims.size() - 2];
    ds.width = idims[idims.size() - 1];
    if (ds.sampleSize() == 0)
        return fileError(imagesPath, "images of dimensions " + dimsString(idims) + " are empty");
    ds.count = limit > 0 ? std::min(limit, n) : n;
    const uint8_t maxLabel = *std::max_element(labels->bytes.begin(), labels->bytes.end());
    ds.classes = int32_t(maxLabel) + 1;

    // Take the pixel buffer over instead of copying 47 MB.
    ds.pixels = std::move(images->bytes);
    if (ds.count < n) {
        ds.pixels.resize(size_t(ds.count * ds.sampleSize()));
        ds.pixels.shrink_to_fit();
    }
    ds.labels.assign(labels->bytes.begin(), labels->bytes.begin() + ds.count);
    ds.files = {imagesPath, labelsPath};
    return ds;
}

Result<Shape> idxImageSampleShape(const std::string &imagesPath)
{
    Result<IdxArray> images = readIdxHeader(imagesPath);
    if (!images) return std::move(images.error());
    FB_TRY(checkImageArray(imagesPath, *images));
    const std::vector<int64_t> &d = images->dims;
    return Shape{d.size() == 4 ? d[1] : 1, d[d.size() - 2], d[d.size() - 1]};
}

Shape fashionMnistSampleShape(const std::string &dir, const std::string &split)
{
    const std::string prefix = split == "train" ? "train" : "t10k";
    Result<std::string> images =
        findIdxFile((std::filesystem::path(dir) / (prefix + "-images-idx3-ubyte")).string());
    if (images) {
        Result<Shape> shape = idxImageSampleShape(*images);
        if (shape) return *shape;
    }
    return Shape{1, 28, 28};
}

Result<ImageDataset> loadFashionMnist(const std::string &dir, const std::string &split,
                                      int64_t limit)
{
    std::string prefix;
    if (split == "train")
        prefix = "train";
    else if (split == "test" || split == "t10k")
        prefix = "t10k";
    else
        return makeError("unknown Fashion-MNIST split '" + split + "' (expected train or test)");

    const std::filesystem::path base(dir);
    Result<std::string> images = findIdxFile((base / (prefix + "-images-idx3-ubyte")).string());
    if (!images) return std::move(images.error());
    Result<std::string> labels = findIdxFile((base / (prefix + "-labels-idx1-ubyte")).string());
    if (!labels) return std::move(labels.error());

    Result<ImageDataset> ds = loadIdxImages(*images, *labels, limit);
    if (ds) {
        ds->name = "fashion-mnist/" + split;
        // The clothing names only where the count fits: a file with other labels gets numbers.
        // (MNIST digits fit too but belong in an idx_dataset node, whose names are numbers.)
        if (ds->classes == int32_t(fashionMnistClassNames().size()))
            ds->classNames = fashionMnistClassNames();
    }
    return ds;
}

const std::vector<std::string> &fashionMnistClassNames()
{
    // Zalando's labels, as the data set's README lists them.
    static const std::vector<std::string> names{"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                "Bag",         "Ankle boot"};
    return names;
}

std::pair<int64_t, int64_t> fileStamp(const std::string &path)
{
    std::error_code ec, ec2;
    const auto size = fs::file_size(path, ec);
    const auto time = fs::last_write_time(path, ec2);
    if (ec || ec2) return {-1, -1};
    return {
        int64_t(size),
        int64_t(
            std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count())};
}

namespace {

// Pixels as the data flow takes them: scaled to [0, 1].
void toUnit(const uint8_t *src, int64_t n, float *dst)
{
    for (int64_t k = 0; k < n; ++k)
        dst[k] = float(src[k]) / 255.0f;
}

} // namespace

Status readSample(const ImageDataset &ds, int64_t i, float *dst, SampleOrigin *from)
{
    const int64_t n = ds.sampleSize();
    if (from) *from = ds.isHeld(i) ? SampleOrigin::Memory : SampleOrigin::File;
    if (ds.isHeld(i)) {
        if (ds.floatSamples()) {
            std::copy_n(ds.sampleValues(i), n, dst);
        } else {
            toUnit(ds.sample(i), n, dst);
        }
        return {};
    }
    // From the disk cache, as the file was when the run read it (the cache's key holds its size
    // and time); a damaged cache is left for the file itself.
    if (ds.disk && !ds.disk->damaged() && i < int64_t(ds.cacheSlots.size())) {
        const int64_t slot = ds.cacheSlots[size_t(i)];
        if (ds.floatSamples()) {
            if (ds.disk->read(slot, dst).ok()) {
                if (from) *from = SampleOrigin::DiskCache;
                return {};
            }
        } else {
            thread_local std::vector<uint8_t> bytes;
            bytes.resize(size_t(n));
            if (ds.disk->read(slot, bytes.data()).ok()) {
                toUnit(bytes.data(), n, dst);
                if (from) *from = SampleOrigin::DiskCache;
                return {};
            }
        }
    }
    // A file that decoded when the run started but not now, or to another size, has changed:
    // its old values cannot be had again, and new ones would make other batches than the run's.
    const std::string &path = ds.paths[size_t(i)];
    auto changed = [](const std::string &why) {
        return makeError("a file changed while the run was reading it: " + why +
                         "; start the run again");
    };
    // Decoders size every picture to the sample's shape, so a file replaced by another picture
    // would decode without complaint: its size and time say that it is not the one read.
    if (i < int64_t(ds.stamps.size())) {
        const auto now = fileStamp(path);
        if (now.first < 0) return changed(safeText(path) + ": no such file");
        if (now != ds.stamps[size_t(i)])
            return changed(safeText(path) + " was modified after the run read it");
    }
    if (ds.floatSamples()) {
        FB_ASSERT(bool(ds.decodeValues), "a streaming data set without its decoder");
        auto v = ds.decodeValues(path);
        if (!v.ok()) return changed(v.error().str());
        if (int64_t(v->size()) != n) return changed(safeText(path) + " has another length now");
        std::copy_n(v->data(), n, dst);
    } else {
        FB_ASSERT(bool(ds.decodePixels), "a streaming data set without its decoder");
        auto v = ds.decodePixels(path);
        if (!v.ok()) return changed(v.error().str());
        if (int64_t(v->size()) != n) return changed(safeText(path) + " has another size now");
        toUnit(v->data(), n, dst);
    }
    return {};
}

std::vector<std::string> classNames(const ImageDataset &dataset, int32_t classes)
{
    if (int32_t(dataset.classNames.size()) == classes) return dataset.classNames;
    std::vector<std::string> names;
    for (int32_t c = 0; c < classes; ++c)
        names.push_back(std::to_string(c));
    return names;
}

} // namespace fb::data
