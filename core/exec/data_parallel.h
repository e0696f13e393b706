#pragma once

#include "core/backend/backend.h"
#include "core/dist/communicator.h"
#include "core/nn/model.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fb::exec {

// What keeps the ranks of a data-parallel job one model (PyTorch DDP's design, for a static
// graph): they start from rank 0's weights; each step, each rank trains on its share of the
// global batch, and the gradients are summed across ranks, each rank's weighed by its share of
// the samples, so that the update is the one a single process would make on the whole batch (up
// to the order of float sums). The sums go in buckets of about kBucketBytes, in the order the
// backward pass finishes them (the last layer first). Batch norm's running statistics, which
// training never reads (it normalizes by each batch's own), follow rank 0's at the end of every
// epoch, before the ranks compare their models; only rank 0 evaluates and writes them.
//
// On the CPU the sums go through MPI, in host memory, and overlap the backward pass: a bucket
// starts summing as soon as its gradients are final, and MPI moves it on at every later layer's
// end. On GPUs they go through NCCL (dist::DeviceCollectives), queued on the backend's stream
// after the backward pass's kernels, one NCCL group per bucket, in place: the host never waits
// for them. Host-side agreements (the loss, the controls) stay on MPI.
class DataParallel {
public:
    static constexpr size_t kBucketBytes = size_t(4) << 20;
    static constexpr size_t kFirstBucketBytes = size_t(1) << 20;

    // `device`: NCCL between the ranks' GPUs, for a model on a GPU backend (null on the CPU).
    DataParallel(dist::Communicator &comm, nn::Model &model, Backend &backend,
                 std::unique_ptr<dist::DeviceCollectives> device = nullptr);

    dist::Communicator &comm() { return m_comm; }
    // Seconds in collectives so far, host (MPI) and device (NCCL, finished ones) together.
    double commSeconds();
    // The global batch's loss and correct count from each rank's (loss over its batch, its
    // correct count, its counted samples); globalCount gets the batch's samples. The same bits on
    // every rank: a loss that is not finite stops every rank alike.
    LossResult agreeLoss(const LossResult &local, int64_t counted, int64_t &globalCount);
    // Sums every gradient across the ranks, this rank's multiplied by `weight` (its samples over
    // the global batch's) first: beginGradients before the backward pass, layerDone as each node's
    // backward pass ends (Plan::backward's callback: a bucket whose gradients are all final
    // starts summing while the earlier layers compute), finishGradients after it.
    void beginGradients(double weight);
    void layerDone(const std::string &node);
    void finishGradients();
    // Rank 0's parameters and buffers to every rank.
    void broadcastWeights();
    // Rank 0's buffers (running statistics) to every rank.
    void broadcastBuffers();

    // What rank 0 decides between steps, for every rank: stop (a stop command, a pause's end is
    // implicit: the others wait), a learning rate set by command (0: the schedule's), and held:
    // rank 0 did other work since the last step (a command, a pause, a checkpoint, an
    // evaluation), so the others' wait for it is not training time.
    struct Control {
        bool stop = false;
        bool held = false;
        double lrOverride = 0;
    };
    // Each rank's totals over its training time, exchanged in the same collective, so that rank 0
    // can report every rank's throughput and who waited on whom.
    struct RankTimes {
        double computeSeconds = 0; // training time outside collectives
        double commSeconds = 0;    // in collectives, waiting for the other ranks included
        double samples = 0;        // its own samples (its shares of the global batches)
    };
    // Rank 0's control to every rank, and every rank's times to every rank (`all`, by rank).
    Control agree(const Control &rank0, const RankTimes &mine, std::vector<RankTimes> &all);
    // Rank 0's yes or no (an evaluation that only it ran), for every rank.
    bool agree(bool rank0);
    // A digest of this rank's weights and buffers (FNV-1a over their bytes, in hex), and the
    // ranks whose digest differs from rank 0's (empty when every rank holds the same model).
    std::string weightsDigest(std::vector<int> &differing);

private:
    // Runs a device collective; its failure becomes a DeviceError naming nothing (the runner
    // names the train node).
    template <typename F> void onDevice(F &&call);

    dist::Communicator &m_comm;
    Backend &m_backend;
    std::unique_ptr<dist::DeviceCollectives> m_device;
    // Starts bucket m_next's sum (its gradients scaled into its buffer).
    void launchNext();
    // The GPU's sums, queued after the backward pass.
    void finishOnDevice();

    // The trainable parameters in the order the backward pass finishes them (the model's last
    // first), taken once: the model's list is made anew on every call.
    std::vector<nn::Parameter *> m_backwardOrder;
    std::vector<Tensor> m_buffers; // the model's buffers (handles to their memory)
    // The buckets, in backward order: the first holds about kFirstBucketBytes, so that it is
    // ready early in the backward pass, the others about kBucketBytes (PyTorch DDP's choice).
    // A bucket is ready once the node of its last gradient is done.
    struct Bucket {
        std::vector<std::pair<Tensor *, size_t>> grads; // (gradient, its offset in the bucket)
        size_t count = 0;                               // floats in all
        std::vector<float> data; // the CPU's copy, summed by MPI (empty on a GPU)
        std::string lastNode;
        std::unique_ptr<dist::Communicator::Pending> pending;
    };
    std::vector<Bucket> m_buckets;
    size_t m_next = 0; // the next bucket to start this step
    float m_weight = 1;
    std::vector<double> m_exchange;                      // agree's control and per-rank times
};

} // namespace fb::exec
