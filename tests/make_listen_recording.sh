#!/usr/bin/env bash
# A long recording for keyword spotting with the words' true positions (test_spoken_digits and
# bench/listen_latency.py): digits and other words spoken by voices the spoken-digits data set
# never has (espeak-ng's West Midlands and New York accents), with silence, background noise and
# noise bursts between them, all over a quiet noise floor, 16 kHz mono.
#
#   tests/make_listen_recording.sh OUT.wav TRUTH.tsv [WORDS] [SEED] [DIGIT_PERCENT]
#
# TRUTH.tsv: one line per spoken word, "start<TAB>end<TAB>label<TAB>word<TAB>voice", times in
# seconds, label the digit ("0".."9") or "other"; noise bursts are not listed. WORDS (default
# 120) words in all, about DIGIT_PERCENT (default 60) of them digits; 0 makes a recording of
# other words, noise and silence only, for counting false alarms (bench/listen_accuracy.py). The
# other words are the 20 below, none of them in the data set, or FLOWBENCH_LISTEN_OTHERS (words
# separated by spaces). The voices: the 8 below; or with FLOWBENCH_LISTEN_VOICES=unheard-variants
# the 10 after them, voice variants of espeak-ng that the data set never has, in its own accents
# (a voice never heard, where the 8 are an accent never heard); or with new-made-up twenty made-up
# voices drawn as the data set's are, which it does not have (fbv241 to fbv260); or
# FLOWBENCH_LISTEN_VOICES's espeak-ng voices (ACCENT+VARIANT, separated by spaces; a made-up
# voice as ACCENT+fbvNNN).
# The words lie 0.4 to 1.6 s apart; FLOWBENCH_LISTEN_GAP_MS=A,B makes it A to B milliseconds
# (0.1 to 0.3 s: digits said one after another), the same words, voices and order otherwise.
# Needs espeak-ng and sox.
set -euo pipefail
out=$1 truth=$2 n=${3:-120} seed=${4:-1} digit_percent=${5:-60}
digits=(zero one two three four five six seven eight nine)
others=(apple window garden music yellow button coffee morning travel rabbit paper pencil
        orange purple kitchen monkey river silver table winter)
if [[ -n "${FLOWBENCH_LISTEN_OTHERS:-}" ]]; then
    read -r -a others <<<"$FLOWBENCH_LISTEN_OTHERS"
fi
voices=(en-gb-x-gbcwmd+m1 en-gb-x-gbcwmd+f2 en-gb-x-gbcwmd+m4 en-us-nyc+f1 en-us-nyc+m3
        en-us-nyc+f4 en-gb-x-gbcwmd+klatt3 en-us-nyc+klatt)
if [[ "${FLOWBENCH_LISTEN_VOICES:-}" == unheard-variants ]]; then
    # Alicia's second formant sits above every variant's of the data set; Gene2 is Gene (which
    # it has) 20 Hz higher; Pedro speaks with a timing and a tone control of its own.
    voices=(en-us+Alicia en-gb-x-rp+Andrea en-029+Alicia en-gb-scotland+pablo en-gb-x-rp+Nguyen
            en-gb-x-gbclan+antonio en-029+pedro en-us+Gene2 en+ed en-gb-x-gbclan+Andrea)
elif [[ -n "${FLOWBENCH_LISTEN_VOICES:-}" && $FLOWBENCH_LISTEN_VOICES != new-made-up ]]; then
    read -r -a voices <<<"$FLOWBENCH_LISTEN_VOICES"
fi
gap_lo=6400 gap_span=19200 # samples at 16 kHz: 0.4 s, and 1.2 s more at most
if [[ -n "${FLOWBENCH_LISTEN_GAP_MS:-}" ]]; then
    IFS=, read -r gap_a gap_b <<<"$FLOWBENCH_LISTEN_GAP_MS"
    if ! [[ "$gap_a" =~ ^[0-9]+$ && "${gap_b:-}" =~ ^[0-9]+$ ]] || (( gap_b <= gap_a )); then
        echo "FLOWBENCH_LISTEN_GAP_MS must be A,B in milliseconds, A < B (got $FLOWBENCH_LISTEN_GAP_MS)" >&2
        exit 2
    fi
    gap_lo=$(( gap_a * 16 )) gap_span=$(( (gap_b - gap_a) * 16 ))
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The data set's script knows its voices: it writes the made-up ones' espeak-ng folder (and
# checks that espeak-ng reads them), names the new ones as the data set would, and gives
# espeak-ng's name for every voice (its en-gb says every variant in its own voice, so en-gb+m3
# is said as en+m3; a made-up voice is read through ESPEAK_DATA_PATH by its path from
# espeak-ng's variants).
voice_script="$(dirname "${BASH_SOURCE[0]}")/../scripts/make_spoken_digits.sh"
if [[ "${FLOWBENCH_LISTEN_VOICES:-}" == new-made-up ]]; then
    # Twenty voices drawn as the data set's 240 made-up ones are (made_up_voice in
    # scripts/make_spoken_digits.sh), fbv241 to fbv260, which it does not have, each in the accent
    # the data set would give it: new speakers from the data set's own kind, as a speaker split
    # holds out.
    bash "$voice_script" --made-up-voices "$tmp/voices" 241 260 > "$tmp/made-up"
    mapfile -t voices < "$tmp/made-up"
    export ESPEAK_DATA_PATH=$tmp/voices
else
    # Made-up voices among those asked for (ACCENT+fbvNNN): their folder, FIRST to LAST.
    made_up_lo='' made_up_hi=''
    for v in "${voices[@]}"; do
        if [[ $v =~ \+fbv([0-9]+)$ ]]; then
            number=$(( 10#${BASH_REMATCH[1]} ))
            if [[ -z $made_up_lo ]] || (( number < made_up_lo )); then made_up_lo=$number; fi
            if [[ -z $made_up_hi ]] || (( number > made_up_hi )); then made_up_hi=$number; fi
        fi
    done
    if [[ -n $made_up_lo ]]; then
        bash "$voice_script" --made-up-voices "$tmp/voices" "$made_up_lo" "$made_up_hi" > /dev/null
        export ESPEAK_DATA_PATH=$tmp/voices
    fi
fi
(( ${#voices[@]} )) || { echo "make_listen_recording: no voices" >&2; exit 2; }
bash "$voice_script" --espeak-names "${voices[@]}" > "$tmp/names"
mapfile -t espeak_names < "$tmp/names"
RANDOM=$seed
t=0 # the running length in samples at 16 kHz
parts=()
: > "$truth"
seconds() { awk -v s="$1" 'BEGIN { printf "%.4f", s / 16000 }'; }
# The same recording, sample for sample, every time it is made (2026-12-04): sox -R draws its
# noise and dither from a fixed seed, so that two models, or two sessions, hear the same sounds
# (before, every making drew new noise: bench/results/listen-tried-20261204.md).
# A gap's noise is cut from one long stream of each colour at a running offset (a synth of its
# own under -R would start every gap with the same noise).
R=(sox -R -q)
# The streams and the floor are lengths in samples: the null input is given the rate (-r before
# -n), or sox synthesizes at its null input's 48 kHz and resamples, and a length in samples comes
# out a third as long. Until 2026-12-07 it did: the floor ran out a third of the way in, and the
# rest of the recording was digital silence between the words (bench/results/
# listen-noise-before-eight-20261207.md).
longest=$(( gap_lo + gap_span > 25600 ? gap_lo + gap_span : 25600 ))
streams=$(( n * longest )) # samples: n gaps of the longest (1.6 s), the most the gaps can take
"${R[@]}" -r 16000 -c 1 -n -b 16 "$tmp/pink.wav" synth "${streams}s" pinknoise vol 0.05
"${R[@]}" -r 16000 -c 1 -n -b 16 "$tmp/brown.wav" synth "${streams}s" brownnoise vol 0.1
colours=(pink brown)
noise_at=0 # samples of the two streams used so far
for ((i = 0; i < n; i++)); do
    # A gap: 0.4 to 1.6 s of near silence, sometimes background noise or a noise burst.
    gap=$(( gap_lo + RANDOM % gap_span ))
    kind=$(( RANDOM % 6 ))
    if (( kind < 2 )); then
        "${R[@]}" "$tmp/${colours[kind]}.wav" "$tmp/g$i.wav" trim "${noise_at}s" "${gap}s"
        noise_at=$(( noise_at + gap ))
    else
        "${R[@]}" -n -r 16000 -c 1 -b 16 "$tmp/g$i.wav" trim 0 "$(seconds $gap)"
    fi
    parts+=("$tmp/g$i.wav")
    t=$(( t + $(soxi -s "$tmp/g$i.wav") ))
    if (( RANDOM % 10 * 10 < digit_percent )); then # in steps of 10%
        d=$(( RANDOM % 10 )) word=${digits[$d]} label=$d
    else
        word=${others[$(( RANDOM % ${#others[@]} ))]} label=other
    fi
    v=$(( RANDOM % ${#voices[@]} )) voice=${voices[v]}
    espeak-ng -v "${espeak_names[v]}" -s $(( 130 + RANDOM % 50 )) -p $(( 30 + RANDOM % 40 )) \
        -w "$tmp/raw$i.wav" "$word"
    # Trimmed of espeak-ng's own silence, so that the truth is where the word is.
    "${R[@]}" "$tmp/raw$i.wav" -r 16000 -c 1 -b 16 "$tmp/w$i.wav" \
        silence 1 0.01 0.5% reverse silence 1 0.01 0.5% reverse norm -$(( 3 + RANDOM % 10 ))
    len=$(soxi -s "$tmp/w$i.wav")
    printf '%s\t%s\t%s\t%s\t%s\n' "$(seconds $t)" "$(seconds $(( t + len )))" "$label" "$word" \
        "$voice" >> "$truth"
    parts+=("$tmp/w$i.wav")
    t=$(( t + len ))
done
"${R[@]}" -n -r 16000 -c 1 -b 16 "$tmp/tail.wav" trim 0 1
parts+=("$tmp/tail.wav")
"${R[@]}" "${parts[@]}" "$tmp/speech.wav"
# The floor: the same seed's pink noise past the part the gaps' stream holds, so that it never
# repeats a gap's noise.
"${R[@]}" -r 16000 -c 1 -n -b 16 "$tmp/floor.wav" synth \
    "$(( streams + $(soxi -s "$tmp/speech.wav") ))s" pinknoise vol 0.003 trim "${streams}s"
"${R[@]}" -m "$tmp/speech.wav" "$tmp/floor.wav" -b 16 "$out"
