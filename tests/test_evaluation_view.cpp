// The evaluation view (widgets/evaluation): a synthetic `evaluation` event and a real one from a
// small flowbench-cli run, shown as a confusion matrix with counts, a per-class table and a
// gallery of misclassified images; malformed events refused without a crash; light and dark
// palettes readable.

#include "widgets/evaluation/confusion_matrix_view.h"
#include "widgets/evaluation/evaluation_view.h"

#include <QtTest>
#include <QApplication>
#include <QScrollBar>

#include <QHelpEvent>
#include <QListWidget>
#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolTip>

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

using fb::widgets::ConfusionMatrixView;
using fb::widgets::EvaluationView;
using nlohmann::json;

namespace {

const QString kData = "/usr/share/datasets/fashion-mnist";
const QString kSource = FLOWBENCH_SOURCE_DIR;

std::string base64Of(const QByteArray &bytes)
{
    return bytes.toBase64().toStdString();
}

// A 4x4 grey image whose pixels count up from `start`.
QByteArray ramp(int start)
{
    QByteArray b;
    for (int i = 0; i < 16; ++i)
        b.append(char(start + i * 10));
    return b;
}

json sample(int index, int truth, int predicted, double probability, const QByteArray &pixels)
{
    return {{"index", index},
            {"true_class", truth},
            {"predicted_class", predicted},
            {"probability", probability},
            {"height", 4},
            {"width", 4},
            {"channels", 1},
            {"pixels", base64Of(pixels)}};
}

// Three classes; "bird" has no samples and nothing was predicted as it.
json synthetic()
{
    return {{"type", "evaluation"},
            {"t", 12.5},
            {"node", "evaluate"},
            {"epoch", 3},
            {"epochs", 3},
            {"samples", 11},
            {"loss", 0.5},
            {"accuracy", 8.0 / 11.0},
            {"classes", {"cat", "dog", "bird"}},
            {"confusion", {{5, 1, 0}, {2, 3, 0}, {0, 0, 0}}},
            {"per_class", json::array()},
            {"misclassified_total", 3},
            {"pixel_scale", "undo_normalize"},
            {"misclassified",
             {sample(2, 0, 1, 0.87, ramp(0)), sample(4, 1, 0, 0.61, ramp(5)),
              sample(9, 1, 0, 0.5, ramp(100))}}};
}

double contrast(const QColor &a, const QColor &b)
{
    auto lum = [](const QColor &c) {
        auto lin = [](double v) {
            return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
    };
    const double x = lum(a), y = lum(b);
    return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

QPalette darkPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    p.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
    p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    p.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, QColor(0xe0, 0xe0, 0xe0));
    return p;
}

QPalette lightPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, QColor(0xef, 0xef, 0xef));
    p.setColor(QPalette::WindowText, Qt::black);
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::Text, Qt::black);
    return p;
}

// Distinct colours in an image: a blank grab has one or two.
int colourCount(const QImage &image)
{
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}

} // namespace

class TestEvaluationView : public QObject {
    Q_OBJECT

    json m_real;            // the last `evaluation` event of a small real run
    QTemporaryDir m_dir;    // that run's folder
    json m_savedEvaluation; // that run's evaluation.json
    QString m_runError;

private slots:
    void initTestCase()
    {
        if (!QFile::exists(kData + "/t10k-images-idx3-ubyte.gz")) return; // the real run skips
        QTemporaryDir &dir = m_dir; // kept: the run folder's pictures are read by a test
        const QString events = dir.path() + "/events.jsonl";
        QProcess p;
        p.setProgram(FLOWBENCH_CLI);
        p.setArguments({"run", kSource + "/resources/examples/fashion_mnist_mlp.json", "--threads",
                        "2", "--set", "train.epochs=1", "--set", "train_data.limit=2000", "--set",
                        "test_data.limit=1000", "--out", dir.path() + "/run", "--events", events});
        p.start();
        p.closeWriteChannel();
        if (!p.waitForFinished(300000) || p.exitCode() != 0) {
            m_runError = QString::fromUtf8(p.readAllStandardError());
            return;
        }
        QFile f(events);
        if (!f.open(QIODevice::ReadOnly)) return;
        for (const QByteArray &line : f.readAll().split('\n')) {
            if (line.isEmpty()) continue;
            json e = json::parse(line.toStdString(), nullptr, false);
            if (e.is_object() && e.value("type", "") == "evaluation") m_real = e;
        }
        QFile saved(dir.path() + "/run/evaluation.json");
        if (saved.open(QIODevice::ReadOnly))
            m_savedEvaluation = json::parse(saved.readAll().toStdString(), nullptr, false);
    }

    void startsEmpty()
    {
        EvaluationView view;
        QVERIFY(!view.hasEvaluation());
        QCOMPARE(view.classCount(), 0);
        QCOMPARE(view.galleryCount(), 0);
        QCOMPARE(view.cellText(0, 0), QString());
        QVERIFY(view.summaryText().contains("No evaluation"));
        view.resize(600, 500);
        QVERIFY(!view.grab().toImage().isNull()); // paints its placeholder without data
    }

    void showsASyntheticEvaluation()
    {
        EvaluationView view;
        QVERIFY2(view.setEvaluation(synthetic()), qPrintable(view.lastError()));
        QVERIFY(view.hasEvaluation());
        QCOMPARE(view.classCount(), 3);
        QCOMPARE(view.className(1), QString("dog"));
        QCOMPARE(view.cellText(0, 0), QString("5"));
        QCOMPARE(view.cellText(1, 0), QString("2"));
        QCOMPARE(view.cellText(2, 2), QString("0"));
        QCOMPARE(view.cellText(3, 0), QString()); // outside the matrix
        QCOMPARE(view.cellToolTip(1, 0), QString("true dog, predicted cat: 2 (40.0% of dog)"));
        QCOMPARE(view.cellToolTip(2, 1), QString("true bird, predicted dog: 0 (no bird samples)"));
        QCOMPARE(view.summaryText(),
                 QString("Accuracy 72.7% (8 of 11 test samples) · loss 0.5000 · evaluate, "
                         "epoch 3 of 3"));

        // The table, by class: precision = diagonal / column, recall = diagonal / row.
        QCOMPARE(view.tableText(0, EvaluationView::ClassColumn), QString("cat"));
        QCOMPARE(view.tableText(0, EvaluationView::PrecisionColumn), QString("0.714")); // 5/7
        QCOMPARE(view.tableText(0, EvaluationView::RecallColumn), QString("0.833"));    // 5/6
        QCOMPARE(view.tableText(0, EvaluationView::F1Column), QString("0.769"));
        QCOMPARE(view.tableText(0, EvaluationView::SupportColumn), QString("6"));
        QCOMPARE(view.tableText(1, EvaluationView::PrecisionColumn), QString("0.750")); // 3/4
        QCOMPARE(view.tableText(1, EvaluationView::RecallColumn), QString("0.600"));    // 3/5
        QCOMPARE(view.tableText(2, EvaluationView::PrecisionColumn), QString("–"));
        QCOMPARE(view.tableText(2, EvaluationView::RecallColumn), QString("–"));
        QCOMPARE(view.tableText(2, EvaluationView::SupportColumn), QString("0"));
        // Sorting by number, undefined values below all others.
        view.classTable()->sortByColumn(EvaluationView::PrecisionColumn, Qt::DescendingOrder);
        QCOMPARE(view.tableText(0, EvaluationView::ClassColumn), QString("dog"));
        QCOMPARE(view.tableText(1, EvaluationView::ClassColumn), QString("cat"));
        QCOMPARE(view.tableText(2, EvaluationView::ClassColumn), QString("bird"));
        view.classTable()->sortByColumn(EvaluationView::SupportColumn, Qt::AscendingOrder);
        QCOMPARE(view.tableText(0, EvaluationView::ClassColumn), QString("bird"));

        // The gallery: captions, the images at their own size, crisp when scaled up.
        QCOMPARE(view.galleryCount(), 3);
        QCOMPARE(view.galleryCaption(0), QString("true: cat / predicted: dog (0.87)"));
        QCOMPARE(view.galleryCaption(1), QString("true: dog / predicted: cat (0.61)"));
        const QImage image = view.galleryImage(2);
        QCOMPARE(image.size(), QSize(4, 4));
        QCOMPARE(qGray(image.pixel(0, 0)), 100);
        QCOMPARE(qGray(image.pixel(3, 3)), 250);
        const QSize icon = view.gallery()->iconSize();
        QCOMPARE(icon, QSize(96, 96)); // 4 x 24
        const QImage big = view.gallery()->item(2)->icon().pixmap(icon).toImage();
        QCOMPARE(big.size(), icon);
        // Nearest-neighbour: a source pixel is a block of one value, no blend at its edges.
        QCOMPARE(qGray(big.pixel(0, 0)), 100);
        QCOMPARE(qGray(big.pixel(23, 23)), 100);
        QCOMPARE(qGray(big.pixel(24, 0)), 110);
        QVERIFY(view.galleryNote().contains("all 3"));

        // A cell shows only its confusion's images; clicking it again shows all.
        view.filterGallery(1, 0);
        QCOMPARE(view.visibleGalleryCount(), 2);
        QCOMPARE(view.matrixView()->selectedCell(), std::make_pair(1, 0));
        QVERIFY(view.galleryNote().contains("dog predicted as cat: 2"));
        view.filterGallery(-1, -1);
        QCOMPARE(view.visibleGalleryCount(), 3);
    }

    void clickingACellFiltersTheGallery()
    {
        EvaluationView view;
        QVERIFY(view.setEvaluation(synthetic()));
        view.resize(800, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        ConfusionMatrixView *m = view.matrixView();
        QTest::mouseClick(m, Qt::LeftButton, {}, m->cellRect(0, 1).center());
        QCOMPARE(view.visibleGalleryCount(), 1);
        QTest::mouseClick(m, Qt::LeftButton, {}, m->cellRect(0, 1).center());
        QCOMPARE(view.visibleGalleryCount(), 3);

        // Hovering a cell says what it counts.
        const QPoint at = m->cellRect(1, 0).center();
        QHelpEvent help(QEvent::ToolTip, at, m->mapToGlobal(at));
        QCoreApplication::sendEvent(m, &help);
        QTRY_COMPARE(QToolTip::text(), QString("true dog, predicted cat: 2 (40.0% of dog)"));
        QToolTip::hideText();
    }

    void anEarlierEpochHasNoGallery()
    {
        EvaluationView view;
        QVERIFY(view.setEvaluation(synthetic()));
        json early = synthetic();
        early.erase("misclassified");
        early["epoch"] = 1;
        QVERIFY(view.setEvaluation(early));
        QCOMPARE(view.galleryCount(), 0);
        QVERIFY(view.galleryNote().contains("last epoch"));
        QVERIFY(view.summaryText().contains("epoch 1 of 3"));
    }

    void malformedEventsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("path"); // what to break, as "key=json" or a whole text
        QTest::newRow("not an object") << QByteArray("=[1, 2]");
        QTest::newRow("null") << QByteArray("=null");
        QTest::newRow("another event") << QByteArray("type=\"epoch\"");
        QTest::newRow("no classes") << QByteArray("classes=null");
        QTest::newRow("no class") << QByteArray("classes=[]");
        QTest::newRow("class not a name") << QByteArray("classes=[\"cat\", 1, \"bird\"]");
        QTest::newRow("too few rows") << QByteArray("confusion=[[5, 1, 0], [2, 3, 0]]");
        QTest::newRow("short row") << QByteArray("confusion=[[5, 1], [2, 3, 0], [0, 0, 0]]");
        QTest::newRow("row not a list") << QByteArray("confusion=[5, [2, 3, 0], [0, 0, 0]]");
        QTest::newRow("negative count")
            << QByteArray("confusion=[[5, -1, 0], [2, 3, 0], [0, 0, 0]]");
        QTest::newRow("fractional count")
            << QByteArray("confusion=[[5, 1.5, 0], [2, 3, 0], [0, 0, 0]]");
        QTest::newRow("string count")
            << QByteArray("confusion=[[\"5\", 1, 0], [2, 3, 0], [0, 0, 0]]");
        QTest::newRow("huge count")
            << QByteArray("confusion=[[18446744073709551615, 1, 0], [2, 3, 0], [0, 0, 0]]");
        QTest::newRow("gallery not a list") << QByteArray("misclassified={}");
        QTest::newRow("sample not an object") << QByteArray("misclassified=[3]");
        QTest::newRow("true equals predicted") << QByteArray("misclassified/0/predicted_class=0");
        QTest::newRow("class out of range") << QByteArray("misclassified/0/true_class=3");
        QTest::newRow("negative index") << QByteArray("misclassified/0/index=-4");
        QTest::newRow("not base64") << QByteArray("misclassified/0/pixels=\"!!!!\"");
        QTest::newRow("too few pixels") << QByteArray("misclassified/0/pixels=\"AAEC\"");
        QTest::newRow("no pixels") << QByteArray("misclassified/0/pixels=null");
        QTest::newRow("zero height") << QByteArray("misclassified/0/height=0");
        QTest::newRow("giant image") << QByteArray("misclassified/0/width=1000000000");
        QTest::newRow("probability text") << QByteArray("misclassified/0/probability=\"high\"");
    }

    void malformedEventsAreRefused()
    {
        QFETCH(QByteArray, path);
        EvaluationView view;
        QVERIFY(view.setEvaluation(synthetic()));
        const int eq = int(path.indexOf('='));
        const std::string where = path.left(eq).toStdString();
        const json value = json::parse(path.mid(eq + 1).toStdString());
        json broken = synthetic();
        if (where.empty())
            broken = value;
        else
            broken[json::json_pointer("/" + where)] = value;
        QVERIFY(!view.setEvaluation(broken));
        QVERIFY(!view.lastError().isEmpty());
        // What was shown stays.
        QVERIFY(view.hasEvaluation());
        QCOMPARE(view.cellText(0, 0), QString("5"));
        QCOMPARE(view.galleryCount(), 3);
        // A fresh view refuses it too and stays empty.
        EvaluationView fresh;
        QVERIFY(!fresh.setEvaluation(broken));
        QVERIFY(!fresh.hasEvaluation());
        QCOMPARE(fresh.classCount(), 0);
    }

    void showsARealRun()
    {
        if (!QFile::exists(kData + "/t10k-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        QVERIFY2(m_runError.isEmpty(), qPrintable(m_runError));
        QVERIFY2(m_real.is_object(), "the run wrote no evaluation event");
        EvaluationView view;
        QVERIFY2(view.setEvaluation(m_real), qPrintable(view.lastError()));
        QCOMPARE(view.classCount(), 10);
        QCOMPARE(view.className(0), QString("T-shirt/top"));
        QCOMPARE(view.className(9), QString("Ankle boot"));
        qint64 total = 0, trace = 0;
        for (int t = 0; t < 10; ++t)
            for (int p = 0; p < 10; ++p) {
                const qint64 n = m_real["confusion"][t][p].get<qint64>();
                QCOMPARE(view.cellText(t, p), QString::number(n));
                total += n;
                trace += t == p ? n : 0;
            }
        QCOMPARE(total, 1000);
        QVERIFY(view.summaryText().startsWith(QString("Accuracy %1% (%2 of 1000 test samples)")
                                                  .arg(double(trace) / 10.0, 0, 'f', 1)
                                                  .arg(trace)));
        // The table agrees with the engine's per-class figures.
        for (int c = 0; c < 10; ++c) {
            const json &m = m_real["per_class"][c];
            QCOMPARE(view.tableText(c, EvaluationView::ClassColumn),
                     QString::fromStdString(m["class"].get<std::string>()));
            if (!m["precision"].is_null())
                QCOMPARE(view.tableText(c, EvaluationView::PrecisionColumn),
                         QString::number(m["precision"].get<double>(), 'f', 3));
            QCOMPARE(view.tableText(c, EvaluationView::RecallColumn),
                     QString::number(m["recall"].get<double>(), 'f', 3));
            QCOMPARE(view.tableText(c, EvaluationView::SupportColumn),
                     QString::number(m["support"].get<qint64>()));
        }
        // The gallery: the first (up to) 64 mistakes with their captions and 28x28 images.
        const json &gallery = m_real["misclassified"];
        QCOMPARE(qint64(view.galleryCount()),
                 std::min<qint64>(64, m_real["misclassified_total"].get<qint64>()));
        QCOMPARE(size_t(view.galleryCount()), gallery.size());
        for (int i = 0; i < view.galleryCount(); ++i) {
            const json &m = gallery[size_t(i)];
            const QString truth = view.className(m["true_class"].get<int>());
            const QString predicted = view.className(m["predicted_class"].get<int>());
            QCOMPARE(view.galleryCaption(i), QString("true: %1 / predicted: %2 (%3)")
                                                 .arg(truth, predicted)
                                                 .arg(m["probability"].get<double>(), 0, 'f', 2));
            const QImage image = view.galleryImage(i);
            QCOMPARE(image.size(), QSize(28, 28));
            const QByteArray pixels =
                QByteArray::fromBase64(QByteArray::fromStdString(m["pixels"].get<std::string>()));
            QCOMPARE(qGray(image.pixel(14, 14)), int(uchar(pixels[14 * 28 + 14])));
        }
        QCOMPARE(view.gallery()->iconSize(), QSize(84, 84)); // 28 x 3

        // The run's evaluation.json shows the same.
        QVERIFY(m_savedEvaluation.is_object());
        EvaluationView saved;
        QVERIFY2(saved.setEvaluation(m_savedEvaluation["evaluations"][0]),
                 qPrintable(saved.lastError()));
        QCOMPARE(saved.summaryText(), view.summaryText());
        QCOMPARE(saved.galleryCount(), view.galleryCount());

        // It paints: the grab is not blank, and the cells have the colours the view reports.
        view.resize(1000, 800);
        const QImage grab = view.grab().toImage();
        QVERIFY2(colourCount(grab) > 20, qPrintable(QString::number(colourCount(grab))));
        ConfusionMatrixView *m = view.matrixView();
        const QImage matrix = m->grab().toImage();
        const QRect cell = m->cellRect(0, 0);
        QVERIFY(cell.width() > 10);
        QCOMPARE(matrix.pixelColor(cell.topLeft() + QPoint(2, 2)).rgb(), m->cellColor(0, 0).rgb());
    }

    // At the size the dock has in a 1600 x 1000 window (1110 x 415): the matrix's cells
    // are big enough to hold their counts, the per-class table shows every class without
    // scrolling, and the gallery shows whole pictures with both caption lines.
    // A cell with more errors than the event's first 64 carry shows every one of them, the
    // pictures read from the run folder's misclassified-NODE.u8 when the cell is clicked.
    void aCellShowsAllItsSamples()
    {
        if (!QFile::exists(kData + "/t10k-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        QVERIFY2(m_real.is_object(), "the run wrote no evaluation event");
        const QString run = m_dir.path() + "/run";
        QVERIFY(QFile::exists(run + "/misclassified-evaluate.u8"));
        EvaluationView view;
        view.setPicturesFolder(run);
        QVERIFY(view.setEvaluation(m_real));
        // The cell with the most errors, and how many of them the first 64 hold.
        int bt = -1, bp = -1;
        qint64 most = 0;
        for (int t = 0; t < 10; ++t)
            for (int p = 0; p < 10; ++p)
                if (t != p && m_real["confusion"][t][p].get<qint64>() > most) {
                    most = m_real["confusion"][t][p].get<qint64>();
                    bt = t;
                    bp = p;
                }
        qint64 inFirst = 0;
        for (const auto &m : m_real["misclassified"])
            inFirst += m["true_class"] == bt && m["predicted_class"] == bp;
        QVERIFY2(most > inFirst, "the biggest cell's errors all fall in the first 64");
        view.filterGallery(bt, bp);
        QCOMPARE(qint64(view.visibleGalleryCount()), most);
        for (int i = 0; i < view.visibleGalleryCount(); ++i) {
            const QImage image = view.galleryImage(i);
            QVERIFY2(!image.isNull(), qPrintable(QString::number(i)));
            QCOMPARE(image.size(), QSize(28, 28));
        }
        QVERIFY2(view.galleryNote().contains(QString("all %1 of them").arg(most)),
                 qPrintable(view.galleryNote()));
        // The file holds the pictures in misclassified_all's order, the same bytes as the
        // event carries for the first ones.
        QFile file(run + "/misclassified-evaluate.u8");
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.size(), 784 * m_real["pictures_kept"].get<qint64>());
        QCOMPARE(m_real["pictures_kept"].get<qint64>(), qint64(m_real["misclassified_all"].size()));
        for (int i : {0, 1, 63}) {
            QVERIFY(file.seek(784 * i));
            const QByteArray fromFile = file.read(784);
            const auto &m = m_real["misclassified"][size_t(i)];
            QCOMPARE(m["index"].get<qint64>(),
                     m_real["misclassified_all"][size_t(i)][0].get<qint64>());
            QCOMPARE(fromFile, QByteArray::fromBase64(
                                   QByteArray::fromStdString(m["pixels"].get<std::string>())));
        }
        // Without the folder: only those the event carries, as before.
        EvaluationView alone;
        QVERIFY(alone.setEvaluation(m_real));
        alone.filterGallery(bt, bp);
        QCOMPARE(qint64(alone.visibleGalleryCount()), most); // listed all the same...
        int blank = 0;
        for (int i = 0; i < alone.visibleGalleryCount(); ++i)
            blank += alone.galleryImage(i).isNull();
        QCOMPARE(qint64(blank), most - inFirst); // ...the others without their pictures
        view.filterGallery(-1, -1);
        QCOMPARE(view.visibleGalleryCount(), 64);
    }

    void readsWellAtTheDocksDefaultSize()
    {
        if (!QFile::exists(kData + "/t10k-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
        QVERIFY2(m_real.is_object(), "the run wrote no evaluation event");
        EvaluationView view;
        view.resize(1110, 415);
        view.show();
        QVERIFY(view.setEvaluation(m_real));
        QApplication::processEvents();
        const QRect cell = view.matrixView()->cellRect(0, 0);
        QVERIFY2(cell.width() >= 20 && cell.height() >= 20,
                 qPrintable(QString("%1x%2").arg(cell.width()).arg(cell.height())));
        QTableWidget *table = view.classTable();
        QCOMPARE(table->rowCount(), 10);
        QCOMPARE(table->verticalScrollBar()->maximum(), 0); // no scrolling
        QListWidget *gallery = view.gallery();
        QVERIFY(gallery->count() > 0);
        const QRect first = gallery->visualItemRect(gallery->item(0));
        QVERIFY2(gallery->viewport()->rect().contains(first),
                 qPrintable(QString("item %1,%2 %3x%4 in a %5x%6 viewport")
                                .arg(first.x())
                                .arg(first.y())
                                .arg(first.width())
                                .arg(first.height())
                                .arg(gallery->viewport()->width())
                                .arg(gallery->viewport()->height())));
        QVERIFY(gallery->item(0)->text().contains("true: "));
    }

    void readableOnLightAndDarkPalettes_data()
    {
        QTest::addColumn<bool>("dark");
        QTest::addColumn<bool>("rowNormalized");
        QTest::newRow("light") << false << false;
        QTest::newRow("light, by row") << false << true;
        QTest::newRow("dark") << true << false;
        QTest::newRow("dark, by row") << true << true;
    }

    void readableOnLightAndDarkPalettes()
    {
        QFETCH(bool, dark);
        QFETCH(bool, rowNormalized);
        EvaluationView view;
        view.setPalette(dark ? darkPalette() : lightPalette());
        json e = synthetic();
        // Counts from none to many, so the cells span the whole colour ramp.
        e["confusion"] = {{900, 40, 1}, {3, 200, 17}, {0, 60, 5}};
        QVERIFY(view.setEvaluation(e));
        view.setRowNormalized(rowNormalized);
        QCOMPARE(view.rowNormalized(), rowNormalized);
        ConfusionMatrixView *m = view.matrixView();
        for (int t = 0; t < 3; ++t)
            for (int p = 0; p < 3; ++p) {
                const double c = contrast(m->cellColor(t, p), m->cellTextColor(t, p));
                QVERIFY2(c >= 4.5,
                         qPrintable(QString("cell %1,%2: contrast %3").arg(t).arg(p).arg(c)));
            }
        // The largest count stands out from an empty cell.
        QVERIFY(contrast(m->cellColor(0, 0), m->cellColor(2, 0)) > 3.0);
        view.resize(800, 700);
        QVERIFY(colourCount(view.grab().toImage()) > 10);
    }

    void rowNormalizedColoursFollowTheRow()
    {
        EvaluationView view;
        json e = synthetic();
        e["confusion"] = {{900, 100, 0}, {1, 9, 0}, {0, 0, 0}};
        QVERIFY(view.setEvaluation(e));
        ConfusionMatrixView *m = view.matrixView();
        // By count, 9 of the small class is pale next to 900; by row it is 90% of its class.
        const QColor byCount = m->cellColor(1, 1);
        view.setRowNormalized(true);
        const QColor byRow = m->cellColor(1, 1);
        QVERIFY(byRow != byCount);
        QVERIFY(contrast(byRow, m->cellColor(0, 0)) < 1.5); // 90% looks like 90%
        QCOMPARE(view.cellText(1, 1), QString("9"));        // the text stays the count
    }

    void clearForgetsEverything()
    {
        EvaluationView view;
        QVERIFY(view.setEvaluation(synthetic()));
        view.clear();
        QVERIFY(!view.hasEvaluation());
        QCOMPARE(view.classCount(), 0);
        QCOMPARE(view.galleryCount(), 0);
        QCOMPARE(view.classTable()->rowCount(), 0);
    }
};

QTEST_MAIN(TestEvaluationView)
#include "test_evaluation_view.moc"
