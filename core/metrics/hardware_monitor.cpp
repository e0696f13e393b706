#include "core/metrics/hardware_monitor.h"
#include "core/metrics/nvml.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace fb::metrics {

Result<CpuTimes> parseProcStat(std::string_view text)
{
    CpuTimes t;
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with("cpu")) continue;
        std::istringstream fields(line);
        std::string name;
        fields >> name;
        // user nice system idle iowait irq softirq steal (guest time is already in user).
        uint64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int n = 0;
        while (n < 8 && fields >> v[n])
            ++n;
        if (n < 4) return makeError("/proc/stat: malformed line '" + line + "'");
        const uint64_t idle = v[3] + v[4];
        uint64_t total = 0;
        for (int i = 0; i < n; ++i)
            total += v[i];
        t.busy.push_back(total - idle);
        t.total.push_back(total);
    }
    if (t.total.empty()) return makeError("/proc/stat: no cpu lines");
    return t;
}

Result<CpuTimes> readProcStat()
{
    std::ifstream f("/proc/stat");
    if (!f) return makeError("cannot read /proc/stat");
    std::stringstream ss;
    ss << f.rdbuf();
    return parseProcStat(ss.str());
}

std::vector<double> utilization(const CpuTimes &before, const CpuTimes &after)
{
    std::vector<double> out;
    for (size_t i = 0; i < after.total.size() && i < before.total.size(); ++i) {
        const double total = double(after.total[i]) - double(before.total[i]);
        const double busy = double(after.busy[i]) - double(before.busy[i]);
        out.push_back(total > 0 ? std::clamp(100.0 * busy / total, 0.0, 100.0) : 0.0);
    }
    return out;
}

int64_t processResidentBytes()
{
    std::ifstream f("/proc/self/statm");
    int64_t size = 0, resident = 0;
    if (!(f >> size >> resident)) return 0;
    return resident * int64_t(sysconf(_SC_PAGESIZE));
}

HardwareMonitor::HardwareMonitor(std::chrono::milliseconds interval, Callback callback)
    : m_interval(interval)
    , m_callback(std::move(callback))
{}

HardwareMonitor::~HardwareMonitor()
{
    stop();
}

void HardwareMonitor::start()
{
    if (m_thread.joinable()) return;
    auto first = readProcStat();
    if (first.ok()) m_last = first.value();
    m_lastTime = std::chrono::steady_clock::now();
    m_stop = false;
    m_thread = std::thread([this] {
        // Loading NVML can take a while with a real driver; do it here, not in the caller.
        m_gpus = std::make_unique<NvmlGpus>();
        std::unique_lock lock(m_mutex);
        while (!m_wake.wait_for(lock, m_interval, [this] { return m_stop; })) {
            lock.unlock();
            sample();
            lock.lock();
        }
    });
}

void HardwareMonitor::stop()
{
    if (!m_thread.joinable()) return;
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
    // A last sample covers the tail of the run (and a run shorter than one interval).
    if (std::chrono::steady_clock::now() - m_lastTime > std::chrono::milliseconds(50)) sample();
    m_gpus.reset(); // shuts NVML down and unloads it
}

void HardwareMonitor::sample()
{
    auto now = readProcStat();
    if (!now.ok()) return;
    const std::vector<double> u = utilization(m_last, now.value());
    m_last = now.value();
    m_lastTime = std::chrono::steady_clock::now();
    HardwareSample s;
    if (!u.empty()) {
        s.cpuPercent = u[0];
        s.cpuPerCore.assign(u.begin() + 1, u.end());
    }
    s.processMemoryBytes = processResidentBytes();
    if (m_gpus) {
        s.gpus = m_gpus->sample();
        if (!m_gpus->available())
            s.gpuStatus = m_gpus->status();
        else if (s.gpus.empty())
            s.gpuStatus = "no NVIDIA GPU answered NVML's queries this time";
    }
    m_callback(s);
}

} // namespace fb::metrics
