#pragma once

#include "core/base/result.h"

#include <QImage>
#include <QString>
#include <QStringList>

#include <nlohmann/json_fwd.hpp>

#include <vector>

namespace fb::widgets {

// A test sample the model got wrong, as the `evaluation` event describes it.
struct MisclassifiedImage {
    qint64 index = 0; // position in the evaluate node's data
    int trueClass = 0, predicted = 0;
    double probability = -1; // -1 when the event does not say
    QImage image;            // as the model's input shows it, at its own size
};

// One `evaluation` event (docs/events.md), checked and decoded: what the evaluation view shows.
struct EvaluationData {
    QString node;
    int epoch = 0, epochs = 0; // 0 when the event does not say
    double loss = -1;          // -1 when the event does not say
    QStringList classes;
    std::vector<qint64> confusion; // classes x classes: row = true class, column = predicted
    bool hasGallery = false;       // the event carried `misclassified` (the last epoch's does)
    std::vector<MisclassifiedImage> misclassified;
    qint64 misclassifiedTotal = 0;
    // Every misclassified sample (the event's misclassified_all; empty from older runs), its
    // picture in the run folder's picturesFile for the first picturesKept of them.
    struct Ref {
        qint64 index = 0;
        int trueClass = 0, predicted = 0;
        double probability = -1;
    };
    std::vector<Ref> all;
    QString picturesFile;
    qint64 picturesKept = 0;
    int imageChannels = 0, imageHeight = 0, imageWidth = 0;

    int classCount() const { return int(classes.size()); }
    qint64 count(int trueClass, int predicted) const
    {
        return confusion[size_t(trueClass) * size_t(classes.size()) + size_t(predicted)];
    }
    qint64 support(int trueClass) const; // the row's sum
    qint64 predictedAs(int cls) const;   // the column's sum
    qint64 total() const;
    qint64 correct() const;
    // -1 where undefined (a zero denominator), as the stream's null.
    double precision(int cls) const;
    double recall(int cls) const;
    double f1(int cls) const;
    double accuracy() const; // -1 without samples
};

// Reads an `evaluation` event (or an entry of evaluation.json). Anything that does not fit the
// documented schema is refused with a message saying what; never throws.
Result<EvaluationData> parseEvaluation(const nlohmann::json &event);

// The pixels of a misclassified sample as an image: grey for one channel, RGB or RGBA for three
// or four, the first channel for other counts. Bytes are height x width x channels.
QImage imageFromPixels(const QByteArray &pixels, int height, int width, int channels);

} // namespace fb::widgets
