#!/usr/bin/env python3
"""Responsiveness benchmark: does the window stay smooth while it watches a run at full speed,
and does watching slow the run?

Runs the CNN example for one epoch on 2 threads, interleaving per round (the order alternating,
ABBA): headless `flowbench-cli run`, and the window, `flowbench PIPELINE --run --quit-when-done
--report FILE`, which trains the same pipeline in its flowbench-cli child process while a 10 ms
timer on its GUI thread records how late it fires (a stall the person would feel). Prints:

  - the GUI thread's stalls: p99 and the maximum over all rounds, against the requirement p99
    <= 16 ms and never over 50 ms;
  - samples/s headless and with the window watching, and their ratio (median of the per-round
    paired ratios), against the requirement >= 0.97.

  python3 bench/gui_responsiveness.py                    # 3 rounds, offscreen platform
  python3 bench/gui_responsiveness.py --xvfb --save      # a real X server (Xvfb), keep the table
  python3 bench/gui_responsiveness.py --limit 6000 --rounds 1   # a quick look, not a figure

The window draws everything on the offscreen platform as it would on a screen (Qt's raster
engine), so the figure holds for a desktop; --xvfb runs it under Xvfb instead. Standard library
only; shares its runner helpers with bench/cpu_vs_peer.py. Exit status: 0 when every run
completed (with --strict, 3 when a requirement FAILs), 1 when a run failed, 2 on bad usage.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_peer import RunFailed, git_revision, log, number, run_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINE = os.path.join("resources", "examples", "fashion_mnist_cnn.json")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, metavar="K",
                    help="train on the first K samples only (quick runs; not a qualifying figure)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build folder holding bin/flowbench and bin/flowbench-cli")
    ap.add_argument("--xvfb", action="store_true",
                    help="run the window on an Xvfb server instead of the offscreen platform")
    ap.add_argument("--max-p99", type=float, default=16.0, help="allowed p99 stall, ms")
    ap.add_argument("--max-stall", type=float, default=50.0, help="allowed worst stall, ms")
    ap.add_argument("--min-ratio", type=float, default=0.97,
                    help="required samples/s with the window / headless")
    ap.add_argument("--save", action="store_true", help="also write bench/results/gui-*.md")
    ap.add_argument("--strict", action="store_true")
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.threads < 1:
        ap.error("--rounds and --threads must be at least 1")
    a.cli = os.path.abspath(os.path.join(a.build, "bin", "flowbench-cli"))
    a.gui = os.path.abspath(os.path.join(a.build, "bin", "flowbench"))
    for exe in (a.cli, a.gui):
        if not os.access(exe, os.X_OK):
            ap.error(f"not found: {exe} (build first)")
    if a.xvfb and not shutil.which("Xvfb"):
        ap.error("--xvfb needs Xvfb (apt-get install xvfb)")
    return a


def settings(a):
    s = ["--threads", str(a.threads), "--set", "train.epochs=1"]
    if a.limit is not None:
        s += ["--set", f"train_data.limit={a.limit}"]
    return s


def env_for(a, tmp):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(a.threads)
    # A fresh settings folder: the window opens with its default layout, and the user's own
    # preferences are neither read nor written.
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
    env["XDG_DATA_HOME"] = os.path.join(tmp, "data")
    env["FLOWBENCH_CLI"] = a.cli
    return env


def run_headless(a, rnd, tmp):
    label = f"round {rnd}/{a.rounds} headless"
    cmd = [a.cli, "run", PIPELINE, "--out", os.path.join(tmp, "headless")] + settings(a)
    s = run_json(label, cmd, env_for(a, tmp))
    if s.get("status") != "ok":
        raise RunFailed(f"{label}: status {s.get('status')!r}, error {json.dumps(s.get('error'))}")
    return {"sps": number(s, "train_samples_per_s", label)}


def run_window(a, rnd, tmp, display):
    label = f"round {rnd}/{a.rounds} window"
    report = os.path.join(tmp, "report.json")
    cmd = [a.gui, PIPELINE, "--run", "--quit-when-done", "--report", report,
           "--runs-dir", os.path.join(tmp, "runs")] + settings(a)
    env = env_for(a, tmp)
    if display:
        env["DISPLAY"] = display
        env["QT_QPA_PLATFORM"] = "xcb"
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    log(f"{label}: {' '.join(cmd)}")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not os.path.exists(report):
        raise RunFailed(f"{label}: exit status {proc.returncode}\n{proc.stderr[-2000:]}")
    with open(report) as f:
        r = json.load(f)
    log(f"{label}: done in {time.perf_counter() - t0:.1f} s")
    st = r["gui_stalls"]
    return {"sps": number(r["summary"], "train_samples_per_s", label),
            "p99": float(st["p99_ms"]), "max": float(st["max_ms"]),
            "over16": int(st["over_16ms"]), "over50": int(st["over_50ms"]),
            "samples": int(st["samples"]),
            "cpu": float(st.get("cpu_s", 0)) / max(float(st.get("seconds", 1)), 1e-9)}


def start_xvfb():
    for n in range(90, 110):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1600x1000x24", "-nolisten",
                                     "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(50):
                if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                    return proc, f":{n}"
                time.sleep(0.1)
            proc.kill()
    raise RunFailed("could not start Xvfb")


def main(argv):
    a = parse_args(argv)
    xvfb, display = (None, None)
    headless, window = [], []
    try:
        if a.xvfb:
            xvfb, display = start_xvfb()
        for rnd in range(1, a.rounds + 1):
            with tempfile.TemporaryDirectory(prefix="flowbench-bench-gui-") as tmp:
                if rnd % 2:
                    headless.append(run_headless(a, rnd, tmp))
                    window.append(run_window(a, rnd, tmp, display))
                else:
                    window.append(run_window(a, rnd, tmp, display))
                    headless.append(run_headless(a, rnd, tmp))
    except RunFailed as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    finally:
        if xvfb:
            xvfb.kill()

    med = statistics.median
    ratio = med([w["sps"] / h["sps"] for w, h in zip(window, headless)])
    p99 = max(w["p99"] for w in window)
    worst = max(w["max"] for w in window)
    stall_ok = p99 <= a.max_p99 and worst <= a.max_stall
    ratio_ok = ratio >= a.min_ratio
    where = "Xvfb" if a.xvfb else "offscreen platform"
    lines = [
        f"## Window responsiveness: CNN, 1 epoch{f' on {a.limit} samples' if a.limit else ''}, "
        f"{a.threads} threads, {a.rounds} rounds, {where}",
        "",
        "| round | headless samples/s | window samples/s | ratio | GUI p99 stall | worst stall "
        "| ticks > 16 ms | ticks | window's own CPU |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, (h, w) in enumerate(zip(headless, window)):
        lines.append(f"| {i + 1} | {h['sps']:,.0f} | {w['sps']:,.0f} | {w['sps'] / h['sps']:.3f} "
                     f"| {w['p99']:.2f} ms | {w['max']:.1f} ms | {w['over16']} | {w['samples']:,} "
                     f"| {100 * w['cpu']:.1f}% of a core |")
    lines += [
        "",
        f"- GUI thread stalls: p99 **{p99:.2f} ms** (worst round; requirement <= {a.max_p99:g}), "
        f"worst **{worst:.1f} ms** (requirement <= {a.max_stall:g}): "
        f"{'PASS' if stall_ok else 'FAIL'}",
        f"- samples/s with the window watching / headless: **{ratio:.3f}** (median of paired "
        f"rounds; requirement >= {a.min_ratio:g}): {'PASS' if ratio_ok else 'FAIL'}",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs; git {git_revision()}. Command: "
        f"`python3 bench/gui_responsiveness.py {' '.join(argv)}`",
    ]
    report = "\n".join(lines)
    print(report)
    if a.save:
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        name = datetime.datetime.now().strftime("gui-%Y%m%d-%H%M.md")
        with open(os.path.join(ROOT, "bench", "results", name), "w") as f:
            f.write(report + "\n")
        log(f"saved bench/results/{name}")
    if a.strict and not (stall_ok and ratio_ok):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
