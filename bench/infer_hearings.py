#!/usr/bin/env python3
"""What hearing each recording three ways, and taking the training data's class shares out of
the probabilities, do to `flowbench-cli infer`: the share of recordings named right, heard once
and as trained (`--warp 0 --balance 0`, as the evaluation) and with each --warp and --balance
given (`--warp 0.08 --balance 0.5`, infer's defaults: also played 0.92 and 1.08 times as fast,
the probabilities the mean of the three, each over its class's share of the training labels to
the power 0.5), over groups of voices. Every hearing crops a recording longer than the window
around its sound (infer's default since 2026-12-07; the evaluation crops about the middle, which
only recordings longer than the window after trimming feel).

    python3 bench/infer_hearings.py --model runs/<run> --words ~/.local/share/flowbench/spoken_digits \
        --voices '^flite-' --voices '^festival-(cs|ca)-'
    python3 bench/infer_hearings.py ... --balance 0 --balance 0.5 --balance 1
    python3 bench/infer_hearings.py --model runs/<run> --words DATA --held-out --voices '^espeak-' \
        --voices '^flite-' --voices '^festival-' --voices .

--words is a folder `audio_folder` reads (LABEL_SPEAKER_INDEX.wav); each --voices a regular
expression over the speaker, one group of recordings each, every recording of a matching speaker
in it. --held-out keeps only those the model never trained on (its evaluate node's, as
`flowbench-cli held-out-stream` lists them), for a model trained on that folder; for a model
trained with those voices held out (validation_speakers), every recording of theirs is new to
it already. --held-out lists the words only, not the background noise. Printed: for each
group the share named right (every class, the digits alone, and the other words and sounds) at
each hearing, and how many recordings each hearing named right that the single one did not, and
the other way round. Every recording is heard by one `infer` process per setting.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listen_beside import held_out  # noqa: E402
from listen_curve import CLI  # noqa: E402

NAME = re.compile(r"^([^_]+)_(.+)_([^_]+)\.wav$")


def predictions(model, files, warp, balance):
    """infer's top class for each file, heard at --warp warp and --balance balance."""
    r = subprocess.run([CLI, "infer", model, "--top", "1", "--warp", warp, "--balance", balance]
                       + files, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"infer_hearings: infer --warp {warp} --balance {balance} failed: "
                 f"{r.stderr[-2000:]}")
    out = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        out[o["input"]] = o["top"][0]["class"]
    if len(out) != len(files):
        sys.exit(f"infer_hearings: infer gave {len(out)} predictions for {len(files)} files")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a run folder or a model file")
    ap.add_argument("--words", required=True, help="a folder of LABEL_SPEAKER_INDEX.wav")
    ap.add_argument("--voices", action="append", required=True,
                    help="a regular expression over the speaker: one group (repeatable)")
    ap.add_argument("--held-out", action="store_true",
                    help="only the recordings the model's evaluation held out")
    ap.add_argument("--warp", action="append", default=None,
                    help="the hearings to set beside --warp 0 (repeatable; default 0.08)")
    ap.add_argument("--balance", action="append", default=None,
                    help="infer's --balance for each setting but the first (repeatable; default "
                         "0.5); the first, --warp 0, is heard as the evaluation hears, balance 0")
    a = ap.parse_args()
    # Each setting a (warp, balance): the evaluation's first, then every --warp at every
    # --balance.
    settings = [("0", "0")] + [(w, b) for w in a.warp or ["0.08"] for b in a.balance or ["0.5"]]
    base, rest = settings[0], settings[1:]
    only = None
    if a.held_out:
        with tempfile.TemporaryDirectory() as tmp:
            only = held_out(a.model, tmp)
    groups = []
    for voices in a.voices:
        files = []
        for f in sorted(os.listdir(a.words)):
            m = NAME.match(f)
            if m and re.search(voices, m.group(2)) and (only is None or f in only):
                files.append(os.path.join(a.words, f))
        if not files:
            sys.exit(f"infer_hearings: no recording in {a.words} of a speaker matching {voices!r}")
        groups.append((voices, files))
    every = sorted({f for _, files in groups for f in files})
    heard = {st: predictions(a.model, every, *st) for st in settings}
    print(f"model {a.model}; words {a.words}{' (held out)' if a.held_out else ''}")
    print("| voices | recordings | digits | " +
          " | ".join(f"--warp {w} --balance {b}: all, digits, others" for w, b in settings) +
          " | " + " | ".join(f"{w}, {b}: gained, lost" for w, b in rest) + " |")
    print("|---|---:|---:|" + "---:|" * (1 + 2 * len(rest)))
    for voices, files in groups:
        label = {f: NAME.match(os.path.basename(f)).group(1) for f in files}
        digits = [f for f in files if label[f].isdigit()]
        others = [f for f in files if not label[f].isdigit()]

        def share(fs, w):
            return 100 * sum(heard[w][f] == label[f] for f in fs) / max(len(fs), 1)

        cells = []
        for st in settings:
            cells.append(f"{share(files, st):.2f}, {share(digits, st):.2f}, "
                         f"{share(others, st):.2f}%")
        for st in rest:
            gained = sum(heard[st][f] == label[f] != heard[base][f] for f in files)
            lost = sum(heard[base][f] == label[f] != heard[st][f] for f in files)
            cells.append(f"{gained}, {lost}")
        print(f"| `{voices}` | {len(files)} | {len(digits)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
