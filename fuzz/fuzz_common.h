#pragma once

// Shared by the libFuzzer targets (fuzz/README.md). Each target reads one input the way the
// product reads an untrusted file or line, and checks what the product promises about it: an
// answer (a value or an error naming the input), never a crash, a hang, unbounded memory or an
// exception escaping. Violated promises abort through fb_fuzz_require, so libFuzzer keeps the
// input as a crasher.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace fbfuzz {

// Stops the run with the reason: libFuzzer saves the input that caused it.
[[noreturn]] inline void fail(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz: broken promise: %s: %s\n", what, detail.c_str());
    std::abort();
}

#define FB_FUZZ_REQUIRE(cond, detail)                                                              \
    do {                                                                                           \
        if (!(cond)) ::fbfuzz::fail(#cond, (detail));                                              \
    } while (0)

// A file holding the input, for readers that take a path: one per process (libFuzzer's -jobs
// run separate processes), in /dev/shm when there is one, rewritten for each input.
inline std::string inputFile(const uint8_t *data, size_t size, const char *suffix)
{
    static std::string dir;
    if (dir.empty()) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        dir = std::string(base) + "/flowbench-fuzz-" + std::to_string(getpid());
        mkdir(dir.c_str(), 0700);
        static struct Cleanup {
            ~Cleanup() { std::system(("rm -rf '" + dir + "'").c_str()); }
        } cleanup;
    }
    const std::string path = dir + "/input" + suffix;
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) fail("cannot write the input file", path);
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
    return path;
}

// The first bytes of an input choose options, the rest is the data.
struct Reader {
    const uint8_t *data;
    size_t size;
    uint8_t byte()
    {
        if (!size) return 0;
        --size;
        return *data++;
    }
};

} // namespace fbfuzz
