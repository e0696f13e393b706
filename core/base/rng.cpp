#include "core/base/rng.h"

#include <cmath>

namespace fb {

uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void Rng::reseed(uint64_t seed)
{
    uint64_t x = seed;
    for (auto &s : m_s) {
        s = mix64(x);
        x += 0x9E3779B97F4A7C15ull;
    }
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t Rng::next()
{
    const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

float Rng::uniform()
{
    return float(next() >> 40) * (1.0f / 16777216.0f);
}

uint64_t Rng::below(uint64_t n)
{
    if (n <= 1) return 0;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
        r = next();
    } while (r >= limit);
    return r % n;
}

float Rng::normal()
{
    // Box-Muller; one value per call keeps the state a plain 4-word vector.
    float u1 = uniform();
    float u2 = uniform();
    if (u1 < 1e-12f) u1 = 1e-12f;
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
}

void Rng::setState(const std::vector<uint64_t> &s)
{
    for (int i = 0; i < 4 && i < int(s.size()); ++i)
        m_s[i] = s[i];
}

} // namespace fb
