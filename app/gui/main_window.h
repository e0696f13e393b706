#pragma once

#include <functional>
#include <map>
#include <set>
#include <memory>

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>
#include <QProcess>
#include <QMessageBox>
#include <QStringList>
#include <nlohmann/json.hpp>

#include "app/gui/data_set_dialog.h"

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QListWidget;
class QMenu;
class QProgressBar;
class QSpinBox;
class QToolButton;

namespace fb::widgets {
class InferencePanel;
class RecordPanel;
class ModelSummaryView;
class EditedPipeline;
class EvaluationView;
class GraphScene;
class GraphView;
class Inspector;
class LivePlots;
class LogView;
class NodePalette;
class RecoveryStore;
class RunRecord;
class RunsPanel;
class RunDiffView;
class SweepView;
class LrFinderView;
class RunSession;
struct RunOutcome;
struct RunRequest;
} // namespace fb::widgets

namespace fb::app {

// The workbench window: the node-graph canvas in the middle; palette, inspector, problems, log,
// live plots and evaluation in docks; a run in a flowbench-cli child process whose event stream
// drives the plots and the live state on the canvas (DESIGN.md: a crash or an out-of-memory in
// the engine never takes the editor and the user's unsaved work with it).
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Opens a pipeline file; on failure shows why (a dialog, or only the log when quiet) and
    // keeps the current document.
    bool openPipeline(const QString &path, bool quiet = false);
    bool savePipeline(const QString &path);

    // Starts a run of the document as it is now (a snapshot: later edits do not reach it).
    // Refused, with the reason, while invalid or while a run goes on.
    bool startRun(QString *error = nullptr);
    bool isRunning() const;
    // Extra "node.param=value" settings for runs (the command line's --set; tests use it to run
    // on a small subset of the data).
    void setRunSettings(const QStringList &settings) { m_runSettings = settings; }
    void setRunThreads(int threads) { m_runThreads = threads; }
    // Picks the device for runs ("cpu", "cuda:0"); false, with the reason, when the device
    // picker has it disabled or does not know it.
    bool setRunDevice(const QString &device, QString *why = nullptr);
    // The picker lists GPUs once `flowbench-cli devices` has answered; this waits (running the
    // event loop) for that answer, at most `ms` milliseconds. True when it came.
    bool waitForDevices(int ms = 10000);
    // Where runs keep their folders (the Runs panel lists them); by default the application's
    // data folder.
    void setRunsDirectory(const QString &dir);
    QString runsDirectory() const { return m_runsDir; }
    // A kept run (docs/runs.md): its plots, evaluation and model come back into the window.
    // False, with the reason, while a run goes on or when the folder has no event log.
    bool openRun(const QString &dir, QString *why = nullptr);
    // Continues a stopped, killed or failed run from its newest checkpoint, in its own folder
    // (the CLI's --resume); its earlier curves stay in the plots.
    bool resumeRun(const QString &dir, QString *why = nullptr);
    // Overlays two or more kept runs in every plot, one colour each (their names in the legend,
    // a swatch of the colour in the Runs panel). False, with the reason, while a run goes on or
    // when a run has no event log.
    bool compareRuns(const QStringList &dirs, QString *why = nullptr);
    // What differs between two kept runs: the later one's pipeline opens on the canvas (as an
    // untitled copy) with the nodes that differ marked, and the Run Diff window lists every
    // changed parameter, node, wire and manifest key. False, with the reason, when a pipeline
    // cannot be read or the person keeps unsaved edits.
    bool diffRuns(const QString &a, const QString &b, QString *why = nullptr);
    widgets::RunDiffView *runDiff() const; // the open Run Diff window's view, or null
    // A sweep of the document as it is now: `flowbench-cli sweep` in a child process, one run
    // per combination of the ranges ("node.param=v1,v2,..."), `parallel` at a time, or `random`
    // of them (0: all). Its runs appear in the Runs panel, its plot in the Sweep view. False,
    // with the reason, while a run or a sweep goes on or when the pipeline has problems.
    bool startSweep(const QStringList &ranges, int parallel = 1, int random = 0,
                    QString *why = nullptr);
    void stopSweep(); // every run of it ends after its step, with a checkpoint
    bool isSweeping() const;
    widgets::SweepView *sweepView() const { return m_sweepView; }
    // The learning-rate range test on the document as it is (`flowbench-cli lr-find - --json`
    // in a child process), shown in the Learning Rate window with its suggestion and a Use
    // button; the optimizer's value changes only when Use is pressed. False, with the reason,
    // while a run, a sweep or another test goes on, or when the pipeline has problems.
    bool findLearningRate(QString *why = nullptr);
    widgets::LrFinderView *lrFinder() const; // the Learning Rate window's view, or null
    // Help > Keyboard Shortcuts: every action with a key, from the actions themselves.
    QString shortcutsText() const;
    void showGettingStarted(); // Help > Getting Started

    // The spoken-digits recordings (File > Make Spoken-Digits Data Set…), made by
    // `flowbench-cli make-data spoken-digits` in a child process with a progress dialog. By default
    // they go where resources/examples/spoken_digits.json reads them; tests name a folder of
    // their own, and fewer voices (`--voices N`) to be quick.
    static QString defaultSpokenDigitsDirectory();
    void setSpokenDigitsDirectory(const QString &dir) { m_spokenDigitsDir = dir; }
    QString spokenDigitsDirectory() const { return m_spokenDigitsDir; }
    void setSpokenDigitsVoices(int voices) { m_spokenDigitsVoices = voices; }
    // Starts making them; false, with the reason, when flowbench-cli is missing or it is working.
    bool makeSpokenDigits(QString *why = nullptr);
    DataSetDialog *dataSetDialog() const { return m_dataSetDialog; }

    // Crash recovery (widgets/editing/recovery.h): offers to restore the pipelines that windows
    // which crashed left in the recovery folder, newest first, until the person restores one or
    // keeps the rest for later. Called once at start by main(); returns true when one was restored.
    bool offerRecovery();
    widgets::RecoveryStore *recovery() const { return m_recovery; }

    bool openRunLog(const QString &path, bool quiet = false);
    bool saveRunLog(const QString &path);
    // File > Export Model: the trained model (a run folder, model or checkpoint file) as ONNX,
    // by `flowbench-cli export` in a child process, checked before it is written
    // (docs/onnx.md). The outcome arrives with modelExported() and in the log; false, with the
    // reason, when an export is already under way or flowbench-cli is missing.
    bool exportModel(const QString &model, const QString &onnxPath, QString *why = nullptr);

    // How a question to the person is answered, with these buttons (tests replace the dialog).
    using Asker = std::function<QMessageBox::StandardButton(
        const QString &title, const QString &text, QMessageBox::StandardButtons buttons)>;
    void setAsker(Asker asker) { m_ask = std::move(asker); }
    // Where Save As writes, asked from a suggested path (tests replace the file dialog); empty:
    // cancelled.
    using SavePathChooser = std::function<QString(const QString &suggested)>;
    void setSavePathChooser(SavePathChooser chooser) { m_chooseSavePath = std::move(chooser); }

    widgets::EditedPipeline *pipeline() const { return m_pipeline; }
    widgets::GraphScene *scene() const { return m_scene; }
    widgets::GraphView *view() const { return m_view; }
    widgets::NodePalette *palette() const { return m_palette; }
    widgets::Inspector *inspector() const { return m_inspector; }
    widgets::LivePlots *plots() const { return m_plots; }
    widgets::LogView *log() const { return m_log; }
    widgets::EvaluationView *evaluation() const { return m_evaluation; }
    widgets::InferencePanel *inference() const { return m_inference; }
    widgets::RecordPanel *recordPanel() const { return m_recordPanel; }
    widgets::ModelSummaryView *modelSummary() const { return m_summary; }
    widgets::RunsPanel *runs() const { return m_runs; }
    widgets::RunSession *session() const { return m_session; }
    widgets::RunRecord *record() const { return m_record; }
    QListWidget *problemsList() const { return m_problems; }
    // An action by its object name ("run", "save", "undo", ...), for tests and scripting.
    QAction *action(const QString &name) const;
    // A dock by its name ("plots", "runs", "sweep", ...).
    QDockWidget *dockWidget(const QString &name) const;
    QString statusText() const;
    // The outcome of the last run, as shown to the person ("" before any).
    QString lastRunMessage() const { return m_lastRunMessage; }
    // The last run's summary object (the CLI contract), null before any.
    const nlohmann::json &lastSummary() const { return m_lastSummary; }

signals:
    void runFinished(bool ok);
    void sweepFinished(bool ok, const QString &record);
    void learningRateFound(bool ok);
    // An export ended: what it says for people (the check's figures, or what went wrong).
    void modelExported(bool ok, const QString &text);
    void devicesListed();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void buildActions();
    void buildMenus();
    void buildDocks();
    void restoreSettings();
    void saveSettings();
    void updateTitle();
    // The run's state in the status bar: the first line of `text`, elided to fit; the whole of
    // `tooltip` (default: text) as its tooltip.
    void setRunStatus(const QString &text, const QString &tooltip = {});
    void updateActions();
    void updateProblems();
    void refreshRecentMenu();
    void addRecent(const QString &path);
    void fillDevices();
    void applyDeviceList(const QByteArray &json, const QString &failure);
    bool maybeSave();
    void newPipeline();
    void openDialog();
    bool save();
    bool saveAs();
    void copy();
    void paste();
    void cut();
    void focusNode(const QString &nodeId);
    void onRunEvent(const nlohmann::json &e);
    void onRunFinished(const widgets::RunOutcome &outcome);
    void showEventState(const nlohmann::json &e);
    void showEventStateUnchecked(const nlohmann::json &e);
    void showPendingEvaluation();
    void resetRunViews();
    void setLearningRateDialog();
    void openRunLogDialog();
    void saveRunLogDialog();
    QString examplesDirectory() const;
    // Why a run, a sweep or a range test cannot start now (another one goes on, the pipeline
    // has problems: then Problems is shown), or empty when it can.
    QString whyTheEngineCannotStart();
    // What the window's run settings add to an engine command: --threads, --device, --set.
    QStringList engineOptions() const;
    // A run log's events into the plots, log and evaluation (openRunLog, openRun).
    void showRunLog(const QString &path, std::vector<nlohmann::json> events);
    // Starts the session with the run views as they are (a resume keeps the earlier curves).
    bool launchRun(const widgets::RunRequest &request, QString *error);
    void pointAtMissingSpokenDigits();

    widgets::EditedPipeline *m_pipeline;
    widgets::GraphScene *m_scene;
    widgets::GraphView *m_view;
    widgets::NodePalette *m_palette = nullptr;
    widgets::Inspector *m_inspector = nullptr;
    widgets::LivePlots *m_plots = nullptr;
    widgets::LogView *m_log = nullptr;
    widgets::EvaluationView *m_evaluation = nullptr;
    widgets::InferencePanel *m_inference = nullptr;
    widgets::RecordPanel *m_recordPanel = nullptr;
    widgets::ModelSummaryView *m_summary = nullptr;
    widgets::RunsPanel *m_runs = nullptr;
    QPointer<widgets::RunDiffView> m_runDiff; // in its own window while open
    widgets::SweepView *m_sweepView = nullptr;
    QPointer<QProcess> m_sweepProcess; // `flowbench-cli sweep` while it runs
    QPointer<QProcess> m_lrProcess;    // `flowbench-cli lr-find` while it runs
    QPointer<widgets::LrFinderView> m_lrFinder;
    void sweepDialog();
    void showShortcuts();
    widgets::RunSession *m_session;
    widgets::RunRecord *m_record;
    widgets::RecoveryStore *m_recovery;
    QListWidget *m_problems = nullptr;
    QComboBox *m_device = nullptr;
    // Data-parallel runs (docs/distributed.md): how many processes, and the hostfile whose hosts
    // they run on (empty: this machine). Enabled when the engine has MPI and mpirun is found.
    QSpinBox *m_ranks = nullptr;
    QToolButton *m_hosts = nullptr;
    QString m_hostfile;
    void chooseHostfile();
    void fillDataParallel(widgets::RunRequest &req) const;
    QString m_wantedDevice; // saved or asked for before the GPUs were listed
    bool m_devicesKnown = false;
    QPointer<QProcess> m_devicesProcess; // `flowbench-cli devices` while it runs
    QPointer<QProcess> m_exportProcess;  // `flowbench-cli export` while it runs
    void exportModelDialog();
    QLabel *m_statusRun = nullptr;
    QProgressBar *m_statusProgress = nullptr;
    QMenu *m_recentMenu = nullptr;
    std::map<QString, QAction *> m_actions;
    std::map<QString, QDockWidget *> m_docks;

    QStringList m_runSettings;
    int m_runThreads = 0;
    QString m_runsDir;
    QString m_spokenDigitsDir;
    int m_spokenDigitsVoices = 0; // 0: all
    QPointer<DataSetDialog> m_dataSetDialog;
    QString m_lastRunMessage;
    nlohmann::json m_lastSummary;
    nlohmann::json m_pendingEvaluation; // the latest evaluation event, not yet shown
    Asker m_ask;
    SavePathChooser m_chooseSavePath;
    // The run's shape, from run_start, for per-node progress.
    long m_totalSteps = 0;
    long m_lastStep = 0; // of the latest progress event
    int m_pasteCount = 0;                // pastes since the last copy: each lands a step further
    double m_lastLr = 0.01;              // the running learning rate, offered by Set Learning Rate
    QElapsedTimer m_canvasProgressClock; // status bar and canvas progress follow at most 2/s
    std::set<std::string> m_stepNodes;   // the nodes a training step runs: they show its progress
};

} // namespace fb::app
