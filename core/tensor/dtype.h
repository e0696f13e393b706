#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fb {

// float32 is the only compute type today; the others exist so storage, checkpoints and the
// data path (uint8 images, int32 labels) can name them, and so bf16/fp16 can land later.
enum class DType : uint8_t { F32, BF16, F16, U8, I32, I64 };

size_t dtypeSize(DType t);
std::string_view dtypeName(DType t);       // "float32", ...
std::string_view safetensorsName(DType t); // "F32", ...
bool dtypeFromSafetensors(std::string_view s, DType &out);

} // namespace fb
