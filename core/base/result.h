#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace fb {

// A recoverable failure: a message for people, and where known the pipeline node (and port or
// parameter) or the input file and line at fault. Programmer errors assert instead.
struct Error {
    std::string message;
    std::string node; // node id, optionally "node.port" or "node.param"
    std::string file; // input file at fault
    int line = 0;     // line in that file, 0 when unknown

    // "node 'conv1': message" / "file.idx: message" / "message", as one line that is safe to
    // print: control and bidirectional characters of ids, file names and the message are
    // escaped (safeText), so a NUL in an id cannot cut the line short nor an U+202E reorder it.
    std::string str() const;
    // The node part of `node` ("conv1" of "conv1.out_channels"): ids have no '.'.
    std::string nodeId() const { return node.substr(0, node.find('.')); }
};

Error makeError(std::string message);
Error nodeError(std::string node, std::string message);
Error fileError(std::string file, std::string message, int line = 0);

// Result<T> holds a value or an Error. Result<void> holds nothing or an Error.
template <class T> class [[nodiscard]] Result {
public:
    Result(T value)
        : m_v(std::move(value))
    {}
    Result(Error error)
        : m_v(std::move(error))
    {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T &value() &
    {
        assert(ok());
        return std::get<0>(m_v);
    }
    const T &value() const &
    {
        assert(ok());
        return std::get<0>(m_v);
    }
    T &&value() &&
    {
        assert(ok());
        return std::get<0>(std::move(m_v));
    }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }

    const Error &error() const
    {
        assert(!ok());
        return std::get<1>(m_v);
    }
    Error &error()
    {
        assert(!ok());
        return std::get<1>(m_v);
    }

private:
    std::variant<T, Error> m_v;
};

template <> class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error)
        : m_error(std::move(error))
        , m_ok(false)
    {}

    bool ok() const { return m_ok; }
    explicit operator bool() const { return ok(); }
    const Error &error() const
    {
        assert(!m_ok);
        return m_error;
    }
    Error &error()
    {
        assert(!m_ok);
        return m_error;
    }

private:
    Error m_error;
    bool m_ok = true;
};

using Status = Result<void>;

} // namespace fb

// Propagates the error of an expression returning Result<...>.
#define FB_TRY(expr)                                                                               \
    do {                                                                                           \
        auto fb_try_result_ = (expr);                                                              \
        if (!fb_try_result_.ok()) return std::move(fb_try_result_.error());                        \
    } while (0)
