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

DataParallel::DataParallel(dist::Communicator &comm, nn::Model &model)
    : m_comm(comm)
{
    for (const nn::NamedParameter &p : model.parameters())
        m_backwardOrder.push_back(p.param);
    std::reverse(m_backwardOrder.begin(), m_backwardOrder.end());
    for (auto &[name, b] : model.buffers()) {
        FB_ASSERT(b.device().kind == Device::Kind::Cpu, "data-parallel buffers live on the CPU");
        m_buffers.push_back(b);
    }
    m_bucket.reserve(kBucketBytes / sizeof(float));
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

void DataParallel::reduceGradients(double weight)
{
    const size_t capacity = kBucketBytes / sizeof(float);
    const float w = float(weight);
    auto flush = [&] {
        if (m_bucket.empty()) return;
        m_comm.allReduceSum(m_bucket.data(), m_bucket.size());
        for (auto &[grad, offset] : m_inBucket)
            std::memcpy(hostFloats(*grad), m_bucket.data() + offset,
                        size_t(grad->numel()) * sizeof(float));
        m_bucket.clear();
        m_inBucket.clear();
    };
    for (nn::Parameter *p : m_backwardOrder) {
        Tensor &g = p->grad;
        const size_t n = size_t(g.numel());
        if (!m_bucket.empty() && m_bucket.size() + n > capacity) flush();
        const float *src = hostFloats(g);
        const size_t offset = m_bucket.size();
        m_bucket.resize(offset + n);
        for (size_t i = 0; i < n; ++i)
            m_bucket[offset + i] = src[i] * w;
        m_inBucket.emplace_back(&g, offset);
    }
    flush();
}

void DataParallel::broadcastWeights()
{
    for (nn::Parameter *p : m_backwardOrder)
        m_comm.broadcast(hostFloats(p->value), size_t(p->value.bytes()), 0);
    broadcastBuffers();
}

void DataParallel::broadcastBuffers()
{
    for (Tensor &b : m_buffers)
        m_comm.broadcast(b.raw(), size_t(b.bytes()), 0);
}

DataParallel::Control DataParallel::agree(Control rank0)
{
    m_comm.broadcast(&rank0, sizeof rank0, 0);
    return rank0;
}

std::string DataParallel::weightsDigest(std::vector<int> &differing)
{
    uint64_t h = kFnv1aStart;
    for (nn::Parameter *p : m_backwardOrder)
        h = fnv1a(p->value.raw(), p->value.bytes(), h);
    for (const Tensor &b : m_buffers)
        h = fnv1a(b.raw(), b.bytes(), h);
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
