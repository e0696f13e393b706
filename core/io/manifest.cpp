#include "core/io/manifest.h"

#include "core/io/sha256.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <sys/utsname.h>

namespace fb::io {

namespace fs = std::filesystem;
using nlohmann::json;

Result<json> dataFilesJson(const std::vector<std::string> &files)
{
    std::vector<std::string> sorted = files;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::vector<std::pair<std::string, FileDigest>> digests;
    for (const std::string &f : sorted) {
        // A file the source skipped as unreadable (a dangling link, no permission) is named
        // with "unreadable" for its digest: that it could not be read is part of the run.
        Result<FileDigest> d = sha256File(f);
        digests.emplace_back(f, d ? std::move(d).value() : FileDigest{-1, "unreadable"});
    }
    if (digests.size() <= kListedDataFiles) {
        json list = json::array();
        for (const auto &[path, d] : digests)
            list.push_back({{"path", path},
                            {"bytes", d.bytes >= 0 ? json(d.bytes) : json(nullptr)},
                            {"sha256", d.sha256}});
        return json{{"files", list}};
    }
    // The folder all of them are in: the longest common prefix, cut back to a whole folder.
    fs::path common = fs::path(digests.front().first).parent_path();
    for (const auto &[path, d] : digests) {
        while (!common.empty() && path.rfind(common.string() + "/", 0) != 0)
            common = common.parent_path() == common ? fs::path() : common.parent_path();
    }
    std::string lines;
    int64_t bytes = 0;
    for (const auto &[path, d] : digests) {
        const std::string rel =
            common.empty() ? path : fs::path(path).lexically_relative(common).string();
        lines += rel + "\t" + std::to_string(d.bytes) + "\t" + d.sha256 + "\n";
        bytes += std::max<int64_t>(d.bytes, 0);
    }
    return json{{"folder", common.string()},
                {"count", digests.size()},
                {"bytes", bytes},
                {"sha256", sha256Hex(lines)}};
}

std::string operatingSystem()
{
    std::string name;
    std::ifstream in("/etc/os-release");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("PRETTY_NAME=", 0) == 0) {
            name = line.substr(12);
            if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
                name = name.substr(1, name.size() - 2);
        }
    }
    struct utsname u {};
    if (::uname(&u) == 0) {
        const std::string kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
        name = name.empty() ? kernel : name + "; " + kernel;
    }
    return name.empty() ? "unknown" : name;
}

namespace {

void flatten(const json &j, const std::string &prefix, std::map<std::string, std::string> &out)
{
    if (j.is_object() && !j.empty()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        return;
    }
    out[prefix] = j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

std::vector<ManifestDifference> manifestDifferences(const json &original, const json &other)
{
    // When and where a run was made differ every time; they say nothing about its result.
    static const std::set<std::string> ignored = {"created", "out_dir", "format", "version"};
    std::map<std::string, std::string> a, b;
    flatten(original, "", a);
    flatten(other, "", b);
    std::set<std::string> keys;
    for (const auto &[k, v] : a)
        keys.insert(k);
    for (const auto &[k, v] : b)
        keys.insert(k);
    std::vector<ManifestDifference> out;
    for (const std::string &k : keys) {
        if (ignored.count(k)) continue;
        auto ia = a.find(k), ib = b.find(k);
        const std::string va = ia == a.end() ? "(none)" : ia->second;
        const std::string vb = ib == b.end() ? "(none)" : ib->second;
        if (va != vb) out.push_back({k, va, vb});
    }
    return out;
}

} // namespace fb::io
