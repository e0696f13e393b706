#include "core/dist/communicator.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <cstdlib>
#include <thread>
#include <vector>

#include <unistd.h>

#ifdef FLOWBENCH_HAVE_MPI
#include <mpi.h>
#endif

namespace fb::dist {

namespace {

int envInt(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : 0;
}

#ifdef FLOWBENCH_HAVE_MPI

std::string thisHost()
{
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown host";
    return name;
}

// Waits for a non-blocking collective: spins briefly (a step's collectives are short), then
// sleeps between tests, so that a rank waiting on another (evaluation, a slow rank) leaves the
// cores it shares with that rank free. Open MPI's blocking calls spin all the while.
void waitFor(MPI_Request &request)
{
    int done = 0;
    for (int spins = 0; !done; ++spins) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) break;
        if (spins < 2000) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(spins < 20000 ? 20 : 500));
    }
}

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator()
    {
        MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m_size);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &m_local);
        MPI_Comm_size(m_local, &m_localSize);
        MPI_Comm_rank(m_local, &m_localRank);
        m_host = thisHost();
        // Every rank's host, for messages that name the rank at fault and its machine.
        std::vector<char> mine(256, 0), all(256 * size_t(m_size), 0);
        m_host.copy(mine.data(), 255);
        MPI_Allgather(mine.data(), 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
        for (int r = 0; r < m_size; ++r)
            m_hosts.emplace_back(all.data() + 256 * size_t(r));
    }
    ~MpiCommunicator() override
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Comm_free(&m_local);
    }

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    int localSize() const override { return m_localSize; }
    int localRank() const override { return m_localRank; }
    const std::string &host() const override { return m_host; }
    std::string hostOf(int rank) const override
    {
        return rank >= 0 && rank < int(m_hosts.size()) ? m_hosts[size_t(rank)] : std::string();
    }

    void allReduceSum(float *data, size_t count) override { reduce(data, count, MPI_FLOAT); }
    void allReduceSum(double *data, size_t count) override { reduce(data, count, MPI_DOUBLE); }

    void broadcast(void *data, size_t bytes, int root) override
    {
        timed([&] {
            // MPI counts are ints: large buffers go in pieces of at most 1 GiB.
            char *p = static_cast<char *>(data);
            for (size_t done = 0; done < bytes;) {
                const int n = int(std::min<size_t>(bytes - done, size_t(1) << 30));
                MPI_Request request;
                MPI_Ibcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD, &request);
                waitFor(request);
                done += size_t(n);
            }
        });
    }

    struct MpiPending final : Pending {
        std::vector<MPI_Request> requests; // one per piece of at most 2^28 values
    };
    std::unique_ptr<Pending> startAllReduceSum(float *data, size_t count) override
    {
        std::unique_ptr<MpiPending> pending;
        timed([&] { pending = start(data, count, MPI_FLOAT); });
        return pending;
    }
    bool test(Pending &p) override
    {
        int done = 1;
        timed([&] {
            auto &requests = static_cast<MpiPending &>(p).requests;
            if (!requests.empty())
                MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
        });
        return done != 0;
    }
    void wait(Pending &p) override
    {
        timed([&] {
            for (MPI_Request &r : static_cast<MpiPending &>(p).requests)
                waitFor(r);
        });
    }

private:
    // Runs `call` and counts its time as time in collectives.
    template <typename F> void timed(F &&call)
    {
        const auto begin = std::chrono::steady_clock::now();
        call();
        m_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    }
    // Starts the sum in pieces of at most 2^28 values (MPI counts are ints).
    template <typename T>
    std::unique_ptr<MpiPending> start(T *data, size_t count, MPI_Datatype type)
    {
        auto pending = std::make_unique<MpiPending>();
        for (size_t done = 0; done < count;) {
            const int n = int(std::min<size_t>(count - done, size_t(1) << 28));
            pending->requests.emplace_back();
            MPI_Iallreduce(MPI_IN_PLACE, data + done, n, type, MPI_SUM, MPI_COMM_WORLD,
                           &pending->requests.back());
            done += size_t(n);
        }
        return pending;
    }
    template <typename T> void reduce(T *data, size_t count, MPI_Datatype type)
    {
        timed([&] {
            const auto pending = start(data, count, type);
            for (MPI_Request &r : pending->requests)
                waitFor(r);
        });
    }

    int m_rank = 0, m_size = 1, m_localSize = 1, m_localRank = 0;
    MPI_Comm m_local = MPI_COMM_NULL;
    std::string m_host;
    std::vector<std::string> m_hosts;
};

#endif

} // namespace

bool mpiBuilt()
{
#ifdef FLOWBENCH_HAVE_MPI
    return true;
#else
    return false;
#endif
}

std::string sharedGpuProblem(Communicator &comm, const std::string &gpu)
{
    // Each rank writes a hash of its host and GPU into its own slot and the sum gathers them: a
    // job's communicator has sums, not gathers. 52 bits, so that a double holds it exactly.
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (char c : comm.host() + "/" + gpu) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    std::vector<double> ids(static_cast<size_t>(comm.size()), 0.0);
    ids[static_cast<size_t>(comm.rank())] = static_cast<double>((h >> 12) | 1);
    comm.allReduceSum(ids.data(), ids.size());
    for (size_t a = 0; a < ids.size(); ++a)
        for (size_t b = a + 1; b < ids.size(); ++b)
            if (ids[a] == ids[b]) {
                const std::string host = comm.hostOf(static_cast<int>(a));
                const bool mine =
                    static_cast<int>(a) == comm.rank() || static_cast<int>(b) == comm.rank();
                return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " on " + host +
                       " would share " + (mine ? "its GPU " + gpu : std::string("a GPU")) +
                       ", and NCCL needs a GPU of its own for each rank: start at most as many "
                       "ranks on each host as it has GPUs (mpirun -np N on one host, "
                       "--map-by ppr:N:node across hosts)";
            }
    return {};
}

std::string mpiLibraryVersion()
{
#ifdef FLOWBENCH_HAVE_MPI
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string v(text, size_t(std::max(length, 0)));
    // "Open MPI v4.1.4, package: Debian OpenMPI, ...": the first part says it.
    if (auto comma = v.find(','); comma != std::string::npos) v.resize(comma);
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    return v;
#else
    return {};
#endif
}

bool ncclBuilt()
{
#ifdef FLOWBENCH_HAVE_NCCL
    return true;
#else
    return false;
#endif
}

int launchedRanks()
{
    // Open MPI's mpirun; Slurm's srun (set for the tasks of a job step, not for the batch script
    // that calls srun); MPICH's Hydra.
    for (const char *name : {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE"})
        if (int n = envInt(name); n > 0) return n;
    return 1;
}

Result<Communicator *> world()
{
    const int ranks = launchedRanks();
    // `mpirun -np 1` asks for MPI: a data-parallel job of one rank (as DDP with a world of one),
    // the path of a larger job, NCCL included, on one GPU too. Any other launcher's single task
    // (srun -n 1) is a process of its own, as without a launcher.
    const bool mpirunOfOne = ranks == 1 && envInt("OMPI_COMM_WORLD_SIZE") == 1;
    if (ranks <= 1 && !mpirunOfOne) return static_cast<Communicator *>(nullptr);
#ifdef FLOWBENCH_HAVE_MPI
    static Communicator *comm = [] {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        static MpiCommunicator instance;
        std::atexit([] {
            int finalized = 0;
            MPI_Finalized(&finalized);
            if (!finalized) MPI_Finalize();
        });
        return static_cast<Communicator *>(&instance);
    }();
    return comm;
#else
    if (mpirunOfOne) return static_cast<Communicator *>(nullptr); // one process, as ever
    return makeError("started as one of " + std::to_string(ranks) +
                     " ranks, but this build of Flowbench has no MPI: install libopenmpi-dev "
                     "and openmpi-bin (scripts/deps.sh does) and build again");
#endif
}

} // namespace fb::dist
