#!/usr/bin/env python3
"""Data larger than memory: Flowbench's streaming image_folder (decoded once, then served from its
disk cache) against torchvision's ImageFolder + DataLoader (decoding every picture every epoch),
on a folder of generated JPEGs, interleaved in one run on the same machine.

Makes (once, then reuses) --count JPEGs of --side x --side pixels in 10 class folders (textures of
a class colour with noise, written by Pillow), then for each round runs:

  1. ours, cold: `flowbench-cli run` of a pipeline reading the folder at --size x --size RGB with
     `cache_mb` = --budget-mb (less than the decoded pixels: the source streams) and no disk
     cache yet: the run decodes every file once while loading, writes the disk cache, and
     streams the samples that do not fit from it;
  2. ours, warm: the same run again: it loads from the disk cache and decodes nothing;
  3. the peer (bench/peer_stream_torch.py): the same model, batch, augmentation (random
     horizontal flip) and --workers worker processes.

Every run trains --epochs epochs with --threads threads (OMP_NUM_THREADS for both sides). Reported
per run, medians over the rounds: samples/s of the first epoch, loading included (the peer's clock
starts before its DataLoader is made), and of the later epochs; the trainer's data wait; and peak
memory, the proportional set size (PSS) of the run's processes together (the peer's workers
included), sampled 5 times a second. The in-memory case (--budget-mb 0: a quarter of the free
memory, everything held) is the same table with --in-memory.

  python3 bench/stream_vs_peer.py                         # 60,000 JPEGs, 2 rounds, 2 epochs
  python3 bench/stream_vs_peer.py --count 6000 --rounds 1 # quick look; not a qualifying figure
  python3 bench/stream_vs_peer.py --save                  # also bench/results/stream-vs-peer-*.md

Needs /usr/bin/python3 with python3-torchvision and python3-pil (scripts/deps.sh --bench).
Exit status: 0 when every run completed, 1 when one failed, 2 on bad usage.
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
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(ROOT, "bench", "peer_stream_torch.py")

MAKE_IMAGES = r"""
import os, sys
import numpy as np
from PIL import Image
from multiprocessing import Pool
out, count, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
colours = [(200, 40, 40), (40, 200, 40), (40, 40, 200), (200, 200, 40), (200, 40, 200),
           (40, 200, 200), (230, 130, 30), (120, 60, 20), (128, 128, 128), (250, 250, 250)]
def make(i):
    c = i % 10
    rng = np.random.default_rng(i)
    base = np.array(colours[c], dtype=np.float32)
    # A class colour, a random gradient and noise: a photo-like amount of detail for the codec.
    y, x = np.mgrid[0:side, 0:side].astype(np.float32) / side
    g = (rng.uniform(-60, 60) * x + rng.uniform(-60, 60) * y)[..., None]
    px = base + g + rng.normal(0, 25, (side, side, 3))
    img = Image.fromarray(np.clip(px, 0, 255).astype(np.uint8))
    img.save(os.path.join(out, f"c{c}", f"{i}.jpg"), quality=90)
for c in range(10):
    os.makedirs(os.path.join(out, f"c{c}"), exist_ok=True)
with Pool(os.cpu_count()) as p:
    for k, _ in enumerate(p.imap_unordered(make, range(count), chunksize=256)):
        if (k + 1) % 10000 == 0:
            print(f"made {k + 1} of {count}", file=sys.stderr, flush=True)
"""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=60000, help="JPEGs in the folder")
    ap.add_argument("--side", type=int, default=160, help="their width and height")
    ap.add_argument("--size", type=int, default=128, help="the sample's width and height")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "flowbench-stream-bench"),
                    help="where the JPEGs are made (kept for the next run)")
    ap.add_argument("--budget-mb", type=int, default=1024,
                    help="cache_mb of our source: memory for decoded samples (default 1024, a "
                         "third of what 60,000 pictures decode to)")
    ap.add_argument("--in-memory", action="store_true",
                    help="the in-memory case: cache_mb 0 (a quarter of the free memory) and no "
                         "disk cache")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="data workers on both sides")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "flowbench-cli"))
    ap.add_argument("--peer-python", default="/usr/bin/python3")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--save", action="store_true")
    a = ap.parse_args(argv)
    if a.count < 100 or a.epochs < 2 or a.rounds < 1:
        ap.error("--count must be at least 100, --epochs at least 2, --rounds at least 1")
    return a


def make_images(a):
    marker = os.path.join(a.data, ".made")
    want = f"{a.count} {a.side}\n"
    if os.path.exists(marker) and open(marker).read() == want:
        return
    shutil.rmtree(a.data, ignore_errors=True)
    os.makedirs(a.data)
    log(f"making {a.count} JPEGs of {a.side} x {a.side} in {a.data} ...")
    subprocess.run([a.peer_python, "-c", MAKE_IMAGES, a.data, str(a.count), str(a.side)],
                   check=True)
    with open(marker, "w") as f:
        f.write(want)


def pipeline(a):
    with open(os.path.join(ROOT, "resources", "examples", "fashion_mnist_mlp.json")) as f:
        doc = json.load(f)
    keep = {"train_data", "normalize", "input", "flatten", "fc1", "relu1", "fc3", "loss",
            "optimizer", "train"}
    nodes = []
    for n in doc["nodes"]:
        if n["id"] not in keep:
            continue
        if n["id"] == "train_data":
            n = {"id": "train_data", "type": "image_folder", "position": n["position"],
                 "params": {"path": a.data, "subset": "all", "color": "rgb", "height": a.size,
                            "width": a.size, "cache_mb": 0 if a.in_memory else a.budget_mb,
                            "disk_cache": "off" if a.in_memory else "auto"}}
        if n["id"] == "normalize":
            n["params"] = {"mean": 0.5, "std": 0.25}
        if n["id"] == "fc1":
            n["params"]["out_features"] = 16
        if n["id"] == "optimizer":  # 49,152 inputs: the examples' 0.05 diverges
            n["params"].update({"lr": 0.002, "momentum": 0.9})
        if n["id"] == "train":
            n["params"].update({"epochs": a.epochs, "batch_size": 128, "device": "cpu",
                                "checkpoint_every": 0})
        nodes.append(n)
    nodes.append({"id": "flip", "type": "random_hflip", "params": {}, "position": [240, 0]})
    # Laid out to be read when the pipeline is opened in the window.
    at = {"train_data": [0, 0], "normalize": [480, 0], "input": [0, 160], "flatten": [200, 160],
          "fc1": [400, 160], "relu1": [600, 160], "fc3": [800, 160], "optimizer": [600, 320],
          "loss": [800, 320], "train": [1000, 80]}
    for n in nodes:
        n["position"] = at.get(n["id"], n["position"])
    edges = [{"from": "train_data.samples", "to": "flip.samples"},
             {"from": "flip.samples", "to": "normalize.samples"},
             {"from": "normalize.samples", "to": "train.data"},
             {"from": "input.out", "to": "flatten.in"}, {"from": "flatten.out", "to": "fc1.in"},
             {"from": "fc1.out", "to": "relu1.in"}, {"from": "relu1.out", "to": "fc3.in"},
             {"from": "fc3.out", "to": "train.model"}, {"from": "loss.loss", "to": "train.loss"},
             {"from": "optimizer.optimizer", "to": "train.optimizer"}]
    doc.update({"name": "stream bench", "nodes": nodes, "edges": edges})
    return doc


def tree_pss(pid):
    """The PSS of pid and its descendants, in bytes (0 when gone)."""
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(p))
            except (OSError, ValueError, IndexError):
                pass
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, []))
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            pass
    return total


def run(label, cmd, env):
    """Runs cmd, sampling its processes' PSS; returns (stdout lines, peak PSS bytes)."""
    log(f"== {label}: {' '.join(cmd)}")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.2):
            peak[0] = max(peak[0], tree_pss(p.pid))

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, err = p.communicate()
    done.set()
    t.join()
    if p.returncode != 0:
        log(err[-3000:])
        raise SystemExit(f"{label} failed (exit {p.returncode})")
    return out.strip().splitlines(), err, peak[0]


def run_ours(a, label, cache_dir, events_dir):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stream.json")
        with open(path, "w") as f:
            json.dump(pipeline(a), f)
        events = os.path.join(events_dir, label.replace(" ", "-") + ".jsonl")
        env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), FLOWBENCH_CACHE_DIR=cache_dir)
        cmd = [a.cli, "run", path, "--threads", str(a.threads), "--data-workers",
               str(a.workers), "--out", os.path.join(tmp, "run"), "--events", events]
        _, err, peak = run(label, cmd, env)
        ev = [json.loads(line) for line in open(events)]
    start = next(e for e in ev if e["type"] == "run_start")
    epochs = [e for e in ev if e["type"] == "epoch"]
    progress = [e for e in ev if e["type"] == "progress"]
    notes = [e["message"] for e in ev
             if e["type"] == "log" and "the disk cache" in e.get("message", "")
             and "decoded)" not in e.get("message", "")]
    # The trainer's data wait per epoch, from the run-so-far share of each epoch's last progress.
    waits, before_wait, before_time = [], 0.0, 0.0
    for ep in epochs:
        last = [p for p in progress if p["epoch"] == ep["epoch"]][-1]
        spent = before_time + ep["seconds"]
        total_wait = last["data_wait_share"] * spent
        waits.append((total_wait - before_wait) / ep["seconds"])
        before_wait, before_time = total_wait, spent
    samples = start["train_samples"]
    first = samples / (start["t"] + epochs[0]["seconds"])
    later = statistics.median(samples / e["seconds"] for e in epochs[1:])
    return {"first": first, "later": later, "load_s": start["t"], "wait_first": waits[0],
            "wait_later": statistics.median(waits[1:]), "peak": peak, "notes": notes,
            "acc": epochs[-1]["train_accuracy"]}


def run_peer(a, label):
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    cmd = [a.peer_python, PEER, "--data", a.data, "--epochs", str(a.epochs), "--workers",
           str(a.workers), "--threads", str(a.threads), "--size", str(a.size)]
    out, _, peak = run(label, cmd, env)
    s = json.loads(out[-1])
    eps = s["epochs"]
    return {"first": eps[0]["samples_per_s"],
            "later": statistics.median(e["samples_per_s"] for e in eps[1:]),
            "load_s": None, "wait_first": eps[0]["data_wait_share"],
            "wait_later": statistics.median(e["data_wait_share"] for e in eps[1:]),
            "peak": peak, "notes": [], "acc": eps[-1]["train_accuracy"]}


def mb(b):
    return f"{b / 2**20:,.0f} MB"


def main(argv):
    a = parse_args(argv)
    if not os.path.exists(a.cli):
        raise SystemExit(f"no {a.cli}: build first (cmake --build build)")
    make_images(a)
    decoded = a.count * 3 * a.size * a.size
    cache_dir = tempfile.mkdtemp(prefix="flowbench-stream-cache-")
    events_dir = tempfile.mkdtemp(prefix="flowbench-stream-events-")
    rows = {}
    try:
        for r in range(1, a.rounds + 1):
            # The disk cache is made anew each round, so that "cold" decodes every file.
            shutil.rmtree(cache_dir, ignore_errors=True)
            os.makedirs(cache_dir)
            kinds = [("ours", "ours, first run")] if a.in_memory else [
                ("ours", "ours, first run (decodes, writes the disk cache)"),
                ("ours", "ours, next run (reads the disk cache)")]
            if not a.no_peer:
                kinds.append(("peer", f"peer: torchvision ImageFolder + DataLoader, "
                                      f"{a.workers} workers"))
            for kind, label in kinds:
                res = (run_ours(a, f"{label} r{r}", cache_dir, events_dir) if kind == "ours"
                       else run_peer(a, f"{label} r{r}"))
                log(f"   first epoch {res['first']:,.0f} samples/s, later "
                    f"{res['later']:,.0f} samples/s, data wait {100 * res['wait_first']:.0f}% / "
                    f"{100 * res['wait_later']:.0f}%, peak {mb(res['peak'])}")
                rows.setdefault(label, []).append(res)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)

    med = {k: {f: statistics.median(x[f] for x in v) for f in
               ("first", "later", "wait_first", "wait_later", "peak", "acc")} for k, v in
           rows.items()}
    for k, v in rows.items():
        med[k]["load_s"] = (statistics.median(x["load_s"] for x in v)
                            if v[0]["load_s"] is not None else None)
    peer = next((k for k in med if k.startswith("peer")), None)
    mode = ("in memory (cache_mb 0: everything held, no disk cache)" if a.in_memory else
            f"streaming (cache_mb {a.budget_mb}; disk cache)")
    lines = [f"## Data larger than memory: {a.count:,} JPEGs of {a.side} x {a.side} read at "
             f"{a.size} x {a.size} RGB ({mb(decoded)} decoded), ours {mode}; {a.threads} threads, "
             f"{a.workers} data workers, {a.epochs} epochs, {a.rounds} rounds (medians)", "",
             "| run | first epoch, loading included (samples/s) | vs peer | later epochs "
             "(samples/s) | vs peer | data wait, first / later | peak memory (PSS) | loading |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for k, v in med.items():
        r1 = f"{v['first'] / med[peer]['first']:.2f}x" if peer else "-"
        r2 = f"{v['later'] / med[peer]['later']:.2f}x" if peer else "-"
        load = f"{v['load_s']:.1f} s" if v["load_s"] is not None else "-"
        lines.append(f"| {k} | {v['first']:,.0f} | {r1} | {v['later']:,.0f} | {r2} | "
                     f"{100 * v['wait_first']:.0f}% / {100 * v['wait_later']:.0f}% | "
                     f"{mb(v['peak'])} | {load} |")
    lines.append("")
    notes = sorted({n for v in rows.values() for x in v for n in x["notes"]})
    if notes:
        lines.append("Our runs' log about the disk cache: " + " / ".join(
            "\"" + n.split(" (")[0].split(": later")[0].replace(cache_dir, "CACHE") + "\""
            for n in notes[:2]))
        lines.append("")
    if not a.in_memory:
        lines.append(f"Memory budget: cache_mb {a.budget_mb} ({mb(a.budget_mb << 20)}) for "
                     f"{mb(decoded)} of decoded pixels.")
    lines.append(f"Machine: {platform.platform()}, {os.cpu_count()} CPUs. Command: "
                 f"`python3 bench/stream_vs_peer.py {' '.join(argv)}`")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.save:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
        name = f"stream-vs-peer-{'memory-' if a.in_memory else ''}{stamp}.md"
        with open(os.path.join(ROOT, "bench", "results", name), "w") as f:
            f.write(text)
        log(f"saved bench/results/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
