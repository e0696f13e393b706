// Image decoding (core/data/image_files, through OpenCV): any bytes as a dropped file or a file
// of an image folder, at sizes, colour and resize modes chosen by the first bytes. Promises: a
// sample of exactly channels x height x width, or an error naming the file.

#include "fuzz_common.h"

#include "core/data/image_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    fbfuzz::Reader in{data, size};
    data::ImageFilesOptions o;
    o.height = 1 + in.byte() % 64;
    o.width = 1 + in.byte() % 64;
    const uint8_t mode = in.byte();
    o.colour = mode & 1;
    o.resize = (mode & 2) ? data::ImageFilesOptions::Resize::Pad
                          : data::ImageFilesOptions::Resize::Stretch;
    const std::vector<uint8_t> bytes(in.data, in.data + in.size);
    auto sample = data::decodeImageBytes(bytes, "dropped.png", o);
    if (!sample.ok()) {
        FB_FUZZ_REQUIRE(sample.error().str().find("dropped.png") != std::string::npos,
                        "the error does not name the file: " + sample.error().str());
        return 0;
    }
    FB_FUZZ_REQUIRE(int64_t(sample->size()) == (o.colour ? 3 : 1) * o.height * o.width,
                    "the sample has " + std::to_string(sample->size()) + " values");
    return 0;
}
