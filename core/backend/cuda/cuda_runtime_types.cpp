#include "core/backend/cuda/cuda_runtime_types.h"

namespace fb::cuda {

Stream::Stream()
{
    FB_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
}

Stream::~Stream()
{
    // Destructors never throw: a failure here means the context is already gone.
    if (m_stream) cudaStreamDestroy(m_stream);
}

void Stream::synchronize() const
{
    FB_CUDA_CHECK(cudaStreamSynchronize(m_stream));
}

Event::Event()
{
    FB_CUDA_CHECK(cudaEventCreateWithFlags(&m_event, cudaEventDisableTiming));
}

Event::~Event()
{
    if (m_event) cudaEventDestroy(m_event);
}

void Event::record(cudaStream_t stream) const
{
    FB_CUDA_CHECK(cudaEventRecord(m_event, stream));
}

void Event::waitOn(cudaStream_t stream) const
{
    FB_CUDA_CHECK(cudaStreamWaitEvent(stream, m_event, 0));
}

void Event::synchronize() const
{
    FB_CUDA_CHECK(cudaEventSynchronize(m_event));
}

PinnedBuffer::PinnedBuffer(size_t bytes)
    : m_bytes(bytes)
{
    if (cudaHostAlloc(&m_data, bytes, cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError(); // clear it: pinned memory running out is not sticky
        m_data = nullptr;
        throw DeviceError("cannot pin " + std::to_string(bytes) +
                              " bytes of host memory for copies to the GPU",
                          bytes);
    }
}

PinnedBuffer::~PinnedBuffer()
{
    if (m_data) cudaFreeHost(m_data);
}

Graph::Graph(cudaGraph_t graph)
    : m_graph(graph)
{
    const cudaError_t e = cudaGraphInstantiate(&m_exec, m_graph, 0);
    if (e != cudaSuccess) {
        cudaGraphDestroy(m_graph); // the constructor throws: no destructor will run
        throwCallError("cudaGraphInstantiate(&m_exec, m_graph, 0)", __FILE__, __LINE__,
                       describe(e));
    }
}

Graph::~Graph()
{
    if (m_exec) cudaGraphExecDestroy(m_exec);
    if (m_graph) cudaGraphDestroy(m_graph);
}

void Graph::launch(cudaStream_t stream) const
{
    FB_CUDA_CHECK(cudaGraphLaunch(m_exec, stream));
}

DeviceScope::DeviceScope(int device)
{
    FB_CUDA_CHECK(cudaGetDevice(&m_previous));
    // Nothing to set (and nothing to restore) in the usual case of one GPU: only cudaGetDevice,
    // a host-side call that is allowed while a stream is being captured.
    m_changed = m_previous != device;
    if (m_changed) FB_CUDA_CHECK(cudaSetDevice(device));
}

DeviceScope::~DeviceScope()
{
    if (m_changed) cudaSetDevice(m_previous);
}

} // namespace fb::cuda
