// CPU utilization from /proc/stat, process memory, and the sampling thread.

#include "core/metrics/hardware_monitor.h"

#include <QtTest>

#include <thread>

using namespace fb::metrics;

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
        // Keep one core busy so the machine-wide figure is above zero.
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(450);
        volatile double sink = 0;
        while (std::chrono::steady_clock::now() < until)
            sink = sink + 1.0;
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
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"
