#!/usr/bin/env python3
"""Digits found at a false-alarm budget: a keyword model's operating curve over detector settings.

    python3 bench/listen_curve.py --model runs/<run> --recordings ~/kws-recordings
    python3 bench/listen_curve.py --model runs/a --model runs/b --recordings ...   # averaged
    python3 bench/listen_curve.py --cache ~/kws-windows ...    # each model hears each recording once
    python3 bench/listen_curve.py --warp 0 ...                 # each window heard once
    python3 bench/listen_curve.py --warp 0.04,0.08 ...         # five ways
    python3 bench/listen_curve.py --at 4:0.6 ...               # and at this setting
    python3 bench/listen_curve.py --hop-ms 50 --at 8:0.85 ...  # windows 50 ms apart
    python3 bench/listen_curve.py --floor-db 0 ...             # the centring gate before 12-04

bench/listen_accuracy.py runs the engine at nine settings; this tool asks `flowbench-cli listen
--windows` once per recording for every window's probabilities and whether it is centred, then
replays the detector over them in Python for every setting of 2 to 6 windows and thresholds 0.4 to
0.95 (0.025 apart from 0.8 to 0.9), and prints, for each false-alarm budget, the most digits
found at a setting within it (and the figures at each setting --at names). Use it to compare
models where their false alarms differ; its figure at the defaults should agree with
listen_accuracy.py's (docs/audio-history.md's "Dead units" table was made this way). Why a copy of
the detector instead of the engine: one `listen` run a setting would take 40 runs a model; the
replay is the engine's rule (core/exec/listen.cpp: the average of the last K centred windows, an
off-centre window counted as certain background, one detection a word, --suppress-ms 500). With
several --model, their window probabilities are averaged (models listening together); --warp W
(default listen's own, 0.08; 0: once) has `listen` hear every window at 1-W and 1+W times the
speed too, and --warp W1,W2 at 1-W and 1+W for each (five hearings). --hop-ms H has the windows
H ms apart (listen's default 100), and the grid averages over as much time (at 50: 4 to 12).
Under the table, what decides the strict end of the curve: the share of the digits whose score
(the 4-window average of their own class, at its peak near the word) reaches 0.8 to 0.98, how
many other words reach it, which other words the model is surest are digits, and what the
weakest digits lose to (the class with the most beside their own at their peak), and how many
digits reach 0.8 by what lies beside them in the recording (quiet, or noise before or after).
--recordings is a folder kept by listen_accuracy.py --recordings: digits*.wav and no-digits-*.wav
with their .tsv truths.
"""

import argparse
import array
import collections
import glob
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listen_accuracy import read_truth, score  # noqa: E402
from listen_latency import CLI  # noqa: E402

# Classes never detected: listen's --ignore (its default below), matched as listen matches them,
# by name, case-insensitive, with or without underscores around it (Speech Commands'
# "_background_noise_"). --ignore replaces them, as listen's does.
IGNORED = {"background", "background_noise", "unknown", "silence", "noise"}
LIMITS = (0, 2, 5, 10, 20, 50, 100)
NEVER = 1.01  # a threshold no average of probabilities reaches: the class is never detected
WARP = "0.08"  # listen's default --warp; always passed, so that the cache key says how it heard
HOP_MS = 100.0  # listen's default --hop-ms
THRESHOLD = 0.85  # listen's default --threshold
HOP = HOP_MS / 1000  # the same, in seconds
FLOOR_DB = 6.0  # listen's default --floor-db (0 before 2026-12-04)
# listen --isolate-ms, set by --isolate-ms (a global, as IGNORED is: every hearing of a run
# isolates alike). None: listen's default, not passed.
ISOLATE_MS = [None]


def same_time(windows, hop_ms):
    """How many windows hop_ms apart cover the time that `windows` cover at listen's default hop."""
    return max(1, round(windows * HOP_MS / hop_ms))


def warp_arg(text):
    """listen's --warp as one canonical string: its numbers, comma-separated, 0s left out ("0":
    heard once), so that "0.080" and "0.08" share a cache entry as they share a hearing."""
    ws = [float(w) for w in str(text).split(",") if w.strip()]
    return ",".join(str(w) for w in ws if w > 0) or "0"


def listen_windows(model, recording, cache, warp=WARP, hop_ms=HOP_MS, floor_db=FLOOR_DB):
    """`listen --windows`' lines for the recording, from the cache folder when that model heard
    that recording before with the same --warp, --hop-ms and --floor-db, and the same
    flowbench-cli (each by its file's path, size and time: folders of recordings made with other
    voices hold files of the same names; a cache made before --floor-db holds --floor-db 0's
    windows; a rebuilt flowbench-cli may gate or hear otherwise, so it hears again: every
    relink costs each model's replay its first hearing)."""
    path = None
    if cache:
        f = model if os.path.isfile(model) else os.path.join(model, "model.safetensors")
        cli = shutil.which(CLI)  # FLOWBENCH_CLI may name a command on PATH
        if not cli:
            sys.exit(f"listen_curve: no flowbench-cli at {CLI} (build it, or set FLOWBENCH_CLI)")
        key = ":".join(f"{os.path.abspath(x)}:{os.stat(x).st_size}:{os.stat(x).st_mtime_ns}"
                       for x in (f, recording, cli)) + (f":warp{warp}" if warp != "0" else "") \
            + (f":hop{hop_ms:g}" if hop_ms != HOP_MS else "") \
            + (f":floor{floor_db:g}" if floor_db else "") \
            + (f":isolate{ISOLATE_MS[0]:g}" if ISOLATE_MS[0] is not None else "")
        key = hashlib.sha1(key.encode())
        path = os.path.join(cache, f"{key.hexdigest()[:16]}-{os.path.basename(recording)}.jsonl")
        if os.path.exists(path):
            with open(path) as cached:
                return cached.read().splitlines()
    isolate = ["--isolate-ms", f"{ISOLATE_MS[0]:g}"] if ISOLATE_MS[0] is not None else []
    r = subprocess.run([CLI, "listen", model, recording, "--windows", "--warp", str(warp),
                        "--hop-ms", f"{hop_ms:g}", "--floor-db", f"{floor_db:g}"] + isolate,
                       capture_output=True, text=True, check=True)
    if path:
        os.makedirs(cache, exist_ok=True)
        with open(path + ".part", "w") as out:
            out.write(r.stdout)
        os.replace(path + ".part", path)
    return r.stdout.splitlines()


def plain(name):
    return name.lower().strip("_")


def is_ignored(name):
    """Whether listen never detects this class (IGNORED, as core/exec/listen.cpp matches it)."""
    return plain(name) in IGNORED


def windows(model, recording, cache=None, warp=WARP, hop_ms=HOP_MS, floor_db=FLOOR_DB):
    """Each window's probabilities as the detector counts them (off-centre: certain background,
    the first ignored class, as listen counts it), its start and end."""
    out = []
    for line in listen_windows(model, recording, cache, warp, hop_ms, floor_db):
        w = json.loads(line)
        if w["kind"] != "window":
            continue
        p = w["probabilities"]
        if not w["centred"]:
            quiet = next((c for c in p if is_ignored(c)), None)
            p = {c: float(c == quiet) for c in p}
        out.append((p, w["start"], w["end"]))
    return out


def averages(wins, average, hop=HOP):
    """For each window, every class's mean over the last `average` windows (what the detector
    weighs), and the middle of the stretch they cover (a detection's time)."""
    recent = []
    for p, start, end in wins:
        recent = (recent + [p])[-average:]
        yield ({c: sum(r[c] for r in recent) / len(recent) for c in p},
               (start - hop * (len(recent) - 1) + end) / 2)


def detect(wins, average, threshold, hop=HOP, suppress=0.5):
    """listen's detector (core/exec/listen.cpp) over the windows: the detections' class and time.
    threshold: one for every class, or {class: threshold} (a class not in it is never detected;
    listen_per_class.py)."""
    found, last, last_class, armed = [], -1e9, None, True
    for avg, time in averages(wins, average, hop):
        top = max(avg, key=avg.get)
        limit = threshold.get(top, NEVER) if isinstance(threshold, dict) else threshold
        heard = not is_ignored(top) and avg[top] >= limit
        if not heard or top != last_class:
            armed = True
        if not heard or not armed:
            continue
        armed, last_class = False, top
        if time - last < suppress:
            continue  # a suppressed word is spent, not detected late
        found.append({"class": top, "time": time})
        last = time
    return found


def peaks(wins, truth, average, hop=HOP):
    """For each spoken word, the highest average over `average` windows (the detector's score)
    timed within half a second of it: of its own class for a digit, of any digit for another
    word. [(score, class, label, word, voice, rival)]: rival, for a digit, is the class other
    than its own that had the most there ("-" for another word)."""
    avgs = list(averages(wins, average, hop))
    out = []
    for w0, w1, label, _, word, voice in truth:
        near = [a for a, t in avgs if w0 - 0.5 <= t <= w1 + 0.5]
        rival = "-"
        if label == "other":
            best = max(((v, c) for a in near for c, v in a.items() if not is_ignored(c)),
                       default=(0.0, "-"))
        else:
            at = max(near, key=lambda a: a.get(label, 0.0), default=None)
            best = (at.get(label, 0.0) if at else 0.0, label)
            if at:
                rival = max((c for c in at if c != label), key=at.get)
        out.append((best[0], best[1], label, word, voice, rival))
    return out


def rare_alarms_report(data, average=4, top=8, hop=HOP):
    """What decides the digits found where false alarms must be rare: how sure the model is of
    the digits, and which other words it is surest are digits."""
    digits, others = [], []
    by_beside = collections.defaultdict(lambda: [0, 0])  # what lies beside: [reach 0.8, digits]
    for rec, wins, truth in data:
        # Other words from the recordings without digits only: near a digit, its score is hers.
        quiet = "no-digits" in os.path.basename(rec)
        kinds = beside(rec, truth) if not quiet else [None] * len(truth)
        for row, kind in zip(peaks(wins, truth, average, hop), kinds):
            if row[2] != "other":
                digits.append(row)
                by_beside[kind][0] += row[0] >= 0.8
                by_beside[kind][1] += 1
            elif quiet:
                others.append(row)
    if not digits or not others:
        return
    print(f"\nWhere false alarms must be rare ({average} windows averaged, each word's peak):")
    for t in (0.8, 0.9, 0.95, 0.98):
        n = sum(o[0] >= t for o in others)
        print(f"- {t}: {100 * sum(d[0] >= t for d in digits) / len(digits):.1f}% of the digits "
              f"reach it, and {n} of the {len(others)} other words")
    by_word = collections.defaultdict(list)
    for score_, cls, _, word, voice, _ in others:
        by_word[word].append((score_, cls, voice))
    surest = sorted(by_word.items(), key=lambda kv: -max(kv[1])[0])[:top]
    print("- the other words surest to be digits (highest peak, as which digit, "
          "times at or above 0.9 of times spoken):")
    for word, rows in surest:
        best = max(rows)
        print(f"  {word}: {best[0]:.3f} as {best[1]} ({best[2]}), "
              f"{sum(r[0] >= 0.9 for r in rows)} of {len(rows)}")
    weak = sorted(digits)[:max(1, len(digits) // 5)]
    print("- the weakest fifth of the digits, by word: " + ", ".join(
        f"{w} {n}" for w, n in collections.Counter(d[3] for d in weak).most_common(6)))
    print("  by voice: " + ", ".join(
        f"{v} {n}" for v, n in collections.Counter(d[4] for d in weak).most_common(4)))
    # What they lose to: another digit's name is a confusion to teach apart, "unknown" a digit
    # the model takes for another word, "background" one it barely hears.
    print("  what had the most beside their own class at their peak: " + ", ".join(
        f"{c} {n}" for c, n in collections.Counter(d[5] for d in weak).most_common(4)))
    # A window of a long recording holds a word with whatever came before and after it.
    print("- the digits reaching 0.8, by what lies beside them: " + ", ".join(
        f"{kind} {n} of {total}"
        for kind, (n, total) in sorted(by_beside.items(), key=lambda kv: -kv[1][1])))


def beside(recording, truth, level_db=-60.0):
    """For each spoken word of the recording, what lies beside it: "quiet", "noise before",
    "noise after" or "noise on both sides", by the RMS of the 10 to 200 ms before its start and
    after its end against level_db (dBFS; in make_listen_recording.sh's recordings the noise floor
    between words measures -72 to -68, its bursts of pink noise -47 to -44 and of brown -32 to
    -30)."""
    with wave.open(recording) as w:
        rate = w.getframerate()
        x = array.array("h", w.readframes(w.getnframes()))

    def loud(a, b):
        a, b = max(0, a), min(len(x), b)
        if b <= a:
            return False
        rms = math.sqrt(sum(v * v for v in x[a:b]) / (b - a)) / 32768
        return 20 * math.log10(max(rms, 1e-9)) > level_db

    out = []
    for w0, w1, *_ in truth:
        a, b = int(w0 * rate), int(w1 * rate)
        before = loud(a - rate // 5, a - rate // 100)
        after = loud(b + rate // 100, b + rate // 5)
        out.append("noise on both sides" if before and after else "noise before" if before
                   else "noise after" if after else "quiet")
    return out


def load(models, recordings, cache=None, warp=WARP, hop_ms=HOP_MS, floor_db=FLOOR_DB):
    """[(recording, windows, truth)] for each recording of listen_accuracy.py's kept folder, the
    models' window probabilities averaged (models listening together)."""
    found = sorted(glob.glob(os.path.join(recordings, "*.wav")))
    if not any("no-digits" in r for r in found):
        sys.exit(f"no no-digits-*.wav in {recordings}: make them with listen_accuracy.py")
    data = []
    for rec in found:
        per_model = [windows(m, rec, cache, warp, hop_ms, floor_db) for m in models]
        wins = [({c: sum(m[i][0][c] for m in per_model) / len(per_model) for c in ws[0][0]},
                 ws[0][1], ws[0][2]) for i, ws in enumerate(zip(*per_model))]
        data.append((rec, wins, read_truth(rec + ".tsv")))
    return data


def tally(data, detector):
    """(digits found, digits, false alarms, hours) of detector(windows) -> detections over the
    recordings: the digits in the recordings with digits, the false alarms in those without."""
    digits = right = alarms = 0
    hours = 0.0
    for rec, wins, truth in data:
        n, r, _, f, _, _ = score(detector(wins), truth)
        if "no-digits" in os.path.basename(rec):
            alarms += f
            hours += wins[-1][2] / 3600
        else:
            digits += n
            right += r
    return right, digits, alarms, hours


def add_ignore_arg(ap):
    ap.add_argument("--ignore", metavar="A,B,...", default=",".join(sorted(IGNORED)),
                    help="listen --ignore: classes never detected (default listen's: "
                    + ", ".join(sorted(IGNORED)) + "); a model with a filler class of another "
                    "name, as listen is told of it")


def set_ignored(text):
    IGNORED.clear()
    IGNORED.update(plain(c.strip()) for c in text.split(",") if c.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a run folder (repeatable)")
    ap.add_argument("--recordings", required=True, help="listen_accuracy.py's kept recordings")
    ap.add_argument("--cache", help="keep each model's windows here and reuse them (the 2-hour "
                    "recording takes a model about 8 minutes to hear on one core, three ways)")
    ap.add_argument("--warp", type=warp_arg, default=WARP,
                    help="listen --warp W[,W2...]: every window heard at 1-W and 1+W times the "
                    "speed too, for each W "
                    "(default listen's, 0.08; 0: heard once)")
    ap.add_argument("--at", action="append", default=[], metavar="AVERAGE:THRESHOLD",
                    help="also print the digits found and false alarms at this setting "
                    "(repeatable; 4:0.6, listen's default until 2026-12-03)")
    ap.add_argument("--hop-ms", type=float, default=HOP_MS,
                    help="listen --hop-ms: windows this far apart (default listen's, 100); the "
                    "grid then averages as many windows' worth of time as it does at 100 "
                    "(at 50: 4 to 12 windows)")
    ap.add_argument("--floor-db", type=float, default=FLOOR_DB,
                    help="listen --floor-db: a window's sound stands this far above its noise "
                    "floor (default listen's, 6; 0: as listen did before)")
    ap.add_argument("--isolate-ms", type=float,
                    help="listen --isolate-ms: each window heard as the sound it is centred on "
                    "alone, parted from others by this much silence (default listen's)")
    add_ignore_arg(ap)
    a = ap.parse_args()
    set_ignored(a.ignore)
    ISOLATE_MS[0] = a.isolate_ms
    if not 1 <= a.hop_ms <= 1000:
        ap.error("--hop-ms must be from 1 to 1000")
    hop = a.hop_ms / 1000
    settings = []
    for text in a.at:
        try:
            k, t = text.split(":")
            settings.append((int(k), float(t)))
        except ValueError:
            ap.error(f"--at {text}: AVERAGE:THRESHOLD, as 4:0.6")
    data = load(a.model, a.recordings, a.cache, a.warp, a.hop_ms, a.floor_db)
    points = []
    for average in sorted({same_time(k, a.hop_ms) for k in (2, 3, 4, 5, 6)}):
        for threshold in (0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.825, 0.85, 0.875, 0.9, 0.95):
            right, digits, alarms, hours = tally(
                data, lambda wins: detect(wins, average, threshold, hop))
            points.append((100 * right / digits, alarms / hours, average, threshold))
    print(f"models: {', '.join(a.model)}; {a.recordings}; --warp {a.warp}"
          + (f" --hop-ms {a.hop_ms:g}" if a.hop_ms != HOP_MS else "")
          + (f" --floor-db {a.floor_db:g}" if a.floor_db != FLOOR_DB else "")
          + (f" --isolate-ms {a.isolate_ms:g}" if a.isolate_ms is not None else ""))
    print("| false alarms an hour at most | digits found | setting | false alarms an hour |")
    print("|---:|---:|---|---:|")
    for limit in LIMITS:
        best = max((p for p in points if p[1] <= limit), default=None)
        if best:
            print(f"| {limit} | {best[0]:.1f}% | --average {best[2]} --threshold {best[3]} | "
                  f"{best[1]:.1f} |")
        else:
            print(f"| {limit} | - | - | - |")
    right, digits, alarms, hours = tally(data, lambda wins: detect(wins, 4, THRESHOLD, hop))
    name = "defaults" if a.hop_ms == HOP_MS else f"listen's other defaults at --hop-ms {a.hop_ms:g}"
    print(f"{name} (--average 4 --threshold {THRESHOLD:g}): {100 * right / digits:.1f}% at "
          f"{alarms / hours:.1f} an hour")
    for average, threshold in settings:
        right, digits, alarms, hours = tally(
            data, lambda wins: detect(wins, average, threshold, hop))
        print(f"--average {average} --threshold {threshold}: {100 * right / digits:.1f}% at "
              f"{alarms / hours:.1f} an hour")
    # The report's average covers the same time as listen's default 4 windows 100 ms apart.
    rare_alarms_report(data, average=same_time(4, a.hop_ms), hop=hop)


if __name__ == "__main__":
    main()
