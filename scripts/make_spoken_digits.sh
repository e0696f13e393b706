#!/usr/bin/env bash
# Makes the spoken-digits demo data set on this machine (nothing is downloaded): espeak-ng
# speaks "zero" to "nine" in many voices (accents x voice variants = speakers), each digit in
# three takes at different speeds and pitches, mixed with a little white noise by sox, as
# 16 kHz mono WAV files named {digit}_{speaker}_{take}.wav, the pattern that
# resources/examples/spoken_digits.json reads (and whose speaker split holds out whole voices).
#
#   scripts/make_spoken_digits.sh            into ~/.local/share/flowbench/spoken_digits
#   scripts/make_spoken_digits.sh DIR        into DIR
#
# Deterministic (the takes' speeds, pitches and noise follow from the names), and quick to run
# again: a complete folder is left as it is. Needs espeak-ng and sox (scripts/deps.sh).
set -euo pipefail

out="${1:-${XDG_DATA_HOME:-$HOME/.local/share}/flowbench/spoken_digits}"
words=(zero one two three four five six seven eight nine)
accents=(en-gb en-us en-gb-scotland en-gb-x-rp en-gb-x-gbclan en-029)
variants=(m1 m2 m3 m4 m5 m6 m7 f1 f2 f3 f4 f5)
takes=3
want=$(( ${#accents[@]} * ${#variants[@]} * ${#words[@]} * takes ))

for tool in espeak-ng sox; do
    command -v "$tool" >/dev/null || { echo "make_spoken_digits: $tool is missing (run scripts/deps.sh)" >&2; exit 1; }
done
if [[ -f "$out/.complete" ]] && [[ "$(cat "$out/.complete")" == "$want" ]]; then
    echo "spoken digits: $want recordings already in $out" >&2
    exit 0
fi
mkdir -p "$out"
rm -f "$out/.complete"

# One recording: speaker = accent-variant; speed and pitch and noise level from a hash of the
# name, so every run makes the same files.
make_one() {
    local out=$1 digit=$2 word=$3 accent=$4 variant=$5 take=$6
    local speaker="$accent-$variant" name h speed pitch noise tmp
    name="${digit}_${speaker}_${take}"
    [[ -s "$out/$name.wav" ]] && return 0
    h=$(printf '%s' "$name" | cksum | cut -d' ' -f1)
    speed=$(( 120 + h % 80 ))            # words per minute
    pitch=$(( 25 + (h / 80) % 50 ))      # espeak's 0..99
    noise=$(( 2 + (h / 4000) % 8 ))      # white noise at 0.002 .. 0.009 amplitude
    tmp=$(mktemp -d)
    espeak-ng -v "$accent+$variant" -s "$speed" -p "$pitch" -w "$tmp/voice.wav" "$word"
    sox -q "$tmp/voice.wav" -r 16000 -c 1 -b 16 "$tmp/speech.wav"
    sox -q -n -r 16000 -c 1 -b 16 "$tmp/noise.wav" synth "$(soxi -D "$tmp/speech.wav")" \
        whitenoise vol "0.00$noise"
    sox -q -V1 -m -v 1 "$tmp/speech.wav" -v 1 "$tmp/noise.wav" "$out/$name.tmp.wav"
    mv "$out/$name.tmp.wav" "$out/$name.wav"
    rm -rf "$tmp"
}
export -f make_one

jobs=$(nproc 2>/dev/null || echo 2)
echo "spoken digits: making $want recordings in $out ($jobs at a time)" >&2
for a in "${accents[@]}"; do
    for v in "${variants[@]}"; do
        for d in "${!words[@]}"; do
            for t in $(seq 1 "$takes"); do
                printf '%s %s %s %s %s %s\n' "$out" "$d" "${words[$d]}" "$a" "$v" "$t"
            done
        done
    done
done | xargs -P "$jobs" -n 6 bash -c 'make_one "$@"' _

have=$(find "$out" -maxdepth 1 -name '*_*_*.wav' ! -name '*.tmp.wav' | wc -l)
if (( have != want )); then
    echo "make_spoken_digits: made $have of $want recordings" >&2
    exit 1
fi
echo "$want" > "$out/.complete"
echo "spoken digits: $want recordings in $out" >&2
