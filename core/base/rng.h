#pragma once

#include <cstdint>
#include <cstddef>
#include <utility>
#include <vector>

namespace fb {

// A small, fully specified generator (xoshiro256**, seeded through splitmix64). We write our own
// rather than use <random> because the standard distributions are implementation-defined, and the
// same seed must give the same weights, data order and dropout masks on every platform and
// backend; checkpoints also store the raw state.
class Rng {
public:
    explicit Rng(uint64_t seed = 0) { reseed(seed); }
    void reseed(uint64_t seed);

    uint64_t next();
    // Uniform in [0, 1) with 24 random bits (exact in float).
    float uniform();
    float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
    // Uniform integer in [0, n), without modulo bias.
    uint64_t below(uint64_t n);
    float normal();

    std::vector<uint64_t> state() const { return {m_s[0], m_s[1], m_s[2], m_s[3]}; }
    void setState(const std::vector<uint64_t> &s);

private:
    uint64_t m_s[4];
};

// Stateless mixing: the same (seed, index) gives the same bits on any device or thread.
uint64_t mix64(uint64_t x);

// Fisher-Yates with our own generator (std::shuffle is implementation-defined): the same order
// on every platform.
template <class T> void shuffleWith(std::vector<T> &v, Rng &rng)
{
    for (std::size_t i = v.size(); i > 1; --i)
        std::swap(v[i - 1], v[std::size_t(rng.below(i))]);
}

} // namespace fb
