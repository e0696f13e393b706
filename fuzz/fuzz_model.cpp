// Model files (core/io/safetensors, core/exec/inference): any bytes as a .safetensors file, as
// `flowbench-cli infer MODEL FILE` and the window's Try panel open them. Promises: readSafetensors
// answers with tensors that exactly cover their shapes, or an error naming the file; a model that
// opens (its metadata: pipeline, preprocessing, class names) predicts a picture or a recording with
// probabilities in [0, 1] that sum to at most 1, or says why it cannot.

#include "fuzz_common.h"

#include "core/exec/inference.h"
#include "core/io/safetensors.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace {

// A probe picture (8x8 grey PGM) and recording (0.5 s of a 440 Hz tone, 16 kHz 16-bit WAV) to
// predict, written once.
std::string probe(bool audio)
{
    std::vector<uint8_t> bytes;
    if (!audio) {
        const std::string header = "P5 8 8 255\n";
        bytes.assign(header.begin(), header.end());
        for (int i = 0; i < 64; ++i)
            bytes.push_back(uint8_t(i * 4));
    } else {
        const uint32_t n = 8000, rate = 16000, dataBytes = n * 2;
        auto u32 = [&](uint32_t v) {
            for (int i = 0; i < 4; ++i)
                bytes.push_back(uint8_t(v >> (8 * i)));
        };
        auto u16 = [&](uint16_t v) {
            bytes.push_back(uint8_t(v));
            bytes.push_back(uint8_t(v >> 8));
        };
        auto tag = [&](const char *t) { bytes.insert(bytes.end(), t, t + 4); };
        tag("RIFF"), u32(36 + dataBytes), tag("WAVE"), tag("fmt "), u32(16), u16(1), u16(1);
        u32(rate), u32(rate * 2), u16(2), u16(16), tag("data"), u32(dataBytes);
        for (uint32_t i = 0; i < n; ++i)
            u16(uint16_t(int16_t(8000 * std::sin(2 * M_PI * 440 * i / rate))));
    }
    static std::string paths[2];
    std::string &p = paths[audio];
    if (p.empty()) {
        const std::string tmp = fbfuzz::inputFile(bytes.data(), bytes.size(), audio ? ".wav" : ".pgm");
        p = tmp + ".probe";
        std::rename(tmp.c_str(), p.c_str());
    }
    return p;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    const std::string imageProbe = probe(false), audioProbe = probe(true);
    const std::string path = fbfuzz::inputFile(data, size, ".safetensors");
    auto file = io::readSafetensors(path);
    if (!file.ok()) {
        FB_FUZZ_REQUIRE(file.error().file == path, "the error does not name the file");
        return 0;
    }
    for (const auto &[name, t] : file->tensors)
        FB_FUZZ_REQUIRE(t.bytes() == size_t(t.numel()) * dtypeSize(t.dtype()),
                        "tensor " + name + " does not cover its shape");

    auto predictor = exec::Predictor::open(path);
    if (!predictor.ok()) {
        FB_FUZZ_REQUIRE(!predictor.error().message.empty(), "an error without a message");
        return 0;
    }
    exec::Predictor &p = *predictor.value();
    // Recordings as infer hears them by default: three ways, the mean of the hearings.
    if (p.audio())
        FB_FUZZ_REQUIRE(p.setWarps({0.08}).ok(), "a model of recordings refuses --warp 0.08");
    auto results = p.predictFiles({p.audio() ? audioProbe : imageProbe}, 3);
    FB_FUZZ_REQUIRE(results.size() == 1, "not one answer per file");
    if (!results[0].ok()) return 0;
    double sum = 0;
    for (const auto &c : results[0]->top) {
        FB_FUZZ_REQUIRE(std::isfinite(c.probability) && c.probability >= 0 &&
                            c.probability <= 1.0001f,
                        "a probability outside [0, 1]: " + std::to_string(c.probability));
        sum += c.probability;
    }
    FB_FUZZ_REQUIRE(sum <= 1.001, "probabilities sum to " + std::to_string(sum));
    return 0;
}
