#include "core/tensor/dtype.h"

namespace fb {

size_t dtypeSize(DType t)
{
    switch (t) {
    case DType::F32:
        return 4;
    case DType::BF16:
        return 2;
    case DType::F16:
        return 2;
    case DType::U8:
        return 1;
    case DType::I32:
        return 4;
    case DType::I64:
        return 8;
    }
    return 0;
}

std::string_view dtypeName(DType t)
{
    switch (t) {
    case DType::F32:
        return "float32";
    case DType::BF16:
        return "bfloat16";
    case DType::F16:
        return "float16";
    case DType::U8:
        return "uint8";
    case DType::I32:
        return "int32";
    case DType::I64:
        return "int64";
    }
    return "?";
}

std::string_view safetensorsName(DType t)
{
    switch (t) {
    case DType::F32:
        return "F32";
    case DType::BF16:
        return "BF16";
    case DType::F16:
        return "F16";
    case DType::U8:
        return "U8";
    case DType::I32:
        return "I32";
    case DType::I64:
        return "I64";
    }
    return "?";
}

bool dtypeFromSafetensors(std::string_view s, DType &out)
{
    for (DType t : {DType::F32, DType::BF16, DType::F16, DType::U8, DType::I32, DType::I64}) {
        if (safetensorsName(t) == s) {
            out = t;
            return true;
        }
    }
    return false;
}

} // namespace fb
