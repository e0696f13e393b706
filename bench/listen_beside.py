#!/usr/bin/env python3
"""What noise right beside a word does to a keyword model: each digit's score when it follows
(or is followed by) a stretch of pink or brown noise, beside the same word in quiet.

    python3 bench/listen_beside.py --model runs/<run> --words ~/.local/share/flowbench/spoken_digits \
        --held-out --voices '^espeak-' --per-digit 20

In a long recording a word often has noise right up to it: a fan, traffic, a room, which stops
or starts where the word does in bench/listen_accuracy.py's recordings
(tests/make_listen_recording.sh). A model that takes the noise for a sound of the word (an "h",
an "m" before "eight", a "k" after "four") loses the word to `unknown`. For each digit this picks
--per-digit recordings of --words (a folder `audio_folder` reads: LABEL_SPEAKER_INDEX.wav; the
speakers matching --voices), trims each to its word as make_listen_recording.sh does, and builds
one recording per condition, each word alone in 1 s of quiet with half a second of quiet, pink
noise or brown noise right before or right after it, at make_listen_recording.sh's levels (sox
`pinknoise vol 0.05`, `brownnoise vol 0.1`, over its floor of `pinknoise vol 0.003`). Each is
heard by `flowbench-cli listen --windows` at listen's defaults (through listen_curve.py's cache
with --cache), and each word's score is the detector's: its class's highest average over 4
windows within half a second of it (listen_curve.py's peaks). Printed: for each condition the
share of the digits whose score reaches --threshold (listen's default 0.85) and their mean score,
then the same share for each digit, so that a digit that noise beside takes away stands out.

--held-out draws only from the recordings the model never trained on (its evaluate node's, as
`flowbench-cli held-out-stream` lists them), so that the words are new to it; without it the
comparison between the conditions is still what this measures, each word heard in all of them.
"""

import argparse
import collections
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listen_curve import CLI, peaks, windows  # noqa: E402

RATE = 16000
GAP = 1.0  # seconds of quiet between one word's stretch and the next
BESIDE = 0.5  # seconds of noise (or quiet) right before or after the word
NOISE = {"pink": ["pinknoise", "vol", "0.05"], "brown": ["brownnoise", "vol", "0.1"]}
FLOOR = ["pinknoise", "vol", "0.003"]
CONDITIONS = ["quiet", "pink before", "brown before", "pink after", "brown after"]
DIGITS = [str(d) for d in range(10)]


def sox(*args):
    subprocess.run(["sox", "-R", *args], check=True, capture_output=True)


def new(path, *effects):
    """A 16 kHz mono 16-bit file made by sox's effects from nothing (the rate given to the null
    input too, so that a length in samples is the file's)."""
    sox("-r", str(RATE), "-c", "1", "-n", "-b", "16", path, *effects)


def samples(path):
    r = subprocess.run(["soxi", "-s", path], check=True, capture_output=True, text=True)
    return int(r.stdout)


def held_out(model, tmp):
    """The file names of the recordings the model never trained on: its evaluate node's, as
    `flowbench-cli held-out-stream` lists them beside the stream it makes."""
    r = subprocess.run([CLI, "held-out-stream", model, f"{tmp}/held-out.wav"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"listen_beside: held-out-stream failed: {r.stderr[-2000:]}")
    return {line.split("\t")[3] for line in open(f"{tmp}/held-out.txt").read().splitlines()}


def pick(folder, voices, per_digit, seed, only=None):
    """per_digit recordings of each digit whose speaker matches voices (and whose name is in
    only, when given), drawn with seed."""
    name = re.compile(r"^([^_]+)_(.+)_(\d+)\.wav$")
    by_digit = collections.defaultdict(list)
    for f in sorted(os.listdir(folder)):
        m = name.match(f)
        if only is not None and f not in only:
            continue
        if m and m.group(1) in DIGITS and re.search(voices, m.group(2)):
            by_digit[m.group(1)].append(os.path.join(folder, f))
    rng = random.Random(seed)
    chosen = []
    for d in DIGITS:
        if not by_digit[d]:
            sys.exit(f"listen_beside: no recording of {d} by a speaker matching {voices!r} "
                     f"in {folder}")
        chosen += [(d, f) for f in rng.sample(by_digit[d], min(per_digit, len(by_digit[d])))]
    return chosen


def build(words, condition, tmp):
    """One recording of every word in the condition, its truth file beside it, and the truth as
    listen_accuracy.py's read_truth gives it."""
    kind, _, side = condition.partition(" ")
    length = len(words) * int(BESIDE * RATE)
    if kind != "quiet":
        new(f"{tmp}/{kind}.wav", "synth", f"{length}s", *NOISE[kind])
    quiet = f"{tmp}/quiet.wav"
    new(quiet, "trim", "0", f"{int(BESIDE * RATE)}s")
    gap = f"{tmp}/gap.wav"
    new(gap, "trim", "0", f"{int(GAP * RATE)}s")
    parts, truth, t = [], [], 0
    for i, (label, word) in enumerate(words):
        beside = quiet
        if kind != "quiet":  # each word its own stretch of one long stream
            beside = f"{tmp}/b{i}.wav"
            sox(f"{tmp}/{kind}.wav", beside, "trim", f"{i * int(BESIDE * RATE)}s",
                f"{int(BESIDE * RATE)}s")
        before, after = (beside, quiet) if side == "before" else (quiet, beside)
        n = samples(word)
        parts += [gap, before, word, after]
        start = t + int((GAP + BESIDE) * RATE)
        truth.append([start / RATE, (start + n) / RATE, label, False, label,
                      os.path.basename(word)])
        t = start + n + int(BESIDE * RATE)
    parts.append(gap)
    speech = f"{tmp}/speech.wav"
    sox(*parts, speech)
    total = samples(speech)
    floor = f"{tmp}/floor.wav"
    new(floor, "synth", f"{total}s", *FLOOR)
    out = f"{tmp}/{condition.replace(' ', '-')}.wav"
    sox("-m", speech, floor, "-b", "16", out)
    with open(out + ".tsv", "w") as f:
        f.writelines(f"{a:.4f}\t{b:.4f}\t{c}\t{w}\t{v}\n" for a, b, c, _, w, v in truth)
    return out, truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a run folder")
    ap.add_argument("--words", required=True,
                    help="a folder of LABEL_SPEAKER_INDEX.wav recordings (the data set's layout)")
    ap.add_argument("--voices", default="", help="a regular expression the speakers match")
    ap.add_argument("--held-out", action="store_true",
                    help="only the recordings the model never trained on (its evaluate node's)")
    ap.add_argument("--per-digit", type=int, default=20, help="recordings of each digit")
    ap.add_argument("--seed", type=int, default=1, help="which recordings are drawn")
    ap.add_argument("--threshold", type=float, default=0.85, help="listen's --threshold")
    ap.add_argument("--cache", help="listen_curve.py's cache of each model's windows")
    ap.add_argument("--keep", help="keep the recordings made (and their truth) in this folder")
    a = ap.parse_args()

    tmp = a.keep or tempfile.mkdtemp(prefix="listen-beside-")
    os.makedirs(tmp, exist_ok=True)
    only = held_out(a.model, tmp) if a.held_out else None
    chosen = pick(a.words, a.voices, a.per_digit, a.seed, only)
    words = []
    for i, (label, f) in enumerate(chosen):
        # Trimmed of its silence as make_listen_recording.sh trims espeak-ng's, at one level.
        w = f"{tmp}/w{i}.wav"
        sox(f, "-r", str(RATE), "-c", "1", "-b", "16", w, "silence", "1", "0.01", "0.5%",
            "reverse", "silence", "1", "0.01", "0.5%", "reverse", "norm", "-6")
        words.append((label, w))

    scores = {}
    for condition in CONDITIONS:
        rec, truth = build(words, condition, tmp)
        scores[condition] = [row[0] for row in peaks(windows(a.model, rec, a.cache), truth, 4)]
        print(f"heard: {condition}", file=sys.stderr, flush=True)

    labels = [label for label, _ in words]
    print(f"model: {a.model}; {len(words)} {'held-out ' if a.held_out else ''}recordings of "
          f"{a.words} ({a.voices or 'every voice'}),"
          f" {a.per_digit} of each digit, seed {a.seed}")
    print(f"\n| beside the word | digits at {a.threshold:g} or more | mean score |")
    print("|---|---:|---:|")
    for c in CONDITIONS:
        s = scores[c]
        print(f"| {c} | {100 * sum(v >= a.threshold for v in s) / len(s):.1f}% | "
              f"{sum(s) / len(s):.3f} |")
    print(f"\nEach digit's share at {a.threshold:g} or more:\n")
    print("| digit | " + " | ".join(CONDITIONS) + " |")
    print("|---|" + "---:|" * len(CONDITIONS))
    for d in DIGITS:
        cells = []
        for c in CONDITIONS:
            s = [v for v, label in zip(scores[c], labels) if label == d]
            cells.append(f"{100 * sum(v >= a.threshold for v in s) / len(s):.0f}%")
        print(f"| {d} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
