#include "core/exec/runner.h"

#include "core/backend/backend.h"
#include "core/data/loader.h"
#include "core/io/safetensors.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace fb::exec {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string pipelineHash(const graph::PipelineDocument &doc)
{
    nlohmann::json canon = nlohmann::json::parse(graph::serializePipeline(doc));
    for (auto &n : canon["nodes"]) {
        n.erase("position");
        // Training longer, checkpointing more often or moving device continues the same run.
        if (n.value("type", "") == "train" && n.contains("params"))
            for (const char *k : {"epochs", "checkpoint_every", "device"})
                n["params"].erase(k);
    }
    const std::string text = canon.dump();
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
    return buf;
}

namespace {

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

Result<std::shared_ptr<const data::ImageDataset>> loadData(const DataSpec &spec)
{
    Result<data::ImageDataset> ds = spec.sourceType == "fashion_mnist"
                                        ? data::loadFashionMnist(spec.path, spec.split, spec.limit)
                                        : data::loadIdxImages(spec.images, spec.labels, spec.limit);
    if (!ds.ok()) {
        Error e = ds.error();
        e.node = spec.sourceNode;
        return e;
    }
    if (ds->count == 0) return nodeError(spec.sourceNode, "the data set is empty");
    return std::make_shared<const data::ImageDataset>(std::move(ds).value());
}

std::vector<std::shared_ptr<const data::Transform>> transformsOf(const DataSpec &spec)
{
    std::vector<std::shared_ptr<const data::Transform>> t;
    for (const auto &n : spec.normalize)
        t.push_back(std::make_shared<data::Normalize>(n.mean, n.stddev));
    return t;
}

Shape sampleShapeOf(const data::ImageDataset &d)
{
    return {d.channels, d.height, d.width};
}

Evaluation evaluate(nn::Model &model, Backend &backend, nn::Loss &loss,
                    std::shared_ptr<const data::ImageDataset> ds, const EvaluateSpec &spec)
{
    data::LoaderOptions lo;
    lo.batchSize = spec.batchSize;
    lo.shuffle = false;
    data::Loader loader(ds, lo, transformsOf(spec.data));
    loader.startEpoch(0);
    double lossSum = 0;
    int64_t correct = 0, seen = 0;
    nn::StepContext ctx;
    ctx.training = false;
    while (auto batch = loader.next()) {
        const int64_t n = batch->x.shape()[0];
        nn::Plan &plan = model.plan(backend, n, false);
        const Tensor &out = plan.forward(batch->x, ctx);
        LossResult r = loss.compute(backend, out, batch->y, nullptr);
        lossSum += double(r.loss) * double(n);
        correct += r.correct;
        seen += n;
    }
    return {spec.node, float(lossSum / double(std::max<int64_t>(seen, 1))),
            float(double(correct) / double(std::max<int64_t>(seen, 1))), seen};
}

struct Checkpoint {
    int64_t epoch = -1;
    std::string dir;
};

// The newest whole checkpoint: a folder is renamed into place only once its file is written.
Checkpoint newestCheckpoint(const std::string &outDir)
{
    Checkpoint best;
    std::error_code ec;
    const fs::path root = fs::path(outDir) / "checkpoints";
    for (const auto &entry : fs::directory_iterator(root, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("epoch-")) continue;
        if (!fs::exists(entry.path() / "checkpoint.safetensors")) continue;
        const int64_t e = std::atoll(name.c_str() + 6);
        if (e > best.epoch) best = {e, entry.path().string()};
    }
    return best;
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

Status writeCheckpoint(const std::string &outDir, int64_t epoch, int64_t step,
                       const std::string &hash, nn::Model &model, const nn::Optimizer &opt,
                       std::string &writtenDir)
{
    char name[32];
    std::snprintf(name, sizeof name, "epoch-%04lld", (long long)epoch);
    const fs::path root = fs::path(outDir) / "checkpoints";
    const fs::path tmp = root / (std::string(".") + name + ".tmp");
    const fs::path final = root / name;
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) return fileError(tmp.string(), "cannot create the checkpoint folder: " + ec.message());
    std::map<std::string, std::string> meta{{"format", "flowbench.checkpoint"},
                                            {"version", "1"},
                                            {"epoch", std::to_string(epoch)},
                                            {"step", std::to_string(step)},
                                            {"optimizer_steps", std::to_string(opt.steps())},
                                            {"optimizer", opt.type()},
                                            {"pipeline_hash", hash}};
    FB_TRY(io::writeSafetensors((tmp / "checkpoint.safetensors").string(),
                                checkpointTensors(model, opt), meta));
    fs::remove_all(final, ec);
    fs::rename(tmp, final, ec);
    if (ec)
        return fileError(final.string(), "cannot move the checkpoint into place: " + ec.message());
    writtenDir = final.string();
    return {};
}

Status loadCheckpoint(const std::string &dir, const std::string &hash, nn::Model &model,
                      nn::Optimizer &opt, int64_t &epoch, int64_t &step)
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
    if (get("pipeline_hash") != hash)
        return fileError(path, "this checkpoint was written by a different pipeline (hash " +
                                   get("pipeline_hash") + ", this pipeline is " + hash +
                                   "); refusing to resume from it");
    for (auto &[name, t] : checkpointTensors(model, opt)) {
        const Tensor *src = file->find(name);
        if (!src) return fileError(path, "tensor '" + name + "' is missing");
        if (src->shape() != t.shape() || src->dtype() != t.dtype())
            return fileError(path, "tensor '" + name + "' has shape " + src->shape().str() +
                                       ", the model needs " + t.shape().str());
        t.copyFrom(*src);
    }
    epoch = std::atoll(get("epoch").c_str());
    step = std::atoll(get("step").c_str());
    opt.setSteps(std::atoll(get("optimizer_steps").c_str()));
    return {};
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
    if (devName == "auto") devName = "cpu"; // the GPU backend arrives with its own issue
    auto device = Device::parse(devName);
    if (!device.ok()) return nodeError(job.trainNode + ".device", device.error().message);
    auto backendResult = backendFor(device.value());
    if (!backendResult.ok())
        return nodeError(job.trainNode + ".device", backendResult.error().message);
    Backend &backend = *backendResult.value();
    const int threads = options.threads > 0
                            ? options.threads
                            : int(std::max(1u, std::thread::hardware_concurrency()));
    backend.setThreads(threads);

    auto trainData = loadData(job.trainData);
    if (!trainData.ok()) return trainData.error();
    auto ds = trainData.value();
    std::vector<std::shared_ptr<const data::ImageDataset>> evalData;
    for (const auto &e : job.evaluations) {
        auto d = loadData(e.data);
        if (!d.ok()) return d.error();
        if (sampleShapeOf(*d.value()) != sampleShapeOf(*ds))
            return nodeError(e.data.sourceNode,
                             "samples of shape " + sampleShapeOf(*d.value()).str() +
                                 " differ from the training samples " + sampleShapeOf(*ds).str());
        if (d.value()->classes > ds->classes)
            return nodeError(e.data.sourceNode, "has labels up to " +
                                                    std::to_string(d.value()->classes - 1) +
                                                    " but the training data only has classes 0.." +
                                                    std::to_string(ds->classes - 1));
        evalData.push_back(d.value());
    }

    auto modelResult = buildModel(job, sampleShapeOf(*ds));
    if (!modelResult.ok()) return modelResult.error();
    nn::Model &model = modelResult.value();
    auto loss = buildLoss(job);
    {
        Status s = loss->check(model.outputSample(), ds->classes);
        if (!s.ok()) return nodeError(job.outputNode, s.error().message);
    }
    model.initialize(job.seed);
    model.setProfiling(options.profile);
    auto optimizer = buildOptimizer(job.optimizer);
    optimizer->attach(model.parameters());

    data::LoaderOptions lo;
    lo.batchSize = job.batchSize;
    lo.shuffle = job.shuffle;
    lo.seed = job.seed;
    data::Loader loader(ds, lo, transformsOf(job.trainData));
    const int64_t stepsPerEpoch = loader.batchesPerEpoch();
    nn::LrSchedule schedule = job.optimizer.schedule;
    schedule.stepsPerEpoch = stepsPerEpoch;
    schedule.totalSteps = stepsPerEpoch * job.epochs;

    const std::string hash = pipelineHash(doc);
    int64_t firstEpoch = 0, step = 0;
    std::string resumedFrom;
    if (!options.resumeDir.empty()) {
        Checkpoint cp = newestCheckpoint(options.resumeDir);
        if (cp.epoch < 0)
            return fileError(options.resumeDir, "no whole checkpoint found under " +
                                                    options.resumeDir + "/checkpoints");
        FB_TRY(loadCheckpoint(cp.dir, hash, model, *optimizer, firstEpoch, step));
        if (firstEpoch >= job.epochs)
            return nodeError(job.trainNode + ".epochs",
                             "nothing left to train: the checkpoint " + cp.dir + " is at epoch " +
                                 std::to_string(firstEpoch) + " and the pipeline asks for " +
                                 std::to_string(job.epochs) +
                                 "; raise train.epochs to train further");
        resumedFrom = cp.dir;
    }

    std::string outDir = options.outDir;
    if (!outDir.empty()) {
        std::error_code ec;
        fs::create_directories(outDir, ec);
        if (ec) return fileError(outDir, "cannot create the output folder: " + ec.message());
        std::ofstream(fs::path(outDir) / "pipeline.json") << graph::serializePipeline(doc);
    }

    RunInfo info;
    info.pipeline = options.pipelineName;
    info.device = device->str();
    info.outDir = outDir;
    info.threads = threads;
    info.epochs = job.epochs;
    info.firstEpoch = firstEpoch;
    info.stepsPerEpoch = stepsPerEpoch;
    info.trainSamples = ds->count;
    info.parameters = model.parameterCount();
    info.modelSummary = model.summary();
    observer.runStarted(info);
    metrics::HardwareMonitor monitor(
        std::chrono::milliseconds(500),
        [&observer](const metrics::HardwareSample &s) { observer.hardware(s); });
    monitor.start();
    if (!resumedFrom.empty())
        observer.message(LogLevel::Info, "resuming from " + resumedFrom + " (epoch " +
                                             std::to_string(firstEpoch) + ", step " +
                                             std::to_string(step) + ")");

    RunSummary summary;
    summary.device = info.device;
    summary.outDir = outDir;
    double trainSeconds = 0;
    int64_t trainSamples = 0;
    float lastLoss = 0;
    const int64_t totalSteps = stepsPerEpoch * job.epochs;

    for (int64_t epoch = firstEpoch; epoch < job.epochs; ++epoch) {
        const auto epochStart = Clock::now();
        loader.startEpoch(epoch);
        double lossSum = 0;
        int64_t correct = 0, seen = 0, inEpoch = 0;
        while (auto batch = loader.next()) {
            const int64_t n = batch->x.shape()[0];
            nn::Plan &plan = model.plan(backend, n, true);
            nn::StepContext ctx;
            ctx.training = true;
            ctx.seed = mix64(job.seed ^ mix64(uint64_t(step) + 0x5eed));
            const Tensor &out = plan.forward(batch->x, ctx);
            const LossResult r = loss->compute(backend, out, batch->y, &plan.outputGrad());
            if (!std::isfinite(r.loss)) {
                const Checkpoint cp = outDir.empty() ? Checkpoint{} : newestCheckpoint(outDir);
                return nodeError(job.lossNode,
                                 "the loss became " +
                                     std::string(std::isnan(r.loss) ? "NaN" : "infinite") +
                                     " at step " + std::to_string(step + 1) + " (epoch " +
                                     std::to_string(epoch + 1) + "); last whole checkpoint: " +
                                     (cp.epoch >= 0 ? cp.dir : std::string("none")) +
                                     ". Try a lower learning rate on '" + job.optimizer.node + "'");
            }
            plan.backward(ctx);
            const float lr = schedule.at(step);
            optimizer->step(backend, lr);
            ++step;
            ++inEpoch;
            lossSum += double(r.loss) * double(n);
            correct += r.correct;
            seen += n;
            lastLoss = r.loss;

            Progress p;
            p.epoch = epoch;
            p.epochs = job.epochs;
            p.step = step;
            p.stepInEpoch = inEpoch;
            p.stepsPerEpoch = stepsPerEpoch;
            p.totalSteps = totalSteps;
            p.loss = float(lossSum / double(seen));
            p.accuracy = float(double(correct) / double(seen));
            p.lr = lr;
            const double el = trainSeconds + secondsSince(epochStart);
            p.elapsedSeconds = el;
            p.samplesPerSecond = double(trainSamples + seen) / std::max(el, 1e-9);
            const int64_t doneSteps = step - firstEpoch * stepsPerEpoch;
            p.etaSeconds = el / double(std::max<int64_t>(doneSteps, 1)) * double(totalSteps - step);
            observer.progress(p);
        }
        const double epochSeconds = secondsSince(epochStart);
        trainSeconds += epochSeconds;
        trainSamples += seen;

        EpochResult er;
        er.epoch = epoch;
        er.epochs = job.epochs;
        er.trainLoss = float(lossSum / double(std::max<int64_t>(seen, 1)));
        er.trainAccuracy = float(double(correct) / double(std::max<int64_t>(seen, 1)));
        er.seconds = epochSeconds;
        er.samplesPerSecond = double(seen) / std::max(epochSeconds, 1e-9);
        for (size_t i = 0; i < job.evaluations.size(); ++i)
            er.evaluations.push_back(
                evaluate(model, backend, *loss, evalData[i], job.evaluations[i]));
        observer.epochFinished(er);
        if (!er.evaluations.empty()) summary.testAccuracy = er.evaluations[0].accuracy;

        // The last update can break the weights even though the loss before it was finite:
        // never write such a model as a success.
        bool finite = true;
        for (const auto &e : er.evaluations)
            finite = finite && std::isfinite(e.loss);
        for (auto &p : model.parameters()) {
            const float *w = p.param->value.f32();
            for (int64_t i = 0; finite && i < p.param->value.numel(); ++i)
                finite = std::isfinite(w[i]);
        }
        if (!finite) {
            const Checkpoint cp = outDir.empty() ? Checkpoint{} : newestCheckpoint(outDir);
            return nodeError(
                job.optimizer.node,
                "the weights became NaN or infinite by step " + std::to_string(step) + " (epoch " +
                    std::to_string(epoch + 1) + "); last whole checkpoint: " +
                    (cp.epoch >= 0 ? cp.dir : std::string("none")) + ". Try a lower learning rate");
        }

        const bool last = epoch + 1 == job.epochs;
        if (!outDir.empty() &&
            (last || (job.checkpointEvery > 0 && (epoch + 1) % job.checkpointEvery == 0))) {
            std::string dir;
            FB_TRY(writeCheckpoint(outDir, epoch + 1, step, hash, model, *optimizer, dir));
            observer.checkpointWritten(dir, epoch + 1);
        }
    }

    monitor.stop();
    if (options.profile)
        observer.message(LogLevel::Info, "time per layer (training):\n" + model.profileReport());

    if (!outDir.empty()) {
        io::NamedTensors weights;
        for (auto &p : model.parameters())
            weights.emplace_back(p.name, p.param->value);
        for (auto &[name, b] : model.buffers())
            weights.emplace_back(name, b);
        FB_TRY(io::writeSafetensors((fs::path(outDir) / "model.safetensors").string(), weights,
                                    {{"format", "flowbench.model"}, {"pipeline_hash", hash}}));
    }

    summary.epochs = job.epochs;
    summary.steps = step;
    summary.trainSamplesPerSecond = double(trainSamples) / std::max(trainSeconds, 1e-9);
    summary.finalLoss = lastLoss;
    summary.wallSeconds = secondsSince(wallStart);
    return summary;
}

} // namespace fb::exec
