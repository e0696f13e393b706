#pragma once

#include "core/base/result.h"
#include "core/tensor/tensor.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fb::io {

// Named tensors in a chosen order (a checkpoint lists parameters in model order).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {string: string}} padded with spaces to 8 bytes, then the raw little-endian
// tensor data, contiguous in the order given. Files load in the Python library and vice versa.
//
// Written atomically: to `path + ".tmp"`, flushed and fsynced, then renamed over `path`, so a
// crash mid-write never leaves a half checkpoint under the real name. Tensors must be defined
// and on the CPU; names must be unique, non-empty and not "__metadata__".
Status writeSafetensors(const std::string &path, const NamedTensors &tensors,
                        const std::map<std::string, std::string> &metadata = {});

struct SafetensorsFile {
    NamedTensors tensors; // in header order
    std::map<std::string, std::string> metadata;

    const Tensor *find(const std::string &name) const; // nullptr when absent
};

// Validates everything (header length against the file size, the JSON, dtype names, shapes,
// offsets in range, matching shape * dtype size, no overlaps, no duplicate names) and returns a
// fileError naming `path` on any problem; a truncated or garbage file never crashes it and never
// makes it allocate more than the file holds.
Result<SafetensorsFile> readSafetensors(const std::string &path);

} // namespace fb::io
