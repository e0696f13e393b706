#pragma once

#include "core/data/dataflow.h"
#include "core/nn/loss.h"
#include "core/nn/optimizer.h"

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

namespace fb::exec {

class DataParallel;

// One training step of a compiled model: forward, loss, backward and the optimizer's update.
//
// On a backend that can capture (the CUDA backend: CUDA graphs), the second step of each batch
// size is recorded once, and every later step of that size replays the recording: the batch is
// copied into the buffers the recording reads, the step's learning rate, optimizer step and
// dropout seed go through Backend::setStepValues, and the loss is read after the replay. The
// first step of a size runs uncaptured: it makes the plan, chooses the kernels and uploads the
// optimizer's tables, so nothing inside the recording allocates or copies from the host. A
// capture that fails (a library call that cannot be captured) leaves every later step uncaptured,
// with the reason in note(); the run goes on.
//
// A replayed step's loss is read back without waiting (Backend::readLatestLoss): submit() queues
// the step and returns, so the host can fetch and queue the next batch while the device computes,
// and finish() gives the results in order. An uncaptured step waits for its loss as it runs (it
// must stop before the update on a loss that is not finite), so its result is ready().
class TrainStep {
public:
    // allowCapture false keeps every step uncaptured (profiling times each layer on the host).
    // With dp (a data-parallel job), every step agrees on the loss and sums the gradients
    // across the ranks before the update (core/exec/data_parallel.h); such steps are not
    // captured.
    TrainStep(Backend &backend, nn::Model &model, nn::Loss &loss, nn::Optimizer &optimizer,
              bool allowCapture, DataParallel *dp = nullptr);
    ~TrainStep();
    TrainStep(const TrainStep &) = delete;
    TrainStep &operator=(const TrainStep &) = delete;

    // Queues training on one batch in the backend's memory at learning rate lr, with the step's
    // dropout seed. In a data-parallel job the result is the global batch's. An uncaptured step
    // stops after the loss when the loss is not finite, leaving the weights as they were; a
    // replayed step has updated them by the time its loss is known (the run ends on such a loss
    // either way). At most two steps may be submitted and not finished. Throws DeviceError as the
    // ops do.
    void submit(const data::Batch &batch, float lr, uint64_t seed);
    // Submitted steps whose results finish() has not given yet.
    int inFlight() const { return int(m_pending.size()); }
    // Whether the oldest submitted step's result is known without waiting for the device.
    bool ready() const { return !m_pending.empty() && !m_pending.front().later; }
    // The oldest submitted step's result, waiting for the device if need be.
    LossResult finish();
    // submit() then finish(): one step, waited for.
    LossResult run(const data::Batch &batch, float lr, uint64_t seed);

    // For the run log: whether steps are captured, or why not.
    const std::string &note() const { return m_note; }
    // Why capturing a step failed, once, after the run() in which it did ("" otherwise): the
    // run log's warning that steps went back to running op by op.
    std::string takeFallback() { return std::exchange(m_fallback, std::string()); }
    // Steps run from a recording so far.
    int64_t replays() const { return m_replays; }

private:
    struct Recording {
        const nn::Plan *plan = nullptr; // whose buffers and kernels the recorded work uses
        Tensor x, y;                    // the batch buffers the recorded work reads
        std::unique_ptr<CapturedWork> work;
    };
    // Queues forward, loss, backward and update on x and y. With stopOnBadLoss, returns right
    // after a loss that is not finite.
    LossResult queue(nn::Plan &plan, const Tensor &x, const Tensor &y, const StepValues &v,
                     bool stopOnBadLoss);
    // Records the step for this batch size; null (and capture off) when the backend refuses.
    Recording *record(nn::Plan &plan, const data::Batch &batch, const StepValues &v);
    void replay(Recording &r, const data::Batch &batch, const StepValues &v);
    struct Pending {
        LossResult known;                   // an uncaptured step's result
        std::unique_ptr<PendingLoss> later; // a replayed step's, still on its way
    };

    Backend &m_backend;
    nn::Model &m_model;
    nn::Loss &m_loss;
    nn::Optimizer &m_optimizer;
    DataParallel *m_dp = nullptr;
    int64_t m_counted = 0; // the submitted batch's samples that count (a padding batch's: 0)
    bool m_capture = false;
    std::string m_note;
    std::string m_fallback;
    std::set<int64_t> m_warm; // batch sizes that have run uncaptured once
    std::map<int64_t, Recording> m_recordings;
    int64_t m_replays = 0;
    std::deque<Pending> m_pending;
};

} // namespace fb::exec
