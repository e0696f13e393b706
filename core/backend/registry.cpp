#include "core/backend/backend.h"

#include "core/backend/cpu/cpu_backend.h"
#ifdef FLOWBENCH_HAVE_CUDA
#include "core/backend/cuda/cuda_backend.h"
#endif

#include <dnnl.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace fb {

namespace {

std::string cpuModelName()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        std::istringstream fields(line);
        std::string word, name;
        fields >> word >> word >> word; // "model", "name", ":"
        while (fields >> word)
            name += (name.empty() ? "" : " ") + word;
        if (!name.empty()) return name;
    }
    return "CPU";
}

} // namespace

Result<Backend *> backendFor(Device device)
{
    if (device.kind == Device::Kind::Cpu) {
        static CpuBackend cpu;
        return static_cast<Backend *>(&cpu);
    }
#ifdef FLOWBENCH_HAVE_CUDA
    // One backend per GPU for the life of the process: its handles, stream and cached memory
    // are made on first use.
    static std::mutex mutex;
    static std::map<int, std::unique_ptr<cuda::CudaBackend>> backends;
    std::lock_guard lock(mutex);
    auto &slot = backends[device.index];
    if (!slot) {
        const DeviceList list = cuda::listCudaDevices();
        if (list.devices.empty())
            return makeError("device " + device.str() + " is not available: " + list.gpuProblem);
        try {
            slot = std::make_unique<cuda::CudaBackend>(device.index);
        } catch (const DeviceError &e) {
            return makeError("device " + device.str() + " is not available: " + e.what());
        }
    }
    return static_cast<Backend *>(slot.get());
#else
    return makeError("device " + device.str() + " is not available: " + listDevices().gpuProblem);
#endif
}

Backend &referenceBackend()
{
    static ReferenceBackend reference;
    return reference;
}

DeviceList listDevices()
{
    DeviceList out;
    ComputeDevice cpu;
    cpu.device = Device::cpu();
    cpu.name = cpuModelName();
    cpu.multiprocessors = int(std::max(1u, std::thread::hardware_concurrency()));
    out.devices.push_back(cpu);
#ifdef FLOWBENCH_HAVE_CUDA
    DeviceList gpus = cuda::listCudaDevices();
    out.devices.insert(out.devices.end(), gpus.devices.begin(), gpus.devices.end());
    out.gpuProblem = gpus.gpuProblem;
#else
    out.gpuProblem = "this build of Flowbench has no CUDA backend (configured without a CUDA "
                     "toolkit)";
#endif
    return out;
}

Device defaultDevice()
{
    const DeviceList list = listDevices();
    return list.devices.size() > 1 ? list.devices[1].device : Device::cpu();
}

std::vector<std::pair<std::string, std::string>> backendLibraryVersions()
{
    const dnnl_version_t *v = dnnl_version();
    std::vector<std::pair<std::string, std::string>> out{
        {"onednn", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                       std::to_string(v->patch)}};
#ifdef FLOWBENCH_HAVE_CUDA
    cuda::appendCudaLibraryVersions(out);
#endif
    return out;
}

} // namespace fb
