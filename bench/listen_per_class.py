#!/usr/bin/env python3
"""What a threshold of its own for each digit could give at the strict end: an upper bound.

    python3 bench/listen_per_class.py --model RUN --recordings DIR --cache DIR [--warp W]
                                      [--floor-db DB] [--fit-on DIR2]

listen has one --threshold for every class. This replays its detector (listen_curve.py's copy
of core/exec/listen.cpp's rule) with a threshold per class instead, and for 3 to 6 windows
averaged finds the thresholds that detect the most digits with at most 2 false alarms an hour:
each class's digits found and false alarms at each threshold, with only that class detectable,
then the best combination within the budget (a knapsack over the false alarms), checked by
replaying all the classes together. The thresholds are fitted on the recordings they are scored
on, so the figure is a bound on what any per-class setting could reach, not a result: if the
bound is not far above one threshold's figure, per-class thresholds are not worth building.
With --fit-on the thresholds (each class's and the one) are fitted on other recordings and
scored on --recordings: a result, not a bound, and the budget is the other recordings' hours'.
Each class's row (threshold: digits found / false alarms; with --fit-on, in the recordings fitted
on) shows where its false alarms are.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listen_curve import (FLOOR_DB, NEVER, WARP, add_ignore_arg, detect,  # noqa: E402
                          is_ignored, load, set_ignored, tally, warp_arg)

GRID = (0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995)


def evaluate(data, average, thresholds):
    """(digits found, digits, false alarms in the recordings without digits, their hours)"""
    return tally(data, lambda wins: detect(wins, average, thresholds))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a run folder (repeatable)")
    ap.add_argument("--recordings", required=True, help="listen_accuracy.py's kept recordings")
    ap.add_argument("--cache", help="listen_curve.py's cache of the models' windows")
    ap.add_argument("--warp", type=warp_arg, default=WARP)
    ap.add_argument("--floor-db", type=float, default=FLOOR_DB,
                    help="listen --floor-db (default listen's, 6; 0: as listen did before 12-04)")
    ap.add_argument("--per-hour", type=float, default=2.0, help="the false-alarm budget")
    ap.add_argument("--fit-on", metavar="DIR",
                    help="fit the thresholds on these recordings instead, and score them on "
                    "--recordings: whether they carry over to recordings they were not fitted on")
    add_ignore_arg(ap)
    a = ap.parse_args()
    set_ignored(a.ignore)
    data = load(a.model, a.recordings, a.cache, a.warp, floor_db=a.floor_db)
    fit = load(a.model, a.fit_on, a.cache, a.warp, floor_db=a.floor_db) if a.fit_on else data
    classes = [c for c in data[0][1][0][0] if not is_ignored(c)]
    print(f"models: {', '.join(a.model)}; {a.recordings}; --warp {a.warp}; "
          f"--floor-db {a.floor_db:g}; "
          + (f"thresholds fitted on {a.fit_on}; " if a.fit_on else "")
          + f"at most {a.per_hour:g} false alarms an hour")
    for average in (3, 4, 5, 6):
        alone = {}
        for c in classes:
            for t in GRID:
                right, digits, alarms, hours = evaluate(fit, average, {c: t})
                alone[c, t] = (right, alarms)
        budget = int(a.per_hour * hours + 1e-9)
        best = {0: (0, {})}  # false alarms -> (digits found, thresholds)
        for c in classes:
            grown = {}
            for spent, (found, chosen) in best.items():
                for t in GRID + (NEVER,):
                    r, f = alone.get((c, t), (0, 0))
                    if spent + f <= budget and grown.get(spent + f, (-1,))[0] < found + r:
                        grown[spent + f] = (found + r, {**chosen, c: t})
            best = grown
        chosen = max(best.values(), key=lambda b: b[0])[1]
        right, digits, alarms, hours = evaluate(data, average, chosen)
        def found_within(t):  # one threshold t for every class, on the recordings fitted on
            right_t, _, alarms_t, _ = evaluate(fit, average, dict.fromkeys(classes, t))
            return right_t if alarms_t <= budget else -1
        t1 = max(GRID, key=found_within)
        single = evaluate(data, average, dict.fromkeys(classes, t1)) + (t1,)
        print(f"\n{average} windows averaged: a threshold each {100 * right / digits:.1f}% "
              f"({right} of {digits}) at {alarms / hours:.2f} an hour ("
              + " ".join(f"{c}:{chosen[c]:g}" for c in classes) + f"); one threshold "
              f"{100 * single[0] / single[1]:.1f}% at {single[2] / hours:.2f} an hour "
              f"(--threshold {single[4]:g})")
        for c in classes:
            print(f"  {c}: " + " ".join(f"{t:g}:{alone[c, t][0]}/{alone[c, t][1]}" for t in GRID))


if __name__ == "__main__":
    main()
