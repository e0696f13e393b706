#pragma once

#include "core/base/result.h"

#include <string>
#include <string_view>

namespace fb {

struct Device {
    enum class Kind : uint8_t { Cpu, Cuda };
    Kind kind = Kind::Cpu;
    int index = 0;

    static Device cpu() { return {}; }
    static Device cuda(int i) { return {Kind::Cuda, i}; }
    // "cpu", "cuda", "cuda:1"
    static Result<Device> parse(std::string_view text);
    std::string str() const;
    bool operator==(const Device &) const = default;
};

} // namespace fb
