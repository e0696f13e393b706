// The window's "Try the Model" panel, driven offscreen as a person would use it: a model trained
// by flowbench-cli on a folder of dark and bright pictures, files dropped on the panel, and what
// it then shows: the predicted class, the bar chart of the top classes, the input as the model
// saw it, the time it took, and a clear answer for a file that is not an image or a model that
// cannot be opened.

#include "core/data/audio_files.h"
#include "image_folder_fixture.h"
#include "widgets/inference/inference_panel.h"

#include <qcustomplot.h>

#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QMediaDevices>
#include <QMimeData>
#include <QPushButton>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUrl>

#include <cmath>

using fb::widgets::InferencePanel;

namespace {

void drop(QWidget &target, const QStringList &files)
{
    QList<QUrl> urls;
    for (const QString &f : files)
        urls << QUrl::fromLocalFile(f);
    QMimeData mime;
    mime.setUrls(urls);
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&target, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent dropped(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&target, &dropped);
}

} // namespace

class TestInferencePanel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_run;

private slots:
    // The charts follow the theme: a dark palette gives a dark background and light text, as
    // the live plots have (they were white on the dark theme).
    void chartsFollowTheTheme()
    {
        InferencePanel panel;
        auto *bars = panel.findChild<QCustomPlot *>("inferenceBars");
        QVERIFY(bars);
        QPalette dark = panel.palette();
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::Text, QColor(230, 230, 230));
        panel.setPalette(dark);
        bars->resize(200, 120);
        QCOMPARE(bars->toPixmap(200, 120).toImage().pixelColor(1, 1), QColor(30, 30, 30));
        QCOMPARE(bars->xAxis->tickLabelColor(), QColor(230, 230, 230));
        QCOMPARE(bars->yAxis->labelColor(), QColor(230, 230, 230));
        QPalette light = dark;
        light.setColor(QPalette::Base, Qt::white);
        light.setColor(QPalette::Text, Qt::black);
        panel.setPalette(light);
        QCOMPARE(bars->toPixmap(200, 120).toImage().pixelColor(1, 1), QColor(Qt::white));
        QCOMPARE(bars->xAxis->tickLabelColor(), QColor(Qt::black));
    }

    void initTestCase()
    {
        // Dark pictures (values 20..59) and bright ones (180..219), 8x8.
        for (int i = 0; i < 20; ++i) {
            fixture::writePgm(m_dir.filePath(QString("pics/dark/%1.pgm").arg(i)), 8, 8,
                              QByteArray(64, char(20 + 2 * i)));
            fixture::writePgm(m_dir.filePath(QString("pics/bright/%1.pgm").arg(i)), 8, 8,
                              QByteArray(64, char(180 + 2 * i)));
        }
        fixture::writeImageFolderPipeline(
            m_dir.filePath("pics.json"),
            QJsonObject{
                {"path", m_dir.filePath("pics")}, {"subset", "all"}, {"height", 8}, {"width", 8}},
            2);
        m_run = m_dir.filePath("run");
        QProcess p;
        p.start(FLOWBENCH_CLI, {"run", m_dir.filePath("pics.json"), "--device", "cpu", "--set",
                                "train.epochs=2", "--set", "train.batch_size=8", "--out", m_run});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }

    void droppedFilesArePredicted()
    {
        fixture::writePgm(m_dir.filePath("try/night.pgm"), 12, 6, QByteArray(72, char(30)));
        fixture::writePgm(m_dir.filePath("try/snow.pgm"), 5, 5, QByteArray(25, char(230)));
        QFile notes(m_dir.filePath("try/notes.pgm"));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("not a picture");
        notes.close();

        InferencePanel panel;
        panel.setCliPath(FLOWBENCH_CLI);
        panel.setModel(m_run);
        panel.resize(900, 400);
        panel.show();
        QSignalSpy done(&panel, &InferencePanel::predicted);
        drop(panel, {m_dir.filePath("try/night.pgm"), m_dir.filePath("try/snow.pgm"),
                     m_dir.filePath("try/notes.pgm")});
        QVERIFY(done.wait(60000));
        QCOMPARE(panel.results().size(), 3);
        const auto &night = panel.results()[0], &snow = panel.results()[1];
        QCOMPARE(night.classes.value(0), QString("dark"));
        QCOMPARE(snow.classes.value(0), QString("bright"));
        QCOMPARE(night.classes.size(), 2); // top 5 of two classes
        QVERIFY(night.probabilities[0] > 0.5 && night.probabilities[0] <= 1.0);
        QVERIFY(night.milliseconds > 0);
        // The input as the model saw it: 8x8 after stretching the 12x6 picture; what mattered
        // over it, cell for cell.
        QCOMPARE(night.view.size(), QSize(8, 8));
        QCOMPARE(night.saliency.size(), QSize(8, 8));
        QVERIFY(panel.results()[2].error.contains("not an image"));
        QVERIFY2(panel.status().contains("2 predicted; 1 could not be read"),
                 qPrintable(panel.status()));

        // On screen: the newest is shown; choose the first in the list to see it.
        auto *history = panel.findChild<QListWidget *>("inferenceHistory");
        QCOMPARE(history->count(), 3);
        QVERIFY(history->item(2)->text().contains("unreadable"));
        history->setCurrentRow(0);
        auto *title = panel.findChild<QLabel *>("inferenceTitle");
        QVERIFY2(title->text().contains("night.pgm") && title->text().contains("dark"),
                 qPrintable(title->text()));
        QVERIFY(panel.findChild<QLabel *>("inferenceLatency")->text().endsWith("ms"));
        QVERIFY(!panel.findChild<QLabel *>("inferencePreview")->pixmap().isNull());
        auto *bars = panel.findChild<QCustomPlot *>("inferenceBars");
        QCOMPARE(bars->plottableCount(), 1);
        auto *b = qobject_cast<QCPBars *>(bars->plottable(0));
        QVERIFY(b);
        QCOMPARE(b->data()->size(), 2);
        QCOMPARE(b->data()->at(0)->value, night.probabilities[0]);
        // One model so far: the entries do not name it.
        QVERIFY2(!history->item(0)->text().contains("("), qPrintable(history->item(0)->text()));

        // The same file tried with another model (here the run's model file named rather than
        // its folder): every entry now says which model answered it.
        panel.setModel(m_run + "/model.safetensors");
        drop(panel, {m_dir.filePath("try/night.pgm")});
        QVERIFY(done.wait(60000));
        QCOMPARE(history->count(), 4);
        QCOMPARE(history->item(0)->text(), QString("night.pgm: dark (run)"));
        QCOMPARE(history->item(3)->text(), QString("night.pgm: dark (run/model)"));
        QVERIFY2(history->item(3)->toolTip().contains("model: " + m_run + "/model.safetensors"),
                 qPrintable(history->item(3)->toolTip()));
        QCOMPARE(panel.results()[3].model, m_run + "/model.safetensors");
    }

    // The microphone button works where there is an input device and says why not where there
    // is none (this build machine has none: the disabled case is what runs here).
    void microphoneOnlyWhereThereIsOne()
    {
        InferencePanel panel;
        auto *record = panel.findChild<QPushButton *>("inferenceRecord");
        QVERIFY(record);
        if (QMediaDevices::audioInputs().isEmpty()) {
            QVERIFY(!record->isEnabled());
            QVERIFY2(record->toolTip().contains("no audio input device"),
                     qPrintable(record->toolTip()));
        } else {
            QVERIFY(record->isEnabled());
            QVERIFY(record->toolTip().contains(QMediaDevices::defaultAudioInput().description()));
        }
    }

    // Recordings are kept as WAV files that the engine reads back sample for sample, whatever
    // sample format the device gives (16-bit mono, float stereo).
    void recordingsBecomeWavFiles()
    {
        QTemporaryDir dir;
        const int n = 1600;
        for (const auto sampleFormat : {QAudioFormat::Int16, QAudioFormat::Float}) {
            QAudioFormat f;
            f.setSampleRate(16000);
            f.setChannelCount(sampleFormat == QAudioFormat::Int16 ? 1 : 2);
            f.setSampleFormat(sampleFormat);
            QByteArray pcm;
            for (int i = 0; i < n; ++i)
                for (int c = 0; c < f.channelCount(); ++c) {
                    const float v = 0.5f * float(std::sin(2 * M_PI * 440 * i / 16000.0));
                    if (sampleFormat == QAudioFormat::Int16) {
                        const qint16 s = qint16(std::lround(v * 32767));
                        pcm.append(reinterpret_cast<const char *>(&s), 2);
                    } else {
                        pcm.append(reinterpret_cast<const char *>(&v), 4);
                    }
                }
            const QString path = dir.filePath(QString("r%1.wav").arg(int(sampleFormat)));
            QFile out(path);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(fb::widgets::wavFromPcm(pcm, f));
            out.close();
            fb::data::AudioFilesOptions o;
            o.seconds = 0.1;
            o.trimDb = 0;
            auto x = fb::data::decodeAudioFile(path.toStdString(), o);
            QVERIFY2(x.ok(), x.ok() ? "" : x.error().str().c_str());
            QCOMPARE(x->size(), size_t(n));
            for (int i = 0; i < n; i += 37)
                QVERIFY(std::abs((*x)[size_t(i)] -
                                 0.5f * float(std::sin(2 * M_PI * 440 * i / 16000.0))) < 1e-3f);
        }
    }

    void aModelThatCannotBeOpenedIsSaid()
    {
        InferencePanel panel;
        panel.setCliPath(FLOWBENCH_CLI);
        QSignalSpy done(&panel, &InferencePanel::predicted);
        panel.predictFiles({m_dir.filePath("try/night.pgm")});
        QCOMPARE(done.count(), 1); // no model chosen: said at once
        QVERIFY(panel.status().contains("Choose a trained model"));
        panel.setModel(m_dir.filePath("pics")); // a folder without a model
        panel.predictFiles({m_dir.filePath("try/night.pgm")});
        QVERIFY(done.wait(30000));
        QVERIFY2(panel.status().contains("holds no model.safetensors"), qPrintable(panel.status()));
        QVERIFY(panel.results().isEmpty());
    }

    // The engine's answers are read without trusting them: fields of the wrong type, null
    // probabilities (a model whose weights are inf), absurd shapes. Before, a mistyped field
    // threw out of the slot and ended the window.
    void mistypedAnswersAreNotTrusted()
    {
        QTemporaryDir dir;
        const QString cli = dir.filePath("fake-cli");
        {
            QFile f(cli);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"(#!/bin/sh
cat <<'END'
{"input": 5, "top": "x"}
{"input": "a.png", "top": [{"class": 3, "probability": "high"}], "ms": "fast"}
{"input": "b.png", "top": [{"class": "cat", "probability": null}]}
{"input": "c.png", "top": [5, {"class": "dog", "probability": 0.9}], "sample": 12,
{"input": "d.png", "top": [{"class": "dog", "probability": 0.9}], "sample": "AAAA", "input_shape": [1, -5, 1000000000000], "saliency": [], "waveform": {}, "sample_rate": "x", "kind": 7}
{"input": "e.png", "top": [{"class": "dog", "probability": 0.75}], "ms": 1.5}
END
)");
        }
        QVERIFY(QFile::setPermissions(cli, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        InferencePanel panel;
        panel.setCliPath(cli);
        panel.setModel(m_run);
        QSignalSpy done(&panel, &InferencePanel::predicted);
        panel.predictFiles({m_dir.filePath("try/night.pgm")});
        QVERIFY(done.wait(30000));
        const auto &r = panel.results();
        QCOMPARE(r.size(), 5);           // the unfinished line is not an answer
        QCOMPARE(r[0].input, QString()); // a number where a name belongs reads as none
        QVERIFY2(!r[0].error.isEmpty(), qPrintable(r[0].error));
        QVERIFY2(r[1].error.contains("no usable probabilities"), qPrintable(r[1].error));
        QVERIFY2(r[2].error.contains("no usable probabilities"), qPrintable(r[2].error));
        QVERIFY(r[3].error.isEmpty());
        QVERIFY(r[3].view.isNull()); // no picture from an impossible shape
        QCOMPARE(r[3].classes, QStringList{"dog"});
        QCOMPARE(r[4].classes, QStringList{"dog"});
        QCOMPARE(r[4].probabilities.value(0), 0.75);
        QVERIFY2(panel.status().contains("predicted"), qPrintable(panel.status()));
    }
};

QTEST_MAIN(TestInferencePanel)
#include "test_inference_panel.moc"
