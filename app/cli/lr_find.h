#pragma once

namespace fb::cli {

// `flowbench-cli lr-find PIPELINE` (docs/runs.md): the learning-rate range test. Trains from
// the initial weights for a number of steps with the rate growing geometrically over a range,
// until the loss diverges, and suggests the rate where the smoothed loss falls fastest. Writes
// nothing; the optimizer's value is never changed, only suggested.
int lrFind(int argc, char **argv);

} // namespace fb::cli
