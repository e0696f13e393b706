// Data sources: Fashion-MNIST, IDX files, image folders and lists, audio folders. Each reads its
// parameters into the chain's DataSpec and loads the data set it describes (docs/data.md,
// docs/audio.md).

#include "core/data/audio_files.h"
#include "core/data/dataset.h"
#include "core/data/file_split.h"
#include "core/data/image_files.h"
#include "core/exec/node_type.h"
#include "core/exec/nodes/catalog.h"
#include "core/exec/nodes/describe.h"

#include <regex>

namespace fb::exec::nodes {

namespace {

const PortSpec &samplesOut()
{
    static const PortSpec p =
        port("samples", PortType::Samples, "Stream of (image, label) samples.");
    return p;
}

NodeType source(std::string type, std::string title, std::string help,
                std::vector<ParamSpec> params)
{
    NodeType t =
        nodeType(NodeRole::Source, std::move(type), "Data", std::move(title), std::move(help));
    t.spec.outputs = {samplesOut()};
    t.spec.params = std::move(params);
    return t;
}

ParamSpec limitParam(const char *help)
{
    return intParam("limit", 0, closed(0, kMaxSamples), help);
}

// The memory budget of a file source's decoded samples. Run-only: the batches are the same
// whatever it is, so a run resumes with another.
ParamSpec cacheParam()
{
    return runOnly(intParam(
        "cache_mb", 0, closed(0, 1 << 24),
        "Memory for the decoded samples, in MB. A data set that needs more streams: the samples "
        "that fit stay in memory, the others are decoded from their files on the data workers "
        "each epoch (the same batches, more decoding). 0 = a quarter of the memory free for "
        "the run."));
}

int64_t cacheBytes(const NodeParams &p)
{
    const int64_t mb = p.i("cache_mb");
    return mb > 0 ? mb << 20 : data::defaultCacheBytes();
}

// The disk cache of decoded samples (data/sample_cache.h). Run-only too: a cache holds exactly
// what decoding gives.
ParamSpec diskCacheParam()
{
    return runOnly(enumParam(
        "disk_cache", {"auto", "on", "off"}, "auto",
        "Decoded samples kept on disk (~/.cache/flowbench/samples), so that later epochs and "
        "runs read them instead of decoding the files again. auto: written when the data set "
        "is larger than cache_mb, read whenever there is one for these files; on: always "
        "written; off: never used."));
}

data::DiskCacheOptions::Mode diskCacheMode(const NodeParams &p)
{
    const std::string m = p.s("disk_cache");
    return m == "on"    ? data::DiskCacheOptions::Mode::On
           : m == "off" ? data::DiskCacheOptions::Mode::Off
                        : data::DiskCacheOptions::Mode::Auto;
}

// Folders and lists of image files share how files become samples (data::ImageFilesOptions).
std::vector<ParamSpec> imageFileParams(ParamSpec path)
{
    return {
        std::move(path),
        enumParam("subset", {"train", "validation", "all"}, "train",
                  "Which part of the seeded split to read: each class's files are divided "
                  "into train and validation by validation_fraction; all = every file."),
        floatParam("validation_fraction", 0.2, closed(0, 0.9),
                   "Share of each class's files held out for validation."),
        intParam("split_seed", 0, closed(0, kMaxSeed),
                 "Seed of the split: the same seed gives the same validation files."),
        enumParam("color", {"grey", "rgb"}, "grey",
                  "grey: 1 channel; rgb: 3 channels (red, green, blue)."),
        intParam("height", 32, closed(1, kMaxImageSide), "Sample height in pixels."),
        intParam("width", 32, closed(1, kMaxImageSide), "Sample width in pixels."),
        enumParam("resize", {"stretch", "pad"}, "stretch",
                  "stretch: scaled to height x width (aspect ratio lost); pad: scaled to fit "
                  "inside, aspect ratio kept, the rest black."),
        limitParam("Read at most N files of the subset (classes interleaved); 0 = all."),
        cacheParam(),
        diskCacheParam(),
    };
}

Status readImageFiles(const NodeParams &p, DataSpec &spec)
{
    spec.path = p.path("path");
    spec.limit = p.i("limit");
    spec.fromImageFiles = true;
    data::ImageFilesOptions &o = spec.imageFiles;
    o.subset = p.s("subset");
    o.validationFraction = p.f("validation_fraction");
    o.splitSeed = uint64_t(p.i("split_seed"));
    o.colour = p.s("color") == "rgb";
    o.height = p.i("height");
    o.width = p.i("width");
    o.resize = p.s("resize") == "pad" ? data::ImageFilesOptions::Resize::Pad
                                      : data::ImageFilesOptions::Resize::Stretch;
    o.limit = spec.limit;
    o.cacheBytes = cacheBytes(p);
    o.diskCache = diskCacheMode(p);
    return {};
}

// The shape every decoded file is sized to (data::loadImageFolder's samples).
Result<Shape> imageFilesShape(const DataSpec &spec)
{
    const data::ImageFilesOptions &o = spec.imageFiles;
    return Shape{o.colour ? 3 : 1, o.height, o.width};
}

} // namespace

void addDataSources(NodeCatalog &c)
{
    {
        NodeType t = source(
            "fashion_mnist", "Fashion-MNIST",
            "Fashion-MNIST: 28x28 grey clothing images in 10 classes, pixels scaled to [0,1].",
            {
                pathParam("path", "/usr/share/datasets/fashion-mnist",
                          "Folder with the gzip IDX files (train-images-idx3-ubyte.gz, ...)."),
                enumParam("split", {"train", "test"}, "train",
                          "Which part to read: 60000 training or 10000 test samples."),
                limitParam("Read only the first N samples; 0 = all samples."),
            });
        t.readSource = [](const NodeParams &p, DataSpec &spec) -> Status {
            spec.path = p.path("path");
            spec.split = p.s("split");
            spec.limit = p.i("limit");
            return {};
        };
        t.loadSource = [](const DataSpec &spec) {
            return data::loadFashionMnist(spec.path, spec.split, spec.limit);
        };
        t.sampleShape = [](const DataSpec &spec) -> Result<Shape> {
            return data::fashionMnistSampleShape(spec.path, spec.split);
        };
        c.add(std::move(t));
    }
    {
        NodeType t =
            source("idx_dataset", "IDX dataset",
                   "Any image/label pair of IDX files (MNIST layout, optionally gzip-compressed).",
                   {
                       pathParam("images", "", "IDX file of images (uint8, N x H x W)."),
                       pathParam("labels", "", "IDX file of labels (uint8, N), one per image."),
                       limitParam("Read only the first N samples; 0 = all samples."),
                   });
        t.readSource = [](const NodeParams &p, DataSpec &spec) -> Status {
            spec.images = p.path("images");
            spec.labels = p.path("labels");
            spec.limit = p.i("limit");
            return {};
        };
        t.loadSource = [](const DataSpec &spec) {
            return data::loadIdxImages(spec.images, spec.labels, spec.limit);
        };
        t.sampleShape = [](const DataSpec &spec) { return data::idxImageSampleShape(spec.images); };
        c.add(std::move(t));
    }
    {
        NodeType t =
            source("image_folder", "Image folder",
                   "Your own pictures: a folder with one subfolder per class (cat/, dog/, ...) of "
                   "PNG, JPEG, BMP, TIFF, WebP or PBM/PGM/PPM files, decoded with OpenCV and sized "
                   "for the model. Files that are not readable images are skipped and named in a "
                   "warning.",
                   imageFileParams(
                       pathParam("path", "", "The folder; each subfolder's name is a class.")));
        t.readSource = readImageFiles;
        t.loadSource = [](const DataSpec &spec) {
            return data::loadImageFolder(spec.path, spec.imageFiles);
        };
        t.sampleShape = imageFilesShape;
        c.add(std::move(t));
    }
    {
        NodeType t = source("image_list", "Image list (CSV)",
                            "Images listed in a CSV file of path,label lines (paths relative to "
                            "the CSV's folder; labels are class names or numbers).",
                            imageFileParams(pathParam("path", "", "The CSV file.")));
        t.readSource = [](const NodeParams &p, DataSpec &spec) {
            spec.pathsAsListed = true;
            return readImageFiles(p, spec);
        };
        t.loadSource = [](const DataSpec &spec) {
            return data::loadImageList(spec.path, spec.imageFiles);
        };
        t.sampleShape = imageFilesShape;
        c.add(std::move(t));
    }
    {
        NodeType t = source(
            "audio_folder", "Audio folder",
            "Your own recordings (WAV, FLAC, OGG via libsndfile): labelled by class "
            "subfolders or by the file names. Each is mixed to mono, resampled, trimmed of "
            "silence and padded or cropped to a fixed length; samples are waveforms "
            "[1, 1, samples]. Files that cannot be read are skipped and named in a warning.",
            {
                pathParam("path", "", "The folder of recordings."),
                enumParam("labels", {"folder", "pattern"}, "folder",
                          "folder: each subfolder's name is a class; pattern: read the class (and "
                          "speaker) from each file name."),
                stringParam("pattern", "{label}_{speaker}_{index}",
                            "File names (without extension) for labels = pattern: {label} and "
                            "{speaker} are read, other {parts} match anything."),
                intParam("sample_rate", 16000, closed(1000, 192000),
                         "Resampled to this rate (Hz)."),
                floatParam("seconds", 1.0, halfOpen(0.01, 60), "Padded or cropped to this length."),
                floatParam("trim_db", 40, closed(0, 120),
                           "Cut leading and trailing audio this many dB below the loudest part; "
                           "0 = no trimming."),
                enumParam("subset", {"train", "validation", "all"}, "train",
                          "Which part of the seeded split to read; all = every file."),
                floatParam("validation_fraction", 0.2, closed(0, 0.9),
                           "Share of the speakers (or of each class's files) held out."),
                intParam("split_seed", 0, closed(0, kMaxSeed), "Seed of the split."),
                boolParam("split_by_speaker", true,
                          "With {speaker} in the pattern: every recording of a speaker on one "
                          "side, so validation measures voices the model never heard."),
                stringParam("validation_speakers", "",
                            "With split_by_speaker: the speakers whose names this regular "
                            "expression finds (\"^flite-\") are the validation side, instead of "
                            "a random validation_fraction of them; empty = random."),
                limitParam("Read at most N files of the subset (classes interleaved); 0 = all."),
                cacheParam(),
                diskCacheParam(),
            });
        t.readSource = [](const NodeParams &p, DataSpec &spec) -> Status {
            spec.path = p.path("path");
            spec.limit = p.i("limit");
            spec.samples = DataSpec::SampleKind::Audio;
            data::AudioFilesOptions &o = spec.audioFiles;
            o.labels = p.s("labels") == "pattern" ? data::AudioFilesOptions::Labels::Pattern
                                                  : data::AudioFilesOptions::Labels::Folder;
            o.pattern = p.s("pattern");
            o.sampleRate = p.i("sample_rate");
            o.seconds = p.f("seconds");
            o.trimDb = p.f("trim_db");
            o.subset = p.s("subset");
            o.validationFraction = p.f("validation_fraction");
            o.splitSeed = uint64_t(p.i("split_seed"));
            o.splitBySpeaker = p.b("split_by_speaker");
            o.validationSpeakers = p.s("validation_speakers");
            if (!o.validationSpeakers.empty()) {
                try {
                    std::regex check(o.validationSpeakers);
                } catch (const std::regex_error &e) {
                    return Error{"validation_speakers is not a regular expression: " +
                                     o.validationSpeakers + " (" + e.what() + ")",
                                 "validation_speakers",
                                 {},
                                 0};
                }
            }
            o.limit = spec.limit;
            o.cacheBytes = cacheBytes(p);
            o.diskCache = diskCacheMode(p);
            return {};
        };
        t.loadSource = [](const DataSpec &spec) {
            return data::loadAudioFolder(spec.path, spec.audioFiles);
        };
        // A waveform of the set length (data::loadAudioFolder's samples).
        t.sampleShape = [](const DataSpec &spec) -> Result<Shape> {
            return Shape{1, 1, spec.audioFiles.samples()};
        };
        c.add(std::move(t));
    }
}

} // namespace fb::exec::nodes
