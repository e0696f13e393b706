#!/usr/bin/env bash
# Short sounds that are no word, for counting what a keyword spotter takes for one
# (test_spoken_digits, bench/listen_clicks.py): clicks, taps, thumps, knocks, key presses and
# crackle, 2 to 150 ms, alone or two to four together, in silence or over a quiet noise floor,
# 16 kHz mono. They are drawn otherwise than the spoken-digits data set's own clicks
# (scripts/make_spoken_digits.sh, kind "click"): other waveforms (triangle, sawtooth, TPDF noise
# too), band-pass filters, clipping, other envelopes and gaps, so that a model is tried on
# sounds it never heard rather than on its own recipe.
#
#   tests/make_click_recording.sh OUT.wav [SOUNDS] [SEED]
#       one recording: SOUNDS (default 100) short sounds, 0.6 to 2.4 s apart (no word in it:
#       every detection is a false alarm)
#   tests/make_click_recording.sh --clips DIR [SOUNDS] [SEED]
#       SOUNDS files DIR/click_NNN.wav of 1 s each, one short sound (or a few together) in each,
#       for one-shot prediction (flowbench-cli infer, the window's Try the Model)
# Needs sox. The same SEED makes the same sounds (sox -R, bash's RANDOM seeded).
set -euo pipefail
clips=0
if [[ ${1:-} == --clips ]]; then
    clips=1
    shift
fi
out=${1:?usage: make_click_recording.sh [--clips] OUT [SOUNDS] [SEED]} n=${2:-100} seed=${3:-1}
RANDOM=$seed
R=(sox -R -q -V1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Seconds from milliseconds. (Every draw of RANDOM is made here, in this shell: bash reseeds it in
# a subshell such as $(...), which would make every run different.)
ms() { printf '%d.%03d' $(( $1 / 1000 )) $(( $1 % 1000 )); }
# One short sound into $1 (at 16 kHz): a waveform or a noise, an envelope, a filter, sometimes
# clipped, sometimes repeated.
one_sound() {
    local f=$1 len=$(( 2 + RANDOM % 149 )) chain=() kind=$(( RANDOM % 8 ))
    case $kind in
        0) chain=(synth "$(ms $len)" square $(( 200 + RANDOM % 4000 ))) ;;
        1) chain=(synth "$(ms $len)" sine $(( 40 + RANDOM % 300 ))) ;;
        2) chain=(synth "$(ms $len)" triangle $(( 100 + RANDOM % 3000 ))) ;;
        3) chain=(synth "$(ms $len)" sawtooth $(( 100 + RANDOM % 3000 ))) ;;
        4) chain=(synth "$(ms $len)" whitenoise) ;;
        5) chain=(synth "$(ms $len)" pinknoise) ;;
        6) chain=(synth "$(ms $len)" brownnoise) ;;
        7) chain=(synth "$(ms $len)" tpdfnoise) ;;
    esac
    case $(( RANDOM % 3 )) in
        0) chain+=(fade t 0.001 "$(ms $len)" "$(ms $(( len * 9 / 10 )))") ;; # sharp, decaying
        1) chain+=(fade l "$(ms $(( len / 3 + 1 )))" "$(ms $len)" "$(ms $(( len / 2 )))") ;;
        2) chain+=(fade h 0.0005 "$(ms $len)" 0.0005) ;; # a box: on, then off
    esac
    case $(( RANDOM % 4 )) in
        0) local lo=$(( 100 + RANDOM % 2000 ))
           chain+=(sinc "$lo-$(( lo + 300 + RANDOM % 4000 ))") ;;
        1) chain+=(overdrive $(( 5 + RANDOM % 20 ))) ;;
    esac
    local times=$(( RANDOM % 3 == 0 ? 2 + RANDOM % 3 : 1 ))
    local gap=$(( 20 + RANDOM % 300 ))
    (( times > 1 )) && chain+=(pad 0 "$(ms $gap)" repeat $(( times - 1 )))
    chain+=(rate 16000 norm -$(( 1 + RANDOM % 24 )))
    "${R[@]}" -n -r 16000 -c 1 -b 16 "$f" "${chain[@]}"
}
# A noise floor as long as $1, mixed under it into $2 (a third of the time silence stays).
floor() {
    if (( RANDOM % 3 == 0 )); then
        cp "$1" "$2"
        return
    fi
    local colours=(whitenoise pinknoise brownnoise) levels=(0.0005 0.001 0.002 0.004)
    "${R[@]}" "$1" "$tmp/floor.wav" synth 0 "${colours[RANDOM % 3]}" vol "${levels[RANDOM % 4]}"
    "${R[@]}" -m "$1" "$tmp/floor.wav" "$2"
}
if (( clips )); then
    mkdir -p "$out"
    for ((i = 1; i <= n; i++)); do
        one_sound "$tmp/s.wav"
        # 1 s in all, the sound somewhere in it.
        len=$(soxi -s "$tmp/s.wav")
        (( len > 15000 )) && "${R[@]}" "$tmp/s.wav" "$tmp/t.wav" trim 0 15000s && mv "$tmp/t.wav" "$tmp/s.wav"
        len=$(soxi -s "$tmp/s.wav")
        before=$(( RANDOM % (16000 - len) ))
        "${R[@]}" "$tmp/s.wav" "$tmp/p.wav" pad "${before}s" "$(( 16000 - len - before ))s"
        floor "$tmp/p.wav" "$out/$(printf 'click_%03d.wav' "$i")"
    done
    exit 0
fi
# Each sound with the quiet before it, over a floor of its own (or none): a sound in silence
# and one in a room's hiss are both heard.
parts=()
for ((i = 0; i < n; i++)); do
    quiet=$(( 600 + RANDOM % 1800 ))
    "${R[@]}" -n -r 16000 -c 1 -b 16 "$tmp/g.wav" trim 0 "$(ms $quiet)"
    one_sound "$tmp/s.wav"
    "${R[@]}" "$tmp/g.wav" "$tmp/s.wav" "$tmp/gs.wav"
    floor "$tmp/gs.wav" "$tmp/p$i.wav"
    parts+=("$tmp/p$i.wav")
done
"${R[@]}" -n -r 16000 -c 1 -b 16 "$tmp/tail.wav" trim 0 1
"${R[@]}" "${parts[@]}" "$tmp/tail.wav" "$out"
