#pragma once

#include "core/backend/backend.h"

namespace fb::nn {

// Image activations live NHWC on backends that prefer it (backend.h). These are the places
// where the model compiler converts between that and the logical NCHW order.

// Whether a tensor of logical shape [n, c, h, w] is stored differently from NCHW on b: only
// rank-4 tensors on a channels-last backend, and not when c or h*w is 1 (the same bytes).
bool storedTransposed(Backend &b, const Shape &nchw);

// Copies between the two layouts of a [n, c, h, w] tensor: NHWC -> NCHW when toNchw, else back.
void transposeNhwc(const float *src, float *dst, const Shape &nchw, bool toNchw);

} // namespace fb::nn
