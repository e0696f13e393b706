#pragma once

#include <QDialog>
#include <QPointer>
#include <QProcess>

class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace fb::widgets {

// A stretch of a recording for people: "45 s" under two minutes, else "136.8 min" (what the
// Tune dialog and Tune's message say of recordings and of the time away from their words).
QString durationText(double seconds);

// Try the Model's Tune…: what a tuning hears and what it may cost, asked in one place. The
// recording of the user's own, its labels (Audacity's exported labels; a file of the
// recording's name with .txt or .tsv beside it is filled in), and the false alarms an hour the
// best setting may raise (the sweep's --budget). It says how long the recording is and how much
// of it away from the words a budget needs, before minutes go into hearing it; Tune is enabled
// once both files can be read (docs/audio.md, "Listen in the window").
class TuneDialog : public QDialog {
    Q_OBJECT

public:
    TuneDialog(const QString &recording, const QString &labels, double budget,
               QWidget *parent = nullptr);
    ~TuneDialog() override;
    // Closing it while From held-out… runs ends the child first.
    void done(int result) override;

    QString recording() const;
    QString labels() const;
    double budget() const;
    void setRecording(const QString &path);
    void setLabels(const QString &path);
    void setBudget(double falseAlarmsPerHour);
    // What stops Tune now ("" when it can start), as the dialog shows it.
    QString problem() const;
    // The line under the budget: the recording's length and the minutes the budget needs.
    QString hint() const;
    // "From the held-out recordings": `flowbench-cli held-out-stream MODEL` writes the run's
    // held-out recordings as one labelled recording into `folder`, and the dialog takes it and
    // its labels (heldOutMade() follows; problem() says why not). Without a model or a cli the
    // button is disabled, saying why.
    void setHeldOutSource(const QString &cli, const QString &model, const QString &folder);
    bool makeHeldOut();

signals:
    void heldOutMade(bool ok);

private:
    void check();
    QLineEdit *m_recording, *m_labels;
    QDoubleSpinBox *m_budget;
    QLabel *m_hint, *m_problem;
    QDialogButtonBox *m_buttons;
    QPushButton *m_start = nullptr;
    QString m_filledLabels; // labels filled in from the recording's name, not typed
    double m_seconds = -1;  // the recording's length, -1 where it cannot be read
    QString m_unreadable;   // why not, in the words of the reader
    QString m_secondsOf;    // the recording both were found for
    QPushButton *m_fromHeldOut = nullptr;
    QString m_cli, m_model, m_folder;
    QString m_making;                 // the stream held-out-stream is writing, while it runs
    QString m_heldOut, m_heldOutNote; // the last one it made, and what it holds
    QPointer<QProcess> m_child;
    void stopChild();
    QString m_recordingBefore; // the recording before the last change (its labels follow it)
};

} // namespace fb::widgets
