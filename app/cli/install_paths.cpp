#include "app/cli/install_paths.h"

#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

namespace fb::cli {

namespace fs = std::filesystem;

std::string executablePath()
{
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.string();
}

namespace {

fs::path executableDir()
{
    return fs::path(executablePath()).parent_path();
}

// The source tree a build tree was configured from, as its CMakeCache.txt says.
fs::path sourceTreeOf(const fs::path &buildDir)
{
    std::ifstream cache(buildDir / "CMakeCache.txt");
    constexpr std::string_view key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    for (std::string line; std::getline(cache, line);)
        if (line.starts_with(key)) return fs::path(line.substr(key.size()));
    return {};
}

} // namespace

std::string findShippedFile(const std::string &installed, const std::string &inSource,
                            std::vector<std::string> *looked)
{
    const fs::path bin = executableDir();
    std::vector<fs::path> candidates{bin / ".." / "share" / "flowbench" / installed};
    // A build tree has bin/ and CMakeCache.txt at its top.
    if (const fs::path src = sourceTreeOf(bin.parent_path()); !src.empty())
        candidates.push_back(src / inSource);
    for (const fs::path &c : candidates) {
        const fs::path p = c.lexically_normal();
        if (looked) looked->push_back(p.string());
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    return {};
}

std::string resolvePipelineArgument(const std::string &argument)
{
    std::error_code ec;
    if (argument.empty() || argument.find('/') != std::string::npos || fs::exists(argument, ec))
        return argument;
    const std::string file = argument.ends_with(".json") ? argument : argument + ".json";
    const std::string found = findShippedFile("examples/" + file, "resources/examples/" + file);
    return found.empty() ? argument : found;
}

} // namespace fb::cli
