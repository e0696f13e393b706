#include "core/exec/evaluation.h"

#include "core/exec/node_type.h"

#include "core/base/check.h"
#include "core/exec/job.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fb::exec {

using nlohmann::json;

int64_t EvaluationDetail::total() const
{
    return std::accumulate(confusion.begin(), confusion.end(), int64_t(0));
}

int64_t EvaluationDetail::correct() const
{
    int64_t trace = 0;
    for (int32_t c = 0; c < classes(); ++c)
        trace += count(c, c);
    return trace;
}

std::vector<ClassMetrics> EvaluationDetail::perClass() const
{
    const int32_t k = classes();
    std::vector<ClassMetrics> m(static_cast<size_t>(k));
    for (int32_t t = 0; t < k; ++t)
        for (int32_t p = 0; p < k; ++p) {
            m[size_t(t)].support += count(t, p);
            m[size_t(p)].predicted += count(t, p);
        }
    for (int32_t c = 0; c < k; ++c) {
        ClassMetrics &x = m[size_t(c)];
        const double hits = double(count(c, c));
        if (x.predicted > 0) x.precision = hits / double(x.predicted);
        if (x.support > 0) x.recall = hits / double(x.support);
    }
    return m;
}

InputPixels InputPixels::forChain(const DataSpec &spec)
{
    InputPixels p;
    if (spec.samples == DataSpec::SampleKind::Audio) {
        p.flipRows = true; // and min-max: a recording's values are not pixel bytes
        return p;
    }
    p.undoNormalize = true;
    // Only a chain of pixel normalizations can be undone to show the source's pixels.
    for (const auto &t : spec.transforms) {
        const NodeType *type = nodeCatalog().find(t.type);
        if (!type || !type->pixelNormalization) {
            p.undoNormalize = false;
            p.normalize.clear();
            break;
        }
        p.normalize.push_back(type->pixelNormalization(NodeParams(t.node, t.params)));
    }
    return p;
}

EvaluationTally::EvaluationTally(std::vector<std::string> classNames, const Shape &sample,
                                 InputPixels pixels)
    : m_pixels(std::move(pixels))
{
    FB_ASSERT(sample.rank() == 3, "evaluation samples must be [c, h, w]");
    m_detail.classNames = std::move(classNames);
    const size_t k = m_detail.classNames.size();
    m_detail.confusion.assign(k * k, 0);
    m_detail.channels = sample[0];
    m_detail.height = sample[1];
    m_detail.width = sample[2];
    m_detail.pixelScale = m_pixels.undoNormalize ? PixelScale::UndoNormalize : PixelScale::MinMax;
}

void EvaluationTally::add(const float *scores, const int32_t *labels, const float *inputs,
                          int64_t n, int64_t firstIndex)
{
    const int64_t k = m_detail.classes();
    const int64_t sampleSize = m_detail.channels * m_detail.height * m_detail.width;
    for (int64_t i = 0; i < n; ++i) {
        const float *row = scores + i * k;
        int64_t best = 0;
        for (int64_t c = 1; c < k; ++c)
            if (row[c] > row[best]) best = c;
        const int32_t label = labels[i];
        FB_ASSERT(label >= 0 && label < k, "label out of range");
        ++m_detail.confusion[size_t(label * k + best)];
        if (best == label) continue;
        ++m_detail.misclassifiedTotal;
        // Only misclassified samples pay for the softmax and the picture.
        double sum = 0;
        for (int64_t c = 0; c < k; ++c)
            sum += std::exp(double(row[c]) - double(row[best]));
        const MisclassifiedRef ref{firstIndex + i, label, int32_t(best), float(1.0 / sum)};
        m_detail.allMisclassified.push_back(ref);
        // Every picture has the same size: once one does not fit, none after it does.
        const bool keepPicture =
            m_detail.allPictures.size() + size_t(sampleSize) <= kMaxMisclassifiedPictureBytes;
        if (!keepPicture && m_detail.misclassified.size() >= kMaxMisclassified) continue;
        std::vector<uint8_t> pixels = toPixels(inputs + i * sampleSize);
        if (keepPicture) {
            m_detail.allPictures.insert(m_detail.allPictures.end(), pixels.begin(), pixels.end());
        }
        if (m_detail.misclassified.size() >= kMaxMisclassified) continue;
        MisclassifiedSample s;
        s.index = ref.index;
        s.trueClass = ref.trueClass;
        s.predicted = ref.predicted;
        s.probability = ref.probability;
        s.pixels = std::move(pixels);
        m_detail.misclassified.push_back(std::move(s));
    }
}

std::vector<uint8_t> EvaluationTally::toPixels(const float *sample) const
{
    const int64_t c = m_detail.channels, hw = m_detail.height * m_detail.width;
    std::vector<float> v(sample, sample + c * hw);
    if (m_pixels.undoNormalize) {
        // The loader scaled the bytes to [0, 1] before the chain; undo the chain, then that.
        for (auto it = m_pixels.normalize.rbegin(); it != m_pixels.normalize.rend(); ++it)
            for (float &x : v)
                x = x * it->second + it->first;
        for (float &x : v)
            x *= 255.0f;
    } else {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        const float low = *lo, range = *hi - *lo;
        for (float &x : v)
            x = range > 0 ? (x - low) / range * 255.0f : 0.0f;
    }
    // Planar [c, h, w] to interleaved [h, w, c], the layout images are shown in.
    std::vector<uint8_t> out(v.size());
    const int64_t w = m_detail.width, h = m_detail.height;
    for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < hw; ++p) {
            const float x = v[size_t(ch * hw + p)];
            const int64_t to = m_pixels.flipRows ? (h - 1 - p / w) * w + p % w : p;
            out[size_t(to * c + ch)] =
                uint8_t(std::isfinite(x) ? std::clamp(std::lround(x), 0l, 255l) : 0l);
        }
    return out;
}

std::string base64(const uint8_t *bytes, size_t size)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((size + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < size; i += 3) {
        const uint32_t v = uint32_t(bytes[i]) << 16 | uint32_t(bytes[i + 1]) << 8 | bytes[i + 2];
        out += digits[v >> 18 & 63];
        out += digits[v >> 12 & 63];
        out += digits[v >> 6 & 63];
        out += digits[v & 63];
    }
    if (i < size) {
        const bool two = i + 1 < size;
        const uint32_t v = uint32_t(bytes[i]) << 16 | (two ? uint32_t(bytes[i + 1]) << 8 : 0u);
        out += digits[v >> 18 & 63];
        out += digits[v >> 12 & 63];
        out += two ? digits[v >> 6 & 63] : '=';
        out += '=';
    }
    return out;
}

json evaluationJson(const Evaluation &e, int64_t epoch, int64_t epochs, bool withGallery)
{
    const EvaluationDetail &d = e.detail;
    const int32_t k = d.classes();
    json confusion = json::array();
    for (int32_t t = 0; t < k; ++t) {
        json row = json::array();
        for (int32_t p = 0; p < k; ++p)
            row.push_back(d.count(t, p));
        confusion.push_back(std::move(row));
    }
    // Undefined ratios are null, not 0: "never predicted" is not "always wrong".
    auto ratio = [](double v) { return v < 0 ? json(nullptr) : json(v); };
    json perClass = json::array();
    const std::vector<ClassMetrics> metrics = d.perClass();
    for (int32_t c = 0; c < k; ++c) {
        const ClassMetrics &m = metrics[size_t(c)];
        perClass.push_back({{"class", d.classNames[size_t(c)]},
                            {"precision", ratio(m.precision)},
                            {"recall", ratio(m.recall)},
                            {"support", m.support}});
    }
    json j{{"type", "evaluation"},
           {"node", e.node},
           {"epoch", epoch},
           {"epochs", epochs},
           {"samples", e.samples},
           {"loss", e.loss},
           {"accuracy", e.accuracy},
           {"classes", d.classNames},
           {"confusion", std::move(confusion)},
           {"per_class", std::move(perClass)},
           {"misclassified_total", d.misclassifiedTotal}};
    if (withGallery) {
        j["pixel_scale"] = d.pixelScale == PixelScale::UndoNormalize ? "undo_normalize" : "min_max";
        json gallery = json::array();
        for (const MisclassifiedSample &s : d.misclassified)
            gallery.push_back({{"index", s.index},
                               {"true_class", s.trueClass},
                               {"predicted_class", s.predicted},
                               {"probability", s.probability},
                               {"height", d.height},
                               {"width", d.width},
                               {"channels", d.channels},
                               {"pixels", base64(s.pixels.data(), s.pixels.size())}});
        j["misclassified"] = std::move(gallery);
        // Every misclassified sample, as [index, true class, predicted class, probability]; the
        // pictures of the first `pictures_kept` are in the run folder's pictures_file.
        json all = json::array();
        for (const MisclassifiedRef &r : d.allMisclassified)
            all.push_back(json::array({r.index, r.trueClass, r.predicted, r.probability}));
        j["misclassified_all"] = std::move(all);
        j["image_shape"] = json::array({d.channels, d.height, d.width});
        j["pictures_file"] = misclassifiedPicturesFile(e.node);
        j["pictures_kept"] = d.picturesKept();
    }
    return j;
}

std::string misclassifiedPicturesFile(const std::string &evaluateNode)
{
    return "misclassified-" + evaluateNode + ".u8";
}

} // namespace fb::exec
