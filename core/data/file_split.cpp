#include "core/data/file_split.h"

#include "core/base/bytes.h"
#include "core/base/rng.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include <unistd.h>

namespace fb::data {

namespace {

// How many of n go to validation: rounded, and never all of them while there are two or more.
size_t validationCount(size_t n, double fraction)
{
    if (n < 2) return 0;
    return size_t(std::clamp<int64_t>(std::llround(fraction * double(n)), 0, int64_t(n) - 1));
}

// The first `count` of a seeded permutation of [0, n).
std::set<size_t> drawn(size_t n, size_t count, uint64_t seed)
{
    std::vector<size_t> perm(n);
    for (size_t i = 0; i < n; ++i)
        perm[i] = i;
    Rng rng(seed);
    shuffleWith(perm, rng);
    return {perm.begin(), perm.begin() + std::ptrdiff_t(count)};
}

// The first `count` of `names` ranked by a seeded hash of each name alone. A speaker's rank does
// not depend on who else is in the folder, so a folder that gains speakers keeps its split: a
// newcomer takes a place only where its own hash ranks it, and pushes at most the last of the
// `count` out (and the rounded count may grow by one). A seeded shuffle of the whole list (drawn)
// drew a different set whenever one speaker more moved the indices: two voices added to the
// spoken-digits data set moved 40-odd voices between training and validation.
std::set<std::string> rankedFirst(const std::vector<std::string> &names, size_t count,
                                  uint64_t seed)
{
    std::vector<std::pair<uint64_t, const std::string *>> ranked;
    ranked.reserve(names.size());
    for (const std::string &n : names)
        ranked.emplace_back(mix64(fnv1a(n) ^ seed), &n);
    std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first < b.first : *a.second < *b.second;
    });
    std::set<std::string> out;
    for (size_t i = 0; i < count && i < ranked.size(); ++i)
        out.insert(*ranked[i].second);
    return out;
}

} // namespace

std::vector<LabelledFile> selectFiles(std::vector<LabelledFile> files, int32_t classes,
                                      const SplitOptions &o)
{
    std::sort(files.begin(), files.end(),
              [](const LabelledFile &a, const LabelledFile &b) { return a.path < b.path; });
    std::vector<std::vector<LabelledFile>> byClass(size_t(std::max(classes, 0)));
    if (o.subset == "all") {
        for (auto &f : files)
            byClass[size_t(f.label)].push_back(std::move(f));
    } else if (o.bySpeaker) {
        std::set<std::string> speakerSet;
        for (const auto &f : files)
            speakerSet.insert(f.speaker);
        const std::vector<std::string> speakers(speakerSet.begin(), speakerSet.end());
        std::set<std::string> validation;
        if (!o.validationSpeakers.empty()) {
            // Checked by the node before (validSpeakerPattern).
            const std::regex chosen(o.validationSpeakers);
            for (const std::string &s : speakers)
                if (std::regex_search(s, chosen)) validation.insert(s);
        } else {
            validation =
                rankedFirst(speakers, validationCount(speakers.size(), o.validationFraction),
                            mix64(o.splitSeed ^ 0x5eaced));
        }
        for (auto &f : files)
            if (validation.count(f.speaker) == (o.subset == "validation" ? 1u : 0u))
                byClass[size_t(f.label)].push_back(std::move(f));
    } else {
        // Per class, seeded by the split seed and the class alone (not the training seed), so
        // the validation files stay the same when the training seed changes.
        std::vector<std::vector<LabelledFile>> all(byClass.size());
        for (auto &f : files)
            all[size_t(f.label)].push_back(std::move(f));
        for (size_t c = 0; c < all.size(); ++c) {
            const std::set<size_t> held =
                drawn(all[c].size(), validationCount(all[c].size(), o.validationFraction),
                      mix64(o.splitSeed ^ mix64(uint64_t(c) + 1)));
            for (size_t i = 0; i < all[c].size(); ++i)
                if (held.count(i) == (o.subset == "validation" ? 1u : 0u))
                    byClass[c].push_back(std::move(all[c][i]));
        }
    }
    std::vector<LabelledFile> out;
    for (size_t i = 0;; ++i) {
        bool any = false;
        for (auto &cls : byClass)
            if (i < cls.size()) {
                out.push_back(std::move(cls[i]));
                any = true;
            }
        if (!any) break;
    }
    if (o.limit > 0 && int64_t(out.size()) > o.limit) out.resize(size_t(o.limit));
    return out;
}

namespace {

bool isHidden(const std::filesystem::path &p)
{
    const std::string name = p.filename().string();
    return !name.empty() && name[0] == '.';
}

Status checkFolder(const std::string &dir)
{
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) return fileError(dir, "no such folder");
    if (!std::filesystem::is_directory(dir, ec)) return fileError(dir, "is not a folder");
    return {};
}

} // namespace

Result<std::vector<std::string>> subfolders(const std::string &dir)
{
    FB_TRY(checkFolder(dir));
    std::error_code ec;
    std::vector<std::string> out;
    // The error_code forms throughout: a symbolic-link loop in the folder must not throw (it is
    // not a class folder; the files under the real ones are read as usual).
    for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
        std::error_code entry;
        if (e.is_directory(entry) && !isHidden(e.path()))
            out.push_back(e.path().filename().string());
    }
    if (ec) return fileError(dir, "cannot be listed: " + ec.message());
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::vector<std::string>> filesUnder(const std::string &dir)
{
    FB_TRY(checkFolder(dir));
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code entry;
        if (isHidden(it->path())) {
            if (it->is_directory(entry)) it.disable_recursion_pending();
            continue;
        }
        // A link that cannot be followed (a loop, or pointing nowhere) is listed like any file:
        // the reader then skips it as unreadable, says why, and counts it in the run's warning.
        const bool regular = it->is_regular_file(entry);
        if (regular || (entry && it->is_symlink(entry))) out.push_back(it->path().string());
    }
    if (ec) return fileError(dir, "cannot be listed: " + ec.message());
    return out;
}

LabelClasses classesOf(const std::vector<std::string> &labels)
{
    LabelClasses c;
    const bool numeric = std::all_of(labels.begin(), labels.end(), [](const std::string &l) {
        return !l.empty() && l.size() <= 6 &&
               std::all_of(l.begin(), l.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    });
    if (numeric) {
        int top = 0;
        for (const std::string &l : labels) {
            c.index[l] = std::stoi(l);
            top = std::max(top, c.index[l]);
        }
        for (int k = 0; k <= top; ++k)
            c.names.push_back(std::to_string(k));
        return c;
    }
    const std::set<std::string> names(labels.begin(), labels.end());
    c.names.assign(names.begin(), names.end());
    for (size_t k = 0; k < c.names.size(); ++k)
        c.index[c.names[k]] = int32_t(k);
    return c;
}

int64_t defaultCacheBytes()
{
    int64_t room = hostMemoryAvailable();
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && size > 0) {
        const int64_t total = int64_t(pages) * int64_t(size);
        room = room > 0 ? std::min(room, total) : total;
    }
    return room > 0 ? room / 4 : int64_t(1) << 30;
}

void forEachInParallel(size_t n, const std::function<void(size_t)> &fn)
{
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < n; i = next++)
            fn(i);
    };
    const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1,
                                              std::max<size_t>(1, std::min<size_t>(16, n)));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto &t : pool)
        t.join();
}

} // namespace fb::data
