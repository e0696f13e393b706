#include "core/backend/cuda/cuda_backend.h"

#include <dlfcn.h>

namespace fb::cuda {

namespace {

bool driverLibraryPresent()
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (h) dlclose(h);
    return h != nullptr;
}

} // namespace

DeviceList listCudaDevices()
{
    DeviceList out;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        // Without a driver the runtime says "driver version is insufficient": say what is
        // missing in plain words when libcuda cannot even be loaded.
        if (e == cudaErrorInsufficientDriver && !driverLibraryPresent())
            out.gpuProblem = "no NVIDIA driver is installed (libcuda.so.1 was not found)";
        else
            out.gpuProblem = std::string("no usable NVIDIA GPU: ") + cudaGetErrorString(e);
        return out;
    }
    if (count == 0) {
        out.gpuProblem = "no NVIDIA GPU found";
        return out;
    }
    int driver = 0;
    cudaDriverGetVersion(&driver);
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        ComputeDevice d;
        d.device = Device::cuda(i);
        d.name = prop.name;
        d.memoryBytes = int64_t(prop.totalGlobalMem);
        d.computeMajor = prop.major;
        d.computeMinor = prop.minor;
        d.multiprocessors = prop.multiProcessorCount;
        out.devices.push_back(d);
    }
    if (out.devices.empty()) out.gpuProblem = "the driver lists GPUs but none could be queried";
    return out;
}

void appendCudaLibraryVersions(std::vector<std::pair<std::string, std::string>> &out)
{
    auto dotted = [](int v, int majorDiv, int minorDiv) {
        return std::to_string(v / majorDiv) + "." + std::to_string(v % majorDiv / minorDiv);
    };
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    out.emplace_back("cuda_runtime", dotted(runtime, 1000, 10));
    if (driver) out.emplace_back("cuda_driver", dotted(driver, 1000, 10));
    const size_t cudnn = cudnnGetVersion(); // 91900 for 9.19.0
    out.emplace_back("cudnn", std::to_string(cudnn / 10000) + "." +
                                  std::to_string(cudnn % 10000 / 100) + "." +
                                  std::to_string(cudnn % 100));
    int cublas = 0;
    if (cublasGetProperty(MAJOR_VERSION, &cublas) == CUBLAS_STATUS_SUCCESS) {
        int minor = 0, patch = 0;
        cublasGetProperty(MINOR_VERSION, &minor);
        cublasGetProperty(PATCH_LEVEL, &patch);
        out.emplace_back("cublas", std::to_string(cublas) + "." + std::to_string(minor) + "." +
                                       std::to_string(patch));
    }
}

} // namespace fb::cuda
