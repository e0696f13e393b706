#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace fb {

// Dimensions outermost first (NCHW for images, [batch, features] for vectors).
class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims)
        : m_dims(dims)
    {}
    explicit Shape(std::vector<int64_t> dims)
        : m_dims(std::move(dims))
    {}

    int rank() const { return int(m_dims.size()); }
    int64_t operator[](int i) const { return m_dims[size_t(i < 0 ? i + rank() : i)]; }
    int64_t &operator[](int i) { return m_dims[size_t(i < 0 ? i + rank() : i)]; }
    int64_t numel() const;
    const std::vector<int64_t> &dims() const { return m_dims; }
    // The same shape with the first (batch) dimension replaced.
    Shape withBatch(int64_t n) const;
    // Everything but the first dimension.
    Shape sampleShape() const;
    Shape prepend(int64_t n) const;

    std::string str() const; // "[128, 1, 28, 28]"
    bool operator==(const Shape &o) const = default;

private:
    std::vector<int64_t> m_dims;
};

} // namespace fb
