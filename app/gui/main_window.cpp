#include "app/gui/main_window.h"

#include <algorithm>
#include <cmath>

#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMimeData>
#include <QProcess>
#include <QPainter>
#include <QProgressBar>
#include <QSettings>
#include <QLocale>
#include <QAbstractButton>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTextBrowser>
#include <QUndoStack>
#include <QVBoxLayout>

#include "app/gui/data_set_dialog.h"
#include "app/gui/theme.h"
#include "core/exec/listen_options.h"
#include "core/graph/node_types.h"
#include "core/graph/pipeline_file.h"
#include "core/io/run_folder.h"
#include "widgets/canvas/canvas_items.h"
#include "widgets/editing/recovery.h"
#include "widgets/canvas/graph_scene.h"
#include "widgets/canvas/graph_view.h"
#include "widgets/editing/edited_pipeline.h"
#include "widgets/evaluation/evaluation_view.h"
#include "widgets/audio/record_panel.h"
#include "widgets/inference/inference_panel.h"
#include "widgets/files/atomic_write.h"
#include "widgets/inspector/inspector.h"
#include "widgets/log/log_view.h"
#include "widgets/palette/node_palette.h"
#include "widgets/plots/live_plots.h"
#include "widgets/plots/lr_finder_view.h"
#include "widgets/run/event_fields.h"
#include "widgets/run/run_record.h"
#include "widgets/run/run_session.h"
#include "widgets/runs/run_diff_view.h"
#include "widgets/runs/runs_panel.h"
#include "widgets/runs/sweep_view.h"
#include "widgets/summary/model_summary_view.h"

namespace fb::app {

using widgets::eventFlag;
using widgets::eventNumber;
using widgets::eventString;

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

constexpr const char *kFragmentMime = "application/x-flowbench-fragment";
constexpr int kMaxRecent = 10;

QString clock(double seconds)
{
    if (!(seconds >= 0) || seconds > 1e7) return QStringLiteral("-");
    const long s = long(seconds + 0.5);
    return s >= 3600 ? QStringLiteral("%1:%2:%3")
                           .arg(s / 3600)
                           .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
                           .arg(s % 60, 2, 10, QLatin1Char('0'))
                     : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_pipeline(new widgets::EditedPipeline(this))
    , m_scene(new widgets::GraphScene(m_pipeline, this))
    , m_view(new widgets::GraphView(m_scene, this))
    , m_session(new widgets::RunSession(this))
    , m_record(new widgets::RunRecord(this))
    , m_recovery(
          new widgets::RecoveryStore(m_pipeline, widgets::RecoveryStore::defaultDirectory(), this))
{
    setObjectName(QStringLiteral("MainWindow"));
    setCentralWidget(m_view);
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
    m_ask = [this](const QString &title, const QString &text,
                   QMessageBox::StandardButtons buttons) {
        QMessageBox box(QMessageBox::Question, title, text, buttons, this);
        // The recovery offer's buttons say what they do.
        if (QAbstractButton *b = box.button(QMessageBox::Open)) b->setText(tr("&Restore"));
        if (QAbstractButton *b = box.button(QMessageBox::Ignore)) b->setText(tr("Keep for &Later"));
        return QMessageBox::StandardButton(box.exec());
    };
    m_runsDir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
                QStringLiteral("/runs");
    m_spokenDigitsDir = defaultSpokenDigitsDirectory();

    buildDocks();
    buildActions();
    buildMenus();
    m_runs->setRunsDirectory(m_runsDir);
    m_sweepView->setRunsDirectory(m_runsDir);

    m_statusRun = new QLabel(tr("Ready"));
    m_statusProgress = new QProgressBar;
    m_statusProgress->setMaximumWidth(180);
    m_statusProgress->setTextVisible(false);
    m_statusProgress->hide();
    // Permanent widgets: the run's state stays while transient messages ("Saved ...") show left.
    statusBar()->addPermanentWidget(m_statusRun);
    statusBar()->addPermanentWidget(m_statusProgress);

    connect(m_pipeline, &widgets::EditedPipeline::modifiedChanged, this, &MainWindow::updateTitle);
    // A Run Diff's marks describe the pipeline as the run had it: the first edit ends them.
    connect(m_pipeline->undoStack(), &QUndoStack::indexChanged, this,
            [this] { m_scene->setDiffMarks({}); });
    connect(m_pipeline, &widgets::EditedPipeline::filePathChanged, this, &MainWindow::updateTitle);
    connect(m_pipeline, &widgets::EditedPipeline::problemsChanged, this,
            &MainWindow::updateProblems);
    connect(m_scene, &widgets::GraphScene::selectedNodesChanged, this, [this] {
        const auto ids = m_scene->selectedNodeIds();
        if (ids.size() == 1)
            m_inspector->showNode(ids.front());
        else
            m_inspector->showSelectionCount(int(ids.size()));
        updateActions();
    });
    connect(m_scene, &widgets::GraphScene::message, this,
            [this](const QString &text) { statusBar()->showMessage(text, 6000); });
    connect(m_palette, &widgets::NodePalette::nodeTypeActivated, this, [this](const QString &t) {
        // At the view's centre, or the nearest free place, so it never hides under a node.
        m_scene->addNode(t.toStdString(),
                         m_scene->freeSpotNear(m_view->centerScenePos() -
                                               QPointF(widgets::NodeItem::kWidth / 2, 30)));
        m_view->setFocus();
    });
    connect(m_log, &widgets::LogView::nodeActivated, this, &MainWindow::focusNode);
    connect(m_inspector, &widgets::Inspector::findLearningRateRequested, this, [this] {
        QString why;
        if (!findLearningRate(&why)) QMessageBox::warning(this, tr("Find Learning Rate"), why);
    });
    connect(m_inspector, &widgets::Inspector::nodeRenamed, this,
            [this](const QString &, const QString &newId) {
                m_scene->selectNodes({newId.toStdString()});
            });

    connect(m_session, &widgets::RunSession::eventReceived, this, &MainWindow::onRunEvent);
    connect(m_session, &widgets::RunSession::logLine, m_log, &widgets::LogView::addLine);
    connect(m_session, &widgets::RunSession::pausedChanged, this, [this](bool paused) {
        // Paused, the figures stop: the status bar says so instead of a stale rate and ETA, and
        // the wires and nodes drop their live state until the run goes on.
        if (paused) {
            setRunStatus(tr("Paused after step %1 of %2: Resume (F6) goes on")
                             .arg(m_lastStep)
                             .arg(m_totalSteps));
            m_scene->clearDataFlow();
        } else {
            setRunStatus(tr("Resumed after step %1…").arg(m_lastStep));
        }
        updateActions();
    });
    connect(m_session, &widgets::RunSession::finished, this, &MainWindow::onRunFinished);

    connect(m_recovery, &widgets::RecoveryStore::failed, this, [this](const QString &why) {
        m_log->addLine(QStringLiteral("warning"), tr("autosave failed: %1").arg(why));
        statusBar()->showMessage(tr("Autosave failed: %1").arg(why), 8000);
    });
    if (!m_recovery->isActive())
        m_log->addLine(QStringLiteral("warning"),
                       tr("crash recovery is off: %1").arg(m_recovery->error()));

    restoreSettings();
    updateTitle();
    updateProblems();
    updateActions();
}

void MainWindow::setRunStatus(const QString &text, const QString &tooltip)
{
    const QString line = text.section(QLatin1Char('\n'), 0, 0).simplified();
    const int room = qMax(240, width() / 2);
    m_statusRun->setText(m_statusRun->fontMetrics().elidedText(line, Qt::ElideRight, room));
    m_statusRun->setToolTip(tooltip.isEmpty() ? text : tooltip);
}

bool MainWindow::offerRecovery()
{
    std::vector<widgets::RecoveryStore::Orphan> orphans = m_recovery->orphans();
    for (size_t i = 0; i < orphans.size(); ++i) {
        const auto &o = orphans[i];
        QString text =
            tr("Flowbench did not close properly. Unsaved changes to %1 were recovered "
               "(autosaved %2%3).\n\nRestore them? The pipeline opens with the changes, not yet "
               "saved.")
                .arg(o.displayName,
                     QLocale().toString(o.savedAt.toLocalTime(), QLocale::ShortFormat),
                     o.originalPath.isEmpty() ? QString()
                                              : tr(", edited as %1").arg(o.originalPath));
        if (orphans.size() - i > 1)
            text += tr("\n\n%n more recovered pipeline(s) after this one.", "",
                       int(orphans.size() - i - 1));
        const auto answer = m_ask(tr("Restore unsaved changes?"), text,
                                  QMessageBox::Open | QMessageBox::Discard | QMessageBox::Ignore);
        if (answer == QMessageBox::Discard) {
            m_recovery->discard(o);
            continue;
        }
        if (answer != QMessageBox::Open || !maybeSave()) break;
        if (Status s = m_recovery->adopt(o); !s) {
            QMessageBox::warning(this, tr("Could not restore"), q(s.error().str()));
            m_recovery->release(o);
            break;
        }
        m_log->addLine(QStringLiteral("info"),
                       tr("restored %1 from its autosave of %2")
                           .arg(o.displayName, o.savedAt.toLocalTime().toString(Qt::ISODate)));
        statusBar()->showMessage(tr("Restored %1: save it to keep the changes").arg(o.displayName),
                                 10000);
        // The rest stay for the next start.
        for (size_t j = i + 1; j < orphans.size(); ++j)
            m_recovery->release(orphans[j]);
        return true;
    }
    for (const auto &o : orphans)
        m_recovery->release(o); // kept for the next start (a no-op for those discarded)
    return false;
}

MainWindow::~MainWindow()
{
    // A device listing still running must not answer into a half-destroyed window.
    if (m_devicesProcess) {
        m_devicesProcess->disconnect(this);
        m_devicesProcess->kill();
        m_devicesProcess->waitForFinished(1000);
    }
    // A run must not outlive its window.
    if (m_session->isRunning()) m_session->kill();
    // The children go after this body, in QWidget's destructor: none of their signals may call
    // back into this half-destroyed window (UBSan caught modifiedChanged doing so).
    for (QObject *child : {static_cast<QObject *>(m_pipeline), static_cast<QObject *>(m_scene),
                           static_cast<QObject *>(m_session), static_cast<QObject *>(m_record),
                           static_cast<QObject *>(m_recovery)})
        child->disconnect(this);
}

// ---- actions, menus, docks ------------------------------------------------------------------

QAction *MainWindow::action(const QString &name) const
{
    auto it = m_actions.find(name);
    return it == m_actions.end() ? nullptr : it->second;
}

QDockWidget *MainWindow::dockWidget(const QString &name) const
{
    const auto it = m_docks.find(name);
    return it == m_docks.end() ? nullptr : it->second;
}

void MainWindow::buildActions()
{
    auto make = [this](const QString &name, const QString &text, const QString &tip,
                       QKeySequence shortcut, auto slot,
                       QStyle::StandardPixmap icon = QStyle::SP_CustomBase) {
        auto *a = new QAction(text, this);
        a->setObjectName(name);
        if (!shortcut.isEmpty()) a->setShortcut(shortcut);
        a->setToolTip(shortcut.isEmpty() ? tip
                                         : QStringLiteral("%1 (%2)").arg(
                                               tip, shortcut.toString(QKeySequence::NativeText)));
        a->setStatusTip(tip);
        if (icon != QStyle::SP_CustomBase) a->setIcon(style()->standardIcon(icon));
        connect(a, &QAction::triggered, this, slot);
        m_actions[name] = a;
        return a;
    };
    make(
        "new", tr("&New"), tr("Start an empty pipeline"), QKeySequence::New,
        [this] { newPipeline(); }, QStyle::SP_FileIcon);
    make(
        "open", tr("&Open…"), tr("Open a pipeline file"), QKeySequence::Open,
        [this] { openDialog(); }, QStyle::SP_DialogOpenButton);
    make(
        "save", tr("&Save"), tr("Save the pipeline"), QKeySequence::Save, [this] { save(); },
        QStyle::SP_DialogSaveButton);
    // Ctrl+Shift+S itself: QKeySequence::SaveAs is empty on some desktops (GNOME's, offscreen).
    make("save_as", tr("Save &As…"), tr("Save the pipeline under another name"),
         QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), [this] { saveAs(); });
    make("open_run_log", tr("Open Run &Log…"),
         tr("Open a saved event stream and look at its plots"), QKeySequence(),
         [this] { openRunLogDialog(); });
    make("save_run_log", tr("Save Run Log…"), tr("Save this run's event stream"), QKeySequence(),
         [this] { saveRunLogDialog(); });
    make("export_model", tr("E&xport Model…"),
         tr("Write the trained model (the one Try the Model uses) as ONNX, with its "
            "preprocessing, checked against Flowbench's own results"),
         QKeySequence(), [this] { exportModelDialog(); });
    make("make_spoken_digits", tr("Make Spoken-&Digits Data Set…"),
         tr("Make the recordings the spoken_digits example trains on (espeak-ng, flite, festival "
            "and sox on this machine; a few minutes)"),
         QKeySequence(), [this] {
             QString why;
             if (!makeSpokenDigits(&why)) statusBar()->showMessage(why, 8000);
         });
    make("quit", tr("&Quit"), tr("Quit Flowbench"), QKeySequence::Quit, [this] { close(); });

    QAction *undo = m_pipeline->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setObjectName("undo");
    undo->setShortcut(QKeySequence::Undo);
    undo->setIcon(style()->standardIcon(QStyle::SP_ArrowBack));
    undo->setToolTip(tr("Undo the last edit (%1)")
                         .arg(QKeySequence(QKeySequence::Undo).toString(QKeySequence::NativeText)));
    m_actions["undo"] = undo;
    QAction *redo = m_pipeline->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setObjectName("redo");
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y)});
    redo->setIcon(style()->standardIcon(QStyle::SP_ArrowForward));
    redo->setToolTip(tr("Redo the edit undone last (%1)")
                         .arg(QKeySequence(QKeySequence::Redo).toString(QKeySequence::NativeText)));
    m_actions["redo"] = redo;
    // The tooltips name the edit, as the menu entries do ("Undo Move conv1 (Ctrl+Z)").
    auto tip = [](QAction *a, const QString &what, QKeySequence::StandardKey key) {
        a->setToolTip(QStringLiteral("%1 (%2)").arg(
            what, QKeySequence(key).toString(QKeySequence::NativeText)));
    };
    connect(m_pipeline->undoStack(), &QUndoStack::undoTextChanged, undo,
            [undo, tip](const QString &text) {
                tip(undo, text.isEmpty() ? tr("Undo") : tr("Undo %1").arg(text),
                    QKeySequence::Undo);
            });
    connect(m_pipeline->undoStack(), &QUndoStack::redoTextChanged, redo,
            [redo, tip](const QString &text) {
                tip(redo, text.isEmpty() ? tr("Redo") : tr("Redo %1").arg(text),
                    QKeySequence::Redo);
            });

    make("cut", tr("Cu&t"), tr("Cut the selected nodes"), QKeySequence::Cut, [this] { cut(); });
    make("copy", tr("&Copy"), tr("Copy the selected nodes and the wires between them"),
         QKeySequence::Copy, [this] { copy(); });
    make("paste", tr("&Paste"), tr("Paste nodes"), QKeySequence::Paste, [this] { paste(); });
    make("duplicate", tr("D&uplicate"), tr("Duplicate the selected nodes"),
         QKeySequence(Qt::CTRL | Qt::Key_D), [this] { m_scene->duplicateSelection(); });
    QAction *del = make("delete", tr("&Delete"), tr("Delete the selected nodes and wires"),
                        QKeySequence::Delete, [this] { m_scene->deleteSelection(); });
    del->setShortcuts({QKeySequence::Delete, QKeySequence(Qt::Key_Backspace)});
    make("select_all", tr("Select &All"), tr("Select every node"), QKeySequence::SelectAll, [this] {
        std::vector<std::string> ids;
        for (const auto &n : m_pipeline->document().nodes())
            ids.push_back(n.id);
        m_scene->selectNodes(ids);
    });
    make("find_node_type", tr("Find Node Type"), tr("Search the palette"),
         QKeySequence(Qt::CTRL | Qt::Key_F), [this] {
             m_docks["palette"]->show();
             m_docks["palette"]->raise();
             m_palette->searchField()->setFocus();
             m_palette->searchField()->selectAll();
         });

    make("zoom_in", tr("Zoom &In"), tr("Zoom in"), QKeySequence::ZoomIn,
         [this] { m_view->zoomBy(1.25); });
    make("zoom_out", tr("Zoom &Out"), tr("Zoom out"), QKeySequence::ZoomOut,
         [this] { m_view->zoomBy(0.8); });
    make("zoom_reset", tr("&Actual Size"), tr("Zoom to 100%"), QKeySequence(Qt::CTRL | Qt::Key_0),
         [this] { m_view->resetZoom(); });
    make("fit", tr("&Fit to View"), tr("Show the whole pipeline"), QKeySequence(Qt::Key_F),
         [this] { m_view->fitToView(); });

    make(
        "run", tr("&Run"), tr("Train the pipeline"), QKeySequence(Qt::Key_F5),
        [this] {
            QString why;
            if (!startRun(&why) && !why.isEmpty()) statusBar()->showMessage(why, 8000);
        },
        QStyle::SP_MediaPlay);
    make(
        "pause", tr("&Pause"), tr("Pause or resume the run"), QKeySequence(Qt::Key_F6),
        [this] {
            if (m_session->isPaused())
                m_session->resume();
            else
                m_session->pause();
        },
        QStyle::SP_MediaPause);
    make(
        "stop", tr("&Stop"), tr("Stop the run after the current step, with a checkpoint"),
        QKeySequence(Qt::SHIFT | Qt::Key_F5), [this] { m_session->stop(); }, QStyle::SP_MediaStop);
    make("checkpoint", tr("&Checkpoint Now"), tr("Write a checkpoint of the run now"),
         QKeySequence(), [this] { m_session->checkpointNow(); });
    make("set_lr", tr("Set &Learning Rate…"),
         tr("Change the learning rate of the running training"), QKeySequence(),
         [this] { setLearningRateDialog(); });
    make("shortcuts", tr("&Keyboard Shortcuts"), tr("Every action that has a key, and its key"),
         QKeySequence(Qt::CTRL | Qt::Key_Slash), [this] { showShortcuts(); });
    make("getting_started", tr("&Getting Started"), tr("A short tour: from an example to your own"),
         QKeySequence::HelpContents, [this] { showGettingStarted(); });
    make("about", tr("&About Flowbench"), tr("About Flowbench"), QKeySequence(), [this] {
        QMessageBox::about(this, tr("About Flowbench"),
                           tr("<b>Flowbench %1</b><p>A workbench for machine-learning pipelines: "
                              "build a pipeline as a graph, train it, watch it live.</p>")
                               .arg(QStringLiteral(FLOWBENCH_VERSION)));
    });
}

// The Fit to View icon: four corner brackets around a dot, in the palette's text colour, so it
// reads in both themes (no standard icon means "fit", and the title-bar one vanished in dark).
static QIcon fitIcon()
{
    QPixmap pix(32, 32);
    pix.fill(Qt::transparent);
    QPainter p(&pix);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(QApplication::palette().color(QPalette::ButtonText), 2.5, Qt::SolidLine,
                  Qt::RoundCap, Qt::RoundJoin));
    for (const QPointF &corner : {QPointF(5, 5), QPointF(27, 5), QPointF(27, 27), QPointF(5, 27)}) {
        const double dx = corner.x() < 16 ? 7 : -7, dy = corner.y() < 16 ? 7 : -7;
        p.drawPolyline(QPolygonF({corner + QPointF(dx, 0), corner, corner + QPointF(0, dy)}));
    }
    p.setBrush(QApplication::palette().color(QPalette::ButtonText));
    p.drawEllipse(QPointF(16, 16), 3, 3);
    return QIcon(pix);
}

void MainWindow::buildMenus()
{
    action("fit")->setIcon(fitIcon());
    // Canvas actions whose keys mean something else elsewhere (Delete and Backspace in a list,
    // F for type-ahead, Ctrl+C in the log, Ctrl+D in a text field) work while the canvas has
    // the focus; their menu entries and toolbar buttons work always. The canvas's right-click
    // menu lists them, in this order ("" for a separator).
    for (const char *name : {"cut", "copy", "paste", "duplicate", "delete", "", "select_all", "",
                             "fit", "zoom_in", "zoom_out", "zoom_reset"}) {
        if (!*name) {
            auto *separator = new QAction(this);
            separator->setSeparator(true);
            m_view->addAction(separator);
            continue;
        }
        QAction *a = action(name);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        m_view->addAction(a);
    }

    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(action("new"));
    file->addAction(action("open"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    QMenu *examples = file->addMenu(tr("Open &Example"));
    const QDir dir(examplesDirectory());
    for (const QFileInfo &fi :
         dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        const QString path = fi.absoluteFilePath();
        // Listed by the pipeline's own name ("Fashion-MNIST MLP"), its file and description as
        // the tooltip; a file without a name by its file's.
        QString title = fi.completeBaseName(), tip = fi.fileName();
        QFile file(path);
        if (file.open(QIODevice::ReadOnly)) {
            const QJsonObject o = QJsonDocument::fromJson(file.read(1 << 20)).object();
            if (!o["name"].toString().isEmpty()) title = o["name"].toString();
            if (!o["description"].toString().isEmpty())
                tip += QStringLiteral(": ") + o["description"].toString();
        }
        QAction *a = examples->addAction(title, this, [this, path] {
            if (maybeSave()) openPipeline(path);
        });
        a->setObjectName(QStringLiteral("example_") + fi.completeBaseName());
        a->setToolTip(tip);
        a->setStatusTip(tip);
    }
    examples->setToolTipsVisible(true);
    examples->setEnabled(!examples->isEmpty());
    file->addAction(action("make_spoken_digits"));
    file->addSeparator();
    file->addAction(action("save"));
    file->addAction(action("save_as"));
    file->addSeparator();
    file->addAction(action("open_run_log"));
    file->addAction(action("save_run_log"));
    file->addAction(action("export_model"));
    file->addSeparator();
    file->addAction(action("quit"));

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    for (const char *name : {"undo", "redo"})
        edit->addAction(action(name));
    edit->addSeparator();
    for (const char *name : {"cut", "copy", "paste", "duplicate", "delete"})
        edit->addAction(action(name));
    edit->addSeparator();
    edit->addAction(action("select_all"));
    edit->addAction(action("find_node_type"));

    QMenu *view = menuBar()->addMenu(tr("&View"));
    for (const char *name : {"zoom_in", "zoom_out", "zoom_reset", "fit"})
        view->addAction(action(name));
    view->addSeparator();
    for (const auto &[name, dock] : m_docks)
        view->addAction(dock->toggleViewAction());
    view->addSeparator();
    QMenu *themes = view->addMenu(tr("&Theme"));
    auto *group = new QActionGroup(this);
    const Theme current = themeFromName(QSettings().value("theme", "system").toString());
    for (Theme t : {Theme::System, Theme::Light, Theme::Dark}) {
        const QString label = t == Theme::System  ? tr("&System")
                              : t == Theme::Light ? tr("&Light")
                                                  : tr("&Dark");
        QAction *a = themes->addAction(label);
        a->setObjectName(QStringLiteral("theme_") + themeName(t));
        a->setCheckable(true);
        a->setChecked(t == current);
        group->addAction(a);
        m_actions[a->objectName()] = a;
        connect(a, &QAction::triggered, this, [this, t] {
            applyTheme(t);
            QSettings().setValue("theme", themeName(t));
            // Cached pictures (the grid, each node and wire) were drawn in the old palette.
            for (QGraphicsItem *item : m_scene->items())
                item->update();
            m_view->resetCachedContent();
            action("fit")->setIcon(fitIcon());
            m_plots->replotNow();
        });
    }

    QMenu *run = menuBar()->addMenu(tr("&Run"));
    for (const char *name : {"run", "pause", "stop", "checkpoint", "set_lr"})
        run->addAction(action(name));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(action("getting_started"));
    help->addAction(action("shortcuts"));
    help->addSeparator();
    help->addAction(action("about"));

    QToolBar *tb = addToolBar(tr("Main"));
    tb->setObjectName("main_toolbar");
    tb->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    for (const char *name : {"new", "open", "save"})
        tb->addAction(action(name));
    tb->addSeparator();
    tb->addAction(action("undo"));
    tb->addAction(action("redo"));
    // Undo/Redo name the edit ("Undo Move conv1"): in the menu and the tooltip, not as a toolbar
    // button whose width would change with every edit.
    for (const char *name : {"undo", "redo"})
        if (auto *button = qobject_cast<QToolButton *>(tb->widgetForAction(action(name))))
            button->setToolButtonStyle(Qt::ToolButtonIconOnly);
    tb->addSeparator();
    tb->addAction(action("run"));
    tb->addAction(action("pause"));
    tb->addAction(action("stop"));
    m_device = new QComboBox;
    m_device->setObjectName("device");
    m_device->setToolTip(tr("The device the run trains on"));
    m_device->setMinimumContentsLength(14);
    tb->addWidget(new QLabel(tr(" Device: ")));
    tb->addWidget(m_device);
    // Data-parallel training: the run's child becomes mpirun (docs/distributed.md).
    m_ranks = new QSpinBox;
    m_ranks->setObjectName("ranks");
    m_ranks->setRange(1, 1024);
    m_ranks->setValue(1);
    m_ranks->setSuffix(tr(" proc"));
    m_ranks->setEnabled(false); // until the engine says it has MPI
    m_ranks->setToolTip(tr("Looking for MPI…"));
    tb->addWidget(new QLabel(tr("  Processes: ")));
    tb->addWidget(m_ranks);
    m_hosts = new QToolButton;
    m_hosts->setObjectName("hosts");
    m_hosts->setText(tr("Hosts…"));
    m_hosts->setCheckable(true);
    m_hosts->setEnabled(false);
    m_hosts->setToolTip(tr("Run the processes on the hosts of an Open MPI hostfile (click again "
                           "for this machine only)"));
    connect(m_hosts, &QToolButton::clicked, this, [this] { chooseHostfile(); });
    tb->addWidget(m_hosts);
    tb->addSeparator();
    tb->addAction(action("fit"));
    fillDevices();
}

void MainWindow::fillDevices()
{
    m_device->clear();
    m_device->addItem(tr("CPU"), QStringLiteral("cpu"));
    m_device->setItemData(0, tr("Train on the CPU threads (oneDNN)"), Qt::ToolTipRole);
    m_device->addItem(tr("GPU: looking…"), QString());
    auto *model = qobject_cast<QStandardItemModel *>(m_device->model());
    if (model) model->item(1)->setEnabled(false);
    m_device->setCurrentIndex(0);
    // The engine, not the window, talks to CUDA (a sticky GPU error must never reach the
    // editor): ask `flowbench-cli devices --json` which devices a run can use.
    const QString cli = widgets::RunSession::defaultCliPath();
    if (cli.isEmpty()) {
        applyDeviceList({}, tr("flowbench-cli was not found, so no GPU can be asked for"));
        return;
    }
    auto *process = new QProcess(this);
    m_devicesProcess = process;
    connect(process, &QProcess::finished, this, [this, process](int code, QProcess::ExitStatus st) {
        process->deleteLater();
        if (st != QProcess::NormalExit || code != 0)
            applyDeviceList(
                {}, tr("`flowbench-cli devices` failed: %1")
                        .arg(QString::fromLocal8Bit(process->readAllStandardError()).trimmed()));
        else
            applyDeviceList(process->readAllStandardOutput(), {});
    });
    connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return;
        process->deleteLater();
        applyDeviceList({},
                        tr("flowbench-cli could not be started: %1").arg(process->errorString()));
    });
    process->start(cli, {QStringLiteral("devices"), QStringLiteral("--json")});
}

void MainWindow::applyDeviceList(const QByteArray &json, const QString &failure)
{
    // GPUs a run can use are listed; when there is none, one disabled entry says why rather
    // than hiding the choice (DESIGN.md).
    const QString current = m_device->currentData().toString();
    while (m_device->count() > 1)
        m_device->removeItem(1);
    auto *model = qobject_cast<QStandardItemModel *>(m_device->model());
    QString problem = failure;
    const QJsonObject root = QJsonDocument::fromJson(json).object();
    for (const QJsonValue &v : root.value("devices").toArray()) {
        const QJsonObject d = v.toObject();
        if (d.value("kind").toString() != QLatin1String("cuda")) continue;
        const QString id = d.value("device").toString();
        m_device->addItem(QStringLiteral("%1  %2").arg(id, d.value("name").toString()), id);
        m_device->setItemData(
            m_device->count() - 1,
            tr("%1: %2 GiB, compute capability %3")
                .arg(d.value("name").toString())
                .arg(d.value("memory_bytes").toDouble() / double(1 << 30), 0, 'f', 1)
                .arg(d.value("compute_capability").toString()),
            Qt::ToolTipRole);
    }
    // Data-parallel runs need the engine built with MPI and mpirun to start it.
    const QString mpi = root.value("mpi").toString();
    const QString mpirun = widgets::RunSession::defaultMpirunPath();
    const bool canSpread = !mpi.isEmpty() && !mpirun.isEmpty();
    m_ranks->setEnabled(canSpread);
    m_hosts->setEnabled(canSpread);
    m_ranks->setToolTip(
        canSpread ? tr("Train data-parallel on this many processes with %1 (mpirun): each takes "
                       "its share of every batch, the gradients are summed, and the plots show "
                       "each rank's throughput and the all-reduce's share")
                        .arg(mpi)
        : mpi.isEmpty() ? tr("This build of Flowbench has no MPI: install libopenmpi-dev and "
                             "openmpi-bin (scripts/deps.sh does) and build again")
                        : tr("mpirun was not found: install openmpi-bin"));
    if (!canSpread) m_ranks->setValue(1);
    if (problem.isEmpty()) problem = root.value("gpu_problem").toString();
    if (m_device->count() == 1) {
        m_device->addItem(tr("GPU: none usable"), QString());
        m_device->setItemData(1, problem.isEmpty() ? tr("no GPU was found") : problem,
                              Qt::ToolTipRole);
        if (model) model->item(1)->setEnabled(false);
    }
    // The device chosen before the list came (or saved from last time) stays chosen.
    const QString wanted = m_wantedDevice.isEmpty() ? current : m_wantedDevice;
    const int row = m_device->findData(wanted);
    if (row >= 0 && (!model || model->item(row)->isEnabled())) m_device->setCurrentIndex(row);
    m_devicesKnown = true;
    emit devicesListed();
}

bool MainWindow::waitForDevices(int ms)
{
    if (m_devicesKnown) return true;
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    connect(this, &MainWindow::devicesListed, &loop, &QEventLoop::quit);
    loop.exec();
    return m_devicesKnown;
}

bool MainWindow::setRunDevice(const QString &device, QString *why)
{
    if (device != QLatin1String("cpu")) waitForDevices();
    QString wanted = device == QLatin1String("cuda") ? QStringLiteral("cuda:0") : device;
    const int row = m_device->findData(wanted);
    auto *model = qobject_cast<QStandardItemModel *>(m_device->model());
    if (row < 0 || (model && !model->item(row)->isEnabled())) {
        if (why) {
            // The reason a GPU is not offered is the tooltip of its entry (or of "none usable").
            const int gpuRow = row >= 0 ? row : m_device->count() - 1;
            *why = tr("device %1 cannot be used: %2")
                       .arg(device, m_device->itemData(gpuRow, Qt::ToolTipRole).toString());
        }
        return false;
    }
    m_device->setCurrentIndex(row);
    return true;
}

void MainWindow::buildDocks()
{
    // Docks start hidden and are shown once tabbed (below): eight docks side by side in the
    // bottom area, for a moment, made the window as wide as all their minimum widths together,
    // and it kept that width once shown (2080 px where 1600 was asked for).
    auto dock = [this](const QString &name, const QString &title, QWidget *w,
                       Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(name + QStringLiteral("_dock"));
        d->setWidget(w);
        d->hide();
        addDockWidget(area, d);
        m_docks[name] = d;
        return d;
    };
    m_palette = new widgets::NodePalette(m_pipeline->registry());
    dock("palette", tr("Nodes"), m_palette, Qt::LeftDockWidgetArea);
    m_inspector = new widgets::Inspector(m_pipeline);
    dock("inspector", tr("Inspector"), m_inspector, Qt::RightDockWidgetArea);
    m_problems = new QListWidget;
    m_problems->setObjectName("problems");
    m_problems->setToolTip(tr("Problems that keep the pipeline from running; click one to go to "
                              "its node"));
    connect(m_problems, &QListWidget::itemActivated, this,
            [this](QListWidgetItem *item) { focusNode(item->data(Qt::UserRole).toString()); });
    connect(m_problems, &QListWidget::itemClicked, this,
            [this](QListWidgetItem *item) { focusNode(item->data(Qt::UserRole).toString()); });
    QDockWidget *problems = dock("problems", tr("Problems"), m_problems, Qt::BottomDockWidgetArea);
    m_log = new widgets::LogView;
    QDockWidget *log = dock("log", tr("Log"), m_log, Qt::BottomDockWidgetArea);
    m_plots = new widgets::LivePlots;
    QDockWidget *plots = dock("plots", tr("Plots"), m_plots, Qt::BottomDockWidgetArea);
    m_evaluation = new widgets::EvaluationView;
    QDockWidget *evaluation =
        dock("evaluation", tr("Evaluation"), m_evaluation, Qt::BottomDockWidgetArea);
    m_inference = new widgets::InferencePanel;
    m_inference->setCliPath(widgets::RunSession::defaultCliPath());
    QDockWidget *inference =
        dock("inference", tr("Try the Model"), m_inference, Qt::BottomDockWidgetArea);
    m_recordPanel = new widgets::RecordPanel;
    m_recordPanel->setTemplate(examplesDirectory() + QStringLiteral("/spoken_digits.json"));
    QDockWidget *record = dock("record", tr("Record"), m_recordPanel, Qt::BottomDockWidgetArea);
    // "Train on this": the pipeline made for the recorded clips opens and runs.
    connect(m_recordPanel, &widgets::RecordPanel::trainRequested, this,
            [this](const QString &path) {
                if (!maybeSave() || !openPipeline(path)) return;
                QString why;
                if (!startRun(&why) && !why.isEmpty()) statusBar()->showMessage(why, 8000);
            });
    m_summary = new widgets::ModelSummaryView(m_pipeline);
    m_summary->setCliPath(widgets::RunSession::defaultCliPath());
    connect(m_summary, &widgets::ModelSummaryView::nodeActivated, this, &MainWindow::focusNode);
    QDockWidget *summary =
        dock("summary", tr("Model Summary"), m_summary, Qt::BottomDockWidgetArea);
    m_runs = new widgets::RunsPanel;
    QDockWidget *runs = dock("runs", tr("Runs"), m_runs, Qt::BottomDockWidgetArea);
    m_sweepView = new widgets::SweepView;
    QDockWidget *sweep = dock("sweep", tr("Sweep"), m_sweepView, Qt::BottomDockWidgetArea);
    connect(m_sweepView, &widgets::SweepView::runActivated, this, [this](const QString &d) {
        QString why;
        if (!openRun(d, &why)) {
            m_log->addLine(QStringLiteral("error"), why);
            statusBar()->showMessage(why, 8000);
        }
    });
    connect(m_runs, &widgets::RunsPanel::sweepRequested, this, &MainWindow::sweepDialog);
    connect(m_runs, &widgets::RunsPanel::sweepStopRequested, this, &MainWindow::stopSweep);
    auto complain = [this](const QString &title, const QString &why) {
        m_log->addLine(QStringLiteral("error"), why);
        QMessageBox::warning(this, title, why);
    };
    connect(m_runs, &widgets::RunsPanel::openRequested, this, [this, complain](const QString &d) {
        QString why;
        if (!openRun(d, &why)) complain(tr("Could not open the run"), why);
    });
    connect(m_runs, &widgets::RunsPanel::resumeRequested, this, [this, complain](const QString &d) {
        QString why;
        if (!resumeRun(d, &why)) complain(tr("Could not resume the run"), why);
    });
    connect(m_runs, &widgets::RunsPanel::compareRequested, this,
            [this, complain](const QStringList &dirs) {
                QString why;
                if (!compareRuns(dirs, &why)) complain(tr("Could not compare the runs"), why);
            });
    connect(m_runs, &widgets::RunsPanel::diffRequested, this,
            [this, complain](const QString &a, const QString &b) {
                QString why;
                if (!diffRuns(a, b, &why) && !why.isEmpty())
                    complain(tr("Could not compare the runs"), why);
            });
    connect(m_runs, &widgets::RunsPanel::pipelineRequested, this, [this](const QString &d) {
        // The pipeline as run, as an untitled copy: the run's own file stays as it ran.
        if (!maybeSave()) return;
        const QString path = d + QStringLiteral("/") + QString(io::kPipelineFile);
        if (Status ok = m_pipeline->loadCopy(path); !ok) {
            QMessageBox::warning(this, tr("Could not open the pipeline"), q(ok.error().str()));
            return;
        }
        m_view->fitReadable();
        statusBar()->showMessage(
            tr("Opened the pipeline of run %1 as an untitled copy").arg(QFileInfo(d).fileName()),
            6000);
    });
    // Bottom: problems, log and runs on the left, plots and the views after it (wider) on the
    // right; the canvas keeps most of the height. A layout the person changes is restored from
    // QSettings.
    splitDockWidget(problems, plots, Qt::Horizontal);
    tabifyDockWidget(problems, log);
    tabifyDockWidget(log, runs);
    tabifyDockWidget(plots, evaluation);
    tabifyDockWidget(evaluation, inference);
    tabifyDockWidget(inference, record);
    tabifyDockWidget(record, summary);
    tabifyDockWidget(summary, sweep);
    for (const auto &[name, d] : m_docks)
        d->show();
    connect(evaluation, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible) showPendingEvaluation();
    });
    resizeDocks({problems, plots}, {420, 980}, Qt::Horizontal);
    resizeDocks({plots}, {300}, Qt::Vertical);
    resizeDocks({m_docks["palette"], m_docks["inspector"]}, {210, 290}, Qt::Horizontal);
    plots->raise();
    problems->raise();
}

// ---- settings, title, state ------------------------------------------------------------------

void MainWindow::restoreSettings()
{
    QSettings s;
    if (!restoreGeometry(s.value("window/geometry").toByteArray())) resize(1400, 900);
    restoreState(s.value("window/state").toByteArray());
    // GPUs arrive a moment later (fillDevices); the saved choice is applied then.
    m_wantedDevice = s.value("run/device", "cpu").toString();
    const int device = m_device->findData(m_wantedDevice);
    auto *model = qobject_cast<QStandardItemModel *>(m_device->model());
    if (device >= 0 && model && model->item(device)->isEnabled()) m_device->setCurrentIndex(device);
    // The panel starts at the engine's defaults; a saved choice replaces them. A choice is saved
    // only where it differs from the default (saveSettings), so that a new default reaches
    // everyone who never chose. Until 2026-12-07 the threshold was saved always, as
    // "listen/detect_threshold" (and "listen/threshold" before 2026-12-03, with the default of
    // 0.6 then): such a value equal to the default of its day (0.85) is no choice, and is
    // dropped; another is taken as the person's own.
    constexpr double kSavedForEveryone = 0.85; // what "listen/detect_threshold" held unchosen
    QVariant threshold = s.value("listen/chosen_threshold");
    if (!threshold.isValid()) {
        const QVariant saved = s.value("listen/detect_threshold");
        if (saved.isValid() && std::abs(saved.toDouble() - kSavedForEveryone) > 1e-9)
            threshold = saved;
    }
    if (threshold.isValid()) m_inference->setListenThreshold(threshold.toDouble());
    m_inference->setListenAverage(s.value("listen/average", m_inference->listenAverage()).toInt());
    m_inference->setListenWarp(s.value("listen/warp", m_inference->listenWarp()).toBool());
    m_inference->setTuneChoices(
        s.value("listen/tune_recording").toString(), s.value("listen/tune_labels").toString(),
        s.value("listen/tune_budget", m_inference->tuneBudget()).toDouble());
    refreshRecentMenu();
}

void MainWindow::saveSettings()
{
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    s.setValue("run/device", m_device->currentData());
    // The user's own setting, not a run's tuned one that the row holds now, and only where it is
    // not the engine's default (restoreSettings).
    const fb::exec::ListenOptions defaults;
    const auto keep = [&s](const char *key, const QVariant &value, bool isDefault) {
        if (isDefault)
            s.remove(key);
        else
            s.setValue(key, value);
    };
    const double threshold = m_inference->ownListenThreshold();
    // Compared as the row shows it (two decimals), so that a default with a third decimal reads
    // as the default and not as a choice.
    keep("listen/chosen_threshold", threshold,
         std::lround(threshold * 100) == std::lround(defaults.threshold * 100));
    s.remove("listen/detect_threshold");
    s.remove("listen/threshold");
    const int average = m_inference->ownListenAverage();
    keep("listen/average", average, average == defaults.average);
    const bool warp = m_inference->listenWarp();
    keep("listen/warp", warp, warp == !defaults.warps.empty());
    s.setValue("listen/tune_recording", m_inference->tuneRecording());
    s.setValue("listen/tune_labels", m_inference->tuneLabels());
    s.setValue("listen/tune_budget", m_inference->tuneBudget());
}

void MainWindow::updateTitle()
{
    setWindowTitle(QStringLiteral("%1[*] — Flowbench").arg(m_pipeline->displayName()));
    setWindowModified(m_pipeline->isModified());
    setWindowFilePath(m_pipeline->filePath());
}

void MainWindow::updateActions()
{
    const bool running = m_session->isRunning();
    const bool selected = !m_scene->selectedNodeIds().empty();
    action("run")->setEnabled(!running && !isSweeping() && m_problems->count() == 0);
    action("pause")->setEnabled(running);
    action("pause")->setText(m_session->isPaused() ? tr("Res&ume") : tr("&Pause"));
    action("pause")->setIcon(style()->standardIcon(m_session->isPaused() ? QStyle::SP_MediaPlay
                                                                         : QStyle::SP_MediaPause));
    action("stop")->setEnabled(running);
    action("checkpoint")->setEnabled(running);
    action("set_lr")->setEnabled(running);
    action("open_run_log")->setEnabled(!running);
    action("save_run_log")->setEnabled(!m_record->events().empty());
    action("copy")->setEnabled(selected);
    action("cut")->setEnabled(selected);
    action("duplicate")->setEnabled(selected);
    m_device->setEnabled(!running);
}

void MainWindow::updateProblems()
{
    m_problems->clear();
    for (const Error &e : m_pipeline->problems()) {
        const QString node = q(e.nodeId());
        auto *item =
            new QListWidgetItem(style()->standardIcon(QStyle::SP_MessageBoxWarning), q(e.str()));
        item->setData(Qt::UserRole, node);
        item->setToolTip(node.isEmpty() ? q(e.str()) : tr("Click to go to node %1").arg(node));
        m_problems->addItem(item);
    }
    // A pipeline without a train node is valid to edit but has nothing to run: said here, where
    // Run's refusal points, instead of by the engine after it started.
    bool trains = false;
    for (const auto &node : m_pipeline->document().nodes())
        if (const graph::NodeTypeSpec *spec = m_pipeline->registry().find(node.type))
            trains = trains || spec->role == graph::NodeRole::Train;
    if (!trains) {
        auto *item = new QListWidgetItem(style()->standardIcon(QStyle::SP_MessageBoxInformation),
                                         tr("Nothing to run: the pipeline has no Train node (the "
                                            "palette's Training group has one)"));
        item->setData(Qt::UserRole, QString());
        m_problems->addItem(item);
    }
    const int n = m_problems->count();
    m_docks["problems"]->setWindowTitle(n ? tr("Problems (%1)").arg(n) : tr("Problems"));
    action("run")->setToolTip(n ? tr("Train the pipeline (F5): fix %n problem(s) first", nullptr, n)
                                : tr("Train the pipeline (F5)"));
    updateActions();
}

void MainWindow::refreshRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value("recent").toStringList();
    for (const QString &path : recent) {
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            if (maybeSave()) openPipeline(path);
                        })
            ->setToolTip(path);
    }
    if (!recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear the List"), this, [this] {
            QSettings().remove("recent");
            refreshRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::addRecent(const QString &path)
{
    QSettings s;
    QStringList recent = s.value("recent").toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    s.setValue("recent", recent);
    refreshRecentMenu();
}

QString MainWindow::examplesDirectory() const
{
    // Installed: ../share/flowbench/examples beside bin/; in a build tree: the source tree's.
    const QString bin = QCoreApplication::applicationDirPath();
    for (const QString &candidate : {bin + QStringLiteral("/../share/flowbench/examples"),
                                     QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples")})
        if (QDir(candidate).exists()) return QDir(candidate).canonicalPath();
    return {};
}

QString MainWindow::statusText() const
{
    return m_statusRun->text();
}

// ---- files ------------------------------------------------------------------------------------

bool MainWindow::maybeSave()
{
    m_inspector->commitPending();
    if (!m_pipeline->isModified()) return true;
    const auto answer =
        m_ask(tr("Unsaved changes"),
              tr("%1 has unsaved changes. Save them?").arg(m_pipeline->displayName()),
              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save) return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::newPipeline()
{
    if (!maybeSave()) return;
    m_pipeline->newPipeline();
    m_view->fitReadable();
}

bool MainWindow::openPipeline(const QString &path, bool quiet)
{
    // A shipped example opens as an untitled copy: Save asks where, so Ctrl+S never overwrites
    // it (nor fails on an installed, read-only one).
    const QString examples = examplesDirectory();
    const bool example = !examples.isEmpty() &&
                         QFileInfo(QFileInfo(path).canonicalPath()) == QFileInfo(examples);
    Status ok = example ? m_pipeline->loadCopy(path) : m_pipeline->load(path);
    if (!ok) {
        const QString why = q(ok.error().str());
        m_log->addLine(QStringLiteral("error"), tr("Could not open %1: %2").arg(path, why));
        if (!quiet) QMessageBox::warning(this, tr("Could not open the pipeline"), why);
        return false;
    }
    addRecent(path);
    if (!example) QSettings().setValue("last_dir", QFileInfo(path).absolutePath());
    m_view->fitReadable();
    // Once more after the window has its final size (when opened before it is shown).
    QTimer::singleShot(0, m_view, [this] { m_view->fitReadable(); });
    statusBar()->showMessage(example ? tr("Opened the example %1 as an untitled copy: Save asks "
                                          "where to keep your version")
                                           .arg(QFileInfo(path).fileName())
                                     : tr("Opened %1").arg(path),
                             example ? 8000 : 4000);
    pointAtMissingSpokenDigits();
    return true;
}

QString MainWindow::defaultSpokenDigitsDirectory()
{
    // Where resources/examples/spoken_digits.json reads them: "~/.local/share/flowbench/...".
    return QDir::homePath() + QStringLiteral("/.local/share/flowbench/spoken_digits");
}

void MainWindow::pointAtMissingSpokenDigits()
{
    // A pipeline reading the spoken-digits folder before the recordings are made (the script
    // marks a finished folder with .complete) would fail its run for want of files: say at once
    // how to make them. Any path parameter counts, whatever the node type.
    const QString wanted = QDir::cleanPath(m_spokenDigitsDir);
    if (QFileInfo::exists(wanted + QStringLiteral("/.complete"))) return;
    const auto &registry = m_pipeline->registry();
    for (const graph::Node &node : m_pipeline->document().nodes()) {
        const graph::NodeTypeSpec *spec = registry.find(node.type);
        if (!spec) continue;
        for (const graph::ParamSpec &p : spec->params) {
            const auto value = node.params.find(p.name);
            if (p.type != graph::ParamType::Path || value == node.params.end() ||
                !value->is_string())
                continue;
            const QString path = q(graph::expandHome(value->get<std::string>()));
            if (QDir::cleanPath(path) != wanted) continue;
            const QString hint =
                tr("The spoken-digits recordings this pipeline reads are not made yet (%1): "
                   "File > Make Spoken-Digits Data Set… makes them, in a few minutes.")
                    .arg(QDir::toNativeSeparators(wanted));
            m_log->addLine(QStringLiteral("warning"), hint, q(node.id));
            statusBar()->showMessage(hint, 30000);
            return;
        }
    }
}

bool MainWindow::makeSpokenDigits(QString *why)
{
    auto refuse = [&](const QString &reason) {
        if (why) *why = reason;
        return false;
    };
    if (m_dataSetDialog && m_dataSetDialog->isWorking()) {
        m_dataSetDialog->raise();
        return refuse(tr("The spoken-digits data set is being made already."));
    }
    // The same flowbench-cli that runs pipelines: beside this program when installed or built.
    const QString cli = widgets::RunSession::defaultCliPath();
    if (cli.isEmpty())
        return refuse(tr("flowbench-cli was not found beside this program or on the PATH, so "
                         "the data set cannot be made."));
    if (!m_dataSetDialog) {
        m_dataSetDialog = new DataSetDialog(this);
        m_dataSetDialog->setWindowTitle(tr("Make Spoken-Digits Data Set"));
        m_dataSetDialog->setWindowModality(Qt::WindowModal);
        connect(m_dataSetDialog, &DataSetDialog::ended, this,
                [this](DataSetDialog::State state, const QString &message) {
                    using S = DataSetDialog::State;
                    m_log->addLine(state == S::Done        ? QStringLiteral("info")
                                   : state == S::Cancelled ? QStringLiteral("warning")
                                                           : QStringLiteral("error"),
                                   tr("Spoken-digits data set: %1").arg(message));
                    statusBar()->showMessage(message, 10000);
                });
    }
    QStringList args{QStringLiteral("make-data"), QStringLiteral("spoken-digits"),
                     QStringLiteral("--out"), m_spokenDigitsDir};
    if (m_spokenDigitsVoices > 0)
        args << QStringLiteral("--voices") << QString::number(m_spokenDigitsVoices);
    m_dataSetDialog->setDoneNote(
        QDir::cleanPath(m_spokenDigitsDir) == defaultSpokenDigitsDirectory()
            ? tr("The spoken_digits example (File > Open Example) trains on them.")
            : QString());
    QString reason;
    if (!m_dataSetDialog->start(cli, args, m_spokenDigitsDir, &reason)) return refuse(reason);
    m_log->addLine(QStringLiteral("info"),
                   tr("Making the spoken-digits data set in %1: %2 %3")
                       .arg(QDir::toNativeSeparators(m_spokenDigitsDir), cli, args.join(' ')));
    m_dataSetDialog->open();
    return true;
}

void MainWindow::openDialog()
{
    if (!maybeSave()) return;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a pipeline"), QSettings().value("last_dir", examplesDirectory()).toString(),
        tr("Flowbench pipelines (*.json);;All files (*)"));
    if (!path.isEmpty()) openPipeline(path);
}

bool MainWindow::savePipeline(const QString &path)
{
    Status ok = m_pipeline->save(path);
    if (!ok) {
        QMessageBox::warning(this, tr("Could not save"), q(ok.error().str()));
        return false;
    }
    addRecent(path);
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

bool MainWindow::save()
{
    m_inspector->commitPending();
    if (m_pipeline->filePath().isEmpty()) return saveAs();
    return savePipeline(m_pipeline->filePath());
}

bool MainWindow::saveAs()
{
    QString start = m_pipeline->filePath();
    if (start.isEmpty()) {
        const QString name = m_pipeline->suggestedFileName().isEmpty()
                                 ? QStringLiteral("pipeline.json")
                                 : m_pipeline->suggestedFileName();
        start = QSettings().value("last_dir", QDir::homePath()).toString() + "/" + name;
    }
    QString path = m_chooseSavePath
                       ? m_chooseSavePath(start)
                       : QFileDialog::getSaveFileName(this, tr("Save the pipeline"), start,
                                                      tr("Flowbench pipelines (*.json)"));
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".json");
    return savePipeline(path);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (m_session->isRunning()) {
        const auto answer = m_ask(tr("A run is going on"),
                                  tr("Stop the run and quit? It writes a checkpoint first."),
                                  QMessageBox::Yes | QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    if (isSweeping()) {
        const auto answer = m_ask(tr("A sweep is going on"),
                                  tr("Stop the sweep and quit? Each of its runs writes a "
                                     "checkpoint first."),
                                  QMessageBox::Yes | QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            event->ignore();
            return;
        }
    }
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    if (isSweeping()) {
        // SIGTERM: the sweep stops its runs, which end after their step; never orphans.
        m_sweepProcess->terminate();
        m_sweepProcess->waitForFinished(30000);
    }
    if (m_session->isRunning()) {
        m_session->stop();
        // A graceful stop finishes the current step and writes a checkpoint: give it a moment,
        // then the session's own shutdown ends it.
        QElapsedTimer t;
        t.start();
        while (m_session->isRunning() && t.elapsed() < 5000)
            QCoreApplication::processEvents(QEventLoop::ExcludeUserInputEvents, 50);
    }
    saveSettings();
    event->accept();
}

// ---- clipboard --------------------------------------------------------------------------------

void MainWindow::copy()
{
    const std::string text = m_scene->copySelection();
    if (text.empty()) return;
    auto *mime = new QMimeData;
    mime->setData(kFragmentMime, QByteArray::fromStdString(text));
    mime->setText(q(text));
    QGuiApplication::clipboard()->setMimeData(mime);
    m_pasteCount = 0;
}

void MainWindow::cut()
{
    copy();
    m_scene->deleteSelection();
}

void MainWindow::paste()
{
    const QMimeData *mime = QGuiApplication::clipboard()->mimeData();
    if (!mime) return;
    const QByteArray data =
        mime->hasFormat(kFragmentMime) ? mime->data(kFragmentMime) : mime->text().toUtf8();
    if (data.isEmpty()) return;
    // Each paste of the same copy lands a step further, so none hides another.
    ++m_pasteCount;
    m_scene->pasteFragment(data.toStdString(), QPointF(40, 40) * m_pasteCount);
}

void MainWindow::focusNode(const QString &nodeId)
{
    if (nodeId.isEmpty()) return;
    widgets::NodeItem *item = m_scene->nodeItem(nodeId.toStdString());
    if (!item) return;
    m_scene->selectNodes({nodeId.toStdString()});
    m_view->centerOn(item);
    m_docks["inspector"]->show();
}

// ---- running ----------------------------------------------------------------------------------

bool MainWindow::isRunning() const
{
    return m_session->isRunning();
}

void MainWindow::resetRunViews()
{
    if (m_runs) m_runs->setRunColors({});
    m_record->clear();
    m_plots->clear();
    m_log->clear();
    m_evaluation->clear();
    m_pendingEvaluation = nullptr;
    m_scene->clearRunState();
    m_totalSteps = 0;
    m_lastStep = 0;
    m_stepNodes.clear();
    m_canvasProgressClock.invalidate();
    m_statusProgress->hide();
}

QString MainWindow::whyTheEngineCannotStart()
{
    if (m_session->isRunning()) return tr("A run is going on: wait for it to end, or stop it.");
    if (isSweeping()) return tr("A sweep is going on: wait for it to end, or stop it.");
    if (m_lrProcess) return tr("A learning-rate range test is going on.");
    m_inspector->commitPending(); // a value still being typed belongs to what starts
    if (m_problems->count() > 0) {
        m_docks["problems"]->show();
        m_docks["problems"]->raise();
        return m_pipeline->problems().empty()
                   ? m_problems->item(0)->text()
                   : tr("The pipeline has %n problem(s): fix them first (see Problems).", nullptr,
                        int(m_pipeline->problems().size()));
    }
    return {};
}

bool MainWindow::startRun(QString *error)
{
    auto refuse = [&](const QString &why) {
        if (error) *error = why;
        m_log->addLine(QStringLiteral("error"), why);
        return false;
    };
    if (const QString why = whyTheEngineCannotStart(); !why.isEmpty()) return refuse(why);
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    QString base = QFileInfo(m_pipeline->displayName()).completeBaseName();
    QString outDir = m_runsDir + QStringLiteral("/") + base + QStringLiteral("-") + stamp;
    for (int i = 2; QFileInfo::exists(outDir); ++i)
        outDir = m_runsDir + QStringLiteral("/%1-%2-%3").arg(base, stamp).arg(i);
    if (!QDir().mkpath(outDir)) return refuse(tr("Cannot create the run folder %1").arg(outDir));

    // The run reads a snapshot: the person may go on editing (or close the file) meanwhile, and
    // the file they are editing is never touched by the run.
    // Named after the document, which is the name the run goes by (run.json's "pipeline").
    const QString snapshot = outDir + QStringLiteral("/%1.json").arg(base);
    if (Status s = widgets::writeFileAtomically(
            snapshot, graph::serializePipeline(m_pipeline->document()), "the run's snapshot");
        !s)
        return refuse(q(s.error().str()));

    resetRunViews();
    widgets::RunRequest req;
    req.cliPath = widgets::RunSession::defaultCliPath();
    req.pipelinePath = snapshot;
    req.outDir = outDir;
    req.device = m_device->currentData().toString();
    if (req.device.isEmpty()) req.device = QStringLiteral("cpu");
    req.threads = m_runThreads;
    req.settings = m_runSettings;
    fillDataParallel(req);
    return launchRun(req, error);
}

void MainWindow::fillDataParallel(widgets::RunRequest &req) const
{
    if (!m_ranks->isEnabled()) return;
    req.ranks = m_ranks->value();
    req.hostfile = m_hostfile;
}

void MainWindow::chooseHostfile()
{
    if (!m_hostfile.isEmpty()) { // a second click: back to this machine
        m_hostfile.clear();
    } else {
        m_hostfile = QFileDialog::getOpenFileName(this, tr("Open MPI hostfile"), QString(),
                                                  tr("Hostfiles (*);;Text files (*.txt)"));
    }
    m_hosts->setChecked(!m_hostfile.isEmpty());
    m_hosts->setText(m_hostfile.isEmpty() ? tr("Hosts…")
                                          : tr("Hosts: %1").arg(QFileInfo(m_hostfile).fileName()));
    if (!m_hostfile.isEmpty())
        m_log->addLine(QStringLiteral("info"),
                       tr("Runs start their %1 processes on the hosts of %2 (mpirun --hostfile)")
                           .arg(m_ranks->value())
                           .arg(QDir::toNativeSeparators(m_hostfile)));
}

bool MainWindow::launchRun(const widgets::RunRequest &req, QString *error)
{
    QString why;
    if (!m_session->start(req, &why)) {
        const QString text = tr("The run did not start: %1").arg(why);
        if (error) *error = text;
        m_log->addLine(QStringLiteral("error"), text);
        return false;
    }
    m_log->addLine(QStringLiteral("info"),
                   (req.resumeDir.isEmpty() ? tr("Run started: output in %1")
                                            : tr("Run resumed: output in %1"))
                       .arg(req.outDir));
    setRunStatus(tr("Starting…"));
    m_lastRunMessage.clear();
    m_runs->setActiveRun(req.outDir);
    m_evaluation->setPicturesFolder(req.outDir);
    m_docks["plots"]->show();
    m_docks["plots"]->raise();
    m_docks["log"]->raise(); // the problems tab is empty: a run only starts without any
    updateActions();
    return true;
}

bool MainWindow::openRun(const QString &dir, QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        return false;
    };
    if (m_session->isRunning())
        return refuse(tr("A run is going on: its plots are shown; open the run when it ends."));
    const QString events = dir + QStringLiteral("/") + QString(io::kEventsFile);
    if (!QFileInfo::exists(events))
        return refuse(tr("The run %1 has no event log (%2): it failed before it started, or an "
                         "older Flowbench made it without one")
                          .arg(QFileInfo(dir).fileName(), QString(io::kEventsFile)));
    auto loaded = widgets::RunRecord::load(events); // read once, its error said as it is
    if (!loaded) return refuse(q(loaded.error().str()));
    showRunLog(events, std::move(loaded).value());
    const io::RunEntry run = io::readRun(dir.toStdString());
    if (run.hasModel || run.hasCheckpoint) m_inference->setModel(dir);
    setRunStatus(tr("Run %1: %2").arg(q(run.name), q(run.status)));
    if (m_evaluation->hasEvaluation()) {
        m_docks["evaluation"]->show();
        m_docks["evaluation"]->raise();
    }
    m_docks["runs"]->raise(); // the list stays in view, to open the next one
    return true;
}

bool MainWindow::resumeRun(const QString &dir, QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        m_log->addLine(QStringLiteral("error"), text);
        return false;
    };
    // Not whyTheEngineCannotStart(): the run's own pipeline runs, not the document's problems.
    if (m_session->isRunning() || isSweeping() || m_lrProcess)
        return refuse(tr("A run, sweep or range test is going on: resume when it ends."));
    const io::RunEntry run = io::readRun(dir.toStdString());
    if (!run.problem.empty()) return refuse(q(run.problem));
    if (!run.hasCheckpoint)
        return refuse(tr("The run %1 has no checkpoint to continue from").arg(q(run.name)));
    if (!run.resumable())
        return refuse(tr("The run %1 is %2: only a stopped, killed or failed run is resumed")
                          .arg(q(run.name), q(run.status)));
    // The earlier curves stay: the resumed part continues them from its checkpoint's step.
    resetRunViews();
    const QString events = dir + QStringLiteral("/") + QString(io::kEventsFile);
    int ranks = 1; // the run's own, from its latest start
    if (QFileInfo::exists(events)) {
        if (auto loaded = widgets::RunRecord::load(events); loaded) {
            m_plots->addEvents(loaded.value());
            for (const nlohmann::json &e : loaded.value())
                if (e.is_object() && eventString(e, "type") == "run_start")
                    ranks = std::clamp(int(widgets::eventNumber(e, "ranks", 1)), 1, 1024);
        }
    }
    widgets::RunRequest req;
    req.cliPath = widgets::RunSession::defaultCliPath();
    req.pipelinePath = dir + QStringLiteral("/") + QString(io::kPipelineFile);
    req.outDir = dir;
    req.resumeDir = dir;
    req.device = run.device.empty() ? m_device->currentData().toString() : q(run.device);
    if (req.device.isEmpty()) req.device = QStringLiteral("cpu");
    req.threads = m_runThreads;
    // A checkpoint resumes with the ranks that wrote it (the engine refuses another count), on
    // the hosts chosen now.
    fillDataParallel(req);
    req.ranks = ranks;
    return launchRun(req, why);
}

bool MainWindow::compareRuns(const QStringList &dirs, QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        return false;
    };
    if (m_session->isRunning())
        return refuse(tr("A run is going on: its plots are shown; compare runs when it ends."));
    if (dirs.size() < 2) return refuse(tr("Select two or more runs to compare."));
    std::vector<widgets::LivePlots::ComparedRun> runs;
    QStringList names;
    for (const QString &dir : dirs) {
        const io::RunEntry entry = io::readRun(dir.toStdString());
        const QString events = dir + QStringLiteral("/") + QString(io::kEventsFile);
        if (!QFileInfo::exists(events))
            return refuse(tr("The run %1 has no event log to plot (%2)")
                              .arg(q(entry.name), QString(io::kEventsFile)));
        auto loaded = widgets::RunRecord::load(events);
        if (!loaded) return refuse(q(loaded.error().str()));
        QString label = q(entry.name);
        if (names.contains(label)) label += QStringLiteral(" (%1)").arg(q(entry.id));
        names << label;
        runs.push_back({label, std::move(loaded).value()});
    }
    resetRunViews();
    m_plots->compareRuns(runs);
    QHash<QString, QColor> colors;
    for (int i = 0; i < dirs.size(); ++i)
        colors.insert(dirs[i], m_plots->runColor(i));
    m_runs->setRunColors(colors);
    setRunStatus(tr("Comparing %n run(s): %1", nullptr, int(dirs.size()))
                     .arg(names.join(QStringLiteral(", "))));
    m_docks["plots"]->show();
    m_docks["plots"]->raise();
    updateActions();
    return true;
}

bool MainWindow::diffRuns(const QString &a, const QString &b, QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        return false;
    };
    // From the earlier run to the later one: "what did I change since?".
    io::RunEntry first = io::readRun(a.toStdString()), second = io::readRun(b.toStdString());
    QString before = a, after = b;
    // (Started in the same second: the folder names, which number a second run of a second.)
    if (first.started > second.started ||
        (first.started == second.started && first.id > second.id)) {
        std::swap(first, second);
        std::swap(before, after);
    }
    auto pipelineOf = [](const QString &dir) {
        return graph::loadPipeline(dir.toStdString() + "/" + io::kPipelineFile);
    };
    auto docBefore = pipelineOf(before), docAfter = pipelineOf(after);
    if (!docBefore) return refuse(q(docBefore.error().str()));
    if (!docAfter) return refuse(q(docAfter.error().str()));
    const graph::PipelineDiff diff =
        graph::diffPipelines(docBefore.value(), docAfter.value(), &m_pipeline->registry());

    std::vector<io::ManifestDifference> manifest;
    QString manifestNote;
    auto manifestBefore = io::readJsonFile(before.toStdString() + "/" + io::kManifestFile);
    auto manifestAfter = io::readJsonFile(after.toStdString() + "/" + io::kManifestFile);
    if (!manifestBefore || !manifestAfter)
        manifestNote = tr("%1 has none (a run from an older Flowbench, or one that failed "
                          "before it started)")
                           .arg(q((manifestBefore ? second : first).name));
    else
        manifest = io::manifestDifferences(manifestBefore.value(), manifestAfter.value());

    // The later run's pipeline on the canvas, the differing nodes marked.
    if (!maybeSave()) return refuse({});
    const QString path = after + QStringLiteral("/") + QString(io::kPipelineFile);
    if (Status ok = m_pipeline->loadCopy(path); !ok) return refuse(q(ok.error().str()));
    m_view->fitReadable();
    m_scene->setDiffMarks(widgets::diffMarks(diff));

    if (!m_runDiff) {
        auto *window = new QWidget(this, Qt::Window);
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->setObjectName("run_diff_window");
        window->resize(640, 420);
        auto *layout = new QVBoxLayout(window);
        layout->setContentsMargins(0, 0, 0, 0);
        m_runDiff = new widgets::RunDiffView(window);
        layout->addWidget(m_runDiff);
        connect(m_runDiff, &widgets::RunDiffView::nodeActivated, this, &MainWindow::focusNode);
    }
    m_runDiff->setDiff(q(first.name), q(second.name), diff, manifest, manifestNote);
    QWidget *window = m_runDiff->window();
    window->setWindowTitle(tr("Run Diff: %1 → %2").arg(q(first.name), q(second.name)));
    window->show();
    window->raise();
    statusBar()->showMessage(
        tr("%1's pipeline, with what differs from %2 marked").arg(q(second.name), q(first.name)),
        8000);
    return true;
}

bool MainWindow::isSweeping() const
{
    return m_sweepProcess && m_sweepProcess->state() != QProcess::NotRunning;
}

void MainWindow::sweepDialog()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Sweep"));
    auto *ranges = new QPlainTextEdit;
    ranges->setObjectName("sweep_ranges");
    // A start that fits the document: its optimizer's learning rate and the batch size.
    QStringList suggestion;
    for (const auto &n : m_pipeline->document().nodes()) {
        const graph::NodeTypeSpec *spec = m_pipeline->registry().find(n.type);
        if (!spec) continue;
        if (spec->param("lr") && spec->role == graph::NodeRole::Optimizer)
            suggestion << q(n.id) + QStringLiteral(".lr=0.01,0.05,0.1");
        if (spec->role == graph::NodeRole::Train && spec->param("batch_size"))
            suggestion << q(n.id) + QStringLiteral(".batch_size=64,128");
    }
    ranges->setPlainText(suggestion.join('\n'));
    auto *parallel = new QSpinBox;
    parallel->setRange(1, 16);
    auto *random = new QSpinBox;
    random->setRange(0, 10000);
    random->setSpecialValueText(tr("every combination"));
    auto *form = new QFormLayout;
    form->addRow(new QLabel(tr("One parameter a line, NODE.PARAM=V1,V2,… (semicolons between "
                               "values that hold commas). Every combination is trained as an "
                               "ordinary run of the pipeline as it is now.")));
    form->addRow(tr("Ranges:"), ranges);
    form->addRow(tr("Runs at a time:"), parallel);
    form->addRow(tr("Random combinations:"), random);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Start Sweep"));
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto *layout = new QVBoxLayout(&dialog);
    layout->addLayout(form);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted) return;
    QStringList lines;
    for (const QString &line : ranges->toPlainText().split('\n'))
        if (!line.trimmed().isEmpty()) lines << line.trimmed();
    QString why;
    if (!startSweep(lines, parallel->value(), random->value(), &why))
        QMessageBox::warning(this, tr("Sweep"), why);
}

bool MainWindow::startSweep(const QStringList &ranges, int parallel, int random, QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        m_log->addLine(QStringLiteral("error"), text);
        return false;
    };
    if (const QString why = whyTheEngineCannotStart(); !why.isEmpty()) return refuse(why);
    if (ranges.isEmpty()) return refuse(tr("Nothing to sweep: give NODE.PARAM=V1,V2,…"));
    const QString cli = widgets::RunSession::defaultCliPath();
    if (cli.isEmpty()) return refuse(tr("flowbench-cli was not found"));
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    const QString name =
        QFileInfo(m_pipeline->displayName()).completeBaseName() + QStringLiteral("-sweep-") + stamp;
    QDir().mkpath(m_runsDir);
    // The sweep reads a snapshot, like a run: later edits do not reach it.
    const QString snapshot =
        m_runsDir + QStringLiteral("/") + name + QStringLiteral(".pipeline.json");
    if (Status s = widgets::writeFileAtomically(
            snapshot, graph::serializePipeline(m_pipeline->document()), "the sweep's snapshot");
        !s)
        return refuse(q(s.error().str()));
    QStringList args{
        QStringLiteral("sweep"), snapshot,  QStringLiteral("--name"),     name,
        QStringLiteral("--out"), m_runsDir, QStringLiteral("--parallel"), QString::number(parallel),
        QStringLiteral("--json")};
    if (random > 0) args << QStringLiteral("--random") << QString::number(random);
    args << engineOptions();
    for (const QString &r : ranges)
        args << QStringLiteral("--set-range") << r;

    auto *p = new QProcess(this);
    m_sweepProcess = p;
    const QString record = m_runsDir + QStringLiteral("/") + name + QStringLiteral(".sweep.json");
    connect(p, &QProcess::readyReadStandardError, this, [this, p] {
        const QStringList lines =
            QString::fromLocal8Bit(p->readAllStandardError()).split('\n', Qt::SkipEmptyParts);
        for (const QString &line : lines)
            m_log->addLine(QStringLiteral("info"), line);
        if (!lines.isEmpty()) statusBar()->showMessage(lines.last(), 6000);
    });
    auto done = [this, p, record, snapshot](bool started) {
        p->deleteLater();
        QFile::remove(snapshot);
        const QByteArray out = p->readAllStandardOutput().trimmed();
        const QJsonObject j = QJsonDocument::fromJson(out.split('\n').last()).object();
        const QString status = j.value("status").toString();
        const bool ok = started && status == "done";
        QString text;
        if (!started)
            text = tr("flowbench-cli could not be started: %1").arg(p->errorString());
        else if (status == "error")
            text = tr("The sweep was refused: %1").arg(j["error"].toObject()["message"].toString());
        else
            text = tr("Sweep %1: %2").arg(j["sweep"].toString(), status);
        m_log->addLine(ok ? QStringLiteral("info") : QStringLiteral("error"), text);
        statusBar()->showMessage(text, 8000);
        m_runs->setSweepRunning(false);
        m_runs->refresh();
        m_sweepView->refresh(record);
        updateActions();
        emit sweepFinished(ok, record);
    };
    connect(p, &QProcess::finished, this, [done] { done(true); });
    connect(p, &QProcess::errorOccurred, this, [done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) done(false);
    });
    p->start(cli, args);
    m_runs->setSweepRunning(true);
    updateActions();
    m_log->addLine(QStringLiteral("info"),
                   tr("Sweep %1 started: %2").arg(name, ranges.join(QStringLiteral("  "))));
    // Its record appears as soon as the CLI has checked every combination.
    QTimer::singleShot(1500, this, [this, record] { m_sweepView->refresh(record); });
    m_docks["sweep"]->show();
    m_docks["sweep"]->raise();
    return true;
}

QString MainWindow::shortcutsText() const
{
    // From the actions themselves, so the list is always the keys that work.
    QStringList rows;
    for (const auto &[name, a] : m_actions) {
        const QList<QKeySequence> keys = a->shortcuts();
        if (keys.isEmpty()) continue;
        QStringList texts;
        for (const QKeySequence &k : keys)
            texts << k.toString(QKeySequence::NativeText);
        rows << QStringLiteral("<tr><td>%1</td><td><b>%2</b></td></tr>")
                    .arg(a->text().remove('&').remove(QStringLiteral("…")).toHtmlEscaped(),
                         texts.join(QStringLiteral(", ")).toHtmlEscaped());
    }
    rows.sort(Qt::CaseInsensitive);
    return QStringLiteral("<table cellspacing=4>") + rows.join(QString()) +
           QStringLiteral("</table><p>") +
           tr("On the canvas: drag with the middle button, or Space and drag, to pan; the wheel "
              "zooms. Delete, F and the Ctrl keys of Edit act while the canvas has the focus.") +
           QStringLiteral("</p>");
}

void MainWindow::showShortcuts()
{
    QMessageBox box(QMessageBox::NoIcon, tr("Keyboard Shortcuts"), shortcutsText(),
                    QMessageBox::Close, this);
    box.setTextFormat(Qt::RichText);
    box.exec();
}

void MainWindow::showGettingStarted()
{
    auto *window = findChild<QWidget *>(QStringLiteral("getting_started_window"));
    if (!window) {
        window = new QWidget(this, Qt::Window);
        window->setObjectName(QStringLiteral("getting_started_window"));
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->setWindowTitle(tr("Getting Started"));
        window->resize(640, 560);
        auto *text = new QTextBrowser(window);
        text->setObjectName(QStringLiteral("getting_started_text"));
        QFile page(QStringLiteral(":/flowbench/help/getting_started.md"));
        if (page.open(QIODevice::ReadOnly)) text->setMarkdown(QString::fromUtf8(page.readAll()));
        auto *layout = new QVBoxLayout(window);
        layout->addWidget(text);
    }
    window->show();
    window->raise();
}

widgets::LrFinderView *MainWindow::lrFinder() const
{
    return m_lrFinder.data();
}

bool MainWindow::findLearningRate(QString *why)
{
    auto refuse = [&](const QString &text) {
        if (why) *why = text;
        m_log->addLine(QStringLiteral("error"), text);
        return false;
    };
    if (const QString why = whyTheEngineCannotStart(); !why.isEmpty()) return refuse(why);
    const QString cli = widgets::RunSession::defaultCliPath();
    if (cli.isEmpty()) return refuse(tr("flowbench-cli was not found"));

    if (!m_lrFinder) {
        auto *window = new QWidget(this, Qt::Window);
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->setObjectName("lr_finder_window");
        window->setWindowTitle(tr("Find Learning Rate"));
        window->resize(720, 480);
        auto *layout = new QVBoxLayout(window);
        m_lrFinder = new widgets::LrFinderView(window);
        layout->addWidget(m_lrFinder);
        connect(m_lrFinder, &widgets::LrFinderView::useRequested, this,
                [this](const QString &node, double lr) {
                    // An ordinary edit: undoable, and the only way the suggestion is applied.
                    if (Status s = m_pipeline->setParam(node.toStdString(), "lr", lr); !s)
                        QMessageBox::warning(this, tr("Find Learning Rate"), q(s.error().str()));
                    else
                        statusBar()->showMessage(
                            tr("%1.lr set to %2 (Undo takes it back)").arg(node).arg(lr), 8000);
                });
    }
    m_lrFinder->setRunning(tr("Training 100 steps with the learning rate rising from 1e-6 to "
                              "1…"));
    m_lrFinder->window()->show();
    m_lrFinder->window()->raise();

    const QStringList args = QStringList{QStringLiteral("lr-find"), QStringLiteral("-"),
                                         QStringLiteral("--json")} +
                             engineOptions();
    auto *p = new QProcess(this);
    m_lrProcess = p;
    auto done = [this, p](bool started) {
        p->deleteLater();
        const QByteArray out = p->readAllStandardOutput().trimmed();
        const QJsonObject j = QJsonDocument::fromJson(out.split('\n').last()).object();
        const bool ok = started && j["status"].toString() == "ok";
        if (m_lrFinder) {
            if (ok)
                m_lrFinder->setResult(j);
            else
                m_lrFinder->setFailed(!started ? p->errorString()
                                      : j.contains("error")
                                          ? j["error"].toObject()["message"].toString()
                                          : QString::fromLocal8Bit(p->readAllStandardError())
                                                .trimmed()
                                                .section('\n', -1));
        }
        emit learningRateFound(ok);
    };
    connect(p, &QProcess::finished, this, [done] { done(true); });
    connect(p, &QProcess::errorOccurred, this, [done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) done(false);
    });
    p->start(cli, args);
    p->write(QByteArray::fromStdString(graph::serializePipeline(m_pipeline->document())));
    p->closeWriteChannel();
    return true;
}

QStringList MainWindow::engineOptions() const
{
    QStringList args;
    if (m_runThreads > 0) args << QStringLiteral("--threads") << QString::number(m_runThreads);
    const QString device = m_device->currentData().toString();
    if (!device.isEmpty()) args << QStringLiteral("--device") << device;
    for (const QString &s : m_runSettings)
        args << QStringLiteral("--set") << s;
    return args;
}

void MainWindow::stopSweep()
{
    if (isSweeping()) m_sweepProcess->terminate(); // SIGTERM: each run stops after its step
}

widgets::RunDiffView *MainWindow::runDiff() const
{
    return m_runDiff.data();
}

void MainWindow::setRunsDirectory(const QString &dir)
{
    m_runsDir = dir;
    if (m_runs) m_runs->setRunsDirectory(dir);
    if (m_sweepView) m_sweepView->setRunsDirectory(dir);
}

void MainWindow::onRunEvent(const nlohmann::json &e)
{
    // The live run's run.json says "running" from here: the panel shows it, then polls.
    if (eventString(e, "type") == "run_start") m_runs->refresh();
    m_record->addEvent(e);
    m_plots->addEvent(e);
    showEventState(e);
}

void MainWindow::showEventState(const nlohmann::json &e)
{
    // The stream comes from another process (or a file): a malformed event is logged and
    // skipped, and no exception may reach the Qt event loop (DESIGN.md).
    try {
        showEventStateUnchecked(e);
    } catch (const std::exception &ex) {
        m_log->addLine(QStringLiteral("warning"),
                       tr("Skipped a malformed '%1' event: %2")
                           .arg(q(eventString(e, "type")), QString::fromUtf8(ex.what())));
    }
}

void MainWindow::showEventStateUnchecked(const nlohmann::json &e)
{
    const std::string type = eventString(e, "type");
    if (type == "run_start") {
        // The nodes a training step runs: each train node and everything wired, directly or
        // not, into its model, loss and optimizer inputs (not its data: those stages report
        // their own work in dataflow events).
        m_stepNodes.clear();
        const auto &doc = m_pipeline->document();
        std::vector<std::string> todo;
        auto isTrain = [&](const graph::Node &n) {
            const graph::NodeTypeSpec *spec = m_pipeline->registry().find(n.type);
            return spec && spec->role == graph::NodeRole::Train;
        };
        for (const auto &n : doc.nodes())
            if (isTrain(n)) {
                m_stepNodes.insert(n.id);
                for (const graph::Edge *edge : doc.edgesInto(n.id))
                    if (edge->toPort != "data") todo.push_back(edge->fromNode);
            }
        while (!todo.empty()) {
            const std::string id = todo.back();
            todo.pop_back();
            if (!m_stepNodes.insert(id).second) continue;
            for (const graph::Edge *edge : doc.edgesInto(id))
                todo.push_back(edge->fromNode);
        }
        m_totalSteps = long(eventNumber(e, "steps_per_epoch")) * long(eventNumber(e, "epochs"));
        setRunStatus(tr("Training on %1…").arg(q(eventString(e, "device"))));
        updateActions();
    } else if (type == "progress") {
        const double step = eventNumber(e, "step"),
                     total = eventNumber(e, "total_steps", double(m_totalSteps));
        m_lastStep = long(step);
        // A last report already on its way when the pause came: the paused state stays shown.
        if (m_session->isPaused()) return;
        m_lastLr = eventNumber(e, "lr", m_lastLr);
        // The status bar and the canvas follow at most twice a second (and at the last step):
        // text layout and repainting ten times a second took the training's CPU on a small
        // machine (bench/gui_responsiveness.py); the plots keep every point regardless.
        if (step < total && m_canvasProgressClock.isValid() &&
            m_canvasProgressClock.elapsed() < 500)
            return;
        m_canvasProgressClock.start();
        setRunStatus(tr("epoch %1/%2   step %3/%4   %5 samples/s   loss %6   ETA %7")
                         .arg(eventNumber(e, "epoch"))
                         .arg(eventNumber(e, "epochs"))
                         .arg(step)
                         .arg(total)
                         .arg(eventNumber(e, "samples_per_s"), 0, 'f', 0)
                         .arg(eventNumber(e, "loss"), 0, 'f', 4)
                         .arg(clock(eventNumber(e, "eta_s", -1))));
        if (total > 0) {
            m_statusProgress->setRange(0, 1000);
            m_statusProgress->setValue(int(1000 * step / total));
            m_statusProgress->show();
            // Every node the training step runs (the model's layers, loss, optimizer, the train
            // node) shows the run's progress; the train node says which step. Data stages show
            // their own work (dataflow), evaluate nodes their result (epoch).
            for (const std::string &id : m_stepNodes) {
                const graph::Node *node = m_pipeline->document().node(id);
                const graph::NodeTypeSpec *spec =
                    node ? m_pipeline->registry().find(node->type) : nullptr;
                m_scene->setNodeProgress(id, step / total,
                                         spec && spec->role == graph::NodeRole::Train
                                             ? tr("step %1/%2").arg(step).arg(total)
                                             : QString());
            }
        }
    } else if (type == "dataflow") {
        if (auto it = e.find("edges"); it != e.end() && it->is_array()) {
            for (const auto &edge : *it) {
                const double cap = eventNumber(edge, "capacity", 0);
                m_scene->setEdgeLive(eventString(edge, "from"), eventString(edge, "to"),
                                     eventNumber(edge, "samples_per_s"),
                                     cap > 0 ? eventNumber(edge, "queued") / cap : 0,
                                     eventFlag(edge, "cached"));
            }
        }
        if (auto it = e.find("stages"); it != e.end() && it->is_array()) {
            // A source that streams (data larger than its cache_mb) also says how many of the
            // samples it served came from memory and from its disk cache; the rest it decoded
            // from their files.
            const bool streaming =
                eventNumber(e, "source_held", 0) < eventNumber(e, "source_samples", 0);
            bool first = true;
            for (const auto &stage : *it) {
                // A data stage's bar: the share of the workers' time it took this interval.
                const double busy = eventNumber(stage, "busy_share");
                QString label = eventFlag(stage, "cached")
                                    ? tr("cached")
                                    : tr("busy %1%").arg(100 * busy, 0, 'f', 0);
                // The source: where its workers' time went, this interval, decoding files and
                // reading the disk cache ("busy 95%: decode 90%"): the storage story. Short
                // enough for the node's width.
                const double decodeShare =
                    first ? 100 * eventNumber(e, "source_decode_share", 0) : 0.0;
                const double diskShare = first ? 100 * eventNumber(e, "source_disk_share", 0) : 0.0;
                if (first && streaming && decodeShare + diskShare >= 1) {
                    QStringList parts;
                    if (decodeShare >= 1) parts << tr("decode %1%").arg(decodeShare, 0, 'f', 0);
                    if (diskShare >= 1) parts << tr("disk %1%").arg(diskShare, 0, 'f', 0);
                    label += ": " + parts.join(", ");
                } else if (first && streaming) {
                    const double hits = 100 * eventNumber(e, "source_hit_rate", 0);
                    const double disk = eventNumber(e, "source_from_disk", 0);
                    const double served = disk + eventNumber(e, "source_hits", 0) +
                                          eventNumber(e, "source_decoded", 0);
                    // Short enough for the node's width: "busy 25%, 18% mem, 82% disk".
                    if (disk > 0 && served > 0)
                        label += tr(", %1% mem, %2% disk")
                                     .arg(hits, 0, 'f', 0)
                                     .arg(100 * disk / served, 0, 'f', 0);
                    else
                        label += tr(", %1% from memory").arg(hits, 0, 'f', 0);
                }
                first = false;
                m_scene->setNodeProgress(eventString(stage, "node"), busy, label);
            }
        }
        m_scene->setBottleneck(eventString(e, "bottleneck"),
                               QString::fromStdString(eventString(e, "bottleneck_cause")));
    } else if (type == "epoch") {
        if (auto it = e.find("evaluations"); it != e.end() && it->is_array())
            for (const auto &ev : *it)
                m_scene->setNodeProgress(eventString(ev, "node"), 1.0,
                                         tr("acc %1").arg(eventNumber(ev, "accuracy"), 0, 'f', 4));
    } else if (type == "evaluation") {
        // Building the views (64 gallery images, the matrix, the table) takes the GUI thread
        // ~30 ms: done when the person looks (the dock shown) or when the run ends, not while
        // the tab is hidden behind the plots mid-run.
        m_pendingEvaluation = e;
        if (m_evaluation->isVisible()) showPendingEvaluation();
    } else if (type == "summary") {
        m_statusProgress->hide();
    }
}

void MainWindow::showPendingEvaluation()
{
    if (m_pendingEvaluation.is_null()) return;
    const nlohmann::json e = std::move(m_pendingEvaluation);
    m_pendingEvaluation = nullptr;
    if (!m_evaluation->setEvaluation(e))
        m_log->addLine(QStringLiteral("warning"),
                       tr("The evaluation could not be shown: %1").arg(m_evaluation->lastError()));
}

void MainWindow::onRunFinished(const widgets::RunOutcome &outcome)
{
    showPendingEvaluation();
    using O = widgets::RunOutcome;
    QString text;
    switch (outcome.status) {
    case O::Ok: {
        const auto &s = outcome.summary;
        text = tr("Run finished: test accuracy %1, final loss %2, %3 samples/s")
                   .arg(eventNumber(s, "test_accuracy"), 0, 'f', 4)
                   .arg(eventNumber(s, "final_loss"), 0, 'f', 4)
                   .arg(eventNumber(s, "train_samples_per_s"), 0, 'f', 0);
        break;
    }
    case O::Stopped:
        text = tr("Run stopped: %1").arg(outcome.message);
        break;
    case O::Failed:
        text = outcome.node.isEmpty()
                   ? tr("Run failed: %1").arg(outcome.message)
                   : tr("Run failed at node %1: %2").arg(outcome.node, outcome.message);
        break;
    case O::Crashed:
        text = tr("The run ended abnormally: %1").arg(outcome.message);
        break;
    }
    m_lastRunMessage = text;
    m_lastSummary = outcome.summary;
    // The finished run is the model to try (its model.safetensors, or the stop's checkpoint).
    if ((outcome.status == O::Ok || outcome.status == O::Stopped) && outcome.summary.is_object() &&
        outcome.summary.contains("out_dir") && outcome.summary["out_dir"].is_string())
        m_inference->setModel(
            QString::fromStdString(outcome.summary["out_dir"].get<std::string>()));
    // The status bar: one line with the reason (the whole text, and the engine's last output, in
    // its tooltip); the engine's output is in the Log already, at its own levels, as it came.
    setRunStatus(text, outcome.lastOutput.isEmpty()
                           ? text
                           : text + tr("\n\nIts last output:\n") + outcome.lastOutput.join('\n'));
    m_statusProgress->hide();
    m_log->addLine(
        outcome.status == O::Ok || outcome.status == O::Stopped ? QStringLiteral("info")
                                                                : QStringLiteral("error"),
        outcome.lastOutput.isEmpty() ? text
                                     : text + tr(" (the engine's last output is just above)"),
        outcome.node);
    if (!outcome.node.isEmpty()) focusNode(outcome.node);
    // A run that ended leaves no flowing wires behind (its last report's empty queues read as
    // starving, red with 0/s) and no bottleneck; a finished run's nodes keep their last progress
    // and accuracy, a failed one's nothing. The status bar has the outcome.
    if (outcome.status == O::Ok)
        m_scene->clearDataFlow();
    else
        m_scene->clearRunState();
    if (outcome.status == O::Crashed || outcome.status == O::Failed) {
        m_docks["log"]->show();
        m_docks["log"]->raise();
    }
    if (m_evaluation->hasEvaluation() && outcome.status == O::Ok) {
        m_docks["evaluation"]->show();
        m_docks["evaluation"]->raise();
    }
    m_plots->replotNow();
    m_runs->setActiveRun({});
    updateActions();
    emit runFinished(outcome.status == O::Ok || outcome.status == O::Stopped);
}

void MainWindow::setLearningRateDialog()
{
    // The running rate comes as a float (0.050000000745): offered with the digits a float
    // holds, 0.05, and as many decimals as a rate this small needs, not twelve.
    const double shown = QString::number(m_lastLr, 'g', 6).toDouble();
    const int decimals =
        shown > 0 ? std::clamp(int(-std::floor(std::log10(shown))) + 3, 3, 12) : 6;
    bool ok = false;
    const double lr =
        QInputDialog::getDouble(this, tr("Learning rate"), tr("Learning rate from the next step on:"),
                                shown, 1e-12, 10, decimals, &ok);
    if (ok) m_session->setLearningRate(lr);
}

// ---- run logs ---------------------------------------------------------------------------------

bool MainWindow::openRunLog(const QString &path, bool quiet)
{
    if (m_session->isRunning()) return false;
    auto events = widgets::RunRecord::load(path);
    if (!events) {
        const QString why = q(events.error().str());
        m_log->addLine(QStringLiteral("error"), why);
        if (!quiet) QMessageBox::warning(this, tr("Could not open the run log"), why);
        return false;
    }
    showRunLog(path, std::move(events).value());
    return true;
}

void MainWindow::showRunLog(const QString &path, std::vector<nlohmann::json> events)
{
    const int count = int(events.size());
    resetRunViews();
    // A run's log lies in its folder, beside its misclassified pictures.
    m_evaluation->setPicturesFolder(QFileInfo(path).absolutePath());
    m_record->setEvents(std::move(events));
    for (const auto &e : m_record->events()) {
        showEventState(e);
        const std::string type = eventString(e, "type");
        if (type == "log" || type == "error")
            m_log->addLine(q(type == "error" ? "error" : eventString(e, "level")),
                           q(eventString(e, "message")), q(eventString(e, "node")));
    }
    m_plots->addEvents(m_record->events());
    showPendingEvaluation();
    m_scene->clearRunState(); // a finished run: the canvas shows the document, not live state
    setRunStatus(tr("Run log %1: %n event(s)", nullptr, count).arg(QFileInfo(path).fileName()));
    m_docks["plots"]->show();
    m_docks["plots"]->raise();
    m_docks["log"]->raise(); // the problems tab is empty: a run only starts without any
    updateActions();
}

bool MainWindow::saveRunLog(const QString &path)
{
    Status ok = m_record->save(path);
    if (!ok) {
        QMessageBox::warning(this, tr("Could not save the run log"), q(ok.error().str()));
        return false;
    }
    statusBar()->showMessage(tr("Saved the run log to %1").arg(path), 4000);
    return true;
}

void MainWindow::openRunLogDialog()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a run log"), QSettings().value("last_run_dir", m_runsDir).toString(),
        tr("Run logs (*.jsonl);;All files (*)"));
    if (path.isEmpty()) return;
    QSettings().setValue("last_run_dir", QFileInfo(path).absolutePath());
    openRunLog(path);
}

void MainWindow::saveRunLogDialog()
{
    QString path = QFileDialog::getSaveFileName(
        this, tr("Save the run log"),
        QSettings().value("last_run_dir", m_runsDir).toString() + QStringLiteral("/events.jsonl"),
        tr("Run logs (*.jsonl)"));
    if (path.isEmpty()) return;
    QSettings().setValue("last_run_dir", QFileInfo(path).absolutePath());
    saveRunLog(path);
}

// ---- ONNX export ------------------------------------------------------------------------------

void MainWindow::exportModelDialog()
{
    const QString model = m_inference->model();
    if (model.isEmpty()) {
        QMessageBox::information(this, tr("Export Model"),
                                 tr("There is no trained model yet: train the pipeline (Run), or "
                                    "choose a run folder or model file in Try the Model."));
        return;
    }
    const QFileInfo from(model);
    const QString name = (from.isDir() ? from.fileName() : from.dir().dirName()) + ".onnx";
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the model as ONNX"),
        QSettings().value("last_export_dir", from.absolutePath()).toString() + "/" + name,
        tr("ONNX models (*.onnx)"));
    if (path.isEmpty()) return;
    QSettings().setValue("last_export_dir", QFileInfo(path).absolutePath());
    QString why;
    if (!exportModel(model, path, &why)) {
        QMessageBox::warning(this, tr("Export Model"), why);
        return;
    }
    // Asked for in a dialog, answered in one (not modal: the window goes on meanwhile).
    auto *once = new QObject(this);
    connect(this, &MainWindow::modelExported, once, [this, once](bool ok, const QString &text) {
        once->deleteLater();
        auto *box = new QMessageBox(ok ? QMessageBox::Information : QMessageBox::Warning,
                                    ok ? tr("Model exported") : tr("Export failed"), text,
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

bool MainWindow::exportModel(const QString &model, const QString &onnxPath, QString *why)
{
    const QString cli = widgets::RunSession::defaultCliPath();
    if (cli.isEmpty()) {
        if (why) *why = tr("flowbench-cli was not found, so the model cannot be exported");
        return false;
    }
    if (m_exportProcess) {
        if (why) *why = tr("an export is already under way");
        return false;
    }
    auto *p = new QProcess(this);
    m_exportProcess = p;
    statusBar()->showMessage(tr("Exporting %1 and checking it on the test set…").arg(onnxPath));
    m_log->addLine(QStringLiteral("info"), tr("exporting %1 to %2").arg(model, onnxPath));
    auto done = [this, p, onnxPath](bool started) {
        p->deleteLater();
        const QByteArray out = p->readAllStandardOutput();
        const QString err = QString::fromLocal8Bit(p->readAllStandardError()).trimmed();
        const QJsonObject j =
            QJsonDocument::fromJson(out.trimmed().split('\n').last()).object();
        const bool ok = started && j.value("status").toString() == "ok";
        QString text;
        if (ok) {
            const QJsonObject c = j.value("check").toObject();
            text = tr("Wrote %1 (ONNX opset 17, %2 operators).").arg(onnxPath).arg(j["nodes"].toInt());
            if (!c.isEmpty())
                text += " " + tr("Checked with %1 on %2: the same top class for %3 of %4, largest "
                                 "logit difference %5.")
                                  .arg(c["runtime"].toString(), c["data"].toString())
                                  .arg(c["same_top1"].toInteger())
                                  .arg(c["samples"].toInteger())
                                  .arg(c["max_logit_difference"].toDouble(), 0, 'g', 3);
        } else {
            const QJsonObject e = j.value("error").toObject();
            const QString node = e.value("node").toString();
            text = !started ? tr("flowbench-cli could not be started: %1").arg(p->errorString())
                   : e.isEmpty()  ? err.section('\n', -1)
                   : node.isEmpty() ? e["message"].toString()
                                    : tr("node '%1': %2").arg(node, e["message"].toString());
        }
        m_log->addLine(ok ? QStringLiteral("info") : QStringLiteral("error"), text);
        statusBar()->showMessage(ok ? tr("Exported %1").arg(onnxPath) : tr("Export failed"),
                                 8000);
        emit modelExported(ok, text);
    };
    connect(p, &QProcess::finished, this, [done] { done(true); });
    connect(p, &QProcess::errorOccurred, this, [done](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) done(false);
    });
    p->start(cli, {QStringLiteral("export"), model, QStringLiteral("-o"), onnxPath});
    return true;
}

} // namespace fb::app
