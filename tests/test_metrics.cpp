// CPU utilization from /proc/stat, process memory, NVML GPUs (against a fake libnvidia-ml), and
// the sampling thread.

#include "core/metrics/hardware_monitor.h"
#include "core/metrics/nvml.h"

#include <QtTest>

#include <dlfcn.h>
#include <mutex>
#include <thread>

using namespace fb::metrics;

namespace {

// Sets (or unsets, with nullptr) an environment variable for one scope, then restores it.
class EnvGuard {
public:
    EnvGuard(const char *name, const char *value)
        : m_name(name)
        , m_had(qEnvironmentVariableIsSet(name))
        , m_old(qgetenv(name))
    {
        if (value)
            qputenv(name, value);
        else
            qunsetenv(name);
    }
    ~EnvGuard()
    {
        if (m_had)
            qputenv(m_name.constData(), m_old);
        else
            qunsetenv(m_name.constData());
    }
    EnvGuard(const EnvGuard &) = delete;
    EnvGuard &operator=(const EnvGuard &) = delete;

private:
    QByteArray m_name;
    bool m_had;
    QByteArray m_old;
};

// Keeps the fake NVML loaded for the test's lifetime, so its state survives NvmlGpus's dlclose
// and its init count can be read.
class FakeNvml {
public:
    FakeNvml()
        : m_handle(dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL))
    {
        if (m_handle)
            m_initCount = reinterpret_cast<int (*)()>(dlsym(m_handle, "fakeNvmlInitCount"));
    }
    ~FakeNvml()
    {
        if (m_handle) dlclose(m_handle);
    }
    FakeNvml(const FakeNvml &) = delete;
    FakeNvml &operator=(const FakeNvml &) = delete;

    bool ok() const { return m_handle && m_initCount; }
    // nvmlInit_v2 calls not yet matched by nvmlShutdown.
    int initCount() const { return m_initCount(); }

private:
    void *m_handle;
    int (*m_initCount)() = nullptr;
};

// The figures tests/fake_nvml/fake_nvml.cpp reports.
void checkFakeGpu0(const GpuSample &g)
{
    QCOMPARE(g.index, 0);
    QCOMPARE(g.name, std::string("Fake GPU Alpha"));
    QCOMPARE(g.utilizationPercent, 37.0);
    QCOMPARE(g.memoryUtilizationPercent, 12.0);
    QCOMPARE(g.memoryUsedBytes, int64_t(3) << 30);
    QCOMPARE(g.memoryTotalBytes, int64_t(8) << 30);
}

void checkFakeGpu1(const GpuSample &g)
{
    QCOMPARE(g.index, 1);
    QCOMPARE(g.name, std::string("Fake GPU Beta"));
    QCOMPARE(g.utilizationPercent, 91.0);
    QCOMPARE(g.memoryUtilizationPercent, 55.0);
    QCOMPARE(g.memoryUsedBytes, int64_t(10) << 30);
    QCOMPARE(g.memoryTotalBytes, int64_t(16) << 30);
}

} // namespace

class TestMetrics : public QObject {
    Q_OBJECT

private slots:
    void parsesProcStat()
    {
        const char *text = "cpu  100 0 50 800 50 0 0 0 0 0\n"
                           "cpu0 60 0 20 400 20 0 0 0 0 0\n"
                           "cpu1 40 0 30 400 30 0 0 0 0 0\n"
                           "intr 12345\n";
        auto t = parseProcStat(text);
        QVERIFY(t.ok());
        QCOMPARE(t->total.size(), size_t(3));
        QCOMPARE(t->total[0], uint64_t(1000));
        QCOMPARE(t->busy[0], uint64_t(150)); // idle and iowait are not busy
        QCOMPARE(t->busy[2], uint64_t(70));
        QVERIFY(!parseProcStat("intr 1\n").ok());
        QVERIFY(!parseProcStat("cpu 1 2\n").ok());
    }

    void utilizationBetweenReadings()
    {
        auto a = parseProcStat("cpu 100 0 0 900\ncpu0 50 0 0 450\ncpu1 50 0 0 450\n").value();
        auto b = parseProcStat("cpu 250 0 0 950\ncpu0 150 0 0 450\ncpu1 100 0 0 500\n").value();
        const auto u = utilization(a, b);
        QCOMPARE(u.size(), size_t(3));
        QCOMPARE(u[0], 75.0);  // 150 busy of 200
        QCOMPARE(u[1], 100.0); // 100 of 100
        QCOMPARE(u[2], 50.0);  // 50 of 100
        QCOMPARE(utilization(a, a)[0], 0.0);
    }

    void monitorSamplesWhileBusy()
    {
        std::vector<HardwareSample> samples;
        std::mutex m;
        HardwareMonitor monitor(std::chrono::milliseconds(100), [&](const HardwareSample &s) {
            std::lock_guard lock(m);
            samples.push_back(s);
        });
        monitor.start();
        // Keep one core busy so the machine-wide figure is above zero, for 450 ms and until three
        // samples came (a busy machine may run the monitor's thread late; at most 10 s).
        const auto start = std::chrono::steady_clock::now();
        auto count = [&] {
            std::lock_guard lock(m);
            return samples.size();
        };
        volatile double sink = 0;
        for (;;) {
            const auto now = std::chrono::steady_clock::now();
            if (now - start >= std::chrono::seconds(10) ||
                (now - start >= std::chrono::milliseconds(450) && count() >= 3))
                break;
            for (int i = 0; i < 100000; ++i)
                sink = sink + 1.0;
        }
        monitor.stop();
        std::lock_guard lock(m);
        QVERIFY2(samples.size() >= 3, qPrintable(QString::number(samples.size())));
        const auto cores = size_t(std::thread::hardware_concurrency());
        double peak = 0;
        for (const auto &s : samples) {
            QVERIFY(s.cpuPercent >= 0 && s.cpuPercent <= 100);
            QCOMPARE(s.cpuPerCore.size(), cores);
            QVERIFY(s.processMemoryBytes > 1 << 20);
            peak = std::max(peak, s.cpuPercent);
        }
        QVERIFY(peak > 0);
        QVERIFY(processResidentBytes() > 0);
    }

    void nvmlMissingLibrary()
    {
        const char *path = "/nonexistent/flowbench/libnvidia-ml.so.1";
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", path);
        NvmlGpus gpus;
        QVERIFY(!gpus.available());
        QCOMPARE(gpus.libraryPath(), std::string(path));
        QCOMPARE(gpus.deviceCount(), 0);
        const QString status = QString::fromStdString(gpus.status());
        QVERIFY2(status.startsWith("no NVIDIA driver"), qPrintable(status));
        QVERIFY2(status.contains(path), qPrintable(status));
        QVERIFY2(status.contains("dlopen"), qPrintable(status));
        QVERIFY(gpus.sample().empty());
    }

    void nvmlDefaultLibraryName()
    {
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", nullptr);
        NvmlGpus gpus;
        QCOMPARE(gpus.libraryPath(), std::string("libnvidia-ml.so.1"));
        // Either a real driver is there (GPU machine) or the status says why not; when the library
        // could not be loaded, the status names it.
        if (!gpus.available()) {
            const QString status = QString::fromStdString(gpus.status());
            QVERIFY(!status.isEmpty());
            if (status.startsWith("no NVIDIA driver"))
                QVERIFY2(status.contains("libnvidia-ml.so.1"), qPrintable(status));
        }
    }

    void nvmlFakeReportsGpus()
    {
        FakeNvml fake;
        QVERIFY(fake.ok());
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", FAKE_NVML_PATH);
        {
            NvmlGpus gpus;
            QVERIFY2(gpus.available(), gpus.status().c_str());
            QCOMPARE(gpus.status(), std::string());
            QCOMPARE(gpus.deviceCount(), 2);
            QCOMPARE(fake.initCount(), 1);
            const auto samples = gpus.sample();
            QCOMPARE(samples.size(), size_t(2));
            checkFakeGpu0(samples[0]);
            checkFakeGpu1(samples[1]);
            QCOMPARE(gpus.sample().size(), size_t(2)); // sampling again works the same
        }
        QCOMPARE(fake.initCount(), 0); // the destructor called nvmlShutdown
    }

    void nvmlSkipsFailingDevice()
    {
        FakeNvml fake;
        QVERIFY(fake.ok());
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", FAKE_NVML_PATH);
        EnvGuard fail("FAKE_NVML_FAIL_DEVICE", "1");
        NvmlGpus gpus;
        QVERIFY(gpus.available());
        QCOMPARE(gpus.deviceCount(), 2);
        const auto samples = gpus.sample();
        QCOMPARE(samples.size(), size_t(1)); // GPU 1's utilization query fails: left out
        checkFakeGpu0(samples[0]);
    }

    void nvmlInitFailure()
    {
        FakeNvml fake;
        QVERIFY(fake.ok());
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", FAKE_NVML_PATH);
        EnvGuard fail("FAKE_NVML_INIT_FAIL", "1");
        NvmlGpus gpus;
        QVERIFY(!gpus.available());
        QCOMPARE(gpus.deviceCount(), 0);
        QCOMPARE(gpus.status(),
                 std::string("NVML initialization failed: Driver Not Loaded (NVML error 9)"));
        QVERIFY(gpus.sample().empty());
        QCOMPARE(fake.initCount(), 0);
    }

    void nvmlNoGpu()
    {
        FakeNvml fake;
        QVERIFY(fake.ok());
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", FAKE_NVML_PATH);
        EnvGuard count("FAKE_NVML_GPU_COUNT", "0");
        {
            NvmlGpus gpus;
            QVERIFY(!gpus.available());
            QCOMPARE(gpus.status(), std::string("no NVIDIA GPU found"));
            QVERIFY(gpus.sample().empty());
            QCOMPARE(fake.initCount(), 1); // initialized, so it must still shut down
        }
        QCOMPARE(fake.initCount(), 0);
    }

    void monitorReportsFakeGpus()
    {
        FakeNvml fake;
        QVERIFY(fake.ok());
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", FAKE_NVML_PATH);
        std::vector<HardwareSample> samples;
        std::mutex m;
        HardwareMonitor monitor(std::chrono::milliseconds(50), [&](const HardwareSample &s) {
            std::lock_guard lock(m);
            samples.push_back(s);
        });
        monitor.start();
        // Two samples at least (loading the fake NVML may take a while on a busy machine).
        const auto start = std::chrono::steady_clock::now();
        for (;;) {
            {
                std::lock_guard lock(m);
                if (samples.size() >= 2) break;
            }
            if (std::chrono::steady_clock::now() - start >= std::chrono::seconds(10)) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        monitor.stop();
        QCOMPARE(fake.initCount(), 0); // stop() released NVML
        std::lock_guard lock(m);
        QVERIFY2(samples.size() >= 2, qPrintable(QString::number(samples.size())));
        for (const auto &s : samples) {
            QCOMPARE(s.gpuStatus, std::string());
            QCOMPARE(s.gpus.size(), size_t(2));
            checkFakeGpu0(s.gpus[0]);
            checkFakeGpu1(s.gpus[1]);
        }
    }

    void monitorReportsWhyNoGpu()
    {
        const char *path = "/nonexistent/flowbench/libnvidia-ml.so.1";
        EnvGuard lib("FLOWBENCH_NVML_LIBRARY", path);
        std::vector<HardwareSample> samples;
        std::mutex m;
        HardwareMonitor monitor(std::chrono::milliseconds(1000), [&](const HardwareSample &s) {
            std::lock_guard lock(m);
            samples.push_back(s);
        });
        monitor.start();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        monitor.stop(); // the last sample is the only one
        std::lock_guard lock(m);
        QCOMPARE(samples.size(), size_t(1));
        QVERIFY(samples[0].gpus.empty());
        QVERIFY2(samples[0].gpuStatus.find(path) != std::string::npos,
                 samples[0].gpuStatus.c_str());
        QVERIFY(samples[0].processMemoryBytes > 0);
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"
