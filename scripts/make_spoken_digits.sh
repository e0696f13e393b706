#!/usr/bin/env bash
# Makes the spoken-digits demo data set on this machine (nothing is downloaded): three speech
# engines say "zero" to "nine" and other words in 79 voices, each recording passed through a
# different imitation of a real microphone and room (sox: tempo and pitch, reverberation,
# telephone band and 8 kHz, cheap-microphone filters, level, white/pink/brown noise), plus
# 1-second clips of background noise. 16 kHz mono WAV files named {label}_{speaker}_{take}.wav,
# the pattern resources/examples/spoken_digits.json reads (its speaker split holds out whole
# voices); labels are the digits 0-9, "unknown" (other words) and "background" (no speech).
#
#   speakers  espeak-ng: 6 English accents x 12 voice variants (72), 3 takes of each digit and
#             12 other words each; flite: kal16, awb, rms, slt; festival: kal, ked and the HTS
#             voice slt (7), 12 takes of each digit and 32 other words each. flite's and
#             festival's voices are built from recordings of real people (diphones, clustergen,
#             HTS), espeak-ng's are formant synthesis: the mix is what teaches real speech.
#   names     speakers are ENGINE-VOICE (espeak-en-gb-m1, flite-slt, festival-ked), so a
#             source's validation_speakers can hold out a whole engine ("^flite-").
#
#   scripts/make_spoken_digits.sh            into ~/.local/share/flowbench/spoken_digits
#   scripts/make_spoken_digits.sh DIR        into DIR
#
# Installed as <prefix>/share/flowbench/make_spoken_digits.sh, where
# `flowbench-cli make-data spoken-digits` (and the window's File > Make Spoken-Digits Data Set)
# runs it. Progress goes to stderr: "spoken digits: making N recordings in DIR" first, then
# "spoken digits: made N of TOTAL" every 2 seconds while the count grows. SIGTERM, SIGINT or
# SIGHUP stop it: the recordings being made are finished, the ones made are kept, and running it
# again makes only the rest.
#
# Deterministic (every take's effects follow from its name), and quick to run again: a complete
# folder is left as it is. Needs espeak-ng, flite, festival with its voices
# (festvox-kallpc16k, festvox-kdlpc16k, festvox-us-slt-hts) and sox (scripts/deps.sh).
#
# For tests and quick tries (not for training):
#   FLOWBENCH_SPOKEN_DIGITS_VOICES=N   only the first N of the 79 voices (espeak-ng's first),
#                                      and N x 4 background clips
#   FLOWBENCH_PROGRESS_SECONDS=S       progress every S seconds instead of 2 (e.g. 0.2)
set -euo pipefail

# The folder the example reads (its path is "~/.local/share/flowbench/spoken_digits").
out="${1:-$HOME/.local/share/flowbench/spoken_digits}"
digits=(zero one two three four five six seven eight nine)
# Other words, for the "unknown" class: common commands, other numbers and everyday words (401),
# a different run of them for each voice. (Rhymes of the digits, "tone" or "heaven", taught it to
# doubt the digits themselves more than they helped.) Version 3 doubled the other words, 544 to
# 1088 recordings of 401 words instead of 215: listening to unseen voices, false alarms on other
# words fell from 18 to 8 and 11 in two runs, the held-out voices' other words were recognised
# 84 and 87% instead of 59%, and the digits as often as before (docs/audio.md).
others=(yes no up down left right on off stop go hello house cat dog bird bed tree happy wow
        learn follow forward backward visual ten eleven twelve twenty hundred okay water open
        people school money doctor little about after again always animal answer around baby ball
        bank basket beach because before behind better bicycle black blue book bottle bread
        brother brown building business butter camera candle car carpet castle chair cheese
        chicken children chocolate church city clean clock close cloud coat cold computer cook
        corner country cousin cream cup dance dark daughter desk dinner door dragon dream dress
        drink early earth easy egg elephant empty engine evening family farmer father field
        finger fire fish flower forest friend frog fruit funny game girl glass gold grass green
        hammer hand heart heavy holiday horse hospital hotel hungry island jacket jungle kettle
        king ladder lamp language laugh lemon letter library light lion machine market metal
        middle milk minute mirror moment monday mother mountain mouse nature never night noise
        north ocean office paint pepper piano picture pillow planet plastic pocket potato
        question radio rain rocket salad sister sleep small snake snow soft soup spider spring
        square street sugar summer sunday super tiger tomato tonight turtle umbrella under
        village violin wagon walk wall warm weather wednesday whale white wood zebra
        actor address airport alarm album angle apron arrow artist autumn bacon badge balloon
        bamboo banana bandage barrel battery beauty belly berry blanket blossom border bracelet
        branch brick bridge bubble bucket buffalo bullet bundle cabin cactus cabbage canal canvas
        captain carrot cartoon cattle ceiling celery cellar cereal channel chapter cherry chimney
        circle circus climate closet collar comet cotton cowboy crayon cricket crystal curtain
        cushion dentist diamond dinosaur dolphin donkey dozen drawer eagle elbow envelope eraser
        fabric falcon feather fence fever fiddle flag flute fossil fountain gallon garlic giant
        ginger giraffe glove goose gorilla guitar hamster harbor harvest helmet hiccup honey hook
        hurricane igloo insect iron jelly jewel juice kangaroo kitten koala ladle lantern lettuce
        lizard lobster locket magnet mango maple marble meadow medal melon mitten muffin mushroom
        napkin needle nickel noodle nurse oyster paddle palace panda parrot peanut pebble pelican
        penguin pickle pigeon pirate pizza plum pony puppet pumpkin puzzle quilt raccoon raisin
        ribbon robot saddle sandal satellite saucer scarf scissors shadow shovel shrimp signal
        skeleton sofa spinach sponge squirrel stomach student sweater tablet teacher tennis ticket
        toaster tunnel tulip valley vase velvet wallet walnut wizard yogurt)
accents=(en-gb en-us en-gb-scotland en-gb-x-rp en-gb-x-gbclan en-029)
variants=(m1 m2 m3 m4 m5 m6 m7 f1 f2 f3 f4 f5)
every="${FLOWBENCH_PROGRESS_SECONDS:-2}"
version=3 # of the layout and effects: a folder made by another version is made again

# engine voice takes other_words
speakers=()
for a in "${accents[@]}"; do
    for v in "${variants[@]}"; do
        speakers+=("espeak $a+$v 3 12")
    done
done
for v in kal16 awb rms slt; do speakers+=("flite $v 12 32"); done
for v in kal ked slt; do speakers+=("festival $v 12 32"); done
background_per_speaker=4 # 1-second noise clips per voice made (316 for all 79)

if [[ -n "${FLOWBENCH_SPOKEN_DIGITS_VOICES:-}" ]]; then
    n="$FLOWBENCH_SPOKEN_DIGITS_VOICES"
    if ! [[ "$n" =~ ^[0-9]+$ ]] || (( n < 1 || n > ${#speakers[@]} )); then
        echo "make_spoken_digits: FLOWBENCH_SPOKEN_DIGITS_VOICES must be 1 to ${#speakers[@]}, not '$n'" >&2
        exit 2
    fi
    speakers=("${speakers[@]:0:n}")
fi

needs=(espeak-ng sox soxi)
for s in "${speakers[@]}"; do
    case $s in flite*) needs+=(flite) ;; festival*) needs+=(text2wave) ;; esac
done
# festival's voices are packages of their own.
if [[ " ${needs[*]} " == *" text2wave "* ]]; then
    for v in english/kal_diphone:festvox-kallpc16k english/ked_diphone:festvox-kdlpc16k \
             us/cmu_us_slt_arctic_hts:festvox-us-slt-hts; do
        [[ -d /usr/share/festival/voices/${v%%:*} ]] || {
            echo "make_spoken_digits: festival's voice ${v%%:*} is missing; install it: sudo apt install ${v#*:}" >&2
            exit 1
        }
    done
fi
for tool in $(printf '%s\n' "${needs[@]}" | sort -u); do
    command -v "$tool" >/dev/null || {
        echo "make_spoken_digits: $tool is missing; install espeak-ng, flite, festival, festvox-kallpc16k, festvox-kdlpc16k, festvox-us-slt-hts and sox: sudo apt install espeak-ng flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts sox" >&2
        exit 1
    }
done

# Every recording to make, one line each: kind name engine voice word. (No command
# substitutions in these loops: a fork each would cost seconds on some machines.)
espeak_jobs=() # espeak-ng's recordings (and the background noise)
other_jobs=()  # flite's and festival's, made from their raw words
names=()
raw_list=() # flite's and festival's words, synthesized once and varied by sox per take
k=0
for s in "${speakers[@]}"; do
    read -r engine voice takes n_other <<<"$s"
    speaker="$engine-${voice/+/-}"
    for d in "${!digits[@]}"; do
        for ((t = 1; t <= takes; t++)); do
            job="speech ${d}_${speaker}_$t $engine $voice ${digits[$d]}"
            if [[ $engine == espeak ]]; then espeak_jobs+=("$job"); else other_jobs+=("$job"); fi
            names+=("${d}_${speaker}_$t")
        done
        [[ $engine != espeak ]] && raw_list+=("raw - $engine $voice ${digits[$d]}")
    done
    for ((t = 0; t < n_other; t++)); do
        # A different run of the list for each voice.
        w=${others[$(( (k * 37 + t * 23) % ${#others[@]} ))]}
        job="speech unknown_${speaker}_$((t + 1)) $engine $voice $w"
        if [[ $engine == espeak ]]; then espeak_jobs+=("$job"); else other_jobs+=("$job"); fi
        names+=("unknown_${speaker}_$((t + 1))")
        [[ $engine != espeak ]] && raw_list+=("raw - $engine $voice $w")
    done
    k=$((k + 1))
done
n_background=$(( ${#speakers[@]} * background_per_speaker ))
for ((i = 0; i < n_background; i++)); do
    # 20 clips per noise "speaker", so that the speaker split holds out some of each kind.
    name="background_noise-$(( i / 20 ))_$(( i % 20 + 1 ))"
    espeak_jobs+=("noise $name - - -") # needs no raw word either
    names+=("$name")
done
want=${#names[@]}
stamp="$version $want"

# A complete folder of the same version and at least these recordings is left as it is.
done_before=$(cat "$out/.complete" 2>/dev/null || true)
if [[ "$done_before" =~ ^$version\ ([0-9]+)$ ]] && (( BASH_REMATCH[1] >= want )); then
    echo "spoken digits: $want recordings already in $out" >&2
    exit 0
fi
mkdir -p "$out/.raw"
rm -f "$out/.complete"
# The first version's recordings (espeak-ng only, speakers named ACCENT-VARIANT): the same
# digits in the older effects would be read as 72 more speakers.
rm -f "$out"/[0-9]_en-*_[0-9].wav "$out"/[0-9]_en-*_[0-9].tmp.wav
# Version 2's other words (finished or not: it wrote no .version) are other words for the same
# names now; they are made again, so that a folder brought up to date holds what a new one does.
if [[ "$(cat "$out/.version" 2>/dev/null || true)" != "$version" ]]; then
    rm -f "$out"/unknown_*.wav
    echo "$version" > "$out/.version"
fi

# How many of the wanted recordings are there (finished: a recording appears by a rename).
count_made() {
    local name n=0
    for name in "${names[@]}"; do
        [[ -s "$out/$name.wav" ]] && n=$((n + 1))
    done
    echo "$n"
}

# One line of the list. Every random choice comes from a hash of the name (cksum), so every run
# makes the same files.
make_one() {
    local out=$1 kind=$2 name=$3 engine=$4 voice=$5 word=$6
    local raw="$out/.raw/$engine-${voice/+/-}-$word.wav"
    if [[ $kind == raw ]]; then
        [[ -s "$raw" ]] && return 0
        # A name of its own: a recording whose raw word is not there yet makes it too (below).
        local part="$raw.$BASHPID.tmp.wav"
        if [[ $engine == flite ]]; then
            flite -voice "$voice" -t "$word" -o "$part"
        else
            local v
            case $voice in
                kal) v=voice_kal_diphone ;;
                ked) v=voice_ked_diphone ;;
                slt) v=voice_cmu_us_slt_arctic_hts ;;
            esac
            echo "$word" | text2wave -eval "($v)" -F 16000 -o "$part" 2>/dev/null
        fi
        mv "$part" "$raw"
        return 0
    fi
    [[ -s "$out/$name.wav" ]] && return 0
    local h g tmp noises levels
    h=$(printf '%s' "$name" | cksum | cut -d' ' -f1)
    g=$(printf 'x%s' "$name" | cksum | cut -d' ' -f1)
    noises=(whitenoise pinknoise brownnoise)
    levels=(0.0005 0.001 0.002 0.003 0.005 0.007 0.01 0.015 0.02 0.03)
    tmp=$(mktemp -d)
    if [[ $kind == noise ]]; then
        # Background: stationary noise of a colour and a level, sometimes mains hum, sometimes
        # band-limited like a fan or traffic, 1 to 1.5 s.
        local len=$(( 100 + h % 50 )) effects=()
        case $(( g % 5 )) in
            1) effects=(lowpass $(( 300 + (g / 5) % 2000 ))) ;;
            2) effects=(highpass $(( 200 + (g / 5) % 1500 ))) ;;
            3) effects=(sinc $(( 100 + (g / 5) % 400 ))-$(( 1000 + (g / 3000) % 3000 ))) ;;
        esac
        if (( (h / 50) % 4 == 0 )); then
            sox -q -n -r 16000 -c 1 -b 16 "$tmp/n.wav" synth "${len:0:1}.${len:1}" \
                "${noises[$(( (h / 200) % 3 ))]}" synth sine mix $(( (h / 600) % 2 ? 50 : 60 )) \
                vol "${levels[$(( (h / 1200) % 10 ))]}"
        else
            sox -q -n -r 16000 -c 1 -b 16 "$tmp/n.wav" synth "${len:0:1}.${len:1}" \
                "${noises[$(( (h / 200) % 3 ))]}" vol "${levels[$(( (h / 1200) % 10 ))]}" \
                "${effects[@]}"
        fi
        mv "$tmp/n.wav" "$out/$name.tmp.wav"
    else
        # Speech: the engine's voice (espeak-ng's at a speed and pitch of its own), then tempo
        # and pitch, a room or a channel, a level and a noise floor.
        local src="$raw" pitch_span=900
        [[ $engine != espeak && ! -s "$raw" ]] && make_one "$out" raw - "$engine" "$voice" "$word"
        if [[ $engine == espeak ]]; then
            espeak-ng -v "$voice" -s $(( 120 + h % 80 )) -p $(( 25 + (h / 80) % 50 )) \
                -w "$tmp/voice.wav" "$word"
            src="$tmp/voice.wav"
            pitch_span=300
        fi
        local tempo=$(( 85 + (h / 4000) % 36 ))
        local cents=$(( (h / 144000) % (pitch_span / 75 + 1) * 75 - pitch_span / 2 ))
        local chain=(tempo -s "0.$tempo")
        (( tempo >= 100 )) && chain=(tempo -s "1.${tempo:1}")
        (( cents != 0 )) && chain+=(pitch "$cents" rate 16000)
        case $(( g % 20 )) in
            8 | 9 | 10 | 11) # a room
                chain+=(reverb $(( 20 + (g / 20) % 60 )) 50 $(( 20 + (g / 1200) % 80 )) 100 \
                    $(( (g / 96000) % 20 ))) ;;
            12 | 13 | 14) # a telephone: 300-3400 Hz at 8 kHz
                chain+=(sinc 300-3400 rate 8000) ;;
            15 | 16 | 17) # a dull microphone
                chain+=(lowpass $(( 3000 + (g / 20) % 4000 ))) ;;
            18 | 19) # a cheap one: thin and a little distorted
                chain+=(highpass $(( 200 + (g / 20) % 300 )) lowpass 4500 overdrive $(( 2 + (g / 6000) % 10 ))) ;;
        esac
        chain+=(rate 16000 norm -$(( 1 + (g / 200000) % 20 )))
        sox -q -V1 "$src" -r 16000 -c 1 -b 16 "$tmp/speech.wav" "${chain[@]}"
        sox -q -n -r 16000 -c 1 -b 16 "$tmp/noise.wav" synth "$(soxi -D "$tmp/speech.wav")" \
            "${noises[$(( (h / 7) % 3 ))]}" vol "${levels[$(( (g / 11) % 10 ))]}"
        sox -q -V1 -m -v 1 "$tmp/speech.wav" -v 1 "$tmp/noise.wav" "$out/$name.tmp.wav"
    fi
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
# espeak-ng's recordings first (the count grows at once), then flite's and festival's words
# (each once), then their recordings.
{
    (( ${#espeak_jobs[@]} )) && printf "$out %s\n" "${espeak_jobs[@]}"
    (( ${#raw_list[@]} )) && printf "$out %s\n" "${raw_list[@]}" | sort -u
    (( ${#other_jobs[@]} )) && printf "$out %s\n" "${other_jobs[@]}"
    true # an empty last list is not a failure
} | xargs -P "$jobs" -n 6 bash -c 'make_one "$@"' _ &
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
echo "$stamp" > "$out/.complete"
echo "spoken digits: $want recordings in $out" >&2
