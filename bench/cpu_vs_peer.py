#!/usr/bin/env python3
"""CPU benchmark: Flowbench against the PyTorch peer on the reference workloads.

For each model, runs ours (build/bin/flowbench-cli) and the peer (shared/bench/peer_torch.py)
interleaved -- ours, peer, ours, peer -- on the same machine with the same thread count, then
prints one markdown table per model: training samples/s (median), the ratio ours/peer (median
of the per-round ratios), test accuracy of both and their difference, and PASS/FAIL against
the requirement (ratio >= 2.0 and accuracy >= peer's - 0.5 points). See bench/README.md.

  python3 bench/cpu_vs_peer.py                          # mlp and cnn, 2 rounds, 1 epoch
  python3 bench/cpu_vs_peer.py --models cnn --rounds 3 --save
  python3 bench/cpu_vs_peer.py --limit 2000 --rounds 1  # quick smoke run, not a real figure

Standard library only. Exit status: 0 when every run completed (whatever the verdict; with
--strict, 3 when a model FAILs), 1 when a run failed, 2 on bad usage.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ("mlp", "cnn")


class RunFailed(Exception):
    pass


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def add_runner_args(ap):
    """The arguments every comparison with the peer shares (this script and gpu_vs_peer.py):
    the data, our runner and its extra settings, the peer script, the accuracy bound."""
    ap.add_argument("--limit", type=int, default=None, metavar="K",
                    help="train on the first K samples only (quick runs; not a qualifying figure)")
    ap.add_argument("--data", default=None, metavar="DIR",
                    help="Fashion-MNIST folder for both sides (default: each side's own default, "
                         "/usr/share/datasets/fashion-mnist)")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="NODE.PARAM=VALUE",
                    help="extra --set for our runs (repeatable)")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "flowbench-cli"),
                    help="our runner (default: build/bin/flowbench-cli)")
    ap.add_argument("--peer", default=None,
                    help="peer script (default: $FLOWBENCH_PEER, else ../shared/bench/peer_torch.py "
                         "relative to the repository root)")
    ap.add_argument("--max-acc-drop", type=float, default=0.5,
                    help="allowed accuracy shortfall against the peer, in points (default: 0.5)")


def runner_settings(a):
    """Our runner's --set arguments from add_runner_args' options: the limit, the data folder,
    the extra settings."""
    sets = []
    if a.limit is not None:
        sets += ["--set", f"train_data.limit={a.limit}"]
    if a.data is not None:
        data = os.path.abspath(a.data)
        sets += ["--set", f"train_data.path={data}", "--set", f"test_data.path={data}"]
    for s in a.sets:
        sets += ["--set", s]
    return sets


def resolve_runner_args(ap, a, build_hint):
    """Checks --limit, fills in the peer's default path and makes both paths absolute. Returns
    what is missing (the peer script, our runner: `build_hint` says how to build it)."""
    if a.limit is not None and a.limit < 1:
        ap.error("--limit must be at least 1")
    if a.peer is None:
        a.peer = os.environ.get("FLOWBENCH_PEER") or os.path.join(
            ROOT, "..", "shared", "bench", "peer_torch.py")
    a.peer = os.path.abspath(a.peer)
    a.cli = os.path.abspath(a.cli)
    problems = []
    if not os.path.isfile(a.peer):
        problems.append(f"peer script not found: {a.peer} (use --peer or $FLOWBENCH_PEER)")
    if not (os.path.isfile(a.cli) and os.access(a.cli, os.X_OK)):
        problems.append(f"our runner not found: {a.cli} ({build_hint})")
    return problems


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Flowbench vs the PyTorch peer on CPU (Fashion-MNIST reference workloads).",
        epilog="Timings are noisy on shared machines: runs are interleaved and the median "
               "ratio is quoted. See bench/README.md.")
    ap.add_argument("--models", default="mlp,cnn",
                    help="comma-separated models out of mlp,cnn (default: mlp,cnn)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="interleaved rounds (ours then peer) per model (default: 2)")
    ap.add_argument("--epochs", type=int, default=1, help="training epochs per run (default: 1)")
    ap.add_argument("--threads", type=int, default=2,
                    help="CPU threads for both sides (default: 2, the reference setting)")
    add_runner_args(ap)
    ap.add_argument("--peer-python", default="/usr/bin/python3",
                    help="interpreter for the peer (default: /usr/bin/python3, Debian's torch)")
    ap.add_argument("--min-ratio", type=float, default=2.0,
                    help="required speed ratio ours/peer (default: 2.0)")
    ap.add_argument("--save", action="store_true",
                    help="also write the tables and machine info to bench/results/")
    ap.add_argument("--strict", action="store_true", help="exit 3 when any model FAILs")
    a = ap.parse_args(argv)

    a.models = [m.strip() for m in a.models.split(",") if m.strip()]
    bad = [m for m in a.models if m not in MODELS]
    if bad or not a.models:
        ap.error(f"--models: unknown {', '.join(bad) or '(empty)'}; choose from {', '.join(MODELS)}")
    for name in ("rounds", "epochs", "threads"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    problems = resolve_runner_args(ap, a, "build first: scripts/test.sh or cmake --build build")
    if problems:
        ap.error(problems[0])
    if not os.path.isfile(a.peer_python):
        ap.error(f"peer interpreter not found: {a.peer_python} (scripts/deps.sh --bench installs "
                 f"python3-torch)")
    return a


def run_json(label, cmd, env, timeout=None):
    """Runs cmd with stderr shown live; returns the JSON object on the last line of stdout.
    A run past `timeout` seconds is killed and fails."""
    log(f"{label}: {' '.join(shlex.quote(c) for c in cmd)}")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, stdin=subprocess.DEVNULL,
                              env=env, cwd=ROOT, text=True, timeout=timeout)
    except OSError as e:
        raise RunFailed(f"{label}: cannot start {cmd[0]}: {e}")
    except subprocess.TimeoutExpired:
        raise RunFailed(f"{label}: killed after {timeout:g} s (--timeout)")
    elapsed = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    summary = None
    if lines:
        try:
            summary = json.loads(lines[-1])
        except json.JSONDecodeError:
            summary = None
    if proc.returncode != 0 or not isinstance(summary, dict):
        tail = "\n".join(lines[-10:]) or "(no output on stdout)"
        why = f"exit status {proc.returncode}" if proc.returncode != 0 else \
            "last stdout line is not a JSON object"
        raise RunFailed(f"{label}: {why}\n--- stdout tail ---\n{tail}")
    log(f"{label}: done in {elapsed:.1f} s")
    return summary


def number(summary, key, label):
    v = summary.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise RunFailed(f"{label}: summary has no numeric '{key}': {json.dumps(summary)}")
    return float(v)


def run_ours(a, model, rnd):
    label = f"{model} round {rnd}/{a.rounds} ours"
    pipeline = os.path.join("resources", "examples", f"fashion_mnist_{model}.json")
    with tempfile.TemporaryDirectory(prefix=f"flowbench-bench-{model}-") as tmp:
        cmd = [a.cli, "run", pipeline, "--threads", str(a.threads),
               "--set", f"train.epochs={a.epochs}", "--out", os.path.join(tmp, "run")]
        cmd += runner_settings(a)
        s = run_json(label, cmd, child_env(a))
    if s.get("status") != "ok":
        raise RunFailed(f"{label}: status {s.get('status')!r}, error {json.dumps(s.get('error'))}")
    return {"sps": number(s, "train_samples_per_s", label),
            "acc": number(s, "test_accuracy", label),
            "loss": s.get("final_loss"), "wall_s": s.get("wall_s")}


def run_peer(a, model, rnd):
    label = f"{model} round {rnd}/{a.rounds} peer"
    cmd = [a.peer_python, a.peer, "--model", model, "--epochs", str(a.epochs),
           "--threads", str(a.threads)]
    if a.limit is not None:
        cmd += ["--limit", str(a.limit)]
    s = run_json(label, cmd, child_env(a))
    return {"sps": number(s, "train_samples_per_s", label),
            "acc": number(s, "test_accuracy", label),
            "loss": s.get("final_loss"), "version": s.get("peer")}


def child_env(a):
    env = dict(os.environ)
    # Both sides get the same OpenMP thread budget, so neither silently uses every core.
    env["OMP_NUM_THREADS"] = str(a.threads)
    if a.data is not None:
        env["FASHION_MNIST_DIR"] = os.path.join(os.path.abspath(a.data), "")  # peer wants the /
    return env


def fmt_sps(v):
    return f"{v:,.0f}"


def model_report(a, model, rounds):
    ours_sps = statistics.median(r["ours"]["sps"] for r in rounds)
    peer_sps = statistics.median(r["peer"]["sps"] for r in rounds)
    ratio = statistics.median(r["ours"]["sps"] / r["peer"]["sps"] for r in rounds)
    ours_acc = statistics.median(r["ours"]["acc"] for r in rounds)
    peer_acc = statistics.median(r["peer"]["acc"] for r in rounds)
    diff_pt = (ours_acc - peer_acc) * 100.0
    speed_ok = ratio >= a.min_ratio
    acc_ok = diff_pt >= -a.max_acc_drop - 1e-9
    verdict = "PASS" if speed_ok and acc_ok else "FAIL"
    why = []
    if not speed_ok:
        why.append(f"ratio {ratio:.2f} < {a.min_ratio:g}")
    if not acc_ok:
        why.append(f"accuracy {diff_pt:+.2f} pt < -{a.max_acc_drop:g} pt")

    lines = [f"### {model}: {a.epochs} epoch(s), {a.threads} threads, {len(rounds)} round(s)"
             + (f", train limit {a.limit}" if a.limit is not None else ""), "",
             "| round | ours samples/s | peer samples/s | ratio ours/peer | ours test acc "
             "| peer test acc | acc diff (pt) | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for i, r in enumerate(rounds, 1):
        o, p = r["ours"], r["peer"]
        lines.append(f"| {i} | {fmt_sps(o['sps'])} | {fmt_sps(p['sps'])} | "
                     f"{o['sps'] / p['sps']:.2f} | {o['acc']:.4f} | {p['acc']:.4f} | "
                     f"{(o['acc'] - p['acc']) * 100:+.2f} | |")
    lines.append(f"| **median** | **{fmt_sps(ours_sps)}** | **{fmt_sps(peer_sps)}** | "
                 f"**{ratio:.2f}** | **{ours_acc:.4f}** | **{peer_acc:.4f}** | "
                 f"**{diff_pt:+.2f}** | **{verdict}** |")
    lines.append("")
    lines.append(f"Requirement: ratio >= {a.min_ratio:g} and accuracy >= peer - "
                 f"{a.max_acc_drop:g} pt: **{verdict}**" + (f" ({'; '.join(why)})" if why else ""))
    if a.limit is not None:
        lines.append(f"(Quick run with --limit {a.limit}: not a qualifying figure.)")
    lines.append("")
    return {"model": model, "ours_sps": ours_sps, "peer_sps": peer_sps, "ratio": ratio,
            "ours_acc": ours_acc, "peer_acc": peer_acc, "diff_pt": diff_pt,
            "verdict": verdict}, "\n".join(lines)


def summary_table(results):
    lines = ["### Summary", "",
             "| model | ours samples/s | peer samples/s | ratio | ours acc | peer acc "
             "| acc diff (pt) | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        lines.append(f"| {r['model']} | {fmt_sps(r['ours_sps'])} | {fmt_sps(r['peer_sps'])} | "
                     f"{r['ratio']:.2f} | {r['ours_acc']:.4f} | {r['peer_acc']:.4f} | "
                     f"{r['diff_pt']:+.2f} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision():
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_info(a, started, peer_version):
    return "\n".join([
        f"- date: {started.strftime('%Y-%m-%d %H:%M')} (local time)",
        f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs visible)",
        f"- threads per run: {a.threads}; epochs: {a.epochs}; rounds: {a.rounds}"
        + (f"; train limit: {a.limit}" if a.limit is not None else ""),
        f"- ours: {os.path.relpath(a.cli, ROOT)} at git {git_revision()}",
        f"- peer: {peer_version or 'unknown'} via {a.peer_python} {a.peer}",
        f"- host: {platform.node()}, {platform.platform()}",
        f"- command: {' '.join(shlex.quote(x) for x in sys.argv)}",
    ]) + "\n"


def guarded(body):
    """Runs body(); a run that failed, or Ctrl-C, becomes the exit status (1, 130); None when
    everything ran."""
    try:
        body()
    except RunFailed as e:
        print(f"\nBENCHMARK FAILED: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return None


def save_results(kind, models, started, title, header, sections):
    """Writes bench/results/KIND-MODELS-YYYYmmdd-HHMM.md: the title, the machine lines, the
    tables."""
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    name = f"{kind}-{'-'.join(models)}-{started.strftime('%Y%m%d-%H%M')}.md"
    path = os.path.join(ROOT, "bench", "results", name)
    with open(path, "w") as f:
        f.write(f"# {title}\n\n{header}\n")
        f.write("\n".join(sections))
    log(f"saved {os.path.relpath(path, ROOT)}")


def main(argv=None):
    a = parse_args(argv)
    started = datetime.datetime.now()
    results, sections = [], []
    peer_version = None

    def body():
        nonlocal peer_version
        for model in a.models:
            rounds = []
            for rnd in range(1, a.rounds + 1):
                ours = run_ours(a, model, rnd)
                peer = run_peer(a, model, rnd)
                peer_version = peer_version or peer.get("version")
                rounds.append({"ours": ours, "peer": peer})
                log(f"{model} round {rnd}: ours {fmt_sps(ours['sps'])}/s, "
                    f"peer {fmt_sps(peer['sps'])}/s, ratio {ours['sps'] / peer['sps']:.2f}; "
                    f"accuracy {ours['acc']:.4f} vs {peer['acc']:.4f}")
            result, text = model_report(a, model, rounds)
            results.append(result)
            sections.append(text)
            print(text, flush=True)

    failed = guarded(body)
    if failed is not None:
        return failed

    if len(results) > 1:
        sections.append(summary_table(results))
        print(sections[-1], flush=True)

    if a.save:
        save_results("cpu", a.models, started,
                     f"CPU benchmark: Flowbench vs peer ({', '.join(a.models)})",
                     machine_info(a, started, peer_version), sections)

    if a.strict and any(r["verdict"] != "PASS" for r in results):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
