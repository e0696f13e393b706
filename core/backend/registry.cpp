#include "core/backend/backend.h"

#include "core/backend/cpu/cpu_backend.h"

#include <dnnl.h>

namespace fb {

Result<Backend *> backendFor(Device device)
{
    if (device.kind == Device::Kind::Cpu) {
        static CpuBackend cpu;
        return static_cast<Backend *>(&cpu);
    }
    return makeError("device " + device.str() +
                     " is not available: this build of Flowbench has no GPU backend yet");
}

Backend &referenceBackend()
{
    static ReferenceBackend reference;
    return reference;
}

std::vector<std::pair<std::string, std::string>> backendLibraryVersions()
{
    const dnnl_version_t *v = dnnl_version();
    return {{"onednn", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                           std::to_string(v->patch)}};
}

} // namespace fb
