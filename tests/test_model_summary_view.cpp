// The window's Model Summary view, driven offscreen: it follows the pipeline as it is edited (no
// run, nothing saved), with figures from `flowbench-cli summary`; a problem is named with its
// node; Measure adds measured step times.

#include "widgets/editing/edited_pipeline.h"
#include "widgets/summary/model_summary_view.h"

#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>

using fb::widgets::EditedPipeline;
using fb::widgets::ModelSummaryView;

namespace {

const QString kExamples = QString(FLOWBENCH_SOURCE_DIR) + "/resources/examples/";

// The text of the row whose first cell is `node`, cell `column`; empty if there is none.
QString cell(QTableWidget *t, const QString &node, int column)
{
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, 0) && t->item(r, 0)->text() == node)
            return t->item(r, column) ? t->item(r, column)->text() : QString();
    return {};
}

bool waitIdle(ModelSummaryView &v, int ms = 60000)
{
    return QTest::qWaitFor([&] { return !v.busy(); }, ms);
}

} // namespace

class TestModelSummaryView : public QObject {
    Q_OBJECT

private slots:
    void followsTheEditedPipeline()
    {
        EditedPipeline pipeline;
        ModelSummaryView view(&pipeline);
        view.setCliPath(FLOWBENCH_CLI);
        view.resize(1200, 500);
        view.show();
        QVERIFY(pipeline.load(kExamples + "fashion_mnist_cnn.json").ok());
        QVERIFY(waitIdle(view));
        QCOMPARE(view.summary()["status"].toString(), QString("ok"));
        QTableWidget *t = view.table();
        QCOMPARE(t->rowCount(), 12); // input, 10 layers, total
        QCOMPARE(cell(t, "fc1", 3), QString("401,536"));
        QCOMPARE(cell(t, "conv2", 2), QString("[64, 14, 14]"));
        QCOMPARE(cell(t, "total", 3), QString("421,642"));
        QVERIFY2(view.headline().contains("421,642"), qPrintable(view.headline()));
        QVERIFY(view.headline().contains("conv2"));
        QCOMPARE(pipeline.isModified(), false);

        // An edit, not saved: the view asks again and shows the new model.
        QVERIFY(pipeline.setParam("conv2", "out_channels", 16).ok());
        QVERIFY(waitIdle(view));
        QCOMPARE(cell(t, "conv2", 2), QString("[16, 14, 14]"));
        QCOMPARE(cell(t, "fc1", 3), QString("100,480")); // 16 x 7 x 7 x 128 + 128

        // A layer whose input does not fit: no table, the node named.
        QVERIFY(pipeline.setParam("conv2", "kernel_size", 15).ok());
        QVERIFY(pipeline.setParam("conv2", "padding", 0).ok());
        QVERIFY(waitIdle(view));
        QCOMPARE(view.summary()["status"].toString(), QString("error"));
        QVERIFY2(view.errorText().startsWith("conv2: "), qPrintable(view.errorText()));
        QCOMPARE(t->rowCount(), 0);
        QSignalSpy activated(&view, &ModelSummaryView::nodeActivated);
        auto *error = view.findChild<QLabel *>("summary_error");
        QVERIFY(error && error->isVisible());
        emit error->linkActivated("conv2");
        emit error->linkActivated("conv2.in"); // a port's problem goes to its node
        QCOMPARE(activated.size(), 2);
        QCOMPARE(activated[0][0].toString(), QString("conv2"));
        QCOMPARE(activated[1][0].toString(), QString("conv2"));

        // Undo puts the model back.
        pipeline.undoStack()->undo();
        pipeline.undoStack()->undo();
        QVERIFY(waitIdle(view));
        QCOMPARE(view.summary()["status"].toString(), QString("ok"));
        QCOMPARE(cell(t, "fc1", 3), QString("100,480"));
    }

    void measureAddsStepTimes()
    {
        EditedPipeline pipeline;
        ModelSummaryView view(&pipeline);
        view.setCliPath(FLOWBENCH_CLI);
        QVERIFY(pipeline.load(kExamples + "fashion_mnist_mlp.json").ok());
        QVERIFY(waitIdle(view));
        QVERIFY(view.table()->isColumnHidden(8));
        view.findChild<QPushButton *>("summary_measure")->click();
        QVERIFY(waitIdle(view, 120000));
        const QJsonArray measured = view.summary()["measured"].toArray();
        QVERIFY(!measured.isEmpty());
        QCOMPARE(measured[0].toObject()["device"].toString(), QString("cpu"));
        QVERIFY(measured[0].toObject()["gflops"].toDouble() > 0);
        auto *line = view.findChild<QLabel *>("summary_measured");
        QVERIFY(line->text().contains("GFLOP/s"));
        QVERIFY(!view.table()->isColumnHidden(8));
        QVERIFY(cell(view.table(), "fc1", 8).endsWith(" ms"));
    }

    void noCliSaysSo()
    {
        EditedPipeline pipeline;
        ModelSummaryView view(&pipeline);
        view.setCliPath(QString());
        QVERIFY(pipeline.load(kExamples + "fashion_mnist_mlp.json").ok());
        view.refresh();
        auto *error = view.findChild<QLabel *>("summary_error");
        QVERIFY(error->text().contains("flowbench-cli was not found"));
    }
};

QTEST_MAIN(TestModelSummaryView)
#include "test_model_summary_view.moc"
