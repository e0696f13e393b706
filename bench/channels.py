#!/usr/bin/env python3
"""What a real recording adds to a clean one, made on every recording of a folder, to measure
what it costs a model with bench/infer_hearings.py (bench/results/hum-and-long-takes-20261207.md).

    /usr/bin/python3 bench/channels.py hum IN OUT --snr-db 15
    /usr/bin/python3 bench/channels.py take IN OUT --snr-db 20 --place early

hum: mains hum added, 50 or 60 Hz (chosen by a CRC of the file's name, so the same file always
gets the same) and its harmonics up to 1 kHz at 1/k of the fundamental, a transformer's buzz;
its RMS --snr-db under the recording's own over the whole file (quiet included).

take: the recording inside a take of --seconds (2.5) of pink noise --snr-db under the power of
its loud part (its 10 ms frames within 30 dB of the loudest), as someone pressing record, saying
the word and stopping a while later makes it: --place early puts the word 0.2 to 0.5 s in (drawn
from the name's CRC), middle at the take's middle.

Each 16-bit mono WAV of IN is written to OUT under its own name. Needs numpy.
"""

import argparse
import os
import wave
import zlib

import numpy as np


def read(path):
    with wave.open(path) as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise SystemExit(f"{path}: only 16-bit mono WAV is read")
        rate = w.getframerate()
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768, rate


def write(path, y, rate):
    y = np.clip(np.round(y * 32768), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as o:
        o.setnchannels(1)
        o.setsampwidth(2)
        o.setframerate(rate)
        o.writeframes(y.tobytes())


def hum(name, x, rate, a):
    t = np.arange(len(x)) / rate
    f0 = 50.0 if zlib.crc32(name.encode()) % 2 else 60.0
    h = sum(np.sin(2 * np.pi * f0 * k * t + k) / k for k in range(1, int(1000 / f0) + 1))
    rms, hum_rms = np.sqrt(np.mean(x ** 2)), np.sqrt(np.mean(h ** 2))
    return x + h * (rms / 10 ** (a.snr_db / 20) / hum_rms) if rms > 0 else x


def take(name, x, rate, a):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    frame = rate // 100
    e = (x[: len(x) // frame * frame].reshape(-1, frame) ** 2).mean(1)
    power = e[e > e.max() * 1e-3].mean() if e.size and e.max() > 0 else 1e-6
    n = int(a.seconds * rate)
    if n < len(x):
        raise SystemExit(f"{name}: longer than --seconds")
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / rate)
    spectrum[1:] /= np.sqrt(f[1:])  # pink: -3 dB an octave
    spectrum[0] = 0
    noise = np.fft.irfft(spectrum, n)
    noise *= np.sqrt(power / 10 ** (a.snr_db / 10) / np.mean(noise ** 2))
    at = int(rng.uniform(0.2, 0.5) * rate) if a.place == "early" else (n - len(x)) // 2
    at = min(at, n - len(x))
    noise[at:at + len(x)] += x
    return noise


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("channel", choices=["hum", "take"])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--snr-db", type=float, default=15.0, help="dB under the recording (default 15)")
    ap.add_argument("--seconds", type=float, default=2.5, help="take: its length (default 2.5)")
    ap.add_argument("--place", choices=["early", "middle"], default="early",
                    help="take: where the word goes (default early)")
    a = ap.parse_args()
    os.makedirs(a.dst, exist_ok=True)
    made = 0
    for name in sorted(os.listdir(a.src)):
        if not name.endswith(".wav"):
            continue
        x, rate = read(os.path.join(a.src, name))
        write(os.path.join(a.dst, name), (hum if a.channel == "hum" else take)(name, x, rate, a), rate)
        made += 1
    print(f"{made} recordings ({a.channel}, {a.snr_db:g} dB) in {a.dst}")


if __name__ == "__main__":
    main()
