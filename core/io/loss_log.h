#pragma once

#include "core/base/result.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fb::io {

// Every training step's loss, as the run folder's losses.csv: a header line "step,loss", then
// one line per step. The loss is printed with 9 significant digits, which give a float32 back
// bit for bit (a float has at most 9 significant decimal digits that matter), so the file is
// both readable and exact: `flowbench-cli reproduce` compares two runs with it. The progress
// events carry means over several steps and cannot serve for that.
class LossLog {
public:
    LossLog() = default;
    LossLog(const LossLog &) = delete;
    LossLog &operator=(const LossLog &) = delete;
    ~LossLog();

    // Opens `path` for a run whose first step is firstStep + 1: the lines of steps 1..firstStep
    // that an earlier part of the run (before a resume) wrote are kept, later ones (steps trained
    // after the checkpoint it resumes from) are dropped, as the run trains them again.
    Status open(const std::string &path, int64_t firstStep);
    void append(int64_t step, float loss);
    void flush();
    void close();

private:
    std::FILE *m_file = nullptr;
};

// The losses of steps 1..N from a losses.csv (element i is step i + 1). A gap, a step out of
// order, or a value that is not a number is an error naming the line.
Result<std::vector<float>> readLossLog(const std::string &path);

// The loss as losses.csv writes it ("%.9g").
std::string lossText(float loss);

} // namespace fb::io
