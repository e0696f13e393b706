#pragma once

#include "core/base/result.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fb::metrics {

// Cumulative CPU time counters from /proc/stat: entry 0 is the whole machine ("cpu"), then one
// per core ("cpu0", "cpu1", ...), in jiffies.
struct CpuTimes {
    std::vector<uint64_t> busy, total;
};

Result<CpuTimes> parseProcStat(std::string_view text);
Result<CpuTimes> readProcStat();
// Percent busy (0..100) per entry between two readings; 0 where no time passed.
std::vector<double> utilization(const CpuTimes &before, const CpuTimes &after);
// Resident memory of this process, from /proc/self/statm; 0 when unknown.
int64_t processResidentBytes();

// One NVIDIA GPU as NVML reports it.
struct GpuSample {
    int index = 0;
    std::string name;
    double utilizationPercent = 0;       // share of time a kernel ran, last sample period
    double memoryUtilizationPercent = 0; // share of time device memory was read or written
    int64_t memoryUsedBytes = 0, memoryTotalBytes = 0;
};

struct HardwareSample {
    double cpuPercent = 0;          // the whole machine
    std::vector<double> cpuPerCore; // percent per core
    int64_t processMemoryBytes = 0; // resident set of this process
    std::vector<GpuSample> gpus;    // empty when no GPU or driver is there
    std::string gpuStatus;          // why gpus is empty ("" when it is not)
};

class NvmlGpus;

// Samples CPU utilization, process memory and NVIDIA GPUs (through NVML, see nvml.h) on its own
// thread, about every `interval`, and hands each sample to the callback (on that thread). NVML
// is loaded when the thread starts and released by stop(); without it each sample's gpuStatus
// says why. stop() takes a last sample, so even a short run reports one.
class HardwareMonitor {
public:
    using Callback = std::function<void(const HardwareSample &)>;
    HardwareMonitor(std::chrono::milliseconds interval, Callback callback);
    ~HardwareMonitor();
    HardwareMonitor(const HardwareMonitor &) = delete;
    HardwareMonitor &operator=(const HardwareMonitor &) = delete;

    void start();
    void stop();

private:
    void sample();

    std::chrono::milliseconds m_interval;
    Callback m_callback;
    CpuTimes m_last;
    std::chrono::steady_clock::time_point m_lastTime;
    std::unique_ptr<NvmlGpus> m_gpus; // made and used on the monitor thread, then by stop()
    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
};

} // namespace fb::metrics
