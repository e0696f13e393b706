#include "core/io/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace fb::io {

namespace {

struct DigestContext {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
    DigestContext() { EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr); }
    void add(const void *data, size_t n) { EVP_DigestUpdate(ctx.get(), data, n); }
    std::string hex()
    {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(ctx.get(), md, &len);
        static const char *digits = "0123456789abcdef";
        std::string out;
        for (unsigned int i = 0; i < len; ++i) {
            out += digits[md[i] >> 4];
            out += digits[md[i] & 15];
        }
        return out;
    }
};

} // namespace

std::string sha256Hex(std::string_view bytes)
{
    DigestContext d;
    d.add(bytes.data(), bytes.size());
    return d.hex();
}

Result<FileDigest> sha256File(const std::string &path)
{
    std::unique_ptr<std::FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "rb"),
                                                         &std::fclose);
    if (!f) return fileError(path, "cannot be opened to compute its SHA-256");
    DigestContext d;
    std::vector<char> buffer(size_t(1) << 20);
    FileDigest out;
    while (true) {
        const size_t n = std::fread(buffer.data(), 1, buffer.size(), f.get());
        if (n > 0) {
            d.add(buffer.data(), n);
            out.bytes += int64_t(n);
        }
        if (n < buffer.size()) break;
    }
    if (std::ferror(f.get())) return fileError(path, "cannot be read to compute its SHA-256");
    out.sha256 = d.hex();
    return out;
}

} // namespace fb::io
