#!/usr/bin/env python3
"""Hard negatives for a keyword model: made-up words that the model takes for a keyword.

    python3 bench/hard_negatives.py --model runs/<run> --out ~/spoken_digits_hard
    flowbench-cli run spoken_digits --set train_data.path=~/spoken_digits_hard \\
        --set test_data.path=~/spoken_digits_hard --out runs/hard
    python3 bench/listen_accuracy.py --model runs/hard --recordings ~/kws-recordings

espeak-ng says --words made-up words (1 to 3 syllables of English onsets, vowels and codas in
espeak-ng's phonemes, never a digit nor what an accent may make of one: `digit_like`) in the
spoken-digits data set's own espeak-ng voices; the model hears each one (`flowbench-cli infer`, one
process, as listen hears a window: three ways, `--balance 0`), and the ones it calls a class other
than unknown or background with at least --threshold are the hard negatives. --out becomes the
data set (links to --data's recordings) plus those, as "unknown" recordings of the voice that said
them, so the speaker split keeps them with that voice.
The words the model already rejects teach it little; the ones it mistakes are the sounds near a
digit that no word list has. This is the mining step of production keyword spotters, done with
speech synthesis instead of hours of recorded speech (docs/audio-history.md has what it did to the
false alarms and the digits).

--real-words FILE tries real words of a word list instead, leaving out the ones whose sound is
digit-like; --holding-digits tries only the words whose sound holds a digit's and more ("fork",
"swan", "tuna"), which that leaves out; --noise-beside hears each word a second time with noise
beside it, as a window of a long recording holds it, and keeps the word when either is heard as a
keyword. .hard_negatives.tsv's last column is the entry scripts/make_spoken_digits.sh's lists take.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from listen_latency import CLI, ROOT  # noqa: E402


def script_list(name):
    """A bash array of scripts/make_spoken_digits.sh, so that this tool and the data set share one
    definition: its espeak-ng accents and variants (the made-up words are said in the data set's
    own voices), and its pseudo_word's onsets, vowels and codas (the same made-up words)."""
    text = open(os.path.join(ROOT, "scripts", "make_spoken_digits.sh")).read()
    m = re.search(rf"^\s*(?:local )?{name}=\((.*?)\)", text, re.S | re.M)
    if not m:
        sys.exit(f"no {name}=(...) in scripts/make_spoken_digits.sh")
    return ["" if item == '""' else item for item in m.group(1).split()]


# English onsets, vowels and codas in espeak-ng's phonemes, as the data set's made-up words have.
ONSETS, VOWELS, CODAS = script_list("onsets"), script_list("vowels"), script_list("codas")
# The digits as espeak-ng's English voices say them (espeak-ng -x), as phonemes.
DIGITS = ["z i@ r oU", "w 0 n", "w V n", "t u:", "T r i:", "f o@", "f O@", "f o@ r", "f aI v",
          "s I k s", "s E v @ n", "eI t", "n aI n"]
# espeak-ng's phonemes of more than one letter (the ones the lists above use), and its vowels.
MULTI = ["tS", "dZ", "i:", "u:", "A:", "O:", "3:", "eI", "aI", "OI", "aU", "oU", "i@", "e@", "O@",
         "o@"]
VOWEL_SET = set(VOWELS) | {"@", "O@", "o@"}


def phonemes(word):
    """A made-up word's phonemes, the stress mark dropped."""
    w, out, i = word.replace("'", ""), [], 0
    while i < len(w):
        n = next((len(m) for m in MULTI if w.startswith(m, i)), 1)
        out.append(w[i:i + n])
        i += n
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


def consonants(ph):
    """The consonants with each run of vowels as one mark: "f aI v" and "f OI v" are both f_v."""
    out = []
    for p in ph:
        if p in VOWEL_SET:
            if out and out[-1] == "_":
                continue
            p = "_"
        out.append(p)
    return tuple(out)


DIGIT_PHONEMES = [d.split() for d in DIGITS]
DIGIT_CONSONANTS = {consonants(d) for d in DIGIT_PHONEMES}


def digit_like(word):
    """Whether a made-up word may be how some accent says a digit: one phoneme away from a digit,
    or a digit's consonants around other vowels ("foive" for five, "noin" for nine, "ait" for
    eight, the way the West Midlands and other accents shift the vowels). Teaching those as "not a
    digit" would teach the model to miss the digits of every accent it has not heard."""
    ph = phonemes(word)
    return consonants(ph) in DIGIT_CONSONANTS or \
        min(edit_distance(ph, d) for d in DIGIT_PHONEMES) <= 1


def made_up_word(rng):
    while True:
        syllables = []
        for s in range(rng.randint(1, 3)):
            vowel = rng.choice(VOWELS) if s == 0 or rng.random() < 0.5 else "@"
            syllables.append(rng.choice(ONSETS) + ("'" if s == 0 else "") + vowel +
                             rng.choice(CODAS))
        word = "".join(syllables)
        if not digit_like(word):
            return word


def holds_a_digit(ph):
    """Whether a word's phonemes hold a digit's and more: "fork" (four and k), "swan", "tuna",
    "wonder". What a digit sounds like with a sound beside it, which is not an accent's digit."""
    return any(len(ph) > len(d) and
               any(ph[i:i + len(d)] == d for i in range(len(ph) - len(d) + 1))
               for d in DIGIT_PHONEMES)


def real_words(path, rng, n, holding_digits=False):
    """N words of a word list (festival's CMU dictionary, `("word" nil ...)` a line, or one word
    a line), 3 to 10 letters, never one the listening test says (bench/listen_accuracy.py's
    WORDS, so that mining cannot learn the test), one the data set has, a digit, its homophones,
    nor one whose sound is digit-like (espeak-ng's phonemes, as for the made-up words); or, with
    holding_digits, only words whose sound holds a digit's and more (holds_a_digit)."""
    from listen_accuracy import HOMOPHONES, WORDS, training_words  # noqa: E402
    digits = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
    banned = set(WORDS) | HOMOPHONES | training_words() | digits | set(script_list("number_words"))
    words = set()
    for line in open(path, encoding="latin-1"):
        m = re.match(r'^\("([a-z]+)"|^([a-z]+)\s*$', line)
        w = m and (m.group(1) or m.group(2))
        if w and 3 <= len(w) <= 10 and w not in banned:
            words.add(w)
    # Every word when only the ones holding a digit are kept (a few thousand of 96,000).
    picked = rng.sample(sorted(words), len(words) if holding_digits else min(n * 2, len(words)))
    # espeak-ng's phonemes for them, in one process (a line each).
    r = subprocess.run(["espeak-ng", "-q", "-x", "-v", "en-us"], input=".\n".join(picked) + ".\n",
                       capture_output=True, text=True, check=True)
    said = [x.strip() for x in r.stdout.splitlines() if x.strip()]
    if len(said) != len(picked):
        sys.exit(f"espeak-ng gave {len(said)} phoneme lines for {len(picked)} words")
    # One word as two (a spelt-out abbreviation) is left out: its sound is not one word's.
    def sound(ph):
        return re.sub(r"[^A-Za-z@:'0-9]", "", ph)
    if holding_digits:
        kept = [w for w, ph in zip(picked, said)
                if " " not in ph and holds_a_digit(phonemes(sound(ph)))]
    else:
        kept = [w for w, ph in zip(picked, said) if " " not in ph and not digit_like(sound(ph))]
    return kept[:n]


def rms_peak_db(path):
    """sox's loudest 50 ms RMS of a recording, in dB of full scale."""
    r = subprocess.run(["sox", path, "-n", "stats"], capture_output=True, text=True, check=True)
    return float(re.search(r"RMS Pk dB\s+(\S+)", r.stderr).group(1))


def beside(path, out, rng):
    """The word with noise beside it, as a window cut from a long recording holds it: white, pink
    or brown noise 3 to 15 dB below the word's loudest 50 ms, 0.1 to 0.4 s before and after it
    (the noise_beside node's idea, drawn here by sox). The mistakes a model makes on a word alone
    are not all it makes: noise right after "fork" hides its k."""
    before, after = rng.uniform(0.1, 0.4), rng.uniform(0.1, 0.4)
    colour = rng.choice(["whitenoise", "pinknoise", "brownnoise"])
    below = rng.uniform(3, 15)
    seconds = float(subprocess.run(["soxi", "-D", path], capture_output=True, text=True,
                                   check=True).stdout)
    with tempfile.TemporaryDirectory() as tmp:
        f = {k: os.path.join(tmp, k + ".wav") for k in ("pre", "post", "hush", "noise", "word")}
        for k, d in (("pre", before), ("post", after)):
            subprocess.run(["sox", "-q", "-n", "-r", "16000", "-c", "1", "-b", "16", f[k], "synth",
                            f"{d:.4f}", colour, "vol", "0.3"], check=True)
        subprocess.run(["sox", "-q", "-n", "-r", "16000", "-c", "1", "-b", "16", f["hush"], "trim",
                        "0", f"{seconds:.4f}"], check=True)
        subprocess.run(["sox", "-q", f["pre"], f["hush"], f["post"], f["noise"]], check=True)
        subprocess.run(["sox", "-q", path, f["word"], "pad", f"{before:.4f}", f"{after:.4f}"],
                       check=True)
        gain = rms_peak_db(f["word"]) - below - rms_peak_db(f["pre"])
        subprocess.run(["sox", "-q", "-m", "-v", "1", f["word"], "-v", f"{10 ** (gain / 20):.4f}",
                        f["noise"], out], check=True)
    return out


def say(job):
    """espeak-ng says the text (a word, or phonemes in [[...]]) in the voice at a speed and pitch
    of its own; 16 kHz mono."""
    path, voice, text, speed, pitch = job
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "w.wav")
        # espeak-ng 1.51 ignores a variant after "en-gb"; "en" is the same accent and keeps
        # it (scripts/make_spoken_digits.sh's espeak_voice).
        if voice.startswith("en-gb+"):
            voice = "en+" + voice[len("en-gb+"):]
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", raw,
                        text], check=True)
        subprocess.run(["sox", "-q", "-V1", raw, "-r", "16000", "-c", "1", "-b", "16", path,
                        "norm", "-3"], check=True)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a run folder of a model trained on the data")
    ap.add_argument("--data", default=os.path.expanduser("~/.local/share/flowbench/spoken_digits"))
    ap.add_argument("--out", required=True, help="the new data folder (made; must not exist)")
    ap.add_argument("--words", type=int, default=9000, help="made-up words to try")
    ap.add_argument("--real-words", metavar="FILE",
                    help="try real words of this list instead of made-up ones (festival's CMU "
                    "dictionary: /usr/share/festival/dicts/cmu/cmudict-0.4.out)")
    ap.add_argument("--holding-digits", action="store_true",
                    help="with --real-words: try only the words whose sound holds a digit's and "
                    "more (\"fork\", \"swan\", \"tuna\"), which the other words leave out")
    ap.add_argument("--noise-beside", action="store_true",
                    help="hear each word also with noise beside it (beside()), and keep it when "
                    "either is heard as a keyword")
    ap.add_argument("--threshold", type=float, default=0.5,
                    help="a word is a hard negative when the model gives a keyword this much")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    if a.holding_digits and not a.real_words:
        sys.exit("--holding-digits picks among real words: give --real-words FILE too")
    if os.path.exists(a.out):
        sys.exit(f"{a.out} exists; give a new folder")
    pool = os.path.join(a.out, ".made-up")
    os.makedirs(pool)

    accents, variants = script_list("accents"), script_list("variants")
    rng = random.Random(a.seed)
    jobs = []
    real = real_words(a.real_words, rng, a.words, a.holding_digits) if a.real_words else None
    # _r for a real word, _c for one holding a digit, _h for a made-up one (as the data set's).
    letter = ("c" if a.holding_digits else "r") if real else "h"
    for i in range(len(real) if real else a.words):
        accent, variant = rng.choice(accents), rng.choice(variants)
        name = f"unknown_espeak-{accent}-{variant}_{letter}{i + 1}.wav"
        text = real[i] if real else f"[[{made_up_word(rng)}]]"
        jobs.append((os.path.join(pool, name), f"{accent}+{variant}", text,
                     rng.randint(120, 199), rng.randint(25, 74)))
    print(f"saying {len(jobs)} {'real' if real else 'made-up'} words ...", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        paths = list(ex.map(say, jobs))
    heard = {p: p for p in paths}  # what the model hears -> the word's recording
    if a.noise_beside:
        os.makedirs(os.path.join(pool, ".beside"))
        noisy = [(p, os.path.join(pool, ".beside", os.path.basename(p)),
                  random.Random(f"{a.seed}/{p}")) for p in paths]
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            heard.update(zip(ex.map(lambda j: beside(*j), noisy), paths))

    # Heard as listen hears a window (three ways, the class shares as trained): infer's default
    # --balance 0.5 for recordings would take more words for a digit than listen ever does.
    r = subprocess.run([CLI, "infer", a.model, "--warp", "0.08", "--balance", "0"] + list(heard),
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"infer failed: {r.stderr[-2000:]}")
    said = {p: j for p, j in zip(paths, jobs)}
    hard, kept = [], set()
    for line in r.stdout.splitlines():
        row = json.loads(line)
        top = row.get("top", [{}])[0]
        if top.get("class") not in (None, "unknown", "background") and \
                top["probability"] >= a.threshold and heard[row["input"]] not in kept:
            # The word, or the made-up word's phonemes as the data set's list has them.
            word = heard[row["input"]]
            kept.add(word)
            hard.append((word, top["class"], said[word][2].strip("[]")))

    for f in sorted(os.listdir(a.data)):
        if f.endswith(".wav"):
            os.symlink(os.path.abspath(os.path.join(a.data, f)), os.path.join(a.out, f))
    for path, _, _ in hard:
        os.replace(path, os.path.join(a.out, os.path.basename(path)))
    shutil.rmtree(pool)  # audio_folder reads subfolders too: the rest must go
    with open(os.path.join(a.out, ".hard_negatives.tsv"), "w") as f:
        # The last column is the entry scripts/make_spoken_digits.sh's lists take:
        # ACCENT+VARIANT/WORD/SPEED/PITCH/N.
        for p, c, w in hard:
            _, voice, _, speed, pitch = said[p]
            n = re.search(r"(\d+)[.]wav$", p).group(1)
            f.write(f"{os.path.basename(p)}\t{c}\t{w}\t{voice}/{w}/{speed}/{pitch}/{n}\n")
    by_class = collections.Counter(c for _, c, _ in hard)
    print(f"{len(hard)} of {len(jobs)} words heard as a keyword at >= {a.threshold} "
          f"({', '.join(f'{c}: {n}' for c, n in sorted(by_class.items()))}); {a.out} holds "
          f"{a.data}'s recordings and these as unknown (.hard_negatives.tsv lists them)")


if __name__ == "__main__":
    main()
