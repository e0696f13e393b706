// The IDX reader (core/data/idx; Fashion-MNIST's format, plain or gzip): any bytes as a file.
// Promises: a value whose bytes are exactly its dimensions times the element size, or an error
// naming the file; never more memory than the data holds (libFuzzer's -rss_limit_mb catches it).

#include "fuzz_common.h"

#include "core/data/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    const std::string path = fbfuzz::inputFile(data, size, ".idx");
    auto a = data::readIdx(path);
    if (!a.ok()) {
        FB_FUZZ_REQUIRE(a.error().file == path, "the error does not name the file: " +
                                                    a.error().str());
        return 0;
    }
    double expected = data::idxElementSize(a->typeCode);
    FB_FUZZ_REQUIRE(expected > 0, "an unknown element type was accepted");
    for (int64_t d : a->dims) {
        FB_FUZZ_REQUIRE(d >= 0, "a negative dimension");
        expected *= double(d);
    }
    FB_FUZZ_REQUIRE(double(a->bytes.size()) == expected,
                    "the bytes do not match the dimensions: " + std::to_string(a->bytes.size()));
    return 0;
}
