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
# Installed as <prefix>/share/flowbench/make_spoken_digits.sh, where
# `flowbench-cli make-data spoken-digits` (and the window's File > Make Spoken-Digits Data Set)
# runs it. Progress goes to stderr: "spoken digits: made N of 2160" at the start and every
# 2 seconds while the count grows. SIGTERM, SIGINT or SIGHUP stop it: the recordings being made
# are finished, the ones made are kept, and running it again makes only the rest.
#
# Deterministic (the takes' speeds, pitches and noise follow from the names), and quick to run
# again: a complete folder is left as it is. Needs espeak-ng and sox (scripts/deps.sh).
#
# For tests and quick tries (not for training):
#   FLOWBENCH_SPOKEN_DIGITS_VOICES=N   only the first N of the 72 voices (N x 30 recordings)
#   FLOWBENCH_PROGRESS_SECONDS=S       progress every S seconds instead of 2 (e.g. 0.2)
set -euo pipefail

# The folder the example reads (its path is "~/.local/share/flowbench/spoken_digits").
out="${1:-$HOME/.local/share/flowbench/spoken_digits}"
words=(zero one two three four five six seven eight nine)
accents=(en-gb en-us en-gb-scotland en-gb-x-rp en-gb-x-gbclan en-029)
variants=(m1 m2 m3 m4 m5 m6 m7 f1 f2 f3 f4 f5)
takes=3
every="${FLOWBENCH_PROGRESS_SECONDS:-2}"

voices=()
for a in "${accents[@]}"; do
    for v in "${variants[@]}"; do
        voices+=("$a $v")
    done
done
if [[ -n "${FLOWBENCH_SPOKEN_DIGITS_VOICES:-}" ]]; then
    n="$FLOWBENCH_SPOKEN_DIGITS_VOICES"
    if ! [[ "$n" =~ ^[0-9]+$ ]] || (( n < 1 || n > ${#voices[@]} )); then
        echo "make_spoken_digits: FLOWBENCH_SPOKEN_DIGITS_VOICES must be 1 to ${#voices[@]}, not '$n'" >&2
        exit 2
    fi
    voices=("${voices[@]:0:n}")
fi
want=$(( ${#voices[@]} * ${#words[@]} * takes ))

for tool in espeak-ng sox soxi; do
    command -v "$tool" >/dev/null || {
        echo "make_spoken_digits: $tool is missing; install espeak-ng and sox: sudo apt install espeak-ng sox" >&2
        exit 1
    }
done
# A complete folder of at least these voices (the first N of the same list) is left as it is.
done_before=$(cat "$out/.complete" 2>/dev/null || true)
if [[ "$done_before" =~ ^[0-9]+$ ]] && (( done_before >= want )); then
    echo "spoken digits: $want recordings already in $out" >&2
    exit 0
fi
mkdir -p "$out"
rm -f "$out/.complete"

# Every recording to make, one line each: out digit word accent variant take. (No command
# substitutions in these loops: a fork each would cost seconds on some machines.)
jobs_list=()
names=()
for voice in "${voices[@]}"; do
    a=${voice% *} v=${voice#* }
    for d in "${!words[@]}"; do
        for ((t = 1; t <= takes; t++)); do
            jobs_list+=("$out $d ${words[$d]} $a $v $t")
            names+=("${d}_$a-${v}_$t")
        done
    done
done

# How many of the wanted recordings are there (finished: a recording appears by a rename).
count_made() {
    local name n=0
    for name in "${names[@]}"; do
        [[ -s "$out/$name.wav" ]] && n=$((n + 1))
    done
    echo "$n"
}

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

# Progress for people (and for the window's progress dialog, which reads these lines).
report_progress() {
    local last=-1 n
    while :; do
        n=$(count_made)
        if (( n != last )); then
            echo "spoken digits: made $n of $want" >&2
            last=$n
        fi
        sleep "$every"
    done
}

# The recordings are made in the background so that a signal reaches the trap at once (bash
# runs traps only between commands, and `wait` is one it interrupts). Stopping xargs stops
# handing out recordings; the few being made finish, so no half-written file is left.
make_pid='' progress_pid=''
stop() {
    trap '' HUP INT TERM # once is enough: a signal to the whole group comes twice
    for pid in $make_pid $progress_pid; do kill "$pid" 2>/dev/null || true; done
    echo "spoken digits: stopped with $(count_made) of $want made in $out; run again to finish" >&2
    exit "$1"
}
trap 'stop 129' HUP
trap 'stop 130' INT
trap 'stop 143' TERM
report_progress &
progress_pid=$!
printf '%s\n' "${jobs_list[@]}" | xargs -P "$jobs" -n 6 bash -c 'make_one "$@"' _ &
make_pid=$!

status=0
wait "$make_pid" || status=$?
kill "$progress_pid" 2>/dev/null || true
wait "$progress_pid" 2>/dev/null || true
trap - HUP INT TERM

have=$(count_made)
if (( status != 0 || have != want )); then
    echo "make_spoken_digits: made $have of $want recordings" >&2
    exit 1
fi
echo "$want" > "$out/.complete"
echo "spoken digits: $want recordings in $out" >&2
