#include "core/exec/runner.h"

#include "core/exec/node_type.h"

#include "core/exec/data_parallel.h"
#include "core/exec/device_feed.h"
#include "core/exec/inference.h"
#include "core/exec/train_step.h"
#include "core/exec/weight_average.h"

#include "core/backend/backend.h"
#include "core/base/bytes.h"
#include "core/base/check.h"
#include "core/base/safe_text.h"
#include "core/data/dataflow.h"
#include "core/exec/run_manifest.h"
#include "core/graph/diff.h"
#include "core/io/files.h"
#include "core/io/loss_log.h"
#include "core/io/run_folder.h"
#include "core/io/safetensors.h"

#include <chrono>
#include <ctime>
#include <cmath>
#include <limits>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

namespace fb::exec {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string pipelineHash(const graph::PipelineDocument &doc)
{
    nlohmann::json canon = nlohmann::json::parse(graph::serializePipeline(doc));
    for (auto &n : canon["nodes"]) {
        n.erase("position");
        // Parameters that say how a run goes, not what it computes (ParamSpec::runOnly).
        const graph::NodeTypeSpec *type = nodeTypes().find(n.value("type", ""));
        if (type && n.contains("params"))
            for (const graph::ParamSpec &p : type->params)
                if (p.runOnly) n["params"].erase(p.name);
    }
    return hex64(fnv1a(canon.dump()));
}

namespace {

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

Result<std::shared_ptr<const data::ImageDataset>> loadData(const DataSpec &spec)
{
    const NodeType *source = nodeCatalog().find(spec.sourceType);
    FB_ASSERT(source && source->spec.role == NodeRole::Source, "a data chain without its source");
    Result<data::ImageDataset> ds = source->loadSource(spec);
    if (!ds.ok()) {
        Error e = ds.error();
        e.node = spec.sourceNode;
        return e;
    }
    if (ds->count == 0) return nodeError(spec.sourceNode, "the data set is empty");
    return std::make_shared<const data::ImageDataset>(std::move(ds).value());
}

// "skipped 2 of 120 files ...: cat/a.png (why); ..." for the source node, or "" when none was.
std::string skippedFilesWarning(const DataSpec &spec, const data::ImageDataset &ds)
{
    if (ds.skipped.empty()) return {};
    constexpr size_t kNamed = 5;
    const size_t total = size_t(ds.count) + ds.skipped.size();
    std::string w = "skipped " + std::to_string(ds.skipped.size()) + " of " +
                    std::to_string(total) + " files that are not readable " +
                    (spec.samples == DataSpec::SampleKind::Audio ? "recordings: " : "images: ");
    // Folder paths are named from the folder, list paths as the list gave them.
    const std::string prefix =
        spec.pathsAsListed ? std::string() : (fs::path(spec.path) / "").string();
    for (size_t i = 0; i < std::min(kNamed, ds.skipped.size()); ++i) {
        std::string path = ds.skipped[i].path;
        if (!prefix.empty() && path.rfind(prefix, 0) == 0) path.erase(0, prefix.size());
        w.append(i ? "; " : "").append(path).append(" (").append(ds.skipped[i].reason).append(")");
    }
    if (ds.skipped.size() > kNamed)
        w.append("; and ").append(std::to_string(ds.skipped.size() - kNamed)).append(" more");
    return safeText(w); // file names are as the folder holds them: any byte but '/' and NUL
}

// What the run's log says about how a source keeps its samples: "12000 samples (590 MB decoded)
// are more than cache_mb allows: ..." for one that streams (data::ImageDataset::streaming), and
// what its load did with the disk cache; nothing for a source that holds every sample and has
// no disk cache.
std::vector<std::string> sourceNotes(const data::ImageDataset &ds)
{
    std::vector<std::string> notes;
    if (ds.streaming())
        notes.push_back(
            std::to_string(ds.count) + " samples (" + wholeMegabytes(ds.count * ds.sampleBytes()) +
            " decoded) are more than its cache_mb allows: " + std::to_string(ds.held) + " (" +
            wholeMegabytes(ds.held * ds.sampleBytes()) + ") are held in memory, the others " +
            (ds.disk ? std::string("read from the disk cache") : "decoded from their files") +
            " on the data workers whenever a batch needs them (docs/data.md, \"Data larger than "
            "memory\")");
    if (!ds.diskNote.empty()) notes.push_back(ds.diskNote);
    return notes;
}

Result<std::unique_ptr<data::DataFlow>> makeFlow(const DataSpec &spec, const std::string &consumer,
                                                 int64_t batchSize, bool shuffle, uint64_t seed,
                                                 int workers, int shardRank = 0, int shardCount = 1)
{
    auto ds = loadData(spec);
    if (!ds.ok()) return ds.error();
    data::DataFlowOptions o;
    o.batchSize = batchSize;
    o.shuffle = shuffle;
    o.seed = seed;
    o.workers = workers;
    o.shardRank = shardRank;
    o.shardCount = shardCount;
    o.sourceNode = spec.sourceNode;
    o.consumerNode = consumer;
    // A file source's cache_mb covers all it keeps: its held samples, and the floats of the
    // chain's deterministic prefix only where they fit in the rest.
    const int64_t budget = spec.samples == DataSpec::SampleKind::Audio ? spec.audioFiles.cacheBytes
                           : spec.fromImageFiles                       ? spec.imageFiles.cacheBytes
                                                                       : 0;
    if (budget > 0) {
        const int64_t held = ds.value()->heldSamples() * ds.value()->sampleBytes();
        o.cacheLimitBytes = std::min(o.cacheLimitBytes, std::max<int64_t>(0, budget - held));
    }
    return data::DataFlow::create(ds.value(), buildStages(spec), o);
}

// Loss, accuracy and the confusion matrix over the whole evaluation data, in test order (the
// flow does not shuffle). The tally reads the outputs the loss reads: no extra forward pass.
Result<Evaluation> evaluate(nn::Model &model, Backend &backend, nn::Loss &loss,
                            data::DataFlow &flow, const EvaluateSpec &spec,
                            std::vector<std::string> classNames)
{
    flow.startEpoch(0);
    EvaluationTally tally(std::move(classNames), flow.sampleShape(),
                          InputPixels::forChain(spec.data));
    double lossSum = 0;
    int64_t seen = 0;
    nn::StepContext ctx;
    ctx.training = false;
    DeviceFeed feed(backend, flow, false);
    while (true) {
        auto batch = flow.next();
        if (!batch.ok()) return batch.error();
        if (!batch.value()) break;
        const data::Batch &b = *batch.value();
        const data::Batch &onDevice = feed.put(b);
        const int64_t n = b.x.shape()[0];
        nn::Plan &plan = model.plan(backend, n, false);
        const Tensor &out = plan.forward(onDevice.x, ctx);
        LossResult r = loss.compute(backend, out, onDevice.y, nullptr);
        lossSum += double(r.loss) * double(n);
        FB_ASSERT(out.shape()[1] == tally.detail().classes(), "outputs differ from the classes");
        const Tensor scores = backend.toHost(out);
        tally.add(scores.f32(), b.y.data<int32_t>(), b.x.f32(), n,
                  b.index * flow.options().batchSize);
        seen += n;
    }
    Evaluation e;
    e.node = spec.node;
    e.loss = float(lossSum / double(std::max<int64_t>(seen, 1)));
    e.samples = seen;
    e.detail = tally.take();
    // From the matrix, so the reported accuracy is its trace over its total by construction.
    e.accuracy = float(double(e.detail.correct()) / double(std::max<int64_t>(seen, 1)));
    return e;
}

// The evaluation data's class names; a source that has none borrows the training data's.
std::vector<std::string> evaluationClassNames(const data::ImageDataset &evaluated,
                                              const data::ImageDataset &trained, int32_t classes)
{
    if (int32_t(evaluated.classNames.size()) == classes) return evaluated.classNames;
    return data::classNames(trained, classes);
}

// Where a run stands between two steps: all a checkpoint needs besides weights and optimizer
// state. Every random draw of a run is counter-based (weights from the seed; the data order
// from (seed, epoch); dropout from (seed, step); augmentation from (seed, node, epoch, sample)),
// so these counters are the complete generator state: a run resumed from them draws exactly
// what the uninterrupted run would have drawn.
struct TrainState {
    int64_t epoch = 0;  // the epoch in progress (from 0)
    int64_t batch = 0;  // batches of it already done
    int64_t step = 0;   // global steps done
    double lossSum = 0; // this epoch's loss sum, correct and seen so far (for its report)
    int64_t correct = 0, seen = 0;
    double lrOverride = 0; // set by a set_lr command; 0 = the schedule's rate
    double lastLoss = 0;   // the last step's loss (the summary's final_loss)
    int64_t ranks = 1;     // data-parallel ranks that trained it (a resume needs as many)
};

struct Checkpoint {
    int64_t step = -1;
    std::string dir;
};

// Whole checkpoints, oldest first: a folder is renamed into place only once its file is
// written and flushed, so a folder with the file is whole.
std::vector<Checkpoint> checkpoints(const std::string &outDir)
{
    std::vector<Checkpoint> all;
    std::error_code ec;
    const fs::path root = fs::path(outDir) / io::kCheckpointsDir;
    for (const auto &entry : fs::directory_iterator(root, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("step-")) continue;
        if (!fs::exists(entry.path() / "checkpoint.safetensors")) continue;
        all.push_back({std::atoll(name.c_str() + 5), entry.path().string()});
    }
    std::sort(all.begin(), all.end(),
              [](const Checkpoint &a, const Checkpoint &b) { return a.step < b.step; });
    return all;
}

Checkpoint newestCheckpoint(const std::string &outDir)
{
    auto all = checkpoints(outDir);
    return all.empty() ? Checkpoint{} : all.back();
}

std::string lastCheckpointText(const std::string &outDir)
{
    const Checkpoint cp = outDir.empty() ? Checkpoint{} : newestCheckpoint(outDir);
    return cp.step >= 0 ? cp.dir : std::string("none");
}

// The named tensors in host memory: a GPU run's are downloaded (the step is done: the download
// waits for it).
// Refuses, before anything large is allocated, a run whose model cannot fit: the lower bound of
// Model::estimateMemory for the training batch (and for each evaluation's batch, whose plan is
// kept beside the training one) against the room on the device (host memory on the CPU, the
// GPU's memory on a GPU). Names the node that takes the most, with the sizes.
Status checkMemory(const nn::Model &model, const TrainingJob &job, Backend &backend)
{
    const bool cpu = backend.device().kind == Device::Kind::Cpu;
    int64_t room = 0;
    if (cpu) {
        room = hostMemoryAvailable();
    } else {
        for (const auto &d : listDevices().devices)
            if (d.device == backend.device()) room = d.memoryBytes;
    }
    if (room <= 0) return {}; // unknown: the allocations themselves will say
    const int copies = job.optimizer.stateCopies;
    auto check = [&](int64_t batch, bool training, const std::string &batchParam) -> Status {
        const nn::Model::MemoryEstimate e = model.estimateMemory(batch, training, copies);
        if (e.bytes <= double(room)) return {};
        return nodeError(e.largestNode,
                         std::string(training ? "training" : "evaluating") + " a batch of " +
                             std::to_string(batch) + " needs at least " + humanBytes(e.bytes) +
                             " of memory (" + e.largestWhat + ": " + humanBytes(e.largestBytes) +
                             "), and " + backend.device().str() + " has " +
                             humanBytes(double(room)) + (cpu ? " available" : " in all") +
                             ". Lower " + batchParam + " or make " + e.largestNode + " smaller");
    };
    FB_TRY(check(job.batchSize, true, job.trainNode + ".batch_size"));
    for (const auto &ev : job.evaluations)
        FB_TRY(check(ev.batchSize, false, ev.node + ".batch_size"));
    return {};
}

io::NamedTensors onHost(Backend &backend, io::NamedTensors tensors)
{
    for (auto &[name, t] : tensors)
        t = backend.toHost(t);
    return tensors;
}

io::NamedTensors checkpointTensors(nn::Model &model, const nn::Optimizer &opt)
{
    io::NamedTensors t;
    for (auto &p : model.parameters())
        t.emplace_back("model." + p.name, p.param->value);
    for (auto &[name, b] : model.buffers())
        t.emplace_back("model." + name, b);
    for (auto &[name, s] : opt.state())
        t.emplace_back("optimizer." + name, s);
    return t;
}

// Doubles travel as C hex floats: exact, so a resumed run's sums match bit for bit.
std::string hexDouble(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);
    return buf;
}

using io::syncDirectory;
using io::writeFileAtomically;

Status writeCheckpoint(Backend &backend, const std::string &outDir, const TrainState &st,
                       const std::string &hash, uint64_t seed, nn::Model &model,
                       const nn::Optimizer &opt, const WeightAverage &average, int64_t keep,
                       const std::map<std::string, std::string> &inference,
                       const std::string &blameNode, std::string &writtenDir)
{
    char name[32];
    std::snprintf(name, sizeof name, "step-%08lld", (long long)st.step);
    const fs::path root = fs::path(outDir) / io::kCheckpointsDir;
    const fs::path tmp = root / (std::string(".") + name + ".tmp");
    const fs::path final = root / name;
    const fs::path old = root / (std::string(".") + name + ".old");
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) return fileError(tmp.string(), "cannot create the checkpoint folder: " + ec.message());
    std::map<std::string, std::string> meta{{"format", "flowbench.checkpoint"},
                                            {"version", "2"},
                                            {"epoch", std::to_string(st.epoch)},
                                            {"batch", std::to_string(st.batch)},
                                            {"step", std::to_string(st.step)},
                                            {"epoch_loss_sum", hexDouble(st.lossSum)},
                                            {"epoch_correct", std::to_string(st.correct)},
                                            {"epoch_seen", std::to_string(st.seen)},
                                            {"lr_override", hexDouble(st.lrOverride)},
                                            {"last_loss", hexDouble(st.lastLoss)},
                                            {"seed", std::to_string(seed)},
                                            {"optimizer_steps", std::to_string(opt.steps())},
                                            {"optimizer", opt.type()},
                                            {"pipeline_hash", hash},
                                            {"ranks", std::to_string(st.ranks)},
                                            {"averaged", std::to_string(average.count())}};
    meta.insert(inference.begin(), inference.end()); // what `flowbench-cli infer` reads
    // The per-step check reads only the loss, so the last update may have made weights NaN or
    // infinite after a finite loss: such a state is never written as a checkpoint (a resume
    // from it could only fail), and the previous checkpoint stays the last whole one.
    io::NamedTensors tensors = checkpointTensors(model, opt);
    for (auto &t : average.tensors())
        tensors.push_back(std::move(t));
    tensors = onHost(backend, std::move(tensors));
    for (const auto &[name, t] : tensors)
        if (!t.allFinite()) {
            fs::remove_all(tmp, ec);
            return nodeError(blameNode, "the weights became NaN or infinite by step " +
                                            std::to_string(st.step) + " ('" + name +
                                            "'); no checkpoint was written for it; last whole "
                                            "checkpoint: " +
                                            lastCheckpointText(outDir) +
                                            ". Try a lower learning rate");
        }
    // writeSafetensors flushes the file; the folder is renamed into place only after that, and
    // the parent is flushed so the rename survives a crash: a kill at any moment leaves the
    // previous checkpoint whole and this one either whole or absent.
    FB_TRY(io::writeSafetensors((tmp / "checkpoint.safetensors").string(), tensors, meta));
    syncDirectory(tmp);
    // A checkpoint of the same step may exist (a stop resumed and stopped again): move it aside
    // rather than delete it first, so some whole checkpoint exists at every moment.
    fs::remove_all(old, ec);
    ec.clear();
    if (fs::exists(final)) fs::rename(final, old, ec);
    if (!ec) fs::rename(tmp, final, ec);
    if (ec)
        return fileError(final.string(), "cannot move the checkpoint into place: " + ec.message());
    syncDirectory(root);
    fs::remove_all(old, ec);
    writtenDir = final.string();
    if (keep > 0) {
        auto all = checkpoints(outDir);
        for (size_t i = 0; i + size_t(keep) < all.size(); ++i)
            fs::remove_all(all[i].dir, ec);
    }
    return {};
}

// What differs between the pipeline a run folder was made with (its pipeline.json) and this one:
// "optimizer.lr 0.05 -> 0.01", "node fc3 added", ... at most `limit` of them, for the warning of
// a resume that accepts changes. Empty when that file cannot be read.
std::vector<std::string> pipelineChanges(const std::string &runDir,
                                         const graph::PipelineDocument &now, size_t limit = 6)
{
    auto before = graph::loadPipeline(runDir + "/" + io::kPipelineFile);
    if (!before.ok()) return {};
    std::vector<std::string> out;
    auto add = [&](std::string s) {
        if (out.size() < limit) out.push_back(std::move(s));
    };
    auto shown = [](const std::string &text) {
        if (text == "(not set)") return std::string("(default)");
        return text.size() > 40 ? text.substr(0, 40) + "..." : text;
    };
    using Kind = graph::PipelineDiff::NodeChange::Kind;
    for (const auto &c : graph::diffPipelines(*before, now).nodes) {
        if (c.kind != Kind::Changed) {
            add("node " + c.node + (c.kind == Kind::Added ? " added" : " removed"));
            continue;
        }
        if (!c.typeBefore.empty()) add(c.node + " type " + c.typeBefore + " -> " + c.type);
        const graph::NodeTypeSpec *type = nodeTypes().find(c.type);
        for (const auto &p : c.params) {
            const graph::ParamSpec *spec = type ? type->param(p.name) : nullptr;
            if (spec && spec->runOnly) continue; // how the run goes, not what it computes
            add(c.node + "." + p.name + " " + shown(p.before) + " -> " + shown(p.after));
        }
    }
    return out;
}

Status loadCheckpoint(const std::string &dir, const std::string &hash, nn::Model &model,
                      nn::Optimizer &opt, WeightAverage &average, TrainState &st,
                      bool acceptChanges, bool &changed)
{
    const std::string path = dir + "/checkpoint.safetensors";
    auto file = io::readSafetensors(path);
    if (!file.ok()) return file.error();
    const auto &meta = file->metadata;
    auto get = [&](const char *k) {
        auto it = meta.find(k);
        return it == meta.end() ? std::string() : it->second;
    };
    if (get("format") != "flowbench.checkpoint")
        return fileError(path, "not a Flowbench checkpoint");
    if (get("version") != "2")
        return fileError(path, "checkpoint format version " + get("version") +
                                   " is not one this build reads (2)");
    changed = get("pipeline_hash") != hash;
    if (changed && !acceptChanges)
        return fileError(path, "this checkpoint was written by a different pipeline (hash " +
                                   get("pipeline_hash") + ", this pipeline is " + hash +
                                   "); refusing to resume from it (--accept-changes resumes "
                                   "anyway, where the weights still fit)");
    for (auto &[name, t] : checkpointTensors(model, opt)) {
        const Tensor *src = file->find(name);
        if (!src) return fileError(path, "tensor '" + name + "' is missing");
        if (src->shape() != t.shape() || src->dtype() != t.dtype())
            return fileError(path, "tensor '" + name + "' has shape " + src->shape().str() +
                                       ", the model needs " + t.shape().str());
        t.copyFrom(*src);
    }
    st.epoch = std::atoll(get("epoch").c_str());
    st.batch = std::atoll(get("batch").c_str());
    st.step = std::atoll(get("step").c_str());
    st.lossSum = std::strtod(get("epoch_loss_sum").c_str(), nullptr);
    st.correct = std::atoll(get("epoch_correct").c_str());
    st.seen = std::atoll(get("epoch_seen").c_str());
    st.lrOverride = std::strtod(get("lr_override").c_str(), nullptr);
    st.lastLoss = std::strtod(get("last_loss").c_str(), nullptr);
    // Checkpoints from before data-parallel training were written by one process.
    st.ranks = get("ranks").empty() ? 1 : std::atoll(get("ranks").c_str());
    opt.setSteps(std::atoll(get("optimizer_steps").c_str()));
    // Checkpoints from before train.average_last hold no mean ("averaged" absent: 0).
    return average.load(*file, std::atoll(get("averaged").c_str()), path);
}

// The node that limits throughput: when the trainer waited for data a noticeable share of its
// time, the data stage that took the most worker time; otherwise the trainer itself.
std::string bottleneckOf(const std::vector<data::StageStats> &busy, double waitShare,
                         const std::string &consumer)
{
    constexpr double noticeable = 0.05;
    if (waitShare < noticeable) return consumer;
    const data::StageStats *worst = nullptr;
    for (const auto &s : busy)
        if (!worst || s.busySeconds > worst->busySeconds) worst = &s;
    return worst ? worst->node : consumer;
}

// Why `bottleneck`, where it is the data source (the first stage), holds the trainer up: the
// larger of its disk reads and its decoding when that is at least half of the source's time;
// "" where the source is not the bottleneck or mostly copies samples it holds.
std::string sourceCause(const std::string &bottleneck, const data::StageStats *source,
                        double diskSeconds, double decodeSeconds)
{
    if (!source || source->node != bottleneck) return {};
    const double worst = std::max(diskSeconds, decodeSeconds);
    if (worst <= 0 || worst < 0.5 * source->busySeconds) return {};
    return decodeSeconds >= diskSeconds ? "decoding" : "waiting on disk";
}

// A data-parallel run's shares of rank 0's training time, from every rank's totals: the least
// time any rank spent in collectives is the sums themselves (the slowest rank hardly waits);
// what rank 0 spent beyond that, it waited for slower ranks. Rank `self`'s own entry is its
// totals now (`all` holds them as of the last exchange, a step old), so that its slot agrees
// with its own shares.
void fillRankShares(Progress &p, std::vector<DataParallel::RankTimes> all, int self,
                    double trainSeconds, double commSeconds, double ownSamples)
{
    const double t = std::max(trainSeconds, 1e-9);
    p.commShare = std::clamp(commSeconds / t, 0.0, 1.0);
    if (self >= 0 && size_t(self) < all.size())
        all[size_t(self)] = {std::max(trainSeconds - commSeconds, 0.0), commSeconds, ownSamples};
    p.ranks.clear();
    double leastComm = commSeconds;
    for (const auto &r : all) {
        const double total = std::max(r.computeSeconds + r.commSeconds, 1e-9);
        p.ranks.push_back({r.samples / std::max(r.computeSeconds, 1e-9),
                           std::clamp(r.commSeconds / total, 0.0, 1.0)});
        leastComm = std::min(leastComm, r.commSeconds);
    }
    p.allReduceShare = std::clamp(leastComm / t, 0.0, p.commShare);
    p.rankWaitShare = p.commShare - p.allReduceShare;
}

// Turns two snapshots of the training flow's statistics into a report for the interval.
class FlowReporter {
public:
    FlowReporter(const data::DataFlow &flow, std::string consumer)
        : m_flow(flow)
        , m_consumer(std::move(consumer))
        , m_last(flow.stats())
        , m_lastTime(Clock::now())
    {}

    // trainSeconds: the trainer's total time in steps (waiting included) so far.
    DataFlowReport report(double trainSeconds)
    {
        const data::FlowStats now = m_flow.stats();
        const auto t = Clock::now();
        const double dt = std::max(std::chrono::duration<double>(t - m_lastTime).count(), 1e-9);
        const double dTrain = trainSeconds - m_lastTrain;
        DataFlowReport r;
        r.consumer = m_consumer;
        r.workers = now.workers;
        r.intervalSeconds = dt;
        const double dWait = now.consumerWaitSeconds - m_last.consumerWaitSeconds;
        r.waitShare = dTrain > 0 ? std::clamp(dWait / dTrain, 0.0, 1.0) : 0.0;
        r.totalWaitShare =
            trainSeconds > 0 ? std::clamp(now.consumerWaitSeconds / trainSeconds, 0.0, 1.0) : 0.0;
        r.cachedSamples = now.cachedSamples;
        r.cacheSamples = now.cacheSamples;
        r.sourceSamples = now.sourceSamples;
        r.sourceHeld = now.sourceHeld;
        r.sourceHits = now.sourceHits;
        r.sourceDecoded = now.sourceDecoded;
        r.sourceFromDisk = now.sourceFromDisk;
        const int64_t served = now.sourceHits + now.sourceDecoded + now.sourceFromDisk;
        r.sourceHitRate = served > 0 ? double(now.sourceHits) / double(served) : 1.0;
        std::vector<data::StageStats> delta = now.stages;
        for (size_t i = 0; i < now.stages.size(); ++i) {
            const auto &s = now.stages[i];
            delta[i].busySeconds -= m_last.stages[i].busySeconds;
            // Busy time is counted when a batch is done, so a batch begun in the previous
            // interval can push this one's share past 1; the workers cannot be busier than that.
            r.stages.push_back(
                {s.node, s.random, s.cached, s.batches, s.busySeconds,
                 std::min(1.0, delta[i].busySeconds / (dt * std::max(now.workers, 1)))});
        }
        for (size_t i = 0; i < now.edges.size(); ++i) {
            const auto &e = now.edges[i], &p = m_last.edges[i];
            DataFlowReport::Edge x;
            x.from = e.from;
            x.to = e.to;
            x.batches = e.batches;
            x.samples = e.samples;
            x.bytes = e.bytes;
            x.batchesPerSecond = double(e.batches - p.batches) / dt;
            x.samplesPerSecond = double(e.samples - p.samples) / dt;
            x.bytesPerSecond = double(e.bytes - p.bytes) / dt;
            x.queued = e.queued;
            x.capacity = e.capacity;
            x.consumerWaitSeconds = e.consumerWaitSeconds;
            x.consumerWaitShare =
                std::clamp((e.consumerWaitSeconds - p.consumerWaitSeconds) / dt, 0.0, 1.0);
            x.cached = e.cached;
            r.edges.push_back(std::move(x));
        }
        r.bottleneck = bottleneckOf(delta, r.waitShare, m_consumer);
        const double dDisk = now.sourceDiskSeconds - m_last.sourceDiskSeconds;
        const double dDecode = now.sourceDecodeSeconds - m_last.sourceDecodeSeconds;
        const double workerTime = dt * std::max(now.workers, 1);
        r.sourceDiskShare = std::clamp(dDisk / workerTime, 0.0, 1.0);
        r.sourceDecodeShare = std::clamp(dDecode / workerTime, 0.0, 1.0);
        r.bottleneckCause =
            sourceCause(r.bottleneck, delta.empty() ? nullptr : &delta[0], dDisk, dDecode);
        m_last = now;
        m_lastTime = t;
        m_lastTrain = trainSeconds;
        return r;
    }

    // Over the whole run: the bottleneck, and where it is the source why ("decoding",
    // "waiting on disk" or "": sourceCause).
    std::pair<std::string, std::string> bottleneck(double waitShare) const
    {
        const data::FlowStats now = m_flow.stats();
        std::string node = bottleneckOf(now.stages, waitShare, m_consumer);
        std::string cause = sourceCause(node, now.stages.empty() ? nullptr : &now.stages[0],
                                        now.sourceDiskSeconds, now.sourceDecodeSeconds);
        return {std::move(node), std::move(cause)};
    }

private:
    const data::DataFlow &m_flow;
    std::string m_consumer;
    data::FlowStats m_last;
    Clock::time_point m_lastTime;
    double m_lastTrain = 0;
};

std::string percent(double share)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", share * 100.0);
    return buf;
}

} // namespace

Result<RunSummary> runPipeline(const graph::PipelineDocument &doc, const RunOptions &options,
                               RunObserver &observer)
{
    const auto wallStart = Clock::now();
    auto jobResult = readTrainingJob(doc);
    if (!jobResult.ok()) return jobResult.error();
    TrainingJob &job = jobResult.value();

    // Device: the command line wins over the train node's preference.
    std::string devName = options.device.empty() ? job.device : options.device;
    if (devName == "auto") devName = defaultDevice().str();
    auto device = Device::parse(devName);
    if (!device.ok()) return nodeError(job.trainNode + ".device", device.error().message);
    // A data-parallel job on GPUs: each rank takes the GPU of its place on its host.
    dist::Communicator *comm = options.comm;
    const int ranks = comm ? comm->size() : 1;
    const int rank = comm ? comm->rank() : 0;
    const bool rank0 = rank == 0;
    if (comm && device->kind == Device::Kind::Cuda && !options.backend) {
        int gpus = 0;
        for (const ComputeDevice &d : listDevices().devices)
            gpus += d.device.kind == Device::Kind::Cuda ? 1 : 0;
        if (gpus > 0) device.value().index = comm->localRank() % gpus;
    }
    auto backendResult =
        options.backend ? Result<Backend *>(options.backend) : backendFor(device.value());
    if (!backendResult.ok())
        return nodeError(job.trainNode + ".device", backendResult.error().message);
    Backend &backend = *backendResult.value();
    // Kernels are made with the precision of this run (the backend is shared by the process).
    std::string precisionNote;
    Precision precision = Precision::Float32;
    if (!parsePrecision(job.precision, precision))
        return nodeError(job.trainNode + ".precision",
                         "unknown precision '" + job.precision + "' (float32, tf32 or bf16)");
    backend.setDeterministic(job.deterministic);
    if (!backend.setPrecision(precision))
        precisionNote = "precision " + job.precision + " applies to GPUs; " + device->str() +
                        " computes in float32";
    // A data-parallel job: every rank trains on its share of each batch
    // (core/exec/data_parallel.h).
    if (comm && device->kind != Device::Kind::Cpu && !dist::ncclBuilt())
        return nodeError(job.trainNode + ".device",
                         "data-parallel training across " + std::to_string(ranks) +
                             " ranks on GPUs needs NCCL, which this build of Flowbench has not "
                             "(build with the CUDA toolkit and Open MPI): use --device cpu");
    // The ranks on one machine share its cores: each takes its part.
    const int cores = int(std::max(1u, std::thread::hardware_concurrency())) /
                      (comm ? std::max(1, comm->localSize()) : 1);
    const int threads = options.threads > 0 ? options.threads : std::max(1, cores);
    backend.setThreads(threads);
    // The data stages share the machine with the trainer: by default one worker per two cores.
    const int workers = options.dataWorkers > 0 ? options.dataWorkers
                        : job.dataWorkers > 0   ? job.dataWorkers
                                                : std::max(1, cores / 2);

    auto trainFlowResult = makeFlow(job.trainData, job.trainNode, job.batchSize, job.shuffle,
                                    job.seed, workers, rank, ranks);
    if (!trainFlowResult.ok()) return trainFlowResult.error();
    data::DataFlow &flow = *trainFlowResult.value();
    const Shape sampleShape = flow.sampleShape();
    const int32_t classes = flow.dataset().classes;
    std::vector<std::pair<std::string, std::string>> dataWarnings; // (node, text)
    if (std::string w = skippedFilesWarning(job.trainData, flow.dataset()); !w.empty())
        dataWarnings.emplace_back(job.trainData.sourceNode, std::move(w));
    std::vector<std::pair<std::string, std::string>> dataNotes; // (node, text)
    for (std::string &n : sourceNotes(flow.dataset()))
        dataNotes.emplace_back(job.trainData.sourceNode, std::move(n));
    // The learning-rate range test evaluates nothing: its evaluation data is never loaded.
    const bool lrTest = options.lrRange.steps > 0;
    if (lrTest) job.evaluations.clear();
    std::vector<std::unique_ptr<data::DataFlow>> evalFlows;
    for (const auto &e : job.evaluations) {
        auto f = makeFlow(e.data, e.node, e.batchSize, false, job.seed, workers);
        if (!f.ok()) return f.error();
        if (f.value()->sampleShape() != sampleShape)
            return nodeError(e.data.sourceNode,
                             "samples of shape " + f.value()->sampleShape().str() +
                                 " differ from the training samples " + sampleShape.str());
        if (f.value()->dataset().classes > classes)
            return nodeError(
                e.data.sourceNode,
                "has labels up to " + std::to_string(f.value()->dataset().classes - 1) +
                    " but the training data only has classes 0.." + std::to_string(classes - 1));
        if (std::string w = skippedFilesWarning(e.data, f.value()->dataset()); !w.empty())
            dataWarnings.emplace_back(e.data.sourceNode, std::move(w));
        for (std::string &n : sourceNotes(f.value()->dataset()))
            dataNotes.emplace_back(e.data.sourceNode, std::move(n));
        evalFlows.push_back(std::move(f).value());
    }

    auto modelResult = buildModel(job, sampleShape);
    if (!modelResult.ok()) return modelResult.error();
    nn::Model &model = modelResult.value();
    WeightAverage average(model); // train.average_last
    // The first epoch averaged (1-based; 0 = none): the last ceil(share x epochs) are. The
    // learning-rate range test keeps no model.
    const int64_t averageFrom =
        job.averageLast > 0 && !lrTest
            ? job.epochs - int64_t(std::ceil(job.averageLast * double(job.epochs) - 1e-9)) + 1
            : 0;
    auto loss = buildLoss(job);
    {
        Status s = loss->check(model.outputSample(), classes);
        if (!s.ok()) {
            // More classes in the data than the model has outputs. When only a few samples carry
            // the labels beyond them (a 255 in a file of 0..9), the labels are at fault, not the
            // last layer: say so, with the first such sample.
            const Shape out = model.outputSample();
            const auto &labels = flow.dataset().labels;
            if (out.rank() == 1 && out[0] > 0 && out[0] < classes && !labels.empty()) {
                int64_t beyond = 0, first = -1;
                for (size_t i = 0; i < labels.size(); ++i)
                    if (labels[i] >= out[0]) {
                        ++beyond;
                        if (first < 0) first = int64_t(i);
                    }
                if (beyond > 0 && beyond * 100 <= int64_t(labels.size()))
                    return nodeError(
                        job.trainData.sourceNode,
                        std::to_string(beyond) + " of " + std::to_string(labels.size()) +
                            " samples have a label the model has no output for (the first: "
                            "sample " +
                            std::to_string(first) + ", label " +
                            std::to_string(labels[size_t(first)]) + "; the model has " +
                            std::to_string(out[0]) + " outputs, for labels 0.." +
                            std::to_string(out[0] - 1) + "): are its labels damaged?");
            }
            return nodeError(job.outputNode, s.error().message);
        }
    }
    // How common each class is in training: for a loss that weighs it (logit adjustment), and
    // saved with the model (Predictor::setBalance).
    std::vector<int64_t> classCounts(size_t(classes), 0);
    for (const auto label : flow.dataset().labels)
        if (label >= 0 && label < classes) ++classCounts[size_t(label)];
    loss->setClassCounts(classCounts);
    FB_TRY(checkMemory(model, job, backend));
    model.initialize(job.seed);
    model.setProfiling(options.profile);
    auto optimizer = buildOptimizer(job.optimizer);
    optimizer->attach(model.parameters());

    const int64_t stepsPerEpoch = flow.batchesPerEpoch();
    if (lrTest) {
        // As many epochs as the test's steps need; it stops at its last step (maxSteps below).
        job.epochs = std::max<int64_t>(1, (options.lrRange.steps + stepsPerEpoch - 1) /
                                              std::max<int64_t>(stepsPerEpoch, 1));
    }
    const int64_t maxSteps = lrTest ? options.lrRange.steps : options.maxSteps;
    double lrTestBest = std::numeric_limits<double>::infinity(), lrTestEma = 0;
    int64_t lrTestSeen = 0;
    bool diverged = false;
    nn::LrSchedule schedule = job.optimizer.schedule;
    schedule.stepsPerEpoch = stepsPerEpoch;
    schedule.totalSteps = stepsPerEpoch * job.epochs;

    const std::string hash = pipelineHash(doc);
    TrainState st;
    std::string resumedFrom;
    // --resume takes a run folder (its newest whole checkpoint) or the folder of one checkpoint
    // in it, which is what errors name as the "last whole checkpoint".
    std::string resumeRun = options.resumeDir;
    bool resumingNewest = true;
    if (!options.resumeDir.empty()) {
        Checkpoint cp = newestCheckpoint(options.resumeDir);
        fs::path one = options.resumeDir;
        if (!one.has_filename()) one = one.parent_path(); // "DIR/"
        if (fs::exists(one / "checkpoint.safetensors")) {
            const fs::path parent = one.parent_path();
            resumeRun =
                (parent.filename() == io::kCheckpointsDir ? parent.parent_path() : parent).string();
            if (resumeRun.empty()) resumeRun = ".";
            std::error_code ec;
            const Checkpoint newest = newestCheckpoint(resumeRun);
            resumingNewest = newest.step >= 0 && fs::equivalent(newest.dir, one, ec);
            cp = {0, one.string()};
        }
        if (cp.step < 0)
            return fileError(options.resumeDir, "no whole checkpoint found under " +
                                                    options.resumeDir + "/checkpoints");
        bool changed = false;
        FB_TRY(loadCheckpoint(cp.dir, hash, model, *optimizer, average, st, options.acceptChanges,
                              changed));
        // Each rank's share of a batch depends on how many ranks there are: the data order
        // would not go on where it stopped.
        if (st.ranks != ranks)
            return fileError(cp.dir + "/checkpoint.safetensors",
                             "this run was trained by " + std::to_string(st.ranks) +
                                 (st.ranks == 1 ? " process" : " ranks") + "; resume it with " +
                                 (st.ranks == 1 ? std::string("one process (no mpirun)")
                                                : "mpirun -np " + std::to_string(st.ranks)) +
                                 ", not " + std::to_string(ranks));
        if (changed) {
            const std::vector<std::string> what = pipelineChanges(resumeRun, doc);
            std::string list;
            for (const auto &w : what)
                list += (list.empty() ? "" : ", ") + w;
            observer.message(LogLevel::Warning,
                             "resuming a changed pipeline" +
                                 (list.empty() ? std::string() : " (" + list + ")") +
                                 ": from here on this run no longer matches an uninterrupted one");
        }
        if (st.epoch >= job.epochs)
            return nodeError(job.trainNode + ".epochs",
                             "nothing left to train: the checkpoint " + cp.dir + " is at epoch " +
                                 std::to_string(st.epoch) + " and the pipeline asks for " +
                                 std::to_string(job.epochs) +
                                 "; raise train.epochs to train further");
        resumedFrom = cp.dir;
        if (options.stepsDone) *options.stepsDone = st.step;
    }
    // The weights were made (or read back) in host memory; from here on they live on the device.
    try {
        model.moveTo(backend);
        optimizer->moveTo(backend);
        average.moveTo(backend);
    } catch (const DeviceError &e) {
        return nodeError(e.node().empty() ? job.trainNode : e.node(), e.what());
    }
    st.ranks = ranks;
    std::optional<DataParallel> dataParallel;
    if (comm) { // a data-parallel job, of one rank under `mpirun -np 1`
        std::unique_ptr<dist::DeviceCollectives> nccl;
        if (device->kind != Device::Kind::Cpu) {
            auto made = dist::makeDeviceCollectives(*comm, device->index, backend.nativeStream());
            if (!made.ok()) return nodeError(job.trainNode + ".device", made.error().message);
            nccl = std::move(made).value();
        }
        try {
            dataParallel.emplace(*comm, model, backend, std::move(nccl));
            dataParallel->broadcastWeights(); // every rank starts from rank 0's model
        } catch (const DeviceError &e) {
            return nodeError(job.trainNode, e.what());
        }
    }
    DataParallel *dp = dataParallel ? &*dataParallel : nullptr;
    // Data-parallel time accounting (this rank's, over its training time): seconds in
    // collectives, the collective clock where the current step's time began, own samples; and
    // every rank's totals as of the last step (DataParallel::agree).
    double commTrain = 0, commMark = 0, ownSamples = 0;
    std::vector<DataParallel::RankTimes> rankTimes;
    // Rank 0 did other work than training since the last step: the others' wait is not counted.
    bool held = true;

    std::string outDir = options.outDir;
    if (!outDir.empty()) {
        std::error_code ec;
        fs::create_directories(outDir, ec);
        if (ec) return fileError(outDir, "cannot create the output folder: " + ec.message());
        // A new run in a folder that holds an earlier run's checkpoints (of this pipeline or
        // another): they would mix with this run's, and an error could name one of theirs as
        // "last whole". They move, with their pipeline.json, into earlier-<time>/, from where
        // --resume still takes them. So do the checkpoints after the one a run resumes from
        // into its own folder: the new ones would mix with them.
        const bool continuing =
            !options.resumeDir.empty() && resumingNewest && fs::equivalent(resumeRun, outDir, ec);
        if (!continuing && !checkpoints(outDir).empty()) {
            const fs::path aside = fs::path(outDir) / ("earlier-" + io::timeStamp());
            const int64_t newest = checkpoints(outDir).back().step;
            fs::create_directories(aside, ec);
            if (!ec)
                fs::rename(fs::path(outDir) / io::kCheckpointsDir, aside / io::kCheckpointsDir, ec);
            if (ec)
                return fileError(outDir, "holds the checkpoints of an earlier run, which could not "
                                         "be moved aside: " +
                                             ec.message() + "; choose another --out");
            // The rest of that run's folder goes with them (a missing file is no error).
            for (const char *name :
                 {io::kPipelineFile, io::kRunFile, io::kManifestFile, io::kEventsFile,
                  io::kLossesFile, io::kEvaluationFile, io::kModelFile})
                fs::rename(fs::path(outDir) / name, aside / name, ec);
            observer.message(LogLevel::Warning,
                             "the output folder held the checkpoints of an earlier run (newest: "
                             "step " +
                                 std::to_string(newest) + "); they are now in " + aside.string() +
                                 " (--resume " + aside.string() + " continues that run)");
        }
        std::ofstream(fs::path(outDir) / io::kPipelineFile) << graph::serializePipeline(doc);
    }

    RunInfo info;
    info.pipeline = options.pipelineName;
    info.device = device->str();
    info.outDir = outDir;
    info.threads = threads;
    info.dataWorkers = workers;
    info.ranks = ranks;
    info.epochs = job.epochs;
    info.firstEpoch = st.epoch;
    info.firstStep = st.step;
    info.stepsPerEpoch = stepsPerEpoch;
    info.trainSamples = flow.dataset().count;
    info.parameters = model.parameterCount();
    info.modelSummary = model.summary();
    info.libraries = backendLibraryVersions();
    info.libraries.emplace_back("opencv", data::openCvVersion());

    // The run folder's manifest (what it ran with) and every step's loss: what `reproduce`
    // needs to run it again and compare (docs/runs.md).
    io::LossLog lossLog;
    if (!outDir.empty()) {
        ManifestInput mi;
        mi.doc = &doc;
        mi.pipelineName = options.pipelineName;
        mi.device = *device;
        mi.threads = threads;
        mi.dataWorkers = workers;
        mi.seed = job.seed;
        mi.precision = job.precision;
        mi.firstStep = st.step;
        mi.data.emplace_back(job.trainData.sourceNode, &flow.dataset());
        for (size_t i = 0; i < evalFlows.size(); ++i)
            mi.data.emplace_back(job.evaluations[i].data.sourceNode, &evalFlows[i]->dataset());
        mi.software = options.software;
        mi.software.insert(mi.software.end(), info.libraries.begin(), info.libraries.end());
        Result<nlohmann::json> manifest = runManifest(mi);
        if (!manifest) return manifest.error();
        FB_TRY(writeFileAtomically(
            fs::path(outDir) / io::kManifestFile,
            manifest->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
        FB_TRY(lossLog.open((fs::path(outDir) / io::kLossesFile).string(), st.step));
    }
    observer.runStarted(info);
    if (!precisionNote.empty()) observer.message(LogLevel::Warning, precisionNote);
    for (const auto &[node, text] : dataWarnings)
        observer.nodeMessage(LogLevel::Warning, node, text);
    for (const auto &[node, text] : dataNotes)
        observer.nodeMessage(LogLevel::Info, node, text);
    metrics::HardwareMonitor monitor(
        std::chrono::milliseconds(500),
        [&observer](const metrics::HardwareSample &s) { observer.hardware(s); });
    monitor.start();
    if (!resumedFrom.empty())
        observer.message(LogLevel::Info, "resuming from " + resumedFrom + " (epoch " +
                                             std::to_string(st.epoch + 1) + ", batch " +
                                             std::to_string(st.batch) + ", step " +
                                             std::to_string(st.step) + ")");

    // A streaming source keeps to its memory budget: no whole-data-set table on the device.
    DeviceFeed feed(backend, flow, !comm && !flow.dataset().streaming());
    // FLOWBENCH_CUDA_GRAPHS=0 turns step capture off, to compare or to rule it out (docs/gpu.md).
    const char *graphsEnv = std::getenv("FLOWBENCH_CUDA_GRAPHS");
    const bool captureAllowed = !options.profile && !(graphsEnv && std::string(graphsEnv) == "0");
    TrainStep trainStep(backend, model, *loss, *optimizer, captureAllowed, dp);
    if (backend.device().kind != Device::Kind::Cpu) {
        observer.message(LogLevel::Info, feed.note());
        observer.message(LogLevel::Info, trainStep.note());
    }
    bool residentAnnounced = false;

    RunSummary summary;
    summary.device = info.device;
    summary.outDir = outDir;
    double trainSeconds = 0; // time in steps, waiting for data included; pauses excluded
    int64_t trainSamples = 0;
    const int64_t totalSteps = stepsPerEpoch * job.epochs;
    const int64_t firstStep = st.step;
    FlowReporter flowReporter(flow, job.trainNode);
    auto lastFlowReport = Clock::now();
    auto lastProgress = Clock::time_point{};
    double recentLossSum = 0;
    int64_t recentCorrect = 0, recentSeen = 0; // for recent_accuracy: the same span as the loss
    int64_t recentSteps = 0;
    bool paused = false, stopping = false;

    // The preprocessing and class names a model file carries, so that it can be tried alone.
    const data::ImageDataset &evaluated =
        evalFlows.empty() ? flow.dataset() : evalFlows.front()->dataset();
    const std::map<std::string, std::string> inference =
        inferenceMetadata(doc, job, Shape{evaluated.channels, evaluated.height, evaluated.width},
                          data::classNames(flow.dataset(), classes), classCounts);
    auto checkpoint = [&](const char *reason) -> Status {
        std::string dir;
        lossLog.flush(); // the losses up to a checkpoint are on disk with it
        held = true;
        FB_TRY(writeCheckpoint(backend, outDir, st, hash, job.seed, model, *optimizer, average,
                               job.keepCheckpoints, inference, job.optimizer.node, dir));
        observer.checkpointWritten({dir, reason, st.epoch, st.step});
        return {};
    };
    auto ack = [&](const Command &c, bool ok, std::string message) {
        observer.commandHandled({c.name(), c.id, std::move(message), ok});
    };
    // Steps submitted to the device and not yet accounted for: a replayed step's loss is read back
    // while the next step is fetched and queued (TrainStep), so the device never waits for the
    // host between steps. Commands, checkpoints and the end of an epoch first finish every step
    // in flight, so they see the state after exactly st.step steps.
    struct Submitted {
        int64_t n = 0;
        float lr = 0;
        int64_t own = 0; // this rank's samples of it (n, but for a data-parallel step)
    };
    std::deque<Submitted> submitted;
    double epochSeconds = 0;
    int64_t epochSamples = 0; // trained in this epoch by this process (not before a resume)
    auto busySince = Clock::now();
    // Accounts for the oldest step in flight.
    auto finishStep = [&]() -> Status {
        const Submitted q = submitted.front();
        submitted.pop_front();
        const LossResult r = trainStep.finish();
        if (lrTest && diverged) { // a step still in flight when the range test ended
            ++st.step;
            return {};
        }
        observer.stepFinished(st.step + 1, q.lr, r.loss);
        if (lrTest) {
            // The range test's end: the loss ran away. Its steps up to here are its result.
            if (std::isfinite(r.loss)) {
                ++lrTestSeen;
                lrTestEma = 0.98 * lrTestEma + 0.02 * double(r.loss);
                const double smoothed = lrTestEma / (1 - std::pow(0.98, double(lrTestSeen)));
                lrTestBest = std::min(lrTestBest, smoothed);
                diverged = lrTestSeen > 1 && smoothed > 4 * lrTestBest;
            } else {
                diverged = true;
            }
            if (diverged) {
                stopping = true;
                ++st.step;
                return {};
            }
        }
        if (!std::isfinite(r.loss) && st.step == 0 && options.resumeDir.empty()) {
            // No update has happened yet: the optimizer is not to blame, the numbers reaching
            // the model are (a data stage that divides by almost nothing, a damaged file).
            return nodeError(job.trainData.sourceNode,
                             "the loss was " +
                                 std::string(std::isnan(r.loss) ? "NaN" : "infinite") +
                                 " at the very first step, before any update: the samples this "
                                 "data gives the model are not usable numbers (look at its data "
                                 "stages, such as a normalize with a tiny std, and at the files)");
        }
        if (!std::isfinite(r.loss)) {
            return nodeError(job.lossNode,
                             "the loss became " +
                                 std::string(std::isnan(r.loss) ? "NaN" : "infinite") +
                                 " at step " + std::to_string(st.step + 1) + " (epoch " +
                                 std::to_string(st.epoch + 1) +
                                 "); last whole checkpoint: " + lastCheckpointText(outDir) +
                                 ". Try a lower learning rate on '" + job.optimizer.node + "'");
        }
        const int64_t n = q.n;
        ++st.step;
        lossLog.append(st.step, r.loss);
        if (options.stepsDone) *options.stepsDone = st.step;
        ++st.batch;
        st.lossSum += double(r.loss) * double(n);
        st.correct += r.correct;
        st.seen += n;
        st.lastLoss = r.loss;
        epochSamples += n;
        recentLossSum += double(r.loss);
        ++recentSteps;
        recentCorrect += r.correct;
        recentSeen += n;
        const auto now = Clock::now();
        const double stepSeconds = std::chrono::duration<double>(now - busySince).count();
        busySince = now;
        epochSeconds += stepSeconds;
        trainSeconds += stepSeconds;
        trainSamples += n;
        if (dp) {
            const double c = dp->commSeconds();
            commTrain += c - commMark;
            commMark = c;
            ownSamples += double(q.own);
        }

        const bool epochEnd = st.batch == stepsPerEpoch;
        if (epochEnd || now - lastProgress >= std::chrono::milliseconds(100)) {
            lastProgress = now;
            Progress p;
            p.epoch = st.epoch;
            p.epochs = job.epochs;
            p.step = st.step;
            p.stepInEpoch = st.batch;
            p.stepsPerEpoch = stepsPerEpoch;
            p.totalSteps = totalSteps;
            p.loss = float(st.lossSum / double(std::max<int64_t>(st.seen, 1)));
            p.accuracy = float(double(st.correct) / double(std::max<int64_t>(st.seen, 1)));
            p.recentLoss = float(recentLossSum / double(std::max<int64_t>(recentSteps, 1)));
            p.recentAccuracy =
                float(double(recentCorrect) / double(std::max<int64_t>(recentSeen, 1)));
            recentLossSum = 0;
            recentSteps = 0;
            recentCorrect = recentSeen = 0;
            p.lr = q.lr;
            p.elapsedSeconds = trainSeconds;
            p.samples = trainSamples;
            p.samplesPerSecond = double(trainSamples) / std::max(trainSeconds, 1e-9);
            p.etaSeconds = trainSeconds / double(std::max<int64_t>(st.step - firstStep, 1)) *
                           double(totalSteps - st.step);
            p.dataWaitShare = std::clamp(
                flow.stats().consumerWaitSeconds / std::max(trainSeconds, 1e-9), 0.0, 1.0);
            if (dp) fillRankShares(p, rankTimes, rank, trainSeconds, commTrain, ownSamples);
            observer.progress(p);
        }
        if (now - lastFlowReport >= std::chrono::milliseconds(500)) {
            lastFlowReport = now;
            observer.dataflow(flowReporter.report(trainSeconds));
        }
        // A checkpoint every N steps; one that falls on the epoch's last step is written after
        // the epoch's evaluation instead, as the start of the next epoch.
        if (!outDir.empty() && job.checkpointSteps > 0 && !epochEnd &&
            st.step % job.checkpointSteps == 0)
            FB_TRY(checkpoint("steps"));
        return {};
    };
    auto finishAll = [&]() -> Status {
        while (!submitted.empty())
            FB_TRY(finishStep());
        return {};
    };

    // Takes the commands that arrived; while paused, waits for more.
    auto handleCommands = [&]() -> Status {
        if (!options.control) return {};
        while (true) {
            auto entry = options.control->take(std::chrono::milliseconds(paused ? 200 : 0));
            if (!entry) {
                if (paused && options.control->inputClosed()) {
                    observer.message(LogLevel::Warning,
                                     "the command input closed while the run was paused; "
                                     "resuming");
                    paused = false;
                }
                if (paused && !stopping) continue;
                return {};
            }
            // A command acts on the state after the steps already submitted.
            held = true;
            FB_TRY(finishAll());
            if (!entry->command) {
                observer.commandHandled(entry->rejection);
                continue;
            }
            const Command &c = *entry->command;
            switch (c.kind) {
            case Command::Kind::Pause:
                ack(c, true,
                    paused ? "already paused" : "paused after step " + std::to_string(st.step));
                paused = true;
                break;
            case Command::Kind::Resume:
                ack(c, true, paused ? "resumed" : "not paused");
                paused = false;
                break;
            case Command::Kind::Stop:
                ack(c, true,
                    "stopping after step " + std::to_string(st.step) +
                        (outDir.empty() ? " (no --out folder: no checkpoint is written)"
                                        : "; writing a checkpoint"));
                stopping = true;
                paused = false;
                return {};
            case Command::Kind::Checkpoint:
                if (outDir.empty()) {
                    ack(c, false, "no output folder (--out) to write a checkpoint to");
                } else {
                    const Status s = checkpoint("command");
                    if (s.ok())
                        ack(c, true, "checkpoint written at step " + std::to_string(st.step));
                    else
                        ack(c, false, "no checkpoint: " + s.error().str());
                }
                break;
            case Command::Kind::SetLr: {
                st.lrOverride = c.lr;
                char buf[64];
                std::snprintf(buf, sizeof buf, "%g", c.lr);
                ack(c, true,
                    std::string("learning rate ") + buf + " from step " +
                        std::to_string(st.step + 1));
                break;
            }
            }
        }
    };

    // A device failure (out of memory, a failed CUDA call) ends the run with an error naming the
    // node; the checkpoints written so far stay whole.
    try {
        for (; st.epoch < job.epochs && !stopping; ++st.epoch, st.batch = 0) {
            epochSeconds = 0;
            epochSamples = 0;
            held = true; // the start, or the previous epoch's evaluation
            feed.startEpoch(st.epoch, st.batch);
            const bool resident = feed.resident();
            if (resident && !residentAnnounced) {
                residentAnnounced = true;
                observer.message(LogLevel::Info,
                                 "the training data is now resident on " + info.device + " (" +
                                     std::to_string(feed.residentBytes() >> 20) +
                                     " MB): batches are gathered there and the data stages rest");
            }
            if (!resident) flow.startEpoch(st.epoch, st.batch);
            while (true) {
                FB_TRY(handleCommands());
                // Rank 0 hears the commands (mpirun gives it the standard input); every rank
                // does as it decided. While rank 0 is paused, the others wait here.
                // The wait here for slower ranks is training time, unless rank 0 was busy with
                // something else (a pause, a checkpoint, an evaluation).
                bool timed = false;
                if (dp) {
                    const auto before = Clock::now();
                    const double commBefore = dp->commSeconds();
                    const DataParallel::Control c =
                        dp->agree({stopping, held, st.lrOverride},
                                  {trainSeconds - commTrain, commTrain, ownSamples}, rankTimes);
                    held = false;
                    stopping = c.stop;
                    st.lrOverride = c.lrOverride;
                    if (submitted.empty() && !c.held) {
                        busySince = before;
                        commMark = commBefore;
                        timed = true;
                    }
                }
                if (stopping) break;
                // With nothing in flight (the run's start, after a command, a checkpoint or an
                // epoch's end), time counts from here: a pause is not training time. Otherwise
                // it runs on from the previous step's finish.
                if (submitted.empty() && !timed) {
                    busySince = Clock::now();
                    if (dp) commMark = dp->commSeconds();
                }
                // The step about to be submitted, counting the ones still in flight.
                const int64_t inFlight = int64_t(submitted.size());
                const int64_t batchIndex = st.batch + inFlight;
                const int64_t stepIndex = st.step + inFlight;
                // (Not at an epoch's natural end: the evaluation of a whole epoch still runs.)
                if (maxSteps > 0 && stepIndex >= maxSteps && batchIndex < stepsPerEpoch) {
                    stopping = true;
                    break;
                }
                const data::Batch *source = nullptr;
                std::optional<data::Batch> hostBatch;
                if (resident) {
                    if (batchIndex >= stepsPerEpoch) break;
                    source = &feed.residentBatch(st.epoch, batchIndex);
                } else {
                    auto next = flow.next();
                    if (!next.ok()) return next.error();
                    if (!next.value()) break;
                    hostBatch = std::move(next.value());
                    source = &feed.put(*hostBatch);
                }
                const data::Batch &batch = *source;
                float lr = st.lrOverride > 0 ? float(st.lrOverride) : schedule.at(stepIndex);
                if (lrTest)
                    lr = float(options.lrRange.lrMin *
                               std::pow(options.lrRange.lrMax / options.lrRange.lrMin,
                                        double(stepIndex) / double(std::max<int64_t>(
                                                                options.lrRange.steps - 1, 1))));
                const uint64_t seed = mix64(job.seed ^ mix64(uint64_t(stepIndex) + 0x5eed));
                trainStep.submit(batch, lr, seed);
                // Counts are the global batch's: the step's result is (every rank's together).
                submitted.push_back({dp ? flow.globalBatchSize(batchIndex) : batch.x.shape()[0], lr,
                                     batch.padding ? 0 : batch.x.shape()[0]});
                if (std::string why = trainStep.takeFallback(); !why.empty())
                    observer.message(LogLevel::Warning, why);
                // The previous step's result, read while this one computes.
                if (submitted.size() > 1) FB_TRY(finishStep());
                // This step stays in flight unless its result is already known, or a checkpoint
                // or the epoch's end follows it.
                const bool boundary =
                    batchIndex + 1 == stepsPerEpoch ||
                    (job.checkpointSteps > 0 && (stepIndex + 1) % job.checkpointSteps == 0);
                if (trainStep.ready() || boundary) FB_TRY(finishAll());
            }
            FB_TRY(finishAll());
            if (stopping) {
                flow.cancel();
                if (!outDir.empty()) FB_TRY(checkpoint("stop"));
                break;
            }

            EpochResult er;
            er.epoch = st.epoch;
            er.epochs = job.epochs;
            er.trainLoss = float(st.lossSum / double(std::max<int64_t>(st.seen, 1)));
            er.trainAccuracy = float(double(st.correct) / double(std::max<int64_t>(st.seen, 1)));
            er.seconds = epochSeconds;
            er.samplesPerSecond = epochSamples > 0 ? double(epochSamples) / epochSeconds : 0.0;
            // From the first epoch train.average_last averages on, the mean of the epochs'
            // weights is what is evaluated (and saved at the end); every rank keeps it, as every
            // rank holds the model.
            if (averageFrom > 0 && st.epoch + 1 >= averageFrom) {
                average.add(backend);
                if (average.count() == 1 && rank0) {
                    char share[32];
                    std::snprintf(share, sizeof share, "%g", job.averageLast);
                    observer.message(LogLevel::Info,
                                     "from epoch " + std::to_string(st.epoch + 1) +
                                         " on, the evaluations and the saved model are the mean "
                                         "of the weights at the end of each epoch since (" +
                                         job.trainNode + ".average_last " + share + " of " +
                                         std::to_string(job.epochs) + " epochs)");
                }
            }
            // In a data-parallel job rank 0 evaluates (every rank holds the same model).
            const bool evaluateMean = average.count() > 0 && rank0 && !job.evaluations.empty();
            if (evaluateMean) average.exchange(backend);
            for (size_t i = 0; rank0 && i < job.evaluations.size(); ++i) {
                auto ev = evaluate(
                    model, backend, *loss, *evalFlows[i], job.evaluations[i],
                    evaluationClassNames(evalFlows[i]->dataset(), flow.dataset(), classes));
                if (!ev.ok()) return ev.error();
                er.evaluations.push_back(std::move(ev).value());
            }
            if (evaluateMean) average.exchange(backend); // training goes on from the live weights
            if (dp) {
                // The ranks must hold one model: summing the same gradients from the same
                // weights gives the same bits. A difference is a fault, never trained past.
                std::vector<int> differing;
                dp->broadcastBuffers();
                er.weightsDigest = dp->weightsDigest(differing);
                if (!differing.empty()) {
                    std::string list;
                    for (int r : differing)
                        list += (list.empty() ? "" : ", ") + std::string("rank ") +
                                std::to_string(r) + " (" + comm->hostOf(r) + ")";
                    return nodeError(job.trainNode,
                                     "after epoch " + std::to_string(st.epoch + 1) +
                                         " the weights of " + list +
                                         " differ from rank 0's: the ranks no longer train one "
                                         "model; last whole checkpoint: " +
                                         lastCheckpointText(outDir));
                }
            }
            observer.epochFinished(er);
            if (!er.evaluations.empty()) summary.testAccuracy = er.evaluations[0].accuracy;

            // The last update can break the weights even though the loss before it was finite:
            // never write such a model as a success.
            bool finite = true;
            for (const auto &e : er.evaluations)
                finite = finite && std::isfinite(e.loss);
            for (auto &p : model.parameters())
                finite = finite && backend.toHost(p.param->value).allFinite();
            if (dp) finite = dp->agree(finite);
            if (!finite)
                return nodeError(job.optimizer.node,
                                 "the weights became NaN or infinite by step " +
                                     std::to_string(st.step) + " (epoch " +
                                     std::to_string(st.epoch + 1) + "); last whole checkpoint: " +
                                     lastCheckpointText(outDir) + ". Try a lower learning rate");

            // The latest evaluation with its whole gallery, for a window that opens the run later
            // (the stream sends the gallery with the last epoch only).
            if (!outDir.empty() && !er.evaluations.empty()) {
                nlohmann::json file{{"format", "flowbench.evaluation"},
                                    {"version", 1},
                                    {"epoch", st.epoch + 1},
                                    {"epochs", job.epochs},
                                    {"evaluations", nlohmann::json::array()}};
                for (const Evaluation &e : er.evaluations)
                    file["evaluations"].push_back(
                        evaluationJson(e, st.epoch + 1, job.epochs, true));
                for (const Evaluation &e : er.evaluations)
                    FB_TRY(writeFileAtomically(fs::path(outDir) / misclassifiedPicturesFile(e.node),
                                               std::string_view(reinterpret_cast<const char *>(
                                                                    e.detail.allPictures.data()),
                                                                e.detail.allPictures.size())));
                FB_TRY(writeFileAtomically(
                    fs::path(outDir) / io::kEvaluationFile,
                    file.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
            }

            // The epoch is whole: the state a checkpoint records is the start of the next one.
            const bool last = st.epoch + 1 == job.epochs;
            const bool everyEpoch =
                job.checkpointEvery > 0 && (st.epoch + 1) % job.checkpointEvery == 0;
            const bool everySteps = job.checkpointSteps > 0 && st.step % job.checkpointSteps == 0;
            st.lossSum = 0;
            st.correct = 0;
            st.seen = 0;
            if (!outDir.empty() && (last || everyEpoch || everySteps)) {
                ++st.epoch;
                st.batch = 0;
                const Status s = checkpoint(everyEpoch || last ? "epoch" : "steps");
                --st.epoch;
                FB_TRY(s);
            }
        }

    } catch (const DeviceError &e) {
        flow.cancel();
        return nodeError(e.node().empty() ? job.trainNode : e.node(),
                         std::string(e.what()) +
                             "; last whole checkpoint: " + lastCheckpointText(outDir));
    }

    // Commands that came too late for the loop still get their answer.
    while (options.control) {
        auto entry = options.control->take();
        if (!entry) break;
        CommandAck a = entry->command ? CommandAck{entry->command->name(), entry->command->id,
                                                   "the run has already finished training", false}
                                      : entry->rejection;
        observer.commandHandled(a);
    }
    monitor.stop();
    lossLog.close();
    if (options.profile)
        observer.message(LogLevel::Info, "time per layer (training):\n" + model.profileReport());

    if (!outDir.empty() && !stopping) {
        if (average.count() > 0) average.exchange(backend); // the model saved is the mean
        io::NamedTensors weights;
        for (auto &p : model.parameters())
            weights.emplace_back(p.name, backend.toHost(p.param->value));
        for (auto &[name, b] : model.buffers())
            weights.emplace_back(name, backend.toHost(b));
        std::map<std::string, std::string> meta{{"format", "flowbench.model"},
                                                {"pipeline_hash", hash}};
        meta.insert(inference.begin(), inference.end());
        FB_TRY(io::writeSafetensors((fs::path(outDir) / io::kModelFile).string(), weights, meta));
    }

    const double waitShare =
        std::clamp(flow.stats().consumerWaitSeconds / std::max(trainSeconds, 1e-9), 0.0, 1.0);
    observer.dataflow(flowReporter.report(trainSeconds));
    summary.dataWaitShare = waitShare;
    std::tie(summary.bottleneck, summary.bottleneckCause) = flowReporter.bottleneck(waitShare);
    std::string why = "the model's steps";
    std::string ranksPart;
    if (dp) {
        Progress shares;
        fillRankShares(shares, rankTimes, rank, trainSeconds, commTrain, ownSamples);
        summary.commShare = shares.commShare;
        summary.rankWaitShare = shares.rankWaitShare;
        summary.allReduceShare = shares.allReduceShare;
        // The rank that computed longest is the one the others waited for.
        for (size_t r = 0; r < rankTimes.size(); ++r)
            if (summary.slowestRank < 0 ||
                rankTimes[r].computeSeconds > rankTimes[size_t(summary.slowestRank)].computeSeconds)
                summary.slowestRank = int(r);
        const std::string slowest = summary.slowestRank < 0
                                        ? std::string()
                                        : "rank " + std::to_string(summary.slowestRank) + " on " +
                                              comm->hostOf(summary.slowestRank);
        const double compute =
            std::max(0.0, 1.0 - waitShare - shares.rankWaitShare - shares.allReduceShare);
        summary.bottleneckCause = "compute";
        if (shares.allReduceShare > compute && shares.allReduceShare >= shares.rankWaitShare) {
            summary.bottleneckCause = "all-reduce";
            why = "the all-reduce of the gradients";
        } else if (shares.rankWaitShare > compute) {
            summary.bottleneckCause = "other ranks";
            why = "waited on other ranks: " + slowest + " is the slowest";
        }
        ranksPart = ", " + percent(shares.rankWaitShare) +
                    " on other ranks (the slowest: " + slowest + ") and " +
                    percent(shares.allReduceShare) + " in all-reduce";
    }
    observer.message(LogLevel::Info,
                     "training waited " + percent(waitShare) + " of its time for data" + ranksPart +
                         "; bottleneck: " + summary.bottleneck +
                         (summary.bottleneck == job.trainNode     ? " (" + why + ")"
                          : summary.bottleneckCause == "decoding" ? " (decoding its files)"
                          : summary.bottleneckCause == "waiting on disk"
                              ? " (waiting on disk: reading its disk cache)"
                              : ""));
    summary.stopped = stopping && !diverged;
    summary.diverged = diverged;
    summary.epochs = job.epochs;
    summary.steps = st.step;
    summary.trainSamplesPerSecond = double(trainSamples) / std::max(trainSeconds, 1e-9);
    summary.finalLoss = float(st.lastLoss);
    summary.wallSeconds = secondsSince(wallStart);
    return summary;
}

} // namespace fb::exec
