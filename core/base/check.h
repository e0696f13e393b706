#pragma once

#include <cstdio>
#include <cstdlib>

// FB_ASSERT is for programmer errors only: it stays on in release builds because a silent wrong
// answer from the engine is worse than a stop with the location.
#define FB_ASSERT(cond, msg)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "flowbench: internal error at %s:%d: %s (%s)\n", __FILE__,        \
                         __LINE__, msg, #cond);                                                    \
            std::abort();                                                                          \
        }                                                                                          \
    } while (0)
