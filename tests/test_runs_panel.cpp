// The Runs panel in the real window (docs/runs.md): every run the window starts is listed with
// its results; it is reopened, renamed, tagged, searched, deleted and resumed through the
// panel's own widgets; killed, damaged and older folders are listed without a crash.

#include "cli_process.h"

#include <QtTest>

#include <QApplication>
#include <QLayout>
#include <QDockWidget>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTableWidget>
#include <QTreeWidget>
#include <QUndoStack>

#include <qcustomplot.h>

#include "app/gui/main_window.h"
#include "widgets/evaluation/evaluation_view.h"
#include "widgets/inference/inference_panel.h"
#include "widgets/inspector/inspector.h"
#include "widgets/plots/live_plots.h"
#include "widgets/plots/lr_finder_view.h"
#include "widgets/run/run_session.h"
#include "widgets/canvas/canvas_items.h"
#include "widgets/canvas/graph_scene.h"
#include "widgets/editing/edited_pipeline.h"
#include "widgets/runs/run_diff_view.h"
#include "widgets/runs/runs_panel.h"
#include "widgets/runs/sweep_view.h"

#include <csignal>

using namespace fb;
using Panel = widgets::RunsPanel;

namespace {

const QString kMlp =
    QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");

struct Window {
    QTemporaryDir runs;
    app::MainWindow w;
    explicit Window(const QStringList &settings = {"train_data.limit=1500", "test_data.limit=500",
                                                   "train.epochs=2"})
    {
        w.setRunsDirectory(runs.path());
        w.setRunThreads(2);
        w.setRunSettings(settings);
        w.resize(1600, 1000);
        w.show();
    }
    Panel *panel() const { return w.runs(); }
    QPushButton *button(const char *name) const
    {
        return panel()->findChild<QPushButton *>(QString::fromLatin1(name));
    }
};

// Runs the window's pipeline to its end; returns the run's folder.
QString runToEnd(Window &win)
{
    QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
    QString why;
    if (!win.w.startRun(&why)) {
        qWarning("%s", qPrintable(why));
        return {};
    }
    if (!finished.wait(180000) || !finished.front().front().toBool()) return {};
    return QString::fromStdString(win.w.lastSummary()["out_dir"].get<std::string>());
}

void doubleClickRow(Panel *panel, int row)
{
    QTableView *table = panel->table();
    const QRect rect = table->visualRect(table->model()->index(row, Panel::Name));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, rect.center());
}

} // namespace

class TestRunsPanel : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        if (!QFile::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
    }

    // The window opens at the size it asks for, 1400x900 (or the person's last), and a test's
    // 1600x1000 stays 1600x1000: docks added side by side before being tabbed once made it
    // 2080 px wide, wider than most screens.
    void windowKeepsItsSize()
    {
        {
            QTemporaryDir runs;
            app::MainWindow w;
            w.setRunsDirectory(runs.path());
            w.show();
            QApplication::processEvents();
            QCOMPARE(w.size(), QSize(1400, 900));
        }
        Window win;
        QApplication::processEvents();
        QCOMPARE(win.w.size(), QSize(1600, 1000));
        QVERIFY(win.w.minimumSizeHint().width() < 1200);
    }

    void finishedRunIsListedAndReopens()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kMlp, true));
        const QString dir = runToEnd(win);
        QVERIFY(!dir.isEmpty());
        Panel *panel = win.panel();
        QTRY_COMPARE(panel->visibleRows(), 1);
        QCOMPARE(panel->cellText(0, Panel::Status), QString("ok"));
        QCOMPARE(panel->cellText(0, Panel::Pipeline), QString("fashion_mnist_mlp"));
        QCOMPARE(panel->cellText(0, Panel::Device), QString("cpu"));
        const double acc = win.w.lastSummary()["test_accuracy"].get<double>();
        QCOMPARE(panel->cellText(0, Panel::Accuracy), QString("%1%").arg(100 * acc, 0, 'f', 2));
        QVERIFY(panel->cellText(0, Panel::Best).endsWith('%'));
        QVERIFY(panel->cellText(0, Panel::Duration).endsWith(" s"));
        QCOMPARE(QFileInfo(panel->runAt(0)), QFileInfo(dir));
        // The event log was kept by the engine as it streamed: nobody saved it by hand.
        QVERIFY(QFile::exists(dir + "/events.jsonl"));

        // A second window (a later session) opens it with a double click: plots, evaluation
        // and the model to try all come back.
        app::MainWindow later;
        later.setRunsDirectory(win.runs.path());
        later.resize(1600, 1000);
        later.show();
        QCOMPARE(later.runs()->visibleRows(), 1);
        QCOMPARE(later.plots()->pointCount("train_loss"), 0);
        doubleClickRow(later.runs(), 0);
        QTRY_VERIFY(later.plots()->pointCount("train_loss") > 0);
        QCOMPARE(later.plots()->pointCount("train_loss"), win.w.plots()->pointCount("train_loss"));
        QVERIFY(later.evaluation()->hasEvaluation());
        QCOMPARE(QFileInfo(later.inference()->model()), QFileInfo(dir));
    }

    void renameTagSearchAndDelete()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kMlp, true));
        QVERIFY(!runToEnd(win).isEmpty());
        QVERIFY(!runToEnd(win).isEmpty());
        Panel *panel = win.panel();
        QTRY_COMPARE(panel->visibleRows(), 2);
        const QString first = panel->runAt(1); // the older one: newest first
        panel->selectRuns({first});

        QString answer = "baseline  ";
        panel->setTextAsker([&](const QString &, const QString &, QString &text) {
            text = answer;
            return true;
        });
        QTest::mouseClick(win.button("runs_rename"), Qt::LeftButton);
        QTRY_COMPARE(panel->cellText(panel->rowOf(first), Panel::Name), QString("baseline"));
        QCOMPARE(readJson(first + "/run.json")["name"].toString(), QString("baseline"));
        answer = "lr 0.05, small,  small";
        QTest::mouseClick(win.button("runs_tags"), Qt::LeftButton);
        QCOMPARE(panel->cellText(panel->rowOf(first), Panel::Tags), QString("lr 0.05, small"));

        // Search looks at every column: the name, a tag, the status.
        auto *search = panel->findChild<QLineEdit *>("runs_search");
        QTest::keyClicks(search, "SMALL");
        QCOMPARE(panel->visibleRows(), 1);
        QCOMPARE(panel->runAt(0), first);
        search->clear();
        QTest::keyClicks(search, "no such run");
        QCOMPARE(panel->visibleRows(), 0);
        search->clear();
        QCOMPARE(panel->visibleRows(), 2);

        // Sorting by name puts "baseline" first, then back by start, newest first.
        panel->table()->sortByColumn(Panel::Name, Qt::AscendingOrder);
        QCOMPARE(panel->runAt(0), first);

        // Delete asks; No keeps it, Yes removes the folder.
        QString asked;
        auto answerDelete = QMessageBox::No;
        panel->setAsker([&](const QString &, const QString &text) {
            asked = text;
            return answerDelete;
        });
        panel->selectRuns({first});
        QTest::mouseClick(win.button("runs_delete"), Qt::LeftButton);
        QVERIFY(asked.contains("baseline"));
        QVERIFY(QFileInfo::exists(first));
        QCOMPARE(panel->visibleRows(), 2);
        answerDelete = QMessageBox::Yes;
        QTest::mouseClick(win.button("runs_delete"), Qt::LeftButton);
        QVERIFY(!QFileInfo::exists(first));
        QCOMPARE(panel->visibleRows(), 1);
    }

    // Stop in the window, then Resume from the panel: the same folder goes on from its
    // checkpoint, its earlier curve kept, and ends as one run.
    void stoppedRunResumesFromThePanel()
    {
        Window win({"train_data.limit=1500", "test_data.limit=500", "train.epochs=40"});
        QVERIFY(win.w.openPipeline(kMlp, true));
        QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
        QString why;
        QVERIFY2(win.w.startRun(&why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(win.w.plots()->pointCount("train_loss") > 0, 120000);
        win.w.session()->stop();
        QVERIFY(finished.wait(60000));
        Panel *panel = win.panel();
        QTRY_COMPARE(panel->cellText(0, Panel::Status), QString("stopped"));
        const QString dir = panel->runAt(0);
        const int stepsBefore = readJson(dir + "/run.json")["steps"].toInt();
        QVERIFY(stepsBefore > 0 && stepsBefore < 480);
        panel->selectRuns({dir});
        QVERIFY(win.button("runs_resume")->isEnabled());
        QTest::mouseClick(win.button("runs_resume"), Qt::LeftButton);
        QVERIFY(win.w.isRunning());
        QCOMPARE(win.w.session()->request().resumeDir, dir);
        // Held after its first step, so that it is surely seen going on: then it can be
        // neither deleted nor resumed again.
        win.w.session()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(win.w.session()->isPaused(), 60000);
        QTRY_COMPARE(panel->cellText(panel->rowOf(dir), Panel::Status), QString("running"));
        panel->selectRuns({dir});
        QVERIFY(!win.button("runs_delete")->isEnabled());
        QVERIFY(!win.button("runs_resume")->isEnabled());
        // The curve goes on from where it stopped: its first points are still there.
        QVERIFY(win.w.plots()->pointCount("train_loss") > 0);
        win.w.session()->resume();
        QVERIFY(finished.wait(180000));
        QVERIFY(finished.back().front().toBool());
        const QJsonObject run = readJson(dir + "/run.json");
        QCOMPARE(run["status"].toString(), QString("ok"));
        QCOMPARE(run["resumes"].toInt(), 1);
        QCOMPARE(run["steps"].toInt(), 480);
        QTRY_COMPARE(panel->cellText(panel->rowOf(dir), Panel::Status), QString("ok"));
        QCOMPARE(panel->visibleRows(), 1); // one run, not two
    }

    // Two runs that differ in one learning rate: Compare overlays them, Diff names the change,
    // on the canvas and in its window, and the manifests' differences with it.
    void compareAndDiffTwoRuns()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kMlp, true));
        QVERIFY(!runToEnd(win).isEmpty());
        QVERIFY(win.w.pipeline()->setParam("optimizer", "lr", 0.2).ok());
        QVERIFY(!runToEnd(win).isEmpty());
        Panel *panel = win.panel();
        QTRY_COMPARE(panel->visibleRows(), 2);
        QVERIFY(panel->renameRun(panel->runAt(1), "lr 0.05"));
        QVERIFY(panel->renameRun(panel->runAt(0), "lr 0.2"));
        const QStringList both{panel->runAt(0), panel->runAt(1)};

        panel->selectRuns({both[0]});
        QVERIFY(!win.button("runs_compare")->isEnabled());
        QVERIFY(!win.button("runs_diff")->isEnabled());
        panel->selectRuns(both);
        QVERIFY(win.button("runs_diff")->isEnabled());
        QTest::mouseClick(win.button("runs_compare"), Qt::LeftButton);
        widgets::LivePlots *plots = win.w.plots();
        QVERIFY(plots->comparing());
        QCOMPARE(plots->comparedRuns(), (QStringList{"lr 0.2", "lr 0.05"}));
        // Both curves (their point counts follow the progress reports' timing, not the steps).
        QVERIFY(plots->pointCount("run0/train_loss") > 0);
        QVERIFY(plots->pointCount("run1/train_loss") > 0);
        QVERIFY(plots->values("run0/train_loss") != plots->values("run1/train_loss"));
        QCOMPARE(plots->legendName("run1/train_loss"), QString("lr 0.05"));
        // The panel shows each run's colour beside its name.
        for (int i = 0; i < 2; ++i) {
            const QVariant swatch = panel->table()
                                        ->model()
                                        ->index(panel->rowOf(both[i]), Panel::Name)
                                        .data(Qt::DecorationRole);
            QCOMPARE(swatch.value<QPixmap>().toImage().pixelColor(5, 5), plots->runColor(i));
        }

        // Diff: the later run's pipeline on the canvas (the unsaved edit is discarded when
        // asked), the optimizer marked, and the Run Diff window's lines.
        QStringList asked;
        win.w.setAsker([&](const QString &title, const QString &, QMessageBox::StandardButtons) {
            asked << title;
            return QMessageBox::Discard;
        });
        panel->selectRuns(both);
        QTest::mouseClick(win.button("runs_diff"), Qt::LeftButton);
        QCOMPARE(asked, QStringList{"Unsaved changes"});
        widgets::RunDiffView *diff = win.w.runDiff();
        QVERIFY(diff);
        QVERIFY(diff->window()->isVisible());
        QVERIFY(diff->window()->windowTitle().contains("lr 0.05 → lr 0.2"));
        const QStringList lines = diff->lines();
        QVERIFY2(lines.contains("Pipeline: 1 node(s) differ"), qPrintable(lines.join('\n')));
        QVERIFY2(lines.contains("  optimizer: lr: 0.05 → 0.2"), qPrintable(lines.join('\n')));
        QVERIFY(!lines.filter(QRegularExpression("^  pipeline\\.sha256: ")).isEmpty());
        QVERIFY(lines.filter("software.").isEmpty()); // same build, same machine
        const auto *marked = win.w.scene()->nodeItem("optimizer");
        QCOMPARE(marked->diffMark(), widgets::DiffMark::Changed);
        QCOMPARE(marked->diffText(), QString("lr 0.05 → 0.2"));
        QCOMPARE(win.w.scene()->nodeItem("fc1")->diffMark(), widgets::DiffMark::None);
        QCOMPARE(win.w.pipeline()->document().node("optimizer")->params["lr"].get<double>(), 0.2);

        // Its line, activated, shows the node; the first edit ends the marks.
        QTreeWidgetItem *line = diff->tree()->topLevelItem(0)->child(0);
        emit diff->tree()->itemActivated(line, 0);
        QCOMPARE(win.w.scene()->selectedNodeIds(), std::vector<std::string>{"optimizer"});
        QVERIFY(win.w.pipeline()->setParam("fc1", "out_features", 64).ok());
        QCOMPARE(marked->diffMark(), widgets::DiffMark::None);

        // A new run ends the comparison.
        QVERIFY(!runToEnd(win).isEmpty());
        QVERIFY(!plots->comparing());
    }

    // A sweep started from the window: its runs are listed like any other, the Sweep view shows
    // the parallel-coordinates plot (learning rates two decades apart on a log axis) and the
    // table, and clicking a line opens that run.
    void sweepFromTheWindow()
    {
        Window win({"train_data.limit=1500", "test_data.limit=500", "train.epochs=1"});
        QVERIFY(win.w.openPipeline(kMlp, true));
        QSignalSpy finished(&win.w, &app::MainWindow::sweepFinished);
        QString why;
        QVERIFY2(win.w.startSweep({"optimizer.lr=0.001,0.01,0.1"}, 2, 0, &why), qPrintable(why));
        QVERIFY(win.w.isSweeping());
        QCOMPARE(win.button("runs_sweep")->text(), QString("Stop Sweep"));
        QVERIFY(!win.w.startRun(&why)); // one thing at a time
        QVERIFY(why.contains("sweep"));
        QVERIFY(finished.wait(180000));
        QVERIFY(finished.front().front().toBool());
        QCOMPARE(win.button("runs_sweep")->text(), QString("Sweep…"));

        Panel *panel = win.panel();
        QTRY_COMPARE(panel->visibleRows(), 3);
        QStringList names;
        for (int i = 0; i < 3; ++i)
            names << panel->cellText(i, Panel::Name);
        names.sort();
        QCOMPARE(names, (QStringList{"lr=0.001", "lr=0.01", "lr=0.1"}));

        widgets::SweepView *view = win.w.sweepView();
        QCOMPARE(view->table()->rowCount(), 3);
        widgets::ParallelCoordinates *plot = view->plot();
        QCOMPARE(plot->axes().size(), size_t(2));
        QCOMPARE(plot->axes()[0].title, QString("lr"));
        QVERIFY(plot->axes()[0].log);
        QCOMPARE(plot->lines().size(), size_t(3));
        // Click the middle of the first line's segment: that run opens.
        win.w.dockWidget("sweep")->raise();
        QTRY_VERIFY(plot->isVisible() && plot->width() > 100);
        const QPointF a = plot->pointOf(0, 0), b = plot->pointOf(0, 1);
        const QString clicked = plot->lines()[0].id;
        QCOMPARE(plot->lineAt((a + b) / 2), 0);
        QTest::mouseClick(plot, Qt::LeftButton, {}, ((a + b) / 2).toPoint());
        QTRY_VERIFY(win.w.plots()->pointCount("train_loss") > 0);
        QCOMPARE(QFileInfo(win.w.inference()->model()), QFileInfo(clicked));
    }

    // Find Learning Rate… on the optimizer: the range test's curve and suggestion in its window;
    // the optimizer's value changes only when Use is pressed, and Undo takes it back.
    void learningRateRangeTest()
    {
        Window win({"train_data.limit=3000", "test_data.limit=500"});
        QVERIFY(win.w.openPipeline(kMlp, true));
        win.w.scene()->selectNodes({"optimizer"});
        auto *find = win.w.inspector()->findChild<QPushButton *>("find_learning_rate");
        QVERIFY(find);
        QSignalSpy found(&win.w, &app::MainWindow::learningRateFound);
        QTest::mouseClick(find, Qt::LeftButton);
        QVERIFY(found.wait(120000));
        QVERIFY(found.front().front().toBool());
        widgets::LrFinderView *view = win.w.lrFinder();
        QVERIFY(view && view->window()->isVisible());
        QCOMPARE(view->optimizer(), QString("optimizer"));
        QVERIFY2(view->suggested() > 1e-4 && view->suggested() < 1, qPrintable(view->text()));
        QVERIFY(view->plot()->graphCount() == 2 && view->plot()->graph(1)->dataCount() >= 20);
        QVERIFY(view->text().contains("nothing changes unless you press Use"));
        auto lr = [&] {
            return win.w.pipeline()->document().node("optimizer")->params["lr"].get<double>();
        };
        QCOMPARE(lr(), 0.05); // a hint, not applied
        QTest::mouseClick(view->useButton(), Qt::LeftButton);
        QCOMPARE(lr(), view->suggested());
        win.w.pipeline()->undoStack()->undo();
        QCOMPARE(lr(), 0.05);
    }

    void killedDamagedAndOlderRunsAreListed()
    {
        Window win({"train_data.limit=1500", "test_data.limit=500", "train.epochs=40"});
        QVERIFY(win.w.openPipeline(kMlp, true));
        QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
        QVERIFY(win.w.startRun());
        QTRY_VERIFY_WITH_TIMEOUT(win.w.plots()->pointCount("train_loss") > 0, 120000);
        QCOMPARE(::kill(pid_t(win.w.session()->processId()), SIGKILL), 0);
        QVERIFY(finished.wait(30000));
        Panel *panel = win.panel();
        QTRY_COMPARE(panel->cellText(0, Panel::Status), QString("killed"));

        // A damaged run.json and an older Flowbench's folder (no run.json, only its log).
        const QString damaged = win.runs.filePath("damaged");
        QDir().mkpath(damaged);
        QFile f(damaged + "/run.json");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"flowbench.run\", \"name\": \"cut of");
        f.close();
        const QString older = win.runs.filePath("older");
        QDir().mkpath(older);
        QFile log(older + "/events.jsonl");
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write("{\"type\":\"run_start\",\"version\":2,\"device\":\"cpu\",\"epochs\":1,"
                  "\"steps_per_epoch\":2,\"pipeline\":\"old.json\"}\n"
                  "{\"type\":\"progress\",\"step\":1,\"epoch\":1,\"loss\":2.0}\n"
                  "{\"type\":\"progress\",\"step\":2,\"epoch\":1,\"loss\":1.5}\n"
                  "{\"status\":\"ok\",\"steps\":2,\"wall_s\":1.5,\"test_accuracy\":0.5}\n");
        log.close();
        panel->refresh();
        QCOMPARE(panel->visibleRows(), 3);
        const int d = panel->rowOf(damaged);
        QCOMPARE(panel->cellText(d, Panel::Status), QString("damaged"));
        QVERIFY(panel->table()
                    ->model()
                    ->index(d, Panel::Status)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("not valid JSON"));
        // Opening the damaged one says why; the older one opens.
        QString why;
        QVERIFY(!win.w.openRun(damaged, &why));
        QVERIFY(why.contains("no event log"));
        const int o = panel->rowOf(older);
        QCOMPARE(panel->cellText(o, Panel::Status), QString("ok"));
        QCOMPARE(panel->cellText(o, Panel::Pipeline), QString("old"));
        QVERIFY2(win.w.openRun(older, &why), qPrintable(why));
        QCOMPARE(win.w.plots()->pointCount("train_loss"), 2);
    }
};

QTEST_MAIN(TestRunsPanel)
#include "test_runs_panel.moc"
