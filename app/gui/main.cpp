// flowbench: the workbench window. Opens a pipeline (the Fashion-MNIST CNN example when none is
// named), and with --run starts training it at once; --quit-when-done and --report make it
// scriptable (bench/gui_responsiveness.py measures the window with them).
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QTimer>

#include "app/gui/main_window.h"
#include "app/gui/stall_meter.h"
#include "app/gui/theme.h"
#include "widgets/files/atomic_write.h"

namespace {

QString defaultPipeline()
{
    const QString bin = QCoreApplication::applicationDirPath();
    for (const QString &c :
         {bin + QStringLiteral("/../share/flowbench/examples/fashion_mnist_cnn.json"),
          QStringLiteral(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json")})
        if (QFileInfo::exists(c)) return QFileInfo(c).canonicalFilePath();
    return {};
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Flowbench"));
    QApplication::setApplicationName(QStringLiteral("flowbench"));
    QApplication::setApplicationDisplayName(QStringLiteral("Flowbench"));
    QApplication::setApplicationVersion(QStringLiteral(FLOWBENCH_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.flowbench.Flowbench"));

    QCommandLineParser cli;
    cli.setApplicationDescription(
        QStringLiteral("Flowbench: build a machine-learning pipeline as a graph, train it, watch "
                       "it live."));
    cli.addHelpOption();
    cli.addVersionOption();
    cli.addPositionalArgument(QStringLiteral("pipeline"),
                              QStringLiteral("Pipeline file to open (default: the Fashion-MNIST "
                                             "CNN example)."),
                              QStringLiteral("[PIPELINE.json]"));
    QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Start training at once."));
    QCommandLineOption quit(QStringLiteral("quit-when-done"),
                            QStringLiteral("Quit when the run ends (exit 0 if it succeeded)."));
    QCommandLineOption set(QStringLiteral("set"),
                           QStringLiteral("Override a parameter for runs: NODE.PARAM=VALUE."),
                           QStringLiteral("NODE.PARAM=VALUE"));
    QCommandLineOption threads(QStringLiteral("threads"),
                               QStringLiteral("CPU threads for runs (default: the runner's)."),
                               QStringLiteral("N"));
    QCommandLineOption device(QStringLiteral("device"),
                              QStringLiteral("Device for runs: cpu or cuda[:N] (where usable)."),
                              QStringLiteral("DEVICE"));
    QCommandLineOption runsDir(QStringLiteral("runs-dir"),
                               QStringLiteral("Folder for run outputs."), QStringLiteral("DIR"));
    QCommandLineOption report(QStringLiteral("report"),
                              QStringLiteral("With --run: write a JSON report (the GUI thread's "
                                             "stalls, the run's summary) to FILE at the end."),
                              QStringLiteral("FILE"));
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("With --run: save a picture of the window to "
                                                 "FILE (PNG) SECONDS after the run started, or "
                                                 "when it ends if that is sooner."),
                                  QStringLiteral("FILE"));
    QCommandLineOption screenshotAfter(QStringLiteral("screenshot-after"),
                                       QStringLiteral("Seconds for --screenshot (default 10)."),
                                       QStringLiteral("SECONDS"), QStringLiteral("10"));
    QCommandLineOption theme(QStringLiteral("theme"),
                             QStringLiteral("system, light or dark (remembered)."),
                             QStringLiteral("THEME"));
    cli.addOptions(
        {run, quit, set, threads, device, runsDir, report, screenshot, screenshotAfter, theme});
    cli.process(app);

    if (cli.isSet(theme)) QSettings().setValue("theme", cli.value(theme));
    fb::app::applyTheme(fb::app::themeFromName(QSettings().value("theme", "system").toString()));

    fb::app::MainWindow window;
    window.setRunSettings(cli.values(set));
    if (cli.isSet(threads)) window.setRunThreads(cli.value(threads).toInt());
    if (cli.isSet(device)) {
        QString why;
        if (!window.setRunDevice(cli.value(device), &why)) {
            std::fprintf(stderr, "flowbench: %s; runs use the CPU\n", qPrintable(why));
            if (cli.isSet(quit)) return 2;
        }
    }
    if (cli.isSet(runsDir)) window.setRunsDirectory(QDir(cli.value(runsDir)).absolutePath());

    const QString path = cli.positionalArguments().value(0, defaultPipeline());
    bool opened = path.isEmpty() ? false : window.openPipeline(path, /*quiet=*/cli.isSet(quit));
    window.show();
    if (!opened && cli.isSet(quit)) {
        std::fprintf(stderr, "flowbench: could not open %s\n", qPrintable(path));
        return 2;
    }

    fb::app::StallMeter meter;
    const bool scripted = cli.isSet(quit);
    // --screenshot: after its seconds, or as the run ends when that comes first (a short run
    // with --quit-when-done would otherwise quit before the picture).
    bool shotTaken = false;
    auto takeScreenshot = [&] {
        if (!cli.isSet(screenshot) || shotTaken) return;
        shotTaken = true;
        if (!window.grab().save(cli.value(screenshot)))
            std::fprintf(stderr, "flowbench: cannot save %s\n", qPrintable(cli.value(screenshot)));
    };
    QObject::connect(&window, &fb::app::MainWindow::runFinished, &app, [&](bool ok) {
        meter.stop();
        if (cli.isSet(run)) takeScreenshot();
        if (cli.isSet(report)) {
            nlohmann::json r = {{"gui_stalls", meter.report()},
                                {"ok", ok},
                                {"message", window.lastRunMessage().toStdString()},
                                {"summary", window.lastSummary()}};
            if (fb::Status s = fb::widgets::writeFileAtomically(cli.value(report), r.dump(2) + "\n",
                                                                "the report");
                !s)
                std::fprintf(stderr, "flowbench: %s\n", s.error().str().c_str());
        }
        if (scripted) QCoreApplication::exit(ok ? 0 : 1);
    });

    // A window that crashed left its unsaved changes in the recovery folder: offered once the
    // window shows. Not in scripted runs (--run, --quit-when-done): the files wait for a start
    // where a person answers.
    if (!cli.isSet(run) && !scripted)
        QTimer::singleShot(0, &window, [&] { window.offerRecovery(); });

    if (cli.isSet(run)) {
        QTimer::singleShot(0, &window, [&] {
            QString why;
            meter.start();
            if (!window.startRun(&why)) {
                std::fprintf(stderr, "flowbench: %s\n", qPrintable(why));
                if (scripted) QCoreApplication::exit(1);
            }
        });
        if (cli.isSet(screenshot)) {
            const int ms = int(cli.value(screenshotAfter).toDouble() * 1000);
            QTimer::singleShot(ms, &window, takeScreenshot);
        }
    }
    return app.exec();
}
