#pragma once

#include "core/base/result.h"

#include <cstddef>
#include <memory>
#include <string>

namespace fb::dist {

// The ranks of a data-parallel job, as the training loop needs them (docs/distributed.md).
// An existing engine moves the bytes: Open MPI between processes and machines. Every collective
// is called by every rank in the same order; each one waits for the others, sleeping rather than
// spinning, so that ranks sharing a machine leave its cores to the one that still computes.
class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // The ranks on this host (how many cores are this rank's), and this rank's place among them
    // (which of the host's GPUs is its own).
    virtual int localSize() const = 0;
    virtual int localRank() const = 0;
    virtual const std::string &host() const = 0;
    // Sums over every rank, in place; every rank gets the same bits.
    virtual void allReduceSum(float *data, size_t count) = 0;
    virtual void allReduceSum(double *data, size_t count) = 0;
    // The same sum started now and finished by wait(), so that the caller computes meanwhile.
    // MPI moves a started collective on only inside its calls: test() is such a call (true once
    // it is done). The data must stay untouched until it is done. Only the time spent inside
    // these calls counts in seconds(): what ran hidden behind the caller's work does not.
    class Pending {
    public:
        virtual ~Pending() = default;
    };
    virtual std::unique_ptr<Pending> startAllReduceSum(float *data, size_t count) = 0;
    virtual bool test(Pending &pending) = 0;
    virtual void wait(Pending &pending) = 0;
    // Rank `root`'s bytes to every rank.
    virtual void broadcast(void *data, size_t bytes, int root) = 0;
    // The name of each rank's host, by rank (gathered once at start).
    virtual std::string hostOf(int rank) const = 0;
    // Seconds spent in collectives so far, waiting for the other ranks included.
    double seconds() const { return m_seconds; }

protected:
    double m_seconds = 0;
};

// Collectives between the GPUs of a job's ranks (NCCL), on GPU memory. Each call is queued on
// the stream given at creation, in order with the kernels that made the data and those that read
// it: the host never waits for it. Calls between groupStart() and groupEnd() go as one launch.
class DeviceCollectives {
public:
    virtual ~DeviceCollectives() = default;
    virtual void allReduceSum(float *deviceData, size_t count) = 0; // in place
    virtual void broadcast(void *deviceData, size_t bytes, int root) = 0;
    virtual void groupStart() = 0;
    virtual void groupEnd() = 0;
    // Seconds the GPU spent in the groups (and lone calls) that have finished by now, measured
    // with CUDA events on the stream.
    virtual double seconds() = 0;
};

// NCCL between the ranks of `comm`, this rank's GPU being CUDA device `cudaDevice` and its
// collectives queued on `cudaStream` (a cudaStream_t). Rank 0 makes NCCL's unique id and
// broadcasts it over `comm`, in host memory (Debian's MPI is not CUDA-aware). Every rank calls
// it. An error when this build has no NCCL.
Result<std::unique_ptr<DeviceCollectives>> makeDeviceCollectives(Communicator &comm, int cudaDevice,
                                                                 void *cudaStream);

// Whether two ranks of `comm` would use the same GPU, `gpu` naming this rank's (its PCI bus id).
// NCCL needs a GPU of its own for each rank, and refuses a communicator where two share one
// ("Duplicate GPU detected"), which is what `mpirun -np 2` on a host of one GPU gives. Every rank
// calls it, so that all of them stop together: the message names the two ranks, their host and
// the GPU, and says what to start instead; "" where every rank has a GPU of its own.
std::string sharedGpuProblem(Communicator &comm, const std::string &gpu);

// Whether this build has MPI, and the MPI library's own version line ("" without).
bool mpiBuilt();
std::string mpiLibraryVersion();
// Whether NCCL (GPU collectives) is built in (CUDA and MPI found at configure time, with NCCL).
bool ncclBuilt();

// The size of the job a launcher (mpirun, or Slurm's srun) started this process in, read from
// the environment it sets; 1 when no launcher started it.
int launchedRanks();

// The job's communicator: MPI when a launcher started more than one rank, or when mpirun started
// one (`mpirun -np 1`: a data-parallel job of one rank); null for a process of its own. The first
// call initializes MPI (and MPI is finalized at exit). An error when a launcher started several
// ranks but this build has no MPI.
Result<Communicator *> world();

} // namespace fb::dist
