#pragma once

namespace fb::cli {

// `flowbench-cli listen MODEL (FILE | --mic)` (docs/audio.md, "Listen"): keyword spotting over
// a recording or the microphone with one model loaded once (core/exec/listen.h). Detections as
// JSON lines on stdout, {"kind": "detection", "time", "class", ...}; with --windows every window
// too; the last line is {"kind": "summary", "status", "windows", "detections", "latency_ms"}.
int listen(int argc, char **argv);

} // namespace fb::cli
