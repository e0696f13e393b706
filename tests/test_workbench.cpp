// The workbench window as a person uses it: the real MainWindow on the offscreen platform,
// runs in a real flowbench-cli child process on a small subset of Fashion-MNIST.
#include <csignal>

#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTextBrowser>
#include <QTimer>
#include <QListWidget>
#include <QTreeWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QScopeGuard>
#include <cstdio>
#include "core/exec/listen_options.h"
#include "core/exec/node_type.h"

#include <QtTest>
#include <QSpinBox>

#include "app/gui/data_set_dialog.h"
#include "app/gui/main_window.h"
#include "core/graph/pipeline_file.h"
#include "widgets/canvas/canvas_items.h"
#include "widgets/canvas/graph_scene.h"
#include "widgets/canvas/graph_view.h"
#include "widgets/editing/edited_pipeline.h"
#include "widgets/editing/recovery.h"
#include "widgets/evaluation/evaluation_view.h"
#include "widgets/inference/inference_panel.h"
#include "widgets/log/log_view.h"
#include "widgets/palette/node_palette.h"
#include "widgets/plots/live_plots.h"
#include "widgets/run/run_record.h"
#include "widgets/run/run_session.h"

using namespace fb;

namespace {

const QString kCnn =
    QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");

std::string docJson(const app::MainWindow &w)
{
    return graph::serializePipeline(w.pipeline()->document());
}

// A window with a run folder of its own, running small and on the CLI just built.
struct Window {
    QTemporaryDir runs;
    app::MainWindow w;
    Window(const QStringList &settings = {"train_data.limit=1500", "test_data.limit=500",
                                          "train.epochs=1"})
    {
        w.setRunsDirectory(runs.path());
        w.setRunThreads(2);
        w.setRunSettings(settings);
        w.resize(1400, 900);
        w.show();
    }
};

// The spoken_digits example, reading its recordings from `folder` instead of the home folder.
QString spokenDigitsExampleReading(const QString &folder, const QTemporaryDir &dir)
{
    QFile in(QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/spoken_digits.json"));
    if (!in.open(QIODevice::ReadOnly)) return {};
    QByteArray text = in.readAll();
    text.replace("~/.local/share/flowbench/spoken_digits", folder.toUtf8());
    QFile out(dir.filePath("spoken_digits.json"));
    if (!out.open(QIODevice::WriteOnly)) return {};
    out.write(text);
    return out.fileName();
}

QString missingSpeechTools()
{
    for (const char *tool : {"espeak-ng", "flite", "text2wave", "sox"})
        if (QStandardPaths::findExecutable(tool).isEmpty())
            return QString("%1 is not installed (scripts/deps.sh installs it)").arg(tool);
    return {};
}

int recordingsIn(const QString &folder)
{
    return int(QDir(folder).entryList({"*_*_*.wav"}, QDir::Files).size());
}

const QString kMakeHint = QStringLiteral("File > Make Spoken-Digits Data Set");

} // namespace

class TestWorkbench : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        qputenv("FLOWBENCH_CLI", FLOWBENCH_CLI);
    }

    // Crash recovery as a person meets it: a window (another process) deletes a node, is
    // SIGKILLed after its autosave, and the next window offers the edit back.
    void killedWindowsEditIsRestored()
    {
        QTemporaryDir dir;
        qputenv("FLOWBENCH_RECOVERY_DIR", dir.path().toLocal8Bit());
        auto unset = qScopeGuard([] { qunsetenv("FLOWBENCH_RECOVERY_DIR"); });
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--recovery-child")});
        QVERIFY(child.waitForStarted());
        QByteArray said;
        QElapsedTimer clock;
        clock.start();
        while (!said.contains('\n') && clock.elapsed() < 60000 &&
               child.state() == QProcess::Running) {
            child.waitForReadyRead(200);
            said += child.readAllStandardOutput();
        }
        QVERIFY2(said.startsWith("autosaved after "), said.constData());
        // At most 10 s of edits may be lost to a kill at any moment.
        const int ms = said.mid(int(qstrlen("autosaved after "))).split(' ').value(0).toInt();
        QVERIFY2(ms > 0 && ms <= 10000, said.constData());
        child.kill();
        QVERIFY(child.waitForFinished(10000));
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);

        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.pipeline()->document().node("relu3"));
        QString offer;
        QMessageBox::StandardButton answer = QMessageBox::Ignore;
        win.w.setAsker([&](const QString &, const QString &text, QMessageBox::StandardButtons b) {
            offer = text;
            return b.testFlag(answer) ? answer : QMessageBox::Cancel;
        });
        // Kept for later: nothing changes, and it is offered again.
        QVERIFY(!win.w.offerRecovery());
        QVERIFY2(offer.contains(QStringLiteral("fashion_mnist_cnn.json")), qPrintable(offer));
        QVERIFY(win.w.pipeline()->document().node("relu3"));
        answer = QMessageBox::Open;
        offer.clear();
        QVERIFY(win.w.offerRecovery());
        QVERIFY(!offer.isEmpty());
        QVERIFY(!win.w.pipeline()->document().node("relu3"));
        QVERIFY(win.w.pipeline()->isModified());
        QVERIFY(win.w.isWindowModified());
        // The edit was made on an untitled copy of the example: restored as untitled too, so
        // that saving it never writes over the shipped example.
        QVERIFY(win.w.pipeline()->filePath().isEmpty());
        // The crashed window's files are gone; the restored edit is this window's autosave now.
        const QStringList left = QDir(dir.path()).entryList(QDir::Files);
        QCOMPARE(left.filter(QStringLiteral(".pipeline.json")),
                 QStringList{QFileInfo(win.w.recovery()->pipelineFile()).fileName()});
        // A window started beside a running one offers nothing of it.
        {
            app::MainWindow other;
            bool asked = false;
            other.setAsker([&](const QString &, const QString &, QMessageBox::StandardButtons) {
                asked = true;
                return QMessageBox::Open;
            });
            QVERIFY(!other.offerRecovery());
            QVERIFY(!asked);
        }
        // Saved: the autosave goes.
        QTemporaryDir saveDir;
        QVERIFY(win.w.savePipeline(saveDir.filePath(QStringLiteral("cnn.json"))));
        QVERIFY(!QFileInfo::exists(win.w.recovery()->pipelineFile()));
    }

    void opensAndShowsTheDocument()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.windowTitle().contains(QStringLiteral("fashion_mnist_cnn.json")));
        QVERIFY(!win.w.isWindowModified());
        QCOMPARE(win.w.scene()->nodeItemCount(), int(win.w.pipeline()->document().nodes().size()));
        QTRY_COMPARE(win.w.problemsList()->count(), 0);
        // Every toolbar action explains itself.
        for (const char *name : {"new", "open", "save", "undo", "redo", "run", "pause", "stop"})
            QVERIFY2(!win.w.action(name)->toolTip().isEmpty(), name);
        QVERIFY(win.w.action("run")->isEnabled());
        QVERIFY(!win.w.action("stop")->isEnabled());
        // A file that is not a pipeline: refused, the document stays.
        QTemporaryDir dir;
        QFile bad(dir.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{");
        bad.close();
        const std::string before = docJson(win.w);
        QVERIFY(!win.w.openPipeline(bad.fileName(), true));
        QCOMPARE(docJson(win.w), before);
        QVERIFY(win.w.log()->text().contains(QStringLiteral("bad.json")));
    }

    // A shipped example opens as an untitled copy: Ctrl+S asks where (suggesting the example's
    // name, not in the examples folder) and the example's file is never written; the saved copy
    // is then an ordinary file.
    void examplesOpenAsUntitledCopies()
    {
        QFile original(kCnn);
        QVERIFY(original.open(QIODevice::ReadOnly));
        const QByteArray before = original.readAll();
        original.close();
        QTemporaryDir dir;
        Window win;
        QStringList suggested;
        win.w.setSavePathChooser([&](const QString &start) {
            suggested << start;
            return dir.filePath("mine.json");
        });
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.pipeline()->filePath().isEmpty());
        QCOMPARE(win.w.pipeline()->displayName(),
                 QStringLiteral("fashion_mnist_cnn.json (example copy)"));
        QVERIFY(!win.w.isWindowModified());
        QVERIFY(win.w.pipeline()->setParam("fc1", "out_features", 64).ok());
        win.w.action("save")->trigger();
        QCOMPARE(suggested.size(), 1);
        QVERIFY2(suggested[0].endsWith("/fashion_mnist_cnn.json"), qPrintable(suggested[0]));
        QVERIFY2(!suggested[0].contains("resources/examples"), qPrintable(suggested[0]));
        QCOMPARE(win.w.pipeline()->filePath(), QFileInfo(dir.filePath("mine.json")).absoluteFilePath());
        QVERIFY(!win.w.isWindowModified());
        QVERIFY(QFileInfo::exists(dir.filePath("mine.json")));
        QVERIFY(original.open(QIODevice::ReadOnly));
        QCOMPARE(original.readAll(), before); // the example is untouched
        original.close();
        // The copy is an ordinary file now: the next save goes there without asking.
        QVERIFY(win.w.pipeline()->setParam("fc1", "out_features", 32).ok());
        win.w.action("save")->trigger();
        QCOMPARE(suggested.size(), 1);
        QVERIFY(win.w.openPipeline(dir.filePath("mine.json"), true));
        QCOMPARE(win.w.pipeline()->displayName(), QStringLiteral("mine.json"));
        QCOMPARE(win.w.pipeline()->document().param("fc1", "out_features", exec::nodeTypes()),
                 nlohmann::json(32));
    }

    void titleShowsUnsavedChangesAndCloseAsks()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.pipeline()->setParam("fc1", "out_features", 64).ok());
        QVERIFY(win.w.isWindowModified());
        QVERIFY(win.w.windowTitle().contains(QStringLiteral("[*]")));
        // Undo says what it would undo.
        QVERIFY2(win.w.action("undo")->toolTip().contains(QStringLiteral("fc1.out_features")),
                 qPrintable(win.w.action("undo")->toolTip()));
        int asked = 0;
        win.w.setAsker([&](const QString &, const QString &text, QMessageBox::StandardButtons) {
            ++asked;
            return text.contains(QStringLiteral("unsaved")) ? QMessageBox::Cancel
                                                            : QMessageBox::Discard;
        });
        QVERIFY(!win.w.close()); // cancelled: the window and the edit stay
        QCOMPARE(asked, 1);
        QVERIFY(win.w.isVisible());
        QCOMPARE(win.w.pipeline()->document().param("fc1", "out_features", exec::nodeTypes()), nlohmann::json(64));
        // Undo back to the saved state: nothing to ask.
        win.w.action("undo")->trigger();
        QVERIFY(!win.w.isWindowModified());
        QVERIFY(win.w.close());
        QCOMPARE(asked, 1);
    }

    void problemsBlockRunAndLeadToTheNode()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        win.w.pipeline()->remove({}, {graph::Edge{"loss", "loss", "train", "loss", {}}});
        QTRY_VERIFY(win.w.problemsList()->count() > 0);
        QString why;
        QVERIFY(!win.w.startRun(&why));
        QVERIFY2(why.contains(QStringLiteral("problem")), qPrintable(why));
        QVERIFY(!win.w.isRunning());
        // Clicking the problem selects its node.
        QListWidgetItem *item = win.w.problemsList()->item(0);
        QVERIFY(item->text().contains(QStringLiteral("train")));
        emit win.w.problemsList()->itemClicked(item);
        QCOMPARE(win.w.scene()->selectedNodeIds(), std::vector<std::string>{"train"});
        // The train node carries the badge.
        QVERIFY(!win.w.scene()->nodeItem("train")->problems().empty());
    }

    void tinyRunCompletesAndPlots()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        const std::string before = docJson(win.w);
        QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
        QString why;
        QVERIFY2(win.w.startRun(&why), qPrintable(why));
        QVERIFY(win.w.isRunning());
        QVERIFY(!win.w.action("run")->isEnabled());
        QVERIFY(win.w.action("stop")->isEnabled());
        // Editing goes on during a run; the run trains the snapshot taken at its start.
        QVERIFY(win.w.pipeline()->setParam("fc1", "out_features", 16).ok());
        QVERIFY(finished.wait(180000));
        QCOMPARE(finished.front().front().toBool(), true);
        QVERIFY2(win.w.lastRunMessage().contains(QStringLiteral("test accuracy")),
                 qPrintable(win.w.lastRunMessage()));
        // The plots received points, the canvas showed the data flow, evaluation arrived.
        QVERIFY(win.w.plots()->pointCount(QStringLiteral("train_loss")) > 0);
        QVERIFY(win.w.plots()->pointCount(QStringLiteral("samples_per_s")) > 0);
        QVERIFY(win.w.plots()->pointCount(QStringLiteral("val_accuracy")) == 1);
        QVERIFY(win.w.evaluation()->hasEvaluation());
        QCOMPARE(win.w.evaluation()->classCount(), 10);
        // The canvas showed the run: the step's nodes keep its progress; the test data (not
        // part of a training step) none; the wires, once it ended, no rate (their last report's
        // empty queues would read as starving: pausedAndFinishedStatesShowForWhatTheyAre shows
        // them live while it runs).
        QCOMPARE(win.w.scene()->nodeItem("train")->progress(), 1.0);
        QCOMPARE(win.w.scene()->nodeItem("conv1")->progress(), 1.0);
        QCOMPARE(win.w.scene()->nodeItem("optimizer")->progress(), 1.0);
        QCOMPARE(win.w.scene()->nodeItem("test_data")->progress(), -1.0);
        QVERIFY(!win.w.scene()
                     ->edgeItem(graph::Edge{"normalize", "samples", "train", "data", {}})
                     ->hasLiveStats());
        const auto &summary = win.w.lastSummary();
        QCOMPARE(summary.value("status", ""), std::string("ok"));
        QCOMPARE(summary.value("steps", 0), 12); // 1500 samples, batch 128
        // The run used the snapshot: 128 hidden features, not the 16 set while it ran.
        bool sawRunStart = false;
        for (const auto &e : win.w.record()->events())
            if (e.value("type", "") == "run_start") {
                sawRunStart = true;
                QCOMPARE(e.value("parameters", 0), 421642);
            }
        QVERIFY(sawRunStart);
        QVERIFY(!win.w.action("stop")->isEnabled());
        QVERIFY(win.w.action("run")->isEnabled());
        win.w.pipeline()->undoStack()->undo();
        QCOMPARE(docJson(win.w), before);

        // The event stream saved as a run log opens again with the same plots.
        QTemporaryDir dir;
        // File > Export Model: the finished run's model as ONNX, checked on its test set.
        QVERIFY(!win.w.inference()->model().isEmpty());
        QSignalSpy exported(&win.w, &app::MainWindow::modelExported);
        QVERIFY(win.w.exportModel(win.w.inference()->model(), dir.filePath("model.onnx")));
        QVERIFY(exported.wait(120000));
        QVERIFY2(exported.front().at(0).toBool(), qPrintable(exported.front().at(1).toString()));
        QVERIFY2(exported.front().at(1).toString().contains("the same top class for"),
                 qPrintable(exported.front().at(1).toString()));
        QVERIFY(QFileInfo::exists(dir.filePath("model.onnx")));

        const QString log = dir.filePath("events.jsonl");
        QVERIFY(win.w.saveRunLog(log));
        Window other;
        QVERIFY(other.w.openRunLog(log, true));
        for (const QString &series :
             {QStringLiteral("train_loss"), QStringLiteral("val_accuracy"), QStringLiteral("cpu")})
            QCOMPARE(other.w.plots()->pointCount(series), win.w.plots()->pointCount(series));
        QVERIFY(other.w.evaluation()->hasEvaluation());
    }

    // A person sets Processes to 2 in the toolbar and runs: mpirun trains on 2 ranks, and the
    // plots show each rank's throughput and the all-reduce's share of the step.
    void dataParallelRunFromTheToolbar()
    {
        Window win({"train_data.limit=2000", "test_data.limit=300", "train.epochs=1"});
        win.w.setRunThreads(1);
        QVERIFY(win.w.waitForDevices(60000));
        auto *ranks = win.w.findChild<QSpinBox *>("ranks");
        QVERIFY(ranks);
        if (!ranks->isEnabled()) {
            // Disabled with the reason, never hidden.
            QVERIFY2(ranks->toolTip().contains("MPI") || ranks->toolTip().contains("mpirun"),
                     qPrintable(ranks->toolTip()));
            QSKIP("no MPI in this build, or no mpirun");
        }
        QVERIFY(win.w.openPipeline(
            QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json"),
            true));
        ranks->setValue(2);
        QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
        QString why;
        QVERIFY2(win.w.startRun(&why), qPrintable(why));
        QVERIFY(finished.wait(180000));
        QVERIFY2(finished.front().front().toBool(), qPrintable(win.w.lastRunMessage()));
        const auto &summary = win.w.lastSummary();
        QVERIFY2(summary.contains("bottleneck_cause"), summary.dump().c_str());
        int started = 0;
        for (const auto &e : win.w.record()->events())
            if (e.value("type", "") == "run_start") {
                ++started;
                QCOMPARE(e.value("ranks", 0), 2);
            }
        QCOMPARE(started, 1);
        for (const char *series :
             {"rank_samples_per_s:0", "rank_samples_per_s:1", "allreduce_share", "samples_per_s"})
            QVERIFY2(win.w.plots()->pointCount(series) > 0, series);
    }

    void killedChildIsReportedAndTheDocumentIsUntouched()
    {
        Window win({"train.epochs=3"});
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.pipeline()->setParam("fc1", "out_features", 100).ok()); // unsaved work
        const std::string before = docJson(win.w);
        QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
        QString why;
        QVERIFY2(win.w.startRun(&why), qPrintable(why));
        // Wait until it trains, then kill the engine as a crash or the OOM killer would.
        QTRY_VERIFY_WITH_TIMEOUT(win.w.plots()->pointCount(QStringLiteral("train_loss")) > 0,
                                 120000);
        const qint64 pid = win.w.session()->processId();
        QVERIFY(pid > 0);
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.front().front().toBool(), false);
        QVERIFY2(win.w.lastRunMessage().contains(QStringLiteral("signal 9")) ||
                     win.w.lastRunMessage().contains(QStringLiteral("SIGKILL")),
                 qPrintable(win.w.lastRunMessage()));
        // The status bar: one line with the reason.
        QVERIFY2(!win.w.statusText().contains('\n') &&
                     win.w.statusText().contains(QStringLiteral("SIGKILL")),
                 qPrintable(win.w.statusText()));
        // The Log: the reason once, the only error; the engine's own output (the layer table)
        // once, at its own level.
        const QStringList lines = win.w.log()->text().split('\n');
        QCOMPARE(lines.filter(QStringLiteral("abnormally")).size(), 1);
        QCOMPARE(lines.filter(QRegularExpression(QStringLiteral("^\\S+\\s+error "))).size(), 1);
        QCOMPARE(lines.filter(QRegularExpression(QStringLiteral("\\bfc2\\s+linear\\s"))).size(), 1);
        QVERIFY(lines.filter(QStringLiteral("Its last output")).isEmpty());
        // The canvas: nothing live left.
        for (QGraphicsItem *item : win.w.scene()->items()) {
            if (auto *edge = dynamic_cast<widgets::EdgeItem *>(item))
                QVERIFY2(!edge->hasLiveStats(), qPrintable(edge->liveText()));
            if (auto *node = dynamic_cast<widgets::NodeItem *>(item))
                QVERIFY(!node->isBottleneck());
        }
        QVERIFY(!win.w.isRunning());
        // The person's work is as it was, still unsaved, still editable and undoable.
        QCOMPARE(docJson(win.w), before);
        QVERIFY(win.w.isWindowModified());
        QVERIFY(win.w.pipeline()->undoStack()->canUndo());
        QVERIFY(win.w.action("run")->isEnabled());
    }

    void paletteAndKeysReachTheCanvas()
    {
        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(QTest::qWaitForWindowActive(&win.w));
        const size_t nodes = win.w.pipeline()->document().nodes().size();
        // Double-clicking (activating) a palette entry adds the node to the document.
        QTreeWidget *tree = win.w.palette()->tree();
        emit tree->itemActivated(win.w.palette()->itemFor(QStringLiteral("dropout")), 0);
        QCOMPARE(win.w.pipeline()->document().nodes().size(), nodes + 1);
        QVERIFY(win.w.pipeline()->document().node("dropout"));
        QCOMPARE(win.w.scene()->selectedNodeIds(), std::vector<std::string>{"dropout"});

        // Delete with the focus in the palette does not delete the canvas's selection...
        tree->setFocus();
        QTRY_VERIFY(tree->hasFocus());
        QTest::keyClick(tree, Qt::Key_Delete);
        QVERIFY(win.w.pipeline()->document().node("dropout"));
        // ...with the focus on the canvas it does.
        win.w.view()->setFocus();
        QTRY_VERIFY(win.w.view()->hasFocus());
        QTest::keyClick(win.w.view(), Qt::Key_Delete);
        QVERIFY(!win.w.pipeline()->document().node("dropout"));
        QCOMPARE(win.w.pipeline()->document().nodes().size(), nodes);

        // A right click on a node selects it and offers the canvas actions.
        widgets::NodeItem *fc1 = win.w.scene()->nodeItem("fc1");
        const QPoint at = win.w.view()->mapFromScene(fc1->scenePos() + QPointF(60, 8));
        QStringList offered;
        QTimer::singleShot(200, [&] {
            if (QWidget *popup = QApplication::activePopupWidget()) {
                for (QAction *a : popup->actions())
                    offered << a->objectName();
                popup->close();
            }
        });
        QContextMenuEvent menu(QContextMenuEvent::Mouse, at,
                               win.w.view()->viewport()->mapToGlobal(at));
        QApplication::sendEvent(win.w.view()->viewport(), &menu);
        QCOMPARE(win.w.scene()->selectedNodeIds(), std::vector<std::string>{"fc1"});
        QVERIFY2(offered.contains(QStringLiteral("delete")) &&
                     offered.contains(QStringLiteral("duplicate")),
                 qPrintable(offered.join(',')));
    }

    void malformedRunLogDoesNotCrash()
    {
        // A run log edited by hand or cut short: events of the right type with the wrong
        // insides are skipped with a warning, the rest is shown.
        QTemporaryDir dir;
        QFile f(dir.filePath("odd.jsonl"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"type": "run_start", "t": 0, "version": 3, "epochs": 1, "steps_per_epoch": 2}
{"type": "dataflow", "t": 0.5, "consumer": "train", "edges": [1, "x", {"from": 2, "cached": 1}], "stages": [[]], "bottleneck": 7}
{"type": "progress", "t": 1, "step": "one", "epoch": 1, "recent_loss": 0.5, "lr": 0.1}
{"type": "progress", "t": 2, "step": 2, "epoch": 1, "epochs": 1, "total_steps": 2, "recent_loss": 0.4, "lr": 0.1}
{"type": "evaluation", "t": 3, "classes": 5}
)");
        f.close();
        Window win;
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.openRunLog(f.fileName(), true));
        QVERIFY(win.w.plots()->pointCount(QStringLiteral("train_loss")) >= 1);
        QVERIFY(!win.w.evaluation()->hasEvaluation());
    }

    // Opening a pipeline that reads the spoken-digits folder before it is made says how to make
    // it, in the log and the status bar; a pipeline that does not read it says nothing.
    void missingSpokenDigitsPointAtTheMenu()
    {
        Window win;
        QTemporaryDir dir;
        const QString digits = dir.filePath("spoken_digits");
        win.w.setSpokenDigitsDirectory(digits);
        const QString example = spokenDigitsExampleReading(digits, dir);
        QVERIFY(!example.isEmpty());
        QVERIFY(win.w.openPipeline(example, true));
        QVERIFY2(win.w.log()->text().contains(kMakeHint), qPrintable(win.w.log()->text()));
        QVERIFY(win.w.log()->text().contains(digits));
        QVERIFY2(win.w.statusBar()->currentMessage().contains(kMakeHint),
                 qPrintable(win.w.statusBar()->currentMessage()));
        const qsizetype hints = win.w.log()->text().count(kMakeHint);
        QVERIFY(win.w.openPipeline(kCnn, true));
        QCOMPARE(win.w.log()->text().count(kMakeHint), hints);
        // The hint names a menu entry that is there.
        QMenu *file = nullptr;
        for (QAction *a : win.w.menuBar()->actions())
            if (a->text() == "&File") file = a->menu();
        QVERIFY(file);
        QVERIFY(win.w.action("make_spoken_digits"));
        QVERIFY(file->actions().contains(win.w.action("make_spoken_digits")));
        QVERIFY(win.w.action("make_spoken_digits")
                    ->text()
                    .startsWith("Make Spoken-&Digits Data "
                                "Set"));
    }

    // File > Make Spoken-Digits Data Set runs `flowbench-cli make-data spoken-digits` and shows
    // its count in a progress dialog, then where the recordings went; the example opened then
    // has nothing to point at. Two voices (86 recordings with their hard negatives, digits with
    // one sound more, background noise and short sounds) keep it quick.
    void makesTheSpokenDigitsWithProgress()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        qputenv("FLOWBENCH_PROGRESS_SECONDS", "0.2");
        Window win;
        QTemporaryDir dir;
        const QString digits = dir.filePath("spoken_digits");
        win.w.setSpokenDigitsDirectory(digits);
        win.w.setSpokenDigitsVoices(2);
        const QString example = spokenDigitsExampleReading(digits, dir);
        QVERIFY(win.w.openPipeline(example, true));

        win.w.action("make_spoken_digits")->trigger();
        app::DataSetDialog *dialog = win.w.dataSetDialog();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(dialog->isWorking());
        QVERIFY(dialog->buttons()->button(QDialogButtonBox::Cancel));
        QString why;
        QVERIFY(!win.w.makeSpokenDigits(&why)); // one at a time
        QVERIFY(why.contains("already"));
        bool sawCount = false;
        connect(dialog, &app::DataSetDialog::progressed, this, [&](int made, int total) {
            if (made > 0 && made < total && total == 86 &&
                dialog->text().contains(QString("Made %1 of 86 recordings").arg(made)) &&
                dialog->progressBar()->value() == made && dialog->progressBar()->maximum() == 86)
                sawCount = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isWorking(), 120000);
        qunsetenv("FLOWBENCH_PROGRESS_SECONDS");
        QCOMPARE(dialog->state(), app::DataSetDialog::State::Done);
        QVERIFY(sawCount);
        QVERIFY2(dialog->text().contains("Done: 86 recordings in " + digits),
                 qPrintable(dialog->text()));
        QVERIFY(win.w.log()->text().contains("Done: 86 recordings in " + digits));
        QCOMPARE(recordingsIn(digits), 86);
        QPushButton *close = dialog->buttons()->button(QDialogButtonBox::Close);
        QVERIFY(close);
        close->click();
        QVERIFY(!dialog->isVisible());
        const qsizetype hints = win.w.log()->text().count(kMakeHint);
        QVERIFY(win.w.openPipeline(example, true));
        QCOMPARE(win.w.log()->text().count(kMakeHint), hints);
    }

    // Cancel stops the child and everything it started: no recording is made after, the ones
    // made are kept, and the dialog says so.
    void makingTheSpokenDigitsCanBeCancelled()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        qputenv("FLOWBENCH_PROGRESS_SECONDS", "0.2");
        Window win;
        QTemporaryDir dir;
        const QString digits = dir.filePath("spoken_digits");
        win.w.setSpokenDigitsDirectory(digits);
        QVERIFY(win.w.makeSpokenDigits());
        app::DataSetDialog *dialog = win.w.dataSetDialog();
        QTRY_VERIFY_WITH_TIMEOUT(dialog->made() > 0, 60000);
        qunsetenv("FLOWBENCH_PROGRESS_SECONDS");
        QCOMPARE(dialog->total(), 19870);
        dialog->buttons()->button(QDialogButtonBox::Cancel)->click();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isWorking(), 10000);
        QCOMPARE(dialog->state(), app::DataSetDialog::State::Cancelled);
        QVERIFY2(dialog->text().contains("Cancelled with"), qPrintable(dialog->text()));
        QVERIFY(win.w.log()->text().contains("Cancelled with"));
        // The recordings being made at the cancel were finished before the child ended, and the
        // dialog's count is what is there: none is added after.
        const int kept = recordingsIn(digits);
        QVERIFY2(kept > 0 && kept < 19870, qPrintable(QString::number(kept)));
        QCOMPARE(dialog->made(), kept);
        QTest::qWait(2000);
        QCOMPARE(recordingsIn(digits), kept);
        QCOMPARE(QDir(digits).entryList({"*.tmp.wav"}, QDir::Files), QStringList());
    }

    // Without espeak-ng, flite, festival and sox the dialog says what to install.
    void missingSpeechToolsAreNamed()
    {
        const QByteArray path = qgetenv("PATH");
        QTemporaryDir empty;
        qputenv("PATH", empty.path().toUtf8());
        Window win;
        win.w.setSpokenDigitsDirectory(empty.filePath("spoken_digits"));
        const bool started = win.w.makeSpokenDigits();
        app::DataSetDialog *dialog = win.w.dataSetDialog();
        QTRY_VERIFY_WITH_TIMEOUT(dialog && !dialog->isWorking(), 30000);
        qputenv("PATH", path);
        QVERIFY(started);
        QCOMPARE(dialog->state(), app::DataSetDialog::State::Failed);
        QVERIFY2(dialog->text().contains("sudo apt install espeak-ng flite festival"),
                 qPrintable(dialog->text()));
        QVERIFY(win.w.log()->text().contains("sudo apt install espeak-ng flite festival"));
    }

    void themesSwitch()
    {
        Window win;
        win.w.action("theme_dark")->trigger();
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
        QCOMPARE(QSettings().value("theme").toString(), QStringLiteral("dark"));
        win.w.action("theme_light")->trigger();
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 150);
    }

    void layoutIsRestored()
    {
        {
            Window win;
            QVERIFY(win.w.findChild<QDockWidget *>(QStringLiteral("log_dock")));
            win.w.findChild<QDockWidget *>(QStringLiteral("inspector_dock"))->hide();
            win.w.setAsker([](const QString &, const QString &, QMessageBox::StandardButtons) {
                return QMessageBox::Discard;
            });
            QVERIFY(win.w.close()); // saves the layout
        }
        Window again;
        QVERIFY(!again.w.findChild<QDockWidget *>(QStringLiteral("inspector_dock"))->isVisible());
        QSettings().remove("window/state");
    }

    // Listen's threshold, windows and speeds box are kept only where the person chose other than
    // the engine's defaults, so that a new default reaches everyone who never chose; a threshold
    // saved before that (always, as "listen/detect_threshold") counts as a choice unless it is
    // 0.85, what it held for everyone (while the default is 0.85 too, that case looks the same
    // as a choice of the default; the old keys' removal and the other values tell).
    void listenChoicesAreKeptOnlyWhereTheyDifferFromTheDefaults()
    {
        const fb::exec::ListenOptions defaults;
        // Whatever happens here, the next tests start with no listen choice saved.
        auto cleared = qScopeGuard([] {
            for (const char *key : {"listen/chosen_threshold", "listen/detect_threshold",
                                    "listen/threshold", "listen/average", "listen/warp"})
                QSettings().remove(key);
            QSettings().remove("window/state");
        });
        const auto closed = [](Window &win) {
            win.w.setAsker([](const QString &, const QString &, QMessageBox::StandardButtons) {
                return QMessageBox::Discard;
            });
            QVERIFY(win.w.close());
        };
        QSettings().setValue("listen/detect_threshold", 0.85);
        QSettings().setValue("listen/threshold", 0.6);
        {
            Window win;
            QCOMPARE(win.w.inference()->listenThreshold(), defaults.threshold);
            QCOMPARE(win.w.inference()->listenAverage(), defaults.average);
            closed(win);
        }
        QSettings s;
        QVERIFY(!s.contains("listen/chosen_threshold"));
        QVERIFY(!s.contains("listen/detect_threshold"));
        QVERIFY(!s.contains("listen/threshold"));
        QVERIFY(!s.contains("listen/average"));
        s.setValue("listen/detect_threshold", 0.7);
        s.sync();
        {
            Window win;
            QCOMPARE(win.w.inference()->listenThreshold(), 0.7);
            win.w.inference()->setListenAverage(defaults.average + 2);
            win.w.inference()->setListenWarp(false);
            closed(win);
        }
        s.sync();
        QCOMPARE(s.value("listen/chosen_threshold").toDouble(), 0.7);
        QCOMPARE(s.value("listen/average").toInt(), defaults.average + 2);
        QCOMPARE(s.value("listen/warp").toBool(), false);
        {
            Window win;
            QCOMPARE(win.w.inference()->listenThreshold(), 0.7);
            QCOMPARE(win.w.inference()->listenAverage(), defaults.average + 2);
            QVERIFY(!win.w.inference()->listenWarp());
            win.w.inference()->setListenThreshold(defaults.threshold);
            win.w.inference()->setListenAverage(defaults.average);
            win.w.inference()->setListenWarp(true);
            closed(win);
        }
        s.sync();
        QVERIFY(!s.contains("listen/chosen_threshold"));
        QVERIFY(!s.contains("listen/average"));
        QVERIFY(!s.contains("listen/warp"));
        // A threshold chosen under the new key wins over one saved under the old.
        s.setValue("listen/chosen_threshold", 0.75);
        s.setValue("listen/detect_threshold", 0.7);
        s.sync();
        {
            Window win;
            QCOMPARE(win.w.inference()->listenThreshold(), 0.75);
            closed(win);
        }
        s.sync();
        QCOMPARE(s.value("listen/chosen_threshold").toDouble(), 0.75);
        QVERIFY(!s.contains("listen/detect_threshold"));
    }

    // Paused, the status bar says so (not a stale rate and ETA) and the wires drop their live
    // figures; finished, no wire is left red with 0/s.
    void pausedAndFinishedStatesShowForWhatTheyAre()
    {
        Window win({"train_data.limit=1500", "test_data.limit=500", "train.epochs=30"});
        QVERIFY(win.w.openPipeline(QStringLiteral(FLOWBENCH_SOURCE_DIR
                                                  "/resources/examples/fashion_mnist_mlp.json"),
                                   true));
        QSignalSpy finished(&win.w, &app::MainWindow::runFinished);
        QVERIFY(win.w.startRun());
        auto liveEdges = [&] {
            int n = 0;
            for (QGraphicsItem *item : win.w.scene()->items())
                if (auto *edge = dynamic_cast<widgets::EdgeItem *>(item))
                    n += edge->hasLiveStats();
            return n;
        };
        QTRY_VERIFY_WITH_TIMEOUT(liveEdges() > 0, 60000);
        win.w.session()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(win.w.session()->isPaused(), 30000);
        QVERIFY2(win.w.statusText().startsWith("Paused after step"),
                 qPrintable(win.w.statusText()));
        QVERIFY(!win.w.statusText().contains("ETA"));
        QCOMPARE(liveEdges(), 0);
        QTest::qWait(300); // no progress report arriving late overwrites it
        QVERIFY(win.w.statusText().startsWith("Paused"));
        win.w.session()->resume();
        QTRY_VERIFY_WITH_TIMEOUT(win.w.statusText().contains("ETA"), 30000);
        QVERIFY(finished.wait(120000));
        QVERIFY(finished.front().front().toBool());
        QCOMPARE(liveEdges(), 0);
        QVERIFY(win.w.statusText().startsWith("Run finished"));
    }

    // Smaller things from the walkthrough: Save As has Ctrl+Shift+S, Open Example lists the
    // pipelines by name, and an empty pipeline cannot be run (said in Problems); Help has the
    // keyboard shortcuts (from the actions themselves) and a getting-started page.
    void smallerWindowDetails()
    {
        Window win;
        const QString keys = win.w.shortcutsText();
        QVERIFY2(keys.contains("Save As") && keys.contains("Ctrl+Shift+S") && keys.contains("F5") &&
                     keys.contains("Shift+F5"),
                 qPrintable(keys));
        win.w.showGettingStarted();
        auto *page = win.w.findChild<QTextBrowser *>("getting_started_text");
        QVERIFY(page);
        QVERIFY(page->toPlainText().contains("Open an example"));
        QVERIFY(page->window()->isVisible());
        QCOMPARE(win.w.action("save_as")->shortcut(), QKeySequence("Ctrl+Shift+S"));
        auto *mlp = win.w.findChild<QAction *>("example_fashion_mnist_mlp");
        QVERIFY(mlp);
        QCOMPARE(mlp->text(), QString("Fashion-MNIST MLP"));
        QVERIFY(mlp->toolTip().startsWith("fashion_mnist_mlp.json: "));
        win.w.action("new")->trigger();
        QVERIFY(!win.w.action("run")->isEnabled());
        QCOMPARE(win.w.problemsList()->count(), 1);
        QVERIFY(win.w.problemsList()->item(0)->text().contains("no Train node"));
        QString why;
        QVERIFY(!win.w.startRun(&why));
        QVERIFY(why.contains("no Train node"));
        QVERIFY(win.w.openPipeline(kCnn, true));
        QVERIFY(win.w.action("run")->isEnabled());
        QCOMPARE(win.w.problemsList()->count(), 0);
        // The CNN opens readable (fitted, it was at about 0.55: 7 px text), its data sources in
        // sight; Fit to View still shows it whole.
        QApplication::processEvents();
        QVERIFY2(win.w.view()->zoom() >= widgets::GraphView::kReadableZoom - 1e-9,
                 qPrintable(QString::number(win.w.view()->zoom())));
        const QRectF seen =
            win.w.view()->mapToScene(win.w.view()->viewport()->rect()).boundingRect();
        const QRectF source = win.w.scene()->nodeItem("train_data")->sceneBoundingRect();
        QVERIFY2(seen.contains(source),
                 qPrintable(QString("seen %1,%2 %3x%4; train_data %5,%6 %7x%8")
                                .arg(seen.x())
                                .arg(seen.y())
                                .arg(seen.width())
                                .arg(seen.height())
                                .arg(source.x())
                                .arg(source.y())
                                .arg(source.width())
                                .arg(source.height())));
        win.w.action("fit")->trigger();
        for (const auto &n : win.w.pipeline()->document().nodes())
            QVERIFY(win.w.view()
                        ->mapToScene(win.w.view()->viewport()->rect())
                        .boundingRect()
                        .contains(win.w.scene()->nodeItem(n.id)->sceneBoundingRect()));
    }
};

// The window killedWindowsEditIsRestored kills: opens the CNN example, deletes relu3, says how long
// the autosave took to come, then waits to be killed.
int recoveryChild()
{
    QStandardPaths::setTestModeEnabled(true);
    app::MainWindow w;
    w.show();
    if (!w.openPipeline(kCnn, true)) return 1;
    QSignalSpy saved(w.recovery(), &widgets::RecoveryStore::saved);
    QElapsedTimer clock;
    clock.start();
    w.pipeline()->remove({"relu3"}, {});
    if (!saved.wait(20000)) return 2;
    std::printf("autosaved after %lld ms\n", static_cast<long long>(clock.elapsed()));
    std::fflush(stdout);
    QTest::qWait(120000);
    return 3;
}

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    if (argc > 1 && qstrcmp(argv[1], "--recovery-child") == 0) return recoveryChild();
    TestWorkbench test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "test_workbench.moc"
