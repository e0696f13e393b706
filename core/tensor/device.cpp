#include "core/tensor/device.h"

#include <charconv>

namespace fb {

Result<Device> Device::parse(std::string_view text)
{
    if (text == "cpu") return Device::cpu();
    if (text == "cuda") return Device::cuda(0);
    if (text.starts_with("cuda:")) {
        int idx = -1;
        auto digits = text.substr(5);
        auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), idx);
        if (ec == std::errc() && p == digits.data() + digits.size() && idx >= 0)
            return Device::cuda(idx);
    }
    return makeError("unknown device '" + std::string(text) + "' (expected cpu, cuda or cuda:N)");
}

std::string Device::str() const
{
    return kind == Kind::Cpu ? "cpu" : "cuda:" + std::to_string(index);
}

} // namespace fb
