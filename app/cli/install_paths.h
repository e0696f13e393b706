#pragma once

#include <string>
#include <vector>

namespace fb::cli {

// Files that Flowbench ships beside its programs, found the same way whether it runs installed
// (<bin>/../share/flowbench/, as the Debian package lays it out) or from a build tree (the
// source tree its CMakeCache.txt names, so that no path is compiled in).

// This program's own path, from /proc/self/exe; empty when it cannot be read.
std::string executablePath();

// The first of <bin>/../share/flowbench/<installed> and <source tree>/<inSource> that is a
// regular file; empty when neither is. `looked` gets the places tried.
std::string findShippedFile(const std::string &installed, const std::string &inSource,
                            std::vector<std::string> *looked = nullptr);

// `run fashion_mnist_cnn` or `run fashion_mnist_cnn.json` from any folder: a name with no
// folder in it that is not a file here is looked up among the example pipelines. Returns the
// argument itself otherwise, or when no example has that name.
std::string resolvePipelineArgument(const std::string &argument);

} // namespace fb::cli
