#pragma once

#include "core/metrics/hardware_monitor.h"

#include <string>
#include <vector>

namespace fb::metrics {

// NVIDIA GPU utilization and memory through NVML, loaded at run time with dlopen, so the program
// builds and runs on machines without an NVIDIA driver (the GPU figures are then missing, with a
// reason). The library is $FLOWBENCH_NVML_LIBRARY when set (tests point it at a fake), else
// libnvidia-ml.so.1. The constructor loads and initializes NVML; the destructor shuts it down
// and unloads it. Not thread-safe: use one object from one thread at a time.
class NvmlGpus {
public:
    NvmlGpus();
    ~NvmlGpus();
    NvmlGpus(const NvmlGpus &) = delete;
    NvmlGpus &operator=(const NvmlGpus &) = delete;

    // True when NVML loaded, initialized and reported at least one GPU.
    bool available() const { return m_available; }
    // Why available() is false ("" when it is true): no driver, initialization failed, no GPU.
    std::string status() const { return m_status; }
    // The library path that was tried.
    const std::string &libraryPath() const { return m_path; }
    // Number of GPUs NVML reported at initialization (0 when unavailable).
    int deviceCount() const { return int(m_count); }

    // One reading per GPU. A GPU whose queries fail is left out of this reading; empty when
    // unavailable.
    std::vector<GpuSample> sample() const;

private:
    // NVML's C signatures, declared here rather than taken from nvml.h (see nvml.cpp).
    struct DeviceOpaque; // nvmlDevice_t is an opaque pointer
    using Device = DeviceOpaque *;
    struct Utilization {
        unsigned int gpu, memory;
    };
    struct Memory {
        unsigned long long total, free, used;
    };

    std::string errorText(int code) const;
    void unload();

    std::string m_path;
    std::string m_status;
    bool m_available = false;
    bool m_initialized = false;
    unsigned int m_count = 0;
    void *m_library = nullptr;

    int (*m_init)() = nullptr;
    int (*m_shutdown)() = nullptr;
    int (*m_getCount)(unsigned int *) = nullptr;
    int (*m_getHandle)(unsigned int, Device *) = nullptr;
    int (*m_getName)(Device, char *, unsigned int) = nullptr;
    int (*m_getUtilization)(Device, Utilization *) = nullptr;
    int (*m_getMemory)(Device, Memory *) = nullptr;
    const char *(*m_errorString)(int) = nullptr; // optional
};

} // namespace fb::metrics
