#pragma once

namespace fb::cli {

// `flowbench-cli listen MODEL (FILE | --mic)` (docs/audio.md, "Listen"): keyword spotting over
// a recording or the microphone with one model loaded once (core/exec/listen.h). Detections as
// JSON lines on stdout, {"kind": "detection", "time", "class", ...}; with --windows every window
// too; the last line is {"kind": "summary", "status", "windows", "detections", "latency_ms"}.
int listen(int argc, char **argv);

// `flowbench-cli held-out-stream MODEL OUT.wav`: the run's held-out recordings one after another
// as one recording and its labels (OUT.txt), to tune listen on (core/exec/listen_stream.h).
int heldOutStream(int argc, char **argv);

} // namespace fb::cli
