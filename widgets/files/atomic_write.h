#pragma once

#include <string>
#include <string_view>

#include <QString>

#include "core/base/result.h"

namespace fb::widgets {

// Writes a whole file atomically (QSaveFile: a temporary beside it, renamed over it on success),
// so a failed or interrupted write leaves an existing file whole. `what` names the file for
// people ("the pipeline", "the run log"); the error names the path and the reason.
Status writeFileAtomically(const QString &path, std::string_view bytes, std::string_view what);

} // namespace fb::widgets
