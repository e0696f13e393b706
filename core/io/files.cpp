#include "core/io/files.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include <fcntl.h>
#include <unistd.h>

namespace fb::io {

namespace fs = std::filesystem;

void syncDirectory(const fs::path &dir)
{
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

Status writeFileAtomically(const fs::path &path, std::string_view text)
{
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + string + ".tmp" here.
    std::string name = ".";
    name += path.filename().string();
    name += ".tmp";
    const fs::path tmp = path.parent_path() / name;
    std::FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) return fileError(tmp.string(), "cannot create the file");
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fflush(f) == 0 && ok;
    ok = ::fsync(fileno(f)) == 0 && ok;
    ok = std::fclose(f) == 0 && ok;
    std::error_code ec;
    if (ok) fs::rename(tmp, path, ec);
    if (!ok || ec) {
        fs::remove(tmp, ec);
        return fileError(path.string(), "cannot write the file");
    }
    syncDirectory(path.parent_path());
    return {};
}

Result<std::string> readWholeFile(const fs::path &path)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return fileError(path.string(), "no such file");
    std::ifstream in(path, std::ios::binary);
    if (!in) return fileError(path.string(), "cannot be opened");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return fileError(path.string(), "cannot be read");
    return text;
}

} // namespace fb::io
