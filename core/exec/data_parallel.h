#pragma once

#include "core/backend/backend.h"
#include "core/dist/communicator.h"
#include "core/nn/model.h"

#include <cstdint>
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
// This step's build sums the gradients after the backward pass, on CPU memory; NCCL on the GPU,
// and overlapping the sums with the backward pass, are the next ones (docs/distributed.md).
class DataParallel {
public:
    static constexpr size_t kBucketBytes = size_t(4) << 20;

    DataParallel(dist::Communicator &comm, nn::Model &model);

    dist::Communicator &comm() { return m_comm; }
    // The global batch's loss and correct count from each rank's (loss over its batch, its
    // correct count, its counted samples); globalCount gets the batch's samples. The same bits on
    // every rank: a loss that is not finite stops every rank alike.
    LossResult agreeLoss(const LossResult &local, int64_t counted, int64_t &globalCount);
    // Sums every gradient across the ranks, this rank's multiplied by `weight` (its samples over
    // the global batch's) first.
    void reduceGradients(double weight);
    // Rank 0's parameters and buffers to every rank.
    void broadcastWeights();
    // Rank 0's buffers (running statistics) to every rank.
    void broadcastBuffers();

    // What rank 0 decides between steps, for every rank: stop (a stop command, a pause's end is
    // implicit: the others wait) and a learning rate set by command (0: the schedule's).
    struct Control {
        int32_t stop = 0;
        double lrOverride = 0;
    };
    Control agree(Control rank0);
    // Rank 0's yes or no (an evaluation that only it ran), for every rank.
    bool agree(bool rank0);
    // A digest of this rank's weights and buffers (FNV-1a over their bytes, in hex), and the
    // ranks whose digest differs from rank 0's (empty when every rank holds the same model).
    std::string weightsDigest(std::vector<int> &differing);

private:
    dist::Communicator &m_comm;
    // The trainable parameters in the order the backward pass finishes them (the model's last
    // first), taken once: the model's list is made anew on every call.
    std::vector<nn::Parameter *> m_backwardOrder;
    std::vector<Tensor> m_buffers; // the model's buffers (handles to their memory)
    std::vector<float> m_bucket;
    std::vector<std::pair<Tensor *, size_t>> m_inBucket; // (gradient, its offset in m_bucket)
};

} // namespace fb::exec
