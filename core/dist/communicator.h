#pragma once

#include "core/base/result.h"

#include <cstddef>
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
    // The ranks on this host (how many cores are this rank's).
    virtual int localSize() const = 0;
    virtual const std::string &host() const = 0;
    // Sums over every rank, in place; every rank gets the same bits.
    virtual void allReduceSum(float *data, size_t count) = 0;
    virtual void allReduceSum(double *data, size_t count) = 0;
    // Rank `root`'s bytes to every rank.
    virtual void broadcast(void *data, size_t bytes, int root) = 0;
    // The name of each rank's host, by rank (gathered once at start).
    virtual std::string hostOf(int rank) const = 0;
    // Seconds spent in collectives so far, waiting for the other ranks included.
    double seconds() const { return m_seconds; }

protected:
    double m_seconds = 0;
};

// Whether this build has MPI, and the MPI library's own version line ("" without).
bool mpiBuilt();
std::string mpiLibraryVersion();
// Whether NCCL (GPU collectives) is built in: not yet, so data-parallel training runs on CPUs.
bool ncclBuilt();

// The size of the job a launcher (mpirun, or Slurm's srun) started this process in, read from
// the environment it sets; 1 when no launcher started it.
int launchedRanks();

// The job's communicator: MPI when a launcher started more than one rank, null for a process of
// its own. The first call initializes MPI (and MPI is finalized at exit). An error when a launcher
// started several ranks but this build has no MPI.
Result<Communicator *> world();

} // namespace fb::dist
