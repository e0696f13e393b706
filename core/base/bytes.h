#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fb {

// A memory size for people, in binary units as the kernel and nvidia-smi count them:
// "512 bytes", "3.0 KiB", "12.5 MiB", "1.50 GiB", "6.10 TiB". Doubles, so that estimates
// beyond 2^63 (an absurd layer times a batch) print instead of overflowing.
std::string humanBytes(double bytes);
// Whole mebibytes, rounded, for log lines: "450 MB".
std::string wholeMegabytes(int64_t bytes);
// Counts in powers of 1000 with three digits, for FLOPs: "926", "61.0 M", "1.85 G". The CLI's
// model summary and the window's Model Summary view show the same text.
std::string humanFlops(double flops);
// 421642 -> "421,642".
std::string groupedDigits(int64_t n);

// FNV-1a, 64 bits, over `size` bytes, going on from `h` (chain calls to hash several buffers):
// a fast digest for names, pipelines and weights (not for security; core/io/sha256 is).
inline constexpr uint64_t kFnv1aStart = 1469598103934665603ull;
uint64_t fnv1a(const void *data, size_t size, uint64_t h = kFnv1aStart);
inline uint64_t fnv1a(const std::string &s, uint64_t h = kFnv1aStart)
{
    return fnv1a(s.data(), s.size(), h);
}
// Such a digest as 16 lower-case hex digits.
std::string hex64(uint64_t v);

// The memory this process can still take on this machine: MemAvailable plus free swap from
// /proc/meminfo, capped by the cgroup's limit (v2 memory.max, v1 limit_in_bytes) less what the
// cgroup already uses. 0 when it cannot be read (not Linux).
int64_t hostMemoryAvailable();

} // namespace fb
