#include "core/backend/cuda/cuda_check.h"

#include <cstring>

namespace fb::cuda {

void throwCallError(const char *call, const char *file, int line, const std::string &what)
{
    // Paths relative to the source tree read better in a run log than the build's absolute ones.
    const char *shown = std::strstr(file, "core/");
    throw DeviceError(std::string(call) + " failed at " + (shown ? shown : file) + ":" +
                      std::to_string(line) + ": " + what);
}

std::string describe(cudaError_t e)
{
    return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
}

std::string describe(cublasStatus_t s)
{
    return std::string(cublasGetStatusString(s)) + " (" + cublasGetStatusName(s) + ")";
}

std::string describe(cudnnStatus_t s)
{
    char detail[512] = {};
    cudnnGetLastErrorString(detail, sizeof detail);
    std::string out = cudnnGetErrorString(s);
    if (detail[0]) out += std::string(": ") + detail;
    return out;
}

} // namespace fb::cuda
