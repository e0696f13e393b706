#include "core/data/dataset.h"
#include "core/data/idx.h"

#include <QFile>
#include <QTemporaryDir>
#include "file_error_check.h"

#include <QtTest>

#include <zlib.h>

#include <cstring>
#include <numeric>

using namespace fb;
using namespace fb::data;

namespace {

const char *kFashionDir = "/usr/share/datasets/fashion-mnist";

QByteArray idxFile(uint8_t type, const std::vector<uint32_t> &dims, const QByteArray &data)
{
    QByteArray out;
    out.append(char(0)).append(char(0)).append(char(type)).append(char(dims.size()));
    for (uint32_t d : dims) {
        for (int s = 24; s >= 0; s -= 8)
            out.append(char((d >> s) & 0xff));
    }
    return out + data;
}

QByteArray ramp(int n, int start = 0)
{
    QByteArray b(n, 0);
    for (int i = 0; i < n; ++i)
        b[i] = char((start + i * 7) & 0xff);
    return b;
}

// Incompressible-looking bytes, so a gzip stream of them has a real body to corrupt.
QByteArray noise(int n, uint32_t seed)
{
    QByteArray b(n, 0);
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = char(seed >> 24);
    }
    return b;
}

void writePlain(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray gzipped(const QByteArray &bytes, const QString &scratch)
{
    gzFile gz = gzopen(scratch.toLocal8Bit().constData(), "wb");
    if (!gz) return {};
    gzwrite(gz, bytes.constData(), unsigned(bytes.size()));
    gzclose(gz);
    QFile f(scratch);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

std::string str(const QString &s)
{
    return s.toStdString();
}

} // namespace

class TestIdx : public QObject {
    Q_OBJECT

private slots:
    void readsPlainAndGzip_data()
    {
        QTest::addColumn<bool>("gz");
        QTest::newRow("plain") << false;
        QTest::newRow("gzip") << true;
    }
    void readsPlainAndGzip()
    {
        QFETCH(bool, gz);
        QTemporaryDir dir;
        const QByteArray data = ramp(2 * 3 * 4);
        QByteArray file = idxFile(0x08, {2, 3, 4}, data);
        if (gz) file = gzipped(file, dir.filePath("scratch.gz"));
        QVERIFY(!file.isEmpty());
        if (gz) QCOMPARE(uint8_t(file[0]), uint8_t(0x1f)); // really compressed
        const QString path = dir.filePath(gz ? "a.idx.gz" : "a.idx");
        writePlain(path, file);

        Result<IdxArray> r = readIdx(str(path));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        QCOMPARE(int(r->typeCode), 0x08);
        QCOMPARE(r->dims, (std::vector<int64_t>{2, 3, 4}));
        QCOMPARE(r->count(), int64_t(2));
        QCOMPARE(r->bytes.size(), size_t(data.size()));
        QVERIFY(std::memcmp(r->bytes.data(), data.constData(), size_t(data.size())) == 0);
    }

    void multiByteTypesInHostOrder()
    {
        QTemporaryDir dir;
        // int32 values 1, -2, 0x01020304 big-endian in the file.
        QByteArray data;
        for (int32_t v : {1, -2, 0x01020304}) {
            const uint32_t u = uint32_t(v);
            for (int s = 24; s >= 0; s -= 8)
                data.append(char((u >> s) & 0xff));
        }
        const QString path = dir.filePath("i32.idx");
        writePlain(path, idxFile(0x0C, {3}, data));
        Result<IdxArray> r = readIdx(str(path));
        QVERIFY(r.ok());
        QCOMPARE(int(r->typeCode), 0x0C);
        QCOMPARE(r->bytes.size(), size_t(12));
        int32_t v[3];
        std::memcpy(v, r->bytes.data(), 12);
        QCOMPARE(v[0], 1);
        QCOMPARE(v[1], -2);
        QCOMPARE(v[2], 0x01020304);

        // float 1.5f is 0x3FC00000.
        const QString fpath = dir.filePath("f32.idx");
        writePlain(fpath, idxFile(0x0D, {1}, QByteArray("\x3f\xc0\x00\x00", 4)));
        Result<IdxArray> f = readIdx(str(fpath));
        QVERIFY(f.ok());
        float x;
        std::memcpy(&x, f->bytes.data(), 4);
        QCOMPARE(x, 1.5f);
    }

    void rejectsBadFiles_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<bool>("gz");
        QTest::addColumn<QString>("fragment");
        const QByteArray good = idxFile(0x08, {2, 3}, ramp(6));
        for (bool gz : {false, true}) {
            const char *k = gz ? "gz " : "plain ";
            auto row = [&](const char *name) {
                return &QTest::newRow((QByteArray(k) + name).constData());
            };
            *row("empty") << QByteArray() << gz << "empty";
            *row("truncated header") << good.left(3) << gz << "truncated header";
            *row("truncated dims") << good.left(9) << gz << "truncated header";
            *row("truncated data") << good.left(good.size() - 2) << gz << "need 6 bytes, got 4";
            *row("trailing garbage") << good + "xyz" << gz << "trailing data";
            *row("bad magic") << QByteArray("\x01\x00\x08\x01\x00\x00\x00\x01\x05", 9) << gz
                              << "bad magic";
            *row("bad type") << idxFile(0x07, {1}, "a") << gz << "element type code 0x07";
            *row("zero dims") << idxFile(0x08, {}, "") << gz << "number of dimensions 0";
            *row("five dims") << idxFile(0x08, {1, 1, 1, 1, 1}, "a") << gz
                              << "number of dimensions 5";
            *row("absurd dims") << idxFile(0x08, {65536, 65536, 2}, "abc") << gz << "too large";
            *row("overflowing dims")
                << idxFile(0x08, {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, "") << gz
                << "too large";
            *row("absurd int32 dims") << idxFile(0x0C, {1u << 30, 4}, "abcd") << gz << "too large";
        }
    }
    void rejectsBadFiles()
    {
        QFETCH(QByteArray, content);
        QFETCH(bool, gz);
        QFETCH(QString, fragment);
        QTemporaryDir dir;
        const QString path = dir.filePath(gz ? "bad.idx.gz" : "bad.idx");
        writePlain(path, gz ? gzipped(content, dir.filePath("scratch.gz")) : content);
        Result<IdxArray> r = readIdx(str(path));
        QVERIFY(!r.ok());
        checkFileError(r.error(), path, fragment);
    }

    void rejectsCorruptGzip()
    {
        QTemporaryDir dir;
        const QByteArray file = idxFile(0x08, {64, 1024}, noise(64 * 1024, 7));
        const QByteArray gz = gzipped(file, dir.filePath("scratch.gz"));
        QVERIFY(gz.size() > 1000);
        const QString path = dir.filePath("corrupt.gz");

        // A valid gzip header followed by garbage instead of a deflate stream.
        writePlain(path, gz.left(10) + noise(500, 3));
        Result<IdxArray> r = readIdx(str(path));
        QVERIFY(!r.ok());
        checkFileError(r.error(), path, "gzip");

        // Single bytes flipped in the middle of the compressed body: inflate either fails, or
        // the CRC check or the length catches it.
        for (int i = 1; i <= 9; ++i) {
            QByteArray flipped = gz;
            const int at = gz.size() * i / 10;
            flipped[at] = char(flipped[at] ^ 0x5a);
            writePlain(path, flipped);
            Result<IdxArray> f = readIdx(str(path));
            QVERIFY2(!f.ok(), qPrintable(QString("flip at %1 not detected").arg(at)));
            QCOMPARE(QString::fromStdString(f.error().file), path);
        }
    }

    // Every prefix of a valid file, plain or compressed, is an error, never a crash or success.
    void everyTruncationFails()
    {
        QTemporaryDir dir;
        const QByteArray file = idxFile(0x08, {4, 50}, noise(200, 11));
        const QByteArray gz = gzipped(file, dir.filePath("scratch.gz"));
        const QString path = dir.filePath("cut");
        for (const QByteArray &whole : {file, gz}) {
            for (int n = 0; n < whole.size(); ++n) {
                writePlain(path, whole.left(n));
                Result<IdxArray> r = readIdx(str(path));
                QVERIFY2(!r.ok(), qPrintable(QString("prefix of %1 bytes accepted").arg(n)));
                QCOMPARE(QString::fromStdString(r.error().file), path);
            }
            writePlain(path, whole);
            QVERIFY(readIdx(str(path)).ok());
        }
    }

    void missingFileAndDirectory()
    {
        QTemporaryDir dir;
        const QString missing = dir.filePath("nope-idx1-ubyte.gz");
        Result<IdxArray> r = readIdx(str(missing));
        QVERIFY(!r.ok());
        checkFileError(r.error(), missing, "cannot open");

        Result<IdxArray> d = readIdx(str(dir.path()));
        QVERIFY(!d.ok());
        checkFileError(d.error(), dir.path(), "directory");
    }

    void loadsImagesAndLabels()
    {
        QTemporaryDir dir;
        const QString images = dir.filePath("img.idx"), labels = dir.filePath("lbl.idx.gz");
        writePlain(images, idxFile(0x08, {5, 2, 3}, ramp(30)));
        writePlain(labels, gzipped(idxFile(0x08, {5}, QByteArray("\x03\x00\x07\x01\x02", 5)),
                                   dir.filePath("scratch.gz")));

        Result<ImageDataset> all = loadIdxImages(str(images), str(labels), 0);
        QVERIFY2(all.ok(), all.ok() ? "" : all.error().str().c_str());
        QCOMPARE(all->count, int64_t(5));
        QCOMPARE(all->channels, int64_t(1));
        QCOMPARE(all->height, int64_t(2));
        QCOMPARE(all->width, int64_t(3));
        QCOMPARE(all->classes, 8);
        QCOMPARE(all->labels, (std::vector<int32_t>{3, 0, 7, 1, 2}));
        const QByteArray px = ramp(30);
        QCOMPARE(all->pixels, std::vector<uint8_t>(px.begin(), px.end()));

        // The limit keeps the first samples; the class count still comes from the whole file.
        Result<ImageDataset> two = loadIdxImages(str(images), str(labels), 2);
        QVERIFY(two.ok());
        QCOMPARE(two->count, int64_t(2));
        QCOMPARE(two->labels, (std::vector<int32_t>{3, 0}));
        QCOMPARE(two->pixels, std::vector<uint8_t>(px.begin(), px.begin() + 12));
        QCOMPARE(two->classes, 8);

        Result<ImageDataset> more = loadIdxImages(str(images), str(labels), 100);
        QVERIFY(more.ok());
        QCOMPARE(more->count, int64_t(5));

        QVERIFY(!loadIdxImages(str(images), str(labels), -1).ok());
    }

    void loadsFourDimensionalImages()
    {
        QTemporaryDir dir;
        const QString images = dir.filePath("img.idx"), labels = dir.filePath("lbl.idx");
        writePlain(images, idxFile(0x08, {2, 3, 2, 2}, ramp(24)));
        writePlain(labels, idxFile(0x08, {2}, QByteArray("\x01\x00", 2)));
        Result<ImageDataset> r = loadIdxImages(str(images), str(labels), 0);
        QVERIFY(r.ok());
        QCOMPARE(r->channels, int64_t(3));
        QCOMPARE(r->height, int64_t(2));
        QCOMPARE(r->width, int64_t(2));
        QCOMPARE(r->sampleSize(), int64_t(12));
        QCOMPARE(r->classes, 2);
    }

    void countMismatchNamesBothFiles()
    {
        QTemporaryDir dir;
        const QString images = dir.filePath("img.idx"), labels = dir.filePath("lbl.idx");
        writePlain(images, idxFile(0x08, {5, 2, 3}, ramp(30)));
        writePlain(labels, idxFile(0x08, {4}, QByteArray(4, 1)));
        Result<ImageDataset> r = loadIdxImages(str(images), str(labels), 0);
        QVERIFY(!r.ok());
        const QString text = QString::fromStdString(r.error().str());
        QVERIFY2(text.contains(images) && text.contains(labels), qPrintable(text));
        QVERIFY2(text.contains("5 images") && text.contains("4 labels"), qPrintable(text));
    }

    void rejectsWrongShapesAndTypes_data()
    {
        QTest::addColumn<QByteArray>("images");
        QTest::addColumn<QByteArray>("labels");
        QTest::addColumn<bool>("blameImages");
        QTest::addColumn<QString>("fragment");
        const QByteArray goodLabels = idxFile(0x08, {2}, QByteArray(2, 0));
        const QByteArray goodImages = idxFile(0x08, {2, 2, 2}, ramp(8));
        QTest::newRow("2-d images")
            << idxFile(0x08, {2, 4}, ramp(8)) << goodLabels << true << "[N, H, W]";
        QTest::newRow("float images")
            << idxFile(0x0D, {2, 1, 1}, ramp(8)) << goodLabels << true << "unsigned bytes";
        QTest::newRow("2-d labels")
            << goodImages << idxFile(0x08, {2, 1}, QByteArray(2, 0)) << false << "[N]";
        QTest::newRow("int labels")
            << goodImages << idxFile(0x0C, {2}, QByteArray(8, 0)) << false << "unsigned bytes";
        QTest::newRow("no samples")
            << idxFile(0x08, {0, 2, 2}, "") << idxFile(0x08, {0}, "") << true << "no samples";
        QTest::newRow("corrupt labels") << goodImages << goodLabels.left(9) << false << "truncated";
    }
    void rejectsWrongShapesAndTypes()
    {
        QFETCH(QByteArray, images);
        QFETCH(QByteArray, labels);
        QFETCH(bool, blameImages);
        QFETCH(QString, fragment);
        QTemporaryDir dir;
        const QString ip = dir.filePath("img.idx"), lp = dir.filePath("lbl.idx");
        writePlain(ip, images);
        writePlain(lp, labels);
        Result<ImageDataset> r = loadIdxImages(str(ip), str(lp), 0);
        QVERIFY(!r.ok());
        checkFileError(r.error(), blameImages ? ip : lp, fragment);
    }

    void fashionMnistFileNames()
    {
        QTemporaryDir dir;
        const QByteArray tr = idxFile(0x08, {3, 2, 2}, ramp(12));
        const QByteArray te = idxFile(0x08, {1, 2, 2}, ramp(4));
        // Plain files only.
        writePlain(dir.filePath("train-images-idx3-ubyte"), tr);
        writePlain(dir.filePath("train-labels-idx1-ubyte"), idxFile(0x08, {3}, "\x01\x02\x03"));
        writePlain(dir.filePath("t10k-images-idx3-ubyte"), te);
        writePlain(dir.filePath("t10k-labels-idx1-ubyte"), idxFile(0x08, {1}, "\x04"));
        Result<ImageDataset> train = loadFashionMnist(str(dir.path()), "train", 0);
        QVERIFY2(train.ok(), train.ok() ? "" : train.error().str().c_str());
        QCOMPARE(train->count, int64_t(3));
        QCOMPARE(train->name, std::string("fashion-mnist/train"));
        Result<ImageDataset> test = loadFashionMnist(str(dir.path()), "test", 0);
        QVERIFY(test.ok());
        QCOMPARE(test->count, int64_t(1));
        QCOMPARE(test->labels, std::vector<int32_t>{4});

        // A .gz beside the plain file wins.
        writePlain(dir.filePath("train-labels-idx1-ubyte.gz"),
                   gzipped(idxFile(0x08, {3}, "\x09\x09\x09"), dir.filePath("scratch.gz")));
        Result<ImageDataset> gz = loadFashionMnist(str(dir.path()), "train", 0);
        QVERIFY(gz.ok());
        QCOMPARE(gz->labels, (std::vector<int32_t>{9, 9, 9}));

        // Missing files are named as expected, with the .gz name.
        QVERIFY(QFile::remove(dir.filePath("t10k-labels-idx1-ubyte")));
        Result<ImageDataset> missing = loadFashionMnist(str(dir.path()), "test", 0);
        QVERIFY(!missing.ok());
        checkFileError(missing.error(), dir.filePath("t10k-labels-idx1-ubyte.gz"), "not found");

        Result<ImageDataset> badSplit = loadFashionMnist(str(dir.path()), "validation", 0);
        QVERIFY(!badSplit.ok());
        QVERIFY(QString::fromStdString(badSplit.error().str()).contains("validation"));
    }

    void realFashionMnist()
    {
        if (!QFile::exists(QString(kFashionDir) + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)");
        Result<ImageDataset> train = loadFashionMnist(kFashionDir, "train", 0);
        QVERIFY2(train.ok(), train.ok() ? "" : train.error().str().c_str());
        QCOMPARE(train->count, int64_t(60000));
        QCOMPARE(train->channels, int64_t(1));
        QCOMPARE(train->height, int64_t(28));
        QCOMPARE(train->width, int64_t(28));
        QCOMPARE(train->classes, 10);
        QCOMPARE(train->pixels.size(), size_t(60000 * 28 * 28));
        std::vector<int> perClass(10, 0);
        for (int32_t l : train->labels)
            perClass[size_t(l)]++;
        QCOMPARE(perClass, std::vector<int>(10, 6000)); // Fashion-MNIST is balanced
        QCOMPARE(train->labels[0], 9);                  // the first image is an ankle boot
        QCOMPARE(std::accumulate(train->pixels.begin(), train->pixels.begin() + 784, 0), 76247);

        Result<ImageDataset> test = loadFashionMnist(kFashionDir, "test", 500);
        QVERIFY(test.ok());
        QCOMPARE(test->count, int64_t(500));
        QCOMPARE(test->classes, 10);
        QCOMPARE(test->labels[1], 2);
    }
};

QTEST_GUILESS_MAIN(TestIdx)
#include "test_idx.moc"
