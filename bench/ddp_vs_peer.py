#!/usr/bin/env python3
"""Data-parallel benchmark: `mpirun -np N flowbench-cli run` against PyTorch's
DistributedDataParallel (gloo backend, CPU) on the same model, data and global batch.

Each round runs four jobs back to back -- ours on 1 rank, ours on N ranks, the peer on 1 rank,
the peer on N ranks -- every rank with `--threads` threads (default 1, so N ranks use N cores).
One markdown table per model: training samples/s of each (median over rounds), the ratio
ours/peer at N ranks, each side's scaling efficiency (samples/s at N ranks over N times its
samples/s at 1 rank), and test accuracy. The requirement (issue 18): ours >= the peer's samples/s
at N ranks; the aim is 3x. See bench/README.md and docs/distributed.md.

  python3 bench/ddp_vs_peer.py                       # mlp and cnn, 2 ranks x 1 thread, 2 rounds
  python3 bench/ddp_vs_peer.py --models mlp --rounds 3 --save
  python3 bench/ddp_vs_peer.py --limit 4000 --rounds 1   # smoke run; not a qualifying figure

Needs a build with MPI (scripts/deps.sh installs Open MPI), mpirun, and python3-torch
(scripts/deps.sh --bench). Exit status: 0 when every run completed, 1 when a run failed, 2 on bad
usage, 3 with --strict when a model FAILs.
"""
import argparse
import datetime
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_vs_peer import (ROOT, MODELS, RunFailed, add_runner_args, cpu_model, fmt_sps,  # noqa: E402
                         git_revision, guarded, log, number, resolve_runner_args, run_json,
                         runner_settings, save_results)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Flowbench on N MPI ranks vs PyTorch DDP (gloo) on N processes, CPU.",
        epilog="Runs are interleaved and the median is quoted. See bench/README.md.")
    ap.add_argument("--models", default="mlp,cnn", help="comma-separated, out of mlp,cnn")
    ap.add_argument("--ranks", type=int, default=2, help="ranks of the data-parallel runs (2)")
    ap.add_argument("--threads", type=int, default=1, help="threads of each rank (1)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per model (2)")
    ap.add_argument("--epochs", type=int, default=1, help="training epochs per run (1)")
    add_runner_args(ap)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--peer-python", default="/usr/bin/python3")
    ap.add_argument("--peer-ddp", default=os.path.join(ROOT, "bench", "peer_ddp.py"))
    ap.add_argument("--min-ratio", type=float, default=1.0,
                    help="required ratio ours/peer at N ranks (default 1.0; the aim is 3)")
    ap.add_argument("--save", action="store_true", help="also write the tables to bench/results/")
    ap.add_argument("--strict", action="store_true", help="exit 3 when any model FAILs")
    a = ap.parse_args(argv)
    a.models = [m.strip() for m in a.models.split(",") if m.strip()]
    bad = [m for m in a.models if m not in MODELS]
    if bad or not a.models:
        ap.error(f"--models: unknown {', '.join(bad) or '(empty)'}; choose from {', '.join(MODELS)}")
    for name in ("rounds", "epochs", "threads"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    if a.ranks < 2:
        ap.error("--ranks must be at least 2 (1 rank is always measured beside it)")
    problems = resolve_runner_args(ap, a, "build first: scripts/test.sh or cmake --build build")
    if not shutil.which(a.mpirun):
        problems.append(f"mpirun not found ({a.mpirun}): scripts/deps.sh installs openmpi-bin")
    if not os.path.isfile(a.peer_python):
        problems.append(f"peer interpreter not found: {a.peer_python} (scripts/deps.sh --bench)")
    if problems:
        ap.error(problems[0])
    return a


def env_for(a):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(a.threads)
    # Open MPI refuses root without these; the benchmark runs on developers' machines and CI's.
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if a.data is not None:
        env["FASHION_MNIST_DIR"] = os.path.join(os.path.abspath(a.data), "")
    return env


def run_ours(a, model, ranks, label):
    pipeline = os.path.join("resources", "examples", f"fashion_mnist_{model}.json")
    with tempfile.TemporaryDirectory(prefix=f"flowbench-ddp-{model}-") as tmp:
        cmd = [a.cli, "run", pipeline, "--device", "cpu", "--threads", str(a.threads),
               "--set", f"train.epochs={a.epochs}", "--out", os.path.join(tmp, "run")]
        cmd += runner_settings(a)
        if ranks > 1:
            cmd = [a.mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] + cmd
        s = run_json(label, cmd, env_for(a))
    if s.get("status") != "ok":
        raise RunFailed(f"{label}: status {s.get('status')!r}, error {s.get('error')!r}")
    return {"sps": number(s, "train_samples_per_s", label),
            "acc": number(s, "test_accuracy", label), "comm": s.get("comm_share")}


def run_peer(a, model, ranks, label):
    cmd = [a.peer_python, a.peer_ddp, "--peer", a.peer, "--model", model, "--ranks", str(ranks),
           "--threads", str(a.threads), "--epochs", str(a.epochs)]
    if a.limit is not None:
        cmd += ["--limit", str(a.limit)]
    s = run_json(label, cmd, env_for(a))
    return {"sps": number(s, "train_samples_per_s", label),
            "acc": number(s, "test_accuracy", label), "version": s.get("peer")}


def report(a, model, rounds):
    n = a.ranks
    med = lambda key, side: statistics.median(r[side][key] for r in rounds)  # noqa: E731
    o1, o2 = med("sps", "ours1"), med("sps", "oursN")
    p1, p2 = med("sps", "peer1"), med("sps", "peerN")
    ratio = statistics.median(r["oursN"]["sps"] / r["peerN"]["sps"] for r in rounds)
    eff_o = statistics.median(r["oursN"]["sps"] / (n * r["ours1"]["sps"]) for r in rounds)
    eff_p = statistics.median(r["peerN"]["sps"] / (n * r["peer1"]["sps"]) for r in rounds)
    acc_o, acc_p = med("acc", "oursN"), med("acc", "peerN")
    verdict = "PASS" if ratio >= a.min_ratio else "FAIL"
    lines = [f"### {model}: {n} ranks x {a.threads} thread(s), global batch 128, {a.epochs} "
             f"epoch(s), {len(rounds)} round(s)" + (f", train limit {a.limit}" if a.limit else ""),
             "",
             f"| round | ours 1 rank | ours {n} ranks | peer 1 rank | peer {n} ranks "
             f"| ratio ours/peer at {n} | ours efficiency | peer efficiency | ours acc "
             f"| peer acc |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(rounds, 1):
        lines.append(
            f"| {i} | {fmt_sps(r['ours1']['sps'])} | {fmt_sps(r['oursN']['sps'])} | "
            f"{fmt_sps(r['peer1']['sps'])} | {fmt_sps(r['peerN']['sps'])} | "
            f"{r['oursN']['sps'] / r['peerN']['sps']:.2f} | "
            f"{r['oursN']['sps'] / (n * r['ours1']['sps']):.0%} | "
            f"{r['peerN']['sps'] / (n * r['peer1']['sps']):.0%} | "
            f"{r['oursN']['acc']:.4f} | {r['peerN']['acc']:.4f} |")
    lines.append(f"| **median** | **{fmt_sps(o1)}** | **{fmt_sps(o2)}** | **{fmt_sps(p1)}** | "
                 f"**{fmt_sps(p2)}** | **{ratio:.2f}** | **{eff_o:.0%}** | **{eff_p:.0%}** | "
                 f"**{acc_o:.4f}** | **{acc_p:.4f}** |")
    comm = [r["oursN"]["comm"] for r in rounds if isinstance(r["oursN"]["comm"], (int, float))]
    lines += ["", f"Samples/s of the whole job. Efficiency: samples/s at {n} ranks over {n} x "
              f"samples/s at 1 rank." + (f" Ours spent {statistics.median(comm):.0%} of its "
                                         f"step time in all-reduce (comm_share)." if comm else ""),
              f"Requirement: ratio >= {a.min_ratio:g} (aim 3): **{verdict}**", ""]
    if a.limit is not None:
        lines.append(f"(Quick run with --limit {a.limit}: not a qualifying figure.)\n")
    return verdict, "\n".join(lines)


def main(argv=None):
    a = parse_args(argv)
    started = datetime.datetime.now()
    sections, verdicts = [], []
    version = None

    def body():
        nonlocal version
        for model in a.models:
            rounds = []
            for rnd in range(1, a.rounds + 1):
                tag = f"{model} round {rnd}/{a.rounds}"
                r = {"ours1": run_ours(a, model, 1, f"{tag} ours 1 rank"),
                     "oursN": run_ours(a, model, a.ranks, f"{tag} ours {a.ranks} ranks"),
                     "peer1": run_peer(a, model, 1, f"{tag} peer 1 rank"),
                     "peerN": run_peer(a, model, a.ranks, f"{tag} peer {a.ranks} ranks")}
                version = version or r["peerN"].get("version")
                log(f"{tag}: ours {fmt_sps(r['oursN']['sps'])}/s, peer "
                    f"{fmt_sps(r['peerN']['sps'])}/s at {a.ranks} ranks")
                rounds.append(r)
            verdict, text = report(a, model, rounds)
            verdicts.append(verdict)
            sections.append(text)
            print(text, flush=True)

    failed = guarded(body)
    if failed is not None:
        return failed
    if a.save:
        mpi = subprocess.run([a.mpirun, "--version"], capture_output=True, text=True).stdout
        header = "\n".join([
            f"- date: {started.strftime('%Y-%m-%d %H:%M')} (local time)",
            f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs visible)",
            f"- ours: {os.path.relpath(a.cli, ROOT)} at git {git_revision()}, "
            f"{(mpi.splitlines() or ['mpirun'])[0]}",
            f"- peer: {version or 'unknown'} via {a.peer_python} {os.path.relpath(a.peer_ddp, ROOT)}",
            f"- host: {platform.node()}, {platform.platform()}",
            f"- command: {' '.join(shlex.quote(x) for x in sys.argv)}", "", ""])
        save_results("ddp", a.models, started,
                     "Data-parallel benchmark: Flowbench (MPI) vs PyTorch DDP (gloo)", header,
                     sections)
    return 3 if a.strict and "FAIL" in verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
