#include "core/tensor/tensor.h"

#include "core/base/check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace fb {

Storage::~Storage()
{
    if (m_deleter) m_deleter(m_data);
}

std::shared_ptr<Storage> Storage::allocateCpu(size_t bytes)
{
    constexpr size_t kAlign = 64;
    size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    void *p = std::aligned_alloc(kAlign, rounded);
    if (!p) throw std::bad_alloc();
    return std::make_shared<Storage>(p, bytes, Device::cpu(), [](void *q) { std::free(q); });
}

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, DType dtype, size_t offsetBytes)
    : m_storage(std::move(storage))
    , m_shape(std::move(shape))
    , m_dtype(dtype)
    , m_offset(offsetBytes)
{}

Tensor Tensor::empty(const Shape &shape, DType dtype)
{
    return Tensor(Storage::allocateCpu(size_t(shape.numel()) * dtypeSize(dtype)), shape, dtype);
}

Tensor Tensor::zeros(const Shape &shape, DType dtype)
{
    Tensor t = empty(shape, dtype);
    t.zero();
    return t;
}

Tensor Tensor::reshaped(const Shape &shape) const
{
    FB_ASSERT(shape.numel() == numel(), "reshape must keep the element count");
    return Tensor(m_storage, shape, m_dtype, m_offset);
}

Tensor Tensor::rows(int64_t begin, int64_t end) const
{
    FB_ASSERT(m_shape.rank() >= 1 && begin >= 0 && begin <= end && end <= m_shape[0],
              "row range out of bounds");
    const size_t rowBytes =
        size_t(m_shape.numel() / std::max<int64_t>(m_shape[0], 1)) * dtypeSize(m_dtype);
    return Tensor(m_storage, m_shape.withBatch(end - begin), m_dtype,
                  m_offset + size_t(begin) * rowBytes);
}

Tensor Tensor::clone() const
{
    Tensor t = empty(m_shape, m_dtype);
    std::memcpy(t.raw(), raw(), bytes());
    return t;
}

void Tensor::fill(float value) const
{
    FB_ASSERT(m_dtype == DType::F32, "fill supports float32");
    std::fill_n(f32(), numel(), value);
}

void Tensor::zero() const
{
    std::memset(raw(), 0, bytes());
}

void Tensor::copyFrom(const Tensor &src) const
{
    FB_ASSERT(src.bytes() == bytes(), "copy between tensors of different sizes");
    std::memcpy(raw(), src.raw(), bytes());
}

bool Tensor::allFinite() const
{
    // bfloat16 and float16 by their bits: all exponent bits set is infinity or NaN.
    auto bitsFinite = [&](uint16_t exponent) {
        const auto *v = data<uint16_t>();
        return std::none_of(v, v + numel(), [&](uint16_t x) { return (x & exponent) == exponent; });
    };
    switch (m_dtype) {
    case DType::F32:
        return std::all_of(f32(), f32() + numel(), [](float x) { return std::isfinite(x); });
    case DType::BF16:
        return bitsFinite(0x7F80);
    case DType::F16:
        return bitsFinite(0x7C00);
    case DType::U8:
    case DType::I32:
    case DType::I64:
        return true;
    }
    return true;
}

} // namespace fb
