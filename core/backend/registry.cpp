#include "core/backend/backend.h"

#include "core/backend/cpu/cpu_backend.h"

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

} // namespace fb
