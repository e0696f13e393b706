#pragma once

#include "core/base/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fb::io {

// manifest.json: what a run ran with, so that it can be run again and, where it differs, the
// difference named (docs/runs.md). Built by the engine (core/exec/run_manifest.h); these are
// its pieces that know nothing of pipelines.

// Up to this many files of one data source are listed one by one (path, bytes, sha256); more
// (a folder of pictures or recordings) get one digest for them all.
inline constexpr size_t kListedDataFiles = 8;

// The files one data source read: {"files": [{"path", "bytes", "sha256"}]}, or for many files
// {"folder": their common folder, "count", "bytes", "sha256"}, where the digest is the SHA-256
// of one line "relative path\tbytes\tsha256" per file, sorted by path. A file that cannot be
// read (one its source skipped) has "unreadable" for its digest and -1 (null) for its size.
Result<nlohmann::json> dataFilesJson(const std::vector<std::string> &files);

// "Debian GNU/Linux 12 (bookworm); Linux 6.1.0-x86_64": /etc/os-release's PRETTY_NAME and
// uname's kernel release and machine.
std::string operatingSystem();

struct ManifestDifference {
    std::string key;             // "device.name", "data.train_data.sha256", "software.onednn"
    std::string original, other; // as JSON text; "(none)" where one side lacks it
};

// What differs between two manifests, key by key (objects flattened with '.', arrays whole).
// Keys that differ from run to run by nature (when it was made, the output folder) are left
// out.
std::vector<ManifestDifference> manifestDifferences(const nlohmann::json &original,
                                                    const nlohmann::json &other);

} // namespace fb::io
