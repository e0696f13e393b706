#!/usr/bin/env python3
"""Per-window latency of keyword spotting: `flowbench-cli listen` (one process, the model loaded
once, every window through it) against the path it replaces, one `flowbench-cli infer` process
per 1-second clip (what the window's hold-to-talk button did for every take).

    python3 bench/listen_latency.py                       # trains the example 2 epochs first
    python3 bench/listen_latency.py --model runs/<run> --save

Both sides run on --threads cores (default 2: the CPU affinity of every child process; listen's
own model threads are its default, 1, except in the row that says otherwise), on the
same recording: tests/make_listen_recording.sh's digits and other words among noise and silence
(--words, default 120: about 3 minutes). For `listen` the latency of a window is the time from
having its samples to having its probabilities (preprocessing and the forward pass), as the
program measures it; for the per-clip path it is the whole process's wall time for one clip
(start, load the model, decode, predict), as a person pressing the button waits for it.
Required by issue 19: listen's p99 under 50 ms on 2 cores.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# FLOWBENCH_CLI: another binary (an installed one, or a copy that a rebuild cannot replace while
# a long measurement runs).
CLI = os.environ.get("FLOWBENCH_CLI") or os.path.join(ROOT, "build", "bin", "flowbench-cli")


def cores(n):
    allowed = sorted(os.sched_getaffinity(0))
    return set(allowed[:n])


def on_cores(threads):
    """What pins a child process to the first `threads` cores, with OpenMP told as much."""
    return {"preexec_fn": lambda: os.sched_setaffinity(0, cores(threads)),
            "env": {**os.environ, "OMP_NUM_THREADS": str(threads)}}


def run(cmd, threads, **kw):
    return subprocess.run(cmd, **on_cores(threads), **kw)


def train_example(model, data, epochs, threads):
    """Trains resources/examples/spoken_digits.json on `data` into the run folder `model`."""
    print(f"training the spoken-digits example for {epochs} epochs ...", file=sys.stderr)
    r = run([CLI, "run", os.path.join(ROOT, "resources/examples/spoken_digits.json"),
             "--device", "cpu", "--threads", str(threads), "--set", f"train.epochs={epochs}",
             "--set", f"train_data.path={data}", "--set", f"test_data.path={data}",
             "--out", model], threads, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        sys.exit("training failed")


def save_report(text, name):
    """Writes bench/results/NAME.md and says where."""
    path = os.path.join(ROOT, "bench", "results", f"{name}.md")
    with open(path, "w") as f:
        f.write(text)
    print(f"saved {path}", file=sys.stderr)


def percentile(values, q):
    v = sorted(values)
    i = max(0, min(len(v) - 1, int(-(-q * len(v) // 1)) - 1))
    return v[i]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="a run folder of a model trained on recordings "
                    "(default: train resources/examples/spoken_digits.json for --epochs)")
    ap.add_argument("--data", default=os.path.expanduser("~/.local/share/flowbench/spoken_digits"),
                    help="the spoken-digits recordings, for training the model")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--words", type=int, default=120)
    ap.add_argument("--clips", type=int, default=40, help="per-clip processes timed")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save", action="store_true", help="write bench/results/listen-<time>.md")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="flowbench-listen-")
    model = a.model
    if not model:
        model = os.path.join(tmp, "run")
        train_example(model, a.data, a.epochs, a.threads)
    rec, truth = os.path.join(tmp, "rec.wav"), os.path.join(tmp, "rec.tsv")
    subprocess.run(["bash", os.path.join(ROOT, "tests/make_listen_recording.sh"), rec, truth,
                    str(a.words)], check=True)

    # listen: one process for the whole recording, each window heard three ways (the default
    # --warp) and once (--warp 0).
    def listen(warp):
        t0 = time.monotonic()
        r = run([CLI, "listen", model, rec, "--windows", "--warp", str(warp)], a.threads,
                capture_output=True, text=True)
        wall = time.monotonic() - t0
        if r.returncode != 0:
            sys.exit(r.stderr)
        lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
        return [l["ms"] for l in lines if l.get("kind") == "window"], lines[-1], wall

    windows, summary, wall = listen(0.08)
    once, _, wall_once = listen(0)

    # Two listeners at once on the same cores (two models or two microphones, or one beside
    # another program's OpenMP threads), on the recording's first minute, each window heard
    # three ways (the default): with listen's default of one thread each, and with a thread per
    # core each, as before 2026-12-01, when OpenMP's waiting threads spun on the cores that the
    # other listener needed (a minute took up to 4 minutes then).
    minute = os.path.join(tmp, "minute.wav")
    subprocess.run(["sox", "-q", rec, minute, "trim", "0", "60"], check=True)

    def pair(threads):
        cmd = [CLI, "listen", model, minute, "--windows", "--threads", str(threads)]
        t0 = time.monotonic()
        procs = [subprocess.Popen(cmd, **on_cores(a.threads), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True) for _ in range(2)]
        outs = [p.communicate()[0] for p in procs]
        wall = time.monotonic() - t0
        if any(p.returncode != 0 for p in procs):
            sys.exit("listen failed beside another listener")
        lines = [json.loads(l) for out in outs for l in out.splitlines() if l.strip()]
        return [l["ms"] for l in lines if l.get("kind") == "window"], wall

    pair_one, wall_pair_one = pair(1)
    pair_all, wall_pair_all = pair(a.threads)
    seconds = summary["seconds"]

    # The path it replaces: a process per 1-second clip, cut from the same recording.
    per_clip = []
    for i in range(a.clips):
        clip = os.path.join(tmp, f"clip{i}.wav")
        start = (i + 0.5) * (seconds - 1) / a.clips
        subprocess.run(["sox", "-q", rec, clip, "trim", f"{start:.3f}", "1"], check=True)
        t = time.monotonic()
        c = run([CLI, "infer", model, clip], a.threads, capture_output=True)
        per_clip.append(1000 * (time.monotonic() - t))
        if c.returncode != 0:
            sys.exit(c.stderr.decode())

    def row(name, v, note):
        return (f"| {name} | {len(v)} | {statistics.median(v):.2f} | {percentile(v, 0.99):.2f} | "
                f"{max(v):.2f} | {note} |")

    p99 = percentile(windows, 0.99)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    out = [
        f"# Keyword-spotting latency, {stamp}",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {a.threads} cores "
        f"(CPU affinity), {os.cpu_count()} online. Recording: {seconds:.1f} s, {len(windows)} "
        f"windows of 1 s every 100 ms. Model: {model}.",
        "",
        "| path | windows or clips | p50 ms | p99 ms | max ms | what is timed |",
        "|---|---:|---:|---:|---:|---|",
        row("`listen` (one process)", windows,
            "preprocessing + forward of one window, heard three ways (--warp 0.08, the default)"),
        row("`listen --warp 0`", once, "the same, heard once"),
        row("two `listen` at once (1 thread each, the default)", pair_one,
            f"as the first row, both listeners' windows of the first 60 s; both done in "
            f"{wall_pair_one:.1f} s"),
        row(f"two `listen --threads {a.threads}` at once", pair_all,
            f"the same with a thread per core each; both done in {wall_pair_all:.1f} s"),
        row("`infer` per clip (one process each)", per_clip,
            "start, load the model, decode, predict"),
        "",
        f"listen: the whole {seconds:.1f} s recording in {wall:.2f} s of wall time "
        f"({seconds / wall:.0f}x real time; {seconds / wall_once:.0f}x with --warp 0), "
        f"{summary['detections']} detections. "
        f"p99 per window {p99:.2f} ms: {'meets' if p99 < 50 else 'MISSES'} the 50 ms requirement; "
        f"the per-clip path's p50 is {statistics.median(per_clip) / statistics.median(windows):.0f}x "
        "listen's.",
        "",
        f"Command: `python3 bench/listen_latency.py{' --model ' + a.model if a.model else ''} "
        f"--threads {a.threads} --words {a.words} --clips {a.clips}`",
    ]
    text = "\n".join(out) + "\n"
    print(text)
    if a.save:
        save_report(text, f"listen-{stamp}")


if __name__ == "__main__":
    main()
