#pragma once

#include <QAudioDevice>
#include <QAudioFormat>
#include <QImage>
#include <QList>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QAudioSource;
class QCheckBox;
class QTemporaryDir;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QListWidget;
class QProcess;
class QPushButton;

namespace fb::widgets {

// A WAV file (RIFF, 16-bit PCM) of raw samples in `format` (any sample format Qt Multimedia
// gives; written as 16-bit, channels kept).
QByteArray wavFromPcm(const QByteArray &pcm, const QAudioFormat &format);

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
    // Predicts these files (as a drop does); the answers arrive with predicted().
    void predictFiles(const QStringList &files);
    bool busy() const;

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
    };
    const QList<Result> &results() const { return m_results; }

signals:
    // A batch of files has its answers (or the reason there are none, in status()).
    void predicted();

public:
    QString status() const;

protected:
    void changeEvent(QEvent *e) override; // the charts follow the theme
    void dragEnterEvent(QDragEnterEvent *e) override;
    void dropEvent(QDropEvent *e) override;

private:
    void showResult(int index);
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
    QLabel *m_status, *m_title, *m_preview, *m_latency;
    QListWidget *m_history;
    QCustomPlot *m_bars, *m_wave;
    QProcess *m_process;
    QByteArray m_pending;
    QList<Result> m_results;
    int m_batchStart = 0;
};

} // namespace fb::widgets
