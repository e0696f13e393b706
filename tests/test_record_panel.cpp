// The window's Record panel and Try the Model's Listen mode (issue 19), driven as a person would:
// words spoken by espeak-ng imported as long files and cut into one-word clips, a folder of class
// subfolders, a damaged file named, clips relabelled and deleted, "Train on this" giving a pipeline
// that trains, and takes recorded through the real audio path: Qt Multimedia's microphone is a
// PulseAudio server of the test's own, whose default source is the monitor of a null sink into
// which paplay plays the words, mirrored as an ordinary source (module-remap-source), which Qt
// Multimedia lists where it lists no monitors; nothing of the machine's sound is used, and no sound
// card is needed.

#include "core/data/audio_files.h"
#include "core/data/utterances.h"
#include "core/exec/inference.h"
#include "core/io/safetensors.h"
#include "core/nn/loss.h"
#include "widgets/audio/pcm.h"
#include "widgets/audio/record_panel.h"
#include "widgets/inference/inference_panel.h"
#include "widgets/inference/tune_dialog.h"

#include <QtTest>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMediaDevices>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <csignal>
#include <memory>

using fb::widgets::RecordPanel;

namespace {

const QString kSource = QStringLiteral(FLOWBENCH_SOURCE_DIR);

int runTool(const QString &program, const QStringList &args, QString *err = nullptr)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(120000)) return -1;
    if (err) *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

// `words` spoken by espeak-ng (voice `voice`), each followed by `gap` seconds of quiet room
// noise, as one 16 kHz WAV file.
bool speak(const QString &out, const QStringList &words, const QString &voice, double gap)
{
    QTemporaryDir dir;
    QStringList parts;
    for (int i = 0; i < words.size(); ++i) {
        const QString raw = dir.filePath(QString("w%1.wav").arg(i));
        const QString part = dir.filePath(QString("p%1.wav").arg(i));
        if (runTool("espeak-ng", {"-v", voice, "-w", raw, words[i]}) != 0) return false;
        if (runTool("sox", {raw, "-r", "16000", "-c", "1", "-b", "16", part, "pad", "0.3",
                            QString::number(gap)}) != 0)
            return false;
        parts << part;
    }
    const QString clean = dir.filePath("clean.wav");
    if (runTool("sox", parts + QStringList{clean}) != 0) return false;
    // A quiet room: pink noise 50 dB down, mixed in.
    QString seconds;
    {
        QProcess p;
        p.start("soxi", {"-D", clean});
        p.waitForFinished();
        seconds = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
    }
    const QString noise = dir.filePath("noise.wav");
    if (runTool("sox", {"-n", "-r", "16000", "-c", "1", "-b", "16", noise, "synth", seconds,
                        "pinknoise", "vol", "0.003"}) != 0)
        return false;
    return runTool("sox", {"-m", clean, noise, out}) == 0;
}

bool haveTools(QString *missing)
{
    for (const char *tool : {"espeak-ng", "sox", "soxi"})
        if (QStandardPaths::findExecutable(tool).isEmpty()) {
            *missing = tool;
            return false;
        }
    return true;
}

// The PulseAudio server the microphone tests record from, started before QApplication so that
// Qt Multimedia connects to it (PULSE_SERVER).
struct VirtualMicrophone {
    QTemporaryDir dir;
    std::unique_ptr<QProcess> server;
    QProcessEnvironment env;
    QString why; // why there is none

    bool start()
    {
        for (const char *tool : {"pulseaudio", "paplay", "pactl"})
            if (QStandardPaths::findExecutable(tool).isEmpty()) {
                why = QString("%1 is not installed (scripts/deps.sh installs pulseaudio and "
                              "pulseaudio-utils)")
                          .arg(tool);
                return false;
            }
        env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_RUNTIME_DIR", dir.path());
        env.insert("PULSE_SERVER", "unix:" + dir.filePath("native"));
        env.insert("HOME", dir.path());
        server = std::make_unique<QProcess>();
        server->setProcessEnvironment(env);
        server->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        server->start(
            "pulseaudio",
            {"-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
             "--system=no", "--log-level=error",
             "--load=module-native-protocol-unix auth-anonymous=1 socket=" + dir.filePath("native"),
             "--load=module-null-sink sink_name=speaker rate=16000 channels=1",
             // Qt Multimedia lists no monitor sources: a plain source that mirrors it.
             "--load=module-remap-source master=speaker.monitor source_name=mic "
             "source_properties=device.description=VirtualMicrophone",
             "--load=module-always-sink"});
        if (!server->waitForStarted()) {
            why = "pulseaudio did not start";
            return false;
        }
        bool up = false;
        for (int i = 0; i < 100 && !up; ++i) {
            up = pactl({"info"});
            if (!up) QThread::msleep(100);
        }
        if (!up || !pactl({"set-default-source", "mic"})) {
            why = "the test's PulseAudio server did not answer";
            return false;
        }
        qputenv("PULSE_SERVER", env.value("PULSE_SERVER").toUtf8());
        return true;
    }
    bool pactl(const QStringList &args)
    {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start("pactl", args);
        p.waitForFinished(10000);
        return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }
    // Plays a file into the null sink, returning when it has played (the event loop runs
    // meanwhile, so the panel records).
    bool play(const QString &file)
    {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start("paplay", {"--device=speaker", file});
        if (!p.waitForStarted()) return false;
        QElapsedTimer t;
        t.start();
        while (p.state() == QProcess::Running && t.elapsed() < 60000)
            QTest::qWait(50);
        return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }
    ~VirtualMicrophone()
    {
        if (server) {
            server->terminate();
            server->waitForFinished(5000);
        }
    }
};

VirtualMicrophone *g_mic = nullptr;

// The loudness of a clip's middle half against its outer quarters: a clip centred on its word
// is loud in the middle.
double middleOverEdges(const std::vector<float> &x)
{
    double middle = 0, edges = 0;
    const size_t n = x.size();
    for (size_t k = 0; k < n; ++k) {
        const double e = double(x[k]) * double(x[k]);
        if (k >= n / 4 && k < 3 * n / 4)
            middle += e;
        else
            edges += e;
    }
    return middle / std::max(edges, 1e-12);
}

// Synthetic "words" for a take of `seconds` at 16 kHz: a 350 ms tone burst every 1.3 s (from
// 0.4 s) in quiet noise.
std::vector<float> toneWords(int seconds)
{
    std::vector<float> take(size_t(16000 * seconds));
    for (size_t k = 0; k < take.size(); ++k) {
        const double t = double(k) / 16000;
        const bool on = std::fmod(t, 1.3) > 0.4 && std::fmod(t, 1.3) < 0.75;
        take[k] = float((on ? 0.3 : 0.0) * std::sin(2 * M_PI * 300 * t) +
                        0.001 * std::sin(2 * M_PI * 4000.5 * t));
    }
    return take;
}

// One second at 16 kHz: a 1100 Hz tone from 0.31 to 0.63 s in silence, between the pitches of
// listensLiveInTryTheModel's two words, which its model is less sure of.
std::vector<float> toneBetween()
{
    std::vector<float> tone(16000);
    for (size_t k = 0; k < tone.size(); ++k)
        tone[k] = k > 5000 && k < 10000
                      ? float(0.15 * std::sin(2 * M_PI * 1100 * double(k) / 16000.0))
                      : 0.0f;
    return tone;
}

} // namespace

class TestRecordPanel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_home; // HOME, and the trash (XDG_DATA_HOME)
    QString m_missing;

    static QStringList filesIn(const QString &dir)
    {
        return QDir(dir).entryList({"*.wav"}, QDir::Files, QDir::Name);
    }

private slots:
    void initTestCase()
    {
        // The trash: Qt uses the home trash (XDG_DATA_HOME/Trash) for files on the home
        // directory's disk and a .Trash-UID folder at the top of any other; with HOME here too,
        // the clips (in /tmp, a disk of its own in some CI roots) are on the home's disk.
        QDir(m_home.path()).mkpath("share");
        qputenv("HOME", m_home.path().toUtf8());
        qputenv("XDG_DATA_HOME", m_home.filePath("share").toUtf8());
        haveTools(&m_missing);
    }

    void namesAreMadeSafeForFileNames()
    {
        QCOMPARE(fb::widgets::clipNamePart("  Seven! "), QString("seven"));
        QCOMPARE(fb::widgets::clipNamePart("turn_left now"), QString("turn-left-now"));
        QCOMPARE(fb::widgets::clipNamePart("../../etc"), QString("etc"));
        QCOMPARE(fb::widgets::clipNamePart("!!!"), QString());
        RecordPanel panel;
        QTemporaryDir dir;
        panel.setFolder(dir.path());
        QString why;
        QVERIFY(!panel.addClass("?!", &why));
        QVERIFY(why.contains("no letters"));
        QVERIFY(panel.addClass("Seven", &why));
        QCOMPARE(panel.classes(), (QStringList{"seven", "background", "unknown"}));
        QCOMPARE(panel.currentClass(), QString("seven"));
        // What the panel shows follows the class just added: its take buttons and clip count.
        QStringList buttons;
        for (const QPushButton *b : panel.findChildren<QPushButton *>())
            buttons << b->text();
        QVERIFY2(buttons.contains("Hold to record") && buttons.contains("Record a long take") &&
                     !buttons.contains("Record background"),
                 qPrintable(buttons.join(", ")));
        QStringList labels;
        for (const QLabel *l : panel.findChildren<QLabel *>())
            labels << l->text();
        QVERIFY2(labels.contains("0 clip(s) of 'seven'"), qPrintable(labels.join(" | ")));
    }

    // A class added without clips yet is still there when the folder is opened again (in the
    // folder's classes.txt), and stays with its folder: another folder does not get it.
    void emptyClassesAreKeptWithTheirFolder()
    {
        QTemporaryDir dir, other;
        {
            RecordPanel panel;
            panel.setFolder(dir.filePath("words"));
            QVERIFY(panel.addClass("left"));
            QVERIFY(panel.addClass("Right"));
            panel.setFolder(other.path());
            QCOMPARE(panel.classes(), (QStringList{"background", "unknown"}));
        }
        QVERIFY(QFileInfo::exists(dir.filePath("words/classes.txt")));
        RecordPanel again;
        again.setFolder(dir.filePath("words"));
        QCOMPARE(again.classes(), (QStringList{"left", "right", "background", "unknown"}));
        // A list edited by hand: names are made safe as typed ones are, blank lines skipped.
        QFile list(dir.filePath("words/classes.txt"));
        QVERIFY(list.open(QIODevice::Append | QIODevice::Text));
        list.write("\n  Turn Left \n");
        list.close();
        again.setFolder(dir.filePath("words"));
        QCOMPARE(again.classes(),
                 (QStringList{"left", "right", "turn-left", "background", "unknown"}));
    }

    // A long file where one word is said four times becomes four 1-second clips, each centred
    // on its word; a short file one clip; background noise whole windows; a folder's
    // subfolders name the classes; a damaged file is named and skipped.
    void importsAndCutsFiles()
    {
        if (!m_missing.isEmpty()) QFAIL(qPrintable(m_missing + " is missing (scripts/deps.sh)"));
        QTemporaryDir src, dir;
        const QString takes = src.filePath("sevens.wav");
        QVERIFY(speak(takes, {"seven", "seven", "seven", "seven"}, "en-us", 0.8));
        RecordPanel panel;
        panel.setFolder(dir.filePath("clips"));
        QVERIFY(panel.addClass("seven"));
        QCOMPARE(panel.importPaths({takes}), 4);
        QStringList files = filesIn(dir.filePath("clips"));
        QCOMPARE(files, (QStringList{"seven_file-sevens_1.wav", "seven_file-sevens_2.wav",
                                     "seven_file-sevens_3.wav", "seven_file-sevens_4.wav"}));
        for (const QString &f : files) {
            auto x = fb::data::readRecording(dir.filePath("clips/" + f).toStdString(), 16000);
            QVERIFY(x.ok());
            QCOMPARE(int(x.value().size()), 16000);
            const double ratio = middleOverEdges(x.value());
            QVERIFY2(ratio > 5, qPrintable(f + ": " + QString::number(ratio)));
        }
        QVERIFY(panel.status().contains("4 clip(s) imported"));
        QVERIFY2(!panel.status().contains("clipped"), qPrintable(panel.status()));
        // The same words driven 12 dB past full scale: imported, and said to be clipped.
        const QString hot = src.filePath("hot-sevens.wav");
        QCOMPARE(runTool("sox", {takes, hot, "gain", "-n", "12"}), 0);
        QCOMPARE(panel.importPaths({hot}), 4);
        QVERIFY2(panel.status().contains("4 clip(s) imported") &&
                     panel.status().contains("1 file(s) clipped") &&
                     panel.status().contains("hot-sevens.wav"),
                 qPrintable(panel.status()));
        for (const QString &f : filesIn(dir.filePath("clips")))
            if (f.startsWith("seven_file-hot-sevens_"))
                QVERIFY(QFile::remove(dir.filePath("clips/" + f)));
        panel.setFolder(dir.filePath("clips")); // read again without them

        // A folder: three/ and background/ subfolders, a loose file, and a file that is not audio.
        QDir(src.path()).mkpath("set/three");
        QDir(src.path()).mkpath("set/_background_noise_"); // Speech Commands' spelling
        QVERIFY(speak(src.filePath("set/three/a.wav"), {"three"}, "en-gb", 0.2));
        QVERIFY(speak(src.filePath("set/three/b.wav"), {"three", "three"}, "en-us+f3", 0.7));
        QCOMPARE(runTool("sox", {"-n", "-r", "22050", "-c", "2",
                                 src.filePath("set/_background_noise_/n.flac"), "synth", "3.5",
                                 "brownnoise", "vol", "0.1"}),
                 0);
        QVERIFY(speak(src.filePath("set/loose.wav"), {"seven"}, "en-us+m3", 0.2));
        // An MP3 with its suffix in capitals (a phone's recording) is one of the folder's
        // recordings too; before, the folder's files were WAV, FLAC, OGG, AIFF and AU only.
        QVERIFY(speak(src.filePath("c.wav"), {"three"}, "en-us+f2", 0.2));
        QCOMPARE(
            runTool("sox", {src.filePath("c.wav"), "-t", "mp3", src.filePath("set/three/c.MP3")}),
            0);
        QFile bad(src.filePath("set/three/broken.wav"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("RIFF\x10\0\0\0WAVEfmt this is not a recording");
        bad.close();
        panel.selectClass("seven");
        QCOMPARE(panel.importPaths({src.filePath("set")}), 1 + 2 + 1 + 3 + 1);
        QVERIFY2(panel.status().contains("broken.wav"), qPrintable(panel.status()));
        QCOMPARE(panel.classes(), (QStringList{"seven", "three", "background", "unknown"}));
        int three = 0, background = 0, seven = 0;
        for (const auto &c : panel.clips()) {
            three += c.label == "three";
            background += c.label == "background";
            seven += c.label == "seven";
        }
        QCOMPARE(three, 4);
        QCOMPARE(background, 3);
        QCOMPARE(seven, 5);
        QCOMPARE(filesIn(dir.filePath("clips")).size(), 12);

        // A second panel on the same folder sees the same clips (they are the files).
        RecordPanel again;
        again.setFolder(dir.filePath("clips"));
        QCOMPARE(again.clips().size(), 12);
        QCOMPARE(again.classes(), panel.classes());
    }

    // Relabel renames the file into the other class; delete moves it to the trash; the clip
    // list shows the current class's clips with their spectrograms.
    void clipsAreRelabelledAndDeleted()
    {
        QTemporaryDir dir;
        RecordPanel panel;
        panel.setFolder(dir.path());
        QVERIFY(panel.addClass("go"));
        QVERIFY(panel.addClass("stop"));
        const std::vector<float> take = toneWords(4); // three "words"
        QCOMPARE(panel.addTake(take, "go", "ann"), 3);
        auto *list = panel.findChild<QListWidget *>("recordClips");
        panel.selectClass("go");
        QCOMPARE(list->count(), 3);
        QVERIFY(!list->item(0)->icon().isNull());
        QVERIFY(panel.relabel(panel.shownClips()[1], "stop"));
        QVERIFY(QFile::exists(dir.filePath("stop_ann_1.wav")));
        QVERIFY(!QFile::exists(dir.filePath("go_ann_2.wav")));
        QString why;
        QVERIFY(!panel.relabel(0, "nonsense", &why));
        QVERIFY(why.contains("nonsense"));
        panel.selectClass("go");
        QCOMPARE(list->count(), 2);
        QVERIFY(panel.removeClip(panel.shownClips()[0]));
        QCOMPARE(filesIn(dir.path()), (QStringList{"go_ann_3.wav", "stop_ann_1.wav"}));
        // In the trash, not gone: the home trash, or a .Trash-UID folder at the top of another
        // disk (Qt chooses by where the clip is).
        const QString trashed = panel.trashedPath();
        QVERIFY2(QFile::exists(trashed) && trashed.contains("Trash") &&
                     QFileInfo(trashed).fileName().startsWith("go_ann_1"),
                 qPrintable(trashed));
        QVERIFY(panel.status().contains(trashed));
        QCOMPARE(list->count(), 1);
    }

    // A class that came with its clips (recorded or imported, never typed) stays a class when
    // its last clip is deleted or moved away, in this session and the next; Remove takes away
    // a word without clips, and nothing else: not one with clips, nor background or unknown.
    void classesOutliveTheirClipsUntilRemoved()
    {
        QTemporaryDir dir;
        const std::vector<float> take = toneWords(3); // two "words"
        {
            RecordPanel panel;
            panel.setFolder(dir.path());
            QCOMPARE(panel.addTake(take, "beep", "ann"), 2); // no class typed first
            QCOMPARE(panel.addTake(take, "tone", "ann"), 2);
            QFile list(dir.filePath("classes.txt"));
            QVERIFY(list.open(QIODevice::ReadOnly));
            QCOMPARE(list.readAll(), QByteArray("beep\ntone\n"));
            auto *button = panel.findChild<QPushButton *>("recordRemoveClass");
            QVERIFY(button);
            panel.selectClass("beep");
            QVERIFY(!button->isEnabled()); // it has clips
            QString why;
            QVERIFY(!panel.removeClass("beep", &why));
            QVERIFY2(why.contains("2 clip(s)"), qPrintable(why));
            QVERIFY(!panel.removeClass("background", &why));
            QVERIFY(!panel.removeClass("unknown", &why));
            // The last clip of "beep" deleted, those of "tone" moved to "beep".
            QVERIFY(panel.removeClip(panel.shownClips()[0]));
            QVERIFY(panel.removeClip(panel.shownClips()[0]));
            QVERIFY(panel.classes().contains("beep"));
            QVERIFY(button->isEnabled());
            panel.selectClass("tone");
            QVERIFY(panel.relabel(panel.shownClips()[0], "beep"));
            QVERIFY(panel.relabel(panel.shownClips()[0], "beep"));
            QCOMPARE(panel.classes(), (QStringList{"beep", "tone", "background", "unknown"}));
        }
        {
            RecordPanel again;
            again.setFolder(dir.path());
            QCOMPARE(again.classes(), (QStringList{"beep", "tone", "background", "unknown"}));
            QCOMPARE(again.clips().size(), 2);
            // Remove, as a person does it: the class shown, then the button.
            again.selectClass("tone");
            auto *button = again.findChild<QPushButton *>("recordRemoveClass");
            QVERIFY(button->isEnabled());
            QTest::mouseClick(button, Qt::LeftButton);
            QCOMPARE(again.classes(), (QStringList{"beep", "background", "unknown"}));
            QVERIFY2(again.status().contains("'tone' removed"), qPrintable(again.status()));
        }
        RecordPanel third;
        third.setFolder(dir.path());
        QCOMPARE(third.classes(), (QStringList{"beep", "background", "unknown"}));

        // A folder made elsewhere (clips, no class list): its classes come from the clips, and
        // one whose last clip is deleted here stays all the same.
        QTemporaryDir made;
        QVERIFY(fb::data::writeWav(made.filePath("hum_bob_1.wav").toStdString(),
                                   std::vector<float>(take.begin(), take.begin() + 16000), 16000)
                    .ok());
        {
            RecordPanel panel;
            panel.setFolder(made.path());
            QCOMPARE(panel.classes(), (QStringList{"hum", "background", "unknown"}));
            panel.selectClass("hum");
            QVERIFY(panel.removeClip(panel.shownClips()[0]));
        }
        RecordPanel again;
        again.setFolder(made.path());
        QCOMPARE(again.classes(), (QStringList{"hum", "background", "unknown"}));
        QVERIFY(again.clips().isEmpty());
    }

    // "Train on this": refused with too few clips, then a pipeline that validates and trains.
    void trainsOnTheClips()
    {
        QTemporaryDir dir;
        RecordPanel panel;
        panel.setFolder(dir.path());
        panel.setTemplate(kSource + "/resources/examples/spoken_digits.json");
        QString why;
        QVERIFY(panel.writePipeline(&why).isEmpty());
        QVERIFY(why.contains("at least one word"));
        auto burst = [](double hz, double seed) {
            std::vector<float> x(16000 * 8);
            for (size_t k = 0; k < x.size(); ++k) {
                const double t = double(k) / 16000;
                const bool on = std::fmod(t, 1.0) > 0.3 && std::fmod(t, 1.0) < 0.6;
                x[k] = float((on ? 0.3 : 0.0) * std::sin(2 * M_PI * (hz + 20 * std::floor(t)) * t) +
                             0.002 * std::sin(seed * double(k)));
            }
            return x;
        };
        QCOMPARE(panel.addTake(burst(300, 1.1), "low", "me"), 8);
        QVERIFY(panel.writePipeline(&why).isEmpty());
        QVERIFY2(why.contains("at least one other class") || why.contains("one other"),
                 qPrintable(why));
        QCOMPARE(panel.addTake(burst(2000, 2.3), "high", "me"), 8);
        std::vector<float> noise(16000 * 6);
        for (size_t k = 0; k < noise.size(); ++k)
            noise[k] = float(0.01 * std::sin(0.37 * double(k) * double(k % 7)));
        QCOMPARE(panel.addTake(noise, "background", "me"), 6);
        const QString pipeline = panel.writePipeline(&why);
        QVERIFY2(!pipeline.isEmpty(), qPrintable(why));
        QCOMPARE(pipeline, dir.filePath("pipeline.json"));
        QFile f(pipeline);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
        for (const QJsonValue &n : doc["nodes"].toArray()) {
            const QJsonObject node = n.toObject();
            if (node["type"] == "audio_folder")
                QCOMPARE(node["params"].toObject()["path"].toString(), dir.path());
            if (node["id"] == "fc2") QCOMPARE(node["params"].toObject()["out_features"].toInt(), 3);
            if (node["type"] == "audio_folder") // one speaker: a random fifth is validation
                QCOMPARE(node["params"].toObject()["split_by_speaker"].toBool(), false);
        }
        QCOMPARE(runTool(FLOWBENCH_CLI, {"validate", pipeline}), 0);
        QProcess run;
        run.start(FLOWBENCH_CLI, {"run", pipeline, "--device", "cpu", "--set", "train.epochs=2",
                                  "--out", dir.filePath("run")});
        QVERIFY(run.waitForFinished(300000));
        const QByteArray out = run.readAllStandardOutput().trimmed();
        const QJsonObject summary =
            QJsonDocument::fromJson(out.mid(out.lastIndexOf('\n') + 1)).object();
        QVERIFY2(summary["status"] == "ok", qPrintable(run.readAllStandardError().right(2000)));
        QVERIFY(QFile::exists(dir.filePath("run/model.safetensors")));

        // Class names that are all numbers are class numbers, 0 to the largest: "1" and "3"
        // need 4 outputs.
        QTemporaryDir numbered;
        RecordPanel digits;
        digits.setFolder(numbered.path());
        digits.setTemplate(kSource + "/resources/examples/spoken_digits.json");
        QCOMPARE(digits.addTake(burst(300, 1.1), "1", "me"), 8);
        QCOMPARE(digits.addTake(burst(2000, 2.3), "3", "me"), 8);
        QFile g(digits.writePipeline(&why));
        QVERIFY2(g.open(QIODevice::ReadOnly), qPrintable(why));
        for (const QJsonValue &n : QJsonDocument::fromJson(g.readAll()).object()["nodes"].toArray())
            if (n.toObject()["id"] == "fc2")
                QCOMPARE(n.toObject()["params"].toObject()["out_features"].toInt(), 4);
    }

    // Through the real audio path: a long take of "four" said three times, played into the
    // virtual microphone, becomes three clips of four, each centred on its word; background
    // recorded for 2.5 s becomes two windows.
    void recordsThroughAVirtualMicrophone()
    {
        if (!g_mic) QFAIL("no virtual microphone");
        if (!g_mic->why.isEmpty()) QFAIL(qPrintable(g_mic->why));
        if (!m_missing.isEmpty()) QFAIL(qPrintable(m_missing + " is missing (scripts/deps.sh)"));
        QTemporaryDir dir;
        const QString fours = dir.filePath("fours.wav");
        QVERIFY(speak(fours, {"four", "four", "four"}, "en-gb-x-rp", 0.9));
        RecordPanel panel;
        QVERIFY2(panel.canRecord(), qPrintable(panel.recordTip()));
        panel.setFolder(dir.filePath("clips"));
        panel.setSpeaker("Test Speaker");
        QVERIFY(panel.addClass("four"));
        auto *take = panel.findChild<QPushButton *>("recordLong");
        take->click(); // start the long take
        QVERIFY2(panel.recording(), qPrintable(panel.status()));
        // The take belongs to the class it started with: the list waits.
        QVERIFY(!panel.findChild<QListWidget *>("recordClasses")->isEnabled());
        QTest::qWait(300);
        QVERIFY(g_mic->play(fours));
        QTest::qWait(500);
        take->click(); // stop: cut and save
        QVERIFY(!panel.recording());
        QStringList files = filesIn(dir.filePath("clips"));
        QVERIFY2(files == (QStringList{"four_test-speaker_1.wav", "four_test-speaker_2.wav",
                                       "four_test-speaker_3.wav"}),
                 qPrintable(files.join(' ') + " / " + panel.status()));
        for (const QString &f : files) {
            auto x = fb::data::readRecording(dir.filePath("clips/" + f).toStdString(), 16000);
            QVERIFY(x.ok());
            QVERIFY2(middleOverEdges(x.value()) > 5, qPrintable(f));
        }

        // Background: the room (here brown noise played into it) recorded for 2.5 s.
        const QString room = dir.filePath("room.wav");
        QCOMPARE(runTool("sox", {"-n", "-r", "16000", "-c", "1", room, "synth", "2.5", "brownnoise",
                                 "vol", "0.2"}),
                 0);
        panel.selectClass("background");
        QCOMPARE(take->text(), QString("Record background"));
        take->click();
        QVERIFY(g_mic->play(room));
        take->click();
        int background = 0;
        for (const auto &c : panel.clips())
            background += c.label == "background";
        QVERIFY2(background >= 2 && background <= 3, qPrintable(panel.status()));
        QCOMPARE(filesIn(dir.filePath("clips")).size(), 3 + background);
    }

    // Record, train, listen: tone "words" (a low and a high one) and background noise become a
    // data set through the panel, "Train on this"'s pipeline trains on it, and Try the Model's
    // Listen mode hears the virtual microphone: the words played into it are detected in
    // order, at the right distance apart, marked on the scrolling spectrogram, with each
    // window's latency shown.
    void listensLiveInTryTheModel()
    {
        if (!g_mic || !g_mic->why.isEmpty())
            QFAIL(qPrintable(g_mic ? g_mic->why : "no microphone"));
        QTemporaryDir dir;
        RecordPanel record;
        record.setFolder(dir.filePath("clips"));
        record.setTemplate(kSource + "/resources/examples/spoken_digits.json");
        // 30 bursts a class, their pitch and loudness varied, in a quiet hiss.
        auto take = [](double hz, uint64_t seed) {
            std::vector<float> x(size_t(16000 * 39));
            uint64_t state = seed;
            for (size_t k = 0; k < x.size(); ++k) {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                const double t = double(k) / 16000, phase = std::fmod(t, 1.3);
                const int n = int(t / 1.3);
                const double f = hz * (1.0 + 0.1 * std::sin(1.7 * n)), a = 0.1 + 0.05 * (n % 4);
                x[k] = float((phase > 0.4 && phase < 0.75 ? a : 0.0) * std::sin(2 * M_PI * f * t) +
                             0.002 * (double(state >> 40) / double(1 << 24) - 0.5));
            }
            return x;
        };
        QCOMPARE(record.addTake(take(400, 1), "low", "synth"), 30);
        QCOMPARE(record.addTake(take(2500, 2), "high", "synth"), 30);
        std::vector<float> hiss = take(0, 3);
        QCOMPARE(record.addTake(hiss, "background", "synth"), 39);
        QString why;
        const QString pipeline = record.writePipeline(&why);
        QVERIFY2(!pipeline.isEmpty(), qPrintable(why));
        QProcess train;
        train.start(FLOWBENCH_CLI, {"run", pipeline, "--device", "cpu", "--set", "train.epochs=6",
                                    "--out", dir.filePath("run")});
        QVERIFY(train.waitForFinished(600000));
        QVERIFY2(train.exitCode() == 0, qPrintable(train.readAllStandardError().right(2000)));

        fb::widgets::InferencePanel panel;
        panel.setCliPath(FLOWBENCH_CLI);
        panel.resize(900, 500);
        panel.show();
        // A model that cannot be opened: listening ends at once, saying why.
        panel.setModel(dir.filePath("no-such-run"));
        QSignalSpy stopped(&panel, &fb::widgets::InferencePanel::listeningStopped);
        QVERIFY(panel.startListening(&why));
        QVERIFY(stopped.wait(30000));
        QVERIFY2(panel.status().contains("Listening stopped") &&
                     panel.status().contains("no-such-run"),
                 qPrintable(panel.status()));
        QVERIFY(!panel.listening());

        // The words: "high", then "low" 2 s later, in the same hiss.
        const QString words = dir.filePath("words.wav");
        std::vector<float> x(size_t(16000 * 4.5));
        for (size_t k = 0; k < x.size(); ++k) {
            const double t = double(k) / 16000;
            const double f = t > 0.8 && t < 1.15 ? 2500 : t > 2.8 && t < 3.15 ? 400 : 0;
            x[k] = float((f > 0 ? 0.15 : 0.0) * std::sin(2 * M_PI * f * t)) + hiss[k] * 1.0f;
        }
        QVERIFY(fb::data::writeWav(words.toStdString(), x, 16000).ok());
        // The file through the engine itself, each window heard five ways (--warp W1,W2: 1 and
        // 1 -+ W for each W): the same two words, and the summary says how it heard them.
        QProcess five;
        five.start(FLOWBENCH_CLI, {"listen", dir.filePath("run"), words, "--warp", "0.04,0.08"});
        QVERIFY(five.waitForFinished(120000));
        QCOMPARE(five.exitCode(), 0);
        const QList<QByteArray> lines = five.readAllStandardOutput().trimmed().split('\n');
        QStringList fiveHeard;
        for (const QByteArray &line : lines) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o["kind"].toString() == "detection") fiveHeard << o["class"].toString();
        }
        QCOMPARE(fiveHeard, (QStringList{"high", "low"}));
        const QJsonObject detector =
            QJsonDocument::fromJson(lines.last()).object()["detector"].toObject();
        QCOMPARE(detector["warps"].toArray(), (QJsonArray{0.04, 0.08}));
        QCOMPARE(detector["warp"].toDouble(), 0.08);
        QVERIFY(!QJsonDocument::fromJson(lines.last()).object().contains("clipped"));
        // The same recording 12 dB too hot: still heard, and the summary and stderr say it is
        // clipped.
        {
            std::vector<float> hot = x;
            float peak = 0;
            for (float v : hot)
                peak = std::max(peak, std::abs(v));
            for (float &v : hot)
                v = std::clamp(v * 4 / peak, -1.0f, 1.0f);
            const QString hotWords = dir.filePath("words_hot.wav");
            QVERIFY(fb::data::writeWav(hotWords.toStdString(), hot, 16000).ok());
            QProcess c;
            c.start(FLOWBENCH_CLI, {"listen", dir.filePath("run"), hotWords});
            QVERIFY(c.waitForFinished(120000));
            QCOMPARE(c.exitCode(), 0);
            const QJsonObject summary =
                QJsonDocument::fromJson(c.readAllStandardOutput().trimmed().split('\n').last())
                    .object();
            QVERIFY2(summary["clipped"].toDouble() > 0.001,
                     qPrintable(QJsonDocument(summary).toJson()));
            QVERIFY(c.readAllStandardError().contains("words_hot.wav: clipped: "));
        }
        // A list that is not numbers: bad usage (exit 2), saying what.
        QProcess bad;
        bad.start(FLOWBENCH_CLI, {"listen", dir.filePath("run"), words, "--warp", "0.04,x"});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("--warp needs numbers separated by commas"));
        inferHearsARecordingThreeWays(dir.filePath("run"), x);
        if (QTest::currentTestFailed()) return;
        panel.setModel(dir.filePath("run"));
        // A short recording opened in the panel is predicted as infer predicts it: heard three
        // ways with the "±8% speed too" box on (infer's default), once with it off (--warp 0);
        // balanced halfway with "Balance classes" on (infer's default), as trained with it off
        // (--balance 0).
        {
            const QString clip = dir.filePath("between.wav");
            QVERIFY(fb::data::writeWav(clip.toStdString(), toneBetween(), 16000).ok());
            QVERIFY(panel.listenWarp() && panel.balanceClasses());
            QList<double> shown;
            for (const auto &[warp, balance] :
                 {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
                QJsonObject top;
                QVERIFY2(inferTop(dir.filePath("run"),
                                  (warp ? QStringList{} : QStringList{"--warp", "0"}) +
                                      (balance ? QStringList{} : QStringList{"--balance", "0"}) +
                                      QStringList{clip},
                                  &top, &why),
                         qPrintable(why));
                panel.setListenWarp(warp);
                panel.setBalanceClasses(balance);
                QSignalSpy done(&panel, &fb::widgets::InferencePanel::predicted);
                panel.predictFiles({clip});
                QVERIFY(done.wait(60000));
                const auto &r = panel.results().last();
                QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
                QCOMPARE(r.classes.first(), top["class"].toString());
                QVERIFY2(std::abs(r.probabilities.first() - top["probability"].toDouble()) < 1e-6,
                         qPrintable(QString("%1 shown, %2 by infer")
                                        .arg(r.probabilities.first())
                                        .arg(top["probability"].toDouble())));
                shown << r.probabilities.first();
            }
            // Each box changes what is shown, or the comparison shows nothing.
            for (int other : {1, 2})
                QVERIFY2(std::abs(shown[0] - shown[other]) > 1e-4,
                         qPrintable(QString("%1 %2").arg(shown[0]).arg(shown[other])));
            panel.setListenWarp(true);
            panel.setBalanceClasses(true);

            // The same recording driven 12 dB past full scale: infer says it is clipped (in its
            // line and on stderr), the panel lists it so and says what to do; the clean one not.
            std::vector<float> hot = toneBetween();
            float peak = 0;
            for (float v : hot)
                peak = std::max(peak, std::abs(v));
            QVERIFY(peak > 0);
            for (float &v : hot)
                v = std::clamp(v * 4 / peak, -1.0f, 1.0f);
            const QString hotClip = dir.filePath("between_hot.wav");
            QVERIFY(fb::data::writeWav(hotClip.toStdString(), hot, 16000).ok());
            QProcess c;
            c.start(FLOWBENCH_CLI, QStringList{"infer", dir.filePath("run"), clip, hotClip});
            QVERIFY(c.waitForFinished(60000));
            QCOMPARE(c.exitCode(), 0);
            const QList<QByteArray> two = c.readAllStandardOutput().trimmed().split('\n');
            QCOMPARE(two.size(), 2);
            QVERIFY(!QJsonDocument::fromJson(two[0]).object().contains("clipped"));
            const double share = QJsonDocument::fromJson(two[1]).object()["clipped"].toDouble();
            QVERIFY2(share > 0.01 && share < 1, qPrintable(QString::number(share)));
            const QString said = QString::fromUtf8(c.readAllStandardError());
            QVERIFY2(said.contains("between_hot.wav: clipped: ") &&
                         said.contains("record it again quieter") &&
                         !said.contains("between.wav: clipped"),
                     qPrintable(said));
            QSignalSpy done(&panel, &fb::widgets::InferencePanel::predicted);
            panel.predictFiles({clip, hotClip});
            QVERIFY(done.wait(60000));
            const auto &results = panel.results();
            QCOMPARE(results[results.size() - 2].clipped, 0.0);
            QVERIFY2(std::abs(results.last().clipped - share) < 1e-4,
                     qPrintable(QString::number(results.last().clipped)));
            QVERIFY2(panel.status().contains("1 clipped") &&
                         panel.status().contains("record again quieter"),
                     qPrintable(panel.status()));
        }
        // A take of 2.5 s, its word (the high tone) 0.25 s in and noise 20 dB under it that
        // trimming keeps whole: infer crops it around the word, not the take's middle, where
        // there is only the noise.
        {
            std::vector<float> take(size_t(16000 * 2.5));
            uint64_t state = 5;
            for (size_t k = 0; k < take.size(); ++k) {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                const double t = double(k) / 16000;
                take[k] = float((t > 0.25 && t < 0.6 ? 0.15 : 0.0) * std::sin(2 * M_PI * 2500 * t) +
                                0.035 * (double(state >> 11) / double(1ULL << 53) - 0.5));
            }
            const QString long_ = dir.filePath("long_take.wav");
            QVERIFY(fb::data::writeWav(long_.toStdString(), take, 16000).ok());
            QJsonObject top;
            QVERIFY2(inferTop(dir.filePath("run"), {long_}, &top, &why), qPrintable(why));
            QVERIFY2(top["class"].toString() == "high",
                     qPrintable(QJsonDocument(top).toJson(QJsonDocument::Compact)));
            // Cropped about its middle, as the evaluation crops (--crop middle): the noise alone.
            QVERIFY2(inferTop(dir.filePath("run"), {"--crop", "middle", long_}, &top, &why),
                     qPrintable(why));
            const QString heard = top["class"].toString();
            QVERIFY2(heard == "background", qPrintable(heard));
        }

        // Tune: the same file with its labels (as Audacity exports them), heard at every
        // setting: both words found, and a best setting that Listen mode takes.
        const QString labels = dir.filePath("words.txt");
        auto writeLabels = [&labels](const char *text) {
            QFile f(labels);
            return f.open(QIODevice::WriteOnly) && f.write(text) == qint64(std::strlen(text));
        };
        QVERIFY(writeLabels("0.800000\t1.150000\thigh\n\\\t300.000000\t3000.000000\n"
                            "2.800000\t3.150000\tlow\n"));
        QSignalSpy tuned(&panel, &fb::widgets::InferencePanel::tuned);
        QVERIFY2(panel.tuneOn(words, labels, &why), qPrintable(why));
        QVERIFY(panel.tuningNow());
        QVERIFY(!panel.startListening(&why)); // one child at a time
        QVERIFY2(why.contains("Tuning"), qPrintable(why));
        QVERIFY(tuned.wait(120000));
        const auto &t = panel.tuning();
        qInfo("tuned: %s", qPrintable(t.text));
        QVERIFY2(t.ok, qPrintable(t.text));
        QCOMPARE(t.keywords, 2);
        QCOMPARE(t.found, 2);
        QCOMPARE(t.falseAlarms, 0);
        // 4.5 s, 1.8 of them away from the words, cannot tell 2 false alarms an hour from none:
        // the score, and no setting offered.
        QVERIFY2(t.text.contains("2 of 2 words found at their time") &&
                     t.text.contains("too little to choose a setting for 2 an hour"),
                 qPrintable(t.text));
        QVERIFY(!t.hasBest && !panel.useTunedSetting());
        // With a budget that one false alarm in 1.8 s keeps to, a setting: asked for by the
        // Tune… button's dialog, which finds the labels beside the recording, says what the
        // budget needs of it before it is heard, and starts only with files it can read.
        QVERIFY(!panel.tuneOn(words, labels, &why, 0));
        QVERIFY2(why.contains("above 0"), qPrintable(why));
        panel.setTuneChoices(QString(), QString(), 2);
        panel.findChild<QPushButton *>("inferenceListenTune")->click();
        auto *dialog = panel.findChild<fb::widgets::TuneDialog *>("tuneDialog");
        QVERIFY(dialog && dialog->isVisible());
        auto *start = dialog->findChild<QPushButton *>("tuneStart");
        QVERIFY(start && !start->isEnabled());
        QVERIFY2(dialog->problem().contains("Choose a recording"), qPrintable(dialog->problem()));
        const QString nowhere = dir.filePath("nowhere.wav");
        dialog->findChild<QLineEdit *>("tuneRecording")->setText(nowhere);
        QVERIFY2(dialog->problem().contains(nowhere) && dialog->problem().contains("no such file"),
                 qPrintable(dialog->problem()));
        QVERIFY(!start->isEnabled());
        dialog->setRecording(words);
        QCOMPARE(dialog->labels(), labels); // words.txt, beside words.wav
        QVERIFY2(dialog->problem().isEmpty(), qPrintable(dialog->problem()));
        QVERIFY(start->isEnabled());
        QVERIFY2(dialog->hint().contains("words.wav lasts") &&
                     dialog->hint().contains("at least 30 min") &&
                     dialog->hint().contains("This one is shorter"),
                 qPrintable(dialog->hint()));
        dialog->setLabels(dir.filePath("nowhere.txt"));
        QVERIFY(!start->isEnabled());
        dialog->setLabels(labels);
        dialog->setBudget(5000);
        QVERIFY2(dialog->hint().contains("at least 1 s") &&
                     !dialog->hint().contains("This one is shorter"),
                 qPrintable(dialog->hint()));
        start->click();
        QVERIFY(panel.tuningNow());
        QVERIFY(tuned.wait(120000));
        // The next Tune… opens with these.
        QCOMPARE(panel.tuneRecording(), words);
        QCOMPARE(panel.tuneLabels(), labels);
        QCOMPARE(panel.tuneBudget(), 5000.0);
        // Started from the button, the result is offered in a message.
        QTRY_VERIFY(panel.findChild<QMessageBox *>());
        auto *box = panel.findChild<QMessageBox *>();
        QVERIFY2(box->text().contains("Best within 5000 false alarms an hour"),
                 qPrintable(box->text()));
        box->reject();

        // The run's held-out recordings as one labelled recording (held-out-stream): every one
        // the run evaluated, the tones labelled by class and the hiss left unlabelled, the same
        // for a seed; listen hears it against its labels.
        const QString stream = dir.filePath("streams/held-out.wav");
        QVERIFY(QDir().mkpath(dir.filePath("streams")));
        auto makeStream = [&](const QStringList &extra, QJsonObject *summary) {
            QProcess p;
            p.start(FLOWBENCH_CLI,
                    QStringList{"held-out-stream", dir.filePath("run"), stream} + extra);
            if (!p.waitForFinished(120000)) return -1;
            *summary =
                QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last())
                    .object();
            return p.exitCode();
        };
        QJsonObject made;
        QCOMPARE(makeStream({"--seed", "3"}, &made), 0);
        QFile evaluation(dir.filePath("run/evaluation.json"));
        QVERIFY(evaluation.open(QIODevice::ReadOnly));
        const QJsonObject firstEvaluation = QJsonDocument::fromJson(evaluation.readAll())
                                                .object()["evaluations"]
                                                .toArray()[0]
                                                .toObject();
        QCOMPARE(made["recordings"].toInt(), firstEvaluation["samples"].toInt());
        QVERIFY2(made["labelled"].toInt() > 0 && made["noises"].toInt() > 0 &&
                     made["labelled"].toInt() + made["noises"].toInt() ==
                         made["recordings"].toInt(),
                 qPrintable(QJsonDocument(made).toJson()));
        const QString streamLabels = dir.filePath("streams/held-out.txt");
        QCOMPARE(made["labels"].toString(), streamLabels);
        QFile labelFile(streamLabels);
        QVERIFY(labelFile.open(QIODevice::ReadOnly));
        const QByteArray labelText = labelFile.readAll();
        labelFile.close();
        const QList<QByteArray> labelLines = labelText.trimmed().split('\n');
        QCOMPARE(int(labelLines.size()), made["labelled"].toInt());
        double previous = -1;
        for (const QByteArray &line : labelLines) {
            const QList<QByteArray> f = line.split('\t');
            // The class, then the recording it was (high_synth_7.wav), which listen's "missed"
            // and false alarms name as their "note".
            QVERIFY2(f.size() == 4 && (f[2] == "high" || f[2] == "low") &&
                         f[3].startsWith(f[2] + "_") && f[3].endsWith(".wav"),
                     line.constData());
            QVERIFY(f[0].toDouble() > previous && f[1].toDouble() > f[0].toDouble());
            previous = f[1].toDouble();
        }
        QVERIFY(std::abs(fb::data::recordingSeconds(stream.toStdString()).value() -
                         made["seconds"].toDouble()) < 0.001);
        QFile first(stream);
        QVERIFY(first.open(QIODevice::ReadOnly));
        const QByteArray firstBytes = first.readAll();
        first.close();
        QCOMPARE(makeStream({"--seed", "3"}, &made), 0);
        QVERIFY(first.open(QIODevice::ReadOnly));
        QVERIFY(first.readAll() == firstBytes); // the same seed, the same stream
        first.close();
        QCOMPARE(makeStream({"--seed", "4", "--gap-ms", "100,200"}, &made), 0);
        QVERIFY(labelFile.open(QIODevice::ReadOnly));
        QVERIFY(labelFile.readAll() != labelText);
        labelFile.close();
        QCOMPARE(makeStream({"--gap-ms", "200,100"}, &made), 2);
        {
            // An OUT that its labels (OUT's name with .txt) would be written over.
            QProcess over;
            over.start(FLOWBENCH_CLI,
                       {"held-out-stream", dir.filePath("run"), dir.filePath("streams/ho.txt")});
            QVERIFY(over.waitForFinished(60000));
            QCOMPARE(over.exitCode(), 2);
            QVERIFY(over.readAllStandardError().contains("must not be a .txt"));
            QVERIFY(!QFileInfo::exists(dir.filePath("streams/ho.txt")));
        }
        QCOMPARE(makeStream({"--seed", "3"}, &made), 0);
        {
            QProcess heard;
            // This model of 6 epochs is sure of its tones at 0.8 to 0.9: heard at 0.6 over 3
            // windows, every labelled tone is found where the labels put it, and nothing else.
            heard.start(FLOWBENCH_CLI,
                        {"listen", dir.filePath("run"), stream, "--truth", streamLabels, "--warp",
                         "0", "--threshold", "0.6", "--average", "3"});
            QVERIFY(heard.waitForFinished(120000));
            QCOMPARE(heard.exitCode(), 0);
            const QJsonObject score =
                QJsonDocument::fromJson(heard.readAllStandardOutput().trimmed().split('\n').last())
                    .object()["score"]
                    .toObject();
            qInfo("held-out stream: %d of %d found, %d false alarm(s)", score["found"].toInt(),
                  score["keywords"].toInt(), score["false_alarms"].toInt());
            QCOMPARE(score["keywords"].toInt(), made["labelled"].toInt());
            QVERIFY(score["found"].toInt() >= score["keywords"].toInt() - 1);
            QCOMPARE(score["false_alarms"].toInt() + score["wrong"].toInt(), 0);
        }
        // The same from the Tune dialog's button: the fields filled in with the stream and its
        // labels; without a model, the button says why not.
        panel.findChild<QPushButton *>("inferenceListenTune")->click();
        auto *again = panel.findChild<fb::widgets::TuneDialog *>("tuneDialog");
        QVERIFY(again && again->isVisible());
        auto *fromHeldOut = again->findChild<QPushButton *>("tuneFromHeldOut");
        QVERIFY(fromHeldOut && fromHeldOut->isEnabled());
        QSignalSpy heldOut(again, &fb::widgets::TuneDialog::heldOutMade);
        fromHeldOut->click();
        QVERIFY(!fromHeldOut->isEnabled()); // while it is made
        QVERIFY(heldOut.wait(120000));
        QCOMPARE(heldOut.first().first().toBool(), true);
        QVERIFY2(again->recording().endsWith("run-held-out.wav") &&
                     QFileInfo(again->recording()).isFile() &&
                     again->labels().endsWith("run-held-out.txt") &&
                     QFileInfo(again->labels()).isFile(),
                 qPrintable(again->recording() + " " + again->labels()));
        QVERIFY2(again->problem().isEmpty(), qPrintable(again->problem()));
        QVERIFY2(again->hint().contains(
                     QString("The %1 recordings run held out").arg(made["recordings"].toInt())),
                 qPrintable(again->hint()));
        // Another recording brings its own labels, even over labels the dialog did not fill in
        // from the recording's name (the last session's, or the stream's).
        const QString madeRecording = again->recording(), madeLabels = again->labels();
        again->setRecording(words);
        QCOMPARE(again->labels(), labels);
        again->setRecording(madeRecording);
        QCOMPARE(again->labels(), madeLabels);
        // Tuned on the stream: the next Tune… opens with it, but the window does not keep it
        // for the next session, since it goes with the panel's temporary folder.
        again->findChild<QPushButton *>("tuneStart")->click();
        QVERIFY(tuned.wait(120000));
        QVERIFY2(t.ok && t.keywords == made["labelled"].toInt(), qPrintable(t.text));
        QVERIFY(panel.tuneRecording().isEmpty() && panel.tuneLabels().isEmpty());
        QTRY_VERIFY(panel.findChild<QMessageBox *>());
        panel.findChild<QMessageBox *>()->reject();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QVERIFY(!panel.findChild<fb::widgets::TuneDialog *>());
        panel.findChild<QPushButton *>("inferenceListenTune")->click();
        again = panel.findChild<fb::widgets::TuneDialog *>("tuneDialog");
        QVERIFY(again);
        QCOMPARE(again->recording(), madeRecording);
        fromHeldOut = again->findChild<QPushButton *>("tuneFromHeldOut");
        again->setHeldOutSource(FLOWBENCH_CLI, QString(), dir.filePath("later"));
        QVERIFY(!fromHeldOut->isEnabled() && fromHeldOut->toolTip().contains("trained run"));
        // Closed while the stream is made: the child is ended first (not a crash in a dialog
        // half destroyed), Tune waits meanwhile, and nothing is left of what it wrote.
        again->setHeldOutSource(FLOWBENCH_CLI, dir.filePath("run"), dir.filePath("later"));
        QVERIFY(again->makeHeldOut());
        QVERIFY(!again->findChild<QPushButton *>("tuneStart")->isEnabled());
        QVERIFY2(again->problem().contains("Wait"), qPrintable(again->problem()));
        again->reject();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QVERIFY(!panel.findChild<fb::widgets::TuneDialog *>());
        QCOMPARE(QDir(dir.filePath("later")).entryList(QDir::Files), QStringList());
        // The tuning on the two words again, which what follows takes.
        QVERIFY2(panel.tuneOn(words, labels, &why, 5000), qPrintable(why));
        QVERIFY(tuned.wait(120000));
        QVERIFY2(t.ok && t.hasBest, qPrintable(t.text));
        QVERIFY(t.text.contains("Best within 5000 false alarms an hour"));
        QVERIFY(t.bestFound == 2 && t.bestAverage >= 1 && t.bestAverage <= 8 &&
                t.bestThreshold >= 0.5 && t.bestThreshold <= 0.95);
        QVERIFY(panel.useTunedSetting());
        QCOMPARE(panel.listenAverage(), t.bestAverage);
        QCOMPARE(panel.listenThreshold(), t.bestThreshold);
        // Kept beside the model (listen.json): the engine listens at it without being told...
        const QString run = dir.filePath("run"), kept = dir.filePath("run/listen.json");
        QCOMPARE(panel.keptSetting(), kept);
        QVERIFY(QFileInfo::exists(kept));
        QVERIFY2(panel.status().contains("kept with the model"), qPrintable(panel.status()));
        auto listenTo = [&](const QStringList &extra, QJsonObject *summary, QString *err) {
            QProcess p;
            p.start(FLOWBENCH_CLI, QStringList{"listen", run, words} + extra);
            if (!p.waitForFinished(120000)) return -1;
            *err = QString::fromUtf8(p.readAllStandardError());
            *summary =
                QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last())
                    .object();
            return p.exitCode();
        };
        QJsonObject said;
        QString err;
        QCOMPARE(listenTo({}, &said, &err), 0);
        QJsonObject used = said["detector"].toObject();
        QVERIFY2(err.contains("the model's tuned setting") && used["tuned"].toString() == kept,
                 qPrintable(err));
        QCOMPARE(used["threshold"].toDouble(), t.bestThreshold);
        QCOMPARE(used["average"].toInt(), t.bestAverage);
        // ... and the panel takes it again when the model is chosen, from a setting it can never
        // be (the sweep's thresholds are 0.5, 0.6, ..., its windows 1 to 8).
        panel.setListenThreshold(0.66);
        panel.setListenAverage(9);
        panel.setModel(run);
        QCOMPARE(panel.listenThreshold(), t.bestThreshold);
        QCOMPARE(panel.listenAverage(), t.bestAverage);
        QVERIFY2(panel.status().contains("this model's tuned setting"), qPrintable(panel.status()));
        // What the window keeps between sessions is the user's own setting, not the run's.
        QCOMPARE(panel.ownListenThreshold(), 0.66);
        QCOMPARE(panel.ownListenAverage(), 9);
        // Another model, without a tuned setting: the row is the user's again.
        panel.setModel(dir.filePath("no-such-run"));
        QCOMPARE(panel.listenThreshold(), 0.66);
        QCOMPARE(panel.listenAverage(), 9);
        QVERIFY2(panel.status().contains("back at yours"), qPrintable(panel.status()));
        panel.setModel(run);
        QCOMPARE(panel.listenThreshold(), t.bestThreshold);
        // The user's hand on one box makes that one theirs: another model leaves it as they
        // set it, and gives the other back.
        panel.setListenAverage(7);
        QCOMPARE(panel.ownListenAverage(), 7);
        QCOMPARE(panel.ownListenThreshold(), 0.66);
        panel.setModel(dir.filePath("no-such-run"));
        QCOMPARE(panel.listenThreshold(), 0.66);
        QCOMPARE(panel.listenAverage(), 7);
        panel.setListenAverage(9);
        // Runs listening together that it was not tuned with: not used, and used again without
        // them.
        panel.setModel(run);
        QCOMPARE(panel.listenThreshold(), t.bestThreshold);
        panel.setListenWith({run});
        QCOMPARE(panel.listenThreshold(), 0.66);
        QVERIFY2(panel.status().contains("the runs listening together"),
                 qPrintable(panel.status()));
        panel.setListenWith({});
        QCOMPARE(panel.listenThreshold(), t.bestThreshold);
        QCOMPARE(panel.listenAverage(), t.bestAverage);
        // Heard once, without the ±8% hearings it was tuned with: not taken, and said why.
        panel.setListenWarp(false);
        panel.setListenThreshold(0.66);
        panel.setListenAverage(9);
        QVERIFY(!panel.takeTunedSetting());
        QCOMPARE(panel.listenThreshold(), 0.66);
        QVERIFY2(panel.status().contains("is not used") &&
                     panel.status().contains("the ±8% speed box"),
                 qPrintable(panel.status()));
        QCOMPARE(listenTo({"--warp", "0"}, &said, &err), 0);
        QVERIFY2(said["detector"].toObject()["tuned"].isNull() && err.contains("is not used"),
                 qPrintable(err));
        panel.setListenWarp(true);
        // From the command line: --keep keeps the sweep's best, only where the recording can
        // tell the budget, and only with --sweep.
        QCOMPARE(listenTo({"--truth", labels, "--keep"}, &said, &err), 2);
        QVERIFY2(err.contains("--keep goes with --truth and --sweep"), qPrintable(err));
        QVERIFY(QFile::remove(kept));
        QCOMPARE(listenTo({"--truth", labels, "--sweep", "--keep"}, &said, &err), 0);
        QVERIFY2(err.contains("not kept") && !said["best"].toObject()["kept"].toBool() &&
                     !QFileInfo::exists(kept),
                 qPrintable(err));
        // How long a recording that can tell 2 an hour must be, and that none can tell 0.
        QVERIFY2(err.contains("Record at least 30 minutes"), qPrintable(err));
        QCOMPARE(listenTo({"--truth", labels, "--sweep", "--budget", "0"}, &said, &err), 0);
        QVERIFY2(err.contains("no recording can tell 0 false alarms an hour") &&
                     !err.contains("Record at least"),
                 qPrintable(err));
        QCOMPARE(
            listenTo({"--truth", labels, "--sweep", "--keep", "--budget", "5000"}, &said, &err), 0);
        const QJsonObject best = said["best"].toObject();
        QVERIFY2(best["kept"].toBool() && best["file"].toString() == kept &&
                     QFileInfo::exists(kept),
                 qPrintable(err));
        QFile keptFile(kept);
        QVERIFY(keptFile.open(QIODevice::ReadOnly));
        const QJsonObject k = QJsonDocument::fromJson(keptFile.readAll()).object();
        QCOMPARE(k["threshold"].toDouble(), best["threshold"].toDouble());
        QCOMPARE(k["found_on"].toObject()["recording"].toString(), words);
        QCOMPARE(k["found_on"].toObject()["found"].toInt(), 2);
        // A model chosen while tuning: the row stays until the tuning ends, then follows it.
        panel.setModel(dir.filePath("no-such-run"));
        panel.setListenThreshold(0.66);
        panel.setListenAverage(9);
        panel.setModel(run);
        QCOMPARE(panel.listenThreshold(), k["threshold"].toDouble());
        QVERIFY(panel.tuneOn(words, labels, &why));
        panel.setModel(dir.filePath("no-such-run"));
        QCOMPARE(panel.listenThreshold(), k["threshold"].toDouble());
        QVERIFY(tuned.wait(120000));
        QCOMPARE(panel.listenThreshold(), 0.66);
        QCOMPARE(panel.listenAverage(), 9);
        panel.setModel(run);
        QVERIFY(QFile::remove(kept));
        panel.setListenThreshold(0.85);
        panel.setListenAverage(4);
        // Labels that cannot be read: the panel says which file and line.
        QVERIFY(writeLabels("0.8\t1.15\thigh\n2.8 3.15 low\n"));
        QVERIFY(panel.tuneOn(words, labels, &why));
        QVERIFY(tuned.wait(120000));
        QVERIFY(!panel.tuning().ok);
        QVERIFY2(panel.status().contains("Tuning failed") &&
                     panel.status().contains(labels + ":2"),
                 qPrintable(panel.status()));
        QVERIFY(!panel.useTunedSetting());
        // Labels of none of the model's classes: nothing to find, and said so.
        QVERIFY(writeLabels("# the words\n0.8\t1.15\tcat\n2.8\t3.15\tdog\n"));
        QVERIFY(panel.tuneOn(words, labels, &why));
        QVERIFY(tuned.wait(120000));
        QVERIFY(!panel.tuning().ok);
        QVERIFY2(panel.status().contains("no label names a class the model detects (high, low)"),
                 qPrintable(panel.status()));
        // Without --sweep such labels count false alarms: a recording of other words only.
        // Both words are detected where "cat" and "dog" were said.
        QCOMPARE(listenTo({"--truth", labels}, &said, &err), 0);
        QCOMPARE(said["score"].toObject()["keywords"].toInt(), 0);
        QCOMPARE(said["score"].toObject()["false_alarms"].toInt(), 2);
        QVERIFY2(err.contains("no label names a class the model detects (high, low): counting its "
                              "false alarms only"),
                 qPrintable(err));
        // Without the engine: refused, and the row stays as it was.
        const QString cli = FLOWBENCH_CLI;
        panel.setCliPath(QString());
        QVERIFY(!panel.tuneOn(words, labels, &why));
        QVERIFY2(why.contains("flowbench-cli was not found"), qPrintable(why));
        panel.setCliPath(dir.filePath("no-such-cli"));
        QVERIFY(panel.tuneOn(words, labels, &why));
        QVERIFY(tuned.wait(30000));
        QVERIFY2(!panel.tuning().ok && panel.status().contains("Tuning failed"),
                 qPrintable(panel.status()));
        QVERIFY(!panel.tuningNow());
        QVERIFY(panel.findChild<QWidget *>("inferenceListenTune")->isEnabled());
        panel.setCliPath(cli);

        QVERIFY2(panel.startListening(&why), qPrintable(why));
        QVERIFY(panel.listening());
        // The engine has loaded the model and hears the microphone (its silence) before the
        // words play: a child slow to start on a busy machine would otherwise have the panel
        // skip the first words (it keeps at most a second for a child slower than real time).
        QTRY_VERIFY_WITH_TIMEOUT(panel.windowsHeard() > 0, 60000);
        QVERIFY(g_mic->play(words));
        QTest::qWait(300);
        panel.stopListening();
        QVERIFY(stopped.wait(30000));
        QStringList heard;
        for (const auto &h : panel.detections())
            heard << h.label;
        qInfo("heard %s in %d windows; p99 %.2f ms a window; %s", qPrintable(heard.join(' ')),
              panel.windowsHeard(), panel.windowMsPercentile(0.99), qPrintable(panel.status()));
        QCOMPARE(heard, (QStringList{"high", "low"}));
        const double apart = panel.detections()[1].time - panel.detections()[0].time;
        QVERIFY2(std::abs(apart - 2.0) < 0.5, qPrintable(QString::number(apart)));
        QVERIFY(panel.windowsHeard() > 30);
        QVERIFY(panel.windowMsPercentile(0.99) > 0);
        QVERIFY2(panel.status().contains("2 word(s) detected"), qPrintable(panel.status()));
        QVERIFY2(panel.clippedWarning().isEmpty(), qPrintable(panel.clippedWarning()));
        // The strip: the spectrogram, with the detections marked in green.
        const QImage strip = panel.listenStrip();
        QVERIFY(strip.width() >= 400 && strip.height() == 120);
        int marks = 0;
        for (int xPixel = 0; xPixel < strip.width(); ++xPixel)
            marks += strip.pixel(xPixel, 60) == qRgb(120, 255, 140);
        QVERIFY2(marks >= 2, qPrintable(QString::number(marks)));
        QVERIFY2(panel.status().contains("1 model listening, threshold 0.85 over 4 windows, "
                                         "each window heard at 0.92, 1 and 1.08 times its speed"),
                 qPrintable(panel.status()));

        // The detector's settings and other models reach the engine: the same run twice
        // (the mean of a model with itself is the model), a lower threshold over 3 windows, no
        // warp, and the same words heard; the engine's summary says how it listened.
        panel.setListenThreshold(0.5);
        panel.setListenAverage(3);
        panel.setListenWith({dir.filePath("run")});
        QCOMPARE(panel.listenWith(), QStringList{dir.filePath("run")});
        panel.setListenWarp(false); // each window heard once, as it is
        QVERIFY2(panel.startListening(&why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(panel.windowsHeard() > 0, 60000); // as above
        QVERIFY(g_mic->play(words));
        QTest::qWait(300);
        panel.stopListening();
        QVERIFY(stopped.wait(30000));
        heard.clear();
        for (const auto &h : panel.detections())
            heard << h.label;
        QCOMPARE(heard, (QStringList{"high", "low"}));
        QVERIFY2(panel.status().contains("2 models listening, threshold 0.50 over 3 windows.") &&
                     !panel.status().contains("heard at"),
                 qPrintable(panel.status()));
        // The same words 12 dB too hot through the microphone: the seconds cut off flat are
        // said to be clipped as they come, and say what to do.
        QVERIFY2(panel.startListening(&why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(panel.windowsHeard() > 0, 60000);
        QVERIFY(panel.clippedWarning().isEmpty());
        QVERIFY(g_mic->play(dir.filePath("words_hot.wav")));
        QTRY_VERIFY_WITH_TIMEOUT(!panel.clippedWarning().isEmpty(), 10000);
        QVERIFY(panel.findChild<QLabel *>("inferenceClipped")->isVisible());
        panel.stopListening();
        QVERIFY(stopped.wait(30000));
        QVERIFY2(panel.clippedWarning().startsWith("Clipping: ") &&
                     panel.clippedWarning().contains("turn the input gain down"),
                 qPrintable(panel.clippedWarning()));
        // A run that is not there, to listen together with: listening ends at once, naming it.
        panel.setListenWith({dir.filePath("run"), dir.filePath("no-such-run")});
        QVERIFY(panel.startListening(&why));
        QVERIFY(stopped.wait(30000));
        QVERIFY2(panel.status().contains("Listening stopped") &&
                     panel.status().contains("no-such-run"),
                 qPrintable(panel.status()));

        // A recording dropped or opened alone that lasts more than 3 s: listened to whole, as the
        // microphone is (one listen child on the file, with the row's settings), its detections
        // at their times in it, and choosing one shows the seconds around it. Predicted once, as
        // before, only its middle second would have been heard.
        panel.setListenWith({});
        panel.setListenThreshold(0.85);
        panel.setListenAverage(4);
        panel.setListenWarp(true);
        panel.predictFiles({words});
        QVERIFY(panel.listening());
        QCOMPARE(panel.listenedFile(), words);
        // Read for the strip in another thread first: the window's events go on meanwhile.
        QVERIFY2(panel.status().startsWith("Reading words.wav (4.5 s)"),
                 qPrintable(panel.status()));
        QVERIFY(stopped.wait(60000));
        heard.clear();
        for (const auto &h : panel.detections())
            heard << h.label;
        QCOMPARE(heard, (QStringList{"high", "low"}));
        QVERIFY2(
            std::abs(panel.detections()[0].time - 1.0) < 0.5 &&
                std::abs(panel.detections()[1].time - 3.0) < 0.5,
            qPrintable(
                QString("%1 %2").arg(panel.detections()[0].time).arg(panel.detections()[1].time)));
        QVERIFY2(panel.status().contains("words.wav: Listened for 4.5 s: 2 word(s) detected"),
                 qPrintable(panel.status()));
        QVERIFY2(panel.clippedWarning().isEmpty(), qPrintable(panel.clippedWarning()));
        QVERIFY2(panel.stripEnd() > 4.0 && panel.stripEnd() <= 4.5,
                 qPrintable(QString::number(panel.stripEnd())));
        auto marksIn = [](const QImage &image) {
            int n = 0;
            for (int xPixel = 0; xPixel < image.width(); ++xPixel)
                n += image.pixel(xPixel, 60) == qRgb(120, 255, 140);
            return n;
        };
        QVERIFY2(marksIn(panel.listenStrip()) >= 2,
                 qPrintable(QString::number(marksIn(panel.listenStrip()))));
        auto *history = panel.findChild<QListWidget *>("inferenceHistory");
        QCOMPARE(history->count(), 2);
        history->setCurrentRow(0);
        QCOMPARE(panel.stripEnd(), panel.detections()[0].time + 2.5);
        // A recording that cannot be read is refused, named, and leaves the last one as it was.
        const QString cut = dir.filePath("cut.wav");
        QVERIFY(fb::data::writeWav(cut.toStdString(), x, 16000).ok());
        QVERIFY(QFile::resize(cut, 44 + 16000 * 2 * 4)); // 4 of its 4.5 s
        QSignalSpy answered(&panel, &fb::widgets::InferencePanel::predicted);
        panel.predictFiles({cut});
        QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 1, 30000);
        QVERIFY(!panel.listening());
        QCOMPARE(history->count(), 2);
        QVERIFY2(panel.status().contains("cut.wav") && panel.status().contains("truncated"),
                 qPrintable(panel.status()));
        QCOMPARE(panel.listenedFile(), words);
        QCOMPARE(panel.detections().size(), 2);
        history->setCurrentRow(1);
        QCOMPARE(panel.stripEnd(), std::min(4.5, panel.detections()[1].time + 2.5));
        // Stopped while it is read: it is not listened to, and the last one stays, title and all.
        auto *title = panel.findChild<QLabel *>("inferenceTitle");
        const QString titleBefore = title->text();
        QVERIFY2(titleBefore.contains("words.wav"), qPrintable(titleBefore));
        const QSignalSpy predictedBefore(&panel, &fb::widgets::InferencePanel::predicted);
        panel.predictFiles({words});
        QVERIFY(title->text().startsWith("Reading words.wav"));
        QVERIFY(panel.listening());
        panel.findChild<QPushButton *>("inferenceListen")->click();
        QVERIFY(stopped.wait(30000));
        QVERIFY(!panel.listening());
        QVERIFY2(panel.status() == "words.wav: stopped before listening to it.",
                 qPrintable(panel.status()));
        QCOMPARE(panel.detections().size(), 2);
        QCOMPARE(history->count(), 2);
        QCOMPARE(predictedBefore.count(), 0);
        QCOMPARE(title->text(), titleBefore);
        QCOMPARE(panel.findChild<QPushButton *>("inferenceListen")->text(), QString("Listen"));
        // Stopped partway through a minute of the same words: what was heard stays.
        std::vector<float> minute;
        for (int r = 0; r < 13; ++r)
            minute.insert(minute.end(), x.begin(), x.end());
        const QString longer = dir.filePath("minute.wav");
        QVERIFY(fb::data::writeWav(longer.toStdString(), minute, 16000).ok());
        panel.predictFiles({longer});
        QVERIFY(panel.listening());
        QTRY_VERIFY_WITH_TIMEOUT(!panel.status().startsWith("Reading"), 30000); // then heard
        QTRY_VERIFY_WITH_TIMEOUT(panel.windowsHeard() > 20, 60000);
        panel.stopListening();
        QVERIFY(stopped.wait(30000));
        QVERIFY(!panel.listening());
        QVERIFY2(panel.status().contains("minute.wav: stopped at") &&
                     panel.status().contains("of 58.5 s"),
                 qPrintable(panel.status()));
        QVERIFY(panel.stripEnd() > 0 && panel.stripEnd() < 58.5);
        // The words 12 dB too hot, listened to as a recording: the engine's summary says it is
        // clipped, and the panel says so of the file.
        QVERIFY(panel.clippedWarning().isEmpty());
        panel.predictFiles({dir.filePath("words_hot.wav")});
        QVERIFY(stopped.wait(60000));
        QVERIFY2(panel.clippedWarning().startsWith("words_hot.wav is clipped: ") &&
                     panel.clippedWarning().contains("record it again quieter"),
                 qPrintable(panel.clippedWarning()));
        // A recording of 3 s or less is predicted as one window, as before.
        const QString shortOne = dir.filePath("short.wav");
        QVERIFY(fb::data::writeWav(shortOne.toStdString(),
                                   std::vector<float>(x.begin(), x.begin() + 16000 * 2), 16000)
                    .ok());
        QSignalSpy predicted(&panel, &fb::widgets::InferencePanel::predicted);
        panel.predictFiles({shortOne});
        QVERIFY(!panel.listening());
        QVERIFY(predicted.wait(60000));
        QCOMPARE(panel.results().size(), 1);
        QCOMPARE(panel.results()[0].input, shortOne);
        QVERIFY(panel.listenedFile().isEmpty());
        QVERIFY(panel.clippedWarning().isEmpty()); // Listen mode's, gone with it

        // `flowbench-cli listen RUN --stdin` stopped by Ctrl-C before its stream ends, as a
        // pipe from a recorder is: what came is heard, and the summary follows with exit 0.
        QProcess piped;
        piped.start(FLOWBENCH_CLI, {"listen", dir.filePath("run"), "--stdin"});
        QVERIFY(piped.waitForStarted());
        piped.write(fb::widgets::int16FromFloats(x.data(), x.size()));
        QByteArray out;
        QElapsedTimer waited;
        waited.start();
        while (out.count("\"kind\":\"detection\"") < 2 && waited.elapsed() < 60000 &&
               piped.state() == QProcess::Running) {
            piped.waitForReadyRead(200);
            out += piped.readAllStandardOutput();
        }
        QVERIFY2(out.count("\"kind\":\"detection\"") == 2, out.constData());
        ::kill(pid_t(piped.processId()), SIGINT); // the input still open
        QVERIFY(piped.waitForFinished(30000));
        out += piped.readAllStandardOutput();
        QCOMPARE(piped.exitStatus(), QProcess::NormalExit);
        QCOMPARE(piped.exitCode(), 0);
        const QJsonObject summary =
            QJsonDocument::fromJson(out.trimmed().split('\n').last()).object();
        QCOMPARE(summary["kind"].toString(), QString("summary"));
        QCOMPARE(summary["status"].toString(), QString("ok"));
        QCOMPARE(summary["input"].toString(), QString("stdin"));
        QCOMPARE(summary["detections"].toInt(), 2);
        // At most the 4.5 s sent; at least the words' 3.2 s (the rest may still have been in
        // the pipe: a stop does not wait for more).
        const double heardSeconds = summary["seconds"].toDouble();
        QVERIFY2(heardSeconds >= 3.2 && heardSeconds <= 4.5,
                 qPrintable(QString::number(heardSeconds)));
        QCOMPARE(summary["threads"].toInt(), 1);
        // The engine's default detector is the panel's (the window does not link the engine,
        // so each states it).
        const QJsonObject defaults = summary["detector"].toObject();
        fb::widgets::InferencePanel fresh;
        QCOMPARE(defaults["threshold"].toDouble(), fresh.listenThreshold());
        QCOMPARE(defaults["average"].toInt(), fresh.listenAverage());
        QCOMPARE(defaults["warp"].toDouble() > 0, fresh.listenWarp());

        // Its models run on one thread unless --threads says more: OpenMP's waiting threads
        // spin, and beside a second listener on 2 cores a window took 450 ms instead of 10
        // (bench/listen_latency.py). The process's threads, counted in /proc once it has heard
        // a window: --threads 3 adds OpenMP's two workers, which the default never starts.
        auto threadsWhileListening = [&](const QStringList &more, int *said) {
            QProcess p;
            p.start(FLOWBENCH_CLI,
                    QStringList{"listen", dir.filePath("run"), "--stdin", "--windows"} + more);
            if (!p.waitForStarted()) return -1;
            p.write(fb::widgets::int16FromFloats(x.data(), x.size()));
            QByteArray heard;
            QElapsedTimer t;
            t.start();
            while (!heard.contains("\"kind\":\"window\"") && t.elapsed() < 60000 &&
                   p.state() == QProcess::Running) {
                p.waitForReadyRead(200);
                heard += p.readAllStandardOutput();
            }
            const int n = int(QDir(QString("/proc/%1/task").arg(p.processId()))
                                  .entryList(QDir::Dirs | QDir::NoDotAndDotDot)
                                  .size());
            p.closeWriteChannel();
            p.waitForFinished(30000);
            heard += p.readAllStandardOutput();
            *said = QJsonDocument::fromJson(heard.trimmed().split('\n').last())
                        .object()["threads"]
                        .toInt();
            return p.exitCode() == 0 ? n : -1;
        };
        int saidOne = 0, saidThree = 0;
        const int one = threadsWhileListening({}, &saidOne);
        const int three = threadsWhileListening({"--threads", "3"}, &saidThree);
        QCOMPARE(saidOne, 1);
        QCOMPARE(saidThree, 3);
        qInfo("listen's threads: %d by default, %d with --threads 3", one, three);
        // (A thread per core by default, as before, would be one fewer apart on 2 cores.)
        QVERIFY2(
            one > 0 && three - one >= 2,
            qPrintable(QString("%1 threads by default, %2 with --threads 3").arg(one).arg(three)));
        QProcess refused;
        refused.start(FLOWBENCH_CLI, {"listen", dir.filePath("run"), "--stdin", "--threads", "0"});
        QVERIFY(refused.waitForFinished(30000));
        QCOMPARE(refused.exitCode(), 2);
        QVERIFY(refused.readAllStandardError().contains("--threads needs a whole number"));
    }

private:
    // `flowbench-cli infer RUN --top 1 ARGS...`'s top class for one recording, or why not (it
    // did not finish, or did not exit 0).
    static bool inferTop(const QString &run, const QStringList &args, QJsonObject *top,
                         QString *why)
    {
        QProcess c;
        c.start(FLOWBENCH_CLI, QStringList{"infer", run, "--top", "1"} + args);
        if (!c.waitForFinished(60000) || c.exitCode() != 0) {
            *why = QString("infer %1: exit %2: %3")
                       .arg(args.join(' '))
                       .arg(c.exitCode())
                       .arg(QString::fromUtf8(c.readAllStandardError()));
            return false;
        }
        *top = QJsonDocument::fromJson(c.readAllStandardOutput())
                   .object()["top"]
                   .toArray()[0]
                   .toObject();
        return true;
    }

    // `infer` hears a recording three ways by default (--warp 0.08), as listen hears a window:
    // its probabilities are the mean of the model's for the recording as decoded and played
    // 0.92 and 1.08 times as fast (data::stretchedAroundMiddle), computed here from the
    // decoded samples infer gives back (--inputs); --warp 0 hears it once, as the evaluation.
    static void inferHearsARecordingThreeWays(const QString &run, const std::vector<float> &words)
    {
        // A piece of the words' recording with "high" off its middle, and toneBetween().
        QTemporaryDir dir;
        const QString high = dir.filePath("high.wav"), between = dir.filePath("between.wav"),
                      notAudio = dir.filePath("notes.wav");
        QVERIFY(fb::data::writeWav(high.toStdString(),
                                   std::vector<float>(words.begin() + 6000, words.begin() + 24000),
                                   16000)
                    .ok());
        QVERIFY(fb::data::writeWav(between.toStdString(), toneBetween(), 16000).ok());
        // Between the two, a file that is no recording: answered with its error, and the
        // recording after it still gets its own hearings.
        QFile notes(notAudio);
        QVERIFY(notes.open(QIODevice::WriteOnly) && notes.write("not a recording\n") > 0);
        notes.close();
        auto predictor = fb::exec::Predictor::open(run.toStdString());
        QVERIFY2(predictor.ok(), predictor.ok() ? "" : predictor.error().str().c_str());
        fb::exec::Predictor &p = *predictor.value();
        const int classes = int(p.classNames().size());
        QCOMPARE(classes, 3);
        auto infer = [&](const QStringList &warp, QString *err) {
            QProcess c;
            c.start(FLOWBENCH_CLI, QStringList{"infer", run, "--top", "3", "--inputs"} + warp +
                                       QStringList{high, notAudio, between});
            c.waitForFinished(60000);
            *err = QString::fromUtf8(c.readAllStandardError());
            QList<QJsonObject> out;
            if (c.exitCode() == 1) // the file that is no recording
                for (const QByteArray &line : c.readAllStandardOutput().trimmed().split('\n')) {
                    const QJsonObject o = QJsonDocument::fromJson(line).object();
                    if (o["input"].toString() == notAudio && o.contains("error")) continue;
                    out << o;
                }
            return out;
        };
        QString err, errOnce;
        const QList<QJsonObject> three = infer({"--balance", "0"}, &err),
                                 once = infer({"--warp", "0", "--balance", "0"}, &errOnce);
        QCOMPARE(three.size(), 2);
        QCOMPARE(once.size(), 2);
        QVERIFY2(err.contains("each recording heard at 0.92, 1 and 1.08 times its speed"),
                 qPrintable(err));
        QVERIFY2(!errOnce.contains("heard at"), qPrintable(errOnce));
        QVERIFY2(!err.contains("class shares"), qPrintable(err));
        double moved = 0;
        std::vector<std::vector<double>> means; // each recording's, heard three ways
        for (int i = 0; i < 2; ++i) {
            const QByteArray b = QByteArray::fromBase64(three[i]["waveform"].toString().toLatin1());
            std::vector<float> wave(size_t(b.size()) / sizeof(float));
            std::memcpy(wave.data(), b.constData(), size_t(b.size()));
            QCOMPARE(three[i]["waveform"], once[i]["waveform"]);
            std::vector<double> mean(size_t(classes), 0.0), alone;
            for (double speed : {1.0, 0.92, 1.08}) {
                const std::vector<float> heard =
                    speed == 1.0 ? wave : fb::data::stretchedAroundMiddle(wave, speed);
                const std::vector<float> s = p.scores(heard, 1);
                const std::vector<double> q = fb::exec::softmax(s.data(), classes);
                if (speed == 1.0) alone = q;
                for (int c = 0; c < classes; ++c)
                    mean[size_t(c)] += q[size_t(c)] / 3;
            }
            auto check = [&](const QJsonObject &o, const std::vector<double> &want) {
                const QJsonArray top = o["top"].toArray();
                QCOMPARE(top.size(), classes);
                for (int j = 0; j < classes; ++j) {
                    const QJsonObject t = top[j].toObject();
                    const double got = t["probability"].toDouble(),
                                 expected = want[size_t(t["index"].toInt())];
                    QVERIFY2(std::abs(got - expected) < 1e-5,
                             qPrintable(QString("%1 %2: %3, expected %4")
                                            .arg(o["input"].toString(), t["class"].toString())
                                            .arg(got)
                                            .arg(expected)));
                    if (j > 0) QVERIFY(got <= top[j - 1].toObject()["probability"].toDouble());
                }
            };
            check(three[i], mean);
            check(once[i], alone);
            means.push_back(mean);
            for (int c = 0; c < classes; ++c)
                moved = std::max(moved, std::abs(mean[size_t(c)] - alone[size_t(c)]));
        }
        // The hearings must differ, or the comparison shows nothing.
        qInfo("three hearings moved a probability by up to %.4f", moved);
        QVERIFY2(moved > 1e-4, qPrintable(QString::number(moved)));

        // --balance b (0.5 by default): each probability over its class's share of the training
        // labels to the power b, summed to 1 again; the shares are the counts the run saved with
        // the model, one per class, as many as the clips it trained on of each.
        auto saved = fb::io::readSafetensors(p.modelFile());
        QVERIFY(saved.ok());
        QVERIFY(saved->metadata.count("class_counts"));
        const auto counts =
            nlohmann::json::parse(saved->metadata.at("class_counts")).get<std::vector<int64_t>>();
        QCOMPARE(int(counts.size()), classes);
        QVERIFY2(*std::min_element(counts.begin(), counts.end()) > 0 &&
                     *std::min_element(counts.begin(), counts.end()) <
                         *std::max_element(counts.begin(), counts.end()),
                 "the test's classes must be uneven for the balance to show");
        const std::vector<double> logShares = fb::nn::logClassShares(counts);
        double shifted = 0;
        for (const double b : {0.5, 1.0}) {
            QString said;
            const QList<QJsonObject> balanced =
                b == 0.5 ? infer({}, &said) : infer({"--balance", "1"}, &said);
            QCOMPARE(balanced.size(), 2);
            QVERIFY2(said.contains(b == 0.5 ? "class shares taken out halfway (--balance 0.5"
                                            : "class shares taken out wholly (--balance 1"),
                     qPrintable(said));
            for (int i = 0; i < 2; ++i) {
                std::vector<double> want = means[size_t(i)];
                double sum = 0;
                for (int c = 0; c < classes; ++c)
                    sum += want[size_t(c)] *= std::exp(-b * logShares[size_t(c)]);
                const QJsonArray top = balanced[i]["top"].toArray();
                QCOMPARE(top.size(), classes);
                for (int j = 0; j < classes; ++j) {
                    const QJsonObject t = top[j].toObject();
                    const double got = t["probability"].toDouble(),
                                 expected = want[size_t(t["index"].toInt())] / sum;
                    QVERIFY2(std::abs(got - expected) < 1e-5,
                             qPrintable(QString("--balance %1, %2: %3, expected %4")
                                            .arg(b)
                                            .arg(t["class"].toString())
                                            .arg(got)
                                            .arg(expected)));
                    if (j > 0) QVERIFY(got <= top[j - 1].toObject()["probability"].toDouble());
                    shifted = std::max(
                        shifted, std::abs(got - means[size_t(i)][size_t(t["index"].toInt())]));
                }
            }
        }
        QVERIFY2(shifted > 1e-4, qPrintable(QString::number(shifted)));
        for (const char *b : {"1.5", "-0.1", "x", ""}) {
            QProcess c;
            c.start(FLOWBENCH_CLI, {"infer", run, "--balance", QString(b), high});
            c.waitForFinished(60000);
            QCOMPARE(c.exitCode(), 2);
            QVERIFY(c.readAllStandardError().contains("--balance needs a number from 0"));
        }
        // Out of range, or not numbers: bad usage (exit 2), saying what.
        for (const char *w : {"0.5", "x", "0.01,0.02,0.03,0.04,0.05"}) {
            QProcess c;
            c.start(FLOWBENCH_CLI, {"infer", run, "--warp", QString(w), high});
            c.waitForFinished(60000);
            QCOMPARE(c.exitCode(), 2);
            QVERIFY(c.readAllStandardError().contains("--warp"));
        }
    }
};

int main(int argc, char **argv)
{
    // The microphone first: Qt Multimedia connects to the server PULSE_SERVER names.
    VirtualMicrophone mic;
    mic.start();
    g_mic = &mic;
    qputenv("QT_QPA_PLATFORM",
            qgetenv("QT_QPA_PLATFORM").isEmpty() ? "offscreen" : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    TestRecordPanel test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_record_panel.moc"
