#include "app/gui/stall_meter.h"

#include <algorithm>
#include <ctime>

namespace fb::app {

namespace {

double processCpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

} // namespace

StallMeter::StallMeter(int intervalMs, QObject *parent)
    : QObject(parent)
    , m_interval(intervalMs)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &StallMeter::tick);
}

void StallMeter::start()
{
    m_stalls.clear();
    m_stalls.reserve(1 << 16);
    m_clock.start();
    m_last = -1;
    m_cpuStart = processCpuSeconds();
    m_cpuEnd = -1;
    m_wallEnd = -1;
    m_timer.start();
}

void StallMeter::stop()
{
    m_timer.stop();
    m_cpuEnd = processCpuSeconds();
    m_wallEnd = m_clock.nsecsElapsed();
}

void StallMeter::tick()
{
    const qint64 now = m_clock.nsecsElapsed();
    if (m_last >= 0) m_stalls.push_back(std::max(0.0, (now - m_last) / 1e6 - m_interval));
    m_last = now;
}

nlohmann::json StallMeter::report() const
{
    std::vector<double> s = m_stalls;
    std::sort(s.begin(), s.end());
    auto pct = [&](double p) {
        if (s.empty()) return 0.0;
        return s[std::min(s.size() - 1, size_t(p * double(s.size() - 1) + 0.5))];
    };
    const auto over = [&](double ms) {
        return long(s.end() - std::upper_bound(s.begin(), s.end(), ms));
    };
    return {{"samples", s.size()},
            {"interval_ms", m_interval},
            {"p50_ms", pct(0.5)},
            {"p99_ms", pct(0.99)},
            {"max_ms", s.empty() ? 0.0 : s.back()},
            {"over_16ms", over(16.0)},
            {"over_50ms", over(50.0)},
            {"seconds", double(m_wallEnd >= 0 ? m_wallEnd : m_clock.nsecsElapsed()) / 1e9},
            {"cpu_s", (m_cpuEnd >= 0 ? m_cpuEnd : processCpuSeconds()) - m_cpuStart}};
}

} // namespace fb::app
