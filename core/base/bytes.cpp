#include "core/base/bytes.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

namespace fb {

std::string wholeMegabytes(int64_t bytes)
{
    return std::to_string((bytes + (1 << 19)) >> 20) + " MB";
}

std::string humanBytes(double bytes)
{
    if (bytes < 1024) return std::to_string(int64_t(bytes)) + " bytes";
    static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = -1;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u >= 2 ? "%.2f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

std::string humanFlops(double flops)
{
    static const char *units[] = {"", "k", "M", "G", "T", "P"};
    int u = 0;
    while (flops >= 1000 && u < 5) {
        flops /= 1000;
        ++u;
    }
    char buf[32];
    const int decimals = u == 0 || flops >= 100 ? 0 : flops >= 10 ? 1 : 2;
    std::snprintf(buf, sizeof buf, "%.*f%s%s", decimals, flops, u ? " " : "", units[u]);
    return buf;
}

std::string groupedDigits(int64_t n)
{
    const std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return n < 0 ? "-" + out : out;
}

namespace {

// A number from a one-line file (cgroup limits); -1 when missing or "max".
int64_t readNumberFile(const char *path)
{
    std::ifstream f(path);
    std::string s;
    if (!(f >> s) || s == "max") return -1;
    try {
        return std::stoll(s);
    } catch (...) {
        return -1;
    }
}

} // namespace

int64_t hostMemoryAvailable()
{
    std::ifstream f("/proc/meminfo");
    std::string key, unit;
    int64_t value = 0, available = -1, swapFree = 0;
    while (f >> key >> value) {
        std::getline(f, unit);
        if (key == "MemAvailable:") available = value * 1024;
        if (key == "SwapFree:") swapFree = value * 1024;
    }
    if (available < 0) return 0;
    int64_t room = available + swapFree;
    // A container's limit can be far below the machine's memory.
    const int64_t v2 = readNumberFile("/sys/fs/cgroup/memory.max");
    if (v2 > 0) {
        const int64_t used = std::max<int64_t>(0, readNumberFile("/sys/fs/cgroup/memory.current"));
        room = std::min(room, std::max<int64_t>(0, v2 - used));
    }
    const int64_t v1 = readNumberFile("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    if (v1 > 0 && v1 < (int64_t(1) << 60)) {
        const int64_t used =
            std::max<int64_t>(0, readNumberFile("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
        room = std::min(room, std::max<int64_t>(0, v1 - used));
    }
    return room;
}

uint64_t fnv1a(const void *data, size_t size, uint64_t h)
{
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

std::string hex64(uint64_t v)
{
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", (unsigned long long)v);
    return text;
}

} // namespace fb
