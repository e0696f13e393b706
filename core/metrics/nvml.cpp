#include "core/metrics/nvml.h"

#include <cstdlib>
#include <dlfcn.h>

namespace fb::metrics {

// Why we declare NVML's functions ourselves: NVML's header (nvml.h) is not in the CUDA toolkit
// on our build machines (DESIGN.md, "Notes on the libraries"), and linking libnvidia-ml would
// make the program fail to start where no NVIDIA driver is installed. So the library is opened
// with dlopen and the few functions used are resolved with dlsym, with their C signatures written
// out in nvml.h: nvmlReturn_t is a C enum (int-sized, 0 is NVML_SUCCESS), nvmlDevice_t is an
// opaque pointer, and nvmlUtilization_t {gpu, memory} and nvmlMemory_t {total, free, used} match
// NVML's ABI field for field. The _v2 entry points are the ones current drivers export.
namespace {

constexpr int kSuccess = 0;            // NVML_SUCCESS
constexpr unsigned int kNameSize = 96; // NVML_DEVICE_NAME_V2_BUFFER_SIZE

template <class F> bool resolve(void *library, const char *name, F &fn)
{
    void *p = dlsym(library, name);
    fn = reinterpret_cast<F>(p);
    return p != nullptr;
}

} // namespace

NvmlGpus::NvmlGpus()
{
    const char *env = std::getenv("FLOWBENCH_NVML_LIBRARY");
    m_path = env && *env ? env : "libnvidia-ml.so.1";

    dlerror(); // clear any stale error
    m_library = dlopen(m_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_library) {
        const char *why = dlerror();
        m_status = "no NVIDIA driver: cannot load " + m_path +
                   " (dlopen: " + (why ? why : "unknown error") + ")";
        return;
    }

    resolve(m_library, "nvmlErrorString", m_errorString); // optional: only for messages
    const bool all = resolve(m_library, "nvmlInit_v2", m_init) &&
                     resolve(m_library, "nvmlShutdown", m_shutdown) &&
                     resolve(m_library, "nvmlDeviceGetCount_v2", m_getCount) &&
                     resolve(m_library, "nvmlDeviceGetHandleByIndex_v2", m_getHandle) &&
                     resolve(m_library, "nvmlDeviceGetName", m_getName) &&
                     resolve(m_library, "nvmlDeviceGetUtilizationRates", m_getUtilization) &&
                     resolve(m_library, "nvmlDeviceGetMemoryInfo", m_getMemory);
    if (!all) {
        const char *why = dlerror();
        m_status = "NVML in " + m_path +
                   " is too old or incomplete (dlsym: " + (why ? why : "symbol missing") + ")";
        unload();
        return;
    }

    if (const int rc = m_init(); rc != kSuccess) {
        m_status = "NVML initialization failed: " + errorText(rc);
        unload();
        return;
    }
    m_initialized = true;

    unsigned int count = 0;
    if (const int rc = m_getCount(&count); rc != kSuccess) {
        m_status = "NVML could not count the GPUs: " + errorText(rc);
        return;
    }
    if (count == 0) {
        m_status = "no NVIDIA GPU found";
        return;
    }
    m_count = count;
    m_available = true;
}

NvmlGpus::~NvmlGpus()
{
    unload();
}

void NvmlGpus::unload()
{
    if (m_initialized && m_shutdown) m_shutdown();
    m_initialized = false;
    m_available = false;
    m_count = 0;
    if (m_library) dlclose(m_library);
    m_library = nullptr;
    m_init = m_shutdown = nullptr;
    m_getCount = nullptr;
    m_getHandle = nullptr;
    m_getName = nullptr;
    m_getUtilization = nullptr;
    m_getMemory = nullptr;
    m_errorString = nullptr;
}

std::string NvmlGpus::errorText(int code) const
{
    const char *text = m_errorString ? m_errorString(code) : nullptr;
    std::string out = text && *text ? text : "unknown error";
    return out + " (NVML error " + std::to_string(code) + ")";
}

std::vector<GpuSample> NvmlGpus::sample() const
{
    std::vector<GpuSample> out;
    if (!m_available) return out;
    for (unsigned int i = 0; i < m_count; ++i) {
        Device device = nullptr;
        Utilization util{};
        Memory memory{};
        char name[kNameSize] = {};
        // A GPU that fails a query for its figures (lost, reset, no permission) is left out of
        // this reading only; the next reading asks it again. Its name is cosmetic: a failed name
        // query gets a stand-in instead.
        if (m_getHandle(i, &device) != kSuccess) continue;
        if (m_getUtilization(device, &util) != kSuccess) continue;
        if (m_getMemory(device, &memory) != kSuccess) continue;
        GpuSample s;
        s.index = int(i);
        if (m_getName(device, name, kNameSize) == kSuccess) {
            name[kNameSize - 1] = '\0';
            s.name = name;
        }
        if (s.name.empty()) s.name = "NVIDIA GPU " + std::to_string(i);
        s.utilizationPercent = double(util.gpu);
        s.memoryUtilizationPercent = double(util.memory);
        s.memoryUsedBytes = int64_t(memory.used);
        s.memoryTotalBytes = int64_t(memory.total);
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace fb::metrics
