#include "core/exec/data_parallel.h"

#include "core/base/bytes.h"
#include "core/base/check.h"

#include <algorithm>
#include <cstring>

namespace fb::exec {

namespace {

// The host memory of a tensor of this build's data-parallel path (CPU tensors).
float *hostFloats(Tensor &t)
{
    FB_ASSERT(t.device().kind == Device::Kind::Cpu, "data-parallel tensors live on the CPU");
    return t.f32();
}

} // namespace

DataParallel::DataParallel(dist::Communicator &comm, nn::Model &model, Backend &backend,
                           std::unique_ptr<dist::DeviceCollectives> device)
    : m_comm(comm)
    , m_backend(backend)
    , m_device(std::move(device))
{
    const bool onCpu = backend.device().kind == Device::Kind::Cpu;
    FB_ASSERT(onCpu || m_device, "a data-parallel model on a GPU needs NCCL");
    std::vector<nn::NamedParameter> params = model.parameters();
    std::reverse(params.begin(), params.end());
    for (const nn::NamedParameter &p : params)
        m_backwardOrder.push_back(p.param);
    for (auto &[name, b] : model.buffers())
        m_buffers.push_back(b);
    // The buckets, filled in backward order; a bucket closes once it holds its capacity (DDP's
    // rule), so a large gradient closes the bucket it lands in. "conv1.weight" belongs to node
    // "conv1". On a GPU the sums run in place: no copy in host memory.
    for (const nn::NamedParameter &p : params) {
        if (m_buckets.empty() || m_buckets.back().count * sizeof(float) >=
                                     (m_buckets.size() == 1 ? kFirstBucketBytes : kBucketBytes))
            m_buckets.emplace_back();
        Bucket &b = m_buckets.back();
        // The gradient is made by the training plan, later, in the value's shape.
        b.grads.emplace_back(&p.param->grad, b.count);
        b.count += size_t(p.param->value.numel());
        b.lastNode = p.name.substr(0, p.name.rfind('.'));
    }
    if (!m_device)
        for (Bucket &b : m_buckets)
            b.data.resize(b.count);
}

template <typename F> void DataParallel::onDevice(F &&call)
{
    try {
        call();
    } catch (const DeviceError &) {
        throw;
    } catch (const std::runtime_error &e) {
        throw DeviceError(e.what());
    }
}

double DataParallel::commSeconds()
{
    return m_comm.seconds() + (m_device ? m_device->seconds() : 0.0);
}

LossResult DataParallel::agreeLoss(const LossResult &local, int64_t counted, int64_t &globalCount)
{
    // Doubles: exact sums of counts, and one rounding of the loss.
    double v[3] = {double(local.loss) * double(counted), counted > 0 ? double(local.correct) : 0.0,
                   double(counted)};
    m_comm.allReduceSum(v, 3);
    globalCount = int64_t(v[2]);
    LossResult r;
    r.loss = float(v[0] / std::max(v[2], 1.0));
    r.correct = int64_t(v[1]);
    return r;
}

void DataParallel::beginGradients(double weight)
{
    m_weight = float(weight);
    m_next = 0;
}

void DataParallel::launchNext()
{
    Bucket &b = m_buckets[m_next++];
    for (auto &[grad, offset] : b.grads) {
        const float *src = hostFloats(*grad);
        float *dst = b.data.data() + offset;
        for (int64_t i = 0, n = grad->numel(); i < n; ++i)
            dst[i] = src[i] * m_weight;
    }
    b.pending = m_comm.startAllReduceSum(b.data.data(), b.data.size());
}

void DataParallel::layerDone(const std::string &node)
{
    if (m_device) return; // NCCL's sums follow the backward pass on the stream (finishGradients)
    while (m_next < m_buckets.size() && m_buckets[m_next].lastNode == node)
        launchNext();
    // MPI moves the started sums on only inside its calls: one per layer.
    for (size_t i = 0; i < m_next; ++i)
        if (m_buckets[i].pending && m_comm.test(*m_buckets[i].pending))
            m_buckets[i].pending.reset();
}

void DataParallel::finishGradients()
{
    if (m_device) return finishOnDevice();
    while (m_next < m_buckets.size())
        launchNext();
    for (Bucket &b : m_buckets) {
        if (b.pending) m_comm.wait(*b.pending);
        b.pending.reset();
        for (auto &[grad, offset] : b.grads)
            std::memcpy(hostFloats(*grad), b.data.data() + offset,
                        size_t(grad->numel()) * sizeof(float));
    }
}

void DataParallel::finishOnDevice()
{
    // In place on the GPU, after the whole backward pass (on one stream the sums could not run
    // beside the backward kernels anyway): each gradient scaled by this rank's share, then one
    // NCCL group per bucket, in backward order.
    onDevice([&] {
        for (Bucket &b : m_buckets) {
            m_device->groupStart();
            for (auto &[grad, offset] : b.grads) {
                m_backend.axpby(grad->f32(), grad->f32(), grad->numel(), m_weight, 0.0f);
                m_device->allReduceSum(grad->f32(), size_t(grad->numel()));
            }
            m_device->groupEnd();
        }
    });
}

void DataParallel::broadcastWeights()
{
    if (m_device) {
        onDevice([&] {
            m_device->groupStart();
            for (nn::Parameter *p : m_backwardOrder)
                m_device->broadcast(p->value.raw(), size_t(p->value.bytes()), 0);
            m_device->groupEnd();
        });
    } else {
        for (nn::Parameter *p : m_backwardOrder)
            m_comm.broadcast(hostFloats(p->value), size_t(p->value.bytes()), 0);
    }
    broadcastBuffers();
}

void DataParallel::broadcastBuffers()
{
    if (m_device) {
        if (m_buffers.empty()) return;
        onDevice([&] {
            m_device->groupStart();
            for (Tensor &b : m_buffers)
                m_device->broadcast(b.raw(), size_t(b.bytes()), 0);
            m_device->groupEnd();
        });
        return;
    }
    for (Tensor &b : m_buffers)
        m_comm.broadcast(b.raw(), size_t(b.bytes()), 0);
}

DataParallel::Control DataParallel::agree(const Control &rank0, const RankTimes &mine,
                                          std::vector<RankTimes> &all)
{
    // One sum of doubles carries both: rank 0 alone fills the control slots and each rank its
    // own three, so every sum adds zeros to one value and is exact.
    constexpr size_t kControl = 3, kPerRank = 3;
    const size_t ranks = size_t(m_comm.size()), me = size_t(m_comm.rank());
    m_exchange.assign(kControl + kPerRank * ranks, 0.0);
    if (me == 0) {
        m_exchange[0] = rank0.stop ? 1 : 0;
        m_exchange[1] = rank0.held ? 1 : 0;
        m_exchange[2] = rank0.lrOverride;
    }
    double *slot = m_exchange.data() + kControl + kPerRank * me;
    slot[0] = mine.computeSeconds;
    slot[1] = mine.commSeconds;
    slot[2] = mine.samples;
    m_comm.allReduceSum(m_exchange.data(), m_exchange.size());
    all.resize(ranks);
    for (size_t r = 0; r < ranks; ++r) {
        const double *s = m_exchange.data() + kControl + kPerRank * r;
        all[r] = {s[0], s[1], s[2]};
    }
    return {m_exchange[0] != 0, m_exchange[1] != 0, m_exchange[2]};
}

std::string DataParallel::weightsDigest(std::vector<int> &differing)
{
    uint64_t h = kFnv1aStart;
    // The bytes as the host sees them (a GPU's are copied back, after the queued work).
    for (nn::Parameter *p : m_backwardOrder) {
        const Tensor host = m_backend.toHost(p->value);
        h = fnv1a(host.raw(), host.bytes(), h);
    }
    for (const Tensor &b : m_buffers) {
        const Tensor host = m_backend.toHost(b);
        h = fnv1a(host.raw(), host.bytes(), h);
    }
    uint64_t rank0 = h;
    m_comm.broadcast(&rank0, sizeof rank0, 0);
    // Which ranks differ: each marks its own slot, and the sum tells every rank.
    std::vector<double> marks(size_t(m_comm.size()), 0.0);
    marks[size_t(m_comm.rank())] = h == rank0 ? 0.0 : 1.0;
    m_comm.allReduceSum(marks.data(), marks.size());
    differing.clear();
    for (size_t r = 0; r < marks.size(); ++r)
        if (marks[r] != 0) differing.push_back(int(r));
    return hex64(h);
}

bool DataParallel::agree(bool rank0)
{
    int32_t v = rank0 ? 1 : 0;
    m_comm.broadcast(&v, sizeof v, 0);
    return v != 0;
}

} // namespace fb::exec
