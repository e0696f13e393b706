#pragma once

#include <vector>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <nlohmann/json.hpp>

namespace fb::app {

// Measures how long the GUI thread is kept from its event loop: a timer asks to fire every
// `intervalMs`; each time it fires late, the lateness is a stall the person would feel as a
// frozen window. For the responsiveness benchmark (bench/gui_responsiveness.py). 10 ms: fine
// enough to tell a 16 ms stall, and each tick wakes the GUI thread, which on a small machine
// preempts a training thread that its peers then wait for; a denser meter would slow the very
// run it watches, which a person's window (with no meter) does not.
class StallMeter : public QObject {
    Q_OBJECT
public:
    explicit StallMeter(int intervalMs = 10, QObject *parent = nullptr);
    void start();
    void stop();
    // {"samples", "interval_ms", "p50_ms", "p99_ms", "max_ms", "over_16ms", "over_50ms",
    // "seconds", "cpu_s"}; the stall of a tick is how much later than the interval it came;
    // cpu_s is the CPU time this (the window's) process used while measuring, its children
    // (the engine) not included: what watching costs the machine.
    nlohmann::json report() const;
    size_t sampleCount() const { return m_stalls.size(); }

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = -1;
    double m_cpuStart = 0, m_cpuEnd = -1;
    qint64 m_wallEnd = -1;
    int m_interval;
    std::vector<double> m_stalls; // milliseconds
};

} // namespace fb::app
