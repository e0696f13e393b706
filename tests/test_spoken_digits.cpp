// The spoken-digits demo end to end, as a person meets it: scripts/make_spoken_digits.sh speaks
// the digits and other words in 547 voices of three speech engines (240 of them voices of our
// own, made up from espeak-ng's voice parameters) and makes background noise,
// resources/examples/spoken_digits.json trains on the voices of the training part, and the
// model must recognise the recordings of the voices held out. A whole engine held out (flite:
// trained on espeak-ng and festival only), and festival's real people of two languages held out
// (Czech and Catalan, trained with the Italian and Finnish ones), are the stand-ins for real
// people's voices. The model
// then listens to a long recording of voices it never heard (`flowbench-cli listen`) and must
// find the digits where they are spoken, and nothing in the noise and the other words: in two
// accents the data set never has, and in its own accents said by espeak-ng voices it never has. And
// `flowbench-cli infer --warp 0` (each recording heard once) gives exactly the evaluation's
// predictions: the preprocessing saved with the model (decoding, resampling, trimming, the
// log-mel spectrogram, the per-recording normalization) is the one the run applied.
//
// The recordings are made once per build folder (about two minutes) and kept there, or read
// from FLOWBENCH_TEST_SPOKEN_DIGITS when it names a complete folder (scripts/fresh_check.sh
// points it at the one scripts/start.sh made a moment before).

#include <QtTest>

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>

#include <unistd.h>

namespace {

const QString kSource = FLOWBENCH_SOURCE_DIR;
const QString kData = qEnvironmentVariableIsEmpty("FLOWBENCH_TEST_SPOKEN_DIGITS")
                          ? QString(FLOWBENCH_BINARY_DIR "/spoken_digits")
                          : qEnvironmentVariable("FLOWBENCH_TEST_SPOKEN_DIGITS");

// A recording's class index from its name: the digits, then "background" and "unknown" (the
// example's classes are the labels in sorted order).
int classOf(const QString &fileName)
{
    if (fileName.startsWith("background_")) return 10;
    if (fileName.startsWith("unknown_")) return 11;
    return fileName.left(1).toInt();
}

struct Run {
    int exitCode = -1;
    QString out, err;
};

// ENV: NAME=VALUE settings for it on top of the test's environment.
Run run(const QString &program, const QStringList &args, int timeoutMs = 600000,
        const QStringList &env = {})
{
    QProcess p;
    if (!env.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString &setting : env)
            e.insert(setting.section('=', 0, 0), setting.section('=', 1));
        p.setProcessEnvironment(e);
    }
    // A process group of its own, so that a limit reached stops what it started as well
    // (make_spoken_digits.sh's workers and their espeak-ng, sox and festival), which would
    // otherwise go on taking the cores from the tests after it.
    p.setChildProcessModifier([] { ::setpgid(0, 0); });
    p.start(program, args);
    // Still running at the limit is a failure, never a success: stopped, exit -1, said so.
    // SIGTERM first (make_spoken_digits.sh then finishes the recordings being made, within
    // 30 s), then SIGKILL to whatever of the group is left.
    const bool finished = p.waitForFinished(timeoutMs);
    if (!finished) {
        const pid_t group = pid_t(p.processId());
        if (group > 0) ::kill(-group, SIGTERM);
        if (!p.waitForFinished(40000) && group > 0) ::kill(-group, SIGKILL);
        p.waitForFinished(10000);
    }
    Run r;
    r.exitCode = finished && p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    if (!finished)
        r.err += QString("\n%1 was still running after %2 s and was killed")
                     .arg(QFileInfo(program).fileName())
                     .arg(timeoutMs / 1000);
    return r;
}

// listen's detections among its output lines, as CLASS@TIME.
QStringList detections(const QStringList &lines)
{
    QStringList d;
    for (const QString &line : lines) {
        const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
        if (o["kind"] == "detection")
            d << o["class"].toString() + "@" + QString::number(o["time"].toDouble());
    }
    return d;
}

QJsonObject lastLine(const QString &out)
{
    return QJsonDocument::fromJson(out.trimmed().split('\n').last().toUtf8()).object();
}

// The example trained on kData into the folder OUT, with more NODE.PARAM=VALUE settings. Up to 30
// minutes: its 20 epochs take 6 on 2 free cores, and under `ctest -j2` beside the other tests
// the first ten took 8 (a fresh Debian 12, 2026-11-27), past run()'s 10.
Run trainExample(const QString &out, const QStringList &settings = {})
{
    QStringList args{"run",      kSource + "/resources/examples/spoken_digits.json",
                     "--device", "cpu",
                     "--set",    "train_data.path=" + kData,
                     "--set",    "test_data.path=" + kData};
    for (const QString &setting : settings)
        args << "--set" << setting;
    return run(FLOWBENCH_CLI, args << "--out" << out, 30 * 60 * 1000);
}

// The voices held out whole by heldOutTrained: flite's, festival's Czech and Catalan ones, and
// three kinds of background noise (the speakers of background_noise-N_K are noise-N).
const QString kHeldOutPattern = "^(flite-|festival-(cs|ca)-|noise-[0-2]$)";

// A recording's speaker, as the example's pattern {label}_{speaker}_{index} reads it.
QString speakerOf(const QString &fileName)
{
    return QFileInfo(fileName).completeBaseName().section('_', 1, -2);
}

// The first evaluation in a run folder's evaluation.json (empty when there is none).
QJsonObject firstEvaluation(const QString &runDir)
{
    QFile f(runDir + "/evaluation.json");
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object()["evaluations"].toArray()[0].toObject();
}

// tests/make_listen_recording.sh: WORDS words (SEED draws them, DIGIT_PERCENT of them digits)
// into wav, their truth into tsv; ENV its settings (FLOWBENCH_LISTEN_VOICES=..., ...).
Run makeListenRecording(const QString &wav, const QString &tsv, int words, int seed,
                        const QStringList &env = {}, int digitPercent = 60)
{
    return run("bash",
               {kSource + "/tests/make_listen_recording.sh", wav, tsv, QString::number(words),
                QString::number(seed), QString::number(digitPercent)},
               600000, env);
}

// A word of tests/make_listen_recording.sh's truth file: where it is spoken, and what.
struct Word {
    double start, end;
    QString label; // "0" .. "9", or "other"
    bool found = false;
    QString word; // as said
};

QList<Word> readTruth(const QString &file)
{
    QList<Word> truth;
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly)) return truth;
    for (const QByteArray &line : f.readAll().trimmed().split('\n')) {
        const QList<QByteArray> parts = line.split('\t');
        if (parts.size() >= 3) // then the word and the voice
            truth.append({parts[0].toDouble(), parts[1].toDouble(), QString::fromUtf8(parts[2]),
                          false, parts.size() >= 4 ? QString::fromUtf8(parts[3]) : QString()});
    }
    return truth;
}

// `listen`'s detections against the truth. A detection is right when it names a digit spoken
// within half a second of its time (each digit counts once); one anywhere else is a false
// alarm (in silence, noise, or on another word). `offset` is added to the detections' times.
struct Heard {
    int digits = 0, right = 0, wrongLabel = 0, falseAlarms = 0;
    QStringList labels; // the detections' classes, in order
};

Heard score(const QStringList &lines, QList<Word> truth, double offset = 0)
{
    Heard h;
    for (const Word &w : truth)
        h.digits += w.label != "other";
    for (const QString &text : lines) {
        const QJsonObject d = QJsonDocument::fromJson(text.toUtf8()).object();
        if (d["kind"].toString() != "detection") continue;
        h.labels << d["class"].toString();
        const double t = d["time"].toDouble() + offset;
        // The nearest digit of its class not found yet within half a second, else the last
        // digit there (listen --truth's TruthJudge).
        Word *at = nullptr, *same = nullptr;
        for (Word &w : truth) {
            if (w.label == "other" || t < w.start - 0.5 || t > w.end + 0.5) continue;
            at = &w;
            if (w.label == d["class"].toString() && !w.found &&
                (!same || std::abs(t - (w.start + w.end) / 2) <
                              std::abs(t - (same->start + same->end) / 2)))
                same = &w;
        }
        if (same) at = same;
        if (!at)
            ++h.falseAlarms;
        else if (at->label == d["class"].toString() && !at->found)
            at->found = true, ++h.right;
        else
            ++h.wrongLabel;
    }
    return h;
}

// Floors under what was measured (docs/audio-history.md has the figures): they catch a fall back,
// and leave room for the run-to-run spread. Training is not bit-reproducible across thread
// schedules (oneDNN's parallel reductions), and the spread is wide where the model meets what it
// never heard: over three runs the held-out engine gave 57.0, 57.2 and 48.7%, the false alarms 2, 3
// and 5 (chance is 8% for 12 classes).
// (Data set version 3, twice the other words: 89.2% held-out voices, 54.8% flite, 59 of 67 digits
// with 3 false alarms; the figures beside the floors are version 2's.) With `bn4` after fc1
// (2026-11-27; before it most of fc1's units never learnt, and how many did was the seed's
// draw): 93.4, 93.9 and 94.1% held-out voices, 69.2% flite, 61 of 67 digits with 1 false alarm;
// on data set version 4 (its hard negatives and 151 voices) 93.6 to 94.3%, 65.3% and 59 of 67
// with none; on version 5 (its 24 British voices made 24, not one) 94.3 to 94.8%, 68.4% and 60
// of 67 with none.
// With festival's nine voices of other languages (2026-11-27, night: 7888 recordings) the
// speaker split holds out other voices, five of them real people's (flite's kal16, festival's
// slt, the Czech krb, Finnish lj and Italian lp) where before it held out espeak-ng's alone: 88.0%
// of the held-out recordings (seeds 1 and 2; espeak-ng's 94.5%, the real people's 78.7%; 87.2% in
// this test), flite 73.0 and 75.0% at 10 epochs; the Czech and Catalan voices held out 73.9 and
// 72.6% at 10 epochs, where a model trained on no voice of another language gets 62.2% of them
// (docs/audio-history.md). The CNN of 24, 48 and 96 channels and 128 units (2026-11-27, late; was
// 16, 32, 64 and 64): 91.0 and 89.5% held out (91.0% in this test; real people's 84.1 and 81.4%),
// flite 77.1%, the Czech and Catalan voices 78.2% (this test, 10 epochs). Without SpecAugment's
// time masks (2026-11-27, night): 91.2% held out, flite 79.0%, Czech and Catalan 80.1%; listening
// 61 of 67 with no false alarm, the virtual microphone 10 of 12 (the file 11). Held out in one
// training (2026-12-01, the 13,411; until then each group by a training of its own, 83.7 and
// 81.6% on the 13,089): flite 79.8%, the Czech and Catalan voices 79.7%. Version 6 of the data
// set (13,027) with train.average_last 0.5 (2026-12-02): held out 93.54%, flite 80.6%, the Czech
// and Catalan voices 76.8%; listening 62 of 67 with no false alarm, the virtual microphone 10 of
// 12 (the file 11), number words 4 of 60. With the 120 made-up voices (2026-12-02, later: 15,547
// recordings): held out 96.55%, flite 81.4%, the Czech and Catalan voices 77.2%; listening 63 of
// 67 with no false alarm, the voices never heard 62 of 67 with none, the virtual microphone 11 of
// 12 (the file 11), number words 5 of 60. With 240 (2026-12-02, evening: 18,067 recordings): held
// out 95.03% (another fifth), flite 80.3%, the Czech and Catalan voices 76.5%; listening 63 of 67
// with no false alarm, the voices never heard 61 of 67 with none, the virtual microphone 10 of 12
// (the file 10), number words 5 of 60. With 32, 64 and 128 channels and 256 units (2026-12-02,
// late; tried, not the example: bench/results/listen-new-voices-20261202.md): held out 95.33%,
// listening 63 of 67 with no false alarm, the voices never heard 63 of 67 with none, the new
// voices of its own kind 64 of 67 with none; 2,750 s for the whole test beside other work.
// With noise of any colour over four recordings in five, 5 to 40 dB (2026-12-03; was white, half
// of them, 10 to 30: bench/results/listen-coloured-noise-20261203.md): held out 95.28%, flite
// 79.4%, the Czech and Catalan voices 77.0%; listening 63 of 67 with no false alarm, the voices
// never heard 61 of 67 with none, the new voices of its own kind 64 of 67 with none, the virtual
// microphone 11 of 12 (the file 11), number words 3 of 60; 1,758 s beside two listening runs.
// With pink or brown noise beside the word and no quiet between, and the data set's seventh
// version (18,861: the 794 digits with one sound more; 2026-12-03, later: bench/results/
// listen-noise-beside-pink-brown-20261203.md): held out 95.12%, flite 77.3%, the Czech and
// Catalan voices 77.5%; listening 66 of 67 with no false alarm, the voices never heard 66 of 67
// with 2, the new voices of its own kind 67 of 67 with none, the virtual microphone 11 of 12 (the
// file 12), number words 3 of 60; 1,124 s alone. With noise_beside from 6 dB below the word
// (2026-12-03, night: listen-noise-beside-louder-20261203.md): held out 94.76%, flite 76.3%, the
// Czech and Catalan voices 74.3%; listening 62 of 67 with no false alarm, the voices never heard
// 60 of 67 with none, the new voices of its own kind 138 of 144 with none, the virtual microphone
// 11 of 12 (the file 11), number words 1 of 60; 1,006 s alone.
// With festival's Hindi and Telugu voices and the speaker split ranked by name (split seed 2,
// 2026-12-05: 19,169 recordings, 3,739 held out): held out 95.53%, flite 80.92%, the Czech and
// Catalan voices 80.79% (that morning, without them: 94.99, 78.78 and 77.24%); listening 58 of 67
// with no false alarm, the voices never heard 61 of 67 with none, the new voices of its own kind
// 135 of 144 with none, the virtual microphone 10 of 12 (the file 10), number words 0 of 60;
// 1,196 s beside the making of the bench's recordings. With festival's Russian voice
// (2026-12-06: 19,323 recordings, the same 3,739 held out): held out 95.72%, flite 80.76%, the
// Czech and Catalan voices 82.50%; listening 54 of 67, 61 of 67 and 133 of 144 with no false
// alarm, the virtual microphone 10 of 12 (the file 9), number words 0 of 60; 1,108 s. With short
// sounds as background (2026-12-07: 19,870 recordings, 3,834 held out): held out 95.46%, flite
// 77.14% (77.14 to 81.74% over three seeds, 75.66 to 82.07% before), the Czech and Catalan voices
// 82.50%; listening 57 of 67, 58 of 67, 132 of 144 and 80 of 144 close together with no false
// alarm, the virtual microphone 10 of 12 (the file 9 to 10), number words 0 of 60, short sounds
// 0 of 200 and 0 of 60 clips; 1,269 s. With the listening recordings' noise floor running to
// their end (2026-12-07, evening; until then two thirds of each was digital silence between the
// words: bench/results/listen-noise-before-eight-20261207.md), the same training: listening 62
// of 67, 61 of 67, 138 of 144 and 82 of 144 close together with no false alarm, the virtual
// microphone 9 of 12; the listening floors below were set on the recordings before, under these.
// With a 60 dB floor in the features (logmel's top_db 60, was 80; 2026-12-07, night: digital
// silence and a noise floor then look alike): held out 95.77%, flite 81.09%, the Czech and
// Catalan voices 84.08%; listening 60 of 67, 62 of 67, 138 of 144 and 84 of 144 close together
// with no false alarm, the virtual microphone 9 of 12 (the file 9 to 10), number words 0 of 60,
// short sounds 1 of 200 and 3 of 60 clips (seed 2 of the example: 0 and 0); 1,047 s.
constexpr double kHeldOutVoices = 0.80; // 88.0, 88.0, 87.2% measured; 91.0, 89.5, 91.0% now
constexpr double kHeldOutEngine = 0.40; // 57.0, 57.2, 48.7% measured (10 epochs) before bn4
constexpr double kHeldOutLanguages = 0.65;
// Listening (ListenOptions' defaults then: 4 windows at 0.6, centred windows only): 85.1% and 1
// false alarm measured before bn4, 91.0% and 1 with it, 88.1% and 0 on version 4, 89.6% and 0 on
// version 5; with 3 windows at 0.7 and every window counted, as before the gate, 89.6 and 88.1%,
// and 2, 3 and 5. Each window heard three ways (--warp 0.08, the default since 2026-11-27):
// 91.0% and 0 on version 5, and 91.0% and 0 with its voices of other languages; 91.0% and 0 with
// the larger CNN, and through the virtual microphone 11 of 12 digits, as the file.
// At listen's default of 0.85 (since 2026-12-03; the three seeds of the example of
// listen-noise-beside-pink-brown-20261203.md, trained apart, 20 epochs): 62, 60 and 61 of 67,
// none of them a false alarm (at 0.6: 66, 64 and 64, with none); with the louder noise beside
// the word (noise_beside from 6 dB, 2026-12-03, night: listen-noise-beside-louder-20261203.md)
// 63, 59 and 62, with none.
// Since 2026-12-05 the floor is set from the spread over speaker splits and training seeds, not
// from one split's models: 17 models of five splits (main's shuffle at split seeds 0 and 1, the
// shuffle over two voices more, and the ranked split at a fifth and at 15%, with and without
// festival's Hindi and Telugu voices) found 50 to 61 of these 67 digits (mean 55.6, standard
// deviation 3.5); a new split is not a regression of the method, and the floor at 80% (54) failed
// half the models of every new split (bench/results/listen-indian-voices-20261205.md, "The test's
// floors"). 68% (46) is about three standard deviations under the mean: it fails a detector or a
// model that has lost the accents, not a draw of the split. How many digits the example finds
// within 2 false alarms an hour, issue 19's measure, is bench/listen_curve.py's, over 2 hours and
// seeds.
constexpr double kListenDetected = 0.68;
// The same, for voices never heard in the data set's accents (listensToVoicesItNeverHeard):
// 62 and 63 of 67 measured at 0.6 (without and with the made-up voices); at 0.85 the three seeds
// 62, 59 and 60, none of them a false alarm (at 0.6: 67, 65 and 66, with 2, 1 and 1); with the
// louder noise beside the word 61, 62 and 58, with none. 85% (57) until 2026-12-07, when it sat
// on the spread: the example's seeds 1, 2 and 3 found 59, 59 and 57 (and models that heard the
// made-up voices say the digits with a consonant more, 57 to 59 at 0.8;
// bench/results/listen-made-up-plus-taken-back-20261207.md). 80% (54) is about four standard
// deviations (1.0) of those six under their mean (58.2): six models are few to tell the spread.
constexpr double kListenNewVoicesDetected = 0.80;
// The same, for new voices of the data set's own kind (listensToNewVoicesOfItsOwnKind), over
// 240 words (144 digits) since listen's default moved to 0.85: the three seeds found 138, 134
// and 134 (95.8, 93.1 and 93.1%), none of them a false alarm; of the 120 words' 67 digits they
// found 63, 63 and 62, where at 0.6 they found 66, 66 and 67 with none. Issue 19's 95% within 2
// false alarms an hour is measured over 2.2 hours by bench/listen_curve.py (the same seeds at
// 0.85: 97.6, 95.1 and 96.1% at 2.3, 0 and 1.4 an hour;
// bench/results/listen-default-threshold-20261203.md); this floor catches a fall back from it.
// With the louder noise beside the word (2026-12-03, night) the three seeds found 140, 138 and
// 133 of the 144, with none, and over the bench's 2.2 hours 96.6, 96.6 and 96.1% at 1.4, 1.4
// and 1.9 an hour (listen-noise-beside-louder-20261203.md): 95% within 2 an hour for every seed
// there, while this recording's 144 digits swing by 4 to 7 from seed to seed, so 90% here.
// Since the recording is the same at every making (2026-12-04, sox -R), this test's own training
// found 135 (93.8%), with none: under the issue's 95%; seeds 1, 2 and 3 trained with 1 thread
// found 134, 129 and 131 (bench/results/listen-tried-20261204.md). The floor holds for the
// example's seed, 1, by 4 or 5 digits: the example sits under the issue's line here. With the
// noise floor in listen's centring gate (--floor-db 6, 2026-12-04, late) the same three found
// the same 134, 129 and 131, with none; over the bench's 2.2 hours it took away 4 of their 14
// false alarms at the default, and within 2 an hour seed 1 then found 96.6% (92.7% before),
// seeds 2 and 3 92.7 and 94.1% (91.7 and 94.1%; bench/results/listen-noise-floor-20261204.md).
// Since 2026-12-05, from the spread over splits and seeds as kListenDetected: the same 17 models
// found 124 to 135 of the 144 (mean 130.5, standard deviation 3.6), and the floor of 90% (130)
// failed half the models of every new split; 83% (120) is about three standard deviations under the
// mean.
constexpr double kListenOwnKindDetected = 0.83;
constexpr int kListenOwnKindWords = 240;
// The same voices' digits said 0.1 to 0.3 s apart (listensToDigitsSaidCloseTogether): the
// example at seed 1 found 79 of 144 (55%) heard isolated, 23 (16%) heard whole; a floor well
// under the first and well over the second.
constexpr double kListenCloseTogetherDetected = 0.35;
// Number words as digits: at most this many of numberWordsAreNotDigits' 60.
constexpr int kNumberWordsHeard = 10;
const char *const kNumberWords =
    "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty "
    "sixty seventy eighty ninety fourth fifth sixth seventh eighth ninth tenth zeros ones twos "
    "threes fours fives sixes sevens eights nines ten eleven twelve hundred";
// At most this many false alarms in one of the recordings above (65 to 68 s of other words, noise
// and silence away from the digits; 125 s in the 240 words): far too little to measure false
// alarms an hour, which bench/listen_curve.py does over 2.2 hours; none at listen's default of
// 0.85 (three seeds, every recording), 0 to 2 at 0.6, its default until 2026-12-03, when this
// was 8.
constexpr int kListenFalseAlarms = 2;
// Short sounds that are no word (tests/make_click_recording.sh: clicks, taps, knocks, key
// presses, drawn otherwise than the data set's own). Before the data set had such sounds as
// background (2026-12-07), the example's three seeds detected a digit at 18, 20 and 11 of the
// 200 in shortSoundsAreNotDigits' recording (most of them "8") and named a digit for 46, 42 and
// 47 of its 60 clips; trained with them (seeds 1 and 2), none and none.
constexpr int kClicksDetected = 3;
constexpr int kClickClipsAsDigits = 10;

} // namespace

class TestSpokenDigits : public QObject {
    Q_OBJECT

    QTemporaryDir m_trained;       // the example trained by heldOutVoicesAreRecognised
    QTemporaryDir m_heldOut;       // 10 epochs without kHeldOutPattern's voices (heldOutTrained)
    QStringList m_heldOutFiles;    // the recordings of those voices, in order
    QList<int> m_heldOutPredicted; // infer's class for each of them, heard once (--warp 0)
    QList<int> m_heldOutHeard3;    // the same, as infer hears them by default (three ways,
                                   // halfway balanced: --warp 0.08 --balance 0.5)
    QString m_heldOutWhy;          // why heldOutTrained failed, once it has

    // The example's model (heldOutVoicesAreRecognised) listens to tests/make_listen_recording.sh's
    // recording of 120 words said by FLOWBENCH_LISTEN_VOICES=voices, none of whose recordings
    // the data set has (notInData matches their file names): at least `floor` of the digits
    // must be detected at their time, and at most kListenFalseAlarms where none is spoken.
    void listenToVoices(const char *voices, const QRegularExpression &notInData, const char *what,
                        double floor, int words = 120, const QStringList &env = {})
    {
        QVERIFY2(QFileInfo::exists(m_trained.filePath("run/model.safetensors")),
                 "heldOutVoicesAreRecognised did not train a model");
        QCOMPARE(QDir(kData).entryList({"*.wav"}, QDir::Files).filter(notInData), QStringList());
        QTemporaryDir dir;
        const QString rec = dir.filePath("rec.wav"), truthFile = dir.filePath("rec.tsv");
        const Run make =
            makeListenRecording(rec, truthFile, words, 7,
                                QStringList{QString("FLOWBENCH_LISTEN_VOICES=") + voices} + env);
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));
        const QList<Word> truth = readTruth(truthFile);
        QCOMPARE(truth.size(), words);
        // listen --truth scores it as this test does (a person's own recording and labels).
        const Run l = run(FLOWBENCH_CLI,
                          {"listen", m_trained.filePath("run"), rec, "--truth", truthFile});
        QVERIFY2(l.exitCode == 0, qPrintable(l.err.right(2000)));
        const Heard h = score(l.out.trimmed().split('\n'), truth);
        qInfo("%s: %d of %d digits detected at their time (%.1f%%), %d with another digit's "
              "name, %d false alarms",
              what, h.right, h.digits, 100.0 * h.right / h.digits, h.wrongLabel, h.falseAlarms);
        const QJsonObject scored = lastLine(l.out)["score"].toObject();
        QCOMPARE(scored["keywords"].toInt(), h.digits);
        QCOMPARE(scored["found"].toInt(), h.right);
        QCOMPARE(scored["wrong"].toInt(), h.wrongLabel);
        QCOMPARE(scored["false_alarms"].toInt(), h.falseAlarms);
        QCOMPARE(scored["missed"].toArray().size(), h.digits - h.right);
        QVERIFY2(h.right >= floor * h.digits, qPrintable(QString::number(h.right)));
        QVERIFY2(h.falseAlarms <= kListenFalseAlarms, qPrintable(QString::number(h.falseAlarms)));
    }

private slots:
    void initTestCase()
    {
        for (const char *tool : {"espeak-ng", "flite", "text2wave", "sox"})
            if (QStandardPaths::findExecutable(tool).isEmpty())
                QSKIP(qPrintable(
                    QString("%1 is not installed (scripts/deps.sh installs it)").arg(tool)));
        // 1 to 4 minutes on 2 free cores (docs/audio.md); up to 30 beside other tests. With
        // the flowbench-speak of this build.
        qputenv("FLOWBENCH_SPEAK", FLOWBENCH_SPEAK);
        const Run make =
            run("bash", {kSource + "/scripts/make_spoken_digits.sh", kData}, 30 * 60000);
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));
        QCOMPARE(QDir(kData).entryList({"*.wav"}, QDir::Files).size(), 19870);
    }

    void heldOutVoicesAreRecognised()
    {
        QTemporaryDir &dir = m_trained;
        const Run r = trainExample(dir.filePath("run"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err.right(3000)));
        const QJsonObject summary = lastLine(r.out);
        const double accuracy = summary["test_accuracy"].toDouble();
        qInfo("held-out voices: %.2f%% of their recordings recognised", 100 * accuracy);
        QVERIFY2(accuracy >= kHeldOutVoices, qPrintable(QString::number(accuracy)));
        // A fifth of the speakers is held out, whole, ranked by a hash of their names and the
        // split seed (of the 19,870: 126 of 630, espeak-ng's, flite's and festival's voices and
        // kinds of background noise and short sounds), with their digits and other words, hard
        // negatives among them. (With 160 voices,
        // until 2026-11-28: 1793 recordings; with 232, 2289, 2321 with the 161 real words as hard
        // negatives, 2496 with 72 more speakers, and 42 recordings of number words more since
        // 2026-11-28, afternoon; 2562 until 2026-12-02, with 70 of the 384 made-up hard negatives
        // that version 6 of the data set no longer has; 2492 until the 120 made-up voices of
        // 2026-12-02, 2897 until 120 more that evening, 3664 until the 794 digits with one sound
        // more of 2026-12-03; 3835 of the 18,861 until the split ranked the speakers and the
        // Indian voices came, 2026-12-05; the Russian voice of 2026-12-06 is trained on, and the
        // held-out speakers stayed the same; 3739 until the short sounds of 2026-12-07, when 7
        // of their 28 "speakers" took a place held out and one voice, espeak-ng's Scottish
        // Edward, went to training.)
        QCOMPARE(firstEvaluation(dir.filePath("run"))["samples"].toInt(), 3834);

        // What mattered (occlusion saliency): the frames where the word is spoken, not the
        // silence around it. Per frame, the saliency summed over the mel bands must be larger
        // where the waveform is loud than where it is silent: at least twice for every
        // recording, and five times for the median one. (Training is not bit-reproducible
        // across thread schedules; one CI run saw 4.1 for 5_flite-slt_3 where others saw more,
        // so a single recording's ratio is no sharper test than that.)
        QVector<double> ratios;
        QStringList some;
        for (const char *name :
             {"0_espeak-en-us-f2_1", "3_espeak-en-gb-m4_2", "5_flite-slt_3", "7_festival-ked_1",
              "8_espeak-en-gb-scotland-m6_2", "9_flite-awb_7"})
            some << kData + "/" + name + ".wav";
        const Run inf =
            run(FLOWBENCH_CLI,
                QStringList{"infer", dir.filePath("run"), "--inputs", "--saliency"} + some);
        QVERIFY2(inf.exitCode == 0, qPrintable(inf.err.right(2000)));
        for (const QString &text : inf.out.trimmed().split('\n')) {
            const QJsonObject line = QJsonDocument::fromJson(text.toUtf8()).object();
            auto floats = [&](const char *key) {
                const QByteArray b = QByteArray::fromBase64(line[key].toString().toLatin1());
                QVector<float> v(b.size() / 4);
                std::memcpy(v.data(), b.constData(), size_t(b.size()));
                return v;
            };
            const QVector<float> saliency = floats("saliency"), wave = floats("waveform");
            QCOMPARE(saliency.size(), 40 * 101);
            QVector<double> loud(101);
            for (int t = 0; t < 101; ++t)
                for (int k = t * 160 - 200; k < t * 160 + 200; ++k)
                    if (k >= 0 && k < wave.size()) loud[t] += std::abs(wave[k]);
            const double peak = *std::max_element(loud.begin(), loud.end());
            double speech = 0, silence = 0;
            int nSpeech = 0, nSilence = 0;
            for (int t = 0; t < 101; ++t) {
                double column = 0;
                for (int m = 0; m < 40; ++m)
                    column += std::abs(saliency[m * 101 + t]);
                if (loud[t] > 0.05 * peak) speech += column, ++nSpeech;
                if (loud[t] < 0.005 * peak) silence += column, ++nSilence;
            }
            QVERIFY(nSpeech > 10 && nSilence > 10);
            const double ratio = (speech / nSpeech) / std::max(silence / nSilence, 1e-9);
            qInfo("%s: saliency per speech frame %.1fx that per silent frame",
                  qPrintable(QFileInfo(line["input"].toString()).fileName()), ratio);
            QVERIFY2(ratio > 2, qPrintable(QString::number(ratio)));
            ratios << ratio;
        }
        QCOMPARE(ratios.size(), 6);
        std::sort(ratios.begin(), ratios.end());
        const double median = (ratios[2] + ratios[3]) / 2;
        QVERIFY2(median > 5, qPrintable(QString::number(median)));
    }

    // The model of heldOutVoicesAreRecognised listens to a long recording of voices no
    // recording of the data set has (tests/make_listen_recording.sh: two other accents, digits
    // and other words among silence, background noise and noise bursts): the digits must be
    // detected where they are spoken, and nothing where none is.
    void listensForDigitsInALongRecording()
    {
        QVERIFY2(QFileInfo::exists(m_trained.filePath("run/model.safetensors")),
                 "heldOutVoicesAreRecognised did not train a model");
        QTemporaryDir dir;
        const QString rec = dir.filePath("rec.wav"), truthFile = dir.filePath("rec.tsv");
        const Run make = makeListenRecording(rec, truthFile, 120, 7);
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));
        const QList<Word> truth = readTruth(truthFile);
        QVERIFY(truth.size() == 120);
        const Run l = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), rec});
        QVERIFY2(l.exitCode == 0, qPrintable(l.err.right(2000)));
        const QStringList lines = l.out.trimmed().split('\n');
        const QJsonObject summary = QJsonDocument::fromJson(lines.last().toUtf8()).object();
        QCOMPARE(summary["status"].toString(), QString("ok"));
        const Heard h = score(lines, truth);
        double otherSeconds = summary["seconds"].toDouble();
        for (const Word &w : truth)
            if (w.label != "other") otherSeconds -= w.end - w.start + 1.0;
        qInfo("listen: %d of %d digits detected at their time (%.1f%%), %d with another digit's "
              "name, %d false alarms in %.0f s of noise, silence and other words; p99 %.2f ms a "
              "window",
              h.right, h.digits, 100.0 * h.right / h.digits, h.wrongLabel, h.falseAlarms,
              otherSeconds, summary["latency_ms"].toObject()["p99"].toDouble());
        QVERIFY2(h.right >= kListenDetected * h.digits, qPrintable(QString::number(h.right)));
        QVERIFY2(h.falseAlarms <= kListenFalseAlarms, qPrintable(QString::number(h.falseAlarms)));

        // The same recording as raw samples on stdin (what the window's Listen mode sends):
        // the same detections at the same times.
        const QString raw = dir.filePath("rec.raw");
        QCOMPARE(run("sox",
                     {rec, "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", raw})
                     .exitCode,
                 0);
        QProcess piped;
        piped.setStandardInputFile(raw);
        piped.start(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), "--stdin"});
        QVERIFY(piped.waitForFinished(300000));
        QCOMPARE(piped.exitCode(), 0);
        const QStringList fromStdin =
            QString::fromUtf8(piped.readAllStandardOutput()).trimmed().split('\n');
        QCOMPARE(detections(fromStdin), detections(lines));
        QCOMPARE(QJsonDocument::fromJson(fromStdin.last().toUtf8()).object()["input"].toString(),
                 QString("stdin"));
        // At another rate (a microphone's 44.1 kHz), resampled as it streams, with an odd
        // number of bytes at the end: the same words, within a window's hop of the same times.
        const QString raw44 = dir.filePath("rec44.raw");
        QCOMPARE(run("sox", {rec, "-t", "raw", "-r", "44100", "-e", "signed", "-b", "16", "-c", "1",
                             raw44})
                     .exitCode,
                 0);
        {
            QFile f(raw44);
            QVERIFY(f.open(QIODevice::Append));
            f.write("\x01", 1);
        }
        QProcess piped44;
        piped44.setStandardInputFile(raw44);
        piped44.start(FLOWBENCH_CLI,
                      {"listen", m_trained.filePath("run"), "--stdin", "--rate", "44100"});
        QVERIFY(piped44.waitForFinished(300000));
        QCOMPARE(piped44.exitCode(), 0);
        const QStringList at44 =
            detections(QString::fromUtf8(piped44.readAllStandardOutput()).trimmed().split('\n'));
        const QStringList at16 = detections(lines);
        int same = 0;
        for (const QString &d : at44) {
            const QString cls = d.section('@', 0, 0);
            const double t = d.section('@', 1).toDouble();
            for (const QString &e : at16)
                if (e.section('@', 0, 0) == cls &&
                    std::abs(e.section('@', 1).toDouble() - t) <= 0.11)
                    ++same;
        }
        qInfo("at 44.1 kHz through stdin: %d of %d detections as at 16 kHz (%d there)", same,
              int(at44.size()), int(at16.size()));
        QVERIFY2(same >= 0.9 * at16.size() && at44.size() <= at16.size() + 3,
                 qPrintable(at44.join(' ')));

        // A recording that cannot be heard is named, with exit 1 and an error summary.
        QFile cut(dir.filePath("cut.wav"));
        QVERIFY(cut.open(QIODevice::WriteOnly));
        QFile whole(rec);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        cut.write(whole.read(20000)); // a header promising far more than is there
        cut.close();
        for (const QString &bad : {dir.filePath("cut.wav"), dir.filePath("missing.wav")}) {
            const Run r = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), bad});
            QCOMPARE(r.exitCode, 1);
            const QJsonObject last = lastLine(r.out);
            QCOMPARE(last["status"].toString(), QString("error"));
            QVERIFY2(last["error"].toObject()["message"].toString().contains(bad),
                     qPrintable(r.out));
        }
        // So is a label file that cannot be read, by its line (exit 2, before any listening);
        // a sweep needs one.
        QFile labels(dir.filePath("labels.txt"));
        QVERIFY(labels.open(QIODevice::WriteOnly));
        labels.write("1.0\t1.5\t3\n2.0\tsoon\t4\n");
        labels.close();
        const Run badLabels = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), rec,
                                                  "--truth", labels.fileName()});
        QCOMPARE(badLabels.exitCode, 2);
        QVERIFY2(lastLine(badLabels.out)["error"].toObject()["message"].toString().contains(
                     labels.fileName() + ":2: expected START<tab>END<tab>LABEL"),
                 qPrintable(badLabels.out));
        const Run noLabels = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), rec, "--sweep"});
        QCOMPARE(noLabels.exitCode, 2);
        QVERIFY2(noLabels.err.contains("--sweep needs --truth"), qPrintable(noLabels.err));
    }

    // Voices it never heard in accents it did: tests/make_listen_recording.sh's unheard-variants,
    // espeak-ng voice variants that no recording of the data set has (Alicia's formants above
    // every one of its voices', Gene2 a higher-pitched Gene), in the data set's accents. Before
    // the made-up voices the example found 89.3 and 84.4% of such voices' digits at listen's
    // defaults with 40 and 24 false alarms an hour, with them 90.7 and 88.8% with 24 and 19 (two
    // training seeds, bench/results/listen-made-up-voices-20261202.md); of this recording's 67
    // digits, 62 and 63 with no false alarm (seed 1 before and with them; 62 in this test), at
    // 0.6; at 0.85, listen's default since 2026-12-03: kListenNewVoicesDetected.
    void listensToVoicesItNeverHeard()
    {
        // The data set has none of them: they stay voices never heard.
        listenToVoices("unheard-variants",
                       QRegularExpression("-(Alicia|Andrea|pablo|Nguyen|antonio|pedro|Gene2|"
                                          "ed)_[^_]+\\.wav$"),
                       "voices never heard, in the data set's accents", kListenNewVoicesDetected);
    }

    // New voices of the data set's own kind: tests/make_listen_recording.sh's new-made-up, twenty
    // voices drawn by the generator of the data set's 240 made-up voices (fbv241 to fbv260, which
    // it does not have), each in the accent the data set would give it. What a speaker split
    // holds out, and what issue 19's listening test asks for (95% of the digits, at most 2 false
    // alarms an hour). Over 205 digits and 2.2 hours of other words the example finds 94.1 and
    // 96.6% within 2 false alarms an hour, and at listen's default of 0.85 (since 2026-12-03)
    // 97.6, 95.1 and 96.1% at 2.3, 0 and 1.4 an hour (three training seeds;
    // bench/results/listen-default-threshold-20261203.md); at 0.6, the default before, 99.5% with
    // 24.7 and 14.9 an hour (listen-noise-beside-pink-brown-20261203.md; without the noise beside
    // the word, 92.7 and 89.3% within 2, listen-coloured-noise-20261203.md; with white noise
    // until 2026-12-03, 86.8 and 88.8%, listen-own-kind-remeasured-20261203.md). The example
    // since (louder noise beside the word) and this test's recording: kListenOwnKindDetected.
    void listensToNewVoicesOfItsOwnKind()
    {
        listenToVoices("new-made-up", QRegularExpression("-fbv(24[1-9]|25[0-9]|260)_[^_]+\\.wav$"),
                       "new voices of the data set's kind", kListenOwnKindDetected,
                       kListenOwnKindWords);
    }

    // Digits said one after another: the same voices and words as
    // listensToNewVoicesOfItsOwnKind, 0.1 to 0.3 s apart instead of 0.4 to 1.6. Every window
    // over such a digit holds a neighbour, and the example, which learnt each word alone in its
    // second, heard 23 of the 144 when each window was heard whole; heard as the word it is
    // centred on (listen --isolate-ms, its default since 2026-12-06), 79, with no false alarm
    // (bench/results/listen-isolate-20261206.md).
    void listensToDigitsSaidCloseTogether()
    {
        listenToVoices("new-made-up", QRegularExpression("-fbv(24[1-9]|25[0-9]|260)_[^_]+\\.wav$"),
                       "digits said 0.1 to 0.3 s apart", kListenCloseTogetherDetected,
                       kListenOwnKindWords, {"FLOWBENCH_LISTEN_GAP_MS=100,300"});
    }

    // Number words that hold a digit and more ("fourteen", "sixth", "nines"), said by the
    // listening test's voices (accents the data set never has): the example learnt them as
    // "unknown" from other voices, and must not hear most of them as their digit. Before the
    // data set had them the example heard 85 of 360 (24%) as a digit at listen's defaults;
    // with them, 39 and 27 (two training seeds, 20 epochs; docs/audio-history.md, "Number words"),
    // and this test's model (10 epochs) 2 of these 60 ("eighth" as 8, "sixth" as 6).
    void numberWordsAreNotDigits()
    {
        QVERIFY2(QFileInfo::exists(m_trained.filePath("run/model.safetensors")),
                 "heldOutVoicesAreRecognised did not train a model");
        QTemporaryDir dir;
        const QString rec = dir.filePath("numbers.wav"), truthFile = dir.filePath("numbers.tsv");
        const Run make = makeListenRecording(
            rec, truthFile, 60, 5, {QString("FLOWBENCH_LISTEN_OTHERS=") + kNumberWords}, 0);
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));
        const QList<Word> truth = readTruth(truthFile);
        QCOMPARE(truth.size(), 60);
        const Run l = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), rec});
        QVERIFY2(l.exitCode == 0, qPrintable(l.err.right(2000)));
        QStringList heard;
        for (const QString &line : l.out.trimmed().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
            if (o["kind"] != "detection") continue;
            const double t = o["time"].toDouble();
            QString said = "?";
            for (const Word &w : truth)
                if (t >= w.start - 0.5 && t <= w.end + 0.5) said = w.word;
            heard << said + " as " + o["class"].toString();
        }
        qInfo("number words: %lld of 60 heard as a digit (%s)",
              static_cast<long long>(heard.size()), qPrintable(heard.join(", ")));
        QVERIFY2(heard.size() <= kNumberWordsHeard, qPrintable(heard.join(", ")));
    }

    // Short sounds that are no word: a click, a tap on the microphone, a knock, a key. Trimmed
    // and centred, a sound of a few milliseconds is all a one-shot prediction sees, and a model
    // that only ever heard words and steady noise takes it for a digit's burst. Listening must
    // stay quiet through 200 of them (6 minutes), and infer must name a digit for few of 60
    // clips.
    void shortSoundsAreNotDigits()
    {
        QVERIFY2(QFileInfo::exists(m_trained.filePath("run/model.safetensors")),
                 "heldOutVoicesAreRecognised did not train a model");
        QTemporaryDir dir;
        const QString rec = dir.filePath("clicks.wav"), clips = dir.filePath("clips");
        const QString script = kSource + "/tests/make_click_recording.sh";
        const Run make = run("bash", {script, rec, "200", "1"});
        QVERIFY2(make.exitCode == 0, qPrintable(make.err));
        const Run l = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), rec});
        QVERIFY2(l.exitCode == 0, qPrintable(l.err.right(2000)));
        const QStringList heard = detections(l.out.trimmed().split('\n'));
        qInfo("200 short sounds: %lld detected as a digit (%s)",
              static_cast<long long>(heard.size()), qPrintable(heard.join(", ")));
        QVERIFY2(heard.size() <= kClicksDetected, qPrintable(heard.join(", ")));

        const Run makeClips = run("bash", {script, "--clips", clips, "60", "4"});
        QVERIFY2(makeClips.exitCode == 0, qPrintable(makeClips.err));
        QStringList files;
        for (const QString &name : QDir(clips).entryList({"click_*.wav"}, QDir::Files))
            files << clips + "/" + name;
        QCOMPARE(files.size(), 60);
        const Run inf = run(FLOWBENCH_CLI,
                            QStringList{"infer", m_trained.filePath("run"), "--top", "1"} + files);
        QVERIFY2(inf.exitCode == 0, qPrintable(inf.err.right(2000)));
        QStringList digits;
        int answered = 0;
        for (const QString &line : inf.out.trimmed().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
            if (!o.contains("top")) continue;
            ++answered;
            const QJsonObject top = o["top"].toArray()[0].toObject();
            const QString c = top["class"].toString();
            if (c != "background" && c != "unknown")
                digits << QString("%1 as %2 (%3)")
                              .arg(QFileInfo(o["input"].toString()).fileName(), c)
                              .arg(top["probability"].toDouble(), 0, 'f', 2);
        }
        QCOMPARE(answered, 60);
        qInfo("60 clips of short sounds: %lld named a digit (%s)",
              static_cast<long long>(digits.size()), qPrintable(digits.join(", ")));
        QVERIFY2(digits.size() <= kClickClipsAsDigits, qPrintable(digits.join(", ")));
    }

    // `listen --mic` through the real audio path: a PulseAudio server of the test's own (no
    // sound card: a null sink, whose monitor is the default source, so what is played into the
    // sink is what the "microphone" hears, at the pace of a real one) hears a recording played
    // by paplay. It must find the digits the file path finds, at the same places.
    void listensThroughAVirtualMicrophone()
    {
        for (const char *tool : {"pulseaudio", "paplay", "pactl"})
            if (QStandardPaths::findExecutable(tool).isEmpty())
                QSKIP(qPrintable(QString("%1 is not installed (scripts/deps.sh installs "
                                         "pulseaudio and pulseaudio-utils)")
                                     .arg(tool)));
        QVERIFY(QFileInfo::exists(m_trained.filePath("run/model.safetensors")));
        QTemporaryDir dir;
        const QString rec = dir.filePath("rec.wav"), truthFile = dir.filePath("rec.tsv");
        QCOMPARE(makeListenRecording(rec, truthFile, 16, 11).exitCode, 0);
        const QList<Word> truth = readTruth(truthFile);

        // The server, on a socket in the test's folder, gone with the test.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_RUNTIME_DIR", dir.path());
        env.insert("PULSE_SERVER", "unix:" + dir.filePath("native"));
        env.insert("HOME", dir.path()); // its cookie and state
        QProcess server;
        server.setProcessEnvironment(env);
        server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        server.start(
            "pulseaudio",
            {"-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
             "--system=no",
             "--load=module-native-protocol-unix auth-anonymous=1 socket=" + dir.filePath("native"),
             "--load=module-null-sink sink_name=speaker rate=16000 channels=1",
             "--load=module-always-sink"});
        QVERIFY(server.waitForStarted());
        auto pactl = [&](const QStringList &args) {
            QProcess p;
            p.setProcessEnvironment(env);
            p.start("pactl", args);
            p.waitForFinished(10000);
            return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        };
        QTRY_VERIFY_WITH_TIMEOUT(pactl({"info"}), 10000);
        QVERIFY(pactl({"set-default-source", "speaker.monitor"}));

        // The microphone listens a little longer than the recording plays.
        const double seconds = truth.last().end + 3.0;
        QProcess listen;
        listen.setProcessEnvironment(env);
        listen.start(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), "--mic", "--seconds",
                                     QString::number(seconds + 2.0)});
        QVERIFY(listen.waitForStarted());
        QString err;
        QElapsedTimer t;
        t.start();
        while (!err.contains("listening to") && t.elapsed() < 20000 &&
               listen.state() == QProcess::Running) {
            listen.waitForReadyRead(200);
            err += QString::fromUtf8(listen.readAllStandardError());
        }
        QVERIFY2(err.contains("listening to the default microphone"), qPrintable(err));
        QProcess play;
        play.setProcessEnvironment(env);
        play.start("paplay", {"--device=speaker", rec});
        QVERIFY(play.waitForFinished(int(seconds * 1000) + 20000));
        QCOMPARE(play.exitCode(), 0);
        QVERIFY(listen.waitForFinished(30000));
        server.terminate();
        server.waitForFinished(5000);
        QCOMPARE(listen.exitCode(), 0);
        const QStringList micLines =
            QString::fromUtf8(listen.readAllStandardOutput()).trimmed().split('\n');
        const QJsonObject summary = QJsonDocument::fromJson(micLines.last().toUtf8()).object();
        QCOMPARE(summary["input"].toString(), QString("microphone"));
        QVERIFY2(summary["seconds"].toDouble() > truth.last().end, qPrintable(micLines.last()));

        // The recording starts playing a moment after the microphone opens: the detections'
        // times are the recording's plus that delay, found as the one that lines them up best.
        Heard best;
        for (double delay = -0.5; delay <= 3.0; delay += 0.05) {
            const Heard h = score(micLines, truth, -delay);
            if (h.right > best.right) best = h;
        }
        // That delay also moves the 100 ms grid of windows over the words, and where the
        // windows fall decides a digit or two of 12: the file, started 0 to 90 ms later, found
        // 8 to 11 of them with the example at seed 1 (9 to 11 with each window heard whole).
        // The microphone must hear as the file does at some start: no fewer than the file's
        // fewest, less one.
        int fileFewest = int(truth.size()), fileMost = 0;
        QStringList fileLabels;
        for (int ms = 0; ms < 100; ms += 10) {
            const QString later = dir.filePath(QString("later%1.wav").arg(ms));
            QCOMPARE(run("sox", {rec, later, "pad", QString::number(ms / 1000.0), "0"}).exitCode,
                     0);
            const Run file = run(FLOWBENCH_CLI, {"listen", m_trained.filePath("run"), later});
            QCOMPARE(file.exitCode, 0);
            const Heard h = score(file.out.trimmed().split('\n'), truth, -ms / 1000.0);
            fileFewest = std::min(fileFewest, h.right);
            fileMost = std::max(fileMost, h.right);
            if (ms == 0) fileLabels = h.labels;
        }
        qInfo("virtual microphone: %d of %d digits at their time (the file, started 0 to 90 ms "
              "later: %d to %d), detections %s (the file: %s)",
              best.right, best.digits, fileFewest, fileMost, qPrintable(best.labels.join(' ')),
              qPrintable(fileLabels.join(' ')));
        QVERIFY2(best.right >= fileFewest - 1 && best.right > 0,
                 qPrintable(QString::number(best.right)));
    }

private:
    // The stand-ins for real people, held out whole from one training: a whole speech engine
    // the model never heard (flite's four voices: their digits and other words; trained on
    // espeak-ng's and festival's voices only), and real people with an accent it never heard
    // (festival's Czech voices, a boy's among them, and its Catalan one, saying English digits
    // as their speakers would; the Italian and Finnish ones are trained on). Three of the 43
    // kinds of background noise are held out with them, so that the comparison with `infer`
    // meets every class. 10 epochs rather than the example's 20, to keep the test to minutes;
    // docs/audio-history.md has the 20 epochs' figures. (Until 2026-12-01 each group was held out
    // by a training of its own, and a third of one epoch on every recording was compared with
    // `infer`: 21 epochs where there are now 10. Each group's figure now comes from a model
    // that heard neither group, a little harder than before.)
    bool heldOutTrained(QString *why)
    {
        if (!m_heldOutPredicted.isEmpty()) return true;
        // Tried once: a training that failed is not run again by each check after it.
        auto fail = [&](const QString &message) {
            *why = m_heldOutWhy = message;
            return false;
        };
        if (!m_heldOutWhy.isEmpty()) return fail(m_heldOutWhy);
        const QString run = m_heldOut.filePath("run");
        const Run r = trainExample(run, {"train_data.validation_speakers=" + kHeldOutPattern,
                                         "test_data.validation_speakers=" + kHeldOutPattern,
                                         "train.epochs=10"});
        if (r.exitCode != 0) return fail("training: " + r.err.right(3000));
        const QRegularExpression heldOut(kHeldOutPattern);
        QStringList files;
        for (const QString &name : QDir(kData).entryList({"*.wav"}, QDir::Files, QDir::Name))
            if (heldOut.match(speakerOf(name)).hasMatch()) files << kData + "/" + name;
        // Heard once and as trained, as the evaluation hears them (inferReproducesTheEvaluation),
        // and as infer hears a recording by default, three ways and halfway balanced. Kept only
        // once both are there: the first being kept is what says they were made.
        QList<int> once, threeWays;
        for (QList<int> *predicted : {&once, &threeWays}) {
            const QStringList warp =
                predicted == &once
                    ? QStringList{"--warp", "0", "--balance", "0", "--crop", "middle"}
                    : QStringList{};
            const Run inf =
                ::run(FLOWBENCH_CLI, QStringList{"infer", run, "--top", "1"} + warp + files);
            if (inf.exitCode != 0) return fail("infer: " + inf.err.right(2000));
            const QStringList lines = inf.out.trimmed().split('\n');
            if (lines.size() != files.size())
                return fail(QString("infer gave %1 lines for %2 recordings")
                                .arg(lines.size())
                                .arg(files.size()));
            for (const QString &line : lines)
                *predicted << QJsonDocument::fromJson(line.toUtf8())
                                  .object()["top"]
                                  .toArray()[0]
                                  .toObject()["index"]
                                  .toInt();
        }
        m_heldOutFiles = files;
        m_heldOutHeard3 = threeWays;
        m_heldOutPredicted = once;
        return true;
    }

    // The share of the held-out recordings whose speaker PATTERN finds that `infer` recognises,
    // heard once (and so by the evaluation: inferReproducesTheEvaluation) or three ways, and
    // how many there are.
    double heldOutAccuracy(const QString &pattern, int *count, bool threeWays = false,
                           bool digitsOnly = false)
    {
        const QList<int> &predicted = threeWays ? m_heldOutHeard3 : m_heldOutPredicted;
        const QRegularExpression group(pattern);
        int right = 0;
        *count = 0;
        for (int i = 0; i < m_heldOutFiles.size(); ++i) {
            const QString name = QFileInfo(m_heldOutFiles[i]).fileName();
            if (!group.match(speakerOf(name)).hasMatch()) continue;
            if (digitsOnly && !name.front().isDigit()) continue;
            ++*count;
            right += predicted[i] == classOf(name);
        }
        return *count ? double(right) / *count : 0;
    }

private slots:
    void aHeldOutSpeechEngineIsRecognised()
    {
        QString why;
        QVERIFY2(heldOutTrained(&why), qPrintable(why));
        int count = 0;
        const double accuracy = heldOutAccuracy("^flite-", &count),
                     threeWays = heldOutAccuracy("^flite-", &count, true);
        int digits = 0;
        const double digitsRight = heldOutAccuracy("^flite-", &digits, true, true);
        qInfo("held-out engine (flite): %.2f%% of its %d recordings recognised (as infer hears "
              "them by default, three ways and halfway balanced: %.2f%%, its %d digits %.2f%%)",
              100 * accuracy, count, 100 * threeWays, digits, 100 * digitsRight);
        QVERIFY(count > 0);
        QVERIFY2(accuracy >= kHeldOutEngine, qPrintable(QString::number(accuracy)));
        QVERIFY2(threeWays >= kHeldOutEngine, qPrintable(QString::number(threeWays)));
    }

    void heldOutLanguagesAreRecognised()
    {
        QString why;
        QVERIFY2(heldOutTrained(&why), qPrintable(why));
        int count = 0;
        const double accuracy = heldOutAccuracy("^festival-(cs|ca)-", &count),
                     threeWays = heldOutAccuracy("^festival-(cs|ca)-", &count, true);
        int digits = 0;
        const double digitsRight = heldOutAccuracy("^festival-(cs|ca)-", &digits, true, true);
        qInfo("held-out languages (Czech, Catalan): %.2f%% of their %d recordings recognised "
              "(as infer hears them by default, three ways and halfway balanced: %.2f%%, their "
              "%d digits %.2f%%)",
              100 * accuracy, count, 100 * threeWays, digits, 100 * digitsRight);
        // Five voices: 600 digits and 160 other words.
        QCOMPARE(count, 760);
        QVERIFY2(accuracy >= kHeldOutLanguages, qPrintable(QString::number(accuracy)));
        QVERIFY2(threeWays >= kHeldOutLanguages, qPrintable(QString::number(threeWays)));
    }

    // The evaluation of every held-out recording, then `infer --warp 0` on each of them: the same
    // confusion matrix (the digits, background and unknown). What infer runs is the
    // preprocessing saved with the model, so this checks that it is the one the run applied.
    void inferReproducesTheEvaluation()
    {
        QString why;
        QVERIFY2(heldOutTrained(&why), qPrintable(why));
        const QJsonObject evaluation = firstEvaluation(m_heldOut.filePath("run"));
        QCOMPARE(evaluation["samples"].toInt(), int(m_heldOutFiles.size()));
        const QJsonArray rows = evaluation["confusion"].toArray();
        QCOMPARE(rows.size(), 12);
        int inferred[12][12] = {};
        for (int i = 0; i < m_heldOutFiles.size(); ++i)
            ++inferred[classOf(QFileInfo(m_heldOutFiles[i]).fileName())][m_heldOutPredicted[i]];
        int wrong = 0;
        for (int t = 0; t < 12; ++t) {
            int row = 0;
            for (int p = 0; p < 12; ++p) {
                QVERIFY2(inferred[t][p] == rows[t].toArray()[p].toInt(),
                         qPrintable(QString("true %1 predicted %2: infer %3, evaluation %4")
                                        .arg(t)
                                        .arg(p)
                                        .arg(inferred[t][p])
                                        .arg(rows[t].toArray()[p].toInt())));
                wrong += t != p ? inferred[t][p] : 0;
                row += inferred[t][p];
            }
            QVERIFY2(row > 0, qPrintable(QString("no held-out recording of class %1").arg(t)));
        }
        qInfo("%d of %lld held-out recordings misrecognised, the same through infer", wrong,
              static_cast<long long>(m_heldOutFiles.size()));
    }

    // Two models listening together (`listen --with`): every window's probabilities are the
    // mean of what each model alone gives it, and the detections come from that mean. A model
    // that hears other windows (half a second) is refused, naming it and why.
    void modelsListenTogether()
    {
        const QString a = m_trained.filePath("run"), b = m_heldOut.filePath("run");
        QVERIFY(QFileInfo::exists(a + "/model.safetensors"));
        QVERIFY(QFileInfo::exists(b + "/model.safetensors"));
        QTemporaryDir dir;
        const QString rec = dir.filePath("rec.wav"), truthFile = dir.filePath("rec.tsv");
        QCOMPARE(makeListenRecording(rec, truthFile, 16, 11).exitCode, 0);
        auto windows = [&](const QStringList &models, QStringList *detections) {
            // (0.4, below the default: what is checked is that the mean's detections come.)
            QStringList args{"listen", models[0], rec, "--windows", "--threshold", "0.4"};
            for (int i = 1; i < models.size(); ++i)
                args << "--with" << models[i];
            const Run r = run(FLOWBENCH_CLI, args);
            QList<QJsonObject> w;
            if (r.exitCode != 0) {
                qWarning("%s", qPrintable(r.err.right(2000)));
                return w;
            }
            for (const QString &line : r.out.trimmed().split('\n')) {
                const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
                if (o["kind"] == "window") w << o["probabilities"].toObject();
                if (o["kind"] == "detection" && detections) *detections << o["class"].toString();
            }
            return w;
        };
        QStringList heard;
        const QList<QJsonObject> wa = windows({a}, nullptr), wb = windows({b}, nullptr),
                                 both = windows({a, b}, &heard);
        QVERIFY(!both.isEmpty());
        QCOMPARE(both.size(), wa.size());
        QCOMPARE(both.size(), wb.size());
        double worst = 0, apart = 0;
        for (int i = 0; i < both.size(); ++i)
            for (const QString &c : both[i].keys()) {
                const double pa = wa[i][c].toDouble(), pb = wb[i][c].toDouble();
                worst = std::max(worst, std::abs(both[i][c].toDouble() - (pa + pb) / 2));
                apart = std::max(apart, std::abs(pa - pb));
            }
        qInfo("two models together: %lld windows, each within %.5f of the mean of the two "
              "(which differ by up to %.2f); %lld detections",
              static_cast<long long>(both.size()), worst, apart,
              static_cast<long long>(heard.size()));
        QVERIFY2(worst < 2e-4, qPrintable(QString::number(worst))); // JSON's 4 decimals
        QVERIFY(apart > 0.1); // two models that differ, or the mean proves nothing
        QVERIFY(!heard.isEmpty());

        // Half-second windows: another model's length is refused before anything is heard.
        const Run half = trainExample(
            dir.filePath("half"), {"train_data.seconds=0.5", "test_data.seconds=0.5",
                                   "train_data.limit=240", "test_data.limit=60", "train.epochs=1"});
        QVERIFY2(half.exitCode == 0, qPrintable(half.err.right(3000)));
        const Run refused = run(FLOWBENCH_CLI, {"listen", a, rec, "--with", dir.filePath("half")});
        QCOMPARE(refused.exitCode, 2);
        const QString message = lastLine(refused.out)["error"].toObject()["message"].toString();
        QVERIFY2(message.contains(dir.filePath("half")) && message.contains("seconds"),
                 qPrintable(refused.out + refused.err));
    }
};

QTEST_GUILESS_MAIN(TestSpokenDigits)
#include "test_spoken_digits.moc"
