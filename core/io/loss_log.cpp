#include "core/io/loss_log.h"

#include "core/io/files.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace fb::io {

namespace {

constexpr const char *kHeader = "step,loss";

struct Line {
    int64_t step = 0;
    float loss = 0;
};

// One "step,loss" line; false when it is not one.
bool parseLine(const std::string &line, Line &out)
{
    const size_t comma = line.find(',');
    if (comma == std::string::npos || comma == 0) return false;
    const std::string stepText = line.substr(0, comma), lossText = line.substr(comma + 1);
    char *end = nullptr;
    errno = 0;
    const long long step = std::strtoll(stepText.c_str(), &end, 10);
    if (*end || errno || step < 1) return false;
    end = nullptr;
    const float loss = std::strtof(lossText.c_str(), &end);
    if (lossText.empty() || *end) return false;
    out = {step, loss};
    return true;
}

} // namespace

std::string lossText(float loss)
{
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.9g", double(loss));
    return buf;
}

LossLog::~LossLog()
{
    close();
}

Status LossLog::open(const std::string &path, int64_t firstStep)
{
    close();
    std::string kept = std::string(kHeader) + "\n";
    if (firstStep > 0) {
        // A resume: keep what the run wrote up to its checkpoint. A damaged file keeps what
        // reads well up to there (the reproduction then compares fewer steps, and says so).
        Result<std::string> text = readWholeFile(path);
        if (text) {
            std::istringstream in(*text);
            std::string line;
            int64_t expected = 1;
            while (std::getline(in, line) && expected <= firstStep) {
                Line l;
                if (line == kHeader) continue;
                if (!parseLine(line, l) || l.step != expected) break;
                kept += line + "\n";
                ++expected;
            }
        }
    }
    FB_TRY(writeFileAtomically(path, kept));
    m_file = std::fopen(path.c_str(), "a");
    if (!m_file) return fileError(path, "cannot be opened to append the losses");
    return {};
}

void LossLog::append(int64_t step, float loss)
{
    if (!m_file) return;
    std::fprintf(m_file, "%lld,%s\n", (long long)step, lossText(loss).c_str());
}

void LossLog::flush()
{
    if (m_file) std::fflush(m_file);
}

void LossLog::close()
{
    if (m_file) std::fclose(m_file);
    m_file = nullptr;
}

Result<std::vector<float>> readLossLog(const std::string &path)
{
    Result<std::string> text = readWholeFile(path);
    if (!text) return std::move(text.error());
    std::istringstream in(*text);
    std::string line;
    std::vector<float> losses;
    int lineNo = 0;
    // A run that was killed may have left its last line cut short, without a newline.
    const bool complete = text->empty() || text->back() == '\n';
    while (std::getline(in, line)) {
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || (lineNo == 1 && line == kHeader)) continue;
        Line l;
        if (!parseLine(line, l)) {
            if (!complete && in.peek() == std::char_traits<char>::eof()) break;
            return fileError(path, "not a step,loss line: '" + line + "'", lineNo);
        }
        if (l.step != int64_t(losses.size()) + 1)
            return fileError(path,
                             "step " + std::to_string(l.step) + " where step " +
                                 std::to_string(losses.size() + 1) + " was expected",
                             lineNo);
        losses.push_back(l.loss);
    }
    return losses;
}

} // namespace fb::io
