// Run folders (core/io): the files every run keeps (docs/runs.md), read as the Runs panel and
// `reproduce` read them: SHA-256 digests, the exact loss log, manifests and their differences,
// and listing run folders, new, older and damaged.

#include "core/io/loss_log.h"
#include "core/io/manifest.h"
#include "core/io/run_folder.h"
#include "core/io/sha256.h"

#include <QtTest>

#include <QTemporaryDir>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <sys/wait.h>
#include <unistd.h>

using namespace fb;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void writeText(const fs::path &path, const std::string &text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

uint32_t bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// A pid that surely names no process now: a child that has exited and been reaped.
int64_t deadPid()
{
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

const io::RunEntry *find(const std::vector<io::RunEntry> &runs, const std::string &id)
{
    for (const auto &r : runs)
        if (r.id == id) return &r;
    return nullptr;
}

} // namespace

class TestRunFolder : public QObject {
    Q_OBJECT

private slots:
    void sha256MatchesTheStandardVectors()
    {
        // FIPS 180-2's examples.
        QCOMPARE(io::sha256Hex("abc"),
                 std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(io::sha256Hex(""),
                 std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QTemporaryDir dir;
        // More than one read buffer (1 MiB) of bytes, so the pieces are chained.
        std::string big(3 * 1024 * 1024 + 17, 'x');
        for (size_t i = 0; i < big.size(); ++i)
            big[i] = char(i * 131 % 251);
        const std::string path = (dir.path() + "/big.bin").toStdString();
        writeText(path, big);
        auto d = io::sha256File(path);
        QVERIFY(d.ok());
        QCOMPARE(d->bytes, int64_t(big.size()));
        QCOMPARE(d->sha256, io::sha256Hex(big));
        auto missing = io::sha256File(path + ".nope");
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().file, path + ".nope");
    }

    // The losses come back bit for bit: what `reproduce` compares.
    void lossLogIsExact()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/losses.csv").toStdString();
        std::vector<float> values{0.1f,    2.30258512f,     1e-38f,
                                  3.4e38f, 1.17549435e-38f, std::nextafter(1.0f, 2.0f),
                                  7e-45f /* subnormal */};
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(0.0f, 5.0f);
        for (int i = 0; i < 2000; ++i)
            values.push_back(u(rng));
        {
            io::LossLog log;
            QVERIFY(log.open(path, 0).ok());
            for (size_t i = 0; i < values.size(); ++i)
                log.append(int64_t(i + 1), values[i]);
        }
        auto back = io::readLossLog(path);
        QVERIFY2(back.ok(), back.ok() ? "" : back.error().str().c_str());
        QCOMPARE(back->size(), values.size());
        for (size_t i = 0; i < values.size(); ++i)
            QVERIFY2(bits((*back)[i]) == bits(values[i]), qPrintable(QString::number(i)));
    }

    // A resume keeps the steps up to its checkpoint and drops the ones trained after it, which
    // it trains again; a run killed mid-line leaves a cut line that is not an error.
    void lossLogResumesAndSurvivesAKill()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/losses.csv").toStdString();
        writeText(path, "step,loss\n1,2.5\n2,2.25\n3,2\n4,1.75\n5,1.5\n");
        {
            io::LossLog log;
            QVERIFY(log.open(path, 3).ok());
            log.append(4, 1.0f);
        }
        auto back = io::readLossLog(path);
        QVERIFY(back.ok());
        QCOMPARE(back->size(), size_t(4));
        QCOMPARE((*back)[2], 2.0f);
        QCOMPARE((*back)[3], 1.0f);

        writeText(path, "step,loss\n1,2.5\n2,2.2"); // killed while writing step 2's line
        back = io::readLossLog(path);
        QVERIFY(back.ok());
        QCOMPARE(back->size(), size_t(2)); // "2.2" reads as a number: kept
        writeText(path, "step,loss\n1,2.5\n2,");
        back = io::readLossLog(path);
        QVERIFY(back.ok());
        QCOMPARE(back->size(), size_t(1));

        writeText(path, "step,loss\n1,2.5\n3,2\n"); // a gap: not this run's log
        back = io::readLossLog(path);
        QVERIFY(!back.ok());
        QCOMPARE(back.error().line, 3);
        QVERIFY(back.error().message.find("step 2 was expected") != std::string::npos);
        writeText(path, "step,loss\n1,abc\n2,1\n");
        back = io::readLossLog(path);
        QVERIFY(!back.ok());
        QCOMPARE(back.error().line, 2);
    }

    void dataFilesAreListedOrDigested()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        std::vector<std::string> few, many;
        for (int i = 0; i < 2; ++i) {
            writeText(root / "few" / ("f" + std::to_string(i)), "data " + std::to_string(i));
            few.push_back((root / "few" / ("f" + std::to_string(i))).string());
        }
        auto listed = io::dataFilesJson(few);
        QVERIFY(listed.ok());
        QCOMPARE((*listed)["files"].size(), size_t(2));
        QCOMPARE((*listed)["files"][0]["sha256"].get<std::string>(), io::sha256Hex("data 0"));
        QCOMPARE((*listed)["files"][0]["bytes"].get<int64_t>(), int64_t(6));

        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 5; ++i) {
                const fs::path p = root / "pics" / ("class" + std::to_string(c)) /
                                   ("img" + std::to_string(i) + ".png");
                writeText(p, "pixels " + std::to_string(c * 10 + i));
                many.push_back(p.string());
            }
        auto digest = io::dataFilesJson(many);
        QVERIFY(digest.ok());
        QCOMPARE((*digest)["count"].get<size_t>(), size_t(15));
        QCOMPARE((*digest)["folder"].get<std::string>(), (root / "pics").string());
        const std::string before = (*digest)["sha256"];
        // The order files were read in does not matter; one changed byte does.
        std::reverse(many.begin(), many.end());
        QCOMPARE(io::dataFilesJson(many).value()["sha256"].get<std::string>(), before);
        writeText(root / "pics/class1/img3.png", "pixels 14"); // was "pixels 13"
        QVERIFY(io::dataFilesJson(many).value()["sha256"].get<std::string>() != before);

        // An unreadable file (one its source skipped) is part of the digest, not an error.
        const std::string changed = io::dataFilesJson(many).value()["sha256"];
        many.push_back((root / "pics/gone.png").string());
        auto withGone = io::dataFilesJson(many);
        QVERIFY(withGone.ok());
        QVERIFY(withGone.value()["sha256"].get<std::string>() != changed);
        auto one = io::dataFilesJson({(root / "pics/gone.png").string()});
        QCOMPARE(one.value()["files"][0]["sha256"].get<std::string>(), std::string("unreadable"));
        QVERIFY(one.value()["files"][0]["bytes"].is_null());
    }

    void manifestDifferencesNameTheKeys()
    {
        const json a = {{"created", "2026-01-01"},
                        {"threads", 2},
                        {"device", {{"name", "cpu"}, {"model", "EPYC"}}},
                        {"software", {{"onednn", "2.6.3"}, {"opencv", "4.6.0"}}},
                        {"data", {{"train_data", {{"sha256", "aa"}}}}}};
        json b = a;
        b["created"] = "2026-02-02"; // when it was made says nothing: not a difference
        QVERIFY(io::manifestDifferences(a, b).empty());
        b["threads"] = 1;
        b["software"]["onednn"] = "3.0";
        b["data"]["train_data"]["sha256"] = "bb";
        b["device"].erase("model");
        const auto d = io::manifestDifferences(a, b);
        QCOMPARE(d.size(), size_t(4));
        std::map<std::string, std::pair<std::string, std::string>> byKey;
        for (const auto &x : d)
            byKey[x.key] = {x.original, x.other};
        QCOMPARE(byKey["threads"].first, std::string("2"));
        QCOMPARE(byKey["threads"].second, std::string("1"));
        QCOMPARE(byKey["software.onednn"].second, std::string("\"3.0\""));
        QCOMPARE(byKey["data.train_data.sha256"].first, std::string("\"aa\""));
        QCOMPARE(byKey["device.model"].second, std::string("(none)"));
    }

    // New, older and damaged folders are all listed, each with what can be said of it; a
    // folder that is not a run is not.
    void listsRunsOfEveryKind()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        json ok = {{"name", "baseline"},
                   {"tags", {"lr", "small"}},
                   {"status", "ok"},
                   {"pipeline", "fashion_mnist_mlp"},
                   {"device", "cpu"},
                   {"started", "2026-11-25T10:00:00+0000"},
                   {"wall_s", 12.5},
                   {"test_accuracy", 0.84},
                   {"best_test_accuracy", 0.85},
                   {"steps", 938},
                   {"epochs_done", 2},
                   {"epochs", 2}};
        fs::create_directories(root / "run-ok");
        QVERIFY(io::writeRunFile((root / "run-ok").string(), ok).ok());
        writeText(root / "run-ok/checkpoints/step-00000938/checkpoint.safetensors", "x");

        // An older Flowbench's folder: no run.json; its event log says how it went.
        writeText(root / "run-old/pipeline.json", "{}");
        writeText(root / "run-old/events.jsonl",
                  "{\"type\":\"run_start\",\"device\":\"cpu\",\"epochs\":3,\"pipeline\":"
                  "\"x/fashion_mnist_cnn.json\"}\n"
                  "{\"type\":\"epoch\",\"epoch\":1,\"evaluations\":[{\"accuracy\":0.8}]}\n"
                  "{\"type\":\"epoch\",\"epoch\":2,\"evaluations\":[{\"accuracy\":0.9}]}\n"
                  "{\"type\":\"epoch\",\"epoch\":3,\"evaluations\":[{\"accuracy\":0.88}]}\n"
                  "{\"status\":\"ok\",\"steps\":30,\"wall_s\":4,\"final_loss\":0.3}\n");

        writeText(root / "run-damaged/run.json", "{\"format\": \"flowbench.run\", \"name\": ");
        writeText(root / "run-newer/run.json", "{\"format\": \"flowbench.run\", \"version\": 9}");
        // Values of the wrong kinds: listed, never a crash.
        writeText(root / "run-odd/run.json",
                  "{\"format\": \"flowbench.run\", \"tags\": 5, \"wall_s\": \"long\", "
                  "\"name\": [1], \"status\": {}}");
        json killed = {{"status", "running"},
                       {"host", io::hostName()},
                       {"pid", deadPid()},
                       {"started", "2026-11-25T11:00:00+0000"}};
        fs::create_directories(root / "run-killed");
        QVERIFY(io::writeRunFile((root / "run-killed").string(), killed).ok());
        json running = killed;
        running["pid"] = int64_t(::getpid()); // this test: alive, but not a Flowbench engine
        fs::create_directories(root / "run-pid-reused");
        QVERIFY(io::writeRunFile((root / "run-pid-reused").string(), running).ok());
        fs::create_directories(root / "not-a-run/stuff");

        const auto runs = io::listRuns(root.string());
        QCOMPARE(runs.size(), size_t(7));
        QVERIFY(!find(runs, "not-a-run"));

        const io::RunEntry *r = find(runs, "run-ok");
        QVERIFY(r);
        QCOMPARE(r->name, std::string("baseline"));
        QCOMPARE(r->tags, (std::vector<std::string>{"lr", "small"}));
        QCOMPARE(r->status, std::string("ok"));
        QCOMPARE(r->bestTestAccuracy, 0.85);
        QCOMPARE(r->seconds, 12.5);
        QVERIFY(r->hasCheckpoint);
        QVERIFY(!r->resumable()); // finished
        QVERIFY(r->problem.empty());

        r = find(runs, "run-old");
        QCOMPARE(r->version, 0);
        QCOMPARE(r->status, std::string("ok"));
        QCOMPARE(r->pipeline, std::string("fashion_mnist_cnn"));
        QCOMPARE(r->testAccuracy, 0.88);
        QCOMPARE(r->bestTestAccuracy, 0.9);
        QCOMPARE(r->steps, int64_t(30));
        QVERIFY(!r->started.empty()); // the folder's time

        r = find(runs, "run-damaged");
        QVERIFY(r->problem.find("not valid JSON") != std::string::npos);
        r = find(runs, "run-newer");
        QVERIFY(r->problem.find("version 9") != std::string::npos);
        r = find(runs, "run-odd");
        QVERIFY(r); // whatever it says, the panel gets an entry

        QCOMPARE(find(runs, "run-killed")->status, std::string("killed"));
        QCOMPARE(find(runs, "run-pid-reused")->status, std::string("killed"));
        // Newest first: the two from 11:00 before the one from 10:00.
        auto pos = [&](const std::string &id) { return find(runs, id) - runs.data(); };
        QVERIFY(pos("run-killed") < pos("run-ok"));
    }

    void renameAndTag()
    {
        QTemporaryDir dir;
        const fs::path run = fs::path(dir.path().toStdString()) / "r";
        writeText(run / "events.jsonl", "{\"type\":\"run_start\",\"device\":\"cpu\"}\n");
        // An older folder gets a run.json that keeps what its log said.
        QVERIFY(io::setRunNameAndTags(run.string(), "  first try ", {"a", " b", "a", ""}).ok());
        io::RunEntry r = io::readRun(run.string());
        QCOMPARE(r.name, std::string("first try"));
        QCOMPARE(r.tags, (std::vector<std::string>{"a", "b"}));
        QCOMPARE(r.device, std::string("cpu"));
        QCOMPARE(r.status, std::string("killed")); // its log has no summary
        QVERIFY(!io::setRunNameAndTags(run.string(), "  ", {}).ok());
        QCOMPARE(io::readRun(run.string()).name, std::string("first try"));
        writeText(run / "run.json", "garbage");
        QVERIFY(!io::setRunNameAndTags(run.string(), "x", {}).ok()); // never overwrites it
    }
};

QTEST_GUILESS_MAIN(TestRunFolder)
#include "test_run_folder.moc"
