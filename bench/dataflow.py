#!/usr/bin/env python3
"""Data-flow benchmark: does the trainer wait for augmented data, and what does the event stream
cost?

Runs the augmented example (resources/examples/fashion_mnist_cnn_augmented.json: random crop,
flip and affine warp on the data workers) for one epoch, interleaving per round: ours without
--events, ours with --events FILE, and the PyTorch peer's plain `cnn` (the same model; the peer
has no augmentation, so the ratio is conservative). Prints, from medians over the rounds:

  - samples/s with and without the event stream, and the stream's cost (median of the per-round
    paired ratios), against the requirement < 2%;
  - the share of step time the trainer spent waiting for data, against the requirement <= 5%,
    and the bottleneck the run named;
  - the speed ratio ours (augmented, with events) / peer (plain).

  python3 bench/dataflow.py                      # 4 rounds, full epoch, 2 threads
  python3 bench/dataflow.py --limit 10000 --rounds 2 --no-peer   # quick look, not a figure
  python3 bench/dataflow.py --save               # also write bench/results/dataflow-*.md

Standard library only; shares its runner helpers with bench/cpu_vs_peer.py. Exit status: 0 when
every run completed (with --strict, 3 when a requirement FAILs), 1 when a run failed, 2 on bad
usage.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_peer import RunFailed, child_env, log, number, run_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINE = os.path.join("resources", "examples", "fashion_mnist_cnn_augmented.json")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data-workers", type=int, default=None,
                    help="data workers for our runs (default: the pipeline's automatic choice)")
    ap.add_argument("--limit", type=int, default=None, metavar="K",
                    help="train on the first K samples only (quick runs; not a qualifying figure)")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "bin", "flowbench-cli"))
    ap.add_argument("--peer", default=os.environ.get("FLOWBENCH_PEER") or os.path.join(
        ROOT, "..", "shared", "bench", "peer_torch.py"))
    ap.add_argument("--peer-python", default="/usr/bin/python3")
    ap.add_argument("--no-peer", action="store_true", help="skip the peer runs")
    ap.add_argument("--max-wait", type=float, default=5.0, help="allowed data wait, percent")
    ap.add_argument("--max-events-cost", type=float, default=2.0,
                    help="allowed cost of --events, percent")
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--strict", action="store_true")
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.threads < 1:
        ap.error("--rounds and --threads must be at least 1")
    a.cli = os.path.abspath(a.cli)
    if not os.access(a.cli, os.X_OK):
        ap.error(f"our runner not found: {a.cli} (build first)")
    a.data = None
    return a


def run_ours(a, rnd, events):
    label = f"round {rnd}/{a.rounds} ours {'with' if events else 'without'} events"
    with tempfile.TemporaryDirectory(prefix="flowbench-bench-flow-") as tmp:
        cmd = [a.cli, "run", PIPELINE, "--threads", str(a.threads), "--set", "train.epochs=1",
               "--out", os.path.join(tmp, "run")]
        if a.limit is not None:
            cmd += ["--set", f"train_data.limit={a.limit}"]
        if a.data_workers is not None:
            cmd += ["--data-workers", str(a.data_workers)]
        if events:
            cmd += ["--events", os.path.join(tmp, "events.jsonl")]
        s = run_json(label, cmd, child_env(a))
        event_count = 0
        if events:
            with open(os.path.join(tmp, "events.jsonl")) as f:
                event_count = sum(1 for _ in f)
    if s.get("status") != "ok":
        raise RunFailed(f"{label}: status {s.get('status')!r}, error {json.dumps(s.get('error'))}")
    return {"sps": number(s, "train_samples_per_s", label),
            "wait": number(s, "data_wait_share", label),
            "bottleneck": s.get("bottleneck"), "acc": s.get("test_accuracy"),
            "events": event_count}


def run_peer(a, rnd):
    label = f"round {rnd}/{a.rounds} peer (plain cnn)"
    cmd = [a.peer_python, a.peer, "--model", "cnn", "--epochs", "1", "--threads", str(a.threads)]
    if a.limit is not None:
        cmd += ["--limit", str(a.limit)]
    s = run_json(label, cmd, child_env(a))
    return {"sps": number(s, "train_samples_per_s", label), "acc": s.get("test_accuracy")}


def main(argv):
    a = parse_args(argv)
    plain, streamed, peer = [], [], []
    try:
        for rnd in range(1, a.rounds + 1):
            # The order alternates from round to round (ABBA), so that a drift of the machine
            # (caches, clocks, a neighbour) does not land on one side of the events pair.
            if rnd % 2:
                plain.append(run_ours(a, rnd, events=False))
                streamed.append(run_ours(a, rnd, events=True))
            else:
                streamed.append(run_ours(a, rnd, events=True))
                plain.append(run_ours(a, rnd, events=False))
            if not a.no_peer:
                peer.append(run_peer(a, rnd))
    except RunFailed as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1

    med = statistics.median
    cost = 100.0 * (1.0 - med([s["sps"] / p["sps"] for s, p in zip(streamed, plain)]))
    wait = 100.0 * med([r["wait"] for r in plain + streamed])
    bottlenecks = sorted({r["bottleneck"] for r in plain + streamed})
    wait_ok = wait <= a.max_wait
    cost_ok = cost < a.max_events_cost
    lines = [
        f"## Data flow: augmented CNN, 1 epoch{f' on {a.limit} samples' if a.limit else ''}, "
        f"{a.threads} threads, {a.rounds} rounds (medians)",
        "",
        "| run | samples/s | data wait | bottleneck | events | test acc |",
        "|---|---:|---:|---|---:|---:|",
        f"| ours, no --events | {med([r['sps'] for r in plain]):,.0f} | "
        f"{100 * med([r['wait'] for r in plain]):.2f}% | "
        f"{', '.join(sorted({r['bottleneck'] for r in plain}))} | - | "
        f"{med([r['acc'] for r in plain]):.4f} |",
        f"| ours, --events FILE | {med([r['sps'] for r in streamed]):,.0f} | "
        f"{100 * med([r['wait'] for r in streamed]):.2f}% | "
        f"{', '.join(sorted({r['bottleneck'] for r in streamed}))} | "
        f"{med([r['events'] for r in streamed]):,.0f} | "
        f"{med([r['acc'] for r in streamed]):.4f} |",
    ]
    if peer:
        lines.append(f"| peer, plain cnn (no augmentation) | {med([p['sps'] for p in peer]):,.0f} "
                     f"| - | - | - | {med([p['acc'] for p in peer]):.4f} |")
    lines += [
        "",
        f"- data wait (share of step time): **{wait:.2f}%** (requirement <= {a.max_wait:g}%): "
        f"{'PASS' if wait_ok else 'FAIL'}; bottleneck named: {', '.join(bottlenecks)}",
        f"- cost of the event stream: **{cost:.2f}%** (requirement < {a.max_events_cost:g}%): "
        f"{'PASS' if cost_ok else 'FAIL'}",
    ]
    if peer:
        ratio = med([s["sps"] / p["sps"] for s, p in zip(streamed, peer)])
        lines.append(f"- ours augmented with events / peer plain: **{ratio:.2f}x**")
    lines += ["", "Per round (samples/s): " + "; ".join(
        f"{i + 1}: {p['sps']:,.0f} without, {s['sps']:,.0f} with events"
        + (f", peer {peer[i]['sps']:,.0f}" if peer else "")
        for i, (p, s) in enumerate(zip(plain, streamed)))]
    report = "\n".join(lines)
    print(report)
    if a.save:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
        path = os.path.join(ROOT, "bench", "results", f"dataflow-{stamp}.md")
        with open(path, "w") as f:
            f.write(report + "\n\n")
            f.write(f"Machine: {platform.platform()}, {os.cpu_count()} CPUs. Command: "
                    f"`python3 bench/dataflow.py {' '.join(argv)}`\n")
        log(f"saved {path}")
    if a.strict and not (wait_ok and cost_ok):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
