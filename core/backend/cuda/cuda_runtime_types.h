#pragma once

// RAII owners of CUDA streams, events and pinned host memory (Taskflow's style: a handle is
// released by its owner's destructor, never by hand).

#include "core/backend/cuda/cuda_check.h"

#include <cstddef>
#include <utility>

namespace fb::cuda {

class Stream {
public:
    Stream(); // non-blocking: it never waits on the legacy default stream
    ~Stream();
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    cudaStream_t get() const { return m_stream; }
    void synchronize() const;

private:
    cudaStream_t m_stream = nullptr;
};

class Event {
public:
    Event(); // without timing: the cheapest kind, for ordering only
    ~Event();
    Event(const Event &) = delete;
    Event &operator=(const Event &) = delete;
    cudaEvent_t get() const { return m_event; }
    void record(cudaStream_t stream) const;
    // Makes `stream` wait (on the device, not the host) for the work recorded before.
    void waitOn(cudaStream_t stream) const;
    void synchronize() const;

private:
    cudaEvent_t m_event = nullptr;
};

// Page-locked host memory: the only kind a copy engine reads while the host goes on.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(size_t bytes);
    ~PinnedBuffer();
    PinnedBuffer(PinnedBuffer &&o) noexcept
        : m_data(std::exchange(o.m_data, nullptr))
        , m_bytes(std::exchange(o.m_bytes, 0))
    {}
    PinnedBuffer &operator=(PinnedBuffer &&o) noexcept
    {
        std::swap(m_data, o.m_data);
        std::swap(m_bytes, o.m_bytes);
        return *this;
    }
    void *data() const { return m_data; }
    size_t bytes() const { return m_bytes; }

private:
    void *m_data = nullptr;
    size_t m_bytes = 0;
};

// A stream's captured work (a CUDA graph), instantiated once and launched again on each replay.
class Graph {
public:
    // Takes ownership of `graph` (from cudaStreamEndCapture) and instantiates it.
    explicit Graph(cudaGraph_t graph);
    ~Graph();
    Graph(const Graph &) = delete;
    Graph &operator=(const Graph &) = delete;
    void launch(cudaStream_t stream) const;

private:
    cudaGraph_t m_graph = nullptr;
    cudaGraphExec_t m_exec = nullptr;
};

// Makes a device current for the calling thread and restores the previous one on exit.
class DeviceScope {
public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

private:
    int m_previous = 0;
    bool m_changed = false;
};

} // namespace fb::cuda
