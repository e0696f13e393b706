#pragma once

// Image-folder data made by tests, and the MLP example reading it: grey PGM (P5) files are
// written byte by byte, so no image library is involved in making them.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

namespace fixture {

// A w x h grey image; `pixels` holds w * h bytes (fewer: the file ends early, a damaged one).
inline void writePgm(const QString &path, int w, int h, const QByteArray &pixels)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(QString("P5\n%1 %2\n255\n").arg(w).arg(h).toLatin1());
    f.write(pixels);
}

// The MLP example with its train and test sources replaced by an image folder (`source` holds
// the image_folder parameters) and `classes` outputs.
inline void writeImageFolderPipeline(const QString &path, const QJsonObject &source, int classes)
{
    QFile in(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");
    if (!in.open(QIODevice::ReadOnly)) qFatal("the MLP example is missing");
    QJsonObject doc = QJsonDocument::fromJson(in.readAll()).object();
    QJsonArray nodes = doc["nodes"].toArray();
    for (auto &&ref : nodes) {
        QJsonObject n = ref.toObject();
        const QString id = n["id"].toString();
        if (id == "train_data" || id == "test_data") {
            n["type"] = "image_folder";
            n["params"] = source;
        }
        if (id == "fc3") {
            QJsonObject params = n["params"].toObject();
            params["out_features"] = classes;
            n["params"] = params;
        }
        ref = n;
    }
    doc["nodes"] = nodes;
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    out.write(QJsonDocument(doc).toJson());
}

} // namespace fixture
