#include "app/cli/sweep.h"

#include "app/cli/cli_common.h"
#include "app/cli/install_paths.h"
#include "core/base/safe_text.h"
#include "core/io/files.h"
#include "core/io/run_folder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fb::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char *kUsage = R"(Usage: flowbench-cli sweep PIPELINE --set-range NODE.PARAM=V1,V2,... [...]
                            [--random N] [--seed S] [--parallel K] [--threads N]
                            [--set NODE.PARAM=VALUE]... [--device D] [--out DIR] [--name NAME]
                            [--json]

Trains one ordinary run per combination of the values given (a grid), each in a folder of its
own in DIR (default runs/), named after its values and tagged with the sweep's name, and lists
the results, best first. Values are separated by commas, or by semicolons when a value itself
holds commas (normalize.mean=0.5,0.5,0.5;0.4,0.4,0.4).
  --random N     N combinations of the grid, drawn at random (--seed, default 0)
  --parallel K   K runs at a time (default 1), the threads shared among them
  --threads N    CPU threads in all (default: every core)
  --name NAME    the sweep's name (default PIPELINE-sweep-<time>); its record is
                 DIR/NAME.sweep.json
  --json         the result as one JSON object on stdout
Exit 0 when every run ended well, 1 when one failed or the sweep was stopped (Ctrl-C stops
every run after its step, with a checkpoint), 2 for bad input, checked for every combination
before anything runs.
)";

std::atomic<bool> g_stop{false};

void onSignal(int)
{
    g_stop = true;
}

struct Range {
    std::string key; // NODE.PARAM
    std::vector<std::string> values;
};

struct Trial {
    int index = 0;
    std::vector<std::string> values; // one per range
    std::string dir, name;
    pid_t pid = 0;
    json result; // from its run.json when it ended
    std::string status = "pending";
};

// A value as JSON: a number when it reads as one (for the plots), else the text.
json valueJson(const std::string &v)
{
    char *end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (!v.empty() && end && *end == 0 && std::isfinite(d)) return d;
    return v;
}

// Starts `flowbench-cli run ...` with its output in the trial's folder.
pid_t spawnRun(const std::vector<std::string> &args, const std::string &outputFile)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputFile.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char *> argv;
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    // A bare name (no /proc to read our own path from) is looked up on PATH.
    const bool bare = args.front().find('/') == std::string::npos;
    const int rc = bare ? posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ)
                        : posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

} // namespace

int sweep(int argc, char **argv)
{
    std::string pipeline, device, root = "runs", name;
    std::vector<std::string> fixed;
    std::vector<Range> ranges;
    int random = 0, parallel = 1, threads = 0;
    unsigned seed = 0;
    bool asJson = false;
    auto usage = [](const std::string &why) {
        std::fprintf(stderr, "flowbench-cli sweep: %s\n\n%s", safeText(why).c_str(), kUsage);
        return kExitBadInput;
    };
    const auto number = wholeNumber;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("%s", kUsage);
            return kExitOk;
        }
        if (a == "--json") {
            asJson = true;
            continue;
        }
        const bool takesValue = a == "--set-range" || a == "--set" || a == "--random" ||
                                a == "--seed" || a == "--parallel" || a == "--threads" ||
                                a == "--device" || a == "--out" || a == "--name";
        if (takesValue && i + 1 >= argc) return usage(a + " needs a value");
        const char *v = takesValue ? argv[++i] : nullptr;
        long n = 0;
        if (a == "--set-range") {
            const std::string spec = v;
            const size_t eq = spec.find('=');
            if (eq == std::string::npos || eq == 0 || spec.find('.') > eq)
                return usage("--set-range needs NODE.PARAM=V1,V2,..., not '" + spec + "'");
            const std::string list = spec.substr(eq + 1);
            Range r{spec.substr(0, eq),
                    split(list, list.find(';') != std::string::npos ? ';' : ',')};
            for (const std::string &value : r.values)
                if (value.empty()) return usage("--set-range " + spec + " has an empty value");
            for (const Range &other : ranges)
                if (other.key == r.key) return usage(r.key + " is given two ranges");
            ranges.push_back(std::move(r));
        } else if (a == "--set") {
            fixed.push_back(v);
        } else if (a == "--random") {
            if (!number(v, 1, 100000, n)) return usage("--random needs a whole number from 1");
            random = int(n);
        } else if (a == "--seed") {
            if (!number(v, 0, 0xffffffffL, n)) return usage("--seed needs a whole number");
            seed = unsigned(n);
        } else if (a == "--parallel") {
            if (!number(v, 1, 64, n)) return usage("--parallel needs a whole number from 1 to 64");
            parallel = int(n);
        } else if (a == "--threads") {
            if (!number(v, 1, 1024, n)) return usage("--threads needs a whole number from 1");
            threads = int(n);
        } else if (a == "--device") {
            device = v;
        } else if (a == "--out") {
            root = v;
        } else if (a == "--name") {
            name = v;
            if (name.empty() || name.find('/') != std::string::npos)
                return usage("--name needs a name without '/'");
        } else if (a.starts_with("--") || !pipeline.empty()) {
            return usage("unexpected argument " + a);
        } else {
            pipeline = a;
        }
    }
    if (pipeline.empty()) return usage("which pipeline?");
    // Each trial is a child process that reads the file: a pipeline on stdin has none to read.
    if (pipeline == "-") return usage("sweep needs a pipeline file, not standard input");
    if (ranges.empty()) return usage("nothing to sweep: give --set-range NODE.PARAM=V1,V2,...");
    pipeline = resolvePipelineArgument(pipeline);

    // Every combination, the first range varying slowest; or N of them at random.
    std::vector<std::vector<std::string>> combos{{}};
    for (const Range &r : ranges) {
        std::vector<std::vector<std::string>> next;
        for (const auto &c : combos)
            for (const std::string &v : r.values) {
                next.push_back(c);
                next.back().push_back(v);
            }
        combos = std::move(next);
        if (combos.size() > 100000) return usage("more than 100,000 combinations: use --random");
    }
    if (random > 0 && size_t(random) < combos.size()) {
        std::mt19937 rng(seed);
        std::shuffle(combos.begin(), combos.end(), rng);
        combos.resize(size_t(random));
    }

    // What a trial is called: PARAM=VALUE, or NODE.PARAM=VALUE where two ranges share a PARAM.
    std::vector<std::string> labels;
    for (const Range &r : ranges) {
        const std::string param = r.key.substr(r.key.find('.') + 1);
        int same = 0;
        for (const Range &o : ranges)
            same += o.key.substr(o.key.find('.') + 1) == param;
        labels.push_back(same > 1 ? r.key : param);
    }

    // Bad input is found before anything runs.
    std::vector<Trial> trials;
    for (size_t t = 0; t < combos.size(); ++t) {
        Trial trial;
        trial.index = int(t) + 1;
        trial.values = combos[t];
        std::vector<std::string> settings = fixed;
        for (size_t r = 0; r < ranges.size(); ++r) {
            settings.push_back(ranges[r].key + "=" + combos[t][r]);
            trial.name += (r ? " " : "") + labels[r] + "=" + combos[t][r];
        }
        std::vector<Error> problems;
        (void)loadAndValidate(pipeline, settings, problems); // the problems are what counts
        if (!problems.empty()) {
            for (const Error &e : problems)
                std::fprintf(stderr, "trial %d (%s): %s\n", trial.index,
                             safeText(trial.name).c_str(), safeText(e.str()).c_str());
            if (asJson) {
                json error = errorJson(problems.front());
                error["trial"] = trial.name;
                std::cout << jsonLine(json{{"status", "error"}, {"error", error}}) << std::endl;
            }
            return kExitBadInput;
        }
        trials.push_back(std::move(trial));
    }

    if (name.empty()) name = fs::path(pipeline).stem().string() + "-sweep-" + io::timeStamp();
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) return usage("cannot make the folder " + root + ": " + ec.message());
    const std::string record = (fs::path(root) / (name + ".sweep.json")).string();
    if (fs::exists(record, ec)) return usage("a sweep named " + name + " exists in " + root);
    const int width = int(std::to_string(trials.size()).size());
    for (Trial &t : trials) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, "-%0*d", std::max(width, 2), t.index);
        t.dir = (fs::path(root) / (name + suffix)).string();
        if (fs::exists(t.dir, ec)) return usage(t.dir + " exists already");
    }

    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const int total = threads > 0 ? threads : cores;
    const int perTrial = std::max(1, total / std::min<int>(parallel, int(trials.size())));
    std::string self = executablePath();
    if (self.empty()) self = "flowbench-cli"; // no /proc: looked up on PATH

    json sweepJson{{"format", "flowbench.sweep"},
                   {"version", 1},
                   {"name", name},
                   {"pipeline", pipeline},
                   {"created", io::isoTimeNow()},
                   {"parameters", json::array()},
                   {"labels", labels},
                   {"fixed", fixed},
                   {"random", random > 0 ? json(random) : json(nullptr)},
                   {"seed", seed},
                   {"parallel", parallel},
                   {"threads_per_run", perTrial},
                   {"status", "running"}};
    for (const Range &r : ranges)
        sweepJson["parameters"].push_back({{"key", r.key}, {"values", r.values}});
    auto writeRecord = [&] {
        json list = json::array();
        for (const Trial &t : trials) {
            json params = json::object();
            for (size_t r = 0; r < ranges.size(); ++r)
                params[ranges[r].key] = valueJson(t.values[r]);
            json j{{"index", t.index},
                   {"dir", fs::path(t.dir).filename().string()},
                   {"name", t.name},
                   {"params", params},
                   {"status", t.status}};
            for (const char *key :
                 {"test_accuracy", "best_test_accuracy", "final_loss", "wall_s", "error"})
                if (t.result.is_object() && t.result.contains(key)) j[key] = t.result[key];
            list.push_back(j);
        }
        sweepJson["trials"] = list;
        if (Status s = io::writeFileAtomically(record, sweepJson.dump(2) + "\n"); !s)
            std::fprintf(stderr, "warning: %s\n", s.error().str().c_str());
    };
    writeRecord();
    std::fprintf(stderr, "sweep %s: %zu runs of %s, %d at a time, %d threads each; record %s\n",
                 name.c_str(), trials.size(), pipeline.c_str(), parallel, perTrial, record.c_str());

    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    struct sigaction oldInt {
    }, oldTerm{};
    sigaction(SIGINT, &sa, &oldInt);
    sigaction(SIGTERM, &sa, &oldTerm);

    size_t next = 0;
    int running = 0, done = 0;
    bool stopSent = false;
    while (next < trials.size() || running > 0) {
        if (g_stop && !stopSent) {
            stopSent = true;
            std::fprintf(stderr, "stopping: every run ends after its step, with a checkpoint\n");
            for (Trial &t : trials)
                if (t.status == "running") ::kill(t.pid, SIGTERM);
        }
        while (!g_stop && running < parallel && next < trials.size()) {
            Trial &t = trials[next++];
            fs::create_directories(t.dir, ec);
            std::vector<std::string> args{
                self,     "run",  pipeline, "--out", t.dir, "--threads", std::to_string(perTrial),
                "--name", t.name, "--tag",  name};
            if (!device.empty()) args.insert(args.end(), {"--device", device});
            for (const std::string &f : fixed)
                args.insert(args.end(), {"--set", f});
            for (size_t r = 0; r < ranges.size(); ++r)
                args.insert(args.end(), {"--set", ranges[r].key + "=" + t.values[r]});
            t.pid = spawnRun(args, (fs::path(t.dir) / "cli-output.txt").string());
            if (t.pid <= 0) {
                t.status = "failed";
                t.result = {{"error", "could not start " + self + ": " + std::strerror(errno)}};
                ++done;
                continue;
            }
            t.status = "running";
            ++running;
            std::fprintf(stderr, "started %d/%zu: %s\n", t.index, trials.size(), t.name.c_str());
            writeRecord();
        }
        if (running == 0) break;
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (Trial &t : trials) {
            if (t.pid != pid || t.status != "running") continue;
            --running;
            ++done;
            Result<json> run = io::readRunFile(t.dir);
            t.result = run ? run.value() : json::object();
            const std::string st = t.result.value("status", "");
            t.status = st == "ok" || st == "stopped" ? st : "failed";
            if (t.status == "failed" && !t.result.contains("error"))
                t.result["error"] = WIFSIGNALED(status)
                                        ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "see " + t.dir + "/cli-output.txt";
            char acc[32] = "-";
            if (t.result.contains("test_accuracy") && t.result["test_accuracy"].is_number())
                std::snprintf(acc, sizeof acc, "%.4f", t.result["test_accuracy"].get<double>());
            std::fprintf(stderr, "done %d/%zu: %s: %s, test accuracy %s\n", done, trials.size(),
                         t.name.c_str(), t.status.c_str(), acc);
            writeRecord();
        }
    }
    sigaction(SIGINT, &oldInt, nullptr);
    sigaction(SIGTERM, &oldTerm, nullptr);
    for (Trial &t : trials)
        if (t.status == "pending") t.status = "not run";

    const bool allOk =
        std::all_of(trials.begin(), trials.end(), [](const Trial &t) { return t.status == "ok"; });
    sweepJson["status"] = g_stop ? "stopped" : allOk ? "done" : "done with failures";
    writeRecord();

    // Best first: by test accuracy, then by final loss.
    std::vector<const Trial *> order;
    for (const Trial &t : trials)
        order.push_back(&t);
    auto acc = [](const Trial *t) {
        return t->result.is_object() && t->result.contains("test_accuracy") &&
                       t->result["test_accuracy"].is_number()
                   ? t->result["test_accuracy"].get<double>()
                   : -1.0;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const Trial *a, const Trial *b) { return acc(a) > acc(b); });
    json out{{"status", sweepJson["status"]},
             {"sweep", name},
             {"record", record},
             {"trials", sweepJson["trials"]}};
    out["best"] =
        order.empty() || acc(order.front()) < 0 ? json(nullptr) : json(order.front()->dir);
    if (asJson) {
        std::cout << jsonLine(out) << std::endl;
    } else {
        std::printf("%-40s %-10s %9s %10s %8s\n", "run", "status", "test acc", "final loss",
                    "seconds");
        for (const Trial *t : order) {
            auto num = [&](const char *key, const char *fmt) {
                char buf[32] = "-";
                if (t->result.is_object() && t->result.contains(key) && t->result[key].is_number())
                    std::snprintf(buf, sizeof buf, fmt, t->result[key].get<double>());
                return std::string(buf);
            };
            std::printf("%-40s %-10s %9s %10s %8s\n", safeText(t->name).c_str(), t->status.c_str(),
                        num("test_accuracy", "%.4f").c_str(), num("final_loss", "%.4f").c_str(),
                        num("wall_s", "%.1f").c_str());
        }
        if (!out["best"].is_null())
            std::printf("best: %s (%s)\n", safeText(order.front()->name).c_str(),
                        order.front()->dir.c_str());
        std::printf("record: %s\n", record.c_str());
    }
    return g_stop || !allOk ? kExitFailed : kExitOk;
}

} // namespace fb::cli
