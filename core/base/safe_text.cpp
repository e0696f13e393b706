#include "core/base/safe_text.h"

#include <cstdint>
#include <cstdio>

namespace fb {

namespace {

// The code point of the UTF-8 sequence at text[i] and its length, or length 0 when the bytes
// there are not well-formed UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
std::pair<char32_t, size_t> decodeUtf8(std::string_view text, size_t i)
{
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    size_t length = 0;
    char32_t cp = 0, least = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        length = 2, cp = b0 & 0x1F, least = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        length = 3, cp = b0 & 0x0F, least = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        length = 4, cp = b0 & 0x07, least = 0x10000;
    } else {
        return {0, 0};
    }
    if (i + length > text.size()) return {0, 0};
    for (size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) return {0, 0};
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
    return {cp, length};
}

// Code points that change how the rest of a line is displayed, or end it, without showing.
bool reordersOrBreaksLines(char32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) ||     // C1 controls
           cp == 0x061C ||                   // Arabic letter mark
           cp == 0x200E || cp == 0x200F ||   // left-to-right and right-to-left marks
           (cp >= 0x2028 && cp <= 0x202E) || // line/paragraph separators, embeddings, overrides
           (cp >= 0x2066 && cp <= 0x2069);   // isolates
}

} // namespace

std::string safeText(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    char buf[16];
    for (size_t i = 0; i < text.size();) {
        const unsigned char b = static_cast<unsigned char>(text[i]);
        if (b < 0x80) {
            if (b < 0x20 || b == 0x7F) {
                std::snprintf(buf, sizeof buf, "\\x%02X", b);
                out += buf;
            } else {
                out += char(b);
            }
            ++i;
            continue;
        }
        const auto [cp, length] = decodeUtf8(text, i);
        if (length == 0) {
            std::snprintf(buf, sizeof buf, "\\x%02X", b);
            out += buf;
            ++i;
        } else if (reordersOrBreaksLines(cp)) {
            std::snprintf(buf, sizeof buf, "\\u{%04X}", unsigned(cp));
            out += buf;
            i += length;
        } else {
            out.append(text.substr(i, length));
            i += length;
        }
    }
    return out;
}

} // namespace fb
