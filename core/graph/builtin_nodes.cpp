// The built-in node types. Each is described once here; everything else (validation, inspector,
// palette, `flowbench-cli nodes`) reads this description.
#include "core/graph/node_types.h"

namespace fb::graph {

namespace {

// Allowed range of a numeric parameter. Every number has both ends: a value far outside what
// anyone uses (100000 data workers, a std of 1e-50) is a typo or a damaged file, and stopping it
// here with the range in the message beats an abort deep in the engine. Int parameters stay in
// what an int holds (the engine and the inspector's spin boxes use int), float parameters
// within what a float holds (validation rounds them to float, as the engine uses them).
struct Range {
    double min = 0;
    double max = 0;
    bool minExclusive = false;
    bool maxExclusive = false;
};

Range closed(double lo, double hi)
{
    return {lo, hi, false, false};
} // [lo, hi]
Range halfOpen(double lo, double hi)
{
    return {lo, hi, false, true};
} // [lo, hi)
Range leftOpen(double lo, double hi)
{
    return {lo, hi, true, false};
} // (lo, hi]

// Shared ends, so that the same kind of number has the same range everywhere.
constexpr double kMaxSeed = 2147483647;    // 2^31 - 1: an int, and a spin box's maximum
constexpr double kMaxSamples = 1000000000; // a data set's sample or file count (limit)
constexpr double kMaxImageSide = 4096;     // pixels, as image sources decode them
constexpr double kMaxFeatures = 65536;     // units or channels of one layer
constexpr double kMaxWindow = 64;          // kernel size, stride, padding of a layer
constexpr double kMaxSteps = 1000000000;   // training steps
constexpr double kMaxEpochs = 1000000;     // training epochs
constexpr double kMaxBatch = 65536;        // samples in one batch
constexpr double kMaxPixelValue = 1000000; // a pixel or feature value (mean, fill)

ParamSpec intParam(std::string name, long long def, Range r, std::string help)
{
    return {std::move(name), ParamType::Int, def, r.min,          r.max,
            r.minExclusive,  r.maxExclusive, {},  std::move(help)};
}

ParamSpec floatParam(std::string name, double def, Range r, std::string help)
{
    return {std::move(name), ParamType::Float, def, r.min,          r.max,
            r.minExclusive,  r.maxExclusive,   {},  std::move(help)};
}

ParamSpec boolParam(std::string name, bool def, std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.type = ParamType::Bool;
    p.defaultValue = def;
    p.help = std::move(help);
    return p;
}

ParamSpec pathParam(std::string name, std::string def, std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.type = ParamType::Path;
    p.defaultValue = std::move(def);
    p.help = std::move(help);
    return p;
}

ParamSpec stringParam(std::string name, std::string def, std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.type = ParamType::String;
    p.defaultValue = std::move(def);
    p.help = std::move(help);
    return p;
}

ParamSpec enumParam(std::string name, std::vector<std::string> choices, std::string def,
                    std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.type = ParamType::Enum;
    p.defaultValue = std::move(def);
    p.choices = std::move(choices);
    p.help = std::move(help);
    return p;
}

PortSpec port(std::string name, PortType type, std::string help)
{
    return {std::move(name), type, std::move(help), false};
}

PortSpec tensorIn(std::string help = "Activations from the previous layer.")
{
    return port("in", PortType::Tensor, std::move(help));
}

PortSpec tensorOut(std::string help = "Activations for the next layer.")
{
    return port("out", PortType::Tensor, std::move(help));
}

// A model layer: one tensor in, one tensor out.
NodeTypeSpec layer(std::string type, std::string title, std::string help,
                   std::vector<ParamSpec> params = {})
{
    NodeTypeSpec t;
    t.type = std::move(type);
    t.category = "Model";
    t.title = std::move(title);
    t.help = std::move(help);
    t.inputs = {tensorIn()};
    t.outputs = {tensorOut()};
    t.params = std::move(params);
    return t;
}

// A stage of a data chain: samples in, samples out.
NodeTypeSpec chainStage(std::string category, std::string inputHelp, std::string outputHelp,
                        std::string type, std::string title, std::string help,
                        std::vector<ParamSpec> params)
{
    NodeTypeSpec t;
    t.type = std::move(type);
    t.category = std::move(category);
    t.title = std::move(title);
    t.help = std::move(help);
    t.inputs = {port("samples", PortType::Samples, std::move(inputHelp))};
    t.outputs = {port("samples", PortType::Samples, std::move(outputHelp))};
    t.params = std::move(params);
    return t;
}

// A random augmentation of sample streams: samples in, the same number of samples out.
NodeTypeSpec augmentation(std::string type, std::string title, std::string help,
                          std::vector<ParamSpec> params)
{
    return chainStage("Augment", "Samples to augment.", "The augmented samples.", std::move(type),
                      std::move(title), std::move(help), std::move(params));
}

// A deterministic stage of a data chain (computed once and cached while no random stage precedes
// it).
NodeTypeSpec preprocessing(std::string type, std::string title, std::string help,
                           std::vector<ParamSpec> params)
{
    return chainStage("Preprocess", "Samples to preprocess.", "The preprocessed samples.",
                      std::move(type), std::move(title), std::move(help), std::move(params));
}

// A feature stage of an audio chain: waveforms in, an image of features out.
NodeTypeSpec audioFeature(std::string type, std::string title, std::string help,
                          std::vector<ParamSpec> params)
{
    return chainStage("Audio", "Waveforms from an audio source.",
                      "Features: [1, rows, frames] images.", std::move(type), std::move(title),
                      std::move(help), std::move(params));
}

std::vector<ParamSpec> poolParams()
{
    return {intParam("kernel_size", 2, closed(1, kMaxWindow),
                     "Height and width of the pooling window."),
            intParam("stride", 0, closed(0, kMaxWindow),
                     "Step between windows; 0 = same as kernel_size."),
            intParam("padding", 0, closed(0, kMaxWindow), "Rows/columns added on every side.")};
}

std::vector<ParamSpec> scheduleParams()
{
    return {
        enumParam("schedule", {"constant", "step", "cosine"}, "constant",
                  "Learning-rate schedule after warmup: constant, step decay or cosine decay."),
        intParam("warmup_steps", 0, closed(0, kMaxSteps),
                 "Linear warmup from 0 to lr over this many steps; 0 = no warmup."),
        intParam("step_epochs", 10, closed(1, kMaxEpochs),
                 "For the step schedule: multiply the rate by gamma every step_epochs epochs."),
        floatParam("gamma", 0.1, leftOpen(0, 1), "For the step schedule: the decay factor."),
        floatParam("min_lr", 0.0, closed(0, 10),
                   "For the cosine schedule: the rate it decays to at the last step."),
    };
}

NodeTypeSpec optimizer(std::string type, std::string title, std::string help,
                       std::vector<ParamSpec> params)
{
    NodeTypeSpec t;
    t.type = std::move(type);
    t.category = "Training";
    t.title = std::move(title);
    t.help = std::move(help);
    t.outputs = {port("optimizer", PortType::Optimizer, "Wire to the Train node's optimizer.")};
    t.params = std::move(params);
    for (ParamSpec &p : scheduleParams())
        t.params.push_back(std::move(p));
    return t;
}

std::vector<ParamSpec> adamParams(double weightDecay, const char *decayHelp)
{
    return {floatParam("lr", 0.001, leftOpen(0, 10), "Learning rate (peak rate when scheduled)."),
            floatParam("beta1", 0.9, halfOpen(0, 1), "Decay rate of the gradient mean."),
            floatParam("beta2", 0.999, halfOpen(0, 1), "Decay rate of the squared-gradient mean."),
            floatParam("eps", 1e-8, leftOpen(0, 1),
                       "Added to the denominator for numerical stability."),
            floatParam("weight_decay", weightDecay, closed(0, 1), decayHelp)};
}

NodeTypeRegistry makeBuiltin()
{
    NodeTypeRegistry r;
    const PortSpec samplesOut =
        port("samples", PortType::Samples, "Stream of (image, label) samples.");

    // --- Data
    {
        NodeTypeSpec t;
        t.type = "fashion_mnist";
        t.category = "Data";
        t.title = "Fashion-MNIST";
        t.help = "Fashion-MNIST: 28x28 grey clothing images in 10 classes, pixels scaled to [0,1].";
        t.outputs = {samplesOut};
        t.params = {
            pathParam("path", "/usr/share/datasets/fashion-mnist",
                      "Folder with the gzip IDX files (train-images-idx3-ubyte.gz, ...)."),
            enumParam("split", {"train", "test"}, "train",
                      "Which part to read: 60000 training or 10000 test samples."),
            intParam("limit", 0, closed(0, kMaxSamples),
                     "Read only the first N samples; 0 = all samples."),
        };
        r.add(std::move(t));
    }
    {
        NodeTypeSpec t;
        t.type = "idx_dataset";
        t.category = "Data";
        t.title = "IDX dataset";
        t.help = "Any image/label pair of IDX files (MNIST layout, optionally gzip-compressed).";
        t.outputs = {samplesOut};
        t.params = {
            pathParam("images", "", "IDX file of images (uint8, N x H x W)."),
            pathParam("labels", "", "IDX file of labels (uint8, N), one per image."),
            intParam("limit", 0, closed(0, kMaxSamples),
                     "Read only the first N samples; 0 = all samples."),
        };
        r.add(std::move(t));
    }

    // Folders and lists of image files share how files become samples (data::ImageFilesOptions).
    auto imageFileParams = [](ParamSpec path) {
        return std::vector<ParamSpec>{
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
            intParam("limit", 0, closed(0, kMaxSamples),
                     "Read at most N files of the subset (classes interleaved); 0 = all."),
        };
    };
    {
        NodeTypeSpec t;
        t.type = "image_folder";
        t.category = "Data";
        t.title = "Image folder";
        t.help = "Your own pictures: a folder with one subfolder per class (cat/, dog/, ...) of "
                 "PNG, JPEG or BMP files, decoded with OpenCV and sized for the model. Files that "
                 "are not readable images are skipped and named in a warning.";
        t.outputs = {samplesOut};
        t.params =
            imageFileParams(pathParam("path", "", "The folder; each subfolder's name is a class."));
        r.add(std::move(t));
    }
    {
        NodeTypeSpec t;
        t.type = "image_list";
        t.category = "Data";
        t.title = "Image list (CSV)";
        t.help = "Images listed in a CSV file of path,label lines (paths relative to the CSV's "
                 "folder; labels are class names or numbers).";
        t.outputs = {samplesOut};
        t.params = imageFileParams(pathParam("path", "", "The CSV file."));
        r.add(std::move(t));
    }

    {
        NodeTypeSpec t;
        t.type = "audio_folder";
        t.category = "Data";
        t.title = "Audio folder";
        t.help = "Your own recordings (WAV, FLAC, OGG via libsndfile): labelled by class "
                 "subfolders or by the file names. Each is mixed to mono, resampled, trimmed of "
                 "silence and padded or cropped to a fixed length; samples are waveforms "
                 "[1, 1, samples]. Files that cannot be read are skipped and named in a warning.";
        t.outputs = {samplesOut};
        t.params = {
            pathParam("path", "", "The folder of recordings."),
            enumParam("labels", {"folder", "pattern"}, "folder",
                      "folder: each subfolder's name is a class; pattern: read the class (and "
                      "speaker) from each file name."),
            stringParam("pattern", "{label}_{speaker}_{index}",
                        "File names (without extension) for labels = pattern: {label} and "
                        "{speaker} are read, other {parts} match anything."),
            intParam("sample_rate", 16000, closed(1000, 192000), "Resampled to this rate (Hz)."),
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
                      "With {speaker} in the pattern: every recording of a speaker on one side, so "
                      "validation measures voices the model never heard."),
            intParam("limit", 0, closed(0, kMaxSamples),
                     "Read at most N files of the subset (classes interleaved); 0 = all."),
        };
        r.add(std::move(t));
    }

    // --- Preprocess
    {
        NodeTypeSpec t;
        t.type = "normalize";
        t.category = "Preprocess";
        t.title = "Normalize";
        t.help = "Pixels arrive in [0,1]; outputs (x - mean) / std.";
        t.inputs = {port("samples", PortType::Samples, "Samples to normalize.")};
        t.outputs = {port("samples", PortType::Samples, "The same samples, normalized.")};
        t.params = {
            floatParam("mean", 0.2860, closed(-kMaxPixelValue, kMaxPixelValue),
                       "Subtracted from every pixel (the Fashion-MNIST mean is 0.2860)."),
            floatParam("std", 0.3530, closed(1e-6, kMaxPixelValue),
                       "Then every pixel is divided by it (the Fashion-MNIST std is 0.3530)."),
        };
        r.add(std::move(t));
    }

    r.add(preprocessing(
        "normalize_channels", "Normalize per channel",
        "Outputs (x - mean[c]) / std[c] for each channel c (pixels arrive in [0,1]).",
        {stringParam("mean", "0.485,0.456,0.406",
                     "One value per channel, separated by commas, or one for all (ImageNet's RGB "
                     "means are the default)."),
         stringParam("std", "0.229,0.224,0.225", "One value per channel, or one for all.")}));
    r.add(preprocessing(
        "center_crop", "Centre crop", "Cuts the centre window of each sample.",
        {intParam("height", 0, closed(0, kMaxImageSide), "Window height; 0 = the input's."),
         intParam("width", 0, closed(0, kMaxImageSide), "Window width; 0 = the input's.")}));
    r.add(preprocessing("grayscale", "Greyscale",
                        "RGB to one grey channel (0.299 R + 0.587 G + 0.114 B, as OpenCV).", {}));
    r.add(augmentation(
        "color_jitter", "Brightness/contrast jitter",
        "Scales brightness and contrast by random factors and clamps to [0,1] (before normalize).",
        {floatParam("brightness", 0.2, closed(0, 1),
                    "Brightness factor uniform in [1 - brightness, 1 + brightness]."),
         floatParam("contrast", 0.2, closed(0, 1),
                    "Contrast factor uniform in [1 - contrast, 1 + contrast].")}));
    r.add(augmentation(
        "random_hflip", "Random flip",
        "Mirrors each sample left to right with probability p (OpenCV). Random: "
        "runs every epoch, with draws seeded by the run seed, the node, the epoch "
        "and the sample.",
        {floatParam("p", 0.5, closed(0, 1), "Probability that a sample is mirrored.")}));
    r.add(augmentation(
        "random_affine", "Random affine",
        "Rotates, scales and shifts each sample by random amounts (OpenCV warpAffine, bilinear); "
        "uncovered pixels take the fill value.",
        {floatParam("degrees", 10, closed(0, 180), "Rotation: uniform in [-degrees, degrees]."),
         floatParam("translate", 0.1, halfOpen(0, 1),
                    "Shift: up to this fraction of the width and of the height."),
         floatParam("scale_min", 0.9, closed(0.01, 100), "Smallest zoom factor."),
         floatParam("scale_max", 1.1, closed(0.01, 100),
                    "Largest zoom factor (at least scale_min)."),
         floatParam("fill", 0, closed(-kMaxPixelValue, kMaxPixelValue),
                    "Value of pixels the image no longer covers.")}));
    r.add(augmentation(
        "random_crop", "Random crop",
        "Pads each side with the fill value, then cuts a window at a random place (OpenCV).",
        {intParam("height", 0, closed(0, kMaxImageSide),
                  "Height of the window; 0 = the input's height."),
         intParam("width", 0, closed(0, kMaxImageSide),
                  "Width of the window; 0 = the input's width."),
         intParam("padding", 4, closed(0, 1024), "Pixels added on every side before cropping."),
         floatParam("fill", 0, closed(-kMaxPixelValue, kMaxPixelValue),
                    "Value of the padding pixels.")}));

    // --- Audio features (docs/audio.md)
    const std::vector<ParamSpec> stftParams = {
        intParam("n_fft", 512, closed(16, 65536), "FFT length and Hann window size (samples)."),
        intParam("hop_length", 160, closed(1, 65536),
                 "Samples between frames (160 = 10 ms at 16 kHz)."),
    };
    const std::vector<ParamSpec> melParams = {
        intParam("n_mels", 40, closed(1, 512), "Mel bands (Slaney scale and normalization)."),
        floatParam("f_min", 20, closed(0, 96000), "Lowest frequency of the mel bands (Hz)."),
        floatParam("f_max", 0, closed(0, 96000),
                   "Highest frequency (Hz); 0 = half the sample rate."),
    };
    const ParamSpec topDb = floatParam("top_db", 80, closed(0, 200),
                                       "Floor in dB below the sample's loudest cell; 0 = none.");
    auto join = [](std::vector<std::vector<ParamSpec>> parts) {
        std::vector<ParamSpec> out;
        for (auto &p : parts)
            out.insert(out.end(), p.begin(), p.end());
        return out;
    };
    r.add(audioFeature(
        "stft", "Spectrogram (STFT)",
        "Power spectrogram |STFT|^2 of each waveform: centred frames, Hann window "
        "(librosa's conventions); n_fft / 2 + 1 rows.",
        join({stftParams, {boolParam("to_db", true, "In decibels: 10 log10(power)."), topDb}})));
    r.add(audioFeature("mel_spectrogram", "Mel spectrogram",
                       "Mel spectrogram of each waveform (librosa's melspectrogram: Slaney mel "
                       "scale and normalization), in dB for a log-mel spectrogram.",
                       join({stftParams,
                             melParams,
                             {boolParam("to_db", true, "Log-mel: 10 log10(power)."), topDb}})));
    r.add(audioFeature(
        "mfcc", "MFCC",
        "Mel-frequency cepstral coefficients: the orthonormal DCT-II of the "
        "log-mel spectrogram (librosa's mfcc).",
        join({stftParams,
              melParams,
              {intParam("n_mfcc", 13, closed(1, 512), "Coefficients kept."), topDb}})));
    r.add(augmentation(
        "add_noise", "Add noise",
        "Adds white Gaussian noise to waveforms at a random signal-to-noise ratio.",
        {floatParam("snr_min", 10, closed(-100, 100), "Lowest signal-to-noise ratio (dB)."),
         floatParam("snr_max", 30, closed(-100, 100), "Highest signal-to-noise ratio (dB)."),
         floatParam("p", 0.5, closed(0, 1), "Probability a sample gets noise.")}));
    r.add(augmentation("time_shift", "Time shift",
                       "Shifts waveforms earlier or later by a random amount, filling with "
                       "silence.",
                       {floatParam("max_shift", 0.1, closed(0, 0.5),
                                   "Largest shift, as a fraction of the length.")}));
    r.add(
        augmentation("spec_augment", "SpecAugment",
                     "Masks random frequency bands and time spans of spectrogram features "
                     "(Park et al. 2019), set to the sample's mean.",
                     {intParam("freq_masks", 2, closed(0, 64), "Frequency masks per sample."),
                      intParam("freq_width", 5, closed(0, 4096), "Widest frequency mask (rows)."),
                      intParam("time_masks", 2, closed(0, 64), "Time masks per sample."),
                      intParam("time_width", 10, closed(0, 4096), "Widest time mask (frames).")}));

    // --- Model
    {
        NodeTypeSpec t;
        t.type = "input";
        t.category = "Model";
        t.title = "Input";
        t.help = "The model's input; its shape comes from the data wired to the Train node.";
        t.outputs = {port("out", PortType::Tensor, "A batch of input samples.")};
        r.add(std::move(t));
    }
    r.add(
        layer("linear", "Linear", "Fully connected layer: out = in x W^T + b.",
              {intParam("out_features", 128, closed(1, kMaxFeatures), "Number of output features."),
               boolParam("bias", true, "Learn an additive bias per output feature.")}));
    r.add(layer(
        "conv2d", "Conv 2D", "2-D convolution over NCHW images.",
        {intParam("out_channels", 32, closed(1, kMaxFeatures),
                  "Number of output channels (filters)."),
         intParam("kernel_size", 3, closed(1, kMaxWindow), "Height and width of each filter."),
         intParam("stride", 1, closed(1, kMaxWindow), "Step between filter positions."),
         intParam("padding", 0, closed(0, kMaxWindow), "Zero rows/columns added on every side."),
         boolParam("bias", true, "Learn an additive bias per output channel.")}));
    r.add(
        layer("maxpool2d", "Max pool 2D", "Keeps the largest value in each window.", poolParams()));
    r.add(
        layer("avgpool2d", "Average pool 2D", "Averages the values in each window.", poolParams()));
    r.add(layer("relu", "ReLU", "max(0, x), elementwise."));
    r.add(layer("leaky_relu", "Leaky ReLU", "x for x > 0, negative_slope * x otherwise.",
                {floatParam("negative_slope", 0.01, closed(0, 1), "Slope for negative inputs.")}));
    r.add(layer("sigmoid", "Sigmoid", "1 / (1 + exp(-x)), elementwise."));
    r.add(layer("tanh", "Tanh", "Hyperbolic tangent, elementwise."));
    r.add(layer("gelu", "GELU", "Gaussian error linear unit (tanh approximation), elementwise."));
    r.add(layer("flatten", "Flatten",
                "Folds all axes but the batch into one: N x C x H x W -> "
                "N x (C*H*W)."));
    r.add(layer("dropout", "Dropout",
                "While training, zeroes each value with probability p and scales the rest by "
                "1/(1-p); passes values through unchanged when evaluating.",
                {floatParam("p", 0.5, halfOpen(0, 1), "Probability of zeroing a value.")}));
    r.add(layer(
        "batchnorm2d", "Batch norm 2D",
        "Normalizes each channel over the batch, then scales and shifts it (learned).",
        {floatParam("eps", 1e-5, leftOpen(0, 1), "Added to the variance for numerical stability."),
         floatParam("momentum", 0.1, closed(0, 1),
                    "Weight of the current batch in the running mean and variance.")}));
    {
        NodeTypeSpec t;
        t.type = "add";
        t.category = "Model";
        t.title = "Add";
        t.help = "Elementwise a + b, e.g. a residual connection; shapes must match.";
        t.inputs = {port("a", PortType::Tensor, "First operand."),
                    port("b", PortType::Tensor, "Second operand, same shape as a.")};
        t.outputs = {tensorOut("a + b.")};
        r.add(std::move(t));
    }

    // --- Training
    {
        NodeTypeSpec t;
        t.type = "cross_entropy";
        t.category = "Training";
        t.title = "Cross-entropy loss";
        t.help = "Softmax cross-entropy of the model's outputs against the labels, mean over the "
                 "batch.";
        t.outputs = {port("loss", PortType::Loss, "Wire to the Train node's loss.")};
        r.add(std::move(t));
    }
    {
        NodeTypeSpec t;
        t.type = "mse";
        t.category = "Training";
        t.title = "Mean squared error";
        t.help = "Mean squared error of the model's outputs against one-hot labels.";
        t.outputs = {port("loss", PortType::Loss, "Wire to the Train node's loss.")};
        r.add(std::move(t));
    }
    r.add(optimizer(
        "sgd", "SGD", "Stochastic gradient descent, optionally with momentum.",
        {floatParam("lr", 0.01, leftOpen(0, 10), "Learning rate (peak rate when scheduled)."),
         floatParam("momentum", 0.0, closed(0, 1), "Momentum factor; 0 = plain SGD."),
         boolParam("nesterov", false, "Use Nesterov momentum."),
         floatParam("weight_decay", 0.0, closed(0, 1), "L2 penalty added to the gradient.")}));
    r.add(optimizer("adam", "Adam", "Adam: adaptive per-parameter rates from gradient moments.",
                    adamParams(0.0, "L2 penalty added to the gradient (coupled, as in Adam).")));
    r.add(optimizer("adamw", "AdamW", "Adam with weight decay applied directly to the weights.",
                    adamParams(0.01, "Decoupled weight decay, applied to the weights each step.")));
    {
        NodeTypeSpec t;
        t.type = "train";
        t.category = "Training";
        t.title = "Train";
        t.help = "Trains the model on the data with the loss and optimizer; writes checkpoints.";
        t.inputs = {
            port("data", PortType::Samples, "Training samples; they set the model's input shape."),
            port("model", PortType::Tensor, "Output of the model's last layer."),
            port("loss", PortType::Loss, "Loss to minimize."),
            port("optimizer", PortType::Optimizer, "How the weights are updated."),
        };
        t.outputs = {port("trained", PortType::Model, "The trained model, for Evaluate.")};
        t.params = {
            intParam("epochs", 1, closed(1, kMaxEpochs), "Passes over the training data."),
            intParam("batch_size", 128, closed(1, kMaxBatch), "Samples per training step."),
            intParam("seed", 0, closed(0, kMaxSeed), "Seeds weight init, shuffling and dropout."),
            boolParam("shuffle", true, "Shuffle the samples at the start of every epoch."),
            intParam("checkpoint_every", 1, closed(0, kMaxEpochs),
                     "Write a checkpoint every N epochs; 0 = only at the end."),
            intParam("checkpoint_steps", 0, closed(0, kMaxSteps),
                     "Also write a checkpoint every N steps; 0 = only at epoch ends."),
            intParam("keep_checkpoints", 3, closed(0, 10000),
                     "How many of the newest checkpoints to keep; 0 = keep them all."),
            intParam("data_workers", 0, closed(0, 256),
                     "Threads that prepare batches; 0 = one per two cores (at least 1); at most "
                     "256, as --data-workers."),
            enumParam("device", {"auto", "cpu", "cuda"}, "auto",
                      "Where to train; auto = the GPU when there is one, else the CPU."),
            enumParam("precision", {"float32", "tf32", "bf16"}, "float32",
                      "Arithmetic of convolutions and matrix products on a GPU: float32 gives "
                      "the CPU's results within rounding; tf32 uses the tensor cores (10-bit "
                      "mantissa inputs, float32 sums), faster on Ampere and newer; bf16 rounds "
                      "their inputs to bfloat16 (8-bit mantissa) with float32 sums, weights and "
                      "everything else. The CPU always computes float32."),
            boolParam("deterministic", false,
                      "On a GPU, only convolution algorithms that give the same result on every "
                      "run (some are slower), so a run resumed from a checkpoint ends exactly as "
                      "an uninterrupted one. The CPU is deterministic for a given thread count."),
        };
        r.add(std::move(t));
    }
    {
        NodeTypeSpec t;
        t.type = "evaluate";
        t.category = "Training";
        t.title = "Evaluate";
        t.help = "Runs the trained model over the data: loss, accuracy, confusion matrix.";
        t.inputs = {
            port("data", PortType::Samples, "Samples to evaluate on (e.g. the test split)."),
            port("model", PortType::Model, "The trained model."),
        };
        t.outputs = {port("metrics", PortType::Metrics, "Loss, accuracy and confusion matrix.")};
        t.params = {
            intParam("batch_size", 1000, closed(1, kMaxBatch), "Samples per evaluation step.")};
        r.add(std::move(t));
    }
    return r;
}

} // namespace

const NodeTypeRegistry &NodeTypeRegistry::builtin()
{
    static const NodeTypeRegistry registry = makeBuiltin();
    return registry;
}

} // namespace fb::graph
