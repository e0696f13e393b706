#include "core/data/image_files.h"

#include "core/data/file_split.h"

#include "core/base/safe_text.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>

namespace fb::data {

namespace fs = std::filesystem;

namespace {

// Whether `tail` (the file's last bytes) holds `marker`.
bool endsWith(const std::vector<uint8_t> &bytes, const std::vector<uint8_t> &marker, size_t within)
{
    const size_t from = bytes.size() > within ? bytes.size() - within : 0;
    return std::search(bytes.begin() + std::ptrdiff_t(from), bytes.end(), marker.begin(),
                       marker.end()) != bytes.end();
}

// Why a file that OpenCV might still decode is cut short, or "" when it looks whole. libjpeg
// decodes a truncated JPEG with the missing rows grey and only a warning on stderr, so a damaged
// photo would silently train as a half-grey one: its end-of-image marker (FF D9) must be there.
// The formats Flowbench reads, by their first bytes: PNG, JPEG, BMP, TIFF, WebP and the Netpbm
// family (PBM, PGM, PPM). Debian's OpenCV would try more (DICOM through GDCM, JPEG 2000
// through OpenJPEG, OpenEXR, Radiance HDR, Sun raster, GDAL's), but those libraries are not
// hardened against damaged files: a 135-byte file with "DICM" at byte 128 made GDCM fail an
// assertion and abort the whole process (found by fuzz_image). Nobody trains a picture
// classifier on them; convert them to PNG.
bool supportedFormat(const std::vector<uint8_t> &b)
{
    auto starts = [&](std::initializer_list<uint8_t> m, size_t at = 0) {
        return b.size() >= at + m.size() && std::equal(m.begin(), m.end(), b.begin() + long(at));
    };
    // Exactly the signatures OpenCV's own decoders for these formats check: a file that none of
    // them claims goes on to the others (GDAL's, by way of a temporary file: 5 s for a 200-byte
    // file that began like a PNG, found by fuzz_image).
    // Netpbm: P1..P6. Not PFM (PF, Pf): OpenCV decodes it to floats, which the 8-bit path
    // below would misread (found by fuzz_image: 87 values for a 29 x 29 sample).
    const bool netpbm = b.size() >= 3 && b[0] == 'P' && std::isspace(b[2]) && b[1] >= '1' &&
                        b[1] <= '6';
    return starts({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}) || starts({0xFF, 0xD8, 0xFF}) ||
           starts({'B', 'M'}) || starts({'I', 'I', 0x2A, 0x00}) || starts({'M', 'M', 0x00, 0x2A}) ||
           (starts({'R', 'I', 'F', 'F'}) && starts({'W', 'E', 'B', 'P'}, 8)) || netpbm;
}

std::string truncation(const std::vector<uint8_t> &bytes)
{
    if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF &&
        !endsWith(bytes, {0xFF, 0xD9}, 64))
        return "truncated JPEG (no end-of-image marker)";
    static const std::vector<uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (bytes.size() >= png.size() && std::equal(png.begin(), png.end(), bytes.begin())) {
        if (!endsWith(bytes, {'I', 'E', 'N', 'D'}, 64)) return "truncated PNG (no IEND chunk)";
        // Every chunk must fit in the file. libpng allocates and clears what a chunk's length
        // claims before it finds the bytes missing (found by fuzz_image: a 201-byte PNG whose
        // text chunk claimed 1.7 GB took 6 s and 1.7 GB of memory to be refused). A walk over
        // the chunk headers (4-byte big-endian length, 4-byte type, data, 4-byte CRC) is all
        // it takes; libpng itself checks the rest.
        size_t at = png.size();
        while (at + 12 <= bytes.size()) {
            const uint32_t length = uint32_t(bytes[at]) << 24 | uint32_t(bytes[at + 1]) << 16 |
                                    uint32_t(bytes[at + 2]) << 8 | uint32_t(bytes[at + 3]);
            const std::string type(reinterpret_cast<const char *>(&bytes[at + 4]), 4);
            if (length > bytes.size() - at - 12)
                return "damaged PNG: a chunk claims " + std::to_string(length) +
                       " bytes where the file has " + std::to_string(bytes.size() - at - 12) +
                       " left";
            if (type == "IEND") break;
            at += 12 + size_t(length);
        }
    }
    return {};
}

// To height x width, by the options' resize rule. Shrinking averages the pixels it merges
// (INTER_AREA), so small models do not see aliasing; enlarging interpolates bilinearly.
cv::Mat fit(const cv::Mat &img, const ImageFilesOptions &o)
{
    const int w = int(o.width), h = int(o.height);
    auto resized = [](const cv::Mat &src, int tw, int th) {
        if (src.cols == tw && src.rows == th) return src;
        cv::Mat out;
        const bool shrink = tw < src.cols || th < src.rows;
        cv::resize(src, out, cv::Size(tw, th), 0, 0, shrink ? cv::INTER_AREA : cv::INTER_LINEAR);
        return out;
    };
    if (o.resize == ImageFilesOptions::Resize::Stretch) return resized(img, w, h);
    const double scale = std::min(double(w) / img.cols, double(h) / img.rows);
    const int tw = std::clamp(int(std::lround(img.cols * scale)), 1, w);
    const int th = std::clamp(int(std::lround(img.rows * scale)), 1, h);
    cv::Mat canvas = cv::Mat::zeros(h, w, img.type());
    resized(img, tw, th).copyTo(canvas(cv::Rect((w - tw) / 2, (h - th) / 2, tw, th)));
    return canvas;
}

Result<std::vector<uint8_t>> readFile(const std::string &path)
{
    std::error_code ec;
    // A symbolic-link loop or a dangling link says why (ELOOP, ENOENT) rather than "no such file".
    if (!fs::is_regular_file(path, ec))
        return fileError(path, ec && ec != std::errc::no_such_file_or_directory
                                   ? "cannot be read: " + ec.message()
                                   : "no such file");
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path, "cannot be opened");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    if (in.bad()) return fileError(path, "could not be read");
    return bytes;
}

// The options' split of files grouped by class.
std::vector<LabelledFile> selectByClass(const std::vector<std::vector<std::string>> &byClass,
                                        const ImageFilesOptions &o)
{
    std::vector<LabelledFile> files;
    for (size_t c = 0; c < byClass.size(); ++c)
        for (const std::string &path : byClass[c])
            files.push_back({path, int32_t(c), {}});
    return selectFiles(std::move(files), int32_t(byClass.size()),
                       SplitOptions{o.subset, o.validationFraction, o.splitSeed, false, o.limit});
}

// Decodes the files on all cores (decoding dominates loading a folder of photos) and keeps the
// readable ones, in order.
ImageDataset decodeAll(const std::vector<LabelledFile> &files, const ImageFilesOptions &o,
                       std::string name, std::vector<std::string> classNames)
{
    ImageDataset ds;
    ds.name = std::move(name);
    ds.channels = o.colour ? 3 : 1;
    ds.height = o.height;
    ds.width = o.width;
    ds.classes = int32_t(classNames.size());
    ds.classNames = std::move(classNames);
    decodeFiles(
        files, [&o](const std::string &path) { return decodeImageFile(path, o); }, ds.pixels, ds);
    return ds;
}

Status checkOptions(const ImageFilesOptions &o)
{
    if (o.height < 1 || o.width < 1 || o.height > 4096 || o.width > 4096)
        return makeError("the image size must be 1 to 4096 pixels a side, not " +
                         std::to_string(o.height) + " x " + std::to_string(o.width));
    if (o.subset != "all" && o.subset != "train" && o.subset != "validation")
        return makeError("subset must be all, train or validation, not '" + o.subset + "'");
    if (!(o.validationFraction >= 0 && o.validationFraction < 1))
        return makeError("the validation fraction must be in [0, 1)");
    return {};
}

// One CSV field at `pos` (RFC 4180: quoted fields may hold commas and doubled quotes). Two
// columns need no CSV library; none is among our dependencies.
std::string csvField(const std::string &line, size_t &pos)
{
    std::string out;
    if (pos < line.size() && line[pos] == '"') {
        for (++pos; pos < line.size(); ++pos) {
            if (line[pos] == '"') {
                if (pos + 1 < line.size() && line[pos + 1] == '"') {
                    out += '"';
                    ++pos;
                } else {
                    ++pos;
                    break;
                }
            } else {
                out += line[pos];
            }
        }
        while (pos < line.size() && line[pos] != ',')
            ++pos;
    } else {
        const size_t end = std::min(line.find(',', pos), line.size());
        out = line.substr(pos, end - pos);
        pos = end;
    }
    if (pos < line.size()) ++pos; // the comma
    // Spaces around an unquoted field are not part of it.
    const size_t a = out.find_first_not_of(" \t"), b = out.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : out.substr(a, b - a + 1);
}

// Once, before the first decode: OpenCV's codecs print their own complaints about a damaged file
// on stderr ("[ERROR:0@0.5] ... OpenJPEG2000: Stream too short", seen by fuzz_image), where they
// would interleave with the progress and the window's log. Our error names the file and says why.
void configureOpenCv()
{
    static std::once_flag once;
    std::call_once(once, [] {
        cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    });
}

} // namespace

Result<std::vector<uint8_t>> decodeImageBytes(const std::vector<uint8_t> &bytes,
                                              const std::string &name, const ImageFilesOptions &o)
{
    configureOpenCv();
    if (bytes.empty()) return fileError(name, "empty file");
    if (!supportedFormat(bytes))
        return fileError(name, "not an image Flowbench reads (PNG, JPEG, BMP, TIFF, WebP, "
                               "PBM/PGM/PPM), or damaged");
    if (std::string why = truncation(bytes); !why.empty()) return fileError(name, why);
    cv::Mat img;
    try {
        const cv::Mat raw(1, int(bytes.size()), CV_8U, const_cast<uint8_t *>(bytes.data()));
        img = cv::imdecode(raw, o.colour ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
    } catch (const cv::Exception &) {
        img.release();
    }
    if (img.empty()) return fileError(name, "damaged: OpenCV cannot decode it");
    // Decoding without IMREAD_ANYDEPTH gives 8-bit pixels; a decoder that does otherwise would be
    // misread below, so it is refused rather than trusted.
    if (img.depth() != CV_8U)
        return fileError(name, "decodes to pixels that are not 8-bit; convert it to an 8-bit PNG");
    cv::Mat sized = fit(img, o);
    std::vector<uint8_t> out(size_t(sized.channels()) * size_t(o.height) * size_t(o.width));
    const size_t plane = size_t(o.height) * size_t(o.width);
    if (sized.channels() == 1) {
        for (int y = 0; y < sized.rows; ++y)
            std::memcpy(out.data() + size_t(y) * size_t(o.width), sized.ptr<uint8_t>(y),
                        size_t(o.width));
    } else {
        // OpenCV decodes colour as BGR; samples are planar RGB.
        std::vector<cv::Mat> bgr;
        cv::split(sized, bgr);
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < sized.rows; ++y)
                std::memcpy(out.data() + size_t(c) * plane + size_t(y) * size_t(o.width),
                            bgr[size_t(2 - c)].ptr<uint8_t>(y), size_t(o.width));
    }
    return out;
}

Result<std::vector<uint8_t>> decodeImageFile(const std::string &path, const ImageFilesOptions &o)
{
    auto bytes = readFile(path);
    if (!bytes.ok()) return bytes.error();
    return decodeImageBytes(bytes.value(), path, o);
}

Result<ImageDataset> loadImageFolder(const std::string &dir, const ImageFilesOptions &o)
{
    FB_TRY(checkOptions(o));
    auto folders = subfolders(dir);
    if (!folders.ok()) return folders.error();
    const std::vector<std::string> &classes = folders.value();
    if (classes.empty())
        return fileError(dir, "has no class folders: put each class's images in a folder of its "
                              "own, e.g. " +
                                  (fs::path(dir) / "cat" / "1.png").string());
    std::vector<std::vector<std::string>> byClass;
    for (const std::string &c : classes) {
        auto files = filesUnder((fs::path(dir) / c).string());
        if (!files.ok()) return files.error();
        byClass.push_back(std::move(files).value());
    }
    const auto files = selectByClass(byClass, o);
    std::string name = fs::path(dir).filename().string();
    if (name.empty()) name = fs::path(dir).parent_path().filename().string();
    if (files.empty())
        return fileError(dir, "has no files in its class folders" +
                                  std::string(o.subset == "all" ? "" : " for subset " + o.subset));
    ImageDataset ds = decodeAll(files, o, name, classes);
    if (ds.count == 0)
        return fileError(dir, "none of its " + std::to_string(files.size()) +
                                  " files is a readable image (the first, " +
                                  safeText(ds.skipped.front().path) + ": " +
                                  ds.skipped.front().reason + ")");
    return ds;
}

Result<ImageDataset> loadImageList(const std::string &csvPath, const ImageFilesOptions &o)
{
    FB_TRY(checkOptions(o));
    std::error_code ec;
    if (!fs::is_regular_file(csvPath, ec)) return fileError(csvPath, "no such file");
    std::ifstream in(csvPath);
    if (!in) return fileError(csvPath, "cannot be opened");
    const fs::path base = fs::path(csvPath).parent_path();
    std::vector<std::pair<std::string, std::string>> rows; // (path, label)
    std::string line;
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        size_t pos = 0;
        std::string path = csvField(line, pos);
        std::string label = csvField(line, pos);
        if (rows.empty() && lineNo == 1 && path == "path" && label == "label") continue;
        if (path.empty() || label.empty() || pos < line.size())
            return fileError(csvPath, "expected two fields, path,label, not '" + line + "'",
                             lineNo);
        if (fs::path(path).is_relative()) path = (base / path).string();
        rows.emplace_back(std::move(path), std::move(label));
    }
    if (rows.empty()) return fileError(csvPath, "lists no images");
    std::vector<std::string> labels;
    for (const auto &r : rows)
        labels.push_back(r.second);
    const LabelClasses classes = classesOf(labels);
    std::vector<std::vector<std::string>> byClass(classes.names.size());
    for (const auto &r : rows)
        byClass[size_t(classes.index.at(r.second))].push_back(r.first);
    const auto files = selectByClass(byClass, o);
    if (files.empty()) return fileError(csvPath, "lists no files for subset " + o.subset);
    ImageDataset ds = decodeAll(files, o, fs::path(csvPath).stem().string(), classes.names);
    if (ds.count == 0)
        return fileError(csvPath, "none of its " + std::to_string(files.size()) +
                                      " files is a readable image (the first, " +
                                      safeText(ds.skipped.front().path) + ": " +
                                      ds.skipped.front().reason + ")");
    return ds;
}

} // namespace fb::data
