// The scaling planner: ring all-reduce cost, the plan's rows, and `flowbench-cli plan` as a user
// runs it (with a given step time: nothing measured, so the figures are exact).
#include <QJsonArray>
#include <QtTest>

#include "core/dist/scaling_plan.h"
#include "tests/cli_process.h"

using namespace fb;

class TestScalingPlan : public QObject {
    Q_OBJECT

private slots:
    void ringAllReduce()
    {
        const dist::Link link{"test", 10e9, 2e-6};
        QCOMPARE(dist::ringAllReduceSeconds(1, 1e9, link), 0.0);
        // 2 ranks: each sends and receives the whole buffer once, in 2 latency-bound steps.
        QCOMPARE(dist::ringAllReduceSeconds(2, 1e9, link), 1e9 / 10e9 + 2 * 2e-6);
        // Many ranks: the bytes tend to twice the buffer; the latency grows with the ranks.
        const double t = dist::ringAllReduceSeconds(1000, 1e9, link);
        QVERIFY(std::abs(t - (2 * 999.0 / 1000 * 0.1 + 2 * 999 * 2e-6)) < 1e-12);
    }

    void planRows()
    {
        const dist::Link link{"test", 10e9, 0};
        const dist::PlanRow one = dist::planRow(1, 4e6, 0.010, 128, link);
        QCOMPARE(one.stepSeconds, 0.010);
        QCOMPARE(one.efficiency, 1.0);
        QCOMPARE(one.samplesPerSecond, 12800.0);
        const dist::PlanRow four = dist::planRow(4, 4e6, 0.010, 128, link);
        QCOMPARE(four.computeSeconds, 0.0025);
        QCOMPARE(four.allReduceSeconds, 2 * 3.0 / 4 * 4e6 / 10e9);
        QCOMPARE(four.stepSeconds, four.computeSeconds + four.allReduceSeconds);
        QVERIFY(four.efficiency < 1 && four.efficiency > 0.8);
        QCOMPARE(four.speedup, 0.010 / four.stepSeconds);
        // A batch that does not divide: the largest share sets the pace (43 of 128 for 3 ranks);
        // more ranks than samples: one sample each, never less.
        QCOMPARE(dist::planRow(3, 4e6, 0.010, 128, link).computeSeconds, 0.010 * 43 / 128);
        QCOMPARE(dist::planRow(1024, 4e6, 0.010, 128, link).computeSeconds, 0.010 / 128);
        // With latency, past some count the sums cost more than the compute they save.
        const dist::Link slow{"slow", 10e9, 5e-6};
        QVERIFY(dist::planRow(4096, 4e6, 0.010, 128, slow).speedup <
                dist::planRow(64, 4e6, 0.010, 128, slow).speedup);
    }

    void presets()
    {
        QCOMPARE(dist::linkPreset("nvlink").value().bytesPerSecond, 900e9);
        QCOMPARE(dist::linkPreset("infiniband").value().bytesPerSecond, 50e9);
        QCOMPARE(dist::linkPreset("ethernet").value().latencySeconds, 5e-6);
        QVERIFY(!dist::linkPreset("carrier pigeon").ok());
        QVERIFY(dist::linkPreset("carrier pigeon").error().message.find("nvlink") !=
                std::string::npos);
    }

    // The command: the MLP example has 235,146 parameters, so 940,584 bytes of gradients.
    void planCommand()
    {
        const QString mlp = FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json";
        const CliResult r = runCli({"plan", mlp, "--ranks", "1,2,64", "--link", "pcie",
                                    "--step-ms", "4", "--json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.summary["status"].toString(), QStringLiteral("ok"));
        QCOMPARE(r.summary["gradient_bytes"].toDouble(), 235146.0 * 4);
        QCOMPARE(r.summary["link"].toObject()["gb_per_s"].toDouble(), 128.0);
        const QJsonArray rows = r.summary["rows"].toArray();
        QCOMPARE(rows.size(), 3);
        QCOMPARE(rows[0].toObject()["efficiency"].toDouble(), 1.0);
        const dist::Link pcie = dist::linkPreset("pcie").value();
        const dist::PlanRow two = dist::planRow(2, 235146.0 * 4, 0.004, 128, pcie);
        QCOMPARE(rows[1].toObject()["step_s"].toDouble(), two.stepSeconds);
        QVERIFY(rows[2].toObject()["efficiency"].toDouble() < rows[1].toObject()["efficiency"].toDouble());
        // A link of one's own; the text table for people.
        const CliResult custom = runCli({"plan", mlp, "--ranks", "8", "--bandwidth", "1",
                                         "--latency", "50", "--step-ms", "4"});
        QCOMPARE(custom.exitCode, 0);
        QVERIFY(custom.out.contains("custom, 1.0 GB/s, 50.0 us"));
        QVERIFY(custom.out.contains("efficiency"));
        // Bad input: a clear message, exit 2.
        const CliResult bad = runCli({"plan", mlp, "--ranks", "2,x", "--json"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.summary["error"].toObject()["message"].toString().contains("--ranks"));
        QCOMPARE(runCli({"plan", mlp, "--link", "pigeon", "--step-ms", "1"}).exitCode, 2);
        QCOMPARE(runCli({"plan", mlp, "--bandwidth", "5", "--step-ms", "1"}).exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestScalingPlan)
#include "test_scaling_plan.moc"
