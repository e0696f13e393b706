#include "core/exec/device_feed.h"

#include "core/base/bytes.h"

#include <algorithm>

namespace fb::exec {

namespace {

// Keep at most this share of a GPU's memory for a resident data set: plans, workspaces and the
// caching allocator's slack need the rest.
constexpr double kResidentShare = 0.4;

} // namespace

DeviceFeed::DeviceFeed(Backend &backend, const data::DataFlow &flow, bool allowResident)
    : m_backend(backend)
    , m_flow(flow)
    , m_onHost(backend.device().kind == Device::Kind::Cpu)
{
    if (m_onHost) return;
    if (!allowResident) {
        m_note = "the training data is copied to " + backend.device().str() + " batch by batch";
        return;
    }
    const data::FlowStats stats = flow.stats();
    bool random = false;
    for (const auto &s : stats.stages)
        random = random || s.random;
    const int64_t count = flow.dataset().count;
    const int64_t bytes = count * flow.sampleShape().numel() * int64_t(sizeof(float)) +
                          count * int64_t(sizeof(int32_t));
    int64_t memory = 0;
    for (const auto &d : listDevices().devices)
        if (d.device == backend.device()) memory = d.memoryBytes;
    if (random) {
        m_note = "the training data is copied to " + backend.device().str() +
                 " batch by batch: its chain has random stages, so every epoch differs";
    } else if (double(bytes) > kResidentShare * double(memory)) {
        m_note = "the training data (" + wholeMegabytes(bytes) +
                 ") is copied batch by batch: it would take " + "more than " +
                 std::to_string(int(kResidentShare * 100)) + "% of " + backend.device().str() +
                 "'s memory";
    } else {
        try {
            m_tableX = backend.empty(flow.sampleShape().prepend(count));
            m_tableY = backend.empty(Shape{count}, DType::I32);
            m_note = "the training data (" + wholeMegabytes(bytes) + ") stays on " +
                     backend.device().str() + " after the first whole epoch";
        } catch (const DeviceError &e) {
            m_tableX = m_tableY = Tensor();
            m_note = std::string("the training data is copied batch by batch: ") + e.what();
        }
    }
}

int64_t DeviceFeed::residentBytes() const
{
    return m_tableX.defined() ? int64_t(m_tableX.bytes() + m_tableY.bytes()) : 0;
}

void DeviceFeed::startEpoch(int64_t epoch, int64_t firstBatch)
{
    // Only an epoch seen from its first batch fills the table; a resumed run's partial first
    // epoch does not, and the next whole one does.
    if (recording()) {
        if (m_recordEpoch >= 0 && m_recorded == m_flow.dataset().count) {
            m_backend.upload(m_tableX.raw(), m_hostX.raw(), m_hostX.bytes());
            m_backend.upload(m_tableY.raw(), m_hostY.raw(), m_hostY.bytes());
            m_hostX = m_hostY = Tensor();
            m_complete = true;
            return;
        }
        if (firstBatch == 0) {
            m_recordEpoch = epoch;
            m_recorded = 0;
        } else {
            m_recordEpoch = -1;
        }
    }
}

data::Batch &DeviceFeed::nextSlot(int64_t n, bool *fresh)
{
    data::Batch &slot = m_slots[m_next];
    m_next = (m_next + 1) % 2;
    const Shape xs = m_flow.sampleShape().prepend(n);
    const bool remade = !slot.x.defined() || slot.x.shape() != xs;
    if (remade) {
        slot.x = m_backend.empty(xs);
        slot.y = m_backend.empty(Shape{n}, DType::I32);
    }
    if (fresh) *fresh = remade;
    return slot;
}

const data::Batch &DeviceFeed::put(const data::Batch &host)
{
    if (m_onHost) return host;
    const int64_t n = host.x.shape()[0];
    bool fresh = false;
    data::Batch &slot = nextSlot(n, &fresh);
    const HostCopy copies[] = {{slot.x.raw(), host.x.raw(), host.x.bytes()},
                               {slot.y.raw(), host.y.raw(), host.y.bytes()}};
    // The slot was last read by the step queued before the previous put(), so the copy can
    // overlap the steps queued since (Backend::uploadAhead). Memory just allocated may have been
    // freed by work still queued, which the copy would not wait for: that happens about twice an
    // epoch (the remainder batch), and waits for the device first.
    if (fresh) m_backend.synchronize();
    m_backend.uploadAhead(copies);
    slot.epoch = host.epoch;
    slot.index = host.index;
    if (recording() && m_recordEpoch == host.epoch) {
        // The batch's samples are rows [index * batch, + n) of the epoch's order.
        if (m_orderEpoch != host.epoch) {
            m_order = data::DataFlow::epochOrder(m_flow.dataset().count, m_flow.options().seed,
                                                 host.epoch, m_flow.options().shuffle);
            m_orderEpoch = host.epoch;
        }
        // Rows are scattered into a host table (memory copies, one epoch only) that moves to the
        // device in one upload when the epoch is whole.
        if (!m_hostX.defined()) {
            m_hostX = Tensor::empty(m_tableX.shape());
            m_hostY = Tensor::empty(m_tableY.shape(), DType::I32);
        }
        const int64_t first = host.index * m_flow.options().batchSize;
        const int64_t rowElems = m_flow.sampleShape().numel();
        for (int64_t i = 0; i < n; ++i) {
            const int64_t sample = m_order[size_t(first + i)];
            std::copy_n(host.x.f32() + i * rowElems, rowElems, m_hostX.f32() + sample * rowElems);
            m_hostY.data<int32_t>()[sample] = host.y.data<int32_t>()[i];
        }
        m_recorded += n;
    }
    return slot;
}

const data::Batch &DeviceFeed::residentBatch(int64_t epoch, int64_t index)
{
    if (m_orderEpoch != epoch) {
        m_order = data::DataFlow::epochOrder(m_flow.dataset().count, m_flow.options().seed, epoch,
                                             m_flow.options().shuffle);
        m_orderEpoch = epoch;
    }
    const int64_t bs = m_flow.options().batchSize;
    const int64_t first = index * bs;
    const int64_t n = std::min(bs, int64_t(m_order.size()) - first);
    data::Batch &slot = nextSlot(n);
    if (!m_index.defined() || m_index.numel() < bs)
        m_index = m_backend.empty(Shape{bs}, DType::I64);
    m_backend.upload(m_index.raw(), m_order.data() + first, size_t(n) * sizeof(int64_t));
    const int64_t rowElems = m_flow.sampleShape().numel();
    m_backend.gatherRows(slot.x.f32(), m_tableX.f32(), m_index.data<int64_t>(), n, rowElems);
    m_backend.gatherLabels(slot.y.data<int32_t>(), m_tableY.data<int32_t>(),
                           m_index.data<int64_t>(), n);
    slot.epoch = epoch;
    slot.index = index;
    return slot;
}

} // namespace fb::exec
