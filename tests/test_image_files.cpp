// Image folders and CSV lists as data sources (core/data/image_files.h): classes from folder
// names or labels, pixels decoded in RGB or grey and sized by stretching or padding, the seeded
// train/validation split, damaged files skipped and named, a whole colour run that learns a
// distinction only colour can make, and data larger than its memory budget streamed from disk
// with the same batches. The images are written with Qt's encoders, independent of
// the OpenCV decoders under test.

#include "core/data/audio_files.h"
#include "core/data/dataflow.h"
#include "core/data/image_files.h"
#include "core/data/transforms.h"
#include "core/exec/runner.h"
#include "core/graph/pipeline_file.h"

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include "wav_fixture.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

using namespace fb;
using namespace fb::data;
using json = nlohmann::ordered_json;

namespace {

QImage solid(int w, int h, QColor c)
{
    QImage img(w, h, QImage::Format_RGB32);
    img.fill(c);
    return img;
}

void save(const QImage &img, const QString &path)
{
    QDir().mkpath(QFileInfo(path).path());
    if (!img.save(path)) qFatal("cannot write %s", qPrintable(path));
}

void writeBytes(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

QByteArray readBytes(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
    return f.readAll();
}

ImageFilesOptions options(int64_t h, int64_t w, bool colour, const char *subset = "all")
{
    ImageFilesOptions o;
    o.height = h;
    o.width = w;
    o.colour = colour;
    o.subset = subset;
    return o;
}

// The grey value of each sample's first pixel: the split tests give every file its own.
std::multiset<int> firstPixels(const ImageDataset &ds)
{
    std::multiset<int> out;
    for (int64_t i = 0; i < ds.count; ++i)
        out.insert(ds.sample(i)[0]);
    return out;
}

// Noisy images of two colours with (nearly) the same brightness: told apart by colour only.
// perClass noisy pictures of side x side pixels in each of two colour classes.
void writeColourClasses(const QString &dir, int perClass, int side = 20)
{
    uint32_t state = 12345;
    auto noise = [&state] {
        state = state * 1664525u + 1013904223u;
        return int((state >> 24) % 41) - 20;
    };
    const QColor colours[2] = {QColor(180, 60, 60), QColor(60, 100, 165)}; // luma 95.8, 95.4
    const char *names[2] = {"rust", "steel"};
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < perClass; ++i) {
            QImage img(side, side, QImage::Format_RGB32);
            for (int y = 0; y < side; ++y)
                for (int x = 0; x < side; ++x) {
                    const int d = noise();
                    img.setPixelColor(x, y,
                                      QColor(std::clamp(colours[c].red() + d, 0, 255),
                                             std::clamp(colours[c].green() + d, 0, 255),
                                             std::clamp(colours[c].blue() + d, 0, 255)));
                }
            save(img, QString("%1/%2/%3.png").arg(dir, names[c]).arg(i));
        }
}

// Grey pictures of two classes told apart by brightness alone, where it overlaps: each picture
// one level all over (nothing else to learn them by), the sum of two uniform draws, so that
// "common" lies from 60 to 140 and "rare" from 100 to 180, each likeliest in its middle; `common`
// and `rare` pictures. Of both alike, a level below 120 is likelier common; of eight common to one
// rare, below 135.6.
void writeOverlappingClasses(const QString &dir, int common, int rare, uint32_t seed)
{
    uint32_t state = seed;
    auto draw = [&state](int below) {
        state = state * 1664525u + 1013904223u;
        return int((state >> 8) % uint32_t(below));
    };
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < (c == 0 ? common : rare); ++i) {
            const int level = (c == 0 ? 60 : 100) + draw(41) + draw(41);
            QImage img(8, 8, QImage::Format_Grayscale8);
            img.fill(QColor(level, level, level));
            save(img, QString("%1/%2/%3.png").arg(dir, c == 0 ? "common" : "rare").arg(i));
        }
}

// Every batch of `epochs` epochs, as (x bytes, labels), from a flow over `ds` with a random
// flip (its draws depend on the samples' indices, so a mix-up would show).
std::vector<std::pair<QByteArray, std::vector<int32_t>>>
batchesOf(std::shared_ptr<const ImageDataset> ds, int workers, int epochs,
          std::optional<FlowStats> *stats = nullptr, int64_t firstEpoch = 0, int64_t firstBatch = 0)
{
    DataFlowOptions o;
    o.batchSize = 7;
    o.seed = 5;
    o.workers = workers;
    auto flow = DataFlow::create(ds, {{"flip", std::make_shared<RandomHorizontalFlip>(0.5f)}}, o);
    if (!flow.ok()) qFatal("%s", flow.error().message.c_str());
    std::vector<std::pair<QByteArray, std::vector<int32_t>>> out;
    for (int64_t e = firstEpoch; e < firstEpoch + epochs; ++e) {
        flow.value()->startEpoch(e, e == firstEpoch ? firstBatch : 0);
        while (true) {
            auto b = flow.value()->next();
            if (!b.ok()) qFatal("%s", b.error().message.c_str());
            if (!b.value()) break;
            const Batch &batch = *b.value();
            const int32_t *y = batch.y.data<int32_t>();
            out.emplace_back(QByteArray(reinterpret_cast<const char *>(batch.x.f32()),
                                        qsizetype(batch.x.bytes())),
                             std::vector<int32_t>(y, y + batch.y.shape()[0]));
        }
    }
    if (stats) *stats = flow.value()->stats();
    return out;
}

// Two classes of six tones each ("low", "high"), 800 samples at 8 kHz: a folder of recordings.
void writeTones(const QString &dir)
{
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 6; ++i) {
            std::vector<float> wave(800);
            for (size_t k = 0; k < wave.size(); ++k)
                wave[k] = 0.3f * std::sin(float(k) * (0.05f + 0.07f * float(c)) + float(i));
            fixture::writeWav(QString("%1/%2/%3.wav").arg(dir, c ? "high" : "low").arg(i), wave, 1,
                              8000);
        }
}

// How writeTones' recordings are read: whole, untrimmed.
AudioFilesOptions toneOptions()
{
    AudioFilesOptions o;
    o.sampleRate = 8000;
    o.seconds = 0.1;
    o.trimDb = 0;
    return o;
}

// The MLP example with both sources reading `dir` as a colour image_folder (training:
// `trainSubset`, evaluation: validation) at side x side with cache_mb 1 and `disk` as disk_cache,
// two classes, trained on the CPU for `epochs` epochs in batches of `batch`.
json folderPipeline(const QString &dir, const char *trainSubset, int side, const char *disk,
                    int epochs, int batch)
{
    auto file =
        graph::loadPipeline(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");
    if (!file.ok()) qFatal("%s", file.error().str().c_str());
    json doc = graph::pipelineJson(file.value());
    for (auto &n : doc["nodes"]) {
        if (n["id"] == "train_data" || n["id"] == "test_data")
            n = {{"id", n["id"]},
                 {"type", "image_folder"},
                 {"params",
                  {{"path", dir.toStdString()},
                   {"subset", n["id"] == "train_data" ? trainSubset : "validation"},
                   {"color", "rgb"},
                   {"height", side},
                   {"width", side},
                   {"cache_mb", 1},
                   {"disk_cache", disk}}},
                 {"position", n["position"]}};
        if (n["id"] == "train") {
            n["params"]["epochs"] = epochs;
            n["params"]["batch_size"] = batch;
            n["params"]["device"] = "cpu";
        }
        if (n["id"] == "fc3") n["params"]["out_features"] = 2;
    }
    return doc;
}

struct Collect : exec::RunObserver {
    std::vector<std::string> warnings; // "node: text"
    std::vector<std::string> notes;    // "node: text", information about a node
    float lastAccuracy = -1;
    std::optional<exec::EvaluationDetail> lastDetail; // the last epoch's first evaluation
    std::vector<std::string> infos; // the run's own information lines
    std::optional<exec::DataFlowReport> lastFlow;
    std::vector<exec::DataFlowReport> flows;
    void message(LogLevel level, const std::string &text) override
    {
        if (level == LogLevel::Warning) warnings.push_back(": " + text);
        if (level == LogLevel::Info) infos.push_back(text);
    }
    void nodeMessage(LogLevel level, const std::string &node, const std::string &text) override
    {
        if (level == LogLevel::Warning) warnings.push_back(node + ": " + text);
        if (level == LogLevel::Info) notes.push_back(node + ": " + text);
    }
    void dataflow(const exec::DataFlowReport &r) override
    {
        lastFlow = r;
        flows.push_back(r);
    }
    void epochFinished(const exec::EpochResult &e) override
    {
        lastAccuracy = e.evaluations.at(0).accuracy;
        lastDetail = e.evaluations.at(0).detail;
    }
};

// Runs a pipeline document in this process with `threads` threads and `workers` data workers,
// `c` watching; a pipeline that does not parse is an error of the run.
Result<exec::RunSummary> runDoc(const json &doc, const char *name, int threads, int workers,
                                Collect &c)
{
    auto pipeline = graph::parsePipeline(doc.dump(), name);
    if (!pipeline.ok()) return pipeline.error();
    exec::RunOptions o;
    o.threads = threads;
    o.dataWorkers = workers;
    return exec::runPipeline(pipeline.value(), o, c);
}

} // namespace

class TestImageFiles : public QObject {
    Q_OBJECT

private slots:
    void folderClassesAndPixels()
    {
        QTemporaryDir dir;
        for (int i = 0; i < 3; ++i) {
            save(solid(20, 10, Qt::red), dir.filePath(QString("red/%1.png").arg(i)));
            save(solid(10, 20, Qt::blue), dir.filePath(QString("blue/%1.bmp").arg(i)));
        }
        save(solid(4, 4, Qt::green), dir.filePath(".thumbs/x.png")); // hidden: not a class
        save(solid(4, 4, Qt::green), dir.filePath("red/.hidden.png"));
        auto rgb = loadImageFolder(dir.path().toStdString(), options(8, 8, true));
        QVERIFY2(rgb.ok(), rgb.ok() ? "" : rgb.error().str().c_str());
        QCOMPARE(rgb->classNames, (std::vector<std::string>{"blue", "red"}));
        QCOMPARE(rgb->classes, 2);
        QCOMPARE(rgb->count, int64_t(6));
        QCOMPARE(rgb->channels, int64_t(3));
        QVERIFY(rgb->skipped.empty());
        // Classes interleaved, so that a limit keeps them balanced.
        QCOMPARE(rgb->labels, (std::vector<int32_t>{0, 1, 0, 1, 0, 1}));
        const uint8_t *blue = rgb->sample(0), *red = rgb->sample(1);
        for (int p = 0; p < 64; ++p) {
            QCOMPARE(int(red[p]), 255);        // R plane
            QCOMPARE(int(red[64 + p]), 0);     // G
            QCOMPARE(int(red[128 + p]), 0);    // B
            QCOMPARE(int(blue[p]), 0);         // R
            QCOMPARE(int(blue[128 + p]), 255); // B
        }

        auto grey = loadImageFolder(dir.path().toStdString(), options(8, 8, false));
        QVERIFY(grey.ok());
        QCOMPARE(grey->channels, int64_t(1));
        QVERIFY(std::abs(int(grey->sample(1)[0]) - 76) <= 1); // 0.299 * 255
        QVERIFY(std::abs(int(grey->sample(0)[0]) - 29) <= 1); // 0.114 * 255

        // Padding keeps the aspect: 20x10 red into 8x8 is 8x4 in rows 2..5, black above and below.
        ImageFilesOptions pad = options(8, 8, true);
        pad.resize = ImageFilesOptions::Resize::Pad;
        auto padded = loadImageFolder(dir.path().toStdString(), pad);
        QVERIFY(padded.ok());
        const uint8_t *r = padded->sample(1);
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x)
                QCOMPARE(int(r[y * 8 + x]), y >= 2 && y < 6 ? 255 : 0);
        // And the 10x20 blue is 4x8 in columns 2..5.
        const uint8_t *b = padded->sample(0) + 128;
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x)
                QCOMPARE(int(b[y * 8 + x]), x >= 2 && x < 6 ? 255 : 0);
    }

    void splitIsSeededDisjointAndWhole()
    {
        QTemporaryDir dir;
        // Every file its own grey level: 10 per class.
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < 10; ++i) {
                const int v = 20 + 10 * i + c;
                save(solid(6, 6, QColor(v, v, v)),
                     dir.filePath(QString("c%1/%2.png").arg(c).arg(i)));
            }
        auto load = [&](const char *subset, uint64_t seed) {
            ImageFilesOptions o = options(6, 6, false, subset);
            o.validationFraction = 0.3;
            o.splitSeed = seed;
            auto r = loadImageFolder(dir.path().toStdString(), o);
            if (!r.ok()) qFatal("%s", r.error().str().c_str());
            return std::move(r).value();
        };
        const ImageDataset all = load("all", 1), train = load("train", 1),
                           val = load("validation", 1);
        QCOMPARE(all.count, int64_t(20));
        QCOMPARE(val.count, int64_t(6)); // 3 of each class
        QCOMPARE(train.count, int64_t(14));
        QCOMPARE(std::count(val.labels.begin(), val.labels.end(), 0), 3);
        std::multiset<int> both = firstPixels(train);
        for (int v : firstPixels(val)) {
            QVERIFY2(!both.count(v), "a file is in both parts");
            both.insert(v);
        }
        QCOMPARE(both, firstPixels(all));
        QCOMPARE(firstPixels(load("validation", 1)), firstPixels(val));  // the same seed
        QVERIFY(firstPixels(load("validation", 2)) != firstPixels(val)); // another seed
    }

    void damagedFilesAreSkippedAndNamed()
    {
        QTemporaryDir dir;
        for (int i = 0; i < 3; ++i)
            save(solid(8, 8, Qt::white), dir.filePath(QString("a/%1.png").arg(i)));
        save(solid(8, 8, Qt::black), dir.filePath("b/ok.jpg"));
        const QByteArray jpeg = readBytes(dir.filePath("b/ok.jpg"));
        const QByteArray png = readBytes(dir.filePath("a/0.png"));
        writeBytes(dir.filePath("a/notes.png"), "these are my notes, not a picture\n");
        writeBytes(dir.filePath("b/cut.jpg"), jpeg.left(jpeg.size() / 2));
        writeBytes(dir.filePath("b/cut.png"), png.left(png.size() - 20));
        writeBytes(dir.filePath("b/empty.bmp"), QByteArray());
        auto ds = loadImageFolder(dir.path().toStdString(), options(8, 8, false));
        QVERIFY2(ds.ok(), ds.ok() ? "" : ds.error().str().c_str());
        QCOMPARE(ds->count, int64_t(4));
        QCOMPARE(ds->skipped.size(), size_t(4));
        std::map<std::string, std::string> why;
        for (const SkippedFile &s : ds->skipped)
            why[QFileInfo(QString::fromStdString(s.path)).fileName().toStdString()] = s.reason;
        QVERIFY2(why["notes.png"].find("not an image") != std::string::npos,
                 why["notes.png"].c_str());
        QVERIFY2(why["cut.jpg"].find("truncated JPEG") != std::string::npos,
                 why["cut.jpg"].c_str());
        QVERIFY2(why["cut.png"].find("truncated PNG") != std::string::npos, why["cut.png"].c_str());
        QCOMPARE(why["empty.bmp"], std::string("empty file"));

        // A folder with nothing readable is an error naming it, as is one without class folders.
        QTemporaryDir bad;
        writeBytes(bad.filePath("x/1.png"), "no");
        auto none = loadImageFolder(bad.path().toStdString(), options(8, 8, false));
        QVERIFY(!none.ok());
        QVERIFY(none.error().str().find("none of its 1 files is a readable image") !=
                std::string::npos);
        QTemporaryDir flat;
        save(solid(8, 8, Qt::white), flat.filePath("1.png"));
        auto noClasses = loadImageFolder(flat.path().toStdString(), options(8, 8, false));
        QVERIFY(!noClasses.ok());
        QVERIFY(noClasses.error().str().find("has no class folders") != std::string::npos);
    }

    // Found by fuzz_image (fuzz/regressions/fuzz_image): a 201-byte PNG whose text chunk claims
    // 1.7 GB made libpng allocate and clear that much for 6 s before refusing it. The chunk
    // walk refuses it at once, naming the file.
    void pngChunkLongerThanTheFileIsRefused()
    {
        QFile in(QString(FLOWBENCH_SOURCE_DIR) +
                 "/fuzz/regressions/fuzz_image/png-text-chunk-claims-1.7GB");
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray raw = in.readAll().mid(3); // the fuzzer's 3 option bytes
        const std::vector<uint8_t> bytes(raw.begin(), raw.end());
        data::ImageFilesOptions o;
        auto r = data::decodeImageBytes(bytes, "slow.png", o);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().str() ==
                     "slow.png: damaged PNG: a chunk claims 1768882213 bytes where the file has "
                     "49 left",
                 r.error().str().c_str());
    }

    // Found by fuzz_image in CI: a 100-byte picture whose header declares a huge size made
    // OpenCV ask for 2.4 GB before it found the pixels missing. The declared size is checked
    // first, in every format read; one of Qt's own small pictures is patched to declare more.
    // JPEGs are decoded by libjpeg-turbo at M/8 of their size and then averaged down: the
    // picture must be the one the lossless file of the same pixels gives.
    void jpegsScaledInTheDctKeepThePicture()
    {
        QTemporaryDir dir;
        QImage img(160, 120, QImage::Format_RGB32);
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                img.setPixel(x, y, qRgb(x * 255 / 159, y * 255 / 119, (x / 20 + y / 20) % 2 * 200));
        const QString png = dir.filePath("a.png"), jpg = dir.filePath("a.jpg");
        save(img, png);
        QVERIFY(img.save(jpg, "JPG", 98));
        for (bool colour : {true, false})
            for (auto resize :
                 {ImageFilesOptions::Resize::Stretch, ImageFilesOptions::Resize::Pad}) {
                ImageFilesOptions o = options(48, 64, colour); // 160 wide to 64: decoded at 4/8
                o.resize = resize;
                auto a = decodeImageFile(png.toStdString(), o);
                auto b = decodeImageFile(jpg.toStdString(), o);
                QVERIFY(a.ok() && b.ok());
                QCOMPARE(b->size(), a->size());
                double sum = 0;
                int worst = 0;
                for (size_t i = 0; i < a->size(); ++i) {
                    const int d = std::abs(int((*a)[i]) - int((*b)[i]));
                    sum += d;
                    worst = std::max(worst, d);
                }
                const double mean = sum / double(a->size());
                QVERIFY2(mean < 2.5 && worst < 40,
                         qPrintable(QString("mean %1, worst %2").arg(mean).arg(worst)));
            }
    }

    // A photo whose EXIF says "turn me" (orientation 6: 90 degrees clockwise) is read turned, as
    // a viewer shows it, whichever decoder reads it.
    void jpegExifOrientationIsApplied()
    {
        QTemporaryDir dir;
        QImage img = solid(16, 8, Qt::black);
        for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x)
                img.setPixel(x, y, qRgb(255, 255, 255)); // the left half white
        const QString plain = dir.filePath("plain.jpg");
        QVERIFY(img.save(plain, "JPG", 100));
        QByteArray turned = readBytes(plain);
        const char app1[] = "\xFF\xE1\x00\x22"
                            "Exif\0\0"
                            "MM\x00\x2A\x00\x00\x00\x08"
                            "\x00\x01"
                            "\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00"
                            "\x00\x00\x00\x00";
        turned.insert(2, QByteArray(app1, 36));
        writeBytes(dir.filePath("turned.jpg"), turned);
        const ImageFilesOptions o = options(16, 8, false); // 8 wide, 16 high, stretched
        auto a = decodeImageFile(plain.toStdString(), o);
        auto b = decodeImageFile(dir.filePath("turned.jpg").toStdString(), o);
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().str().c_str());
        QVERIFY(a.ok());
        // As stored, stretched to 8 x 16: white on the left. Turned: white on top.
        auto at = [](const std::vector<uint8_t> &p, int x, int y) {
            return int(p[size_t(y * 8 + x)]);
        };
        QVERIFY(at(*a, 1, 14) > 200 && at(*a, 6, 1) < 50);
        QVERIFY2(at(*b, 6, 1) > 200 && at(*b, 1, 14) < 50,
                 qPrintable(QString("%1 %2").arg(at(*b, 6, 1)).arg(at(*b, 1, 14))));
    }

    void hugeDeclaredSizesAreRefusedBeforeDecoding_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("why");
        QTemporaryDir dir;
        auto encoded = [&](const char *format) {
            const QString path = dir.filePath(QString("small.") + format);
            save(solid(4, 4, Qt::gray), path);
            return readBytes(path);
        };
        auto put = [](QByteArray &b, int at, uint64_t v, int bytes, bool little) {
            for (int i = 0; i < bytes; ++i)
                b[at + (little ? i : bytes - 1 - i)] = char((v >> (8 * i)) & 0xFF);
        };
        const QString tooMany = " pixels; at most 67,108,864 (8192 x 8192) are read";
        QByteArray png = encoded("png"); // IHDR: width at 16, height at 20, big-endian
        put(png, 16, 100000, 4, false);
        put(png, 20, 100000, 4, false);
        QTest::newRow("png") << png << "declares 100000 x 100000" + tooMany;
        QByteArray bmp = encoded("bmp"); // BITMAPINFOHEADER: width at 18, height at 22
        put(bmp, 18, 20000, 4, true);
        put(bmp, 22, uint32_t(-20000), 4, true); // negative: stored top-down
        QTest::newRow("bmp top-down") << bmp << "declares 20000 x 20000" + tooMany;
        QByteArray jpeg = encoded("jpg"); // start of frame: height at +5, width at +7
        const int sof = int(jpeg.indexOf(QByteArray("\xFF\xC0", 2)));
        QVERIFY(sof > 0);
        put(jpeg, sof + 5, 60000, 2, false);
        put(jpeg, sof + 7, 60000, 2, false);
        QTest::newRow("jpeg") << jpeg << "declares 60000 x 60000" + tooMany;
        // Only the product is too large: each side alone is allowed.
        QTest::newRow("pgm") << QByteArray("P5\n# a comment\n100000 1000\n255\n") +
                                    QByteArray(64, 'x')
                             << "declares 100000 x 1000" + tooMany;
        // OpenCV takes the byte after a number's digits with it, whatever it is (found by
        // fuzz_image: read here as 7100 x 0, by OpenCV as 7100 x 103458).
        QTest::newRow("pgm, a letter after the width")
            << QByteArray("P5\n7100Z103458\n255\n") + QByteArray(64, 'x')
            << "declares 7100 x 103458" + tooMany;
        // TIFF, little-endian, written here (Qt reads no TIFF without a plugin): width (256),
        // height (257), bits per sample (258) and samples per pixel (277) of the first
        // directory.
        auto tiff = [&](uint32_t w, uint32_t h, uint16_t bits, uint16_t samples) {
            QByteArray t("II*\0", 4);
            t.append(QByteArray(4 + 2 + 4 * 12 + 4 + 64, 0));
            put(t, 4, 8, 4, true);
            put(t, 8, 4, 2, true);
            const uint32_t values[4][3] = {
                {256, 4, w}, {257, 4, h}, {258, 3, bits}, {277, 3, samples}};
            for (int e = 0; e < 4; ++e) {
                const int at = 10 + 12 * e;
                put(t, at, values[e][0], 2, true);
                put(t, at + 2, values[e][1], 2, true);
                put(t, at + 4, 1, 4, true);
                put(t, at + 8, values[e][2], values[e][1] == 3 ? 2 : 4, true);
            }
            return t;
        };
        QTest::newRow("tiff") << tiff(30000, 30000, 8, 1) << "declares 30000 x 30000" + tooMany;
        // Allowed in pixels, not in bytes: 64-bit floats, four of them a pixel.
        QTest::newRow("tiff 64-bit RGBA")
            << tiff(8192, 8192, 64, 4)
            << "declares 8192 x 8192 pixels of 32 bytes each (2.00 GiB to decode); at most "
               "1 GiB is read";
        // A damaged WebP header that OpenCV's WebP decoder turns down, with the signature of
        // one that it tries later (GDCM's, or GDAL's) further on (found by fuzz_image: GDCM
        // aborted the process).
        const QString disguise = "damaged, or a DICOM or DTED file in disguise: it carries their "
                                 "signature, and Flowbench reads neither (convert it to PNG)";
        for (const auto &[offset, magic] : {std::pair{128, "DICM"}, std::pair{140, "DTED"}}) {
            QByteArray webp = QByteArray("RIFF\x56\0\0\0WEBPVP8 ", 16) + QByteArray(140, '\xD3');
            webp.replace(offset, 4, magic);
            QTest::newRow(magic) << webp << disguise;
        }
    }

    void hugeDeclaredSizesAreRefusedBeforeDecoding()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, why);
        const std::vector<uint8_t> b(bytes.begin(), bytes.end());
        auto r = data::decodeImageBytes(b, "huge", ImageFilesOptions{});
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().str()), "huge: " + why);
    }

    void listReadsCsv()
    {
        QTemporaryDir dir;
        save(solid(8, 8, Qt::white), dir.filePath("img/white, bright.png"));
        save(solid(8, 8, Qt::black), dir.filePath("img/black.png"));
        save(solid(8, 8, Qt::gray), dir.filePath("elsewhere/grey.png"));
        writeBytes(dir.filePath("list.csv"),
                   "path,label\n\"img/white, bright.png\",light\nimg/black.png, dark\n" +
                       dir.filePath("elsewhere/grey.png").toUtf8() +
                       ",light\r\n\nimg/missing.png,dark\n");
        auto ds = loadImageList(dir.filePath("list.csv").toStdString(), options(8, 8, false));
        QVERIFY2(ds.ok(), ds.ok() ? "" : ds.error().str().c_str());
        QCOMPARE(ds->classNames, (std::vector<std::string>{"dark", "light"}));
        QCOMPARE(ds->count, int64_t(3));
        QCOMPARE(ds->skipped.size(), size_t(1));
        QVERIFY(ds->skipped[0].reason.find("no such file") != std::string::npos);
        // dark: black (and the missing file); light: grey, white (each class in path order).
        // Interleaved by class.
        QCOMPARE(ds->labels, (std::vector<int32_t>{0, 1, 1}));
        QCOMPARE(int(ds->sample(0)[0]), 0);
        QCOMPARE(int(ds->sample(1)[0]), 160);
        QCOMPARE(int(ds->sample(2)[0]), 255);

        // Whole numbers are class numbers.
        writeBytes(dir.filePath("numbers.csv"), "img/black.png,0\nimg/black.png,3\n");
        auto numbered =
            loadImageList(dir.filePath("numbers.csv").toStdString(), options(8, 8, false));
        QVERIFY(numbered.ok());
        QCOMPARE(numbered->classes, 4);
        QCOMPARE(numbered->labels, (std::vector<int32_t>{0, 3}));

        writeBytes(dir.filePath("broken.csv"), "img/black.png,0\njust-a-path\n");
        auto broken = loadImageList(dir.filePath("broken.csv").toStdString(), options(8, 8, false));
        QVERIFY(!broken.ok());
        QCOMPARE(broken.error().line, 2);
        QVERIFY(broken.error().str().find("expected two fields") != std::string::npos);
    }

    // A whole run on colour images: 3-channel convolutions learn two classes that differ only in
    // hue (their brightness is the same), a damaged file is named in a warning and the run goes on.
    void colourRunLearnsAndWarns()
    {
        QTemporaryDir dir;
        writeColourClasses(dir.path(), 40);
        writeBytes(dir.filePath("rust/broken.png"), "not a png");
        auto file =
            graph::loadPipeline(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");
        QVERIFY(file.ok());
        json doc = graph::pipelineJson(file.value());
        for (auto &n : doc["nodes"]) {
            if (n["id"] == "train_data" || n["id"] == "test_data") {
                n["type"] = "image_folder";
                n["params"] = {{"path", dir.path().toStdString()},
                               {"subset", n["id"] == "train_data" ? "train" : "validation"},
                               {"validation_fraction", 0.25},
                               {"color", "rgb"},
                               {"height", 16},
                               {"width", 16}};
            }
            // Per-channel normalization, as colour pictures are usually normalized.
            if (n["id"] == "normalize" || n["id"] == "normalize_test") {
                n["type"] = "normalize_channels";
                n["params"] = {{"mean", "0.4,0.3,0.35"}, {"std", "0.25"}};
            }
            if (n["id"] == "train") {
                n["params"]["epochs"] = 6;
                n["params"]["batch_size"] = 8;
                n["params"]["device"] = "cpu";
            }
            if (n["id"] == "optimizer") n["params"]["lr"] = 0.02;
            if (n["id"] == "fc2") n["params"]["out_features"] = 2;
        }
        Collect c;
        auto r = runDoc(doc, "colour.json", 2, 1, c);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        bool named = false;
        for (const std::string &w : c.warnings)
            named = named || ((w.rfind("train_data: skipped 1 of", 0) == 0 ||
                               w.rfind("test_data: skipped 1 of", 0) == 0) &&
                              w.find("rust/broken.png (not an image") != std::string::npos);
        // The split puts the broken file in train_data's or test_data's part; either names it.
        QVERIFY2(named, c.warnings.empty() ? "no warning" : c.warnings.front().c_str());
        QVERIFY2(c.lastAccuracy >= 0.9f, qPrintable(QString::number(c.lastAccuracy)));
    }

    // cross_entropy's logit_adjustment: trained on eight pictures of one class for each of the
    // other, where the two overlap the model names the common one; adjusted (1), it names each
    // as if both were as common, so that more of the rare class is found on a test of both
    // alike. Without the training labels' counts reaching the loss the two runs would be the same.
    void logitAdjustmentFindsMoreOfTheRareClass()
    {
        QTemporaryDir train, test;
        writeOverlappingClasses(train.path(), 480, 60, 7);
        writeOverlappingClasses(test.path(), 100, 100, 11);
        // The share of each class the model finds in the test, with logit adjustment tau.
        auto recalls = [&](double tau) {
            json doc = folderPipeline(train.path(), "all", 8, "off", 20, 30);
            for (auto &n : doc["nodes"]) {
                if (n["id"] == "test_data") {
                    n["params"]["path"] = test.path().toStdString();
                    n["params"]["subset"] = "all";
                }
                if (n["id"] == "normalize" || n["id"] == "normalize_test")
                    n["params"] = {{"mean", 0.47}, {"std", 0.15}};
                if (n["id"] == "fc1") n["params"]["out_features"] = 16;
                if (n["id"] == "fc2") n["params"]["out_features"] = 8;
                if (n["id"] == "loss") n["params"]["logit_adjustment"] = tau;
                if (n["id"] == "optimizer") n["params"]["lr"] = 0.03;
            }
            Collect c;
            auto r = runDoc(doc, "overlap.json", 2, 1, c);
            if (!r.ok()) qFatal("%s", r.error().str().c_str());
            const exec::EvaluationDetail &d = c.lastDetail.value();
            const int32_t common = d.classNames[0] == "common" ? 0 : 1, rare = 1 - common;
            return std::pair{double(d.count(common, common)) / 100.0,
                             double(d.count(rare, rare)) / 100.0};
        };
        const auto [common0, rare0] = recalls(0.0);
        const auto [common1, rare1] = recalls(1.0);
        const QString seen = QString("common %1 -> %2, rare %3 -> %4")
                                 .arg(common0)
                                 .arg(common1)
                                 .arg(rare0)
                                 .arg(rare1);
        qInfo("%s", qPrintable(seen));
        // Unadjusted, most of the overlap goes to the common class: the line near 135.6, all
        // of it found and 60% of the rare one (as seen: 0.98 and 0.67).
        QVERIFY2(common0 >= 0.93 && rare0 <= 0.75, qPrintable(seen));
        // Adjusted, the line moves to the overlap's middle, 120: 87.5% of each (0.87, 0.84).
        QVERIFY2(rare1 >= rare0 + 0.12 && common1 < common0, qPrintable(seen));
        QVERIFY2(common1 >= 0.75 && rare1 >= 0.75, qPrintable(seen));
    }

    // A folder larger than its budget: the first samples that fit are held, the others decoded
    // again on the workers each time; the batches are the same bytes as when everything is held,
    // for any number of workers and from a resumed batch, and a file that changes under the run
    // is named.
    void dataLargerThanTheBudgetIsStreamedWithTheSameBatches()
    {
        QTemporaryDir dir;
        writeColourClasses(dir.path(), 20);
        writeBytes(dir.filePath("rust/10b.png"), "not a png"); // among the held files
        ImageFilesOptions o = options(16, 16, true);
        auto all = loadImageFolder(dir.path().toStdString(), o);
        QVERIFY2(all.ok(), all.ok() ? "" : all.error().message.c_str());
        QVERIFY(!all->streaming());
        QCOMPARE(all->count, int64_t(40));
        QCOMPARE(all->pixels.size(), size_t(40 * 16 * 16 * 3));

        o.cacheBytes = 15 * 16 * 16 * 3 + 100; // room for 15 samples
        auto part = loadImageFolder(dir.path().toStdString(), o);
        QVERIFY2(part.ok(), part.ok() ? "" : part.error().message.c_str());
        QVERIFY(part->streaming());
        QCOMPARE(part->count, int64_t(40));
        QCOMPARE(part->labels, all->labels);
        QCOMPARE(part->skipped.size(), size_t(1));
        // The broken file is one of the first 15 in file order: 14 samples held.
        QCOMPARE(part->held, int64_t(14));
        QCOMPARE(part->pixels.size(), size_t(14 * 16 * 16 * 3));
        QVERIFY(part->pixels.size() <= size_t(o.cacheBytes));
        QCOMPARE(int64_t(std::count(part->row.begin(), part->row.end(), -1)), int64_t(26));
        for (int64_t i = 0; i < 40; ++i)
            if (part->isHeld(i))
                QVERIFY(std::equal(part->sample(i), part->sample(i) + 768, all->sample(i)));

        auto held = std::make_shared<const ImageDataset>(std::move(all).value());
        auto streamed = std::make_shared<const ImageDataset>(std::move(part).value());
        const auto want = batchesOf(held, 1, 2);
        std::optional<FlowStats> stats;
        for (int workers : {1, 3}) {
            const auto got = batchesOf(streamed, workers, 2, &stats);
            QCOMPARE(got.size(), want.size());
            for (size_t b = 0; b < want.size(); ++b) {
                QVERIFY2(got[b].first == want[b].first, qPrintable(QString("batch %1").arg(b)));
                QCOMPARE(got[b].second, want[b].second);
            }
            QCOMPARE(stats->sourceSamples, int64_t(40));
            QCOMPARE(stats->sourceHeld, int64_t(14));
            QCOMPARE(stats->sourceHits, int64_t(2 * 14)); // two epochs over every sample
            QCOMPARE(stats->sourceDecoded, int64_t(2 * 26));
            QCOMPARE(stats->cacheSamples, int64_t(0)); // no float cache past the budget
            // The workers' time in decoding is counted, as a part of the source's; none in
            // reading a disk cache, as there is none.
            QVERIFY(stats->sourceDecodeSeconds > 0);
            QVERIFY(stats->sourceDecodeSeconds <= stats->stages.at(0).busySeconds);
            QCOMPARE(stats->sourceDiskSeconds, 0.0);
        }
        // A resumed epoch: batch 3 of epoch 1 onwards.
        const auto resumed = batchesOf(streamed, 2, 1, nullptr, 1, 3);
        const size_t perEpoch = want.size() / 2;
        QCOMPARE(resumed.size(), perEpoch - 3);
        for (size_t b = 0; b < resumed.size(); ++b)
            QVERIFY(resumed[b].first == want[perEpoch + 3 + b].first);

        // A file not held that is replaced by another picture (which would decode without
        // complaint), or goes away: the batch that needs it fails, naming it.
        const auto firstStreamed = size_t(
            std::find(streamed->row.begin(), streamed->row.end(), -1) - streamed->row.begin());
        const std::string replaced = streamed->paths[firstStreamed];
        const std::string gone = streamed->paths[firstStreamed + 1];
        QVERIFY(QFile::remove(QString::fromStdString(replaced)));
        save(solid(20, 20, Qt::green), QString::fromStdString(replaced));
        QVERIFY(QFile::remove(QString::fromStdString(gone)));
        DataFlowOptions fo;
        fo.batchSize = 1;
        fo.shuffle = false;
        auto flow = DataFlow::create(streamed, {}, fo);
        QVERIFY(flow.ok());
        const std::pair<std::string, std::string> failures[] = {
            {replaced, "was modified after the run read it"}, {gone, "no such file"}};
        for (size_t k = 0; k < 2; ++k) {
            flow.value()->startEpoch(0, int64_t(firstStreamed + k));
            auto b = flow.value()->next();
            QVERIFY(!b.ok());
            const std::string &m = b.error().message;
            QVERIFY2(m.find(failures[k].first) != std::string::npos &&
                         m.find(failures[k].second) != std::string::npos &&
                         m.find("changed while the run was reading it") != std::string::npos,
                     m.c_str());
        }
        flow.value()->startEpoch(0, int64_t(firstStreamed - 1)); // a held sample is still fine
        QVERIFY(flow.value()->next().ok());
    }

    // Recordings stream the same way (float samples).
    void recordingsLargerThanTheBudgetAreStreamed()
    {
        QTemporaryDir dir;
        writeTones(dir.path());
        AudioFilesOptions o = toneOptions();
        auto all = loadAudioFolder(dir.path().toStdString(), o);
        QVERIFY2(all.ok(), all.ok() ? "" : all.error().message.c_str());
        o.cacheBytes = 5 * 800 * int64_t(sizeof(float));
        auto part = loadAudioFolder(dir.path().toStdString(), o);
        QVERIFY2(part.ok(), part.ok() ? "" : part.error().message.c_str());
        QVERIFY(part->streaming() && part->floatSamples());
        QCOMPARE(part->held, int64_t(5));
        QCOMPARE(part->values.size(), size_t(5 * 800));
        std::vector<float> a(800), b(800);
        for (int64_t i = 0; i < 12; ++i) {
            QVERIFY(readSample(*all, i, a.data()).ok());
            QVERIFY(readSample(*part, i, b.data()).ok());
            QVERIFY2(a == b, qPrintable(QString("recording %1").arg(i)));
        }
    }

    // The cache_mb parameter end to end: a run over a folder larger than 1 MB with cache_mb = 1
    // (and no disk cache) says that it streams, decodes on the workers, and learns as well.
    void aRunStreamsAFolderLargerThanCacheMb()
    {
        QTemporaryDir dir;
        writeColourClasses(dir.path(), 40); // 80 files, 64 x 64 x 3 = 12 KB each: 983 KB
        for (int i = 40; i < 50; ++i)       // and 20 more: 1.2 MB in all
            for (const char *c : {"rust", "steel"})
                QFile::copy(dir.filePath(QString("%1/%2.png").arg(c).arg(i - 40)),
                            dir.filePath(QString("%1/%2.png").arg(c).arg(i)));
        const json doc = folderPipeline(dir.path(), "all", 64, "off", 3, 10);
        Collect c;
        auto r = runDoc(doc, "streamed.json", 2, 2, c);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        bool noted = false;
        for (const std::string &n : c.notes)
            noted = noted || (n.rfind("train_data: 100 samples (1 MB decoded) are more than its "
                                      "cache_mb allows: 85 (1 MB) are held",
                                      0) == 0);
        QVERIFY2(noted, c.notes.empty() ? "no note" : c.notes.front().c_str());
        QVERIFY(c.lastFlow);
        QCOMPARE(c.lastFlow->sourceSamples, int64_t(100));
        QCOMPARE(c.lastFlow->sourceHeld, int64_t(85));
        QVERIFY(c.lastFlow->sourceDecoded > 0);
        QVERIFY(c.lastFlow->sourceHitRate > 0.5 && c.lastFlow->sourceHitRate < 1);
        QVERIFY2(c.lastAccuracy >= 0.9f, qPrintable(QString::number(c.lastAccuracy)));
    }

    // A run that waits on its source decoding files says so: the shares of the workers' time
    // in the dataflow reports, and the cause beside the bottleneck in the summary and the log.
    void aDecodeBoundRunSaysSo()
    {
        QTemporaryDir dir;
        // 80 noisy pictures of 400 x 400 (decoding one takes milliseconds, where the chain's
        // other stages take microseconds a sample), read at 96 x 96: 2.2 MB, past cache_mb 1.
        writeColourClasses(dir.path(), 40, 400);
        json doc = folderPipeline(dir.path(), "all", 96, "off", 2, 10);
        for (auto &n : doc["nodes"])
            if (n["id"] == "fc1") n["params"]["out_features"] = 2; // a model that waits on data
        Collect c;
        auto r = runDoc(doc, "decode_bound.json", 1, 1, c);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        QCOMPARE(r->bottleneck, std::string("train_data"));
        QCOMPARE(r->bottleneckCause, std::string("decoding"));
        QVERIFY(r->dataWaitShare > 0.05);
        bool said = false, reported = false;
        for (const std::string &m : c.infos)
            said =
                said || m.find("bottleneck: train_data (decoding its files)") != std::string::npos;
        for (const auto &f : c.flows) {
            QCOMPARE(f.sourceDiskShare, 0.0);
            reported = reported || (f.sourceDecodeShare > 0 && f.bottleneckCause == "decoding");
        }
        QVERIFY2(said, c.infos.empty() ? "no information" : c.infos.back().c_str());
        QVERIFY(reported);
    }

    // The disk cache of decoded samples: written while a data set larger than its budget is
    // loaded, then read instead of decoding (on the workers, and by the next load, which
    // decodes nothing); the batches are the same bytes as from memory; a changed file makes
    // another cache; damage is found, the cache removed and the files decoded again.
    void aDiskCacheServesStreamedSamplesAndLaterLoads()
    {
        QTemporaryDir dir, cacheDir;
        writeColourClasses(dir.path(), 20);
        writeBytes(dir.filePath("rust/10b.png"), "not a png");
        ImageFilesOptions o = options(16, 16, true);
        auto all = loadImageFolder(dir.path().toStdString(), o);
        QVERIFY(all.ok());
        const auto held = std::make_shared<const ImageDataset>(std::move(all).value());
        const auto want = batchesOf(held, 1, 2);

        o.cacheBytes = 15 * 16 * 16 * 3 + 100; // room for 15 samples: the others stream
        o.diskCache = DiskCacheOptions::Mode::Auto;
        o.diskCacheDir = cacheDir.path().toStdString();
        auto cacheFiles = [&] {
            return QDir(cacheDir.path()).entryList({"*.samples"}, QDir::Files, QDir::Name);
        };
        auto load = [&]() -> std::shared_ptr<const ImageDataset> {
            auto ds = loadImageFolder(dir.path().toStdString(), o);
            if (!ds.ok()) qFatal("%s", ds.error().message.c_str());
            return std::make_shared<const ImageDataset>(std::move(ds).value());
        };
        auto sameBatches = [&](const std::shared_ptr<const ImageDataset> &ds, int workers,
                               std::optional<FlowStats> *stats = nullptr) {
            const auto got = batchesOf(ds, workers, 2, stats);
            if (got.size() != want.size()) return false;
            for (size_t b = 0; b < want.size(); ++b)
                if (got[b] != want[b]) return false;
            return true;
        };

        const auto first = load();
        QVERIFY2(first->diskNote.rfind("wrote the decoded samples to the disk cache ", 0) == 0,
                 first->diskNote.c_str());
        QVERIFY(first->disk);
        QCOMPARE(cacheFiles().size(), 1);
        QCOMPARE(first->held, int64_t(14));
        QCOMPARE(first->skipped.size(), size_t(1));
        std::optional<FlowStats> stats;
        for (int workers : {1, 3}) {
            QVERIFY(sameBatches(first, workers, &stats));
            QCOMPARE(stats->sourceHits, int64_t(2 * 14));
            QCOMPARE(stats->sourceFromDisk, int64_t(2 * 26)); // nothing decoded on the workers
            QCOMPARE(stats->sourceDecoded, int64_t(0));
            QVERIFY(stats->sourceDiskSeconds > 0);
            QCOMPARE(stats->sourceDecodeSeconds, 0.0);
        }

        // The next load reads the cache and decodes nothing: a file overwritten with another
        // picture of the same size and given back its time (what the key cannot see) still
        // gives its old sample.
        const QString held0 = dir.filePath("rust/0.png"), streamed = dir.filePath("steel/19.png");
        for (const QString &f : {held0, streamed}) {
            const std::filesystem::path path = f.toStdString();
            const auto when = std::filesystem::last_write_time(path); // to the nanosecond
            QFile file(f);
            QVERIFY(file.open(QIODevice::ReadWrite));
            const qint64 size = file.size();
            QByteArray other = file.readAll();
            std::reverse(other.begin() + 60, other.end() - 60); // same size, not the picture
            file.seek(0);
            file.write(other);
            file.close();
            std::filesystem::last_write_time(path, when);
            QCOMPARE(QFileInfo(f).size(), size);
            QVERIFY(!decodeImageFile(path.string(), o).ok());
        }
        const auto second = load();
        QVERIFY2(second->diskNote.rfind("read the decoded samples from the disk cache ", 0) == 0,
                 second->diskNote.c_str());
        QCOMPARE(second->count, first->count);
        QCOMPARE(second->skipped.size(), size_t(1));
        QCOMPARE(second->skipped[0].reason, first->skipped[0].reason);
        QVERIFY(sameBatches(second, 2));

        // A file whose time changes makes another key: decoded again, and another cache.
        QVERIFY(QFile::remove(held0));
        save(solid(20, 20, Qt::red), held0);
        const auto third = load();
        QVERIFY2(third->diskNote.rfind("wrote ", 0) == 0, third->diskNote.c_str());
        QCOMPARE(cacheFiles().size(), 2);
        // rust/0.png is sample 0 (classes interleaved, each in path order), planar RGB.
        QVERIFY(std::all_of(third->sample(0), third->sample(0) + 256,
                            [](uint8_t v) { return v == 255; }));
        QVERIFY(std::all_of(third->sample(0) + 256, third->sample(0) + 768,
                            [](uint8_t v) { return v == 0; }));

        // Damage to a streamed sample: found when it is read, the file removed, the sample
        // decoded from its file instead (the same batches: the decoders are deterministic).
        QFile::remove(streamed);
        QFile::copy(dir.filePath("steel/18.png"), streamed);
        const auto fourth = load();
        QVERIFY2(fourth->diskNote.rfind("wrote ", 0) == 0, fourth->diskNote.c_str());
        const QString cachePath = QString::fromStdString(fourth->disk->path());
        auto flipByte = [](const QString &path, qint64 at) {
            QFile f(path);
            if (!f.open(QIODevice::ReadWrite) || !f.seek(at)) return false;
            char c = 0;
            f.getChar(&c);
            f.seek(at);
            return f.putChar(char(c ^ 0x5A));
        };
        const int64_t lastSlot = int64_t(fourth->files.size()) - 1; // streamed, never held
        QVERIFY(flipByte(cachePath, 4096 + lastSlot * 768 + 300));
        std::vector<float> fromCache(768), decoded(768);
        const int64_t lastSample = fourth->count - 1;
        QVERIFY(readSample(*fourth, lastSample, fromCache.data()).ok());
        QVERIFY(fourth->disk->damaged());
        QVERIFY(!QFile::exists(cachePath));
        auto fresh = loadImageFolder(dir.path().toStdString(), options(16, 16, true));
        QVERIFY(fresh.ok());
        QVERIFY(readSample(*fresh, lastSample, decoded.data()).ok());
        QVERIFY(fromCache == decoded);

        // Damage to a held sample, or a cache cut short: found when it is opened, removed, and
        // the files decoded again (and the cache written again).
        const auto fifth = load();
        QVERIFY2(fifth->diskNote.rfind("wrote ", 0) == 0, fifth->diskNote.c_str());
        QVERIFY(flipByte(cachePath, 4096 + 10));
        const auto sixth = load();
        QVERIFY2(sixth->diskNote.rfind("the cache of decoded samples " + cachePath.toStdString() +
                                           " was damaged (removed): the files were decoded "
                                           "again; wrote ",
                                       0) == 0,
                 sixth->diskNote.c_str());
        // The same batches as the folder decoded now, with everything held and no cache (the
        // files were changed above, so not `want`).
        const auto decodedNow = std::make_shared<const ImageDataset>(std::move(fresh).value());
        QVERIFY(batchesOf(sixth, 2, 2) == batchesOf(decodedNow, 1, 2));
        const auto seventh = load(); // the cache the sixth load wrote again
        QVERIFY2(seventh->diskNote.rfind("read ", 0) == 0, seventh->diskNote.c_str());
        {
            QFile f(cachePath);
            QVERIFY(f.resize(f.size() - 1000));
        }
        const auto eighth = load();
        QVERIFY2(eighth->diskNote.find("(cut short or grown); removed; wrote ") !=
                     std::string::npos,
                 eighth->diskNote.c_str());
        QVERIFY(QFile::exists(cachePath)); // written again

        // off: neither read nor written; on: written when everything fits too.
        QVERIFY(QDir(cacheDir.path()).removeRecursively());
        o.diskCache = DiskCacheOptions::Mode::Off;
        QVERIFY(load()->diskNote.empty());
        QCOMPARE(cacheFiles().size(), 0);
        o.cacheBytes = 0;
        o.diskCache = DiskCacheOptions::Mode::Auto;
        QVERIFY(load()->diskNote.empty()); // it fits: nothing to write
        o.diskCache = DiskCacheOptions::Mode::On;
        QVERIFY(load()->diskNote.rfind("wrote ", 0) == 0);
        o.diskCache = DiskCacheOptions::Mode::Auto;
        const auto fits = load();
        QVERIFY2(fits->diskNote.rfind("read ", 0) == 0, fits->diskNote.c_str());
        QVERIFY(!fits->streaming());
    }

    // Recordings too: float samples from the disk cache, the same values as decoded.
    void recordingsStreamFromTheDiskCache()
    {
        QTemporaryDir dir, cacheDir;
        writeTones(dir.path());
        AudioFilesOptions o = toneOptions();
        auto all = loadAudioFolder(dir.path().toStdString(), o);
        QVERIFY(all.ok());
        o.cacheBytes = 5 * 800 * int64_t(sizeof(float));
        o.diskCache = DiskCacheOptions::Mode::Auto;
        o.diskCacheDir = cacheDir.path().toStdString();
        for (const char *expect : {"wrote ", "read "}) {
            auto part = loadAudioFolder(dir.path().toStdString(), o);
            QVERIFY(part.ok());
            QVERIFY2(part->diskNote.rfind(expect, 0) == 0, part->diskNote.c_str());
            std::vector<float> a(800), b(800);
            for (int64_t i = 0; i < 12; ++i) {
                SampleOrigin from = SampleOrigin::Memory;
                QVERIFY(readSample(*all, i, a.data()).ok());
                QVERIFY(readSample(*part, i, b.data(), &from).ok());
                QVERIFY2(a == b, qPrintable(QString("recording %1").arg(i)));
                QCOMPARE(from, i < 5 ? SampleOrigin::Memory : SampleOrigin::DiskCache);
            }
        }
        // Other decode settings (another length) are another cache.
        o.seconds = 0.05;
        auto shorter = loadAudioFolder(dir.path().toStdString(), o);
        QVERIFY(shorter.ok());
        QVERIFY2(shorter->diskNote.rfind("wrote ", 0) == 0, shorter->diskNote.c_str());
        QCOMPARE(QDir(cacheDir.path()).entryList({"*.samples"}, QDir::Files).size(), 2);
    }

    // `flowbench-cli cache PIPELINE` writes every file source's cache; a run then streams from
    // it and says so, and `cache --clear` removes them.
    void theCacheCommandPreparesARun()
    {
        QTemporaryDir dir, cacheDir, runs;
        writeColourClasses(dir.path(), 30);
        const json doc = folderPipeline(dir.path(), "train", 32, "auto", 2, 8);
        const QString pipeline = dir.filePath("cached.json");
        {
            QFile f(pipeline);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(doc.dump(2)));
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FLOWBENCH_CACHE_DIR", cacheDir.path());
        auto cli = [&](const QStringList &args) {
            QProcess p;
            p.setProcessEnvironment(env);
            p.start(FLOWBENCH_CLI, args);
            p.waitForFinished(300000);
            const QString out = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
            return std::make_tuple(p.exitCode(),
                                   QJsonDocument::fromJson(out.section('\n', -1).toUtf8()).object(),
                                   QString::fromUtf8(p.readAllStandardError()));
        };
        for (const char *expect : {"written", "reused"}) {
            const auto [code, last, err] = cli({"cache", pipeline});
            QVERIFY2(code == 0, qPrintable(err));
            const QJsonArray sources = last["sources"].toArray();
            QCOMPARE(sources.size(), 2);
            for (const QJsonValue &v : sources) {
                const QJsonObject s = v.toObject();
                QCOMPARE(s["status"].toString(), QString(expect));
                QVERIFY(QFile::exists(s["path"].toString()));
                QVERIFY(s["bytes"].toDouble() > 32 * 32 * 3 * s["samples"].toDouble());
            }
            QCOMPARE(sources[0].toObject()["samples"].toInt() +
                         sources[1].toObject()["samples"].toInt(),
                     60);
        }
        QCOMPARE(QDir(cacheDir.path()).entryList({"*.samples"}, QDir::Files).size(), 2);

        // The run loads both sources from their caches instead of decoding a file, and says so
        // (their samples fit in cache_mb: they are held in memory as they would be decoded).
        const auto [code, last, err] = cli({"run", pipeline, "--out", runs.filePath("run")});
        QVERIFY2(code == 0, qPrintable(err));
        QCOMPARE(last["status"].toString(), QString("ok"));
        QVERIFY2(err.count("read the decoded samples from the disk cache") == 2, qPrintable(err));

        const auto [cleared, done, clearErr] = cli({"cache", "--clear"});
        QCOMPARE(cleared, 0);
        QVERIFY(done["freed_bytes"].toDouble() > 0);
        QCOMPARE(QDir(cacheDir.path()).entryList({"*.samples"}, QDir::Files).size(), 0);

        // A source that cannot be read is an error naming it, exit 1.
        QVERIFY(QDir(dir.path()).rename("rust", ".rust"));
        QVERIFY(QDir(dir.path()).rename("steel", ".steel"));
        const auto [badCode, bad, badErr] = cli({"cache", pipeline});
        QVERIFY(badCode != 0);
        QCOMPARE(bad["status"].toString(), QString("error"));
        QVERIFY2(badErr.contains("train_data"), qPrintable(badErr));
    }
};

QTEST_GUILESS_MAIN(TestImageFiles)
#include "test_image_files.moc"
