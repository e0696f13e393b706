#!/usr/bin/env python3
"""GPU benchmark: Flowbench against the PyTorch peer on the reference workloads, on one GPU.

For each model (mlp, cnn; batch 128) and each round it runs, interleaved and back to back:

  1. ours: build/bin/flowbench-cli run resources/examples/fashion_mnist_<model>.json
     --device cuda:0 --set train.epochs=N --set train.seed=R --events FILE (default N = 3)
  2. the peer without --resident: ../shared/bench/peer_torch.py --device cuda:0 --epochs N
     (seeded with R as well; round R = 1, 2, ... uses seed R - 1 on both sides)
  3. the peer with --resident (the whole data set kept on the GPU)

and prints, per model, training samples/s of both sides with the data resident on the device
and without, the ratios ours/peer (median of the per-round ratios) and the test accuracies after
the same number of epochs. Then, unless --skip-tta, the time from the start of training to 92%
test accuracy on the CNN example, ours beside the peer's.

Resident and not resident, on our side. On a GPU Flowbench keeps the training data resident on
the device by itself once a first whole epoch has gone through the data stages, whenever the data
chain has no random stage (the reference pipelines qualify); there is no switch to turn that off.
So one run of N >= 2 epochs gives both figures:
  - not resident = epoch 1: its batches come through the data stages on the CPU and are uploaded
    batch by batch (while the device table is being filled). Epoch 1 also carries the one-time
    warm-up (CUDA context, kernel loading, plan selection), so this figure is conservative.
  - resident = epochs 2..N: batches are gathered on the device (the run announces it with the
    log event "the training data is now resident on ..."; the script checks for it and uses the
    epochs from that one on).
Both come from the `epoch` events of the event stream (docs/events.md): samples/s =
sum(samples_per_s * seconds) / sum(seconds), where `seconds` is the epoch's step time (data wait
included, evaluation excluded). The peer's figures are its own train_samples_per_s over all N
epochs (its clock starts after loading the data, stops after a device synchronization and before
the test evaluation; its first epoch includes its warm-up).

Time to accuracy. Ours: one run of --tta-epochs epochs of the CNN example with --events; the
figure is the first epoch whose test accuracy (the `epoch` event's evaluations[0].accuracy)
reaches the target, timed three ways: training only (sum of the `seconds` of epochs 1..k, like
the peer's train_s), training plus the per-epoch evaluations (`t` of that epoch event minus `t` of
run_start) and from process start (`t` of that epoch event). peer_torch.py reports accuracy only
at its end, so the peer is run from a fresh start with --resident --epochs 1, 2, 3, ... until its
test accuracy reaches the target (or --tta-epochs); its time is the train_s of the first run that
reaches it (training only, k epochs from a fresh start), and the process wall time measured here.

  python3 bench/gpu_vs_peer.py                          # mlp and cnn, 3 rounds of 3 epochs, + TTA
  python3 bench/gpu_vs_peer.py --models cnn --save      # table kept in bench/results/
  python3 bench/gpu_vs_peer.py --limit 5000 --rounds 1 --skip-tta   # smoke run, not a figure
  python3 bench/gpu_vs_peer.py --dry-run                # print the commands, run nothing

Standard library only. Exit status: 0 when every run completed (whatever the verdict; with
--strict, 3 when a verdict is FAIL), 1 when a run failed or there is no usable GPU, 2 on bad
usage.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_peer import (RunFailed, add_runner_args, child_env, cpu_model, fmt_sps,  # noqa: E402
                         git_revision, log, number, resolve_runner_args, runner_settings)
from cpu_vs_peer import run_json as shared_run_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ("mlp", "cnn")
BATCH = 128  # the reference batch size: the pipelines' train.batch_size and the peer's --batch
# Event stream versions whose `run_start`, `log` and `epoch` events this script knows.
KNOWN_EVENT_VERSIONS = (2, 3, 4, 5, 6)  # 4 to 6 only add fields
RESIDENT_MARK = "is now resident"  # the runner's log message when epochs start from device memory
# Asks the peer's interpreter for its PyTorch version and TF32 defaults (recorded, not changed).
TORCH_QUERY = r"""
import json
out = {}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = getattr(torch.version, "cuda", None)
    for key, get in (("cudnn.allow_tf32", lambda: torch.backends.cudnn.allow_tf32),
                     ("cuda.matmul.allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
                     ("cudnn.conv.fp32_precision",
                      lambda: torch.backends.cudnn.conv.fp32_precision),
                     ("cuda.matmul.fp32_precision",
                      lambda: torch.backends.cuda.matmul.fp32_precision)):
        try:
            out[key] = get()
        except Exception:
            pass
except Exception as e:
    out["error"] = repr(e)
print(json.dumps(out))
"""


class NoGpu(Exception):
    pass


def shell(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Flowbench vs the PyTorch peer on a GPU (Fashion-MNIST reference workloads), "
                    "with the training data resident on the device and without, plus the time "
                    "to 92% test accuracy on the CNN.",
        epilog="Ours: epoch 1 is the not-resident figure, epochs 2..N the resident one (Flowbench "
               "makes the data resident by itself after a first whole epoch). Runs are "
               "interleaved and median ratios quoted. See the docstring and bench/README.md.")
    ap.add_argument("--models", default="mlp,cnn",
                    help="comma-separated models out of mlp,cnn (default: mlp,cnn)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds (ours, peer, peer --resident) per model (default: 3)")
    ap.add_argument("--epochs", type=int, default=3,
                    help="epochs per run, at least 2: ours' epoch 1 is the not-resident figure, "
                         "epochs 2..N the resident one (default: 3)")
    ap.add_argument("--threads", type=int, default=2,
                    help="CPU threads for both sides (ours --threads, the peer's --threads, "
                         "OMP_NUM_THREADS; default: 2, the reference setting)")
    add_runner_args(ap)
    ap.add_argument("--device", default="cuda",
                    help="GPU for both sides: cuda (= cuda:0) or cuda:N (default: cuda)")
    ap.add_argument("--precision", choices=("float32", "tf32", "bf16"), default="float32",
                    help="ours: --set train.precision=P (default: float32). The peer keeps "
                         "PyTorch's defaults (TF32 on for cuDNN convolutions, off for matrix "
                         "products), which are recorded")
    ap.add_argument("--peer-python", default="python3",
                    help="interpreter for the peer, with CUDA PyTorch (default: python3)")
    ap.add_argument("--min-ratio", type=float, default=3.0,
                    help="required speed ratio ours/peer on cnn with the data resident "
                         "(default: 3.0; the aim is 5)")
    ap.add_argument("--aim-ratio", type=float, default=5.0,
                    help="the ratio aimed at, reported beside the verdict (default: 5.0)")
    ap.add_argument("--target-acc", type=float, default=0.92,
                    help="test accuracy for the time-to-accuracy comparison (default: 0.92)")
    ap.add_argument("--tta-epochs", type=int, default=15,
                    help="most epochs for the time-to-accuracy runs (default: 15)")
    ap.add_argument("--tta-peer-from", type=int, default=1, metavar="K",
                    help="start the peer's fresh runs at K epochs instead of 1, to save time "
                         "(then 'first' means first at or after K; default: 1)")
    ap.add_argument("--skip-tta", action="store_true", help="skip the time-to-accuracy runs")
    ap.add_argument("--timeout", type=float, default=1200.0,
                    help="seconds one run may take before it is killed and counts as failed "
                         "(default: 1200)")
    ap.add_argument("--save", action="store_true",
                    help="also write the tables, the device and the exact commands to "
                         "bench/results/gpu-<device>-<YYYYmmdd-HHMM>.md")
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "bench", "results"),
                    metavar="DIR", help="where --save writes (default: bench/results)")
    ap.add_argument("--strict", action="store_true", help="exit 3 when a verdict is FAIL")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the commands it would run and exit 0; runs nothing")
    a = ap.parse_args(argv)

    a.models = [m.strip() for m in a.models.split(",") if m.strip()]
    bad = [m for m in a.models if m not in MODELS]
    if bad or not a.models:
        ap.error(f"--models: unknown {', '.join(bad) or '(empty)'}; choose from {', '.join(MODELS)}")
    for name in ("rounds", "threads", "tta_epochs", "tta_peer_from"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.epochs < 2:
        ap.error("--epochs must be at least 2 (epoch 1 is not resident, epochs 2..N are)")
    if a.tta_peer_from > a.tta_epochs:
        ap.error("--tta-peer-from must not exceed --tta-epochs")
    if not 0.0 < a.target_acc <= 1.0:
        ap.error("--target-acc is a fraction in (0, 1], e.g. 0.92")
    if a.timeout <= 0:
        ap.error("--timeout must be positive")
    m = re.fullmatch(r"cuda(?::(\d+))?", a.device.strip())
    if not m:
        ap.error(f"--device: expected cuda or cuda:N, got {a.device!r} (this is the GPU "
                 f"benchmark; bench/cpu_vs_peer.py measures the CPU)")
    a.gpu_index = int(m.group(1) or 0)
    a.device = f"cuda:{a.gpu_index}"
    a.results_dir = os.path.abspath(a.results_dir)
    problems = resolve_runner_args(
        ap, a, "build first, with CUDA: cmake --build build, or pass --cli")
    found = shutil.which(a.peer_python)
    if found is None:
        problems.append(f"peer interpreter not found: {a.peer_python} (--peer-python: a python "
                        f"with CUDA PyTorch)")
    if problems and not a.dry_run:
        ap.error("; ".join(problems))
    for p in problems:
        log(f"dry run: {p}")
    a.commands = []  # every command run, in order, for the saved report
    return a


def env_prefix(a):
    parts = [f"OMP_NUM_THREADS={a.threads}"]
    if a.data is not None:
        parts.append("FASHION_MNIST_DIR=" + shlex.quote(os.path.join(os.path.abspath(a.data), "")))
    return " ".join(parts) + " "


def run_json(a, label, cmd):
    """cpu_vs_peer's run_json with the command recorded for the report; returns (the JSON
    object on stdout's last line, seconds)."""
    a.commands.append(env_prefix(a) + shell(cmd))
    t0 = time.perf_counter()
    summary = shared_run_json(label, cmd, child_env(a), timeout=a.timeout)
    return summary, time.perf_counter() - t0


# ---------------------------------------------------------------------------------------------
# The device


def query_device(a):
    """Returns {'line', 'name', 'slug', ...} for a.device; raises NoGpu when it is not usable."""
    cmd = [a.cli, "devices", "--json"]
    a.commands.append(shell(cmd))
    log(f"device: {shell(cmd)}")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        raise RunFailed(f"{shell(cmd)}: {e}")
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError:
        info = None
    if proc.returncode != 0 or not isinstance(info, dict):
        raise RunFailed(f"{shell(cmd)}: exit status {proc.returncode}, no JSON object on stdout\n"
                        f"{(proc.stdout + proc.stderr)[-2000:]}")
    devices = [d for d in info.get("devices") or [] if isinstance(d, dict)]
    problem = info.get("gpu_problem")
    gpus = [d for d in devices if d.get("kind") == "cuda"]
    dev = next((d for d in gpus if d.get("device") == a.device), None)
    if problem or dev is None:
        listed = ", ".join(f"{d.get('device')} ({d.get('name')})" for d in gpus) or "none"
        why = f"gpu_problem: {problem}" if problem else \
            f"{a.device} is not among the CUDA devices flowbench-cli lists ({listed})"
        raise NoGpu(f"no usable GPU for this benchmark: {why}")
    mem = dev.get("memory_bytes")
    mem_text = f"{mem / 2 ** 30:.1f} GiB" if isinstance(mem, (int, float)) else "? GiB"
    name = str(dev.get("name") or "unknown GPU")
    line = (f"{a.device}: {name}, {mem_text}, compute capability "
            f"{dev.get('compute_capability', '?')}"
            + (f", {dev['multiprocessors']} multiprocessors" if dev.get("multiprocessors") else ""))
    smi = nvidia_smi(a)
    log(f"device: {line}" + (f"; nvidia-smi: {smi}" if smi else ""))
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"
    return {"line": line, "name": name, "slug": slug, "smi": smi,
            "default": info.get("default")}


def nvidia_smi(a):
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    cmd = [exe, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"]
    a.commands.append(shell(cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not rows:
        return None
    # nvidia-smi numbers GPUs as CUDA does by default (CUDA_DEVICE_ORDER aside).
    return rows[a.gpu_index] if a.gpu_index < len(rows) else "; ".join(rows)


def peer_torch_info(a):
    cmd = [a.peer_python, "-c", TORCH_QUERY]
    a.commands.append(f"{a.peer_python} -c '<query torch.__version__ and the TF32 defaults>'")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL, env=child_env(a))
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        return info if isinstance(info, dict) else {}
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError, IndexError):
        return {}


def peer_precision_text(info):
    if not info or "torch" not in info:
        why = f" ({info['error']})" if info and info.get("error") else ""
        return (f"PyTorch unknown{why}; PyTorch's defaults are TF32 on for cuDNN convolutions "
                f"and off for matrix products")
    keys = ("cudnn.allow_tf32", "cuda.matmul.allow_tf32", "cudnn.conv.fp32_precision",
            "cuda.matmul.fp32_precision")
    flags = ", ".join(f"{k}={info[k]}" for k in keys if k in info)
    return (f"torch {info['torch']} (CUDA {info.get('cuda')}), its own defaults: {flags or '?'} "
            f"(convolutions in TF32, matrix products in float32 unless changed)")


# ---------------------------------------------------------------------------------------------
# Runs


def pipeline_of(model):
    return os.path.join("resources", "examples", f"fashion_mnist_{model}.json")


def ours_cmd(a, model, epochs, out_dir, events, seed=0):
    cmd = [a.cli, "run", pipeline_of(model), "--device", a.device, "--threads", str(a.threads),
           "--set", f"train.epochs={epochs}", "--set", f"train.precision={a.precision}",
           "--set", f"train.seed={seed}", "--out", out_dir, "--events", events]
    return cmd + runner_settings(a)


# peer_torch.py always seeds with torch.manual_seed(0) and has no option for it: for another
# seed it runs unchanged under a wrapper that makes manual_seed(0) seed with that one instead.
PEER_SEED_WRAPPER = """import runpy, sys, torch
_seed, _orig = int(sys.argv[1]), torch.manual_seed
torch.manual_seed = lambda _s: _orig(_seed)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def peer_cmd(a, model, epochs, resident, seed=0):
    cmd = [a.peer_python, a.peer] if seed == 0 else \
          [a.peer_python, "-c", PEER_SEED_WRAPPER, str(seed), a.peer]
    cmd += ["--device", a.device, "--model", model, "--epochs", str(epochs),
            "--batch", str(BATCH), "--threads", str(a.threads)]
    if resident:
        cmd.append("--resident")
    if a.limit is not None:
        cmd += ["--limit", str(a.limit)]
    return cmd


def read_events(path, label):
    """The run's event stream: run_start, the `epoch` events and where residency began."""
    try:
        with open(path) as f:
            raw = f.read().splitlines()
    except OSError as e:
        raise RunFailed(f"{label}: cannot read the event stream {path}: {e}")
    events = []
    for n, line in enumerate(raw, 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            log(f"{label}: event line {n} is not JSON, skipped")
            continue
        if isinstance(e, dict):
            events.append(e)
    start = next((e for e in events if e.get("type") == "run_start"), None)
    if start is None:
        raise RunFailed(f"{label}: the event stream has no run_start event ({len(events)} events)")
    if start.get("version") not in KNOWN_EVENT_VERSIONS:
        raise RunFailed(f"{label}: event stream version {start.get('version')!r} is not one this "
                        f"script knows ({', '.join(map(str, KNOWN_EVENT_VERSIONS))}); check "
                        f"docs/events.md and update bench/gpu_vs_peer.py")
    epochs, resident_from, notes = [], None, []
    for e in events:
        kind = e.get("type")
        if kind == "epoch":
            epochs.append(e)
        elif kind == "log":
            msg = str(e.get("message", ""))
            if "training data" in msg:
                notes.append(msg)
            if RESIDENT_MARK in msg and resident_from is None:
                resident_from = len(epochs) + 1  # announced at the start of that epoch
    rows = []
    for e in epochs:
        secs = number(e, "seconds", f"{label} epoch event")
        sps = number(e, "samples_per_s", f"{label} epoch event")
        evals = e.get("evaluations") or []
        acc = evals[0].get("accuracy") if evals and isinstance(evals[0], dict) else None
        rows.append({"epoch": int(number(e, "epoch", f"{label} epoch event")), "seconds": secs,
                     "sps": sps, "samples": sps * secs,
                     "acc": float(acc) if isinstance(acc, (int, float)) else None,
                     "t": e.get("t") if isinstance(e.get("t"), (int, float)) else None})
    t_start = start.get("t") if isinstance(start.get("t"), (int, float)) else None
    return {"start": start, "rows": rows, "resident_from": resident_from, "notes": notes,
            "t_start": t_start}


def run_ours(a, label, model, epochs, seed=0):
    with tempfile.TemporaryDirectory(prefix=f"flowbench-gpubench-{model}-") as tmp:
        events = os.path.join(tmp, "events.jsonl")
        cmd = ours_cmd(a, model, epochs, os.path.join(tmp, "run"), events, seed)
        s, elapsed = run_json(a, label, cmd)
        if s.get("status") != "ok":
            raise RunFailed(f"{label}: status {s.get('status')!r}, error "
                            f"{json.dumps(s.get('error'))}")
        ev = read_events(events, label)
    if len(ev["rows"]) != epochs:
        raise RunFailed(f"{label}: expected {epochs} epoch events, the stream has "
                        f"{len(ev['rows'])}")
    if str(s.get("device", a.device)) != a.device:
        log(f"{label}: WARNING: the summary names device {s.get('device')!r}, not {a.device}")
    ev.update({"summary": s, "wall_s": elapsed, "acc": number(s, "test_accuracy", label),
               "overall_sps": s.get("train_samples_per_s")})
    return ev


def throughput(rows):
    secs = sum(r["seconds"] for r in rows)
    return sum(r["samples"] for r in rows) / secs if secs > 0 else 0.0


def ours_figures(a, label, ev):
    rows = ev["rows"]
    first = ev["resident_from"] or 2
    if ev["resident_from"] is None:
        log(f"{label}: WARNING: the data never became resident; 'resident' below is epochs 2.."
            f"{len(rows)} without residency ({'; '.join(ev['notes']) or 'no note from the run'})")
    resident_rows = [r for r in rows if r["epoch"] >= first] or rows[1:]
    return {"nonres": rows[0]["sps"], "res": throughput(resident_rows),
            "res_epochs": (resident_rows[0]["epoch"], resident_rows[-1]["epoch"]),
            "resident": ev["resident_from"] is not None, "notes": ev["notes"],
            "acc": ev["acc"], "overall": ev["overall_sps"], "rows": rows}


def run_peer(a, label, model, epochs, resident, seed=0):
    s, elapsed = run_json(a, label, peer_cmd(a, model, epochs, resident, seed))
    return {"sps": number(s, "train_samples_per_s", label),
            "train_s": number(s, "train_s", label),
            "acc": number(s, "test_accuracy", label), "wall_s": elapsed,
            "version": s.get("peer"), "loss": s.get("final_loss")}


# ---------------------------------------------------------------------------------------------
# Reports


def epochs_text(span):
    lo, hi = span
    return f"epoch {lo}" if lo == hi else f"epochs {lo}-{hi}"


def model_report(a, model, rounds):
    med = statistics.median
    o_nr = med(r["ours"]["nonres"] for r in rounds)
    o_r = med(r["ours"]["res"] for r in rounds)
    p_nr = med(r["peer"]["sps"] for r in rounds)
    p_r = med(r["peer_res"]["sps"] for r in rounds)
    ratio_nr = med(r["ours"]["nonres"] / r["peer"]["sps"] for r in rounds)
    ratio_r = med(r["ours"]["res"] / r["peer_res"]["sps"] for r in rounds)
    o_acc = med(r["ours"]["acc"] for r in rounds)
    p_acc_nr = med(r["peer"]["acc"] for r in rounds)
    p_acc_r = med(r["peer_res"]["acc"] for r in rounds)
    p_acc = med([r["peer"]["acc"] for r in rounds] + [r["peer_res"]["acc"] for r in rounds])
    diff_pt = (o_acc - p_acc) * 100.0
    acc_ok = diff_pt >= -a.max_acc_drop - 1e-9
    spans = sorted({r["ours"]["res_epochs"] for r in rounds})
    span_text = ", ".join(epochs_text(s) for s in spans)
    not_resident = [i for i, r in enumerate(rounds, 1) if not r["ours"]["resident"]]

    why = []
    if model == "cnn":
        speed_ok = ratio_r >= a.min_ratio
        if not speed_ok:
            why.append(f"resident ratio {ratio_r:.2f} < {a.min_ratio:g}")
    else:
        speed_ok = True  # no speed requirement on mlp: reported for information
    if not acc_ok:
        why.append(f"accuracy {diff_pt:+.2f} pt < -{a.max_acc_drop:g} pt")
    if not_resident:
        why.append(f"ours' data not resident in round(s) {', '.join(map(str, not_resident))}")
    verdict = "PASS" if speed_ok and acc_ok and not not_resident else "FAIL"

    lines = [f"### {model}: batch {BATCH}, {a.epochs} epochs per run, {len(rounds)} round(s), "
             f"{a.device}, ours {a.precision}"
             + (f", train limit {a.limit}" if a.limit is not None else ""), "",
             "| round | ours not resident (epoch 1) | peer not resident | ratio "
             f"| ours resident ({span_text}) | peer --resident | ratio "
             "| ours test acc | peer test acc (not res. / res.) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(rounds, 1):
        o, p, pr = r["ours"], r["peer"], r["peer_res"]
        lines.append(f"| {i} | {fmt_sps(o['nonres'])} | {fmt_sps(p['sps'])} | "
                     f"{o['nonres'] / p['sps']:.2f} | {fmt_sps(o['res'])}"
                     f"{'' if o['resident'] else ' (not resident!)'} | {fmt_sps(pr['sps'])} | "
                     f"{o['res'] / pr['sps']:.2f} | {o['acc']:.4f} | "
                     f"{p['acc']:.4f} / {pr['acc']:.4f} |")
    lines.append(f"| **median** | **{fmt_sps(o_nr)}** | **{fmt_sps(p_nr)}** | "
                 f"**{ratio_nr:.2f}** | **{fmt_sps(o_r)}** | **{fmt_sps(p_r)}** | "
                 f"**{ratio_r:.2f}** | **{o_acc:.4f}** | **{p_acc_nr:.4f} / {p_acc_r:.4f}** |")
    lines.append("")
    if model == "cnn":
        aim = "met" if ratio_r >= a.aim_ratio else "not met"
        lines.append(f"- Requirement (cnn, data resident): ratio >= {a.min_ratio:g}, aim "
                     f"{a.aim_ratio:g}: median **{ratio_r:.2f}x**, **{verdict}**"
                     + (f" ({'; '.join(why)})" if why else "") + f"; aim {a.aim_ratio:g}x {aim}")
    else:
        lines.append(f"- No speed requirement on {model} (for information); verdict on accuracy "
                     f"and residency: **{verdict}**" + (f" ({'; '.join(why)})" if why else ""))
    lines.append(f"- Accuracy after {a.epochs} epochs: ours {o_acc:.4f}, peer {p_acc:.4f} (medians "
                 f"over seeds 0..{len(rounds) - 1}, one per round, the peer's over both its "
                 f"modes): {diff_pt:+.2f} pt, "
                 + ("OK" if acc_ok else f"**FLAG: ours is more than {a.max_acc_drop:g} pt below "
                                         f"the peer**") + f" (allowed -{a.max_acc_drop:g} pt)")
    overall = [r["ours"]["overall"] for r in rounds if isinstance(r["ours"]["overall"], (int, float))]
    if overall:
        lines.append(f"- Ours over all {a.epochs} epochs (summary train_samples_per_s): "
                     f"{fmt_sps(med(overall))} samples/s (median)")
    if not_resident:
        notes = sorted({n for r in rounds for n in r["ours"]["notes"]})
        lines.append(f"- **Warning**: ours' training data did not become resident in round(s) "
                     f"{', '.join(map(str, not_resident))}: {'; '.join(notes) or 'no note'}")
    if a.limit is not None:
        lines.append(f"- (Quick run with --limit {a.limit}: not a qualifying figure.)")
    lines.append("")
    return {"model": model, "o_nr": o_nr, "p_nr": p_nr, "ratio_nr": ratio_nr, "o_r": o_r,
            "p_r": p_r, "ratio_r": ratio_r, "o_acc": o_acc, "p_acc": p_acc, "diff_pt": diff_pt,
            "verdict": verdict}, "\n".join(lines)


def summary_table(results):
    lines = ["### Summary (medians)", "",
             "| model | ours not resident | peer not resident | ratio | ours resident "
             "| peer resident | ratio | ours acc | peer acc | acc diff (pt) | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        lines.append(f"| {r['model']} | {fmt_sps(r['o_nr'])} | {fmt_sps(r['p_nr'])} | "
                     f"{r['ratio_nr']:.2f} | {fmt_sps(r['o_r'])} | {fmt_sps(r['p_r'])} | "
                     f"{r['ratio_r']:.2f} | {r['o_acc']:.4f} | {r['p_acc']:.4f} | "
                     f"{r['diff_pt']:+.2f} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def run_tta(a):
    """Time to --target-acc on the CNN: ours from its event stream, the peer by fresh runs."""
    ev = run_ours(a, f"time-to-accuracy ours ({a.tta_epochs} epochs)", "cnn", a.tta_epochs)
    rows = ev["rows"]
    hit = next((r for r in rows if r["acc"] is not None and r["acc"] >= a.target_acc), None)
    scored = [r for r in rows if r["acc"] is not None]
    best = max(scored, key=lambda r: r["acc"]) if scored else None
    ours = {"rows": rows, "hit": hit, "best": best, "resident_from": ev["resident_from"]}
    if hit is not None:
        ours["train_s"] = sum(r["seconds"] for r in rows if r["epoch"] <= hit["epoch"])
        ours["with_eval_s"] = (hit["t"] - ev["t_start"]) \
            if hit["t"] is not None and ev["t_start"] is not None else None
        ours["from_start_s"] = hit["t"]
    log("time-to-accuracy ours: " + (f"{a.target_acc:.2%} at epoch {hit['epoch']}" if hit else
                                     f"{a.target_acc:.2%} not reached in {a.tta_epochs} epochs"))

    tries, peer_hit = [], None
    for k in range(a.tta_peer_from, a.tta_epochs + 1):
        p = run_peer(a, f"time-to-accuracy peer --resident --epochs {k}", "cnn", k, True)
        p["epochs"] = k
        tries.append(p)
        log(f"time-to-accuracy peer: {k} epoch(s): test accuracy {p['acc']:.4f}, "
            f"train_s {p['train_s']:.2f}")
        if p["acc"] >= a.target_acc:
            peer_hit = p
            break
    peer_best = max(tries, key=lambda p: p["acc"]) if tries else None
    return {"ours": ours, "peer_tries": tries, "peer_hit": peer_hit, "peer_best": peer_best}


def tta_report(a, t):
    o, ph = t["ours"], t["peer_hit"]
    target = f"{a.target_acc * 100:g}%"
    lines = [f"### Time to {target} test accuracy (cnn, batch {BATCH}, {a.device}, up to "
             f"{a.tta_epochs} epochs)", "",
             f"| side | epochs to {target} | training only (s) | training + evaluations (s) "
             f"| from process start (s) | test acc then |",
             "|---|---:|---:|---:|---:|---:|"]

    def s(v):
        return f"{v:.2f}" if isinstance(v, (int, float)) else "-"

    ours_name = f"ours (flowbench-cli, {a.precision}, data resident from epoch " \
                f"{o['resident_from'] or '-'})"
    if o["hit"] is not None:
        lines.append(f"| {ours_name} | {o['hit']['epoch']} | {s(o['train_s'])} | "
                     f"{s(o['with_eval_s'])} | {s(o['from_start_s'])} | {o['hit']['acc']:.4f} |")
    else:
        best = (f"best {o['best']['acc']:.4f} at epoch {o['best']['epoch']}" if o["best"]
                else "no accuracy in the stream")
        lines.append(f"| {ours_name} | not reached in {a.tta_epochs} epochs ({best}) | - | - | - "
                     f"| - |")
    peer_name = "peer (peer_torch.py --resident, a fresh run of that many epochs)"
    if ph is not None:
        lines.append(f"| {peer_name} | {ph['epochs']} | {s(ph['train_s'])} | - | "
                     f"{s(ph['wall_s'])} | {ph['acc']:.4f} |")
    else:
        pb = t["peer_best"]
        best = f"best {pb['acc']:.4f} with {pb['epochs']} epochs" if pb else "no run"
        lines.append(f"| {peer_name} | not reached in {a.tta_epochs} epochs ({best}) | - | - "
                     f"| - | - |")
    if o["hit"] is not None and ph is not None and o.get("train_s"):
        wall = (f"{ph['wall_s'] / o['from_start_s']:.2f}x"
                if isinstance(o.get("from_start_s"), (int, float)) and o["from_start_s"] > 0
                else "-")
        lines.append(f"| **peer / ours** (above 1: ours is sooner) | | "
                     f"**{ph['train_s'] / o['train_s']:.2f}x** | | {wall} | |")
    lines.append("")
    lines.append("- ours, test accuracy by epoch: " + ", ".join(
        f"{r['epoch']}: {r['acc']:.4f}" if r["acc"] is not None else f"{r['epoch']}: -"
        for r in o["rows"]))
    lines.append("- peer, test accuracy by fresh run: " + ", ".join(
        f"{p['epochs']} ep: {p['acc']:.4f} ({p['train_s']:.2f} s)" for p in t["peer_tries"]))
    lines.append("- Training only: ours = the sum of the `epoch` events' `seconds` (step time, "
                 "data wait included) of epochs 1..k; peer = `train_s` of the fresh k-epoch run "
                 "(its training loop, after loading the data, before its test evaluation). "
                 "Training + evaluations: ours' `t` of epoch k's event minus `t` of run_start "
                 "(k epochs of training, the k per-epoch test evaluations and the checkpoints of "
                 "epochs 1..k-1). From process start: ours' `t` of epoch k's event (seconds since "
                 "the runner started: loading, device set-up, all of the above); peer: the wall "
                 "time of its k-epoch process measured here (Python and PyTorch start, CUDA "
                 "set-up, loading, training, one test evaluation).")
    if a.tta_peer_from > 1:
        lines.append(f"- The peer's runs started at {a.tta_peer_from} epochs (--tta-peer-from): "
                     f"its figure is the first at or after that.")
    if a.limit is not None:
        lines.append(f"- (Quick run with --limit {a.limit}: not a qualifying figure.)")
    lines.append("")
    return "\n".join(lines)


def notes_text(a, peer_prec):
    return "\n".join([
        "### How these figures are measured", "",
        "- Samples/s are training samples per second of training-loop time; loading and test "
        "evaluation are excluded on both sides. The peer synchronizes the GPU before stopping "
        "its clock; ours reads every step's loss back to the host, so its step times include "
        "the GPU's work.",
        "- Ours, not resident = epoch 1 of each run; ours, resident = the epochs from the one the "
        "run announces the data resident (normally 2..N). Flowbench keeps the training data on "
        "the device by itself after the first whole epoch when the data chain has no random stage "
        "and has no switch to turn that off, so epoch 1 is the only epoch without residency. "
        "Epoch 1 also carries the one-time warm-up (CUDA context, kernel loading, plan "
        "selection) and fills the device table, so the not-resident figure is conservative. "
        "Figures from the `epoch` events: sum(samples_per_s x seconds) / sum(seconds).",
        "- Peer, not resident = `peer_torch.py --device DEV --epochs N` (batches indexed on the "
        "CPU and copied per step); peer, resident = the same with `--resident`. Its "
        "train_samples_per_s covers all N epochs, its first-epoch warm-up included.",
        "- Ratios are medians of the per-round ratios; each round runs ours, the peer, the peer "
        "--resident back to back.",
        f"- Accuracy: the test accuracy after the same {a.epochs} epochs; ours is flagged when it "
        f"is more than {a.max_acc_drop:g} pt below the peer's median over both peer modes.",
        f"- Precision: ours {a.precision} (--set train.precision={a.precision}); peer: "
        f"{peer_prec}.",
        "",
    ])


def machine_info(a, started, device, peer_version, peer_prec):
    rel = os.path.relpath(a.cli, ROOT)
    if rel.startswith(os.pardir):
        rel = a.cli
    return "\n".join([
        f"- date: {started.strftime('%Y-%m-%d %H:%M')} (local time)",
        f"- device: {device['line']}",
        f"- nvidia-smi: {device['smi'] or 'not available'}",
        f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs visible); threads per run: "
        f"{a.threads}",
        f"- batch {BATCH}; epochs per run: {a.epochs}; rounds: {a.rounds}; ours' precision: "
        f"{a.precision}" + (f"; train limit: {a.limit}" if a.limit is not None else "")
        + (f"; data: {os.path.abspath(a.data)}" if a.data else ""),
        f"- ours: {rel} at git {git_revision()}",
        f"- peer: {peer_version or 'unknown'} via {a.peer_python} {a.peer}; {peer_prec}",
        f"- host: {platform.node()}, {platform.platform()}",
        f"- command: {shell([sys.executable] + sys.argv)}",
    ]) + "\n"


def dry_run(a):
    tmp = "$TMP"
    print(f"# dry run: the commands bench/gpu_vs_peer.py would run (cwd {ROOT}, environment "
          f"{env_prefix(a).strip()}; $TMP is a fresh temporary folder per run)")
    print(shell([a.cli, "devices", "--json"]))
    print("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader")
    print(f"{a.peer_python} -c '<query torch.__version__ and the TF32 defaults>'")
    for model in a.models:
        for rnd in range(1, a.rounds + 1):
            print(f"# {model} round {rnd}/{a.rounds}")
            print(shell(ours_cmd(a, model, a.epochs, f"{tmp}/run", f"{tmp}/events.jsonl")))
            print(shell(peer_cmd(a, model, a.epochs, False)))
            print(shell(peer_cmd(a, model, a.epochs, True)))
    if not a.skip_tta:
        print(f"# time to {a.target_acc:g} test accuracy on the CNN example")
        print(shell(ours_cmd(a, "cnn", a.tta_epochs, f"{tmp}/run", f"{tmp}/events.jsonl")))
        print(shell(peer_cmd(a, "cnn", a.tta_peer_from, True)))
        if a.tta_peer_from < a.tta_epochs:
            print(f"# ... then the same with --epochs {a.tta_peer_from + 1}, "
                  f"{a.tta_peer_from + 2}, ... up to {a.tta_epochs}, until its test_accuracy "
                  f">= {a.target_acc:g}")
    return 0


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    if a.dry_run:
        return dry_run(a)
    started = datetime.datetime.now()
    results, sections, peer_version = [], [], None
    try:
        device = query_device(a)
        peer_info = peer_torch_info(a)
        peer_prec = peer_precision_text(peer_info)
        header = (f"## GPU benchmark: Flowbench vs PyTorch peer on {device['line']}"
                  + (f" (nvidia-smi: {device['smi']})" if device["smi"] else ""))
        print(header + "\n", flush=True)
        for model in a.models:
            rounds = []
            for rnd in range(1, a.rounds + 1):
                tag = f"{model} round {rnd}/{a.rounds}"
                # Round r seeds both sides with r - 1: a single seed's accuracy moves by about
                # 0.5 pt from seed to seed (8 seeds each on an H100, bench/results/
                # gpu-seed-spread-*), as much as the allowed gap, so the accuracy verdict
                # compares medians over different seeds.
                seed = rnd - 1
                ev = run_ours(a, f"{tag} ours", model, a.epochs, seed)
                ours = ours_figures(a, f"{tag} ours", ev)
                peer = run_peer(a, f"{tag} peer", model, a.epochs, False, seed)
                peer_res = run_peer(a, f"{tag} peer --resident", model, a.epochs, True, seed)
                peer_version = peer_version or peer.get("version")
                rounds.append({"ours": ours, "peer": peer, "peer_res": peer_res})
                log(f"{tag}: not resident: ours {fmt_sps(ours['nonres'])}/s, peer "
                    f"{fmt_sps(peer['sps'])}/s ({ours['nonres'] / peer['sps']:.2f}x); resident: "
                    f"ours {fmt_sps(ours['res'])}/s, peer {fmt_sps(peer_res['sps'])}/s "
                    f"({ours['res'] / peer_res['sps']:.2f}x); accuracy {ours['acc']:.4f} vs "
                    f"{peer['acc']:.4f} / {peer_res['acc']:.4f}")
            result, text = model_report(a, model, rounds)
            results.append(result)
            sections.append(text)
            print(text, flush=True)
        if len(results) > 1:
            sections.append(summary_table(results))
            print(sections[-1], flush=True)
        if not a.skip_tta:
            text = tta_report(a, run_tta(a))
            sections.append(text)
            print(text, flush=True)
    except NoGpu as e:
        print(f"\nBENCHMARK NOT RUN: {e}", file=sys.stderr)
        return 1
    except RunFailed as e:
        print(f"\nBENCHMARK FAILED: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130

    notes = notes_text(a, peer_prec)
    sections.append(notes)
    print(notes, flush=True)

    if a.save:
        os.makedirs(a.results_dir, exist_ok=True)
        name = f"gpu-{device['slug']}-{started.strftime('%Y%m%d-%H%M')}.md"
        path = os.path.join(a.results_dir, name)
        with open(path, "w") as f:
            f.write(f"# GPU benchmark: Flowbench vs peer ({', '.join(a.models)}"
                    f"{'' if a.skip_tta else ', time to accuracy'}) on {device['name']}\n\n")
            f.write(machine_info(a, started, device, peer_version, peer_prec) + "\n")
            f.write("\n".join(sections))
            f.write("\n### Commands, in the order run\n\n```sh\n" + "\n".join(a.commands)
                    + "\n```\n")
        log(f"saved {path}")

    if a.strict and any(r["verdict"] != "PASS" for r in results):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
