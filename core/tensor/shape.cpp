#include "core/tensor/shape.h"

namespace fb {

int64_t Shape::numel() const
{
    int64_t n = 1;
    for (int64_t d : m_dims)
        n *= d;
    return n;
}

Shape Shape::withBatch(int64_t n) const
{
    Shape s = *this;
    if (!s.m_dims.empty()) s.m_dims[0] = n;
    return s;
}

Shape Shape::sampleShape() const
{
    if (m_dims.empty()) return {};
    return Shape(std::vector<int64_t>(m_dims.begin() + 1, m_dims.end()));
}

Shape Shape::prepend(int64_t n) const
{
    std::vector<int64_t> d{n};
    d.insert(d.end(), m_dims.begin(), m_dims.end());
    return Shape(std::move(d));
}

std::string Shape::str() const
{
    std::string s = "[";
    for (size_t i = 0; i < m_dims.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(m_dims[i]);
    }
    return s + "]";
}

} // namespace fb
