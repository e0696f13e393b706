#include "core/exec/train_step.h"

#include "core/base/check.h"
#include "core/exec/data_parallel.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fb::exec {

namespace {

// Each recording keeps its own batch buffers; an epoch has at most two sizes (the full batch and
// the remainder), evaluation runs uncaptured, so a few cover every run.
constexpr size_t kMaxRecordings = 4;

} // namespace

TrainStep::TrainStep(Backend &backend, nn::Model &model, nn::Loss &loss, nn::Optimizer &optimizer,
                     bool allowCapture, DataParallel *dp)
    : m_backend(backend)
    , m_model(model)
    , m_loss(loss)
    , m_optimizer(optimizer)
    , m_dp(dp)
{
    if (dp)
        m_note = "training steps run one op at a time, the gradients summed across " +
                 std::to_string(dp->comm().size()) + " ranks as the backward pass goes";
    else if (!backend.canCapture())
        m_note = "training steps run one op at a time (the " + backend.name() +
                 " backend has no step capture)";
    else if (!loss.capturable())
        m_note = "training steps run one op at a time: the " + loss.type() +
                 " loss reads the model's output on the host, which a CUDA graph cannot";
    else if (!allowCapture)
        m_note = "training steps run one op at a time (capture is off for this run)";
    else {
        m_capture = true;
        m_note = "training steps are captured as CUDA graphs and replayed";
    }
}

TrainStep::~TrainStep() = default;

LossResult TrainStep::run(const data::Batch &batch, float lr, uint64_t seed)
{
    submit(batch, lr, seed);
    return finish();
}

LossResult TrainStep::finish()
{
    FB_ASSERT(!m_pending.empty(), "TrainStep::finish with no step submitted");
    Pending p = std::move(m_pending.front());
    m_pending.pop_front();
    return p.later ? p.later->wait() : p.known;
}

void TrainStep::submit(const data::Batch &batch, float lr, uint64_t seed)
{
    if (m_pending.size() >= 2)
        throw std::logic_error("TrainStep::submit with two steps unfinished");
    const int64_t n = batch.x.shape()[0];
    m_counted = batch.padding ? 0 : n;
    nn::Plan &plan = m_model.plan(m_backend, n, true);
    const StepValues values{lr, m_optimizer.steps() + 1, seed};
    if (m_capture) {
        auto found = m_recordings.find(n);
        // A plan made again (never within a run today) has new buffers: record it afresh.
        if (found != m_recordings.end() && found->second.plan != &plan) {
            m_recordings.erase(found);
            found = m_recordings.end();
        }
        Recording *r = found != m_recordings.end() ? &found->second : nullptr;
        if (!r && m_warm.count(n) && m_recordings.size() < kMaxRecordings)
            r = record(plan, batch, values);
        if (r) {
            replay(*r, batch, values);
            m_pending.push_back({{}, m_backend.readLatestLoss()});
            return;
        }
        m_warm.insert(n);
    }
    m_backend.setStepValues(values);
    m_pending.push_back({queue(plan, batch.x, batch.y, values, true), nullptr});
}

LossResult TrainStep::queue(nn::Plan &plan, const Tensor &x, const Tensor &y, const StepValues &v,
                            bool stopOnBadLoss)
{
    nn::StepContext ctx;
    ctx.training = true;
    ctx.seed = v.seed;
    const Tensor &out = plan.forward(x, ctx);
    LossResult r = m_loss.compute(m_backend, out, y, &plan.outputGrad());
    if (m_dp) {
        int64_t global = 0;
        r = m_dp->agreeLoss(r, m_counted, global);
        if (stopOnBadLoss && !std::isfinite(r.loss)) return r;
        m_dp->beginGradients(double(m_counted) / double(std::max<int64_t>(global, 1)));
        plan.backward(ctx, [this](const std::string &node) { m_dp->layerDone(node); });
        m_dp->finishGradients();
        m_optimizer.step(m_backend, v.lr);
        return r;
    }
    if (stopOnBadLoss && !std::isfinite(r.loss)) return r;
    plan.backward(ctx);
    m_optimizer.step(m_backend, v.lr);
    return r;
}

TrainStep::Recording *TrainStep::record(nn::Plan &plan, const data::Batch &batch,
                                        const StepValues &v)
{
    // Allocated before the capture: nothing inside it may allocate.
    Recording r;
    r.plan = &plan;
    r.x = m_backend.empty(batch.x.shape(), batch.x.dtype());
    r.y = m_backend.empty(batch.y.shape(), batch.y.dtype());
    m_backend.setStepValues(v);
    const int64_t stepsBefore = m_optimizer.steps();
    try {
        m_backend.beginCapture();
        queue(plan, r.x, r.y, v, false);
        r.work = m_backend.endCapture();
    } catch (const DeviceError &e) {
        m_backend.abortCapture();
        m_optimizer.setSteps(stepsBefore);
        m_capture = false;
        m_note = std::string("training steps run one op at a time: capturing one failed (") +
                 e.what() + ")";
        m_fallback = m_note;
        return nullptr;
    } catch (...) {
        m_backend.abortCapture();
        m_optimizer.setSteps(stepsBefore);
        throw;
    }
    // The capture counted an update that has not run yet: the replay that follows makes it.
    m_optimizer.setSteps(stepsBefore);
    return &(m_recordings[batch.x.shape()[0]] = std::move(r));
}

void TrainStep::replay(Recording &r, const data::Batch &batch, const StepValues &v)
{
    m_backend.copy(r.x.raw(), batch.x.raw(), batch.x.bytes());
    m_backend.copy(r.y.raw(), batch.y.raw(), batch.y.bytes());
    m_backend.setStepValues(v);
    r.work->replay();
    m_optimizer.setSteps(v.optimizerStep);
    ++m_replays;
}

} // namespace fb::exec
