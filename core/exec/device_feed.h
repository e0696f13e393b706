#pragma once

#include "core/backend/backend.h"
#include "core/data/dataflow.h"

#include <string>

namespace fb::exec {

// Moves batches from the data stages into the training device's memory.
//
// On a CPU backend a batch is already where the model reads it: put() hands it back unchanged.
// On a GPU it is uploaded (through the backend's pinned staging, so the host goes on while the
// copy engine works) into one of two device batches used in turn: the step that still reads the
// previous batch is never written under. The upload goes on the backend's copy stream
// (Backend::uploadAhead), so it overlaps the step the device is computing.
//
// A data set that fits in device memory and whose chain has no random stage (its samples are
// the same every epoch) is kept resident: during the first whole epoch every sample is also
// written into a device table at its data set index; later epochs gather their batches from it
// on the device, by the epoch's order, and the data stages rest.
class DeviceFeed {
public:
    DeviceFeed(Backend &backend, const data::DataFlow &flow, bool allowResident);

    // The batch in the backend's memory. Records it for residency during a first whole epoch.
    const data::Batch &put(const data::Batch &host);
    // Whether epoch `epoch` can be served from device memory (the table is complete).
    bool resident() const { return m_complete; }
    // Batch `index` of `epoch` gathered on the device; only when resident().
    const data::Batch &residentBatch(int64_t epoch, int64_t index);
    // Call at the start of each epoch with the batch it starts from.
    void startEpoch(int64_t epoch, int64_t firstBatch);
    // For the log: why the data is or is not resident.
    const std::string &note() const { return m_note; }
    int64_t residentBytes() const;

private:
    // The next of the two device batches, (re)allocated for n samples when need be (*fresh).
    data::Batch &nextSlot(int64_t n, bool *fresh = nullptr);
    // A table waits to be filled (residency possible and not complete yet).
    bool recording() const { return m_tableX.defined() && !m_complete; }

    Backend &m_backend;
    const data::DataFlow &m_flow;
    bool m_onHost;
    data::Batch m_slots[2];
    int m_next = 0;
    // Residency.
    bool m_complete = false;
    int64_t m_recorded = 0, m_recordEpoch = -1;
    std::vector<int64_t> m_order;
    int64_t m_orderEpoch = -1;
    Tensor m_tableX, m_tableY, m_index;
    Tensor m_hostX, m_hostY; // the table being filled during the first whole epoch
    std::string m_note;
};

} // namespace fb::exec
