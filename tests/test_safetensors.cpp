#include "core/io/safetensors.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include "file_error_check.h"

#include <QtTest>

#include <cstring>

using namespace fb;
using namespace fb::io;

namespace {

std::string str(const QString &s)
{
    return s.toStdString();
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

void writeAll(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray lengthPrefix(uint64_t n)
{
    QByteArray b(8, 0);
    for (int i = 0; i < 8; ++i)
        b[i] = char((n >> (8 * i)) & 0xff);
    return b;
}

// A file with the given header text and data section.
QByteArray rawFile(const QByteArray &header, const QByteArray &data)
{
    return lengthPrefix(uint64_t(header.size())) + header + data;
}

template <class T> Tensor filled(const Shape &shape, DType dtype, T start)
{
    Tensor t = Tensor::empty(shape, dtype);
    T *p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i)
        p[i] = T(start + T(i) * T(3));
    return t;
}

NamedTensors sampleTensors()
{
    NamedTensors t;
    t.emplace_back("conv1.weight", filled<float>({2, 1, 3, 3}, DType::F32, -1.25f));
    t.emplace_back("conv1.bias", filled<float>({2}, DType::F32, 0.5f));
    t.emplace_back("labels", filled<int32_t>({5}, DType::I32, -7));
    t.emplace_back("mask", filled<uint8_t>({2, 3, 1}, DType::U8, uint8_t(250)));
    t.emplace_back("step", filled<int64_t>({}, DType::I64, int64_t(1) << 40)); // a scalar
    t.emplace_back("half", filled<uint16_t>({3}, DType::F16, uint16_t(0x3c00)));
    t.emplace_back("bhalf", filled<uint16_t>({1, 3}, DType::BF16, uint16_t(0x3f80)));
    t.emplace_back("empty", Tensor::empty({0, 4}, DType::F32));
    return t;
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private slots:
    void roundTrip()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("model.safetensors");
        const NamedTensors tensors = sampleTensors();
        const std::map<std::string, std::string> meta{{"format", "flowbench.checkpoint"},
                                                      {"epoch", "3"},
                                                      {"note", "quotes \" and \\ survive"}};
        Status s = writeSafetensors(str(path), tensors, meta);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().str().c_str());
        QVERIFY(!QFile::exists(path + ".tmp"));

        Result<SafetensorsFile> r = readSafetensors(str(path));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        QCOMPARE(r->metadata, meta);
        QCOMPARE(r->tensors.size(), tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            const auto &[name, want] = tensors[i];
            const auto &[gotName, got] = r->tensors[i];
            QCOMPARE(gotName, name); // written order is kept
            QCOMPARE(got.dtype(), want.dtype());
            QCOMPARE(got.shape(), want.shape());
            QCOMPARE(got.bytes(), want.bytes());
            QVERIFY(std::memcmp(got.raw(), want.raw(), want.bytes()) == 0);
        }
        const Tensor *step = r->find("step");
        QVERIFY(step);
        QCOMPARE(step->shape().rank(), 0);
        QCOMPARE(*step->data<int64_t>(), int64_t(1) << 40);
        QCOMPARE(r->find("conv1.bias")->f32()[1], 3.5f);
        QVERIFY(!r->find("missing"));

        // Overwriting replaces the file.
        NamedTensors one{{"x", filled<float>({1}, DType::F32, 9.0f)}};
        QVERIFY(writeSafetensors(str(path), one).ok());
        Result<SafetensorsFile> again = readSafetensors(str(path));
        QVERIFY(again.ok());
        QCOMPARE(again->tensors.size(), size_t(1));
        QVERIFY(again->metadata.empty());
        QCOMPARE(again->find("x")->f32()[0], 9.0f);
    }

    void headerIsAlignedJson()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("h.safetensors");
        const NamedTensors tensors = sampleTensors();
        QVERIFY(writeSafetensors(str(path), tensors, {{"epoch", "3"}}).ok());
        const QByteArray file = readAll(path);
        QVERIFY(file.size() > 8);
        uint64_t n = 0;
        for (int i = 0; i < 8; ++i)
            n |= uint64_t(uint8_t(file[i])) << (8 * i);
        QVERIFY(8 + n <= uint64_t(file.size()));
        QCOMPARE((8 + n) % 8, uint64_t(0));
        const QByteArray header = file.mid(8, qsizetype(n));
        QCOMPARE(header[0], '{');
        const QByteArray trimmed = header.trimmed();
        QVERIFY(header.mid(trimmed.size()).count(' ') == header.size() - trimmed.size());

        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(header, &err);
        QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
        QVERIFY(doc.isObject());
        const QJsonObject obj = doc.object();
        QCOMPARE(obj.size(), int(tensors.size()) + 1);
        QCOMPARE(obj["__metadata__"].toObject()["epoch"].toString(), QString("3"));

        // Offsets are contiguous in the written order and cover the data section exactly.
        qint64 expectedBegin = 0;
        for (const auto &[name, t] : tensors) {
            const QJsonObject e = obj[QString::fromStdString(name)].toObject();
            QCOMPARE(e["dtype"].toString(),
                     QString::fromLatin1(safetensorsName(t.dtype()).data(),
                                         qsizetype(safetensorsName(t.dtype()).size())));
            const QJsonArray shape = e["shape"].toArray();
            QCOMPARE(shape.size(), t.shape().rank());
            for (int i = 0; i < shape.size(); ++i)
                QCOMPARE(shape[i].toInteger(), t.shape()[i]);
            const QJsonArray off = e["data_offsets"].toArray();
            QCOMPARE(off.size(), 2);
            QCOMPARE(off[0].toInteger(), expectedBegin);
            QCOMPARE(off[1].toInteger() - off[0].toInteger(), qint64(t.bytes()));
            QVERIFY(std::memcmp(file.constData() + 8 + n + expectedBegin, t.raw(), t.bytes()) == 0);
            expectedBegin = off[1].toInteger();
        }
        QCOMPARE(8 + qint64(n) + expectedBegin, qint64(file.size()));
    }

    void rejectsBadFiles_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("fragment");
        const QByteArray data(16, 'd');
        auto row = [&](const char *name, const QByteArray &header, const char *fragment,
                       const QByteArray &d) {
            QTest::newRow(name) << rawFile(header, d) << QString(fragment);
        };
        QTest::newRow("empty file") << QByteArray() << "truncated";
        QTest::newRow("five bytes") << QByteArray("abcde") << "truncated";
        QTest::newRow("header past the end")
            << (lengthPrefix(100) + QByteArray("{}")) << "truncated";
        QTest::newRow("huge header length")
            << (lengthPrefix(uint64_t(1) << 62) + QByteArray("{}")) << "implausible";
        row("garbage header", "\x01\x02not json at all", "not valid JSON", data);
        // (An ordinary string: moc 6.4 mis-parses a raw string with unbalanced braces.)
        row("truncated json", "{\"a\": {\"dtype\": \"F32\", \"sha", "not valid JSON", data);
        row("header is an array", "[1, 2, 3]", "not a JSON object", data);
        row("entry not an object", R"({"a": 5})", "not a JSON object", data);
        row("missing dtype", R"({"a": {"shape": [4], "data_offsets": [0, 16]}})", "dtype", data);
        row("unknown dtype",
            R"({"a": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 16]}})",
            "unsupported dtype", data);
        row("negative shape", R"({"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}})",
            "non-negative", data);
        row("fractional shape",
            R"({"a": {"dtype": "F32", "shape": [4.5], "data_offsets": [0, 16]}})", "non-negative",
            data);
        row("shape overflow",
            R"({"a": {"dtype": "F32", "shape": [4611686018427387904, 4611686018427387904],)"
            R"( "data_offsets": [0, 16]}})",
            "too large", data);
        row("offsets out of range",
            R"({"a": {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}})", "past the end",
            data);
        row("offsets beyond u64 range",
            R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [18446744073709551615, 0]}})",
            "reversed", data);
        row("offsets reversed", R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})",
            "reversed", data);
        row("offsets disagree with shape",
            R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}})", "needs 12", data);
        row("missing offsets", R"({"a": {"dtype": "F32", "shape": [4]}})", "data_offsets", data);
        row("three offsets", R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})",
            "data_offsets", data);
        row("overlap",
            R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
            "overlap", data);
        row("duplicate name",
            R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
            "twice", data);
        row("metadata not an object", R"({"__metadata__": [1]})", "__metadata__", data);
        row("metadata value not a string", R"({"__metadata__": {"epoch": 3}})", "epoch", data);
    }
    void rejectsBadFiles()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, fragment);
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.safetensors");
        writeAll(path, content);
        Result<SafetensorsFile> r = readSafetensors(str(path));
        QVERIFY(!r.ok());
        checkFileError(r.error(), path, fragment);
    }

    void acceptsHandWrittenFile()
    {
        // The same layout the Python library writes: holes are allowed, order is the header's.
        QTemporaryDir dir;
        const QString path = dir.filePath("ok.safetensors");
        QByteArray data(12, 0);
        const float v[3] = {1.0f, -2.0f, 0.25f};
        std::memcpy(data.data(), v, 12);
        writeAll(path, rawFile(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                               R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}   )",
                               data));
        Result<SafetensorsFile> r = readSafetensors(str(path));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().str().c_str());
        QCOMPARE(r->tensors.size(), size_t(2));
        QCOMPARE(r->tensors[0].first, std::string("b"));
        QCOMPARE(r->find("b")->f32()[0], 0.25f);
        QCOMPARE(r->find("a")->f32()[1], -2.0f);
    }

    void everyTruncationFails()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("t.safetensors");
        QVERIFY(writeSafetensors(str(path), sampleTensors(), {{"k", "v"}}).ok());
        const QByteArray whole = readAll(path);
        QVERIFY(whole.size() > 100);
        const QString cut = dir.filePath("cut.safetensors");
        for (qsizetype n = 0; n < whole.size(); ++n) {
            writeAll(cut, whole.left(n));
            Result<SafetensorsFile> r = readSafetensors(str(cut));
            QVERIFY2(!r.ok(), qPrintable(QString("prefix of %1 bytes accepted").arg(n)));
            QCOMPARE(QString::fromStdString(r.error().file), cut);
        }
    }

    // Corrupting any header byte must give an error or a consistent file, never a crash.
    void corruptHeadersNeverCrash()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("f.safetensors");
        QVERIFY(writeSafetensors(str(path), sampleTensors(), {{"k", "v"}}).ok());
        const QByteArray whole = readAll(path);
        uint64_t n = 0;
        for (int i = 0; i < 8; ++i)
            n |= uint64_t(uint8_t(whole[i])) << (8 * i);
        const QString bad = dir.filePath("bad.safetensors");
        int errors = 0;
        for (qsizetype at = 0; at < qsizetype(8 + n); ++at) {
            for (char c : {'\0', '9', '"', '[', '}', char(0xff)}) {
                QByteArray b = whole;
                b[at] = c;
                writeAll(bad, b);
                Result<SafetensorsFile> r = readSafetensors(str(bad));
                if (!r.ok()) {
                    ++errors;
                    QCOMPARE(QString::fromStdString(r.error().file), bad);
                    continue;
                }
                for (const auto &[name, t] : r->tensors)
                    QVERIFY(t.bytes() <= size_t(whole.size()));
            }
        }
        QVERIFY(errors > int(n)); // most corruptions are caught
    }

    void writeErrors()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("w.safetensors");
        const Tensor t = filled<float>({2}, DType::F32, 1.0f);
        struct Case {
            NamedTensors tensors;
            QString fragment;
        };
        const Case cases[] = {
            {{{"a", t}, {"a", t}}, "two tensors"}, {{{"", t}}, "empty name"},
            {{{"__metadata__", t}}, "reserved"},   {{{"u", Tensor()}}, "undefined"},
            {{{"bad\xff", t}}, "UTF-8"},
        };
        for (const Case &c : cases) {
            Status s = writeSafetensors(str(path), c.tensors);
            QVERIFY(!s.ok());
            checkFileError(s.error(), path, c.fragment);
            QVERIFY(!QFile::exists(path));
            QVERIFY(!QFile::exists(path + ".tmp"));
        }
        const QString nowhere = dir.filePath("no/such/dir/w.safetensors");
        Status s = writeSafetensors(str(nowhere), {{"a", t}});
        QVERIFY(!s.ok());
        checkFileError(s.error(), nowhere, "cannot create");

        Result<SafetensorsFile> missing = readSafetensors(str(dir.filePath("missing")));
        QVERIFY(!missing.ok());
        checkFileError(missing.error(), dir.filePath("missing"), "cannot open");
        Result<SafetensorsFile> isDir = readSafetensors(str(dir.path()));
        QVERIFY(!isDir.ok());
        checkFileError(isDir.error(), dir.path(), "directory");
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
