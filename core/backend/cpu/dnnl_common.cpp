#include "core/backend/cpu/dnnl_common.h"

#include "core/backend/backend.h"

#include <string>

namespace fb::dnnlx {

dnnl::engine &engine()
{
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

dnnl::stream &stream()
{
    static dnnl::stream s(engine());
    return s;
}

void fail(const char *call, const char *file, int line, const dnnl::error &e)
{
    const std::string where = std::string(call) + " at " + file + ":" + std::to_string(line);
    if (e.status == dnnl_out_of_memory)
        throw DeviceError("out of memory on the CPU in oneDNN (" + where + ")");
    throw DeviceError("oneDNN failed: " + where + ": " + e.what() + " (status " +
                      std::to_string(int(e.status)) + ")");
}

Arg::Arg(const dnnl::memory::desc &user, const dnnl::memory::desc &prim, Dir dir)
    : m_user(user, engine(), DNNL_MEMORY_NONE)
{
    m_reorders = user != prim;
    if (m_reorders) {
        m_prim = dnnl::memory(prim, engine());
        m_reorder = dir == Dir::In ? dnnl::reorder(m_user, m_prim) : dnnl::reorder(m_prim, m_user);
    } else {
        m_prim = m_user;
    }
}

const dnnl::memory &Arg::in(const void *p)
{
    m_user.set_data_handle(const_cast<void *>(p));
    if (m_reorders) FB_DNNL_CHECK(m_reorder.execute(stream(), m_user, m_prim));
    return m_prim;
}

const dnnl::memory &Arg::out(void *p)
{
    m_user.set_data_handle(p);
    return m_prim;
}

void Arg::finish()
{
    if (m_reorders) FB_DNNL_CHECK(m_reorder.execute(stream(), m_prim, m_user));
}

} // namespace fb::dnnlx
