#include "core/nn/layout.h"

namespace fb::nn {

bool storedTransposed(Backend &b, const Shape &nchw)
{
    return b.prefersChannelsLast() && nchw.rank() == 4 && nchw[1] > 1 && nchw[2] * nchw[3] > 1;
}

void transposeNhwc(const float *src, float *dst, const Shape &nchw, bool toNchw)
{
    const int64_t n = nchw[0], c = nchw[1], hw = nchw[2] * nchw[3];
    for (int64_t i = 0; i < n; ++i) {
        const float *s = src + i * c * hw;
        float *d = dst + i * c * hw;
        for (int64_t p = 0; p < hw; ++p)
            for (int64_t k = 0; k < c; ++k) {
                if (toNchw)
                    d[k * hw + p] = s[p * c + k];
                else
                    d[p * c + k] = s[k * hw + p];
            }
    }
}

} // namespace fb::nn
