#include "widgets/evaluation/evaluation_data.h"

#include <nlohmann/json.hpp>

#include <numeric>

namespace fb::widgets {

using nlohmann::json;

namespace {

// Bounds that keep a damaged or hostile stream from making the window allocate or paint
// without end; real evaluations are far inside them.
constexpr int kMaxClasses = 1000;
constexpr size_t kMaxImages = 4096;
constexpr qint64 kMaxImageSide = 4096, kMaxChannels = 64;

bool isCount(const json &v)
{
    return v.is_number_integer() && v.get<int64_t>() >= 0;
}

bool isClass(const json &v, int classes)
{
    return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < classes;
}

Result<MisclassifiedImage> parseSample(const json &m, int classes, size_t i)
{
    const std::string where = "misclassified[" + std::to_string(i) + "]";
    if (!m.is_object()) return makeError(where + " is not an object");
    for (const char *k : {"index", "height", "width", "channels"})
        if (!m.contains(k) || !isCount(m[k]))
            return makeError(where + "." + k + " is missing or not a count");
    for (const char *k : {"true_class", "predicted_class"})
        if (!m.contains(k) || !isClass(m[k], classes))
            return makeError(where + "." + k + " is missing or not a class number");
    const qint64 h = m["height"].get<int64_t>(), w = m["width"].get<int64_t>(),
                 c = m["channels"].get<int64_t>();
    if (h < 1 || w < 1 || c < 1 || h > kMaxImageSide || w > kMaxImageSide || c > kMaxChannels)
        return makeError(where + " has an image of unusable size");
    if (!m.contains("pixels") || !m["pixels"].is_string())
        return makeError(where + ".pixels is missing");
    const std::string &text = m["pixels"].get_ref<const std::string &>();
    auto decoded = QByteArray::fromBase64Encoding(QByteArray::fromStdString(text),
                                                  QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded) return makeError(where + ".pixels is not base64");
    if (decoded.decoded.size() != h * w * c)
        return makeError(where + ".pixels holds " + std::to_string(decoded.decoded.size()) +
                         " bytes, not height x width x channels = " + std::to_string(h * w * c));
    MisclassifiedImage s;
    s.index = m["index"].get<int64_t>();
    s.trueClass = int(m["true_class"].get<int64_t>());
    s.predicted = int(m["predicted_class"].get<int64_t>());
    if (m.contains("probability")) {
        if (!m["probability"].is_number()) return makeError(where + ".probability is no number");
        s.probability = m["probability"].get<double>();
    }
    s.image = imageFromPixels(decoded.decoded, int(h), int(w), int(c));
    return s;
}

Result<EvaluationData> parse(const json &e)
{
    if (!e.is_object()) return makeError("an evaluation must be a JSON object");
    if (e.contains("type") && e["type"] != "evaluation")
        return makeError("not an evaluation event");
    EvaluationData d;
    if (e.contains("node") && e["node"].is_string())
        d.node = QString::fromStdString(e["node"].get<std::string>());
    if (e.contains("epoch") && isCount(e["epoch"])) d.epoch = int(e["epoch"].get<int64_t>());
    if (e.contains("epochs") && isCount(e["epochs"])) d.epochs = int(e["epochs"].get<int64_t>());
    if (e.contains("loss") && e["loss"].is_number()) d.loss = e["loss"].get<double>();

    if (!e.contains("classes") || !e["classes"].is_array())
        return makeError("'classes' is missing or not a list");
    const json &classes = e["classes"];
    if (classes.empty() || classes.size() > size_t(kMaxClasses))
        return makeError("'classes' must name 1 to " + std::to_string(kMaxClasses) + " classes");
    for (const json &c : classes) {
        if (!c.is_string()) return makeError("a class name is not a string");
        d.classes << QString::fromStdString(c.get<std::string>());
    }
    const int k = d.classCount();

    if (!e.contains("confusion") || !e["confusion"].is_array() ||
        e["confusion"].size() != size_t(k))
        return makeError("'confusion' must hold one row per class");
    d.confusion.reserve(size_t(k) * size_t(k));
    for (const json &row : e["confusion"]) {
        if (!row.is_array() || row.size() != size_t(k))
            return makeError("every 'confusion' row must hold one count per class");
        for (const json &v : row) {
            // The bound keeps the sums from overflowing.
            if (!isCount(v) || v.get<int64_t>() > (int64_t(1) << 40))
                return makeError("'confusion' holds something other than a count");
            d.confusion.push_back(v.get<int64_t>());
        }
    }
    d.misclassifiedTotal = d.total() - d.correct();

    if (e.contains("misclassified")) {
        const json &gallery = e["misclassified"];
        if (!gallery.is_array() || gallery.size() > kMaxImages)
            return makeError("'misclassified' must be a list of at most " +
                             std::to_string(kMaxImages) + " samples");
        d.hasGallery = true;
        for (size_t i = 0; i < gallery.size(); ++i) {
            auto s = parseSample(gallery[i], k, i);
            if (!s.ok()) return s.error();
            if (s->trueClass == s->predicted)
                return makeError("misclassified[" + std::to_string(i) +
                                 "] has the same true and predicted class");
            d.misclassified.push_back(std::move(s).value());
        }
    }
    if (auto all = e.find("misclassified_all"); all != e.end()) {
        if (!all->is_array() || int64_t(all->size()) > d.misclassifiedTotal)
            return makeError("'misclassified_all' must list at most the misclassified samples");
        for (size_t i = 0; i < all->size(); ++i) {
            const json &r = (*all)[i];
            if (!r.is_array() || r.size() != 4 || !isCount(r[0]) || !r[1].is_number_integer() ||
                !r[2].is_number_integer() || !r[3].is_number())
                return makeError("misclassified_all[" + std::to_string(i) +
                                 "] is not [index, true class, predicted class, probability]");
            const int t = r[1].get<int>(), p = r[2].get<int>();
            if (t < 0 || p < 0 || t >= k || p >= k || t == p)
                return makeError("misclassified_all[" + std::to_string(i) +
                                 "] has classes out of range or the same");
            d.all.push_back({r[0].get<qint64>(), t, p, r[3].get<double>()});
        }
        const auto shape = e.find("image_shape");
        if (shape != e.end() && shape->is_array() && shape->size() == 3 && isCount((*shape)[0]) &&
            isCount((*shape)[1]) && isCount((*shape)[2]) && (*shape)[0].get<int64_t>() <= 4 &&
            (*shape)[1].get<int64_t>() <= 4096 && (*shape)[2].get<int64_t>() <= 4096) {
            d.imageChannels = int((*shape)[0].get<int64_t>());
            d.imageHeight = int((*shape)[1].get<int64_t>());
            d.imageWidth = int((*shape)[2].get<int64_t>());
        }
        const auto file = e.find("pictures_file");
        const auto kept = e.find("pictures_kept");
        // Only a plain file name: the window reads it from the run's folder, nowhere else.
        if (file != e.end() && file->is_string() && kept != e.end() && isCount(*kept)) {
            const QString name = QString::fromStdString(file->get<std::string>());
            if (!name.contains('/') && !name.contains('\\') && !name.startsWith('.')) {
                d.picturesFile = name;
                d.picturesKept = std::min<qint64>(kept->get<int64_t>(), qint64(d.all.size()));
            }
        }
    }
    return d;
}

} // namespace

qint64 EvaluationData::support(int trueClass) const
{
    qint64 s = 0;
    for (int p = 0; p < classCount(); ++p)
        s += count(trueClass, p);
    return s;
}

qint64 EvaluationData::predictedAs(int cls) const
{
    qint64 s = 0;
    for (int t = 0; t < classCount(); ++t)
        s += count(t, cls);
    return s;
}

qint64 EvaluationData::total() const
{
    return std::accumulate(confusion.begin(), confusion.end(), qint64(0));
}

qint64 EvaluationData::correct() const
{
    qint64 s = 0;
    for (int c = 0; c < classCount(); ++c)
        s += count(c, c);
    return s;
}

double EvaluationData::precision(int cls) const
{
    const qint64 n = predictedAs(cls);
    return n > 0 ? double(count(cls, cls)) / double(n) : -1;
}

double EvaluationData::recall(int cls) const
{
    const qint64 n = support(cls);
    return n > 0 ? double(count(cls, cls)) / double(n) : -1;
}

double EvaluationData::f1(int cls) const
{
    const double p = precision(cls), r = recall(cls);
    if (p < 0 || r < 0) return -1;
    return p + r > 0 ? 2 * p * r / (p + r) : 0;
}

double EvaluationData::accuracy() const
{
    const qint64 n = total();
    return n > 0 ? double(correct()) / double(n) : -1;
}

Result<EvaluationData> parseEvaluation(const json &event)
{
    // The checks above test every type before reading it; the catch is for what they miss, as
    // no exception may reach the event loop.
    try {
        return parse(event);
    } catch (const std::exception &ex) {
        return makeError(std::string("malformed evaluation: ") + ex.what());
    }
}

QImage imageFromPixels(const QByteArray &pixels, int height, int width, int channels)
{
    const auto *src = reinterpret_cast<const uchar *>(pixels.constData());
    if (channels == 3 || channels == 4) {
        const QImage view(src, width, height, width * channels,
                          channels == 3 ? QImage::Format_RGB888 : QImage::Format_RGBA8888);
        return view.copy(); // the view does not own the bytes
    }
    QImage grey(width, height, QImage::Format_Grayscale8);
    for (int y = 0; y < height; ++y) {
        uchar *line = grey.scanLine(y);
        for (int x = 0; x < width; ++x)
            line[x] = src[(qsizetype(y) * width + x) * channels];
    }
    return grey;
}

} // namespace fb::widgets
