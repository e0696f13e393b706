#pragma once

#include "widgets/audio/pcm.h"

#include <QAudioDevice>
#include <QAudioFormat>
#include <QImage>
#include <QList>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

class QAudioSource;
class QCheckBox;
class QDoubleSpinBox;
class QSpinBox;
class QTemporaryDir;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QListWidget;
class QProcess;
class QPushButton;
class QTimer;
template <typename T> class QFutureWatcher;

namespace fb::data {
class FlatPeaks;
}

namespace fb::widgets {

// "Try the model": choose a trained run (or a model or checkpoint file), drop image or audio
// files on the panel (or open them), and see what the model predicts: the input as the model
// sees it after its saved preprocessing (the image; for a recording its waveform and its
// features, low frequencies at the bottom), the top classes as a bar chart, and the time it
// took. Predictions come from a `flowbench-cli infer --inputs` child process, like runs: the
// engine never runs inside the window (docs/inference.md).
class InferencePanel : public QWidget {
    Q_OBJECT

public:
    explicit InferencePanel(QWidget *parent = nullptr);
    ~InferencePanel() override;

    void setCliPath(const QString &path) { m_cli = path; }
    // Whether a microphone can be used, and if not, why (the record button's tooltip).
    bool canRecord() const;
    QString recordTip() const;
    // A run folder, a model.safetensors or a checkpoint.
    void setModel(const QString &path);
    QString model() const;
    // Predicts these files (as a drop does); the answers arrive with predicted(). One recording
    // longer than 3 s is listened to instead (listenToFile): listeningStopped() follows, or
    // predicted() where it cannot be (the status says why), at once or once it has been read.
    // Hold to record's takes are predicted whatever their length (listenToLong false).
    void predictFiles(const QStringList &files, bool listenToLong = true);
    bool busy() const;

    // Listen mode: the microphone streams into one `flowbench-cli listen MODEL --stdin
    // --windows` child (the model loaded once), and the panel shows a scrolling spectrogram of
    // the last seconds with the detections marked, the current top classes, the detections as
    // they happen and each window's latency (docs/audio.md, "Listen in the window").
    bool startListening(QString *why = nullptr);
    // Listen mode on a recording: one `flowbench-cli listen MODEL FILE --windows` child hears all
    // of it as fast as it can, with the row's settings; the strip shows the seconds it has
    // reached (recordings up to 5 minutes), the detections are listed with their times in the
    // recording, and choosing one shows the seconds around it. A recording dropped or opened
    // alone that lasts more than 3 s is listened to this way; a shorter one is predicted as one
    // window (docs/audio.md, "Listen in the window").
    bool listenToFile(const QString &path, QString *why = nullptr);
    // The recording Listen mode reads, hears or heard last (empty for the microphone), and the
    // time in it at the strip's right edge. A recording of up to 5 minutes is read for the strip
    // first, in another thread (an MP3 of 5 minutes takes seconds to decode): the status says
    // "Reading…", listening() is true, and Stop listening stops it before it starts.
    QString listenedFile() const { return m_readPath.isEmpty() ? m_file : m_readPath; }
    double stripEnd() const { return m_fileNow; }
    // Stops the microphone; the child hears the end of the stream, prints its summary and ends.
    // On a recording, the child is ended where it is.
    void stopListening();
    bool listening() const;
    // How Listen mode detects (`listen --threshold`, `--average`) and which other trained runs
    // hear every window with the model (`--with`, their probabilities averaged). Read when
    // listening starts; the main window keeps the threshold and the windows between sessions.
    void setListenThreshold(double probability);
    double listenThreshold() const;
    void setListenAverage(int windows);
    int listenAverage() const;
    void setListenWith(const QStringList &models);
    QStringList listenWith() const;
    // Whether every window, and every recording predicted, is also heard 8% faster and slower
    // (`listen --warp 0.08` and `infer --warp 0.08`, the engine's default; off: `--warp 0`, a
    // third of the work).
    void setListenWarp(bool on);
    bool listenWarp() const;
    // "Balance classes": on (the default), a dropped or opened recording's probabilities have
    // the training data's class shares taken out halfway (infer's default for recordings,
    // --balance 0.5); off, as trained (--balance 0). Pictures are read as trained either way.
    void setBalanceClasses(bool on);
    bool balanceClasses() const;
    struct Heard {
        QString label;
        double time = 0, probability = 0; // seconds from the start of listening
    };
    const QList<Heard> &detections() const { return m_heard; }
    int windowsHeard() const { return int(m_windowMs.size()); }
    double windowMsPercentile(double q) const;
    // The scrolling spectrogram as shown (empty before listening).
    QImage listenStrip() const { return m_stripImage; }

    // Tune: a recording of your own and its labels (Audacity's exported labels: what was said
    // when) heard by one `flowbench-cli listen FILE --truth LABELS --sweep` child with Listen
    // mode's settings and models: how many of the words the model finds at their time, its
    // false alarms an hour, and the setting that finds the most within 2 an hour
    // (docs/audio.md, "How well your model listens"). tuned() follows, then tuning(). A
    // recording too short to tell `budget` false alarms an hour from none (one false alarm in
    // it is more) gets its score and no setting.
    bool tuneOn(const QString &recording, const QString &labels, QString *why = nullptr,
                double budget = 2.0);
    // What the Tune… button's dialog (TuneDialog) opens with: the last recording, labels and
    // budget tuned with, which the main window keeps between sessions. A stream of held-out
    // recordings lies in the panel's temporary folder, which goes with it: the recording and
    // labels kept are then none.
    void setTuneChoices(const QString &recording, const QString &labels, double budget);
    QString tuneRecording() const;
    QString tuneLabels() const;
    double tuneBudget() const { return m_tuneBudget; }
    bool tuningNow() const;
    struct Tuning {
        bool ok = false;
        QString text; // what the panel says of it (or why it failed)
        int keywords = 0, found = 0, falseAlarms = 0;
        double perHour = 0;
        bool hasBest = false; // a setting kept to the budget, on a recording that can tell
        int bestAverage = 0;
        double bestThreshold = 0;
        int bestFound = 0;
        // The best as the model's tuned setting (listen.json's content) and the model file it
        // goes beside: what useTunedSetting keeps.
        QByteArray setting;
        QString modelFile;
    };
    const Tuning &tuning() const { return m_tuning; }
    // Listen mode's threshold and windows set to the tuning's best, which is also kept beside
    // the model file (listen.json), where flowbench-cli listen and this panel find it again
    // when the model is chosen; false without one. keptSetting() says where it was kept.
    bool useTunedSetting();
    QString keptSetting() const { return m_kept; }
    // The model's tuned setting (listen.json beside its file), where it was tuned for the
    // models listening now and the ±8% hearings as set: the row takes its threshold and
    // windows, and the status says so (or why it is not used). A row that holds a tuned
    // setting goes back to the user's own where the next model has none that applies. Choosing
    // a model (setModel, the Model field), the ±8% box and the runs listening together do this;
    // nothing changes while listening or tuning. True when the row took one.
    bool takeTunedSetting();
    // The row's threshold and windows as the user set them, a tuned setting in the row aside:
    // what the main window keeps between sessions.
    double ownListenThreshold() const
    {
        return m_thresholdTuned ? m_ownThreshold : listenThreshold();
    }
    int ownListenAverage() const { return m_averageTuned ? m_ownAverage : listenAverage(); }

    // What the panel shows, per input, newest last.
    struct Result {
        QString input, error;
        QStringList classes;
        QList<double> probabilities;
        double milliseconds = 0;
        bool audio = false;
        QImage view;             // the sample as the model saw it
        QImage saliency;         // what moved the prediction: red where covering it hurt
        QVector<float> waveform; // recordings
        int sampleRate = 0;
        double clipped = 0; // a recording's share of samples cut off flat (infer's "clipped")
        QString model; // the model that answered (the field as the batch started)
    };
    const QList<Result> &results() const { return m_results; }

signals:
    // A batch of files has its answers (or the reason there are none, in status()).
    void predicted();
    // Listen mode heard a word.
    void detected(const QString &label, double time);
    // Listen mode ended (stopped, or the child failed: status() says why).
    void listeningStopped();
    // A tuning ended (tuning() has its result or why it failed).
    void tuned();

public:
    QString status() const;
    // Listen mode's word that what it hears is clipped (cut off flat at its loudest: recorded
    // too loud), empty when it is not: said live of the microphone's seconds as they come, and
    // of the whole when the child's summary says so (listen's "clipped"), for a recording too.
    QString clippedWarning() const;

protected:
    void changeEvent(QEvent *e) override; // the charts follow the theme
    void dragEnterEvent(QDragEnterEvent *e) override;
    void dropEvent(QDropEvent *e) override;

private:
    void showResult(int index);
    void drawBars(const QStringList &classes, const QVector<double> &values);
    void finishBatch(int exitCode);
    void readLines();

    QString m_cli;
    QLineEdit *m_model;
    QPushButton *m_choose, *m_open;
    QCheckBox *m_showSaliency;
    // The microphone: hold the button to record, release to predict.
    QPushButton *m_record;
    QAudioDevice m_input;
    QAudioFormat m_format;
    QAudioSource *m_source = nullptr;
    QByteArray m_recorded;
    QTemporaryDir *m_recordings = nullptr;
    int m_takes = 0;
    void startRecording();
    void stopRecording();
    // Listen mode.
    QPushButton *m_listenButton;
    QDoubleSpinBox *m_threshold;
    QSpinBox *m_average;
    QLineEdit *m_with; // other runs, separated by ';'
    QPushButton *m_addWith;
    QCheckBox *m_warp;
    QCheckBox *m_balance;
    QPushButton *m_tune; // Tune…: a labelled recording heard at every setting
    QProcess *m_listen = nullptr;
    QAudioSource *m_listenSource = nullptr;
    QIODevice *m_listenIo = nullptr;
    QTimer *m_stripTimer;
    QLabel *m_strip;
    QImage m_stripImage;
    std::vector<float> m_ring;  // the last seconds heard, mono at the device's rate
    int64_t m_heardSamples = 0; // since listening started
    float m_stripTop = -1e30f;  // the loudest level seen (dB), the strip's brightest
    QByteArray m_listenPending;
    QByteArray m_listenRemainder; // a frame's first bytes, waiting for the rest
    int64_t m_listenDropped = 0;  // frames skipped because the engine fell behind
    bool m_listenFailed = false;  // the reason is in the status; the summary must not hide it
    QList<Heard> m_heard;
    std::vector<double> m_windowMs;
    void readListenLines();
    void setListenSettingsEnabled(bool on);
    // The runs listening together and the ±8% hearings as listen's options (--with, --warp).
    QStringList hearingArgs() const;
    void takeListenAudio();
    // The microphone's samples (mono) counted for clipping in blocks of a second, each apart:
    // a second clipped shows the warning at once.
    void watchClipping(const std::vector<float> &mono);
    std::unique_ptr<fb::data::FlatPeaks> m_blockFlat;
    size_t m_blockFill = 0;      // samples in the block so far
    int m_clippedSeconds = 0;    // blocks found clipped while listening
    QLabel *m_clipped = nullptr; // the warning; hidden when there is none
    void showClipped(const QString &text);
    QString micTooLoud() const; // what the microphone's clipping lines end with
    // The listen child on the microphone's stream or a file (`source`: listen's arguments after
    // the model), with the row's settings; and the panel as it shows listening.
    bool startListenChild(const QStringList &source, QString *why);
    // Why neither the microphone nor a recording can be listened to now (no model, a clip being
    // recorded, a tuning); empty when they can.
    QString whyNotListen() const;
    void showListening();
    void drawStrip();
    // The spectrogram of the kStripSeconds before samples[end] (`now` seconds), with the
    // detections in them.
    void paintStrip(const float *samples, size_t end, int rate, double now);
    QString m_file;                   // the recording Listen mode hears (listenToFile)
    std::vector<float> m_fileSamples; // its samples for the strip, mono at 16 kHz
    double m_fileSeconds = 0, m_fileNow = 0;
    bool m_fileStopped = false; // ended by Stop listening, not by the child
    // A recording's samples read for the strip before its child starts (listenToFile), away
    // from the window's thread; what was heard last stays until they are read.
    struct FileRead {
        std::vector<float> samples;
        QString error;
    };
    QFutureWatcher<FileRead> *m_read = nullptr;
    QString m_readPath; // the recording being read; empty when none is
    double m_readSeconds = 0;
    bool m_readStopped = false; // Stop listening came while it was read
    QString m_readTitle;        // the title before, given back if it is not heard
    void fileRead();
    // Listening to `path` (`seconds` long) with its samples for the strip (none past 5 minutes).
    bool startFileChild(const QString &path, double seconds, std::vector<float> samples,
                        QString *why);
    // The Listen row while listening (or reading a recording to listen to) or not: Hold to
    // record, the Listen button and the settings read when listening starts.
    void showListenRow(bool listening);
    // The row as it is when nothing listens, and a tuned setting of a model chosen meanwhile.
    void showNotListening();
    bool m_summarised = false;  // the child's summary has come
    // The newest window's top classes, drawn at the strip's next tick (m_windowShown after).
    QStringList m_topClasses;
    QVector<double> m_topValues;
    bool m_windowShown = true;
    void listenEnded(int exitCode);
    QProcess *m_tuneProcess = nullptr;
    QByteArray m_tuneOut; // its stdout read so far (progress lines are shown as they come)
    Tuning m_tuning;
    QString m_kept; // where useTunedSetting last kept a setting
    // The row's threshold and windows hold a tuned setting (takeTunedSetting, useTunedSetting)
    // rather than the user's own, kept here; a change the user makes to one of them makes that
    // one theirs.
    bool m_thresholdTuned = false, m_averageTuned = false, m_settingRow = false;
    // Set from the row (the engine's defaults, exec::ListenOptions) in the constructor.
    double m_ownThreshold = 0;
    int m_ownAverage = 0;
    QString m_lookedAt;         // the model takeTunedSetting last looked at
    bool m_statusTuned = false; // the status speaks of a model's tuned setting
    void setRowTuned(double threshold, int average);
    void setRowOwn();
    bool m_tuneAsks = false; // started from the button: offer its best setting when done
    QString m_tuneRecording, m_tuneLabels;
    double m_tuneBudget = 2.0;
    void tuneEnded(int exitCode);
    QLabel *m_status, *m_title, *m_preview, *m_latency;
    QListWidget *m_history;
    QCustomPlot *m_bars, *m_wave;
    QProcess *m_process;
    QByteArray m_pending;
    QList<Result> m_results;
    int m_batchStart = 0;
    QString m_batchModel; // the model the running batch asked
    // The list's entry for m_results[i]: the file and its answer, and the model that gave it
    // once the list holds answers of more than one (a file tried again with another model reads
    // "click.wav: 8 (ru-s1)" above "click.wav: background (cl-s1)").
    void labelHistoryItem(int i);
    bool m_historyNamesModels = false; // set by predictFiles from the answers in the list
};

} // namespace fb::widgets
