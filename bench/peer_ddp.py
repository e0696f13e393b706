#!/usr/bin/env python3
"""Data-parallel peer: PyTorch's DistributedDataParallel (gloo backend, CPU) trains a reference
Fashion-MNIST model on N local processes, the way `mpirun -np N flowbench-cli run` does.

The model, data, normalization, optimizer and learning rate are the reference peer's own
(shared/bench/peer_torch.py is imported, not copied, so the two cannot drift apart). As in
Flowbench's data-parallel runs (docs/distributed.md): every rank draws the same permutation
each epoch, `--batch` is the global batch and rank r trains on its contiguous share of each one;
DDP averages the gradients, which for equal shares is the same update. Every rank uses
`--threads` threads. Rank 0 prints one JSON line like peer_torch.py's: training samples/s of the
whole job (global samples over rank 0's training time, between barriers), and test accuracy.

  python3 bench/peer_ddp.py --ranks 2 --threads 1 --model mlp --epochs 1
  python3 bench/peer_ddp.py --ranks 1 --threads 1 --model cnn --limit 4000   # DDP with one rank

Needs Debian's python3-torch (scripts/deps.sh --bench). Used by bench/ddp_vs_peer.py.
"""
import argparse
import importlib.util
import json
import os
import socket
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_peer(path):
    spec = importlib.util.spec_from_file_location("peer_torch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, a, port):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel

    peer = load_peer(a.peer)
    torch.set_num_threads(a.threads)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=a.ranks)
    torch.manual_seed(0)  # every rank builds the same model; DDP broadcasts rank 0's anyway
    xtr, ytr = peer.images("train", a.limit)
    model = DistributedDataParallel(peer.build(a.model))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)

    n, seen = xtr.shape[0], 0
    generator = torch.Generator().manual_seed(0)
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(a.epochs):
        perm = torch.randperm(n, generator=generator)  # the same on every rank
        for i in range(0, n, a.batch):
            batch = perm[i:i + a.batch]
            share = (len(batch) + a.ranks - 1) // a.ranks
            j = batch[rank * share:(rank + 1) * share]
            if len(j) == 0:  # a short last batch: this rank repeats a sample (DDP needs every rank)
                j = batch[:1]
            loss = F.cross_entropy(model(xtr[j]), ytr[j])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            seen += len(batch)
    dist.barrier()
    train_s = time.perf_counter() - t0

    if rank == 0:
        xte, yte = peer.images("t10k")
        model.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, xte.shape[0], 1000):
                correct += (model.module(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
        print(json.dumps({"peer": f"torch {torch.__version__} DDP gloo", "model": a.model,
                          "ranks": a.ranks, "threads": a.threads, "batch": a.batch,
                          "epochs": a.epochs, "train_samples_per_s": round(seen / train_s, 1),
                          "train_s": round(train_s, 3), "final_loss": round(loss.item(), 4),
                          "test_accuracy": correct / xte.shape[0]}), flush=True)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=128, help="the global batch")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=1, help="threads of each rank")
    ap.add_argument("--limit", type=int, default=None, help="train on the first N samples only")
    ap.add_argument("--peer", default=os.environ.get("FLOWBENCH_PEER") or
                    os.path.join(ROOT, "..", "shared", "bench", "peer_torch.py"))
    a = ap.parse_args()
    if a.ranks < 1 or a.threads < 1 or a.batch < a.ranks:
        ap.error("--ranks and --threads must be at least 1, and --batch at least --ranks")
    if not os.path.isfile(a.peer):
        ap.error(f"peer script not found: {a.peer} (use --peer or $FLOWBENCH_PEER)")
    import torch.multiprocessing as mp
    mp.spawn(worker, args=(a, free_port()), nprocs=a.ranks, join=True)


if __name__ == "__main__":
    sys.exit(main())
