// Training steps captured once and replayed (exec::TrainStep) must train exactly as steps run one
// op at a time. CUDA graphs need a GPU, so the capture here is a recording backend on the CPU
// that behaves as a CUDA graph does: while capturing it records every op with its arguments by
// value (pointers, sizes, constants) and runs nothing; a replay runs the recorded ops again, and
// the only thing they read afresh is what Backend::setStepValues set (learning rate, optimizer
// step, dropout seed), as the CUDA kernels read it from device memory. It refuses what a capture
// refuses (allocating, uploading, downloading). So any per-step value that TrainStep, the model or
// the optimizer bakes into a step instead of passing through the step values, or a batch the
// recording does not read, changes the trajectory, and these tests see it. The same backend
// drives a whole run, where the runner keeps replayed steps in flight while it queues the next.
// The GPU itself is checked by test_cross_device, on the lent device.

#include "core/backend/cpu/reference_backend.h"
#include "core/exec/runner.h"
#include "core/exec/train_step.h"
#include "core/graph/pipeline_file.h"
#include "core/graph/settings.h"
#include "core/nn/layers.h"

#include "core/exec/node_type.h"

#include <QtTest>

#include <QDirIterator>
#include <QTemporaryDir>

#include <functional>
#include <map>

using namespace fb;

namespace {

class RecordingBackend;

class Recorded final : public CapturedWork {
public:
    explicit Recorded(std::vector<std::function<void()>> ops)
        : m_ops(std::move(ops))
    {}
    void replay() override
    {
        for (auto &op : m_ops)
            op();
    }

private:
    std::vector<std::function<void()>> m_ops;
};

class RecordingBackend final : public Backend {
public:
    // bakeValues: record the step values given at capture time instead of reading them at replay
    // (what a wrong capture would do), to show the tests notice. refuse: beginCapture throws.
    explicit RecordingBackend(bool bakeValues = false, bool refuse = false)
        : m_bake(bakeValues)
        , m_refuse(refuse)
    {}

    // Runs now, or records while capturing.
    void op(std::function<void()> f)
    {
        if (m_recording)
            m_ops.push_back(std::move(f));
        else
            f();
    }
    void refuse(const char *what) const
    {
        if (m_recording) throw DeviceError(std::string(what) + " while capturing");
    }
    int captures = 0;
    // false: a backend without capture (the runner's baseline), with the same arithmetic.
    bool capture = true;
    // Called with each step's optimizer step the first time its values are set (before it runs).
    std::function<void(int64_t)> onNewStep;
    int64_t valuesSet = 0;
    // Loss reads waited for after a later step's values were set: steps the caller kept in
    // flight while it queued the next one.
    int64_t overlappedReads = 0;

    std::string name() const override { return "recording"; }
    Device device() const override { return m_ref.device(); }
    bool supports(OpKind k) const override { return m_ref.supports(k); }
    void setThreads(int) override {}

    Tensor empty(const Shape &shape, DType dtype) override
    {
        refuse("allocating");
        return m_ref.empty(shape, dtype);
    }
    void copy(void *dst, const void *src, size_t bytes) override
    {
        op([=, this] { m_ref.copy(dst, src, bytes); });
    }
    void upload(void *dst, const void *host, size_t bytes) override
    {
        refuse("uploading");
        m_ref.upload(dst, host, bytes);
    }
    void download(void *host, const void *src, size_t bytes) override
    {
        refuse("downloading");
        m_ref.download(host, src, bytes);
    }
    void fill(float *y, float value, int64_t count) override
    {
        op([=, this] { m_ref.fill(y, value, count); });
    }
    void zero(void *dst, size_t bytes) override
    {
        op([=, this] { m_ref.zero(dst, bytes); });
    }

    std::unique_ptr<ConvKernel> makeConv(const ConvDesc &d) override;
    std::unique_ptr<LinearKernel> makeLinear(const LinearDesc &d) override;
    std::unique_ptr<PoolKernel> makePool(const PoolDesc &d) override;
    std::unique_ptr<ActivationKernel> makeActivation(const ActivationDesc &d) override;
    std::unique_ptr<BatchNormKernel> makeBatchNorm(const BatchNormDesc &d) override;

    void add(const float *a, const float *b, float *y, int64_t count) override
    {
        op([=, this] { m_ref.add(a, b, y, count); });
    }
    void accumulate(float *y, const float *x, int64_t count) override
    {
        op([=, this] { m_ref.accumulate(y, x, count); });
    }
    void axpby(float *y, const float *x, int64_t count, float a, float b) override
    {
        op([=, this] { m_ref.axpby(y, x, count, a, b); });
    }
    void gatherRows(float *dst, const float *table, const int64_t *index, int64_t n,
                    int64_t rowElems) override
    {
        op([=, this] { m_ref.gatherRows(dst, table, index, n, rowElems); });
    }
    void gatherLabels(int32_t *dst, const int32_t *table, const int64_t *index, int64_t n) override
    {
        op([=, this] { m_ref.gatherLabels(dst, table, index, n); });
    }
    LossResult softmaxCrossEntropy(const float *logits, const int32_t *labels, int64_t n,
                                   int64_t classes, float *dlogits, float smoothing = 0.0f) override
    {
        if (!m_recording)
            return m_ref.softmaxCrossEntropy(logits, labels, n, classes, dlogits, smoothing);
        op([=, this] {
            m_ref.softmaxCrossEntropy(logits, labels, n, classes, dlogits, smoothing);
        });
        return {};
    }
    float mse(const float *pred, const float *target, int64_t count, float *dpred) override
    {
        refuse("a loss read on the host");
        return m_ref.mse(pred, target, count, dpred);
    }
    void dropoutForward(const float *x, float *y, float *mask, int64_t count, float p,
                        uint64_t stepSeed, uint64_t salt) override
    {
        if (!m_recording) return m_ref.dropoutForward(x, y, mask, count, p, stepSeed, salt);
        checkValues(m_values.lr, m_values.optimizerStep, stepSeed);
        m_ops.push_back([=, this] {
            m_ref.dropoutForward(x, y, mask, count, p, m_bake ? stepSeed : m_values.seed, salt);
        });
    }
    void dropoutBackward(const float *dy, const float *mask, float *dx, int64_t count) override
    {
        op([=, this] { m_ref.dropoutBackward(dy, mask, dx, count); });
    }
    void sgdStep(float *w, const float *g, float *buf, int64_t count, const SgdParams &p,
                 int64_t step) override
    {
        sgdSteps({ParamSlot{w, g, buf, nullptr, count}}, p, step);
    }
    void adamStep(float *w, const float *g, float *m, float *v, int64_t count, const AdamParams &p,
                  int64_t step) override
    {
        adamSteps({ParamSlot{w, g, m, v, count}}, p, step);
    }
    void sgdSteps(const std::vector<ParamSlot> &group, const SgdParams &p, int64_t step) override
    {
        if (!m_recording) return m_ref.sgdSteps(group, p, step);
        checkValues(p.lr, step, m_values.seed);
        m_ops.push_back([=, this] {
            SgdParams q = p;
            if (!m_bake) q.lr = m_values.lr;
            m_ref.sgdSteps(group, q, m_bake ? step : m_values.optimizerStep);
        });
    }
    void adamSteps(const std::vector<ParamSlot> &group, const AdamParams &p, int64_t step) override
    {
        if (!m_recording) return m_ref.adamSteps(group, p, step);
        checkValues(p.lr, step, m_values.seed);
        m_ops.push_back([=, this] {
            AdamParams q = p;
            if (!m_bake) q.lr = m_values.lr;
            m_ref.adamSteps(group, q, m_bake ? step : m_values.optimizerStep);
        });
    }

    bool canCapture() const override { return capture; }
    void setStepValues(const StepValues &v) override
    {
        refuse("setting step values");
        m_values = v;
        ++valuesSet;
        if (v.optimizerStep > m_newestStep) {
            m_newestStep = v.optimizerStep;
            if (onNewStep) onNewStep(v.optimizerStep);
        }
    }
    void beginCapture() override
    {
        if (m_refuse) throw DeviceError("operation not permitted when stream is capturing");
        m_recording = true;
        m_ops.clear();
    }
    std::unique_ptr<CapturedWork> endCapture() override
    {
        m_recording = false;
        ++captures;
        return std::make_unique<Recorded>(std::move(m_ops));
    }
    void abortCapture() noexcept override
    {
        m_recording = false;
        m_ops.clear();
    }
    LossResult latestLoss() override { return m_ref.latestLoss(); }
    // As a GPU's: the result is the step's (the copy is queued right after it), and waiting for
    // it may come after the next step was queued.
    std::unique_ptr<PendingLoss> readLatestLoss() override
    {
        class Later final : public PendingLoss {
        public:
            Later(RecordingBackend &b, LossResult r)
                : m_b(b)
                , m_r(r)
                , m_asked(b.valuesSet)
            {}
            LossResult wait() override
            {
                if (m_b.valuesSet > m_asked) ++m_b.overlappedReads;
                return m_r;
            }

        private:
            RecordingBackend &m_b;
            LossResult m_r;
            int64_t m_asked;
        };
        refuse("downloading");
        return std::make_unique<Later>(*this, m_ref.latestLoss());
    }

private:
    // As the CUDA backend: a captured op must be called with the values set for the step.
    void checkValues(float lr, int64_t step, uint64_t seed) const
    {
        if (m_recording &&
            (lr != m_values.lr || step != m_values.optimizerStep || seed != m_values.seed))
            throw DeviceError("an op was captured with values other than the step's");
    }

    ReferenceBackend m_ref;
    bool m_bake, m_refuse;
    bool m_recording = false;
    std::vector<std::function<void()>> m_ops;
    StepValues m_values;
    int64_t m_newestStep = 0;
};

// Convolutions and linear layers share one calling convention (backend.h).
template <class Kernel> class RecWeighted final : public Kernel {
public:
    RecWeighted(RecordingBackend &b, std::unique_ptr<Kernel> k)
        : m_b(b)
        , m_k(std::move(k))
    {}
    void forward(const float *x, const float *w, const float *bias, float *y) override
    {
        m_b.op([=, k = m_k.get()] { k->forward(x, w, bias, y); });
    }
    void backwardData(const float *dy, const float *w, float *dx) override
    {
        m_b.op([=, k = m_k.get()] { k->backwardData(dy, w, dx); });
    }
    void backwardWeights(const float *x, const float *dy, float *dw, float *db) override
    {
        m_b.op([=, k = m_k.get()] { k->backwardWeights(x, dy, dw, db); });
    }

private:
    RecordingBackend &m_b;
    std::unique_ptr<Kernel> m_k;
};

class RecPool final : public PoolKernel {
public:
    RecPool(RecordingBackend &b, std::unique_ptr<PoolKernel> k)
        : m_b(b)
        , m_k(std::move(k))
    {}
    void forward(const float *x, float *y) override
    {
        m_b.op([=, k = m_k.get()] { k->forward(x, y); });
    }
    void backward(const float *dy, float *dx) override
    {
        m_b.op([=, k = m_k.get()] { k->backward(dy, dx); });
    }

private:
    RecordingBackend &m_b;
    std::unique_ptr<PoolKernel> m_k;
};

class RecActivation final : public ActivationKernel {
public:
    RecActivation(RecordingBackend &b, std::unique_ptr<ActivationKernel> k)
        : m_b(b)
        , m_k(std::move(k))
    {}
    void forward(const float *x, float *y) override
    {
        m_b.op([=, k = m_k.get()] { k->forward(x, y); });
    }
    void backward(const float *x, const float *dy, float *dx) override
    {
        m_b.op([=, k = m_k.get()] { k->backward(x, dy, dx); });
    }

private:
    RecordingBackend &m_b;
    std::unique_ptr<ActivationKernel> m_k;
};

class RecBatchNorm final : public BatchNormKernel {
public:
    RecBatchNorm(RecordingBackend &b, std::unique_ptr<BatchNormKernel> k)
        : m_b(b)
        , m_k(std::move(k))
    {}
    void forwardTraining(const float *x, const float *gamma, const float *beta, float *y,
                         float *mean, float *var) override
    {
        m_b.op([=, k = m_k.get()] { k->forwardTraining(x, gamma, beta, y, mean, var); });
    }
    void forwardInference(const float *x, const float *gamma, const float *beta, const float *mean,
                          const float *var, float *y) override
    {
        m_b.op([=, k = m_k.get()] { k->forwardInference(x, gamma, beta, mean, var, y); });
    }
    void backward(const float *x, const float *dy, const float *gamma, const float *mean,
                  const float *var, float *dx, float *dgamma, float *dbeta) override
    {
        m_b.op([=, k = m_k.get()] { k->backward(x, dy, gamma, mean, var, dx, dgamma, dbeta); });
    }

private:
    RecordingBackend &m_b;
    std::unique_ptr<BatchNormKernel> m_k;
};

std::unique_ptr<ConvKernel> RecordingBackend::makeConv(const ConvDesc &d)
{
    refuse("making a kernel");
    return std::make_unique<RecWeighted<ConvKernel>>(*this, m_ref.makeConv(d));
}
std::unique_ptr<LinearKernel> RecordingBackend::makeLinear(const LinearDesc &d)
{
    refuse("making a kernel");
    return std::make_unique<RecWeighted<LinearKernel>>(*this, m_ref.makeLinear(d));
}
std::unique_ptr<PoolKernel> RecordingBackend::makePool(const PoolDesc &d)
{
    refuse("making a kernel");
    return std::make_unique<RecPool>(*this, m_ref.makePool(d));
}
std::unique_ptr<ActivationKernel> RecordingBackend::makeActivation(const ActivationDesc &d)
{
    refuse("making a kernel");
    return std::make_unique<RecActivation>(*this, m_ref.makeActivation(d));
}
std::unique_ptr<BatchNormKernel> RecordingBackend::makeBatchNorm(const BatchNormDesc &d)
{
    refuse("making a kernel");
    return std::make_unique<RecBatchNorm>(*this, m_ref.makeBatchNorm(d));
}

// conv -> batch norm -> relu -> max pool -> flatten -> dropout -> linear: every kind of state a
// step touches (weights, running statistics, dropout masks, optimizer moments).
// Batch norm straight on the input: its backward has no input gradient to write.
nn::Model makeInputNormModel()
{
    nn::Model m;
    m.setInput("input");
    if (!m.addLayer("bn", nn::makeBatchNorm2d(1e-5f, 0.1f), {"input"}).ok() ||
        !m.addLayer("flat", nn::makeFlatten(), {"bn"}).ok() ||
        !m.addLayer("fc", nn::makeLinear(5, true), {"flat"}).ok() || !m.setOutput("fc").ok() ||
        !m.compile({2, 6, 6}).ok())
        qFatal("model does not compile");
    m.initialize(8);
    return m;
}

nn::Model makeModel()
{
    nn::Model m;
    m.setInput("input");
    auto add = [&m](const char *id, std::unique_ptr<nn::Layer> l, const char *in) {
        const Status s = m.addLayer(id, std::move(l), {in});
        if (!s.ok()) qFatal("%s", s.error().message.c_str());
    };
    add("conv", nn::makeConv2d(4, 3, 1, 1, true), "input");
    add("bn", nn::makeBatchNorm2d(1e-5f, 0.1f), "conv");
    add("relu", nn::makeActivation(Activation::Relu), "bn");
    add("pool", nn::makePool2d(PoolKind::Max, 2, 0, 0), "relu");
    add("flat", nn::makeFlatten(), "pool");
    add("drop", nn::makeDropout(0.25f), "flat");
    add("fc", nn::makeLinear(5, true), "drop");
    if (!m.setOutput("fc").ok() || !m.compile({2, 6, 6}).ok()) qFatal("model does not compile");
    m.initialize(7);
    return m;
}

struct Trajectory {
    std::vector<float> losses;
    std::vector<int64_t> correct;
    std::vector<std::vector<float>> weights; // every parameter after the last step
    int64_t optimizerSteps = 0;
    int64_t replays = 0;
    std::string note;
    std::vector<std::string> fallbacks; // what TrainStep gave the run log to warn about
};

// Batch sizes in the order a run meets them: full batches and a smaller remainder, each size
// first run uncaptured, then recorded, then replayed.
const std::vector<int64_t> kSizes{6, 6, 6, 4, 6, 4, 4, 6, 6, 4, 6};

Trajectory train(Backend &backend, bool adam, bool mseLoss = false, bool inputNorm = false)
{
    nn::Model model = inputNorm ? makeInputNormModel() : makeModel();
    std::unique_ptr<nn::Loss> loss = mseLoss ? nn::makeMse() : nn::makeCrossEntropy();
    std::unique_ptr<nn::Optimizer> opt =
        adam ? nn::makeAdam(AdamParams{1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, true})
             : nn::makeSgd(SgdParams{0.1f, 0.9f, 0.0f, 1e-4f, true});
    opt->attach(model.parameters());
    model.moveTo(backend);
    opt->moveTo(backend);
    exec::TrainStep step(backend, model, *loss, *opt, true);
    Trajectory t;
    Rng rng(99);
    for (size_t s = 0; s < kSizes.size(); ++s) {
        const int64_t n = kSizes[s];
        data::Batch b;
        b.x = backend.empty({n, 2, 6, 6});
        b.y = backend.empty({n}, DType::I32);
        for (int64_t i = 0; i < b.x.numel(); ++i)
            b.x.f32()[i] = rng.uniform(-1.0f, 1.0f);
        for (int64_t i = 0; i < n; ++i)
            b.y.data<int32_t>()[i] = int32_t(rng.next() % 5);
        // A learning rate that changes every step, as a schedule's does.
        const float lr = 0.05f / float(s + 1);
        const LossResult r = step.run(b, lr, mix64(1000 + s));
        t.losses.push_back(r.loss);
        t.correct.push_back(r.correct);
        if (std::string why = step.takeFallback(); !why.empty()) t.fallbacks.push_back(why);
    }
    for (const auto &p : model.parameters()) {
        const Tensor w = backend.toHost(p.param->value);
        t.weights.emplace_back(w.f32(), w.f32() + w.numel());
    }
    for (const auto &[name, buffer] : model.buffers()) {
        const Tensor w = backend.toHost(buffer);
        t.weights.emplace_back(w.f32(), w.f32() + w.numel());
    }
    t.optimizerSteps = opt->steps();
    t.replays = step.replays();
    t.note = step.note();
    return t;
}

bool same(const Trajectory &a, const Trajectory &b)
{
    return a.losses == b.losses && a.correct == b.correct && a.weights == b.weights &&
           a.optimizerSteps == b.optimizerSteps;
}

// What a whole run said and wrote, to compare two runs.
struct RunRecord : exec::RunObserver {
    std::vector<std::string> events;     // epochs, checkpoints and command answers, in order
    std::map<QString, QByteArray> files; // every .safetensors written, by path under the output
    std::string error;
    int64_t overlappedReads = 0;

    void epochFinished(const exec::EpochResult &e) override
    {
        char text[200];
        std::snprintf(text, sizeof text, "epoch %lld: train %a %a, test %a %a", (long long)e.epoch,
                      double(e.trainLoss), double(e.trainAccuracy),
                      double(e.evaluations.at(0).loss), double(e.evaluations.at(0).accuracy));
        events.emplace_back(text);
    }
    void checkpointWritten(const exec::CheckpointInfo &c) override
    {
        events.push_back("checkpoint (" + c.reason + ") epoch " + std::to_string(c.epoch) +
                         " step " + std::to_string(c.step));
    }
    void commandHandled(const exec::CommandAck &a) override
    {
        events.push_back(a.command + (a.ok ? " ok: " : " failed: ") + a.message);
    }
};

// The MLP example on 600 samples (10 steps an epoch: 9 of 64, one of 24) for two epochs, a cosine
// schedule (a new learning rate every step), a checkpoint every 4 steps, and commands that arrive
// while steps 6, 9 and 13 are being submitted: a checkpoint, a pause and resume, a new learning
// rate. On a backend that records steps, replayed steps stay in flight in the runner.
void runWithCommands(bool capture, const QString &out, RunRecord &rec)
{
    auto doc =
        graph::loadPipeline(FLOWBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");
    if (!doc.ok()) qFatal("%s", doc.error().str().c_str());
    for (const char *setting :
         {"train_data.limit=600", "test_data.limit=200", "train.batch_size=64", "train.epochs=2",
          "train.checkpoint_steps=4", "train.checkpoint_every=1", "train.keep_checkpoints=0",
          "optimizer.schedule=cosine"})
        if (const Status st = graph::applySetting(doc.value(), setting, exec::nodeTypes()); !st.ok())
            qFatal("%s: %s", setting, st.error().str().c_str());
    RecordingBackend backend;
    backend.capture = capture;
    exec::RunControl control;
    backend.onNewStep = [&control](int64_t step) {
        using K = exec::Command::Kind;
        if (step == 6) control.post({K::Checkpoint, 0, "c"});
        if (step == 9) {
            control.post({K::Pause, 0, "p"});
            control.post({K::Resume, 0, "r"});
        }
        if (step == 13) control.post({K::SetLr, 0.02, "lr"});
    };
    exec::RunOptions options;
    options.device = "cpu";
    options.threads = 2;
    options.outDir = out.toStdString();
    options.control = &control;
    options.backend = &backend;
    auto result = exec::runPipeline(doc.value(), options, rec);
    if (!result.ok()) rec.error = result.error().str();
    rec.overlappedReads = backend.overlappedReads;
    QDirIterator it(out, {"*.safetensors"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
        rec.files[QDir(out).relativeFilePath(path)] = f.readAll();
    }
}

} // namespace

class TestStepCapture : public QObject {
    Q_OBJECT

private slots:
    void replayedStepsTrainAsUncaptured_data()
    {
        QTest::addColumn<bool>("adam");
        QTest::newRow("sgd nesterov") << false;
        QTest::newRow("adamw") << true;
    }
    void replayedStepsTrainAsUncaptured()
    {
        QFETCH(bool, adam);
        ReferenceBackend plain;
        const Trajectory a = train(plain, adam);
        QCOMPARE(a.replays, 0);
        QVERIFY2(a.note.find("no step capture") != std::string::npos, a.note.c_str());

        RecordingBackend recording;
        const Trajectory b = train(recording, adam);
        // Each size's first step runs uncaptured; every later one runs from its recording.
        QCOMPARE(recording.captures, 2);
        QCOMPARE(b.replays, int64_t(kSizes.size()) - 2);
        QVERIFY2(b.note.find("captured") != std::string::npos, b.note.c_str());
        QCOMPARE(b.optimizerSteps, int64_t(kSizes.size()));
        for (size_t s = 0; s < a.losses.size(); ++s)
            QVERIFY2(a.losses[s] == b.losses[s] && a.correct[s] == b.correct[s],
                     qPrintable(QStringLiteral("step %1: loss %2 uncaptured, %3 replayed")
                                    .arg(s + 1)
                                    .arg(a.losses[s], 0, 'g', 9)
                                    .arg(b.losses[s], 0, 'g', 9)));
        QVERIFY(same(a, b)); // weights, running statistics and step count, bit for bit
    }

    // The recording above would not notice a step that keeps the values it was captured with:
    // here the recording bakes them in, and the trajectory must differ.
    void bakedStepValuesAreNoticed()
    {
        ReferenceBackend plain;
        RecordingBackend baking(true);
        const Trajectory a = train(plain, true), b = train(baking, true);
        QVERIFY(b.replays > 0);
        QVERIFY(!same(a, b));
    }

    void refusedCaptureRunsUncaptured()
    {
        ReferenceBackend plain;
        RecordingBackend refusing(false, true);
        const Trajectory a = train(plain, false), b = train(refusing, false);
        QCOMPARE(b.replays, 0);
        // Said once, for the run log, when it happened; later steps do not try again.
        QCOMPARE(b.fallbacks.size(), size_t(1));
        QCOMPARE(b.fallbacks.front(), b.note);
        QVERIFY2(b.note.find("capturing one failed") != std::string::npos &&
                     b.note.find("operation not permitted") != std::string::npos,
                 b.note.c_str());
        QVERIFY(same(a, b));
    }

    // A step must not allocate to be captured: batch norm on the input keeps the dx it does
    // not need in a buffer made once.
    void batchNormOnTheInputIsCaptured()
    {
        ReferenceBackend plain;
        RecordingBackend recording;
        const Trajectory a = train(plain, true, false, true);
        const Trajectory b = train(recording, true, false, true);
        QVERIFY2(b.note.find("captured") != std::string::npos, b.note.c_str());
        QCOMPARE(b.replays, int64_t(kSizes.size()) - 2);
        QVERIFY(same(a, b));
    }

    void hostLossIsNotCaptured()
    {
        ReferenceBackend plain;
        RecordingBackend recording;
        const Trajectory a = train(plain, false, true), b = train(recording, false, true);
        QCOMPARE(recording.captures, 0);
        QCOMPARE(b.replays, 0);
        QVERIFY2(b.note.find("mse loss reads the model's output on the host") != std::string::npos,
                 b.note.c_str());
        QVERIFY(same(a, b));
    }

    // The runner reads a replayed step's loss while the next step is queued. Its accounting,
    // learning rates, checkpoints and commands must come out exactly as when every step is
    // waited for: the same events and the same bytes in every checkpoint and the final model.
    void runnerKeepsReplayedStepsInFlight()
    {
        QTemporaryDir dir;
        RunRecord waited, pipelined;
        runWithCommands(false, dir.path() + "/waited", waited);
        runWithCommands(true, dir.path() + "/pipelined", pipelined);
        QVERIFY2(waited.error.empty(), waited.error.c_str());
        QVERIFY2(pipelined.error.empty(), pipelined.error.c_str());
        QCOMPARE(waited.overlappedReads, 0);
        // Most replayed steps were still in flight when the next was queued (not those before a
        // checkpoint, a command or the end of an epoch).
        QVERIFY2(pipelined.overlappedReads >= 8,
                 qPrintable(QString::number(pipelined.overlappedReads)));
        // The commands acted where they were meant to.
        auto has = [&](const std::string &e) {
            return std::find(waited.events.begin(), waited.events.end(), e) != waited.events.end();
        };
        QVERIFY(has("checkpoint (command) epoch 0 step 6"));
        QVERIFY(has("pause ok: paused after step 9"));
        QVERIFY(has("set_lr ok: learning rate 0.02 from step 14"));
        QVERIFY(has("checkpoint (steps) epoch 1 step 12"));
        for (size_t i = 0; i < std::max(waited.events.size(), pipelined.events.size()); ++i) {
            const std::string a = i < waited.events.size() ? waited.events[i] : "(none)";
            const std::string b = i < pipelined.events.size() ? pipelined.events[i] : "(none)";
            QVERIFY2(a == b, qPrintable(QString("event %1: waited \"%2\", pipelined \"%3\"")
                                            .arg(i)
                                            .arg(a.c_str(), b.c_str())));
        }
        QCOMPARE(pipelined.files.size(), waited.files.size());
        QCOMPARE(waited.files.size(), size_t(8)); // 7 checkpoints and the model
        for (const auto &[path, bytes] : waited.files) {
            QVERIFY2(pipelined.files.count(path), qPrintable(path));
            QVERIFY2(pipelined.files.at(path) == bytes, qPrintable(path + " differs"));
        }
    }
};

QTEST_GUILESS_MAIN(TestStepCapture)
#include "test_step_capture.moc"
