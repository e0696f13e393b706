#include "core/exec/listen_stream.h"

#include "core/data/audio_files.h"
#include "core/exec/job.h"
#include "core/exec/listen_options.h"

#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>

namespace fb::exec {

Result<HeldOutStream> heldOutStream(const std::string &pipelineText, const HeldOutStreamOptions &o)
{
    if (!(o.gapMinMs >= 0 && o.gapMaxMs >= o.gapMinMs && o.gapMaxMs <= 60000))
        return makeError("the gaps must be from 0 to 60 s, the shortest first");
    auto loaded = loadEvaluatedData(pipelineText, false);
    if (!loaded.ok()) return loaded.error();
    const DataSpec &spec = loaded->spec;
    const data::ImageDataset &ds = loaded->data;
    if (spec.samples != DataSpec::SampleKind::Audio || !ds.floatSamples())
        return nodeError(loaded->node, "its samples are not recordings: a stream is made of an "
                                       "audio_folder's");
    if (ds.count == 0) return nodeError(loaded->node, "holds no recordings");
    const int64_t rate = spec.audioFiles.sampleRate, length = ds.sampleSize();
    const double trimDb = spec.audioFiles.trimDb > 0 ? spec.audioFiles.trimDb : 30.0;
    const std::vector<std::string> noise{"background", "background_noise", "noise", "silence"};

    // The order: a Fisher-Yates shuffle of our own over mt19937_64, whose numbers the standard
    // fixes (std::shuffle's use of them is the library's own), so a seed gives the same stream
    // on every machine.
    std::mt19937_64 rng(o.seed);
    std::vector<int64_t> order(size_t(ds.count));
    std::iota(order.begin(), order.end(), int64_t(0));
    for (size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[size_t(rng() % i)]);
    if (o.limit > 0 && int64_t(order.size()) > o.limit) order.resize(size_t(o.limit));

    // Sample k is the k-th of the source's files that could be read (data::decodeFiles closes
    // up the places of the others, in order): each label can name its recording.
    std::vector<std::string> paths;
    {
        std::set<std::string> skipped;
        for (const data::SkippedFile &f : ds.skipped)
            skipped.insert(f.path);
        for (const std::string &f : ds.files)
            if (!skipped.contains(f)) paths.push_back(f);
        if (int64_t(paths.size()) != ds.count) paths.clear(); // not known: no names
    }
    HeldOutStream out;
    out.rate = rate;
    out.node = loaded->node;
    const auto gapMin = int64_t(o.gapMinMs * double(rate) / 1000.0);
    const auto gapMax = int64_t(o.gapMaxMs * double(rate) / 1000.0);
    // Held once, at its size: an hour is 230 MB of samples.
    out.samples.reserve(order.size() * size_t(length + gapMax + 1));
    std::vector<float> clip(static_cast<size_t>(length));
    for (int64_t i : order) {
        if (Status st = data::readSample(ds, i, clip.data()); !st.ok())
            return nodeError(out.node, st.error().message);
        const int32_t label = ds.labels[size_t(i)];
        const std::string name = size_t(label) < ds.classNames.size() ? ds.classNames[size_t(label)]
                                                                      : std::to_string(label);
        const auto at = double(out.samples.size());
        if (!namedAmong(name, noise)) {
            const auto [first, last] = data::audibleRange(clip, trimDb);
            TruthWord w;
            w.start = (at + double(first)) / double(rate);
            w.end = (at + double(last)) / double(rate);
            w.label = name;
            out.labels.push_back(std::move(w));
            out.files.push_back(paths.empty()
                                    ? std::string()
                                    : std::filesystem::path(paths[size_t(i)]).filename().string());
            ++out.labelled;
        } else {
            ++out.noises;
        }
        out.samples.insert(out.samples.end(), clip.begin(), clip.end());
        const int64_t gap = gapMin + int64_t(rng() % uint64_t(gapMax - gapMin + 1));
        out.samples.insert(out.samples.end(), size_t(gap), 0.0f);
        ++out.recordings;
    }
    return out;
}

std::string labelsText(const std::vector<TruthWord> &labels, const std::vector<std::string> &files)
{
    std::string text;
    char line[64];
    auto field = [](std::string s) { // a tab or a line break would end the field
        for (char &c : s)
            if (c == '\t' || c == '\n' || c == '\r') c = ' ';
        return s;
    };
    for (size_t k = 0; k < labels.size(); ++k) {
        const TruthWord &w = labels[k];
        std::snprintf(line, sizeof line, "%.6f\t%.6f\t", w.start, w.end);
        text += line;
        text += field(w.label);
        if (k < files.size() && !files[k].empty()) {
            text += '\t';
            text += field(files[k]);
        }
        text += "\n";
    }
    return text;
}

} // namespace fb::exec
