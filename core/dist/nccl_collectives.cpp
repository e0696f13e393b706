// NCCL between the GPUs of a data-parallel job (docs/distributed.md): built where CMake found
// CUDA, MPI and NCCL (core/CMakeLists.txt); elsewhere makeDeviceCollectives says what is missing.
#include "core/dist/communicator.h"

#ifdef FLOWBENCH_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <deque>
#include <utility>
#endif

namespace fb::dist {

#ifdef FLOWBENCH_HAVE_NCCL

namespace {

std::string ncclText(ncclResult_t r)
{
    return std::string(ncclGetErrorString(r)) + " (" + ncclGetLastError(nullptr) + ")";
}

// A failure inside a step is a device fault, like any failed CUDA call: it ends the run with
// its message (the runner turns it into an error naming the train node).
void check(ncclResult_t r, const char *what)
{
    if (r != ncclSuccess && r != ncclInProgress)
        throw std::runtime_error(std::string("NCCL ") + what + " failed: " + ncclText(r));
}

void check(cudaError_t r, const char *what)
{
    if (r != cudaSuccess)
        throw std::runtime_error(std::string("CUDA ") + what + " failed: " + cudaGetErrorString(r));
}

class NcclCollectives final : public DeviceCollectives {
public:
    NcclCollectives(ncclComm_t comm, cudaStream_t stream)
        : m_comm(comm)
        , m_stream(stream)
    {}
    ~NcclCollectives() override
    {
        cudaStreamSynchronize(m_stream);
        for (auto &[start, stop] : m_pending) {
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
        }
        for (auto &[start, stop] : m_free) {
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
        }
        ncclCommDestroy(m_comm);
    }

    void allReduceSum(float *data, size_t count) override
    {
        timed([&] {
            check(ncclAllReduce(data, data, count, ncclFloat32, ncclSum, m_comm, m_stream),
                  "all-reduce");
        });
    }
    void broadcast(void *data, size_t bytes, int root) override
    {
        timed([&] {
            check(ncclBroadcast(data, data, bytes, ncclUint8, root, m_comm, m_stream), "broadcast");
        });
    }
    void groupStart() override
    {
        if (m_depth++ == 0) begin();
        check(ncclGroupStart(), "group start");
    }
    void groupEnd() override
    {
        check(ncclGroupEnd(), "group end");
        if (--m_depth == 0) end();
    }
    double seconds() override
    {
        // Finished intervals only: never a wait for the GPU.
        while (!m_pending.empty() && cudaEventQuery(m_pending.front().second) == cudaSuccess) {
            float ms = 0;
            cudaEventElapsedTime(&ms, m_pending.front().first, m_pending.front().second);
            m_seconds += double(ms) / 1e3;
            m_free.push_back(m_pending.front());
            m_pending.pop_front();
        }
        return m_seconds;
    }

private:
    template <typename F> void timed(F &&call)
    {
        if (m_depth > 0) return call(); // the group is timed as one
        begin();
        call();
        end();
    }
    void begin()
    {
        if (m_free.empty()) {
            std::pair<cudaEvent_t, cudaEvent_t> e;
            check(cudaEventCreate(&e.first), "event creation");
            check(cudaEventCreate(&e.second), "event creation");
            m_free.push_back(e);
        }
        m_current = m_free.back();
        m_free.pop_back();
        check(cudaEventRecord(m_current.first, m_stream), "event record");
    }
    void end()
    {
        check(cudaEventRecord(m_current.second, m_stream), "event record");
        m_pending.push_back(m_current);
        // A bounded number of intervals in flight: the oldest is read once it has finished.
        if (m_pending.size() > 64) {
            cudaEventSynchronize(m_pending.front().second);
            seconds();
        }
    }

    ncclComm_t m_comm;
    cudaStream_t m_stream;
    int m_depth = 0;
    double m_seconds = 0;
    std::pair<cudaEvent_t, cudaEvent_t> m_current{};
    std::deque<std::pair<cudaEvent_t, cudaEvent_t>> m_pending, m_free;
};

} // namespace

Result<std::unique_ptr<DeviceCollectives>> makeDeviceCollectives(Communicator &comm, int cudaDevice,
                                                                 void *cudaStream)
{
    // Every rank takes part in the id's broadcast, even one whose GPU cannot be used: a rank that
    // left early would leave the others waiting in it.
    char bus[32] = "";
    const std::string gpu = cudaDeviceGetPCIBusId(bus, sizeof bus, cudaDevice) == cudaSuccess
                                ? std::to_string(cudaDevice) + " (PCI " + bus + ")"
                                : std::to_string(cudaDevice);
    if (std::string shared = sharedGpuProblem(comm, gpu); !shared.empty()) return makeError(shared);
    ncclUniqueId id{};
    ncclResult_t made = ncclSuccess;
    if (comm.rank() == 0) made = ncclGetUniqueId(&id);
    int ok = made == ncclSuccess ? 1 : 0;
    comm.broadcast(&ok, sizeof ok, 0);
    if (!ok)
        return makeError(comm.rank() == 0 ? "NCCL could not make its unique id: " + ncclText(made)
                                          : "rank 0 could not start NCCL");
    comm.broadcast(&id, sizeof id, 0);
    if (cudaError_t e = cudaSetDevice(cudaDevice); e != cudaSuccess)
        return makeError("rank " + std::to_string(comm.rank()) + " (" + comm.host() +
                         ") cannot use GPU " + std::to_string(cudaDevice) + ": " +
                         cudaGetErrorString(e));
    ncclComm_t nccl = nullptr;
    if (ncclResult_t r = ncclCommInitRank(&nccl, comm.size(), id, comm.rank()); r != ncclSuccess)
        return makeError("rank " + std::to_string(comm.rank()) + " (" + comm.host() +
                         ") could not join the job's NCCL communicator on GPU " +
                         std::to_string(cudaDevice) + ": " + ncclText(r));
    return std::unique_ptr<DeviceCollectives>(
        new NcclCollectives(nccl, static_cast<cudaStream_t>(cudaStream)));
}

#else

Result<std::unique_ptr<DeviceCollectives>> makeDeviceCollectives(Communicator &, int, void *)
{
    return makeError("this build of Flowbench has no NCCL, so data-parallel training runs on the "
                     "CPU only: build with the CUDA toolkit (which ships NCCL) and Open MPI");
}

#endif

} // namespace fb::dist
