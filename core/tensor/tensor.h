#pragma once

#include "core/tensor/device.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

#include <cstddef>
#include <functional>
#include <memory>

namespace fb {

// A block of device memory. CPU storage is 64-byte aligned (AVX-512 lines, oneDNN's preference).
class Storage {
public:
    using Deleter = std::function<void(void *)>;
    Storage(void *data, size_t bytes, Device device, Deleter deleter)
        : m_data(data)
        , m_bytes(bytes)
        , m_device(device)
        , m_deleter(std::move(deleter))
    {}
    ~Storage();
    Storage(const Storage &) = delete;
    Storage &operator=(const Storage &) = delete;

    static std::shared_ptr<Storage> allocateCpu(size_t bytes);

    void *data() const { return m_data; }
    size_t bytes() const { return m_bytes; }
    Device device() const { return m_device; }

private:
    void *m_data;
    size_t m_bytes;
    Device m_device;
    Deleter m_deleter;
};

// A dense, row-major tensor: shared storage plus shape and type. Copies share storage (like a
// view); clone() copies the data.
class Tensor {
public:
    Tensor() = default;
    Tensor(std::shared_ptr<Storage> storage, Shape shape, DType dtype, size_t offsetBytes = 0);

    static Tensor empty(const Shape &shape, DType dtype = DType::F32);
    static Tensor zeros(const Shape &shape, DType dtype = DType::F32);

    bool defined() const { return bool(m_storage); }
    const Shape &shape() const { return m_shape; }
    DType dtype() const { return m_dtype; }
    Device device() const { return m_storage ? m_storage->device() : Device::cpu(); }
    int64_t numel() const { return m_shape.numel(); }
    size_t bytes() const { return size_t(numel()) * dtypeSize(m_dtype); }

    void *raw() const { return static_cast<char *>(m_storage->data()) + m_offset; }
    template <class T> T *data() const { return static_cast<T *>(raw()); }
    float *f32() const { return data<float>(); }

    // Same storage, another shape with the same element count.
    Tensor reshaped(const Shape &shape) const;
    // Rows [begin, end) of the first dimension, sharing storage.
    Tensor rows(int64_t begin, int64_t end) const;
    Tensor clone() const;
    void fill(float value) const; // F32 only
    void zero() const;
    void copyFrom(const Tensor &src) const; // same byte count, CPU
    // Whether every value is a number and finite (integer types always are). CPU. The guard
    // before weights are written or used: a checkpoint, a trained model, a loaded one.
    bool allFinite() const;

    const std::shared_ptr<Storage> &storage() const { return m_storage; }

private:
    std::shared_ptr<Storage> m_storage;
    Shape m_shape;
    DType m_dtype = DType::F32;
    size_t m_offset = 0;
};

} // namespace fb
