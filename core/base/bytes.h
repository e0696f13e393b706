#pragma once

#include <cstdint>
#include <string>

namespace fb {

// A memory size for people, in binary units as the kernel and nvidia-smi count them:
// "512 bytes", "3.0 KiB", "12.5 MiB", "1.50 GiB", "6.10 TiB". Doubles, so that estimates
// beyond 2^63 (an absurd layer times a batch) print instead of overflowing.
std::string humanBytes(double bytes);

// The memory this process can still take on this machine: MemAvailable plus free swap from
// /proc/meminfo, capped by the cgroup's limit (v2 memory.max, v1 limit_in_bytes) less what the
// cgroup already uses. 0 when it cannot be read (not Linux).
int64_t hostMemoryAvailable();

} // namespace fb
