#pragma once

#include <QDateTime>
#include <QString>
#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTimer;

namespace fb::widgets {

class LogModel;
class LogFilter;

// The log dock: the messages of a run (and of the window) with time, level and message. Lines
// that name a node link to it. A level filter and a find field narrow what is shown; the view
// follows new lines until the user scrolls up, and follows again once they scroll back down.
// Keeps the newest maximumLines() lines and says how many older ones it let go.
class LogView : public QWidget {
    Q_OBJECT
public:
    explicit LogView(QWidget *parent = nullptr);
    ~LogView() override;

    // level: "debug", "info", "warning" or "error" (anything else reads as info). A text of
    // several lines becomes several rows. Lines are shown in batches, a few dozen times a second
    // at most, so a burst of thousands of lines costs one update.
    void addLine(const QString &level, const QString &text, const QString &node = {});
    void addLineAt(const QDateTime &time, const QString &level, const QString &text,
                   const QString &node = {});
    void clear();

    int lineCount() const;        // lines kept, whatever the filter shows
    int visibleLineCount() const; // lines that pass the level filter and the find text
    int droppedLineCount() const; // older lines let go to stay within maximumLines()
    // The kept lines as plain text, one a line: "HH:mm:ss  level  node: message".
    QString text() const;

    void setMaximumLines(int lines); // default 100000
    int maximumLines() const { return m_maxLines; }
    void setMinimumLevel(const QString &level); // the level filter: this level and above
    void setFindText(const QString &text);      // shows only lines containing it (any case)

signals:
    // The user clicked the node of a line, or activated (double-click, Enter) a line naming one.
    // The node id alone: a line about "conv1.out_channels" activates "conv1".
    void nodeActivated(const QString &nodeId);

protected:
    void changeEvent(QEvent *event) override;

private:
    void flush();
    void applyFilter();
    void updateNote();
    void updateColors();
    void copySelection();

    LogModel *m_model = nullptr;
    LogFilter *m_filter = nullptr;
    QTableView *m_view = nullptr;
    QComboBox *m_level = nullptr;
    QLineEdit *m_find = nullptr;
    QLabel *m_note = nullptr;
    QTimer *m_flushTimer = nullptr;
    QTimer *m_findTimer = nullptr;
    int m_maxLines = 100000;
    qint64 m_dropped = 0;
    bool m_follow = true;
};

} // namespace fb::widgets
