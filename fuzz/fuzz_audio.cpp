// Audio decoding (core/data/audio_files through libsndfile and libsamplerate, then the spectrogram
// stage of core/data/audio_transforms): any bytes as a recording (WAV, FLAC, OGG, ... by content),
// at a rate, length and trimming chosen by the first bytes. Promises: exactly rate x seconds
// finite samples, or an error naming the file; their mel spectrogram is finite.

#include "fuzz_common.h"

#include "core/data/audio_files.h"
#include "core/data/audio_transforms.h"

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace fb;
    fbfuzz::Reader in{data, size};
    data::AudioFilesOptions o;
    static const int64_t rates[] = {8000, 16000, 22050, 44100};
    o.sampleRate = rates[in.byte() % 4];
    o.seconds = 0.1 * (1 + in.byte() % 10);
    o.trimDb = (in.byte() & 1) ? 40 : 0;
    const std::string path = fbfuzz::inputFile(in.data, in.size, ".wav");
    auto samples = data::decodeAudioFile(path, o);
    if (!samples.ok()) {
        FB_FUZZ_REQUIRE(samples.error().file == path ||
                            samples.error().str().find(path) != std::string::npos,
                        "the error does not name the file: " + samples.error().str());
        return 0;
    }
    FB_FUZZ_REQUIRE(int64_t(samples->size()) == o.samples(),
                    std::to_string(samples->size()) + " samples for " +
                        std::to_string(o.samples()));
    for (float v : *samples)
        FB_FUZZ_REQUIRE(std::isfinite(v), "a sample is not finite");

    data::SpectrogramOptions so;
    so.sampleRate = o.sampleRate;
    so.nFft = 256;
    so.hop = 128;
    so.nMels = 32;
    so.fMax = double(o.sampleRate) / 2;
    data::Spectrogram spec(so);
    const Shape inShape{1, 1, o.samples()};
    auto outShape = spec.outputShape(inShape);
    if (!outShape.ok()) return 0; // too short for one frame: refused, as the pipeline would be
    std::vector<float> features(size_t(outShape->numel()));
    const uint64_t seed = 0;
    spec.apply(samples->data(), features.data(), 1, inShape, &seed);
    for (float v : features)
        FB_FUZZ_REQUIRE(std::isfinite(v), "a spectrogram value is not finite");
    return 0;
}
