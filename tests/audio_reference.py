#!/usr/bin/env python3
"""Reference values for test_audio: the spectrogram, mel, log-mel, MFCC and PCEN features of a
fixed test signal, computed with NumPy (float64, numpy.fft) from librosa's documented definitions,
independently of the C++ code under test (OpenCV's DFT in float32).

Run it again after changing the signal or the parameters; it rewrites
tests/data/audio_reference.json:

    python3 tests/audio_reference.py
"""
import json
import math
import os

import numpy as np

SR = 16000
N_FFT = 512
HOP = 160
N_MELS = 40
N_MFCC = 13
F_MIN = 20.0
F_MAX = 7600.0
TOP_DB = 80.0


def signal():
    """0.25 s: a chirp from 200 Hz to 3 kHz plus a 1 kHz tone that starts halfway, and a click."""
    n = SR // 4
    t = np.arange(n) / SR
    f0, f1 = 200.0, 3000.0
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * t[-1]))
    x = 0.5 * np.sin(phase)
    x[n // 2:] += 0.25 * np.sin(2 * np.pi * 1000.0 * t[n // 2:])
    x[1000] += 0.9
    return x.astype(np.float32)


def power_spectrogram(x):
    # librosa.stft(center=True, pad_mode="constant", window="hann"): zero padding of n_fft // 2
    # at both ends, a periodic Hann window, frames every HOP samples.
    pad = N_FFT // 2
    xp = np.concatenate([np.zeros(pad), x.astype(np.float64), np.zeros(pad)])
    frames = 1 + len(x) // HOP
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    spec = np.empty((N_FFT // 2 + 1, frames))
    for t in range(frames):
        frame = xp[t * HOP:t * HOP + N_FFT] * window
        spec[:, t] = np.abs(np.fft.rfft(frame)) ** 2
    return spec


def hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-12) / min_log_hz) / logstep, mels)


def mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    freqs = f_sp * m
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), freqs)


def mel_filters():
    # librosa.filters.mel(htk=False, norm="slaney")
    fft_freqs = np.linspace(0, SR / 2, 1 + N_FFT // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(F_MIN), hz_to_mel(F_MAX), N_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    weights = np.zeros((N_MELS, len(fft_freqs)))
    for i in range(N_MELS):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:N_MELS + 2] - mel_f[:N_MELS]))[:, None]
    return weights


def power_to_db(s):
    # librosa.power_to_db(ref=1.0, amin=1e-10, top_db=80)
    db = 10.0 * np.log10(np.maximum(1e-10, s))
    return np.maximum(db, db.max() - TOP_DB)


def dct_ortho(x):
    # scipy.fftpack.dct(type=2, norm="ortho") along axis 0, written out.
    n = x.shape[0]
    k = np.arange(n)[:, None]
    m = np.arange(n)[None, :]
    c = np.cos(np.pi * k * (2 * m + 1) / (2 * n)) * np.sqrt(2.0 / n)
    c[0] /= np.sqrt(2.0)
    return c @ x


def pcen(e, time_constant=0.4, gain=0.98, bias=2.0, power=0.5, eps=1e-6):
    # librosa.pcen's formula (its b from the time constant in frames), each row filtered on its
    # own, the filter's state starting at the row's first value (librosa starts it at 1).
    t = time_constant * SR / HOP
    b = (math.sqrt(1 + 4 * t * t) - 1) / (2 * t * t)
    out = np.empty_like(e)
    for r in range(e.shape[0]):
        m = e[r, 0]
        for i in range(e.shape[1]):
            m = (1 - b) * m + b * e[r, i]
            out[r, i] = (e[r, i] / (eps + m) ** gain + bias) ** power - bias ** power
    return out


def main():
    x = signal()
    power = power_spectrogram(x)
    filters = mel_filters()
    mel = filters @ power
    logmel = power_to_db(mel)
    mfcc = dct_ortho(logmel)[:N_MFCC]
    out = {
        "sample_rate": SR, "n_fft": N_FFT, "hop": HOP, "n_mels": N_MELS, "n_mfcc": N_MFCC,
        "f_min": F_MIN, "f_max": F_MAX, "top_db": TOP_DB,
        "signal": [float(v) for v in x],
        "frames": int(power.shape[1]),
        "power_db": power_to_db(power).round(5).tolist(),
        "mel_filters": filters.tolist(),
        "mel": mel.tolist(),
        "log_mel": logmel.round(5).tolist(),
        "mfcc": mfcc.round(5).tolist(),
        "pcen": pcen(mel).round(6).tolist(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "audio_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"wrote {path}: {out['frames']} frames")


if __name__ == "__main__":
    main()
