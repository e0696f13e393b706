#pragma once

#include <string>
#include <string_view>

namespace fb {

// Text from a file, a folder or a command line (a node id, a parameter name, a file name) made
// safe to quote in a one-line message for people. A NUL would cut a C string (and the message)
// short, a newline would forge a second line, an ESC would drive the terminal, and the invisible
// bidirectional controls (U+202A..U+202E overrides, U+2066..U+2069 isolates, U+200E/U+200F/U+061C
// marks) and U+2028/U+2029 separators would make a line display in another order than it reads,
// so a message could show one name while meaning another. Control bytes (C0 and DEL) and bytes
// that are not UTF-8 become \xNN; C1 controls and those code points become \u{NNNN}. Everything
// else (other scripts included) stays as it is. Backslashes are kept, so applying it twice
// changes nothing more.
std::string safeText(std::string_view text);

} // namespace fb
