// A stand-in for libnvidia-ml.so.1 that tests load through FLOWBENCH_NVML_LIBRARY. It exports the
// few NVML functions Flowbench resolves, with NVML's C ABI, and reports two GPUs with fixed
// figures. Environment variables choose failures:
//   FAKE_NVML_INIT_FAIL=1      nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
//   FAKE_NVML_GPU_COUNT=N      report N GPUs instead of 2 (at most 2)
//   FAKE_NVML_FAIL_DEVICE=I    GPU I's utilization query returns NVML_ERROR_GPU_IS_LOST
// fakeNvmlInitCount() reports nvmlInit_v2 calls not yet matched by nvmlShutdown.

#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kInsufficientSize = 7;
constexpr int kDriverNotLoaded = 9;
constexpr int kGpuIsLost = 15;

struct FakeDevice {
    const char *name;
    unsigned int gpu, memory;
    unsigned long long total, used;
};

FakeDevice g_devices[2] = {
    {"Fake GPU Alpha", 37, 12, 8ull << 30, 3ull << 30},
    {"Fake GPU Beta", 91, 55, 16ull << 30, 10ull << 30},
};
int g_initCount = 0;

int envInt(const char *name, int fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

unsigned int deviceCount()
{
    const int n = envInt("FAKE_NVML_GPU_COUNT", 2);
    return n < 0 ? 0u : n > 2 ? 2u : unsigned(n);
}

FakeDevice *check(void *device)
{
    if (g_initCount == 0) return nullptr;
    for (auto &d : g_devices)
        if (device == &d) return &d;
    return nullptr;
}

} // namespace

extern "C" {

struct nvmlUtilization_t {
    unsigned int gpu, memory;
};
struct nvmlMemory_t {
    unsigned long long total, free, used;
};

int nvmlInit_v2()
{
    if (envInt("FAKE_NVML_INIT_FAIL", 0) != 0) return kDriverNotLoaded;
    ++g_initCount;
    return kSuccess;
}

int nvmlShutdown()
{
    if (g_initCount == 0) return kUninitialized;
    --g_initCount;
    return kSuccess;
}

const char *nvmlErrorString(int code)
{
    switch (code) {
    case kSuccess:
        return "Success";
    case kUninitialized:
        return "Uninitialized";
    case kInvalidArgument:
        return "Invalid Argument";
    case kInsufficientSize:
        return "Insufficient Size";
    case kDriverNotLoaded:
        return "Driver Not Loaded";
    case kGpuIsLost:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (g_initCount == 0) return kUninitialized;
    if (!count) return kInvalidArgument;
    *count = deviceCount();
    return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **device)
{
    if (g_initCount == 0) return kUninitialized;
    if (!device || index >= deviceCount()) return kInvalidArgument;
    *device = &g_devices[index];
    return kSuccess;
}

int nvmlDeviceGetName(void *device, char *name, unsigned int length)
{
    FakeDevice *d = check(device);
    if (!d || !name) return kInvalidArgument;
    if (std::strlen(d->name) + 1 > length) return kInsufficientSize;
    std::strcpy(name, d->name);
    return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void *device, nvmlUtilization_t *utilization)
{
    FakeDevice *d = check(device);
    if (!d || !utilization) return kInvalidArgument;
    if (envInt("FAKE_NVML_FAIL_DEVICE", -1) == int(d - g_devices)) return kGpuIsLost;
    utilization->gpu = d->gpu;
    utilization->memory = d->memory;
    return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void *device, nvmlMemory_t *memory)
{
    FakeDevice *d = check(device);
    if (!d || !memory) return kInvalidArgument;
    memory->total = d->total;
    memory->used = d->used;
    memory->free = d->total - d->used;
    return kSuccess;
}

// Test hook, not NVML: how many nvmlInit_v2 calls are not yet matched by nvmlShutdown.
int fakeNvmlInitCount()
{
    return g_initCount;
}

} // extern "C"
