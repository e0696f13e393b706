#pragma once

namespace fb::cli {

// `flowbench-cli sweep PIPELINE --set-range NODE.PARAM=V1,V2,... ...` (docs/runs.md): one
// ordinary run per combination of the values (or N of them at random), K at a time, each in a
// `flowbench-cli run` child process of its own with a folder of its own in the runs folder,
// named after its values and tagged with the sweep's name; the sweep's record, SWEEP.sweep.json
// beside them, lists the trials and their results as they end. Exit 0 when every trial ran,
// 1 when one failed or the sweep was stopped, 2 for bad input (checked for every trial before
// any runs).
int sweep(int argc, char **argv);

} // namespace fb::cli
