#pragma once

// Shared plumbing of the oneDNN kernels: one engine and stream per process, checked calls, and
// the reorders between our plain row-major tensors and the blocked layouts oneDNN computes in.

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

namespace fb::dnnlx {

dnnl::engine &engine();
dnnl::stream &stream();

// An error while *running* a primitive that was created successfully (out of memory for its
// scratchpad, or a programmer error: a bad pointer or shape) throws a DeviceError naming the call
// and where it was made, as the GPU backend does for a failed CUDA call: the model adds the node,
// and the run ends with an error naming it instead of aborting the process.
[[noreturn]] void fail(const char *call, const char *file, int line, const dnnl::error &e);

#define FB_DNNL_CHECK(call)                                                                        \
    do {                                                                                           \
        try {                                                                                      \
            call;                                                                                  \
        } catch (const dnnl::error &e_) {                                                          \
            ::fb::dnnlx::fail(#call, __FILE__, __LINE__, e_);                                      \
        }                                                                                          \
    } while (0)

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

inline dnnl::memory::desc plainDesc(const dnnl::memory::dims &dims, tag t)
{
    return dnnl::memory::desc(dims, dt::f32, t);
}

// An argument that the primitive may want in another layout than our plain one. When the two
// descriptions agree no copy is made and the primitive reads or writes our buffer directly.
class Arg {
public:
    enum class Dir { In, Out };
    Arg() = default;
    Arg(const dnnl::memory::desc &user, const dnnl::memory::desc &prim, Dir dir);

    // Input: binds our buffer, reorders into the primitive's layout when needed.
    const dnnl::memory &in(const void *p);
    // Output: binds our buffer; call finish() after the primitive ran.
    const dnnl::memory &out(void *p);
    void finish();
    bool reorders() const { return m_reorders; }
    const dnnl::memory &prim() const { return m_prim; }

private:
    dnnl::memory m_user;
    dnnl::memory m_prim;
    dnnl::reorder m_reorder;
    bool m_reorders = false;
};

inline dnnl::memory wrap(const dnnl::memory::desc &d, const void *p)
{
    return dnnl::memory(d, engine(), const_cast<void *>(p));
}

} // namespace fb::dnnlx
