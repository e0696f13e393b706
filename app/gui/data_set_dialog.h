#pragma once

#include <QDialog>
#include <QProcess>
#include <QStringList>

class QDialogButtonBox;
class QLabel;
class QProgressBar;

namespace fb::app {

// Makes a data set of recordings in a `flowbench-cli make-data` child process, as runs are made
// (a hang or a crash there never takes the window), and shows it: the count made so far, read
// from the "made N of M" lines the CLI prints on stderr, with Cancel while it works; after, where
// the recordings went, or why they did not.
class DataSetDialog : public QDialog {
    Q_OBJECT
public:
    enum class State { Idle, Working, Done, Failed, Cancelled };

    explicit DataSetDialog(QWidget *parent = nullptr);
    ~DataSetDialog() override;

    // Runs `cli arguments...`, which makes the recordings in folder. False, with the reason,
    // when it is already working.
    bool start(const QString &cli, const QStringList &arguments, const QString &folder,
               QString *why = nullptr);
    // Added to the message when the recordings are made ("The example trains on them.").
    void setDoneNote(const QString &note) { m_doneNote = note; }
    // Stops the child (SIGTERM: the recordings being made finish, the ones made are kept).
    void cancel();

    State state() const { return m_state; }
    bool isWorking() const { return m_state == State::Working; }
    int made() const { return m_made; }
    int total() const { return m_total; }
    QString folder() const { return m_folder; }
    QString text() const; // what the dialog says now
    QProgressBar *progressBar() const { return m_bar; }
    QDialogButtonBox *buttons() const { return m_buttons; }

signals:
    void progressed(int made, int total);
    // Done, Failed or Cancelled; message says it in words (the folder and count when done).
    void ended(fb::app::DataSetDialog::State state, const QString &message);

protected:
    void reject() override; // Esc and the title bar's close button cancel while it works

private:
    void readStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void showProgress();
    void end(State state, const QString &message);

    QLabel *m_text;
    QProgressBar *m_bar;
    QDialogButtonBox *m_buttons;
    QProcess *m_process = nullptr;
    State m_state = State::Idle;
    QString m_folder;
    QString m_doneNote;
    QByteArray m_stderr;      // a line not yet complete
    QStringList m_stderrTail; // the last lines, for a failure's message
    int m_made = 0;
    int m_total = 0;
    bool m_cancelRequested = false;
};

} // namespace fb::app
