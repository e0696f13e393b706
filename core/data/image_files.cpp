#include "core/data/image_files.h"

#include "core/data/file_split.h"

#include "core/base/bytes.h"
#include "core/base/safe_text.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio> // before jpeglib.h, which uses FILE
#include <jpeglib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
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
    const bool netpbm =
        b.size() >= 3 && b[0] == 'P' && std::isspace(b[2]) && b[1] >= '1' && b[1] <= '6';
    return starts({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}) || starts({0xFF, 0xD8, 0xFF}) ||
           starts({'B', 'M'}) || starts({'I', 'I', 0x2A, 0x00}) || starts({'M', 'M', 0x00, 0x2A}) ||
           (starts({'R', 'I', 'F', 'F'}) && starts({'W', 'E', 'B', 'P'}, 8)) || netpbm;
}

// What a picture's header declares: its size, and the most bytes per pixel a decoder keeps
// while reading it (zero width and height when the header cannot be read here; the decoder then
// says why). OpenCV allocates what the header declares, up to 2^30 pixels, before it finds the
// data missing: a 100-byte file made it ask for 2.4 GB (found by fuzz_image in CI). The limit
// cannot be lowered from inside the process (OPENCV_IO_MAX_IMAGE_PIXELS is read when the
// library loads), so the header is read here first, for each format taken.
struct Declared {
    uint64_t width = 0, height = 0;
    // RGBA, 8-bit: what OpenCV's WebP and PNG paths hold. More for JPEG (libjpeg keeps 2-byte
    // coefficients of every component for a progressive picture) and for TIFF with wide samples
    // (OpenCV reads a strip whole, at the file's own depth, before converting).
    uint64_t bytesPerPixel = 4;
};

Declared declaredSize(const std::vector<uint8_t> &b)
{
    const size_t n = b.size();
    auto be = [&](size_t at, int bytes) {
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v = v << 8 | b[at + size_t(i)];
        return v;
    };
    auto le = [&](size_t at, int bytes) {
        uint64_t v = 0;
        for (int i = bytes - 1; i >= 0; --i)
            v = v << 8 | b[at + size_t(i)];
        return v;
    };
    if (n >= 24 && b[0] == 0x89 && b[1] == 'P') return {be(16, 4), be(20, 4)}; // IHDR
    if (n >= 26 && b[0] == 'B' && b[1] == 'M') {
        if (le(14, 4) == 12) return {le(18, 2), le(20, 2)}; // BITMAPCOREHEADER
        const int64_t w = int32_t(uint32_t(le(18, 4)));
        const int64_t h = int32_t(uint32_t(le(22, 4))); // negative: stored top-down
        return {uint64_t(std::abs(w)), uint64_t(std::abs(h))};
    }
    if (n >= 3 && b[0] == 'P') {
        // Netpbm: "P5 <width> <height> ...", read as OpenCV's PxM decoder reads its numbers:
        // whitespace and '#' comments (to the end of the line) skipped, then digits, and the byte
        // after the digits taken with them whatever it is ("7100Z103458" is 7100 by 103458: found
        // by fuzz_image, which this parser read as 7100 by 0). Anything else before a number
        // makes OpenCV refuse the file, and this parser answer 0.
        size_t at = 2;
        auto number = [&]() -> uint64_t {
            auto next = [&](int &c) {
                if (at >= n) return false;
                c = b[at++];
                return true;
            };
            int c = 0;
            if (!next(c)) return 0;
            while (!std::isdigit(c)) {
                if (c == '#') {
                    do {
                        if (!next(c)) return 0;
                    } while (c != '\n' && c != '\r');
                    if (!next(c)) return 0;
                } else if (std::isspace(c)) {
                    while (std::isspace(c))
                        if (!next(c)) return 0;
                } else {
                    return 0;
                }
            }
            uint64_t v = 0;
            do {
                v = std::min<uint64_t>(v * 10 + uint64_t(c - '0'), uint64_t(1) << 40);
            } while (next(c) && std::isdigit(c));
            return v;
        };
        const uint64_t w = number();
        return {w, number()};
    }
    if (n >= 4 && b[0] == 0xFF && b[1] == 0xD8) {
        // JPEG: the first start-of-frame marker. Like libjpeg, bytes between markers are
        // skipped, and markers without a length (SOI, TEM, RSTn) are stepped over.
        size_t at = 2;
        while (at + 10 <= n) {
            if (b[at] != 0xFF) {
                ++at;
                continue;
            }
            const uint8_t m = b[at + 1];
            if (m == 0xFF) { // fill byte
                ++at;
                continue;
            }
            if (m == 0x00 || m == 0x01 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7)) {
                at += 2;
                continue;
            }
            if (m == 0xD9 || m == 0xDA) break; // end of image, or scan data before any frame
            if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)
                return {be(at + 7, 2), be(at + 5, 2), std::max<uint64_t>(4, 2 * b[at + 9])};
            at += 2 + size_t(be(at + 2, 2));
        }
        return {};
    }
    if (n >= 30 && b[0] == 'R') { // WebP: RIFF, size, WEBP, then VP8 / VP8L / VP8X
        if (b[12] == 'V' && b[13] == 'P' && b[14] == '8' && b[15] == ' ')
            return {le(26, 2) & 0x3FFF, le(28, 2) & 0x3FFF};
        if (b[15] == 'L') {
            const uint64_t bits = le(21, 4);
            return {(bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1};
        }
        if (b[15] == 'X') return {le(24, 3) + 1, le(27, 3) + 1};
        return {};
    }
    if (n >= 8 && (b[0] == 'I' || b[0] == 'M')) {
        // TIFF: the first directory's width (256), height (257), bits per sample (258: one
        // value per sample, stored elsewhere when they do not fit in 4 bytes) and samples per
        // pixel (277). libtiff's defaults when absent: 1 bit, 1 sample.
        const bool little = b[0] == 'I';
        auto get = [&](size_t at, int bytes) { return little ? le(at, bytes) : be(at, bytes); };
        const uint64_t ifd = get(4, 4);
        if (ifd + 2 > n) return {};
        const uint64_t entries = get(size_t(ifd), 2);
        uint64_t w = 0, h = 0, bits = 1, samples = 1;
        for (uint64_t e = 0; e < entries && ifd + 2 + 12 * (e + 1) <= n; ++e) {
            const size_t at = size_t(ifd + 2 + 12 * e);
            const uint64_t tag = get(at, 2), type = get(at + 2, 2), count = get(at + 4, 4);
            const uint64_t value = type == 3 ? get(at + 8, 2) : get(at + 8, 4);
            if (tag == 256) w = value;
            if (tag == 257) h = value;
            if (tag == 277) samples = value;
            if (tag == 258 && type == 3) {
                if (count <= 2)
                    bits = value;
                else if (const uint64_t there = get(at + 8, 4); there + 2 <= n)
                    bits = get(size_t(there), 2);
            }
        }
        const uint64_t bytesPerSample = std::clamp<uint64_t>((bits + 7) / 8, 1, 8);
        return {w, h, std::max<uint64_t>(4, bytesPerSample * std::max<uint64_t>(samples, 1))};
    }
    return {};
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

// The size a picture of cols x rows is resized to in the height x width sample: Pad keeps the
// aspect ratio (fit then centres it on the canvas); Stretch fills the canvas.
struct Placement {
    int tw = 0, th = 0;
};

Placement placement(int cols, int rows, const ImageFilesOptions &o)
{
    const int w = int(o.width), h = int(o.height);
    if (o.resize == ImageFilesOptions::Resize::Stretch) return {w, h};
    const double scale = std::min(double(w) / cols, double(h) / rows);
    return {std::clamp(int(std::lround(cols * scale)), 1, w),
            std::clamp(int(std::lround(rows * scale)), 1, h)};
}

// To height x width at `p`. Shrinking averages the pixels it merges (INTER_AREA), so small
// models do not see aliasing; enlarging interpolates bilinearly.
cv::Mat fit(const cv::Mat &img, Placement p, const ImageFilesOptions &o)
{
    const int w = int(o.width), h = int(o.height);
    cv::Mat sized = img;
    if (img.cols != p.tw || img.rows != p.th) {
        const bool shrink = p.tw < img.cols || p.th < img.rows;
        cv::resize(img, sized, cv::Size(p.tw, p.th), 0, 0,
                   shrink ? cv::INTER_AREA : cv::INTER_LINEAR);
    }
    if (p.tw == w && p.th == h) return sized;
    cv::Mat canvas = cv::Mat::zeros(h, w, img.type());
    sized.copyTo(canvas(cv::Rect((w - p.tw) / 2, (h - p.th) / 2, p.tw, p.th)));
    return canvas;
}

// The EXIF orientation (tag 0x0112 of the first IFD) in a JPEG's saved APP1 markers; 1 (as
// stored) when there is none.
int exifOrientation(j_decompress_ptr c)
{
    for (jpeg_saved_marker_ptr m = c->marker_list; m; m = m->next) {
        const uint8_t *d = m->data;
        const size_t n = m->data_length;
        if (m->marker != JPEG_APP0 + 1 || n < 14 || std::memcmp(d, "Exif\0\0", 6) != 0) continue;
        const uint8_t *t = d + 6; // the TIFF header
        const size_t tn = n - 6;
        const bool big = t[0] == 'M';
        auto u16 = [&](size_t at) {
            return at + 2 > tn ? 0u
                   : big       ? unsigned(t[at]) << 8 | t[at + 1]
                               : unsigned(t[at + 1]) << 8 | t[at];
        };
        auto u32 = [&](size_t at) {
            return at + 4 > tn ? 0u
                   : big       ? (u16(at) << 16 | u16(at + 2))
                               : (u16(at + 2) << 16 | u16(at));
        };
        const size_t ifd = u32(4);
        const unsigned entries = u16(ifd);
        for (unsigned e = 0; e < entries; ++e) {
            const size_t at = ifd + 2 + size_t(e) * 12;
            if (at + 12 > tn) break;
            if (u16(at) == 0x0112) return int(u16(at + 8));
        }
    }
    return 1;
}

struct JpegErrors {
    jpeg_error_mgr mgr;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

// A JPEG decoded by libjpeg-turbo directly rather than through cv::imdecode, for two things
// OpenCV 4.6's decoder does not offer: (1) decoding at M/8 of the size in the DCT itself, the
// smallest that still holds the sample's size, so that fewer pixels are made and then averaged
// down; (2) RGB as it comes out of libjpeg, where OpenCV asks for RGB and swaps every pixel to
// BGR one byte at a time (18% of the time spent loading a folder of JPEGs, measured with perf),
// only for us to swap it back. Writing our own only here: everything but baseline and
// progressive 8-bit JPEGs without an EXIF rotation goes to OpenCV as before.
enum class JpegPath { Decoded, UseOpenCv, Damaged };

JpegPath decodeJpeg(const std::vector<uint8_t> &bytes, const ImageFilesOptions &o, cv::Mat &img,
                    Placement &place, std::string &why)
{
    jpeg_decompress_struct c;
    JpegErrors errors;
    c.err = jpeg_std_error(&errors.mgr);
    errors.mgr.error_exit = [](j_common_ptr cc) {
        auto *e = reinterpret_cast<JpegErrors *>(cc->err);
        (*cc->err->format_message)(cc, e->message);
        std::longjmp(e->jump, 1);
    };
    // Warnings (a corrupt byte the decoder skips over) are not printed on stderr, where they
    // would interleave with the progress; truncation is refused before decoding.
    errors.mgr.output_message = [](j_common_ptr) {};
    jpeg_create_decompress(&c);
    // Only C objects live between here and the jump: nothing is skipped that needs destroying.
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&c);
        why = errors.message;
        return JpegPath::Damaged;
    }
    jpeg_mem_src(&c, bytes.data(), static_cast<unsigned long>(bytes.size()));
    jpeg_save_markers(&c, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&c, TRUE);
    if (c.data_precision != 8 || c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK ||
        exifOrientation(&c) != 1) {
        jpeg_destroy_decompress(&c);
        return JpegPath::UseOpenCv;
    }
    place = placement(int(c.image_width), int(c.image_height), o);
    c.out_color_space = o.colour ? JCS_RGB : JCS_GRAYSCALE;
    // 1/8, 1/4 or 1/2 of the size where that still holds the sample, else the whole size: the
    // other eighths (7/8 and so on) have no SIMD in libjpeg-turbo, and decoding 160 pixels a
    // side at 7/8 for 128 took 15% more CPU time than decoding all of them (one pair of runs of
    // `flowbench-cli cache` over 20,000 such files).
    c.scale_denom = 8;
    for (c.scale_num = 1; c.scale_num < 8; c.scale_num *= 2) {
        jpeg_calc_output_dimensions(&c);
        if (int(c.output_width) >= place.tw && int(c.output_height) >= place.th) break;
    }
    jpeg_start_decompress(&c);
    img.create(int(c.output_height), int(c.output_width), o.colour ? CV_8UC3 : CV_8UC1);
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = img.ptr<uint8_t>(int(c.output_scanline));
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return JpegPath::Decoded;
}

Result<std::vector<uint8_t>> readFile(const std::string &path)
{
    std::error_code ec;
    // A symbolic-link loop or a dangling link says why (ELOOP, ENOENT) rather than "no such file".
    if (!fs::is_regular_file(path, ec))
        return fileError(path, ec && ec != std::errc::no_such_file_or_directory
                                   ? "cannot be read: " + ec.message()
                                   : "no such file");
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return fileError(path, "cannot be opened");
    // One read of the whole file (an iterator over the stream went byte by byte). A file that
    // grows meanwhile is read to its size at the open; one that shrinks reads short, as before.
    std::vector<uint8_t> bytes(size_t(std::max<std::streamoff>(in.tellg(), 0)));
    in.seekg(0);
    in.read(reinterpret_cast<char *>(bytes.data()), std::streamsize(bytes.size()));
    if (in.bad()) return fileError(path, "could not be read");
    bytes.resize(size_t(in.gcount()));
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
    return selectFiles(
        std::move(files), int32_t(byClass.size()),
        SplitOptions{o.subset, o.validationFraction, o.splitSeed, false, o.limit, {}});
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
    ds.decodePixels = [o](const std::string &path) { return decodeImageFile(path, o); };
    // Everything besides the file that decides its sample. Raise the revision whenever
    // decodeImageFile makes other pixels from the same file, so that no cache made before is
    // taken for one made now; OpenCV's version is there for the same reason.
    constexpr int kDecodeRevision = 2; // 2: JPEGs scaled in the DCT, decoded as RGB
    DiskCacheOptions disk;
    disk.mode = o.diskCache;
    disk.dir = o.diskCacheDir;
    disk.settings = "image decode " + std::to_string(kDecodeRevision) + ", OpenCV " + CV_VERSION +
                    ", " + std::to_string(ds.channels) + "x" + std::to_string(ds.height) + "x" +
                    std::to_string(ds.width) +
                    (o.resize == ImageFilesOptions::Resize::Pad ? " pad" : " stretch");
    decodeFiles(files, size_t(ds.channels) * size_t(ds.height) * size_t(ds.width), ds.decodePixels,
                ds.pixels, ds, o.cacheBytes, disk);
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
    std::call_once(once,
                   [] { cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT); });
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
    // 2^26 pixels (8192 x 8192, more than a 50-megapixel camera's) is plenty for a picture that
    // is then scaled to the model's input; 1 GiB is what decoding one may take.
    constexpr uint64_t kMaxPixels = uint64_t(1) << 26, kMaxBytes = uint64_t(1) << 30;
    const Declared d = declaredSize(bytes);
    const std::string size = std::to_string(d.width) + " x " + std::to_string(d.height);
    if (d.width > kMaxPixels || d.height > kMaxPixels || d.width * d.height > kMaxPixels)
        return fileError(name,
                         "declares " + size + " pixels; at most 67,108,864 (8192 x 8192) are read");
    if (d.width * d.height * d.bytesPerPixel > kMaxBytes)
        return fileError(name, "declares " + size + " pixels of " +
                                   std::to_string(d.bytesPerPixel) + " bytes each (" +
                                   humanBytes(double(d.width * d.height * d.bytesPerPixel)) +
                                   " to decode); at most 1 GiB is read");
    // OpenCV tries its decoders in turn, and two look past the start of the file: GDCM's
    // (DICOM: "DICM" at byte 128) and GDAL's ("DTED" at byte 140). A file that the decoder of
    // its own format turns down (a WebP whose header does not parse), or one that reaches them
    // first, would be decoded by them, and neither is hardened against damaged input: GDCM
    // fails an assertion and aborts, or asks for 3.5 GB (found by fuzz_image). Flowbench reads
    // neither format, and a real picture carries these bytes there by chance one time in 2^32.
    auto at = [&](size_t offset, const char *magic) {
        return bytes.size() >= offset + 4 && std::memcmp(bytes.data() + offset, magic, 4) == 0;
    };
    if (at(128, "DICM") || at(140, "DTED"))
        return fileError(name, "damaged, or a DICOM or DTED file in disguise: it carries their "
                               "signature, and Flowbench reads neither (convert it to PNG)");
    cv::Mat img;
    Placement place;
    bool rgb = false; // libjpeg's own order; OpenCV decodes colour as BGR
    const bool jpeg = bytes.size() > 3 && bytes[0] == 0xFF && bytes[1] == 0xD8;
    std::string why;
    switch (jpeg ? decodeJpeg(bytes, o, img, place, why) : JpegPath::UseOpenCv) {
    case JpegPath::Decoded:
        rgb = true;
        break;
    case JpegPath::Damaged:
        return fileError(name, "damaged: " + why);
    case JpegPath::UseOpenCv:
        try {
            const cv::Mat raw(1, int(bytes.size()), CV_8U, const_cast<uint8_t *>(bytes.data()));
            img = cv::imdecode(raw, o.colour ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
        } catch (const cv::Exception &) {
            img.release();
        }
        if (img.empty()) return fileError(name, "damaged: OpenCV cannot decode it");
        place = placement(img.cols, img.rows, o);
        break;
    }
    // Decoding without IMREAD_ANYDEPTH gives 8-bit pixels; a decoder that does otherwise would be
    // misread below, so it is refused rather than trusted.
    if (img.depth() != CV_8U)
        return fileError(name, "decodes to pixels that are not 8-bit; convert it to an 8-bit PNG");
    const cv::Mat sized = fit(img, place, o);
    std::vector<uint8_t> out(size_t(sized.channels()) * size_t(o.height) * size_t(o.width));
    const size_t plane = size_t(o.height) * size_t(o.width);
    if (sized.channels() == 1) {
        for (int y = 0; y < sized.rows; ++y)
            std::memcpy(out.data() + size_t(y) * size_t(o.width), sized.ptr<uint8_t>(y),
                        size_t(o.width));
    } else {
        // Samples are planar RGB.
        cv::Mat planes[3];
        for (int c = 0; c < 3; ++c)
            planes[c] = cv::Mat(sized.rows, sized.cols, CV_8U, out.data() + size_t(c) * plane);
        if (!rgb) std::swap(planes[0], planes[2]);
        cv::split(sized, planes);
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
    ds.files.push_back(csvPath);
    if (ds.count == 0)
        return fileError(csvPath, "none of its " + std::to_string(files.size()) +
                                      " files is a readable image (the first, " +
                                      safeText(ds.skipped.front().path) + ": " +
                                      ds.skipped.front().reason + ")");
    return ds;
}

} // namespace fb::data
