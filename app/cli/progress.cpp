#include "app/cli/progress.h"

#include "core/base/safe_text.h"
#include "core/io/run_folder.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

namespace fb::cli {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string duration(double s)
{
    if (!std::isfinite(s) || s < 0) return "?";
    const long t = long(s + 0.5);
    char buf[32];
    if (t >= 3600)
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

double since(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

RunReporter::RunReporter(const std::string &eventsPath)
{
    m_tty = isatty(STDERR_FILENO);
    m_start = m_lastLine = m_lastBar = Clock::now();
    if (eventsPath == "-") {
        m_events = stdout;
    } else if (!eventsPath.empty()) {
        // Its folder is made, as --out's is: `--out R --events R/events.jsonl` is the usual pair.
        std::error_code ec;
        const auto parent = std::filesystem::path(eventsPath).parent_path();
        if (!parent.empty()) std::filesystem::create_directories(parent, ec);
        m_events = std::fopen(eventsPath.c_str(), "w");
        m_eventsPath = eventsPath;
        m_ownsEvents = true;
        m_eventsOk = m_events != nullptr;
    }
}

RunReporter::~RunReporter()
{
    if (m_ownsEvents && m_events) std::fclose(m_events);
    if (m_folderLog) std::fclose(m_folderLog);
}

void RunReporter::keepInFolder(const std::string &outDir, const std::string &pipelineName,
                               const std::string &name, const std::vector<std::string> &tags)
{
    m_outDir = outDir;
    m_runFile = std::make_unique<RunFileWriter>(outDir, pipelineName, name, tags);
}

void RunReporter::openFolderLog(bool append)
{
    if (m_folderLog || m_outDir.empty()) return;
    const std::string path = (std::filesystem::path(m_outDir) / io::kEventsFile).string();
    // `--events OUT/events.jsonl` asks for the same file: it is written once, by --events.
    std::error_code ec;
    if (m_ownsEvents && m_events && std::filesystem::exists(path, ec) &&
        std::filesystem::equivalent(path, m_eventsPath, ec)) {
        m_pending.clear();
        m_folderIsStream = true;
        return;
    }
    m_folderLog = std::fopen(path.c_str(), append ? "a" : "w");
    if (!m_folderLog) {
        std::fprintf(stderr, "warning: cannot write the run's event log %s\n", path.c_str());
        return;
    }
    for (const std::string &line : m_pending)
        std::fprintf(m_folderLog, "%s\n", line.c_str());
    m_pending.clear();
    std::fflush(m_folderLog);
}

void RunReporter::event(json e, bool toStream)
{
    std::FILE *stream = toStream ? m_events : nullptr;
    if (!stream && m_outDir.empty()) return;
    std::lock_guard lock(m_eventMutex);
    e["t"] = std::round(since(m_start) * 1000) / 1000;
    // ASCII only and never a throw, as the summary line (main.cpp's jsonLine).
    const std::string line = e.dump(-1, ' ', true, json::error_handler_t::replace);
    if (stream) {
        std::fprintf(stream, "%s\n", line.c_str());
        std::fflush(stream);
    }
    if (m_folderLog) {
        std::fprintf(m_folderLog, "%s\n", line.c_str());
        // Progress and hardware lines come ten times a second: flushed by stdio's buffer, and
        // at once for the events a person would miss after a crash.
        const std::string type = e.value("type", "");
        if (type != "progress" && type != "hardware" && type != "dataflow")
            std::fflush(m_folderLog);
    } else if (!m_outDir.empty() && !m_folderIsStream) {
        m_pending.push_back(line); // until training starts and the folder's log opens
    }
}

void RunReporter::clearBar()
{
    if (m_barShown) {
        std::fprintf(stderr, "\r\033[K");
        m_barShown = false;
    }
}

void RunReporter::runStarted(const exec::RunInfo &info)
{
    m_started = true;
    if (!m_outDir.empty()) {
        {
            std::lock_guard lock(m_eventMutex);
            openFolderLog(info.firstStep > 0);
        }
        if (m_runFile) m_runFile->started(info);
    }
    std::fprintf(stderr,
                 "%s: %lld training samples, %lld steps per epoch, %lld parameters, "
                 "device %s, %d threads\n%s",
                 info.pipeline.c_str(), (long long)info.trainSamples, (long long)info.stepsPerEpoch,
                 (long long)info.parameters, info.device.c_str(), info.threads,
                 info.modelSummary.c_str());
    if (!info.outDir.empty()) std::fprintf(stderr, "output: %s\n", info.outDir.c_str());
    json libraries = json::object();
    for (const auto &[name, version] : info.libraries)
        libraries[name] = version;
    m_ranks = info.ranks;
    event({{"type", "run_start"},
           {"version", 6},
           {"pipeline", info.pipeline},
           {"device", info.device},
           {"threads", info.threads},
           {"data_workers", info.dataWorkers},
           {"ranks", info.ranks},
           {"epochs", info.epochs},
           {"first_epoch", info.firstEpoch},
           {"first_step", info.firstStep},
           {"steps_per_epoch", info.stepsPerEpoch},
           {"train_samples", info.trainSamples},
           {"parameters", info.parameters},
           {"out_dir", info.outDir},
           {"flowbench", FLOWBENCH_VERSION},
           {"libraries", libraries}});
}

void RunReporter::progress(const exec::Progress &p)
{
    const bool lastOfEpoch = p.stepInEpoch == p.stepsPerEpoch;
    // The runner reports at most 10 times a second already; every report is an event.
    if (m_events || !m_outDir.empty()) {
        json e{{"type", "progress"},
               {"epoch", p.epoch + 1},
               {"epochs", p.epochs},
               {"step", p.step},
               {"total_steps", p.totalSteps},
               {"samples", p.samples},
               {"loss", p.loss},
               {"recent_loss", p.recentLoss},
               {"recent_accuracy", p.recentAccuracy},
               {"accuracy", p.accuracy},
               {"lr", p.lr},
               {"samples_per_s", p.samplesPerSecond},
               {"data_wait_share", std::round(p.dataWaitShare * 1e4) / 1e4},
               {"eta_s", p.etaSeconds}};
        // A data-parallel run: the share of the step spent in collectives, split into waiting
        // for slower ranks and the sums themselves; and each rank's compute throughput.
        if (m_ranks > 1) {
            auto share = [](double v) { return std::round(v * 1e4) / 1e4; };
            e["comm_share"] = share(p.commShare);
            e["rank_wait_share"] = share(p.rankWaitShare);
            e["allreduce_share"] = share(p.allReduceShare);
            json perRank = json::array(), commPerRank = json::array();
            for (const auto &r : p.ranks) {
                perRank.push_back(std::round(r.samplesPerSecond * 10) / 10);
                commPerRank.push_back(share(r.commShare));
            }
            e["rank_samples_per_s"] = perRank;
            e["rank_comm_share"] = commPerRank;
        }
        event(e);
    }
    char text[320];
    const double cpu = m_cpuPercent.load();
    char cpuText[32] = "";
    if (cpu >= 0) std::snprintf(cpuText, sizeof cpuText, "  CPU %.0f%%", cpu);
    std::snprintf(text, sizeof text,
                  "epoch %lld/%lld  step %lld/%lld  loss %.4f  acc %.3f  %.0f samples/s  "
                  "data wait %.0f%%%s  ETA %s",
                  (long long)(p.epoch + 1), (long long)p.epochs, (long long)p.stepInEpoch,
                  (long long)p.stepsPerEpoch, p.loss, p.accuracy, p.samplesPerSecond,
                  p.dataWaitShare * 100.0, cpuText, duration(p.etaSeconds).c_str());
    if (m_tty) {
        if (since(m_lastBar) < 0.1 && !lastOfEpoch) return;
        m_lastBar = Clock::now();
        const int width = 24;
        const int filled = int(double(width) * double(p.stepInEpoch) /
                               double(std::max<int64_t>(p.stepsPerEpoch, 1)));
        std::string bar(size_t(filled), '#');
        bar.resize(size_t(width), '.');
        std::fprintf(stderr, "\r\033[K[%s] %s", bar.c_str(), text);
        std::fflush(stderr);
        m_barShown = true;
    } else if (since(m_lastLine) >= 5.0) {
        m_lastLine = Clock::now();
        std::fprintf(stderr, "%s\n", text);
    }
}

void RunReporter::epochFinished(const exec::EpochResult &r)
{
    clearBar();
    std::string evals;
    json evalJson = json::array();
    for (const auto &e : r.evaluations) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "  %s: loss %.4f acc %.4f", e.node.c_str(), e.loss,
                      e.accuracy);
        evals += buf;
        evalJson.push_back(
            {{"node", e.node}, {"loss", e.loss}, {"accuracy", e.accuracy}, {"samples", e.samples}});
    }
    std::fprintf(stderr,
                 "epoch %lld/%lld done in %s (%.0f samples/s)  train loss %.4f acc %.4f%s\n",
                 (long long)(r.epoch + 1), (long long)r.epochs, duration(r.seconds).c_str(),
                 r.samplesPerSecond, r.trainLoss, r.trainAccuracy, evals.c_str());
    json epoch{{"type", "epoch"},
               {"epoch", r.epoch + 1},
               {"epochs", r.epochs},
               {"train_loss", r.trainLoss},
               {"train_accuracy", r.trainAccuracy},
               {"seconds", r.seconds},
               {"samples_per_s", r.samplesPerSecond},
               {"evaluations", evalJson}};
    // A data-parallel run: the digest every rank's weights were checked to share.
    if (!r.weightsDigest.empty()) epoch["weights_digest"] = r.weightsDigest;
    event(epoch);
    // The misclassified images (about 70 kB per evaluate node) only with the last epoch: the
    // matrix every epoch is enough to watch it change; evaluation.json has the latest gallery.
    const bool last = r.epoch + 1 == r.epochs;
    for (const auto &e : r.evaluations)
        if (m_events || m_folderLog) event(exec::evaluationJson(e, r.epoch + 1, r.epochs, last));
    if (m_runFile) m_runFile->epoch(r.evaluations.empty() ? -1.0 : r.evaluations[0].accuracy);
}

void RunReporter::hardware(const metrics::HardwareSample &s)
{
    m_cpuPercent = s.cpuPercent;
    auto round1 = [](double v) { return std::round(v * 10) / 10; };
    json cores = json::array();
    for (double c : s.cpuPerCore)
        cores.push_back(round1(c));
    json gpus = json::array();
    for (const auto &g : s.gpus)
        gpus.push_back({{"index", g.index},
                        {"name", g.name},
                        {"utilization_percent", round1(g.utilizationPercent)},
                        {"memory_utilization_percent", round1(g.memoryUtilizationPercent)},
                        {"memory_used_bytes", g.memoryUsedBytes},
                        {"memory_total_bytes", g.memoryTotalBytes}});
    json e{{"type", "hardware"},
           {"cpu_percent", round1(s.cpuPercent)},
           {"cpu_per_core", cores},
           {"process_memory_bytes", s.processMemoryBytes},
           {"gpus", gpus}};
    // Why there is no GPU figure is said once, not twice a second.
    if (!s.gpuStatus.empty() && !m_gpuStatusSent.exchange(true)) e["gpu_status"] = s.gpuStatus;
    event(e);
}

void RunReporter::checkpointWritten(const exec::CheckpointInfo &c)
{
    event({{"type", "checkpoint"},
           {"epoch", c.epoch},
           {"step", c.step},
           {"reason", c.reason},
           {"dir", c.dir}});
}

void RunReporter::dataflow(const exec::DataFlowReport &r)
{
    auto round3 = [](double v) { return std::round(v * 1000) / 1000; };
    json edges = json::array(), stages = json::array();
    for (const auto &e : r.edges)
        edges.push_back({{"from", e.from},
                         {"to", e.to},
                         {"batches", e.batches},
                         {"samples", e.samples},
                         {"bytes", e.bytes},
                         {"batches_per_s", round3(e.batchesPerSecond)},
                         {"samples_per_s", round3(e.samplesPerSecond)},
                         {"bytes_per_s", std::round(e.bytesPerSecond)},
                         {"queued", e.queued},
                         {"capacity", e.capacity},
                         {"consumer_wait_s", round3(e.consumerWaitSeconds)},
                         {"consumer_wait_share", round3(e.consumerWaitShare)},
                         {"cached", e.cached}});
    for (const auto &s : r.stages)
        stages.push_back({{"node", s.node},
                          {"random", s.random},
                          {"cached", s.cached},
                          {"batches", s.batches},
                          {"busy_s", round3(s.busySeconds)},
                          {"busy_share", round3(s.busyShare)}});
    event({{"type", "dataflow"},
           {"consumer", r.consumer},
           {"workers", r.workers},
           {"interval_s", round3(r.intervalSeconds)},
           {"wait_share", round3(r.waitShare)},
           {"total_wait_share", round3(r.totalWaitShare)},
           {"bottleneck", r.bottleneck},
           {"cached_samples", r.cachedSamples},
           {"cache_samples", r.cacheSamples},
           {"source_samples", r.sourceSamples},
           {"source_held", r.sourceHeld},
           {"source_hits", r.sourceHits},
           {"source_decoded", r.sourceDecoded},
           {"source_from_disk", r.sourceFromDisk},
           {"source_hit_rate", round3(r.sourceHitRate)},
           {"source_disk_share", round3(r.sourceDiskShare)},
           {"source_decode_share", round3(r.sourceDecodeShare)},
           {"bottleneck_cause", r.bottleneckCause},
           {"edges", edges},
           {"stages", stages}});
}

void RunReporter::commandHandled(const exec::CommandAck &a)
{
    if (!a.ok || !m_events) {
        clearBar();
        std::fprintf(stderr, "%s%s%s\n", a.command.empty() ? "" : a.command.c_str(),
                     a.command.empty() ? "" : ": ", a.message.c_str());
    }
    json e{{"type", "ack"}, {"command", a.command}, {"ok", a.ok}, {"message", a.message}};
    e["id"] = a.id.empty() ? json(nullptr) : json(a.id);
    event(e);
}

void RunReporter::message(LogLevel level, const std::string &text)
{
    clearBar();
    log(level, text);
    static const char *names[] = {"debug", "info", "warning", "error"};
    event({{"type", "log"}, {"level", names[int(level)]}, {"message", text}});
}

void RunReporter::nodeMessage(LogLevel level, const std::string &node, const std::string &text)
{
    clearBar();
    log(level, "node '" + safeText(node) + "': " + safeText(text));
    static const char *names[] = {"debug", "info", "warning", "error"};
    event({{"type", "log"}, {"level", names[int(level)]}, {"message", text}, {"node", node}});
}

void RunReporter::error(const Error &e)
{
    clearBar();
    json j{{"type", "error"}, {"message", e.message}};
    j["node"] = e.node.empty() ? json(nullptr) : json(e.node);
    if (!e.file.empty()) j["file"] = e.file;
    event(j);
}

void RunReporter::summary(const json &s)
{
    clearBar();
    // A run that failed before training started: its folder, when the window made it just now,
    // still gets the log of why; a folder that holds a run already (a resume that failed) is
    // left as it was.
    std::error_code ec;
    const std::filesystem::path out(m_outDir);
    if (!m_outDir.empty() && !m_folderLog && std::filesystem::is_directory(out, ec) &&
        !std::filesystem::exists(out / io::kEventsFile, ec) &&
        !std::filesystem::exists(out / io::kRunFile, ec)) {
        std::lock_guard lock(m_eventMutex);
        openFolderLog(false);
    }
    // On stdout the summary itself is the last line; the stream gets its own copy elsewhere.
    json e = s;
    e["type"] = "summary";
    if (m_events && m_events != stdout)
        event(e);
    else if (m_folderLog)
        event(e, false); // the folder's log only
    if (m_folderLog) std::fflush(m_folderLog);
    if (m_runFile) m_runFile->finished(s);
}

} // namespace fb::cli
