#!/usr/bin/env python3
"""The peer of bench/stream_vs_peer.py: torchvision's ImageFolder and DataLoader over a folder of
JPEGs, decoding every picture every epoch on `--workers` worker processes, feeding the same small
model Flowbench trains there (Flatten, Linear(3*S*S, 16), ReLU, Linear(16, 10); SGD lr 0.002,
momentum 0.9, batch 128) with the same augmentation (resize to S x S, random horizontal flip,
normalize).

Prints one JSON line per epoch ({"epoch", "seconds", "samples", "samples_per_s",
"data_wait_share"}) and a summary as the last line. The clock of epoch 1 starts before the
DataLoader is made, so its first workers' start-up counts, as Flowbench's loading counts for it.
Runs with Debian's python3-torch and python3-torchvision (`/usr/bin/python3`).
"""
import argparse
import json
import sys
import time


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--batch", type=int, default=128)
    a = ap.parse_args(argv)

    import torch
    import torchvision.transforms as T
    from torch import nn
    from torchvision.datasets import ImageFolder

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    transform = T.Compose([
        T.Resize((a.size, a.size)),
        T.RandomHorizontalFlip(),
        T.ToTensor(),
        T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25)),
    ])
    t0 = time.perf_counter()
    data = ImageFolder(a.data, transform=transform)
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, shuffle=True,
                                         num_workers=a.workers, persistent_workers=a.workers > 0,
                                         drop_last=False)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * a.size * a.size, 16), nn.ReLU(),
                          nn.Linear(16, len(data.classes)))
    opt = torch.optim.SGD(model.parameters(), lr=0.002, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    epochs = []
    for epoch in range(1, a.epochs + 1):
        start = t0 if epoch == 1 else time.perf_counter()
        wait = 0.0
        samples = correct = 0
        it = iter(loader)
        while True:
            w = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            wait += time.perf_counter() - w
            opt.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            loss.backward()
            opt.step()
            samples += len(y)
            correct += int((out.argmax(1) == y).sum())
        seconds = time.perf_counter() - start
        e = {"epoch": epoch, "seconds": round(seconds, 3), "samples": samples,
             "samples_per_s": round(samples / seconds, 1),
             "data_wait_share": round(wait / seconds, 4),
             "train_accuracy": round(correct / max(1, samples), 4)}
        epochs.append(e)
        print(json.dumps(e), flush=True)
    print(json.dumps({"status": "ok", "epochs": epochs}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
