#pragma once
// Test mains that tell CTest how much really ran on a machine without a GPU.
//
// A Qt Test executable whose GPU checks QSKIP without a GPU still exits 0, and CTest would count
// it as passed. These mains let CTest report such checks as skipped instead (SKIP_RETURN_CODE
// 77, set in tests/CMakeLists.txt):
// - FB_QTEST_GPU_MAIN(Class): every function of the test needs a GPU. Without one the
//   functions still run (their no-GPU halves assert, then skip) and, when none failed, the
//   executable exits 77.
// - FB_QTEST_MAIN_WITH_GPU_PART(Class): the functions whose names start with "gpu" need a GPU,
//   the others do not. `--cpu-part` runs the others, `--gpu-part` the "gpu" ones (exiting 77
//   without a GPU as above); with neither, all run as with QTEST_GUILESS_MAIN. CTest registers
//   the two parts as two tests. Written here because Qt Test can select functions but cannot
//   leave any out.

#include "core/backend/backend.h"

#include <QCoreApplication>
#include <QMetaMethod>
#include <QStringList>
#include <QtTest>

namespace fb::test {

inline constexpr int kSkippedExitCode = 77;

inline bool haveGpu()
{
    return backendFor(Device::cuda(0)).ok();
}

// The test functions of `object` (private slots that are not Qt Test's fixtures or data
// functions) whose names do or do not start with "gpu".
inline QStringList testFunctions(const QObject &object, bool gpu)
{
    static const QStringList fixtures = {"initTestCase", "cleanupTestCase", "init", "cleanup"};
    QStringList names;
    const QMetaObject *meta = object.metaObject();
    for (int i = meta->methodOffset(); i < meta->methodCount(); ++i) {
        const QMetaMethod m = meta->method(i);
        if (m.methodType() != QMetaMethod::Slot || m.access() != QMetaMethod::Private) continue;
        const QString name = QString::fromLatin1(m.name());
        if (fixtures.contains(name) || name.endsWith(QLatin1String("_data"))) continue;
        if (name.startsWith(QLatin1String("gpu")) == gpu) names << name;
    }
    return names;
}

enum class Part { All, Cpu, Gpu };

inline int runTests(QObject &object, int argc, char **argv, bool wholeTestNeedsGpu)
{
    QStringList args;
    Part part = wholeTestNeedsGpu ? Part::Gpu : Part::All;
    bool partGiven = false;
    for (int i = 0; i < argc; ++i) {
        const QString a = QString::fromLocal8Bit(argv[i]);
        if (a == QLatin1String("--cpu-part")) {
            part = Part::Cpu;
            partGiven = true;
        } else if (a == QLatin1String("--gpu-part")) {
            part = Part::Gpu;
            partGiven = true;
        } else {
            args << a;
        }
    }
    if (partGiven && !wholeTestNeedsGpu) args << testFunctions(object, part == Part::Gpu);
    const int failures = QTest::qExec(&object, args);
    if (failures != 0) return failures == kSkippedExitCode ? failures + 1 : failures;
    return part == Part::Gpu && !haveGpu() ? kSkippedExitCode : 0;
}

} // namespace fb::test

#define FB_QTEST_MAIN_PARTS(TestObject, wholeTestNeedsGpu)                                         \
    int main(int argc, char **argv)                                                                \
    {                                                                                              \
        QCoreApplication app(argc, argv);                                                          \
        TestObject tc;                                                                             \
        QTEST_SET_MAIN_SOURCE_PATH                                                                 \
        return fb::test::runTests(tc, argc, argv, wholeTestNeedsGpu);                              \
    }
#define FB_QTEST_GPU_MAIN(TestObject) FB_QTEST_MAIN_PARTS(TestObject, true)
#define FB_QTEST_MAIN_WITH_GPU_PART(TestObject) FB_QTEST_MAIN_PARTS(TestObject, false)
