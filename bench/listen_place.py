#!/usr/bin/env python3
"""Where in its window a keyword model is sure of a word: the probability of each digit's own class
by how far the window's middle lies from the word's.

    python3 bench/listen_place.py --model runs/<run> --recordings ~/kws-recordings
    python3 bench/listen_place.py --model runs/a --model runs/b --recordings ... --cache ~/kws-windows

Listening (`flowbench-cli listen`, docs/audio.md "Listen") hears each word in the windows that
slide over it, every 100 ms, and detects a digit when the average of its last 4 centred windows
reaches the threshold: a model sure of a word only where it sits at one place of the window finds
fewer of them, whatever the threshold. For every digit of the recordings' truth, each window
whose middle lies within 0.5 s of the word's middle is one row: its offset (the window's middle
minus the word's, in 50 ms steps: positive when the word sits early in the window), the
probability the model gives the digit there, and whether listen's centring gate counts the window
(off-centre windows count as certain background). Printed for each offset: the windows, the mean
probability, the share at 0.9 or more, and the share the gate counts; then the same for short
and long words apart (under 0.45 s, and from it). The windows are listen's own (`--windows`,
each heard three ways at its default --warp), through listen_curve.py's cache when --cache is
given, so a model the curve heard is not heard again.

--recordings is a folder kept by listen_accuracy.py --recordings (digits*.wav with their .tsv
truths; the no-digits recordings have no digits and are left out).
"""

import argparse
import collections
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listen_accuracy import read_truth  # noqa: E402
from listen_curve import WARP, listen_windows  # noqa: E402

STEP = 0.05  # seconds an offset row spans
REACH = 0.5  # the farthest window's middle from the word's, in seconds
SHORT = 0.45  # words shorter than this (seconds) are "short"


def rows(model, recording, cache):
    """(offset, probability, centred, word length) for each digit's windows within REACH."""
    wins = []
    for line in listen_windows(model, recording, cache, WARP):
        w = json.loads(line)
        if w["kind"] == "window":
            wins.append(((w["start"] + w["end"]) / 2, w["probabilities"], w["centred"]))
    out = []
    for w0, w1, label, *_ in read_truth(recording + ".tsv"):
        if label == "other":
            continue
        mid = (w0 + w1) / 2
        for centre, p, centred in wins:
            offset = centre - mid
            if abs(offset) <= REACH + 1e-9:
                out.append((round(offset / STEP) * STEP, p.get(label, 0.0), centred, w1 - w0))
    return out


def table(data, title):
    by = collections.defaultdict(list)
    for offset, p, centred, _ in data:
        by[offset].append((p, centred))
    print(f"\n{title}")
    print("| window's middle minus the word's | windows | mean probability | at 0.9 or more | "
          "centred |")
    print("|---:|---:|---:|---:|---:|")
    for offset in sorted(by):
        v = by[offset]
        n = len(v)
        print(f"| {offset:+.2f} s | {n} | {sum(p for p, _ in v) / n:.3f} | "
              f"{100 * sum(p >= 0.9 for p, _ in v) / n:.0f}% | "
              f"{100 * sum(c for _, c in v) / n:.0f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a run folder (repeatable)")
    ap.add_argument("--recordings", required=True, help="listen_accuracy.py's kept recordings")
    ap.add_argument("--cache", help="listen_curve.py's cache of each model's windows")
    args = ap.parse_args()
    recordings = sorted(glob.glob(os.path.join(args.recordings, "digits*.wav")))
    if not recordings:
        sys.exit(f"listen_place: no digits*.wav in {args.recordings}")
    for model in args.model:
        data = [r for rec in recordings for r in rows(model, rec, args.cache)]
        words = sum(1 for rec in recordings for w in read_truth(rec + ".tsv") if w[2] != "other")
        print(f"model: {model}; {args.recordings}: {words} digits, --warp {WARP}")
        table(data, "every digit")
        table([r for r in data if r[3] < SHORT], f"digits under {SHORT} s")
        table([r for r in data if r[3] >= SHORT], f"digits of {SHORT} s or more")


if __name__ == "__main__":
    main()
