// flowbench-cli end to end, through the real binary: the DESIGN.md contract (summary line, exit
// codes, validate, nodes), training to a stated accuracy, determinism, resume, and bad input.

#include "cli_process.h"
#include "image_folder_fixture.h"

#include "core/data/audio_files.h"
#include "core/io/safetensors.h"

#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <csignal>
#include <sys/stat.h>
#include <unistd.h>
#include <cstring>
#include <limits>

namespace {

const QString kData = "/usr/share/datasets/fashion-mnist";
const QString kSource = FLOWBENCH_SOURCE_DIR;

CliResult cli(const QStringList &args, int timeoutMs = 300000,
              const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    return runCli(args, {}, timeoutMs, env);
}

QString example(const char *name)
{
    return kSource + "/resources/examples/" + name;
}

// The CNN example with fc1 wired straight to pool2, skipping the flatten: fc1's input [64, 7, 7]
// does not fit.
void writeCnnWithoutFlatten(const QString &path)
{
    QJsonObject doc = readJson(example("fashion_mnist_cnn.json"));
    QJsonArray edges = doc["edges"].toArray();
    for (int i = 0; i < edges.size(); ++i) {
        QJsonObject e = edges[i].toObject();
        if (e["to"].toString() == "fc1.in") e["from"] = "pool2.out";
        edges[i] = e;
    }
    doc["edges"] = edges;
    writeJson(path, doc);
}

// A small, fast MLP run: 3000 training and 1000 test samples.
QStringList smallRun(const QString &outDir, int epochs = 2)
{
    QStringList args;
    args << "run" << example("fashion_mnist_mlp.json") << "--threads"
         << "2"
         << "--set"
         << "train_data.limit=3000"
         << "--set"
         << "test_data.limit=1000"
         << "--set" << QString("train.epochs=%1").arg(epochs) << "--out" << outDir;
    return args;
}

// Why the spoken-digits recordings cannot be made here; empty when they can.
QString missingSpeechTools()
{
    for (const char *tool : {"espeak-ng", "flite", "text2wave", "sox"})
        if (QStandardPaths::findExecutable(tool).isEmpty())
            return QString("%1 is not installed (scripts/deps.sh installs it)").arg(tool);
    return {};
}

// Makes the spoken-digits recordings of the voices whose speaker names match `only`
// (FLOWBENCH_SPOKEN_DIGITS_ONLY) in `out`, with this build's flowbench-speak: "" when it did,
// else what the script said.
QString makeSpokenDigitsOf(const QString &only, const QString &out)
{
    QProcess make;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("FLOWBENCH_SPOKEN_DIGITS_ONLY", only);
    env.insert("FLOWBENCH_SPEAK", FLOWBENCH_SPEAK);
    make.setProcessEnvironment(env);
    make.start("bash", {kSource + "/scripts/make_spoken_digits.sh", out});
    if (!make.waitForFinished(300000)) return "make_spoken_digits.sh did not end in 5 minutes";
    if (make.exitStatus() != QProcess::NormalExit || make.exitCode() != 0)
        return QString::fromUtf8(make.readAllStandardError());
    return {};
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        // Most tests train on Fashion-MNIST; these need no data set, so they run without it.
        static const QStringList dataFree{"nodesListsEveryTypeWithPortsAndParams",
                                          "nodesMarkdownHasEveryTypeOnce",
                                          "readmeNodeTableIsTheRegistrys",
                                          "usageNamesEveryCommand",
                                          "makeDataMakesSpokenDigitsWithProgress",
                                          "makeDataStopsOnSigterm",
                                          "makeDataSaysWhatIsMissing",
                                          "makeDataUsageErrors",
                                          "badInputIsRefusedNeverACrash"};
        if (!dataFree.contains(QTest::currentTestFunction()) &&
            !QFile::exists(kData + "/train-images-idx3-ubyte.gz"))
            QSKIP("Fashion-MNIST is not installed (apt install dataset-fashion-mnist)");
    }

    void examplesValidate()
    {
        for (const char *name : {"fashion_mnist_mlp.json", "fashion_mnist_cnn.json",
                                 "fashion_mnist_cnn_augmented.json"}) {
            CliResult r = cli({"validate", example(name)});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        }
    }

    // An example's name alone finds it from any folder (the source tree's here; an installed
    // flowbench-cli's /usr/share/flowbench/examples); a file of that name here comes first.
    void examplesByName()
    {
        for (const char *name : {"fashion_mnist_mlp", "fashion_mnist_cnn.json"}) {
            CliResult r = cli({"validate", name});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        }
        CliResult r = cli({"validate", "no_such_example"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("no_such_example"), qPrintable(r.err));
    }

    void nodesListsEveryTypeWithPortsAndParams()
    {
        CliResult r = cli({"nodes", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray types = QJsonDocument::fromJson(r.out.toUtf8())["node_types"].toArray();
        QStringList names;
        for (const auto &t : types)
            names << t.toObject()["type"].toString();
        for (const char *t :
             {"fashion_mnist", "normalize",     "input",    "linear",       "conv2d",
              "maxpool2d",     "avgpool2d",     "relu",     "leaky_relu",   "sigmoid",
              "tanh",          "gelu",          "flatten",  "dropout",      "batchnorm2d",
              "add",           "cross_entropy", "mse",      "sgd",          "adam",
              "adamw",         "train",         "evaluate", "random_hflip", "random_affine",
              "random_crop",   "silu"})
            QVERIFY2(names.contains(t), t);
        CliResult text = cli({"nodes"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("conv2d") && text.out.contains("kernel_size"));
    }

    // The README's table, one row per category in palette order: each type once, in its own
    // category's row, with all its parameter names; the cell separators are the table's own.
    void nodesMarkdownHasEveryTypeOnce()
    {
        const CliResult json = cli({"nodes", "--json"});
        const CliResult md = cli({"nodes", "--markdown"});
        QCOMPARE(json.exitCode, 0);
        QCOMPARE(md.exitCode, 0);
        const QJsonArray types = QJsonDocument::fromJson(json.out.toUtf8())["node_types"].toArray();
        QStringList categories;
        for (const auto &t : types)
            if (!categories.contains(t.toObject()["category"].toString()))
                categories << t.toObject()["category"].toString();
        const QStringList lines = md.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.value(0), QString("| category | node types |"));
        QCOMPARE(lines.value(1), QString("|---|---|"));
        QCOMPARE(lines.size(), categories.size() + 2);
        static const QRegularExpression cellBar("(^|[^\\\\])\\|");
        for (int i = 0; i < categories.size(); ++i) {
            const QString row = lines[i + 2];
            QVERIFY2(row.startsWith("| " + categories[i] + " | ") && row.endsWith(" |"),
                     qPrintable(row));
            QCOMPARE(row.count(cellBar), 3); // help text cannot split a cell
            const QStringList entries = row.mid(categories[i].size() + 5).chopped(2).split("<br>");
            for (const auto &tv : types) {
                const QJsonObject t = tv.toObject();
                const QString name = "`" + t["type"].toString() + "`";
                if (t["category"].toString() != categories[i]) {
                    QVERIFY2(!row.contains(name), qPrintable(name + " in " + categories[i]));
                    continue;
                }
                QCOMPARE(row.count(name), 1);
                QStringList params;
                for (const auto &p : t["params"].toArray())
                    params << p.toObject()["name"].toString();
                const auto entry =
                    std::find_if(entries.begin(), entries.end(),
                                 [&](const QString &e) { return e.startsWith(name); });
                QVERIFY2(entry != entries.end(), qPrintable(name));
                if (!params.isEmpty())
                    QVERIFY2(entry->startsWith(name + " (" + params.join(", ") + ")"),
                             qPrintable(*entry));
            }
        }
    }

    // README.md's node table is generated: the text between its markers is exactly what
    // `flowbench-cli nodes --markdown` prints, so a node type added to the registry shows there
    // (or this test says how to put it there).
    void readmeNodeTableIsTheRegistrys()
    {
        const CliResult r = cli({"nodes", "--markdown"});
        QCOMPARE(r.exitCode, 0);
        QFile f(kSource + "/README.md");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString readme = QString::fromUtf8(f.readAll());
        const QString begin =
            "\n<!-- nodes:begin (generated: flowbench-cli nodes --markdown) -->\n";
        const QString end = "\n<!-- nodes:end -->\n";
        const qsizetype b = readme.indexOf(begin), e = readme.indexOf(end, b + 1);
        const QString regenerate =
            QString("bash %1/scripts/update_node_table.sh %2").arg(kSource, FLOWBENCH_CLI);
        QVERIFY2(b >= 0 && e >= b, qPrintable("README.md lacks the node-table markers, each on a "
                                              "line of its own:" +
                                              begin + end.trimmed()));
        const QString table = readme.mid(b + begin.size(), e + 1 - (b + begin.size()));
        if (table != r.out) {
            // Where they part: the line, and the text around the first differing character.
            const QStringList have = table.split('\n'), want = r.out.split('\n');
            int line = 0;
            while (line < have.size() && line < want.size() && have[line] == want[line])
                ++line;
            const QString a = have.value(line), b = want.value(line);
            qsizetype col = 0;
            while (col < a.size() && col < b.size() && a[col] == b[col])
                ++col;
            const qsizetype from = std::max<qsizetype>(0, col - 60);
            QFAIL(qPrintable(QString("README.md's node table is not the output of `flowbench-cli "
                                     "nodes --markdown`; they part in table line %1, column %2:\n"
                                     "  README.md: ...%3\n  CLI:       ...%4\n"
                                     "Regenerate the table with:\n  %5")
                                 .arg(line + 1)
                                 .arg(col + 1)
                                 .arg(a.mid(from, 120), b.mid(from, 120), regenerate)));
        }
    }

    void usageNamesEveryCommand()
    {
        const CliResult r = cli({"--help"});
        QCOMPARE(r.exitCode, 0);
        for (const char *text : {"nodes [--json|--markdown]", "--markdown: the node table",
                                 "make-data spoken-digits", "--out DIR", "summary PIPELINE.json",
                                 "--measure", "export MODEL -o FILE.onnx", "--no-check"})
            QVERIFY2(r.out.contains(text), text);
        const CliResult bad = cli({"nodes", "--html"});
        QCOMPARE(bad.exitCode, 2);
    }

    // `make-data spoken-digits` runs scripts/make_spoken_digits.sh (found in the source tree of
    // this build tree): a count people can follow on stderr, the folder and count on stdout.
    // Two of the 547 voices (2 x 33 recordings, their real hard negative, 2 words holding a
    // digit, 4 background noises, since version 7 of the data set their 11 digits with one sound
    // more, and since 2026-12-07 2 short sounds; in version 5, 84, with 11 made-up hard
    // negatives) keep it quick.
    void makeDataMakesSpokenDigitsWithProgress()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString out = dir.filePath("digits");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FLOWBENCH_PROGRESS_SECONDS", "0.2");
        const QStringList args{"make-data", "spoken-digits", "--out", out, "--voices", "2"};
        const CliResult r = cli(args, 300000, env);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.summary["status"].toString(), QString("ok"));
        QCOMPARE(r.summary["path"].toString(), QDir(out).absolutePath());
        QCOMPARE(r.summary["recordings"].toInt(), 86);
        QCOMPARE(QDir(out).entryList({"*_*_*.wav"}, QDir::Files).size(), 86);
        // The count grows, and people see it between the start and the end.
        static const QRegularExpression made("made (\\d+) of 86\n");
        QList<int> counts;
        for (auto it = made.globalMatch(r.err); it.hasNext();)
            counts << it.next().captured(1).toInt();
        QVERIFY2(!counts.isEmpty(), qPrintable(r.err));
        QVERIFY2(std::is_sorted(counts.begin(), counts.end()), qPrintable(r.err));
        QVERIFY2(std::any_of(counts.begin(), counts.end(), [](int n) { return n > 0 && n < 86; }),
                 qPrintable(r.err));
        // A complete folder is left as it is.
        const CliResult again = cli(args, 60000, env);
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.err.contains("86 recordings already in"), qPrintable(again.err));
        QCOMPARE(again.summary["recordings"].toInt(), 86);
    }

    // The listening tests' recordings (tests/make_listen_recording.sh) say other words that the
    // data set never has, so that a false alarm on one is a word the model never heard. The
    // Indian voices' other words (script_others) are words of `others`, which every other voice
    // says too: the first of them, written from memory, were half the listening recording's
    // words.
    void listeningWordsAreNotInTheDataSet()
    {
        auto listOf = [](const QString &file, const QString &name) {
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly)) return QSet<QString>();
            const QRegularExpression re("^" + name + "=\\(([^)]*)\\)",
                                        QRegularExpression::MultilineOption);
            const QStringList words = re.match(QString::fromUtf8(f.readAll()))
                                          .captured(1)
                                          .split(QRegularExpression("\\s+"), Qt::SkipEmptyParts);
            return QSet<QString>(words.begin(), words.end());
        };
        const QString script = kSource + "/scripts/make_spoken_digits.sh";
        const QSet<QString> others = listOf(script, "others"),
                            scriptOthers = listOf(script, "script_others"),
                            heard = listOf(kSource + "/tests/make_listen_recording.sh", "others");
        QVERIFY(others.size() > 300 && scriptOthers.size() == 41 && heard.size() == 20);
        QVERIFY2((scriptOthers - others).isEmpty(),
                 qPrintable(QStringList((scriptOthers - others).values()).join(' ')));
        const QSet<QString> both = heard & (others | scriptOthers);
        QVERIFY2(both.isEmpty(), qPrintable(QStringList(both.values()).join(' ')));
    }

    // festival's Hindi, Telugu and Russian voices read English written in their own scripts: the
    // script writes the digits and their other words as Hindi, Telugu and Russian write those
    // English words, and cuts each raw word to festival's segment times (festival writes 0.3 s of
    // the Indian diphones' background before a word and 1.7 s after it, clicks that trimming
    // keeps; the uncut words last 2.1 to 2.6 s; the Russian voice's first pause can be shorter
    // than the 0.1 s kept before a word, and its "two" came out empty until the cut started at 0
    // there). Each voice: 12 takes of each digit and 32 other words, 2 background clips, a short sound.
    void festivalScriptVoicesSayTheirScriptCut()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        for (const char *voice : {"hindi/hindi_NSK_diphone", "telugu/telugu_NSK_diphone",
                                  "russian/msu_ru_nsh_clunits"})
            if (!QFileInfo::exists(QString("/usr/share/festival/voices/") + voice))
                QSKIP("festvox-hi-nsk, festvox-te-nsk or festvox-ru is not installed "
                      "(scripts/deps.sh installs them, with festival-hi and festival-te)");
        QTemporaryDir dir;
        const QString out = dir.filePath("digits");
        const QString why = makeSpokenDigitsOf("^festival-(hi|te|ru)$", out);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        for (const char *voice : {"hi", "te", "ru"})
            QCOMPARE(QDir(out)
                         .entryList({QString("*_festival-%1_*.wav").arg(voice)}, QDir::Files)
                         .size(),
                     12 * 10 + 32);
        // 2 clips of noise and one short sound a voice (background_click-*, since 2026-12-07).
        QCOMPARE(QDir(out).entryList({"background_*.wav"}, QDir::Files).size(), 9);
        const QStringList raw = QDir(out + "/.raw").entryList({"festival-*.wav"});
        QCOMPARE(raw.size(), 3 * 42);
        // sox's stat of a file or of its first 30 ms: the RMS amplitude.
        auto rms = [](const QString &file, bool start) {
            QProcess sox;
            QStringList args{file, "-n"};
            if (start)
                args << "trim"
                     << "0"
                     << "0.03";
            sox.start("sox", args << "stat");
            sox.waitForFinished(30000);
            static const QRegularExpression re("RMS\\s+amplitude:\\s+([0-9.e+-]+)");
            return re.match(QString::fromUtf8(sox.readAllStandardError())).captured(1).toDouble();
        };
        for (const QString &f : raw) {
            const QString path = out + "/.raw/" + f;
            QProcess soxi;
            soxi.start("soxi", {"-D", path});
            QVERIFY(soxi.waitForFinished(30000));
            const double seconds = soxi.readAllStandardOutput().trimmed().toDouble();
            QVERIFY2(seconds > 0.25 && seconds < 1.3,
                     qPrintable(f + ": " + QString::number(seconds)));
            // Cut before the word, not into it: its first 30 ms (the diphones' background, or a
            // fricative's first breath) are at least 6 dB under the whole.
            const double whole = rms(path, false), first = rms(path, true);
            QVERIFY2(whole > 0 && first < 0.5 * whole,
                     qPrintable(f + QString(": %1 against %2").arg(first).arg(whole)));
        }
        // Each voice says the digits from its own script: the same English word differs.
        QFile hi(out + "/.raw/festival-hi-eight.wav"), te(out + "/.raw/festival-te-eight.wav"),
            ru(out + "/.raw/festival-ru-eight.wav");
        QVERIFY(hi.open(QIODevice::ReadOnly) && te.open(QIODevice::ReadOnly) &&
                ru.open(QIODevice::ReadOnly));
        const QByteArray hiWave = hi.readAll(), teWave = te.readAll(), ruWave = ru.readAll();
        QVERIFY(hiWave != teWave && hiWave != ruWave && teWave != ruWave);
    }

    // festival says all of a voice's words in one process (make_raw_voice in
    // scripts/make_spoken_digits.sh: starting it for each word took 10 minutes of a core), and
    // what it says must be what text2wave makes of each word alone. The Czech voices draw their
    // durations from festival's random numbers, which one process would carry from word to word:
    // without seeding them again, every word after the first came out different.
    void festivalSaysEachWordOfAVoiceAsAlone()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        if (!QFileInfo::exists("/usr/share/festival/voices/czech/czech_krb"))
            QSKIP("festvox-czech-krb is not installed (scripts/deps.sh installs it)");
        QTemporaryDir dir;
        const QString out = dir.filePath("digits");
        const QString why = makeSpokenDigitsOf("^festival-cs-krb$", out);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        // 12 takes of each digit, 32 other words, 2 background clips and a short sound; 42 raw
        // words.
        QCOMPARE(QDir(out).entryList({"*_*_*.wav"}, QDir::Files).size(), 12 * 10 + 32 + 2 + 1);
        const QStringList raw = QDir(out + "/.raw").entryList({"festival-cs-krb-*.wav"});
        QCOMPARE(raw.size(), 42);
        // The last two digits said and two other words, each against a festival of its own; the
        // digits as a Czech speaker writes down how English says them.
        QStringList others;
        for (const QString &f : raw) {
            const QString w = f.mid(16).chopped(4);
            if (!QStringList{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                             "nine"}
                     .contains(w))
                others << w;
        }
        QVERIFY(others.size() == 32);
        const QList<QPair<QString, QString>> words{{"eight", "ejt"},
                                                   {"nine", "najn"},
                                                   {others.first(), others.first()},
                                                   {others.last(), others.last()}};
        for (const auto &[word, said] : words) {
            QProcess alone;
            alone.start("text2wave", {"-eval", "(voice_czech_krb)", "-F", "16000", "-o",
                                      dir.filePath("alone.wav")});
            alone.write((said + "\n").toUtf8());
            alone.closeWriteChannel();
            QVERIFY(alone.waitForFinished(60000));
            QFile a(dir.filePath("alone.wav")), b(out + "/.raw/festival-cs-krb-" + word + ".wav");
            QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
            const QByteArray bytes = a.readAll();
            QVERIFY2(bytes.size() > 1000, qPrintable(word));
            QVERIFY2(bytes == b.readAll(), qPrintable(word + " differs from text2wave's"));
        }
        // No voice matches: said, exit 2.
        const QString none = makeSpokenDigitsOf("^no-such-voice$", dir.filePath("none"));
        QVERIFY2(none.contains("no voice matches"), qPrintable(none));
    }

    // flowbench-speak makes the recordings the espeak-ng and sox commands make, bit for bit:
    // espeak-ng's voices (a digit said as another accent says it, a made-up word, hard
    // negatives), flite's raw words through a microphone, a room and a noise floor, and the
    // background noise and short sounds. Both ways draw their random numbers (noise, dither)
    // as `sox -R` does, so that the files can be compared; none may be empty.
    void speakMakesWhatTheCommandsMake()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        QMap<QString, QByteArray> made[2];
        for (int way = 0; way < 2; ++way) {
            const QString out = dir.filePath(way == 0 ? "speak" : "commands");
            QProcess make;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            // Two of espeak-ng's voices (f4 has made-up hard negatives, Annie a real one), one
            // of flite's, and a made-up voice (whose variant espeak-ng reads from the script's
            // copy of its data folder; an unreadable one would be said in the accent's own
            // voice both ways, which the script checks for before it starts).
            env.insert("FLOWBENCH_SPOKEN_DIGITS_ONLY",
                       "^(espeak-en-029-f4|espeak-en-029-Annie|flite-kal16|espeak-en-us-fbv001)$");
            env.insert("FLOWBENCH_SPOKEN_DIGITS_REPEATABLE", "1");
            env.insert("FLOWBENCH_SPEAK", way == 0 ? QString(FLOWBENCH_SPEAK) : "none");
            make.setProcessEnvironment(env);
            make.start("bash", {kSource + "/scripts/make_spoken_digits.sh", out});
            QVERIFY(make.waitForFinished(600000));
            const QString err = QString::fromUtf8(make.readAllStandardError());
            QVERIFY2(make.exitCode() == 0, qPrintable(err));
            // The way it was made is the one asked for.
            QVERIFY2(err.contains(way == 0 ? QString("at a time, %1)").arg(FLOWBENCH_SPEAK)
                                           : QString("with the espeak-ng and sox commands")),
                     qPrintable(err));
            for (const QString &name : QDir(out).entryList({"*_*_*.wav"}, QDir::Files)) {
                QFile f(out + "/" + name);
                QVERIFY(f.open(QIODevice::ReadOnly));
                made[way][name] = f.readAll();
                QVERIFY2(made[way][name].size() > 44 + 2 * 4000, qPrintable(name + " is empty"));
            }
        }
        // 33 of each espeak-ng voice's (20 digits, 8 other words, 5 made-up), f4's word holding
        // a digit ("hate"), Annie's real word and 3 number words, flite's 152, the made-up
        // voice's 19 (10 digits, 4 other words, 5 made-up), 8 background clips, 4 short sounds
        // (background too, since 2026-12-07) and f4's 6 and Annie's 7 digits with one sound
        // more (since version 7 of the data set; f4's 12 made-up hard negatives until version 6).
        QCOMPARE(made[0].size(), 2 * 33 + 1 + 1 + 3 + 152 + 19 + 8 + 4 + 6 + 7);
        QCOMPARE(made[0].keys(), made[1].keys());
        int differ = 0;
        for (auto it = made[0].cbegin(); it != made[0].cend(); ++it)
            if (it.value() != made[1][it.key()]) {
                if (++differ <= 5) qWarning("differs: %s", qPrintable(it.key()));
            }
        QCOMPARE(differ, 0);
        // Not a program: said, exit 2.
        QProcess bad;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FLOWBENCH_SPEAK", dir.filePath("no-such-program"));
        bad.setProcessEnvironment(env);
        bad.start("bash", {kSource + "/scripts/make_spoken_digits.sh", dir.filePath("bad")});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("not a program"));
    }

    // Voices the data set does not have, drawn as its made-up ones are: `make_spoken_digits.sh
    // --made-up-voices DIR FIRST LAST` writes an espeak-ng data folder with fbvFIRST to fbvLAST,
    // which espeak-ng reads (a voice of its own, not the accent's), and
    // tests/make_listen_recording.sh's new-made-up voices (fbv241 to fbv260, each in the accent
    // the data set would give it) say a listening test's words through it.
    void madeUpVoicesBeyondTheDataSet()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        auto bash = [&](const QStringList &args, const QStringList &env = {}) {
            QProcess p;
            QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
            for (const QString &kv : env)
                e.insert(kv.section('=', 0, 0), kv.section('=', 1));
            p.setProcessEnvironment(e);
            p.start("bash", args);
            p.waitForFinished(120000);
            return std::pair{p.exitCode(),
                             QString::fromUtf8(p.readAll() + p.readAllStandardError())};
        };
        const QString script = kSource + "/scripts/make_spoken_digits.sh";
        const QString home = dir.filePath("voices");
        // On stdout, each voice as the data set names it, in the accent it would give it.
        const auto [made, listed] = bash({script, "--made-up-voices", home, "241", "246"});
        QCOMPARE(made, 0);
        QCOMPARE(listed, QString("en-us+fbv241\nen-gb-scotland+fbv242\nen-gb-x-rp+fbv243\n"
                                 "en-gb-x-gbclan+fbv244\nen-029+fbv245\nen-gb+fbv246\n"));
        const QString madeUp = home + "/espeak-ng-data/made-up";
        QCOMPARE(QDir(madeUp).entryList(QDir::Files),
                 QStringList({"fbv241", "fbv242", "fbv243", "fbv244", "fbv245", "fbv246"}));
        QFile variant(madeUp + "/fbv242");
        QVERIFY(variant.open(QIODevice::ReadOnly));
        const QByteArray text = variant.readAll();
        QVERIFY2(text.startsWith("language variant\nname fbv242\npitch ") &&
                     text.contains("\nformant 5 "),
                 text.constData());
        auto say = [&](const QString &voice) {
            QProcess p;
            QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
            e.insert("ESPEAK_DATA_PATH", home);
            p.setProcessEnvironment(e);
            p.start("espeak-ng", {"-v", voice, "--stdout", "one"});
            p.waitForFinished(60000);
            return p.readAllStandardOutput();
        };
        const QByteArray own = say("en-us+../../made-up/fbv242");
        QVERIFY(own.size() > 1000);
        QVERIFY2(own != say("en-us"), "espeak-ng said fbv242 in en-us's own voice");
        // espeak-ng's names for the data set's voices, which the listening recordings say too:
        // its en-gb says every variant in its own voice, so a British voice is en+VARIANT.
        const auto [named, names] = bash(
            {script, "--espeak-names", "en-gb+fbv246", "en-gb+m3", "en-us+fbv241", "en-us-nyc+f1"});
        QCOMPARE(named, 0);
        QCOMPARE(names, QString("en+../../made-up/fbv246\nen+m3\nen-us+../../made-up/fbv241\n"
                                "en-us-nyc+f1\n"));
        const QByteArray british = say("en+../../made-up/fbv246");
        QVERIFY(british.size() > 1000);
        QVERIFY2(british != say("en-gb") && british != say("en"),
                 "espeak-ng said en-gb+fbv246 in its accent's own voice");
        // Not a range: said, exit 2.
        for (const QStringList &bad : {QStringList{"--made-up-voices", home, "5"},
                                       QStringList{"--made-up-voices", home, "9", "3"},
                                       QStringList{"--made-up-voices", home, "0", "3"},
                                       QStringList{"--made-up-voices", home, "x", "3"}}) {
            const auto [code, out] = bash(QStringList{script} + bad);
            QCOMPARE(code, 2);
            QVERIFY2(out.contains("--made-up-voices DIR FIRST LAST"), qPrintable(out));
        }

        const QString wav = dir.filePath("rec.wav"), tsv = dir.filePath("rec.tsv");
        const auto [code, out] =
            bash({kSource + "/tests/make_listen_recording.sh", wav, tsv, "8", "7"},
                 {"FLOWBENCH_LISTEN_VOICES=new-made-up"});
        QVERIFY2(code == 0, qPrintable(out));
        QFile truth(tsv);
        QVERIFY(truth.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(truth.readAll()).trimmed().split('\n');
        QCOMPARE(lines.size(), 8);
        const QStringList accents{"en-gb",      "en-us",          "en-gb-scotland",
                                  "en-gb-x-rp", "en-gb-x-gbclan", "en-029"};
        static const QRegularExpression voice("^(.+)\\+fbv(\\d{3})$");
        for (const QString &line : lines) {
            const QRegularExpressionMatch m = voice.match(line.section('\t', 4));
            QVERIFY2(m.hasMatch(), qPrintable(line));
            const int number = m.captured(2).toInt();
            QVERIFY2(number >= 241 && number <= 260, qPrintable(line));
            QCOMPARE(m.captured(1), accents[number % 6]);
        }
        QVERIFY(QFileInfo(wav).size() > 8 * 16000);

        // Its quiet noise floor (pink, about -70 dBFS) runs to the end: no tenth of a second of
        // it is digital silence, which no microphone gives and the data set never has. Until
        // 2026-12-07 sox made the floor at its null input's 48 kHz and a length in samples came
        // out a third as long: two thirds of every recording was silence between the words, and
        // the example found 6 fewer of the test's 144 digits (listen-noise-before-eight-
        // 20261207.md).
        const auto samples = fb::data::readRecording(wav.toStdString(), 16000);
        QVERIFY2(samples.ok(), samples.ok() ? "" : samples.error().message.c_str());
        const std::vector<float> &x = samples.value();
        for (size_t at = 0; at + 1600 <= x.size(); at += 1600) {
            const double power = fb::data::powerAboutMean(x.data() + at, 1600);
            const double db = 10 * std::log10(std::max(power, 1e-20));
            QVERIFY2(db > -85, qPrintable(QString("%1 dBFS at %2 s of %3 s")
                                              .arg(db, 0, 'f', 1)
                                              .arg(double(at) / 16000)
                                              .arg(double(x.size()) / 16000)));
        }
    }

    // Stopped (the window's Cancel sends SIGTERM): the script stops handing out recordings,
    // nothing goes on making them afterwards, and no half-written file is left.
    void makeDataStopsOnSigterm()
    {
        if (const QString why = missingSpeechTools(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString out = dir.filePath("digits");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FLOWBENCH_PROGRESS_SECONDS", "0.2");
        p.setProcessEnvironment(env);
        p.setReadChannel(QProcess::StandardError); // the progress, for waitForReadyRead
        p.start(FLOWBENCH_CLI, {"make-data", "spoken-digits", "--out", out});
        QVERIFY(p.waitForStarted());
        QString err;
        static const QRegularExpression started("made [1-9][0-9]* of 19870");
        QElapsedTimer t;
        t.start();
        while (!err.contains(started) && t.elapsed() < 60000 && p.state() == QProcess::Running) {
            p.waitForReadyRead(200);
            err += QString::fromUtf8(p.readAllStandardError());
        }
        QVERIFY2(err.contains(started), qPrintable(err));
        p.terminate();
        QVERIFY(p.waitForFinished(10000));
        err += QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 1);
        const QJsonObject last =
            QJsonDocument::fromJson(p.readAllStandardOutput().trimmed().split('\n').last())
                .object();
        QCOMPARE(last["status"].toString(), QString("error"));
        QVERIFY2(last["error"]["message"].toString().contains("stopped"), qPrintable(err));
        // The recordings being made when it stopped were finished before it ended, and the
        // count it gave is what is there: none is added after.
        auto made = [&] { return QDir(out).entryList({"*_*_*.wav"}, QDir::Files); };
        const int kept = int(made().size());
        QVERIFY2(kept > 0 && kept < 19870, qPrintable(QString::number(kept)));
        static const QRegularExpression said("stopped with (\\d+) recordings");
        QCOMPARE(said.match(last["error"]["message"].toString()).captured(1).toInt(), kept);
        QTest::qWait(2000);
        QCOMPARE(int(made().size()), kept);
        QCOMPARE(QDir(out).entryList({"*.tmp.wav"}, QDir::Files), QStringList());
        QVERIFY(!QFile::exists(out + "/.complete"));
    }

    void makeDataSaysWhatIsMissing()
    {
        // The script's own list of what it needs (the one list: scripts/deps.sh installs it, the
        // CLI's hint and the .deb's Recommends take it when CMake configures).
        QProcess list;
        list.start("bash", {kSource + "/scripts/make_spoken_digits.sh", "--packages"});
        QVERIFY(list.waitForFinished(10000));
        QCOMPARE(list.exitCode(), 0);
        const QString packages = QString::fromUtf8(list.readAllStandardOutput()).trimmed();
        QVERIFY2(packages.startsWith("espeak-ng flite festival festvox-") &&
                     packages.contains(" festvox-ca-ona-hts ") && packages.endsWith(" sox"),
                 qPrintable(packages));
        // docs/setup.md's table of packages names every one.
        QFile setup(kSource + "/docs/setup.md");
        QVERIFY(setup.open(QIODevice::ReadOnly));
        const QString doc = QString::fromUtf8(setup.readAll());
        for (const QString &p : packages.split(' '))
            QVERIFY2(
                doc.contains(QRegularExpression("[` ]" + QRegularExpression::escape(p) + "[` ]")),
                qPrintable("docs/setup.md does not name " + p));

        QTemporaryDir empty;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("PATH", empty.path()); // no espeak-ng, flite, festival or sox
        const CliResult r =
            cli({"make-data", "spoken-digits", "--out", empty.filePath("digits")}, 60000, env);
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.summary["status"].toString(), QString("error"));
        for (const QString &text : {QString("espeak-ng, flite, festival and sox are missing"),
                                    "sudo apt install " + packages})
            QVERIFY2(r.err.contains(text) &&
                         r.summary["error"]["message"].toString().contains(text),
                     qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(empty.filePath("digits")));
    }

    void makeDataUsageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("no data set") << QStringList{"make-data"};
        QTest::newRow("unknown data set") << QStringList{"make-data", "cats"};
        QTest::newRow("unknown option") << QStringList{"make-data", "spoken-digits", "--fast"};
        QTest::newRow("no folder") << QStringList{"make-data", "spoken-digits", "--out"};
        QTest::newRow("voices") << QStringList{"make-data", "spoken-digits", "--voices", "0"};
        QTest::newRow("voices past the script's")
            << QStringList{"make-data", "spoken-digits", "--voices", "548"};
    }

    // The CLI's count of the script's voices (cli::kSpokenDigitsVoices) is the script's: it
    // takes 547 and refuses 548, and so does the script.
    void makeDataKnowsHowManyVoicesTheScriptHas()
    {
        const CliResult r = cli({"make-data", "spoken-digits", "--voices", "548"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("--voices needs a whole number from 1 to 547"), qPrintable(r.err));
        QTemporaryDir dir;
        QProcess script;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("FLOWBENCH_SPOKEN_DIGITS_VOICES", "548");
        script.setProcessEnvironment(env);
        // A group of its own: should the script take the count and start making recordings,
        // its workers are stopped with it instead of taking the cores from the tests after it.
        script.setChildProcessModifier([] { ::setpgid(0, 0); });
        script.start("bash", {kSource + "/scripts/make_spoken_digits.sh", dir.filePath("d")});
        QVERIFY(script.waitForStarted());
        const auto stop = qScopeGuard([&script] {
            if (script.state() != QProcess::NotRunning) ::kill(-script.processId(), SIGKILL);
        });
        QVERIFY(script.waitForFinished(60000));
        QCOMPARE(script.exitCode(), 2);
        const QString err = script.readAllStandardError();
        QVERIFY2(err.contains("FLOWBENCH_SPOKEN_DIGITS_VOICES must be 1 to 547, not '548'"),
                 qPrintable(err));
    }

    void makeDataUsageErrors()
    {
        QFETCH(QStringList, args);
        const CliResult r = cli(args);
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.summary["status"].toString(), QString("error"));
        QVERIFY(r.err.contains("Usage:"));
    }

    void trainsTheMlpToAStatedAccuracy()
    {
        QTemporaryDir dir;
        CliResult r = cli(smallRun(dir.path()));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject &s = r.summary;
        QCOMPARE(s["status"].toString(), QString("ok"));
        QCOMPARE(s["epochs"].toInt(), 2);
        QCOMPARE(s["steps"].toInt(), 2 * 24); // ceil(3000 / 128) per epoch
        QVERIFY(s["train_samples_per_s"].toDouble() > 0);
        QVERIFY(s["wall_s"].toDouble() > 0);
        QCOMPARE(s["device"].toString(), QString("cpu"));
        QCOMPARE(s["out_dir"].toString(), dir.path());
        // 3000 samples, 2 epochs: PyTorch's same model reaches about 0.80 here.
        QVERIFY2(s["test_accuracy"].toDouble() >= 0.72, qPrintable(r.out));
        QVERIFY(s["final_loss"].toDouble() > 0 && s["final_loss"].toDouble() < 1.0);
        QVERIFY(QFile::exists(dir.path() + "/model.safetensors"));
        QVERIFY(QFile::exists(dir.path() + "/checkpoints/step-00000048/checkpoint.safetensors"));
        QVERIFY(r.err.contains("epoch 2/2"));
        // The last evaluation, for a window that opens the run later.
        const QJsonObject evaluation = readJson(dir.path() + "/evaluation.json");
        QCOMPARE(evaluation["epoch"].toInt(), 2);
        const QJsonObject first = evaluation["evaluations"].toArray()[0].toObject();
        QCOMPARE(first["accuracy"].toDouble(), s["test_accuracy"].toDouble());
        QVERIFY(!first["misclassified"].toArray().isEmpty());
    }

    void evaluationImagesOfARandomTestChainAreStretched()
    {
        // A random stage (a flip that never flips) before the test data's normalize: the chain
        // cannot be undone, so each misclassified image is stretched to 0..255 instead.
        QTemporaryDir dir;
        QJsonObject doc = readJson(example("fashion_mnist_mlp.json"));
        QJsonArray nodes = doc["nodes"].toArray(), edges = doc["edges"].toArray();
        nodes.append(QJsonObject{
            {"id", "flip_test"}, {"type", "random_hflip"}, {"params", QJsonObject{{"p", 0.0}}}});
        for (int i = 0; i < edges.size(); ++i) {
            QJsonObject e = edges[i].toObject();
            if (e["from"] == "test_data.samples") {
                e["from"] = "flip_test.samples";
                edges[i] = e;
            }
        }
        edges.append(QJsonObject{{"from", "test_data.samples"}, {"to", "flip_test.samples"}});
        doc["nodes"] = nodes;
        doc["edges"] = edges;
        const QString path = dir.path() + "/flip.json";
        writeJson(path, doc);
        CliResult r =
            cli({"run", path, "--threads", "2", "--set", "train_data.limit=1000", "--set",
                 "test_data.limit=300", "--set", "train.epochs=1", "--out", dir.path() + "/run"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject e =
            readJson(dir.path() + "/run/evaluation.json")["evaluations"].toArray()[0].toObject();
        QCOMPARE(e["pixel_scale"].toString(), QString("min_max"));
        const QJsonArray gallery = e["misclassified"].toArray();
        QVERIFY(!gallery.isEmpty());
        for (const auto &x : gallery) {
            const QByteArray pixels =
                QByteArray::fromBase64(x.toObject()["pixels"].toString().toLatin1(),
                                       QByteArray::AbortOnBase64DecodingErrors);
            QCOMPARE(pixels.size(), 28 * 28);
            const auto [lo, hi] = std::minmax_element(
                reinterpret_cast<const uint8_t *>(pixels.constData()),
                reinterpret_cast<const uint8_t *>(pixels.constData()) + pixels.size());
            QCOMPARE(int(*lo), 0);
            QCOMPARE(int(*hi), 255);
        }
    }

    void sameSeedSameLossesOtherSeedOther()
    {
        QTemporaryDir a, b, c;
        auto withEvents = [](QStringList args, const QString &dir) {
            return args << "--events" << dir + "/events.jsonl";
        };
        CliResult ra = cli(withEvents(smallRun(a.path(), 1), a.path()));
        CliResult rb = cli(withEvents(smallRun(b.path(), 1), b.path()));
        QStringList other = smallRun(c.path(), 1);
        other << "--set"
              << "train.seed=7";
        CliResult rc = cli(other);
        QCOMPARE(ra.exitCode, 0);
        QCOMPARE(rb.exitCode, 0);
        QCOMPARE(rc.exitCode, 0);
        // The loss sequence as the event stream reports it (step -> running loss; progress
        // events are throttled by time, so each run reports a different subset of steps).
        auto losses = [](const QString &path) {
            QFile f(path);
            f.open(QIODevice::ReadOnly);
            QMap<int, double> out;
            for (const QByteArray &line : f.readAll().split('\n')) {
                const QJsonObject e = QJsonDocument::fromJson(line).object();
                if (e["type"].toString() == "progress")
                    out[e["step"].toInt()] = e["loss"].toDouble();
                if (e["type"].toString() == "epoch") out[-1] = e["train_loss"].toDouble();
            }
            return out;
        };
        const QMap<int, double> la = losses(a.path() + "/events.jsonl"),
                                lb = losses(b.path() + "/events.jsonl");
        int common = 0;
        for (auto it = la.begin(); it != la.end(); ++it) {
            if (!lb.contains(it.key())) continue;
            ++common;
            QCOMPARE(lb[it.key()], it.value());
        }
        QVERIFY2(common >= 2 && la.contains(-1), "the runs reported too few common steps");
        QCOMPARE(ra.summary["final_loss"].toDouble(), rb.summary["final_loss"].toDouble());
        QCOMPARE(ra.summary["test_accuracy"].toDouble(), rb.summary["test_accuracy"].toDouble());
        QVERIFY(ra.summary["final_loss"].toDouble() != rc.summary["final_loss"].toDouble());
    }

    void eventStreamFramesTheRunAndSamplesHardware()
    {
        QTemporaryDir dir;
        QStringList args = smallRun(dir.path(), 1);
        args << "--events" << dir.path() + "/events.jsonl";
        QCOMPARE(cli(args).exitCode, 0);
        QFile f(dir.path() + "/events.jsonl");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QList<QJsonObject> events;
        for (const QByteArray &line : f.readAll().split('\n'))
            if (!line.isEmpty()) events << QJsonDocument::fromJson(line).object();
        QVERIFY(events.size() >= 4);
        QCOMPARE(events.first()["type"].toString(), QString("run_start"));
        QCOMPARE(events.first()["version"].toInt(), 6);
        QCOMPARE(events.last()["type"].toString(), QString("summary"));
        int hardware = 0;
        for (const auto &e : events) {
            QVERIFY(e.contains("t"));
            if (e["type"].toString() != "hardware") continue;
            ++hardware;
            QVERIFY(e["cpu_percent"].toDouble() >= 0 && e["cpu_percent"].toDouble() <= 100);
            QVERIFY(!e["cpu_per_core"].toArray().isEmpty());
            QVERIFY(e["process_memory_bytes"].toDouble() > 0);
        }
        QVERIFY(hardware >= 1);
    }

    void resumeContinuesExactly()
    {
        QTemporaryDir full, part, other;
        CliResult whole = cli(smallRun(full.path(), 2));
        CliResult first = cli(smallRun(part.path(), 1));
        QCOMPARE(whole.exitCode, 0);
        QCOMPARE(first.exitCode, 0);
        QStringList resume = smallRun(part.path(), 2);
        resume << "--resume" << part.path();
        CliResult rest = cli(resume);
        QVERIFY2(rest.exitCode == 0, qPrintable(rest.err));
        QCOMPARE(rest.summary["final_loss"].toDouble(), whole.summary["final_loss"].toDouble());
        QCOMPARE(rest.summary["test_accuracy"].toDouble(),
                 whole.summary["test_accuracy"].toDouble());

        // A checkpoint of another pipeline is refused.
        QStringList foreign = {"run",      example("fashion_mnist_mlp.json"),
                               "--set",    "train_data.limit=3000",
                               "--set",    "fc1.out_features=64",
                               "--set",    "train.epochs=2",
                               "--out",    other.path(),
                               "--resume", part.path()};
        CliResult refused = cli(foreign);
        QVERIFY(refused.exitCode != 0);
        QVERIFY2(refused.summary["error"].toObject()["message"].toString().contains(
                     "different pipeline"),
                 qPrintable(refused.out));

        // Another learning rate is a changed pipeline too: refused, naming the way out; with
        // --accept-changes it resumes, saying what changed and that the run no longer matches.
        // (part holds epoch 2 now: `rest` resumed into it.)
        QStringList lower = smallRun(part.path() + "/lower", 3);
        lower << "--set"
              << "optimizer.lr=0.01"
              << "--resume" << part.path();
        CliResult again = cli(lower);
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(
            again.summary["error"].toObject()["message"].toString().contains("--accept-changes"),
            qPrintable(again.out));
        lower << "--accept-changes";
        CliResult changed = cli(lower);
        QVERIFY2(changed.exitCode == 0, qPrintable(changed.err));
        QVERIFY2(changed.err.contains("resuming a changed pipeline (optimizer.lr 0.05 -> 0.01)") &&
                     changed.err.contains("no longer matches an uninterrupted one"),
                 qPrintable(changed.err));
        QCOMPARE(changed.summary["steps"].toInt(), 3 * 24); // 3000 samples: 24 steps an epoch
    }

    // train.average_last: the model saved (and evaluated from the first of those epochs on) is the
    // mean of the weights at the end of each of the last share of the epochs, while training goes
    // on from the last weights; a resumed run keeps the mean in its checkpoints and ends as an
    // uninterrupted one does.
    void weightAveragingSavesTheMeanAndResumes()
    {
        QTemporaryDir full, part;
        // The last half of 3 epochs: 2 and 3 (ceil(1.5)); of 2 epochs, the second.
        const QStringList averaging = {"--set", "train.average_last=0.5", "--set",
                                       "train.keep_checkpoints=0"};
        const CliResult whole = cli(smallRun(full.path(), 3) + averaging);
        QVERIFY2(whole.exitCode == 0, qPrintable(whole.err));
        QVERIFY2(whole.err.contains("from epoch 2 on, the evaluations and the saved model are the "
                                    "mean of the weights"),
                 qPrintable(whole.err));
        auto read = [](const QString &path) {
            auto f = fb::io::readSafetensors(path.toStdString());
            if (!f.ok()) qFatal("%s", f.error().str().c_str());
            return std::move(f).value();
        };
        const fb::io::SafetensorsFile saved = read(full.path() + "/model.safetensors");
        QStringList steps = QDir(full.path() + "/checkpoints").entryList({"step-*"}, QDir::Dirs);
        steps.sort();
        QCOMPARE(steps.size(), 3); // epochs 1, 2 and 3
        const fb::io::SafetensorsFile second =
            read(full.path() + "/checkpoints/" + steps[1] + "/checkpoint.safetensors");
        const fb::io::SafetensorsFile third =
            read(full.path() + "/checkpoints/" + steps[2] + "/checkpoint.safetensors");
        QCOMPARE(QString::fromStdString(second.metadata.at("averaged")), QString("1"));
        QCOMPARE(QString::fromStdString(third.metadata.at("averaged")), QString("2"));
        double fromMean = 0, fromLast = 0;
        int tensors = 0;
        for (const auto &[name, t] : saved.tensors) {
            const fb::Tensor *a = second.find("model." + name), *b = third.find("model." + name);
            const fb::Tensor *mean = third.find("average." + name);
            QVERIFY2(a && b && mean, name.c_str());
            QCOMPARE(a->numel(), t.numel());
            for (int64_t i = 0; i < t.numel(); ++i) {
                const double want = (double(a->f32()[i]) + b->f32()[i]) / 2;
                fromMean = std::max(fromMean, std::abs(t.f32()[i] - want));
                fromLast = std::max(fromLast, double(std::abs(t.f32()[i] - b->f32()[i])));
                QCOMPARE(t.f32()[i], mean->f32()[i]); // the checkpoint's mean is the model's
            }
            ++tensors;
        }
        QCOMPARE(tensors, 6); // three layers' weights and biases
        QVERIFY2(fromMean < 1e-6, qPrintable(QString::number(fromMean)));
        QVERIFY2(fromLast > 1e-3, qPrintable(QString::number(fromLast))); // not the last weights

        // Two epochs, then one more from the checkpoint: the same mean, bit for bit.
        QVERIFY(cli(smallRun(part.path(), 2) + averaging).exitCode == 0);
        const CliResult rest =
            cli(smallRun(part.path(), 3) + averaging + QStringList{"--resume", part.path()});
        QVERIFY2(rest.exitCode == 0, qPrintable(rest.err));
        QCOMPARE(rest.summary["test_accuracy"].toDouble(),
                 whole.summary["test_accuracy"].toDouble());
        const fb::io::SafetensorsFile resumed = read(part.path() + "/model.safetensors");
        QCOMPARE(resumed.tensors.size(), saved.tensors.size());
        for (size_t k = 0; k < saved.tensors.size(); ++k)
            QVERIFY2(std::memcmp(resumed.tensors[k].second.raw(), saved.tensors[k].second.raw(),
                                 saved.tensors[k].second.bytes()) == 0,
                     saved.tensors[k].first.c_str());
    }

    void badPipelinesExitTwoNamingTheNode_data()
    {
        QTest::addColumn<QString>("mutation");
        QTest::addColumn<QString>("expected"); // substring of stderr
        QTest::newRow("unknown type") << "type:fc1=linearr"
                                      << "fc1";
        QTest::newRow("missing port") << "edge:relu1.out>fc2.input"
                                      << "fc2.input";
        QTest::newRow("missing node") << "edge:relu1.out>ghost.in"
                                      << "ghost";
        QTest::newRow("mismatched ports") << "edge:loss.loss>fc1.in"
                                          << "fc1.in";
        QTest::newRow("cycle") << "edge:fc2.out>flatten.in"
                               << "cycle";
        QTest::newRow("wrong param type") << "param:fc1.out_features=\"many\""
                                          << "fc1.out_features";
        QTest::newRow("out of range") << "param:train.batch_size=0"
                                      << "train.batch_size";
        QTest::newRow("newer version") << "version:2"
                                       << "newer";
        QTest::newRow("truncated") << "truncate"
                                   << "line";
    }
    void badPipelinesExitTwoNamingTheNode()
    {
        QFETCH(QString, mutation);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.path() + "/p.json";
        QJsonObject doc = readJson(example("fashion_mnist_mlp.json"));
        QJsonArray nodes = doc["nodes"].toArray(), edges = doc["edges"].toArray();
        const QString kind = mutation.section(':', 0, 0), arg = mutation.section(':', 1);
        if (kind == "type" || kind == "param") {
            const QString lhs = arg.section('=', 0, 0), rhs = arg.section('=', 1);
            for (int i = 0; i < nodes.size(); ++i) {
                QJsonObject n = nodes[i].toObject();
                if (n["id"].toString() != lhs.section('.', 0, 0)) continue;
                if (kind == "type")
                    n["type"] = rhs;
                else {
                    QJsonObject params = n["params"].toObject();
                    params[lhs.section('.', 1)] =
                        QJsonDocument::fromJson(("[" + rhs + "]").toUtf8()).array()[0];
                    n["params"] = params;
                }
                nodes[i] = n;
            }
        } else if (kind == "edge") {
            // Replace the edge into the same target port when there is one, else add.
            const QString from = arg.section('>', 0, 0), to = arg.section('>', 1);
            for (int i = 0; i < edges.size(); ++i)
                if (edges[i].toObject()["to"].toString() == to) edges.removeAt(i--);
            edges.append(QJsonObject{{"from", from}, {"to", to}});
        } else if (kind == "version") {
            doc["version"] = arg.toInt();
        }
        doc["nodes"] = nodes;
        doc["edges"] = edges;
        writeJson(path, doc);
        if (kind == "truncate") {
            QFile f(path);
            f.open(QIODevice::ReadWrite);
            f.resize(f.size() / 2);
        }
        for (const QString &cmd : {QString("validate"), QString("run")}) {
            QStringList args{cmd, path};
            if (cmd == "run") args << "--out" << dir.path() + "/out";
            CliResult r = cli(args);
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.contains(expected), qPrintable(cmd + ": " + r.err));
            if (cmd == "run") QCOMPARE(r.summary["status"].toString(), QString("error"));
        }
    }

    void badSettingExitsTwo()
    {
        CliResult r = cli({"run", example("fashion_mnist_mlp.json"), "--set", "train.epochs=abc"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("train.epochs"));
        r = cli({"run", example("fashion_mnist_mlp.json"), "--threads", "zero"});
        QCOMPARE(r.exitCode, 2);
        r = cli({"frobnicate"});
        QCOMPARE(r.exitCode, 2);
    }

    // Inputs that once crashed validate or run (SIGABRT, a terminate, SIGSEGV) or cut the message
    // short: each is refused before anything runs, exit 2, one problem line naming the culprit,
    // nothing raw that hides or reorders text.
    void badInputIsRefusedNeverACrash_data()
    {
        QTest::addColumn<QString>("kind");       // "param" (node.param=value), "deep" or "id"
        QTest::addColumn<QString>("arg");        // the setting, or the node id
        QTest::addColumn<QStringList>("expect"); // substrings of the problem line on stderr
        QTest::newRow("std rounds to 0 as a float")
            << "param"
            << "normalize.std=1e-50"
            << QStringList{"node 'normalize.std': normalize.std = 1e-50 is out of range",
                           "[1e-06, 1000000]"};
        QTest::newRow("mean beyond a float")
            << "param"
            << "normalize.mean=1e39"
            << QStringList{"node 'normalize.mean'", "out of range", "[-1000000, 1000000]"};
        QTest::newRow("100000 data workers")
            << "param"
            << "train.data_workers=100000"
            << QStringList{"node 'train.data_workers'", "= 100000 is out of range", "[0, 256]"};
        QTest::newRow("100000 levels of nesting")
            << "deep"
            << "" << QStringList{"p.json:", "more than 64 levels deep", "at most 64 levels"};
        QTest::newRow("NUL in an id") << "id" << QString("a") + QChar(0) + "b"
                                      << QStringList{"node 'a\\x00b': invalid node id 'a\\x00b'"};
        QTest::newRow("right-to-left override in an id")
            << "id" << QString::fromUtf8("\u202Eevil")
            << QStringList{"node '\\u{202E}evil': invalid node id '\\u{202E}evil'"};
    }
    void badInputIsRefusedNeverACrash()
    {
        QFETCH(QString, kind);
        QFETCH(QString, arg);
        QFETCH(QStringList, expect);
        QTemporaryDir dir;
        const QString path = dir.filePath("p.json");
        QJsonObject doc = readJson(example("fashion_mnist_mlp.json"));
        QStringList settings; // for run: the same problem given on the command line
        if (kind == "param") {
            // validate reads it from the file.
            const QString node = arg.section('.', 0, 0),
                          name = arg.section('.', 1).section('=', 0, 0);
            const QJsonValue value =
                QJsonDocument::fromJson(("[" + arg.section('=', 1) + "]").toUtf8()).array()[0];
            QJsonArray nodes = doc["nodes"].toArray();
            for (int i = 0; i < nodes.size(); ++i) {
                QJsonObject n = nodes[i].toObject();
                if (n["id"].toString() != node) continue;
                QJsonObject params = n["params"].toObject();
                params[name] = value;
                n["params"] = params;
                nodes[i] = n;
            }
            doc["nodes"] = nodes;
            settings << "--set" << arg;
        } else if (kind == "id") {
            QJsonArray nodes = doc["nodes"].toArray();
            nodes.append(QJsonObject{{"id", arg}, {"type", "mse"}}); // no inputs to leave open
            doc["nodes"] = nodes;
        }
        QByteArray text = QJsonDocument(doc).toJson();
        if (kind == "deep") { // an unknown field, kept on save, nested 100000 levels deep
            text = text.trimmed();
            text.chop(1);
            text += ", \"deep\": " + QByteArray(100000, '[') + QByteArray(100000, ']') + "}\n";
        }
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
        f.close();

        const QStringList validate{"validate", path};
        const QStringList runFile{"run", path, "--out", dir.filePath("out")};
        QStringList runSet{"run", example("fashion_mnist_mlp.json"), "--out", dir.filePath("out")};
        runSet << settings;
        QList<QStringList> commands{validate, runFile};
        if (!settings.isEmpty()) commands << runSet;
        for (const QStringList &args : commands) {
            const QString what = (args == runSet ? "run --set " + arg : args[0]);
            CliResult r = cli(args);
            QVERIFY2(r.exitCode == 2,
                     qPrintable(what + QString(": exit %1; ").arg(r.exitCode) + r.err.right(2000)));
            const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
            QVERIFY2(!lines.isEmpty(), qPrintable(what));
            if (args[0] == "validate") { // the problem, then "p.json: 1 problem"
                QCOMPARE(lines.size(), 2);
                QVERIFY2(lines[1].endsWith("p.json: 1 problem"), qPrintable(lines[1]));
            } else {
                QCOMPARE(r.summary["status"].toString(), QString("error"));
                QVERIFY2(!r.summary["error"].toObject()["message"].toString().isEmpty(),
                         qPrintable(r.out));
                QVERIFY2(!QFile::exists(dir.filePath("out") + "/model.safetensors"),
                         qPrintable(what));
            }
            for (const QString &e : expect)
                QVERIFY2(lines[0].contains(e), qPrintable(what + ": " + lines[0]));
            for (const QString &output : {r.err, r.out})
                QVERIFY2(!output.contains(QChar(0)) && !output.contains(QChar(0x202E)),
                         qPrintable(what + ": raw NUL or U+202E in its output"));
        }
    }

    void usageErrorsOfRunStillPrintTheSummary()
    {
        for (const QStringList &args :
             {QStringList{"run", example("fashion_mnist_mlp.json"), "--events", "/dev/null/e"},
              QStringList{"run", example("fashion_mnist_mlp.json"), "--bogus"},
              QStringList{"run"}}) {
            CliResult r = cli(args);
            QCOMPARE(r.exitCode, 2);
            QCOMPARE(r.summary["status"].toString(), QString("error"));
            QVERIFY(!r.summary["error"].toObject()["message"].toString().isEmpty());
        }
    }

    void divergingLastStepIsAFailedRun()
    {
        // One epoch: the weights break in the last updates, after the last finite loss. The
        // largest learning rate allowed, on pixels divided by 0.001 instead of 0.353.
        QTemporaryDir dir;
        CliResult r =
            cli({"run", example("fashion_mnist_mlp.json"), "--set", "train_data.limit=300", "--set",
                 "test_data.limit=100", "--set", "optimizer.lr=10", "--set", "normalize.std=0.001",
                 "--set", "train.epochs=1", "--out", dir.path()});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.summary["status"].toString(), QString("error"));
        QVERIFY2(r.summary["error"].toObject()["message"].toString().contains("NaN"),
                 qPrintable(r.out));
        // The summary counts the steps that ran (300 samples, batch 128), not 0.
        QCOMPARE(r.summary["steps"].toInt(), 3);
        // No checkpoint holds the broken weights.
        QVERIFY(QDir(dir.path() + "/checkpoints")
                    .entryList(QDir::Dirs | QDir::NoDotAndDotDot)
                    .isEmpty());
    }

    // The per-step check reads only the loss; a checkpoint written after the update that broke
    // the weights could only fail on resume. One linear layer whose weights an L2 penalty larger
    // than the learning rate allows multiplies by -9 a step (w -= 10 * (g + 1 * w)): after 41
    // steps they overflow while the inputs, divided by 100, keep the loss of that step finite.
    void divergedWeightsAreNeverCheckpointed()
    {
        QTemporaryDir dir;
        QJsonObject pipeline = readJson(example("fashion_mnist_mlp.json"));
        const QStringList hidden{"fc1", "relu1", "fc2", "relu2"};
        QJsonArray nodes, edges;
        for (const QJsonValue &n : pipeline["nodes"].toArray())
            if (!hidden.contains(n["id"].toString())) nodes.append(n);
        for (const QJsonValue &e : pipeline["edges"].toArray())
            if (!hidden.contains(e["from"].toString().section('.', 0, 0)) &&
                !hidden.contains(e["to"].toString().section('.', 0, 0)))
                edges.append(e);
        edges.append(QJsonObject{{"from", "flatten.out"}, {"to", "fc3.in"}});
        pipeline["nodes"] = nodes;
        pipeline["edges"] = edges;
        const QString file = dir.filePath("linear.json");
        writeJson(file, pipeline);
        const QString out = dir.filePath("run");
        QStringList run{"run", file, "--out", out};
        for (const char *set :
             {"train_data.limit=4000", "test_data.limit=100", "optimizer.lr=10",
              "optimizer.weight_decay=1", "optimizer.momentum=0", "normalize.std=100",
              "train.batch_size=32", "train.checkpoint_steps=1"})
            run << "--set" << set;
        CliResult r = cli(run);
        QCOMPARE(r.exitCode, 1);
        const QJsonObject error = r.summary["error"].toObject();
        QCOMPARE(error["node"].toString(), QString("optimizer"));
        const QString msg = error["message"].toString();
        QVERIFY2(msg.startsWith("the weights became NaN or infinite by step ") &&
                     msg.contains("('model.fc3.weight'); no checkpoint was written for it"),
                 qPrintable(r.out));
        // The loss of the breaking step was finite, so the summary counts it.
        const int broken = msg.section("by step ", 1).section(' ', 0, 0).toInt();
        QVERIFY2(broken > 30, qPrintable(msg));
        QCOMPARE(r.summary["steps"].toInt(), broken);
        // Every step before it left a checkpoint; the last of them is named, and resumes.
        const QString last = QString("step-%1").arg(broken - 1, 8, 10, QChar('0'));
        QVERIFY2(msg.contains("last whole checkpoint: " + out + "/checkpoints/" + last),
                 qPrintable(msg));
        const QStringList kept =
            QDir(out + "/checkpoints").entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        QVERIFY2(!kept.isEmpty() && kept.last() == last, qPrintable(kept.join(' ')));
        auto resume = [&](const QString &from) { return cli(run + QStringList{"--resume", from}); };
        // The same pipeline breaks at the same step again: the checkpoint itself was whole.
        CliResult resumed = resume(out + "/checkpoints/" + last);
        QCOMPARE(resumed.exitCode, 1);
        QCOMPARE(resumed.summary["error"].toObject()["message"].toString(), msg);
        // From an older one: the later checkpoint moves aside first, and is written again.
        const QString older = QString("step-%1").arg(broken - 3, 8, 10, QChar('0'));
        CliResult again = resume(out + "/checkpoints/" + older + "/");
        QCOMPARE(again.summary["error"].toObject()["message"].toString(), msg);
        const QStringList aside =
            QDir(out).entryList({"earlier-*"}, QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(aside.size(), 1);
        QVERIFY(QFile::exists(out + "/" + aside[0] + "/checkpoints/" + last));
        QCOMPARE(QDir(out + "/checkpoints")
                     .entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)
                     .size(),
                 2);
    }

    // A new run into a folder that holds another run's checkpoints: they move aside (still
    // resumable), and the new run's checkpoints and errors are its own.
    void reusedOutputFolderKeepsTheEarlierRunApart()
    {
        QTemporaryDir dir;
        QCOMPARE(cli(smallRun(dir.path(), 1)).exitCode, 0);
        QStringList other = smallRun(dir.path(), 1);
        other << "--set"
              << "fc1.out_features=64";
        CliResult r = cli(other);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("held the checkpoints of an earlier run"), qPrintable(r.err));
        const QStringList earlier =
            QDir(dir.path()).entryList({"earlier-*"}, QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(earlier.size(), 1);
        const QString aside = dir.path() + "/" + earlier.front();
        QVERIFY(QFile::exists(aside + "/pipeline.json"));
        QCOMPARE(QDir(aside + "/checkpoints").entryList({"step-*"}).size(), 1);
        QCOMPARE(QDir(dir.path() + "/checkpoints").entryList({"step-*"}).size(), 1);
        // The earlier run still resumes from where it went.
        QStringList resume = smallRun(dir.path() + "/continued", 2);
        resume << "--resume" << aside;
        CliResult cont = cli(resume);
        QVERIFY2(cont.exitCode == 0, qPrintable(cont.err));
    }

    void resumingAFinishedRunSaysSo()
    {
        QTemporaryDir dir;
        QCOMPARE(cli(smallRun(dir.path(), 1)).exitCode, 0);
        QStringList again = smallRun(dir.path() + "/again", 1);
        again << "--resume" << dir.path();
        CliResult r = cli(again);
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.summary["error"].toObject()["node"].toString(), QString("train.epochs"));
        QVERIFY(r.summary["error"].toObject()["message"].toString().contains("nothing left"));
    }

    void shapeMismatchNamesTheLayer()
    {
        QTemporaryDir dir;
        writeCnnWithoutFlatten(dir.path() + "/p.json");
        CliResult r = cli({"run", dir.path() + "/p.json", "--out", dir.path() + "/out"});
        QCOMPARE(r.exitCode, 2);
        const QJsonObject err = r.summary["error"].toObject();
        QCOMPARE(err["node"].toString(), QString("fc1"));
        QVERIFY2(err["message"].toString().contains("[64, 7, 7]"), qPrintable(r.out));
    }

    // `summary`: the table for people, JSON for programs (the window's Model Summary view sends
    // its unsaved pipeline on stdin), --measure times steps, and a pipeline at fault is named in
    // JSON too.
    void summaryPrintsTheModelBeforeItTrains()
    {
        const CliResult text = cli({"summary", "fashion_mnist_cnn"});
        QCOMPARE(text.exitCode, 0);
        for (const char *t : {"conv2", "421,642", "dominant layer: conv2", "training memory"})
            QVERIFY2(text.out.contains(t), qPrintable(text.out));

        QFile f(example("fashion_mnist_cnn.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QProcess p;
        p.start(FLOWBENCH_CLI, {"summary", "-", "--json", "--batch", "64", "--measure", "--device",
                                "cpu", "--threads", "1", "--steps", "2"});
        p.write(f.readAll());
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(j["status"].toString(), QString("ok"));
        QCOMPARE(j["batch"].toInt(), 64);
        QCOMPARE(j["totals"].toObject()["parameters"].toInt(), 421642);
        QCOMPARE(j["totals"].toObject()["forward_flops"].toDouble(), 64.0 * 8595466);
        const QJsonArray measured = j["measured"].toArray();
        QCOMPARE(measured.size(), 1);
        QCOMPARE(measured[0].toObject()["device"].toString(), QString("cpu"));
        QCOMPARE(measured[0].toObject()["steps"].toInt(), 2);
        QVERIFY(measured[0].toObject()["gflops"].toDouble() > 0);

        QTemporaryDir dir;
        writeCnnWithoutFlatten(dir.path() + "/p.json");
        const CliResult bad = cli({"summary", dir.path() + "/p.json", "--json"});
        QCOMPARE(bad.exitCode, 2);
        QCOMPARE(bad.summary["status"].toString(), QString("error"));
        QCOMPARE(bad.summary["error"].toObject()["node"].toString(), QString("fc1"));
        const CliResult usage = cli({"summary", "--batch", "0", "fashion_mnist_cnn"});
        QCOMPARE(usage.exitCode, 2);
        QVERIFY(usage.err.contains("--batch needs a whole number"));
    }

    // A model that cannot fit in memory is refused before anything large is allocated, naming
    // the node and the sizes: its weights alone (fc1 reading 65536 x 7 x 7 features into 65536
    // units: 840 GB), or a training batch's activations (conv1 with 65536 channels on a batch of
    // 65536: petabytes). Either way exit 2, as bad input, not a crash or a run killed later.
    void modelsTooLargeForMemoryAreRefusedByName_data()
    {
        QTest::addColumn<QStringList>("sets");
        QTest::addColumn<QString>("node");
        QTest::addColumn<QStringList>("expect");
        QTest::newRow("weights") << QStringList{"conv2.out_channels=65536",
                                                "fc1.out_features=65536"}
                                 << "fc1"
                                 << QStringList{"too large for this machine's memory", "parameters",
                                                "[3211264]", "available"};
        QTest::newRow("activations")
            << QStringList{"conv1.out_channels=65536", "train.batch_size=65536"} << "conv1"
            << QStringList{"training a batch of 65536 needs at least", "TiB",
                           "its output [65536, 65536, 28, 28] and its gradient",
                           "Lower train.batch_size or make conv1 smaller"};
    }
    void modelsTooLargeForMemoryAreRefusedByName()
    {
        QFETCH(QStringList, sets);
        QFETCH(QString, node);
        QFETCH(QStringList, expect);
        QTemporaryDir dir;
        QStringList args{"run",   example("fashion_mnist_cnn.json"),
                         "--out", dir.path() + "/out",
                         "--set", "train_data.limit=256",
                         "--set", "test_data.limit=256"};
        for (const QString &s : sets)
            args << "--set" << s;
        CliResult r = cli(args);
        QVERIFY2(r.exitCode == 2,
                 qPrintable(QString("exit %1: ").arg(r.exitCode) + r.err.right(2000)));
        const QJsonObject err = r.summary["error"].toObject();
        QCOMPARE(err["node"].toString(), node);
        for (const QString &e : expect)
            QVERIFY2(err["message"].toString().contains(e), qPrintable(err["message"].toString()));
    }

    void damagedDataNamesTheFile_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::newRow("truncated images") << "truncate";
        QTest::newRow("garbage images") << "garbage";
        QTest::newRow("missing images") << "missing";
        QTest::newRow("labels of another count") << "labels";
        QTest::newRow("a label of 255") << "label255"; // blamed on the data, not the last layer
    }
    void damagedDataNamesTheFile()
    {
        QFETCH(QString, damage);
        QTemporaryDir dir;
        for (const char *f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                              "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"})
            QVERIFY(QFile::copy(kData + "/" + f, dir.path() + "/" + f));
        const QString images = dir.path() + "/train-images-idx3-ubyte.gz";
        if (damage == "truncate") {
            QFile f(images);
            QFile::setPermissions(images, QFile::ReadOwner | QFile::WriteOwner);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.resize(f.size() / 3));
        } else if (damage == "garbage") {
            QFile::setPermissions(images, QFile::ReadOwner | QFile::WriteOwner);
            QFile f(images);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(5000, 'x'));
        } else if (damage == "missing") {
            QVERIFY(QFile::remove(images));
        } else if (damage == "label255") {
            // The labels uncompressed (the reader takes either), sample 17's made 255.
            const QString gz = dir.path() + "/train-labels-idx1-ubyte.gz";
            QProcess gunzip;
            gunzip.start("gzip", {"-dc", gz});
            QVERIFY(gunzip.waitForFinished(30000));
            QByteArray bytes = gunzip.readAllStandardOutput();
            QCOMPARE(bytes.size(), 8 + 60000);
            bytes[8 + 17] = char(255);
            QFile::setPermissions(gz, QFile::ReadOwner | QFile::WriteOwner);
            QVERIFY(QFile::remove(gz));
            QFile plain(dir.path() + "/train-labels-idx1-ubyte");
            QVERIFY(plain.open(QIODevice::WriteOnly));
            plain.write(bytes);
        } else {
            const QString labels = dir.path() + "/train-labels-idx1-ubyte.gz";
            QFile::setPermissions(labels, QFile::ReadOwner | QFile::WriteOwner);
            QVERIFY(QFile::remove(labels));
            QVERIFY(QFile::copy(kData + "/t10k-labels-idx1-ubyte.gz", labels));
        }
        CliResult r = cli({"run", example("fashion_mnist_mlp.json"), "--set",
                           "train_data.path=" + dir.path(), "--out", dir.path() + "/out"});
        QVERIFY2(r.exitCode == 1 || r.exitCode == 2, qPrintable(r.err));
        const QJsonObject err = r.summary["error"].toObject();
        QCOMPARE(err["node"].toString(), QString("train_data"));
        if (damage == "label255") {
            QVERIFY2(err["message"].toString().contains("sample 17, label 255"), qPrintable(r.out));
            return;
        }
        QVERIFY2(err["message"].toString().contains("train-") ||
                     err["file"].toString().contains("train-"),
                 qPrintable(r.out));
    }

    // An image folder with a file that is not an image: the run goes on, and the event stream's
    // warning carries the node (the window's log shows it in its Node column). The images are
    // PGM, written here byte by byte.
    void skippedImagesAreNamedInTheStream()
    {
        QTemporaryDir dir;
        for (int c = 0; c < 2; ++c) {
            for (int i = 0; i < 6; ++i) {
                fixture::writePgm(dir.filePath(QString("pics/c%1/%2.pgm").arg(c).arg(i)), 4, 4,
                                  QByteArray(16, char(c ? 200 : 40 + i)));
            }
        }
        fixture::writePgm(dir.filePath("pics/c1/broken.pgm"), 4, 4, {}); // the header, then nothing
        fixture::writeImageFolderPipeline(
            dir.filePath("pics.json"),
            QJsonObject{
                {"path", dir.filePath("pics")}, {"subset", "all"}, {"height", 4}, {"width", 4}},
            2);
        const CliResult r = cli({"run", dir.filePath("pics.json"), "--device", "cpu", "--set",
                                 "train.epochs=1", "--events", dir.filePath("events.jsonl")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("warning: node 'train_data': skipped 1 of 13 files that are not "
                                "readable images: c1/broken.pgm ("),
                 qPrintable(r.err));
        QFile f(dir.filePath("events.jsonl"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QStringList nodesWarned;
        for (const QByteArray &line : f.readAll().split('\n')) {
            const QJsonObject e = QJsonDocument::fromJson(line).object();
            if (e["type"].toString() == "log" && e["level"].toString() == "warning" &&
                e["message"].toString().contains("c1/broken.pgm"))
                nodesWarned << e["node"].toString();
        }
        QCOMPARE(nodesWarned, (QStringList{"train_data", "test_data"}));
    }

    // File and folder names that are not UTF-8 (a class folder "a\xFF", an unreadable
    // "bad\xFE.pgm"): the run used to end with exit 1 and the JSON library's "invalid UTF-8 byte";
    // every JSON written must survive any byte in a name.
    void namesThatAreNotUtf8()
    {
        QTemporaryDir dir;
        const std::string root = dir.path().toStdString() + "/pics";
        const std::string odd = root + "/a\xff", plain = root + "/b";
        QVERIFY(::mkdir(root.c_str(), 0755) == 0 && ::mkdir(odd.c_str(), 0755) == 0 &&
                ::mkdir(plain.c_str(), 0755) == 0);
        auto write = [](const std::string &path, const std::string &bytes) {
            FILE *f = std::fopen(path.c_str(), "wb");
            if (!f) return false;
            std::fwrite(bytes.data(), 1, bytes.size(), f);
            return std::fclose(f) == 0;
        };
        for (int i = 0; i < 6; ++i) {
            QVERIFY(write(odd + "/" + std::to_string(i) + ".pgm",
                          "P5\n4 4\n255\n" + std::string(16, char(30 + i))));
            QVERIFY(write(plain + "/" + std::to_string(i) + ".pgm",
                          "P5\n4 4\n255\n" + std::string(16, char(200 + i))));
        }
        QVERIFY(write(plain + "/bad\xfe.pgm", "P5\n4 4\n255\n")); // the header, no pixels
        fixture::writeImageFolderPipeline(
            dir.filePath("pics.json"),
            QJsonObject{
                {"path", dir.filePath("pics")}, {"subset", "all"}, {"height", 4}, {"width", 4}},
            2);
        const CliResult r =
            cli({"run", dir.filePath("pics.json"), "--device", "cpu", "--set", "train.epochs=1",
                 "--events", dir.filePath("events.jsonl"), "--out", dir.filePath("run")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("b/bad\\xFE.pgm"), qPrintable(r.err));
        QFile f(dir.filePath("events.jsonl"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        for (const QByteArray &line : f.readAll().split('\n'))
            if (!line.isEmpty())
                QVERIFY2(!QJsonDocument::fromJson(line).isNull(), line.constData());
        // infer answers every input, the odd one too.
        // Through sh: a QString argument cannot carry the byte 0xFE itself.
        QProcess p;
        p.start("/bin/sh",
                {"-c", "exec \"$0\" infer \"$1\" \"$2$(printf '\\380').pgm\" \"$3\"", FLOWBENCH_CLI,
                 dir.filePath("run"), dir.filePath("pics/b/bad"), dir.filePath("pics/b/1.pgm")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.readAllStandardOutput().count('\n'), 2);
    }

    // Symbolic links that cannot be followed inside an image folder (a loop, a link to nowhere,
    // and a class folder that links to itself) stopped the run with "internal error: filesystem
    // error"; now each is skipped like any unreadable file, named in the warning.
    void symlinkLoopsAreSkippedLikeUnreadableFiles()
    {
        QTemporaryDir dir;
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < 6; ++i)
                fixture::writePgm(dir.filePath(QString("pics/c%1/%2.pgm").arg(c).arg(i)), 4, 4,
                                  QByteArray(16, char(c ? 200 : 40 + i)));
        QVERIFY(QFile::link("loop2.pgm", dir.filePath("pics/c0/loop1.pgm")));
        QVERIFY(QFile::link("loop1.pgm", dir.filePath("pics/c0/loop2.pgm")));
        QVERIFY(QFile::link("nowhere.pgm", dir.filePath("pics/c1/dangling.pgm")));
        QVERIFY(QFile::link("../c1", dir.filePath("pics/c1/again")));
        QVERIFY(QFile::link("selfloop", dir.filePath("pics/selfloop")));
        fixture::writeImageFolderPipeline(
            dir.filePath("pics.json"),
            QJsonObject{
                {"path", dir.filePath("pics")}, {"subset", "all"}, {"height", 4}, {"width", 4}},
            2);
        const CliResult r = cli({"run", dir.filePath("pics.json"), "--device", "cpu", "--set",
                                 "train.epochs=1", "--events", dir.filePath("events.jsonl")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("skipped 3 of 15 files") && r.err.contains("c0/loop1.pgm") &&
                     r.err.contains("c1/dangling.pgm"),
                 qPrintable(r.err));
    }

    // A model whose saved preprocessing or pipeline is damaged (a std of 0, an unknown transform,
    // an absurd height, a pipeline with a bad parameter) is refused with exit 2 naming the file,
    // before anything is built from it; `infer` used to abort on the first two.
    void damagedSavedPreprocessingIsRefused_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("expected");
        QTest::newRow("std 0") << "std0"
                               << ".std = 0 is out of range";
        QTest::newRow("unknown transform") << "type"
                                           << "is not a transform";
        QTest::newRow("huge height") << "height"
                                     << "height";
        QTest::newRow("transforms not a list") << "list"
                                               << "not a list";
        QTest::newRow("bad saved pipeline") << "pipeline"
                                            << "saved pipeline is damaged";
        // The file itself: weights that are not numbers, a flipped bit, a header length one
        // byte short (safetensors has no checksum; ours is in the metadata).
        QTest::newRow("infinite weights") << "inf"
                                          << "holds NaN or infinite values";
        QTest::newRow("a flipped bit") << "bit"
                                       << "does not match its checksum";
        QTest::newRow("header one byte short") << "short"
                                               << "bytes but the data section has";
        QTest::newRow("class counts that are no numbers") << "counts"
                                                          << "its saved class_counts is damaged";
        QTest::newRow("a class count short") << "counts1"
                                             << "its saved class_counts is damaged";
        // Found by fuzz_model: finite weights of 2e37 overflow to infinite scores, which gave
        // NaN probabilities; the input is answered with an error instead (exit 1, as for any
        // input that cannot be predicted).
        QTest::newRow("weights that overflow") << "huge"
                                               << "the model's scores for it are not numbers";
    }
    void damagedSavedPreprocessingIsRefused()
    {
        QFETCH(QString, damage);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < 4; ++i)
                fixture::writePgm(dir.filePath(QString("pics/c%1/%2.pgm").arg(c).arg(i)), 4, 4,
                                  QByteArray(16, char(c ? 200 : 40 + i)));
        fixture::writeImageFolderPipeline(
            dir.filePath("pics.json"),
            QJsonObject{
                {"path", dir.filePath("pics")}, {"subset", "all"}, {"height", 4}, {"width", 4}},
            2);
        QCOMPARE(cli({"run", dir.filePath("pics.json"), "--device", "cpu", "--set",
                      "train.epochs=1", "--out", dir.filePath("run")})
                     .exitCode,
                 0);
        // Rewrite the safetensors header's metadata: 8 bytes of length, the JSON, the data.
        QFile f(dir.filePath("run/model.safetensors"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        f.close();
        quint64 n = 0;
        std::memcpy(&n, bytes.constData(), 8);
        QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, int(n))).object();
        QJsonObject meta = header["__metadata__"].toObject();
        QJsonObject pre =
            QJsonDocument::fromJson(meta["preprocessing"].toString().toUtf8()).object();
        QJsonArray transforms = pre["transforms"].toArray();
        QJsonObject first = transforms[0].toObject();
        QJsonObject params = first["params"].toObject();
        if (damage == "std0") params["std"] = 0;
        if (damage == "type") first["type"] = "frobnicate";
        if (damage == "height") pre["height"] = 2000000000;
        first["params"] = params;
        transforms[0] = first;
        pre["transforms"] = transforms;
        if (damage == "list") pre["transforms"] = "normalize";
        meta["preprocessing"] =
            QString::fromUtf8(QJsonDocument(pre).toJson(QJsonDocument::Compact));
        if (damage == "inf" || damage == "huge")
            meta.remove("flowbench_data_crc32"); // as an older file: no sum
        if (damage == "counts") meta["class_counts"] = "[4, \"x\"]";
        if (damage == "counts1") meta["class_counts"] = "[8]";
        if (damage == "pipeline")
            meta["pipeline"] = meta["pipeline"].toString().replace("\"lr\": 0.05", "\"lr\": -1");
        header["__metadata__"] = meta;
        QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
        // At least one space of padding, so that a header one byte short is still whole JSON.
        json.append(' ');
        while (json.size() % 8)
            json.append(' ');
        const quint64 old = n;
        n = quint64(json.size());
        QByteArray data = bytes.mid(8 + int(old));
        if (damage == "inf") {
            const float inf = std::numeric_limits<float>::infinity();
            std::memcpy(data.data(), &inf, sizeof inf);
        }
        if (damage == "huge") {
            const float huge = 2e37f;
            for (int i = 0; i + 4 <= data.size(); i += 4)
                std::memcpy(data.data() + i, &huge, sizeof huge);
        }
        if (damage == "bit") data[5] = char(data[5] ^ 0x10);
        if (damage == "short") n -= 1;
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(reinterpret_cast<const char *>(&n), 8) + json + data);
        f.close();
        const CliResult r = cli({"infer", dir.filePath("run"), dir.filePath("pics/c0/0.pgm")});
        if (damage == "huge") {
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("0.pgm") && r.err.contains(expected), qPrintable(r.err));
            QVERIFY2(!r.out.contains("nan") && !r.out.contains("null,"), qPrintable(r.out));
            return;
        }
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("model.safetensors") && r.err.contains(expected),
                 qPrintable(r.err));
    }

    // A trained model tried through `infer` on the files it was evaluated on gives exactly the
    // evaluation's predictions: the preprocessing saved with the model (decode, resize with
    // padding, normalize) is the one the run applied. Grey PGM images, written here, of three
    // classes that overlap, so that the model makes mistakes to reproduce too.
    void inferReproducesTheEvaluation()
    {
        QTemporaryDir dir;
        QStringList files;
        QList<int> truth;
        uint32_t state = 7;
        auto noise = [&state] {
            state = state * 1664525u + 1013904223u;
            return int((state >> 24) % 121) - 60;
        };
        for (int c = 0; c < 3; ++c) {
            for (int i = 0; i < 30; ++i) {
                const int w = i % 2 ? 10 : 8, h = 8; // some wider: padded, not stretched
                const QString path =
                    dir.filePath(QString("pics/c%1/%2.pgm").arg(c).arg(i, 2, 10, QChar('0')));
                QByteArray px(w * h, 0);
                for (auto &v : px)
                    v = char(std::clamp(118 + 10 * c + noise(), 0, 255));
                fixture::writePgm(path, w, h, px);
                files << path;
                truth << c;
            }
        }
        fixture::writeImageFolderPipeline(dir.filePath("pics.json"),
                                          QJsonObject{{"path", dir.filePath("pics")},
                                                      {"subset", "all"},
                                                      {"height", 8},
                                                      {"width", 8},
                                                      {"resize", "pad"}},
                                          3);
        const QString out = dir.filePath("run");
        const CliResult run = cli({"run", dir.filePath("pics.json"), "--device", "cpu", "--set",
                                   "train.epochs=3", "--set", "train.batch_size=16", "--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject eval = readJson(out + "/evaluation.json")["evaluations"][0].toObject();
        int evaluated[3][3] = {};
        const QJsonArray rows = eval["confusion"].toArray();
        for (int t = 0; t < 3; ++t)
            for (int p = 0; p < 3; ++p)
                evaluated[t][p] = rows[t].toArray()[p].toInt();

        for (const QString &model : {out, out + "/checkpoints/step-00000018"}) {
            const CliResult r = cli(QStringList{"infer", model, "--top", "3"} + files);
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            const QStringList lines = r.out.trimmed().split('\n');
            QCOMPARE(lines.size(), files.size());
            int inferred[3][3] = {};
            for (int i = 0; i < lines.size(); ++i) {
                const QJsonObject line = QJsonDocument::fromJson(lines[i].toUtf8()).object();
                QCOMPARE(line["input"].toString(), files[i]);
                const QJsonArray top = line["top"].toArray();
                QCOMPARE(top.size(), 3);
                QVERIFY(top[0].toObject()["probability"].toDouble() >=
                        top[1].toObject()["probability"].toDouble());
                QCOMPARE(top[0].toObject()["class"].toString(),
                         QString("c%1").arg(top[0].toObject()["index"].toInt()));
                ++inferred[truth[i]][top[0].toObject()["index"].toInt()];
            }
            int wrong = 0;
            for (int t = 0; t < 3; ++t)
                for (int p = 0; p < 3; ++p) {
                    QVERIFY2(
                        inferred[t][p] == evaluated[t][p],
                        qPrintable(QString("%1: true c%2 predicted c%3: infer %4, evaluation %5")
                                       .arg(model)
                                       .arg(t)
                                       .arg(p)
                                       .arg(inferred[t][p])
                                       .arg(evaluated[t][p])));
                    wrong += t != p ? inferred[t][p] : 0;
                }
            QVERIFY2(wrong > 0, "every prediction right: the comparison would show little");
        }

        // A file that is not an image is answered with its error; the others still are.
        const CliResult mixed = cli({"infer", out, files[0], dir.filePath("pics.json")});
        QCOMPARE(mixed.exitCode, 1);
        const QStringList lines = mixed.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY(QJsonDocument::fromJson(lines[0].toUtf8()).object().contains("top"));
        QVERIFY(QJsonDocument::fromJson(lines[1].toUtf8())
                    .object()["error"]
                    .toString()
                    .contains("not an image"));
        // A folder that holds no model is refused with exit 2.
        QCOMPARE(cli({"infer", dir.path(), files[0]}).exitCode, 2);
        // Hearing a recording at other speeds (--warp) is for models of recordings: a picture
        // model refuses it, saying so, and takes --warp 0 (heard once) as it is.
        const CliResult warped = cli({"infer", out, "--warp", "0.08", files[0]});
        QCOMPARE(warped.exitCode, 2);
        QVERIFY2(warped.err.contains("--warp is for models of recordings") &&
                     warped.err.contains("reads pictures"),
                 qPrintable(warped.err.left(500)));
        const CliResult once = cli({"infer", out, "--warp", "0", files[0]});
        QCOMPARE(once.exitCode, 0);
        QVERIFY2(!once.err.contains("heard at"), qPrintable(once.err));
    }

    // Every precision trains on the CPU, which computes float32 and says so for the GPU-only
    // ones.
    void precisionOnTheCpu_data()
    {
        QTest::addColumn<QString>("precision");
        QTest::addColumn<bool>("warns");
        QTest::newRow("float32") << "float32" << false;
        QTest::newRow("tf32") << "tf32" << true;
        QTest::newRow("bf16") << "bf16" << true;
    }
    void precisionOnTheCpu()
    {
        QFETCH(QString, precision);
        QFETCH(bool, warns);
        QTemporaryDir dir;
        QStringList args = smallRun(dir.path(), 1);
        args << "--device"
             << "cpu"
             << "--set"
             << "train.precision=" + precision << "--events" << dir.path() + "/events.jsonl";
        const CliResult r = cli(args);
        QCOMPARE(r.exitCode, 0);
        QFile f(dir.path() + "/events.jsonl");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString warning;
        for (const QByteArray &line : f.readAll().split('\n')) {
            const QJsonObject e = QJsonDocument::fromJson(line).object();
            if (e["type"].toString() == "log" && e["level"].toString() == "warning" &&
                e["message"].toString().contains("precision"))
                warning = e["message"].toString();
        }
        QCOMPARE(!warning.isEmpty(), warns);
        if (warns)
            QCOMPARE(warning,
                     "precision " + precision + " applies to GPUs; cpu computes in float32");
    }

    // An unknown precision is refused naming train.precision.
    void unknownPrecisionIsRefused()
    {
        QTemporaryDir dir;
        const CliResult bad = cli({"run", example("fashion_mnist_mlp.json"), "--set",
                                   "train.precision=fp8", "--out", dir.path() + "/bad"});
        QVERIFY(bad.exitCode != 0);
        QVERIFY2(bad.out.contains("train.precision") || bad.err.contains("train.precision"),
                 qPrintable(bad.out + bad.err));
    }

    void nanLossStopsNamingTheStep()
    {
        // The largest learning rate allowed, on pixels divided by the smallest std allowed.
        QTemporaryDir dir;
        CliResult r =
            cli({"run", example("fashion_mnist_mlp.json"), "--set", "train_data.limit=2000",
                 "--set", "optimizer.lr=10", "--set", "normalize.std=1e-6", "--set",
                 "optimizer.momentum=0", "--out", dir.path()});
        QCOMPARE(r.exitCode, 1);
        const QString msg = r.summary["error"].toObject()["message"].toString();
        QVERIFY2(msg.contains("at step") && (msg.contains("NaN") || msg.contains("infinite")),
                 qPrintable(r.out));
        // The failing step is not counted; the ones before it are.
        const int failedAt = msg.section("at step ", 1).section(' ', 0, 0).toInt();
        QVERIFY2(failedAt > 1, qPrintable(msg));
        QCOMPARE(r.summary["steps"].toInt(), failedAt - 1);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
