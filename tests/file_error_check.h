#pragma once

// Shared by the tests of readers (IDX, safetensors): an error about a file must name the file
// both as a field and in its printed text.

#include "core/base/result.h"

#include <QtTest>

inline void checkFileError(const fb::Error &e, const QString &path, const QString &fragment)
{
    QCOMPARE(QString::fromStdString(e.file), path);
    const QString text = QString::fromStdString(e.str());
    QVERIFY2(text.contains(path), qPrintable(text));
    QVERIFY2(text.contains(fragment, Qt::CaseInsensitive),
             qPrintable(text + " lacks: " + fragment));
}
