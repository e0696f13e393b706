#pragma once

#include <QAudioDevice>
#include <QAudioFormat>
#include <QElapsedTimer>
#include <QHash>
#include <QImage>
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QAudioSource;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSoundEffect;

namespace fb::data {
class FlatPeaks;
}

namespace fb::widgets {

// A class or speaker name as it can stand in a clip's file name ({label}_{speaker}_{take}.wav,
// what audio_folder's pattern reads): lower case letters, digits and '-', at most 32; empty when
// nothing of it is usable.
QString clipNamePart(const QString &name);

// "Record": a keyword-spotting data set made in the window (docs/audio.md, "Record your own").
// A list of classes (words, plus `background` and `unknown`); takes from the microphone, held
// (hold to talk) or long (the speaker repeats the word; voice-activity detection cuts the take
// into 1-second clips centred on each word); background noise recorded continuously and cut
// into 1-second windows; audio files and folders imported the same way. Every clip is a 16 kHz
// WAV file in one folder, named {label}_{speaker}_{take}.wav, the layout the spoken-digits
// example reads; each has its spectrogram, and can be played, relabelled and deleted (to the
// desktop's trash). "Train on this" writes a pipeline from the spoken-digits template pointed
// at the folder and asks the window to run it.
class RecordPanel : public QWidget {
    Q_OBJECT

public:
    static constexpr int kRate = 16000;        // the clips' rate
    static constexpr int kClipSamples = kRate; // 1 s
    // The folder's words, one a line, so that a class without clips is kept between sessions.
    static constexpr const char *kClassListFile = "classes.txt";

    explicit RecordPanel(QWidget *parent = nullptr);
    ~RecordPanel() override;

    // Where new data sets go: ~/.local/share/flowbench/recordings/my_words.
    static QString defaultFolder();
    // The folder of clips (made when the first clip is saved); the clips there are listed.
    void setFolder(const QString &dir);
    QString folder() const;
    void setSpeaker(const QString &name);
    QString speaker() const;
    // The pipeline "Train on this" starts from (resources/examples/spoken_digits.json).
    void setTemplate(const QString &pipeline) { m_template = pipeline; }

    // Classes: the words, then background and unknown (always there).
    QStringList classes() const;
    bool addClass(const QString &name, QString *why = nullptr);
    // Removes a word that has no clips (its clips are the person's work: deleted or moved to
    // another class first, one by one); background and unknown stay.
    bool removeClass(const QString &name, QString *why = nullptr);
    void selectClass(const QString &name);
    QString currentClass() const;

    // The microphone (Qt Multimedia's default input), and why there is none.
    bool canRecord() const;
    QString recordTip() const;
    // A take of the current class: started, and stopped (then cut into clips and saved).
    bool startTake(QString *why = nullptr);
    void stopTake();
    bool recording() const { return m_source != nullptr; }

    // Mono samples at kRate of one take (or one file), cut as the class asks (background:
    // windows; a word: one clip per utterance) and saved as `label`'s clips. The number saved.
    int addTake(const std::vector<float> &samples, const QString &label, const QString &speaker);
    // Audio files and folders (a folder's subfolders name classes; loose files go to the current
    // class). Unreadable files are named in status(). The number of clips saved.
    int importPaths(const QStringList &paths);

    struct Clip {
        QString path, label, speaker;
        int take = 0;
    };
    // Every clip of the folder, by class, speaker and take.
    const QList<Clip> &clips() const { return m_clips; }
    // The clips shown: those of the current class.
    QList<int> shownClips() const;
    bool relabel(int clip, const QString &label, QString *why = nullptr);
    bool removeClip(int clip, QString *why = nullptr);
    // Where the last deleted clip is now (in a trash folder).
    QString trashedPath() const { return m_trashed; }
    void play(int clip);

    // The pipeline for this folder (the template with the folder as its data, as many outputs
    // as classes with clips, speakers held out when there are several), saved as
    // FOLDER/pipeline.json; empty, with the reason, when there is not enough to train on.
    QString writePipeline(QString *why = nullptr);

    QString status() const;

signals:
    void clipsChanged();
    // "Train on this": the pipeline writePipeline() saved.
    void trainRequested(const QString &pipeline);

protected:
    void dragEnterEvent(QDragEnterEvent *e) override;
    void dropEvent(QDropEvent *e) override;

private:
    void rescan();
    // Writes the words to FOLDER/classes.txt (one a line); false when it cannot.
    bool saveClassList() const;
    // A word left without clips (its last deleted or moved) stays a class: into the list.
    void keepWhenEmptied(const QString &label);
    // The Remove button: for a word without clips, and not while a take runs.
    void updateRemoveClass();
    int clipCount(const QString &label) const;
    void refreshClasses();
    void refreshClips();
    // The current class's clips and take buttons (when the class shown changes).
    void showClass();
    void showClip(int clip);
    void setStatus(const QString &text);
    void labelTakeButtons();
    int nextTake(const QString &label, const QString &speaker) const;
    // addTake without redrawing the lists (an import draws them once, at the end).
    int saveClips(const std::vector<float> &samples, const QString &label, const QString &speaker);
    // The take at 16 kHz mono; flat counts its flat peaks (a clipped take) before resampling.
    std::vector<float> takeSamples(data::FlatPeaks &flat) const;
    // A clip's spectrogram, or why it cannot be read; kept per file.
    struct Picture {
        QImage image;
        QString error;
    };
    const Picture &pictureOf(const QString &path);
    QHash<QString, Picture> m_pictures;

    QLineEdit *m_folder, *m_speaker, *m_newClass;
    QPushButton *m_chooseFolder, *m_addClass, *m_removeClass, *m_hold, *m_long, *m_import, *m_train;
    QPushButton *m_play, *m_delete;
    QComboBox *m_relabel;
    QListWidget *m_classes, *m_clipList;
    QLabel *m_status, *m_detail, *m_detailTitle;
    QProgressBar *m_level;
    QSoundEffect *m_player;
    QString m_template;
    QStringList m_words; // the classes added, besides background and unknown
    QString m_scanned;   // the folder m_words belong to
    QList<Clip> m_clips;
    // The microphone.
    QAudioDevice m_input;
    QAudioFormat m_format;
    QAudioSource *m_source = nullptr;
    QIODevice *m_io = nullptr;
    QByteArray m_recorded;
    QElapsedTimer m_takeTime;
    QString m_takeClass; // the class of the take being recorded
    QString m_lastMessage;
    QString m_trashed;
};

} // namespace fb::widgets
