#!/usr/bin/env bash
# Makes the spoken-digits demo data set on this machine (nothing is downloaded): three speech
# engines say "zero" to "nine" and other words in 547 voices, each recording passed through a
# different imitation of a real microphone and room (sox: tempo and pitch, reverberation,
# telephone band and 8 kHz, cheap-microphone filters, level, white/pink/brown noise), plus
# 1-second clips of background noise and of short sounds that are no word (clicks, taps,
# knocks). 16 kHz mono WAV files named {label}_{speaker}_{take}.wav,
# the pattern resources/examples/spoken_digits.json reads (its speaker split holds out whole
# voices); labels are the digits 0-9, "unknown" (other words) and "background" (no speech).
#
#   speakers  espeak-ng: 6 English accents x 36 voice variants, and 24 more variants in 3 of the
#             accents each (288 in all), 2 takes of each digit (the
#             second as another accent may say it), 8 other words and 5 made-up words each, and
#             hard negatives among them (161 real words and 106 whose sound holds a
#             digit's); and 240 made-up voices, variants of our own (made_up_voice), one take
#             of each digit, 4 other words and 5 made-up words each; flite: kal16,
#             awb, rms, slt; festival: kal, ked and the HTS voice slt, and 9 voices of other
#             languages saying English as their speakers would (Italian lp and pc, Finnish lj
#             and mv, Czech dita, krb, machac and ph, Catalan ona), a man's Hindi and
#             Telugu voices and another's Russian one (script_voices): 19 in all, 12 takes of
#             each digit and 32 other words each. flite's and festival's voices are built from
#             recordings of real people (diphones, clustergen, HTS), espeak-ng's are formant
#             synthesis: the mix is what teaches real speech.
#   names     speakers are ENGINE-VOICE (espeak-en-gb-m1, flite-slt, festival-ked), so a
#             source's validation_speakers can hold out a whole engine ("^flite-").
#
#   scripts/make_spoken_digits.sh            into ~/.local/share/flowbench/spoken_digits
#   scripts/make_spoken_digits.sh DIR        into DIR
#   scripts/make_spoken_digits.sh --packages prints the Debian packages it needs, on one line
#   scripts/make_spoken_digits.sh --made-up-voices DIR FIRST LAST
#                                            an espeak-ng data folder in DIR with the made-up
#                                            voices fbvFIRST to fbvLAST (ESPEAK_DATA_PATH=DIR),
#                                            and their names (ACCENT+fbvNNN) on stdout
#   scripts/make_spoken_digits.sh --espeak-names VOICE...
#                                            espeak-ng's name for each voice (en-gb+m3: en+m3)
#
# Installed as <prefix>/share/flowbench/make_spoken_digits.sh, where
# `flowbench-cli make-data spoken-digits` (and the window's File > Make Spoken-Digits Data Set)
# runs it. Progress goes to stderr: "spoken digits: making N recordings in DIR" first, then
# "spoken digits: made N of TOTAL" every 2 seconds while the count grows. SIGTERM, SIGINT or
# SIGHUP stop it: the recordings being made are finished, the ones made are kept, and running it
# again makes only the rest.
#
# Deterministic in what it makes (every take's effects follow from its name; sox's noise and
# dither differ in the last bits from run to run), and quick to run again: a complete
# folder is left as it is. Needs espeak-ng, flite, festival with its voices (festival_voices
# below) and sox: the packages --packages prints, which scripts/deps.sh installs. Made with
# flowbench-speak (built with Flowbench: FLOWBENCH_SPEAK below) it takes 1 to 4 minutes on 2
# cores (81 s for all 18,861 on the machine of 2026-12-03, before the Indian voices), the same
# files as the espeak-ng and sox commands make without it (the first 7888 in 8.6 minutes, where
# flowbench-speak took 2.1).
#
# For tests and quick tries (not for training):
#   FLOWBENCH_SPOKEN_DIGITS_VOICES=N   only the first N of the 547 voices (espeak-ng's first 144,
#                                      then flite's and festival's, then espeak-ng's other 144,
#                                      then the 240 made-up ones, then the Hindi, Telugu and
#                                      Russian ones), their hard negatives, and N x 2
#                                      background clips and N short sounds
#   FLOWBENCH_SPOKEN_DIGITS_ONLY=RE    only the voices whose speaker name (espeak-en-us-m1,
#                                      festival-cs-krb) matches the extended regex RE (their
#                                      other words differ from the whole set's: a voice's run
#                                      of the list follows its place among those made)
#   FLOWBENCH_PROGRESS_SECONDS=S       progress every S seconds instead of 2 (e.g. 0.2)
#   FLOWBENCH_SPEAK=PROGRAM|none       the flowbench-speak to make the recordings with, or none:
#                                      the espeak-ng and sox commands (below)
#   FLOWBENCH_SPOKEN_DIGITS_REPEATABLE=1  the same noise and dither every run (below)
set -euo pipefail

# The folder the example reads (its path is "~/.local/share/flowbench/spoken_digits").
out="${1:-$HOME/.local/share/flowbench/spoken_digits}"
digits=(zero one two three four five six seven eight nine)
# Other words, for the "unknown" class: common commands, other numbers and everyday words (401),
# a different run of them for each voice. (Rhymes of the digits, "tone" or "heaven", taught it to
# doubt the digits themselves more than they helped.) Version 3 doubled the other words, 544 to
# 1088 recordings of 401 words instead of 215: listening to unseen voices, false alarms on other
# words fell from 18 to 8 and 11 in two runs, the held-out voices' other words were recognised
# 84 and 87% instead of 59%, and the digits as often as before (docs/audio-history.md).
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
# espeak-ng's voice variants: its own male and female ones, four of its Klatt-synthesizer modes
# (klatt2, 4, 5, 6, and David and Edward, built on them) and seven of its named voices.
variants=(m1 m2 m3 m4 m5 m6 m7 m8 f1 f2 f3 f4 f5 klatt2 klatt4 klatt5 klatt6 david edward Annie
          steph grandma paul robert)
# More named ones, added later (below, "Twelve more").
more_variants=(Alex Andy adam anika aunty belinda benjamin boris caleb linda norbert quincy)
# And 24 more, each in three of the accents (below, "Twenty-four more").
third_variants=(edward2 iven iven2 iven3 iven4 steph2 steph3 john max michel rob shelby travis
                victor zac Michael Mike Lee grandpa Gene Denis Hugo Jacky Mario)
# festival's voices, recordings of real people (diphones, HTS), each NAME:FOLDER:PACKAGE: its
# speakers are festival-NAME, FOLDER is under /usr/share/festival/voices (festival calls the
# voice after its last part: voice_kal_diphone), and each is a Debian package of its own. The
# one list of them: the speakers below, make_one, the check for missing voices, and --packages
# (which scripts/deps.sh installs, and the CLI's hint and the .deb's Recommends name) read it.
# The English ones, then the other languages': Italian, Finnish and Czech diphones and a Catalan
# HTS voice (four women, four men and a boy) saying the digits as a speaker of that language
# reads English ones (festival_word) and the other words as their letters read in that
# language: English with the accents and the voices, a child's among them, that English's own
# voices lack.
festival_voices=(kal:english/kal_diphone:festvox-kallpc16k ked:english/ked_diphone:festvox-kdlpc16k
                 slt:us/cmu_us_slt_arctic_hts:festvox-us-slt-hts
                 it-lp:italian/lp_diphone:festvox-italp16k it-pc:italian/pc_diphone:festvox-itapc16k
                 fi-lj:finnish/suo_fi_lj_diphone:festvox-suopuhe-lj
                 fi-mv:finnish/hy_fi_mv_diphone:festvox-suopuhe-mv
                 cs-dita:czech/czech_dita:festvox-czech-dita cs-krb:czech/czech_krb:festvox-czech-krb
                 cs-machac:czech/czech_machac:festvox-czech-machac cs-ph:czech/czech_ph:festvox-czech-ph
                 ca-ona:catalan/upc_ca_ona_hts:festvox-ca-ona-hts)
# festival's voices that read English written in their own script (festival_script_word), each
# NAME:FOLDER:PACKAGE:FILES, FILES a folder under /usr/share/festival that the voice loads, which
# PACKAGE brings (empty: the voice's own). English as a speaker of Hindi, Telugu or Russian says
# it, which no other engine here has. Listed apart from festival_voices, and their speakers come
# after every other (below), so that a folder made before keeps its recordings and gains theirs.
# - Hindi and Telugu (2026-12-05; one man's, NSK's, diphones): a Latin letter or a nukta crashes
#   festival, so the digits and their other words are written as Hindi and Telugu write those
#   English words; in Hindi a final consonant carries a virama, or festival adds a vowel to it
#   ("siksa"). festival writes each of their words with 0.3 s of the diphones' background before
#   it and 1.7 s after it (clicks 20 dB under the word), which the loader's trimming keeps: each
#   raw word is cut to festival's own segment times (make_raw_voice). Marathi's NSK voice says
#   Devanagari as the Hindi one does, sample for sample: not a voice more. Their PACKAGE is the
#   language's (festival-hi: the lexicon, phones and tokenizer in /usr/share/festival/hindi_scm),
#   which depends on the voice (festvox-hi-nsk); the voice alone only recommends it, and without
#   it festival writes no word (a fresh Debian 12, installing without recommends, found that).
# - Russian (2026-12-06; one man's, unit selection, 178 MB): it reads Latin letters as Russian
#   ones, so the words are written as a Russian speaker writes those English words ("сри" for
#   "three"), which is how one says them. Cut the same way (its pauses are short: little is cut).
# festival_script_word's table has a column for each, in this order.
script_voices=(hi:hindi/hindi_NSK_diphone:festival-hi:hindi_scm
               te:telugu/telugu_NSK_diphone:festival-te:telugu_scm
               ru:russian/msu_ru_nsh_clunits:festvox-ru:)
script_packages=()
for v in "${script_voices[@]}"; do
    IFS=: read -r _ _ package _ <<<"$v"
    script_packages+=("$package")
done
packages="espeak-ng flite festival ${festival_voices[*]##*:} ${script_packages[*]} sox"
# Whether festival VOICE ($1) is one of script_voices, which read words written in their script.
is_script_voice() {
    [[ " ${SCRIPT_VOICES:-${script_voices[*]}} " == *" $1:"* ]]
}
if [[ "${1:-}" == --packages ]]; then
    echo "$packages"
    exit 0
fi
# Sets variant to the text of made-up voice $1's espeak-ng variant file (the voices below): every
# number drawn from the voice's number, so that every run makes the same voices. The formants'
# frequencies are percentages of the language's own (a shorter vocal tract raises them all
# together, and each a little on its own), then their heights and widths; the pitch's base and
# top in Hz follow the tract's size; the rest is espeak-ng's voice quality (docs/voices.md of
# espeak-ng): voicing and consonants' loudness, breath, roughness, flutter (a shaky pitch), a
# tone control, and one of the Klatt modes the data set's variants use.
# The next number below $1 of made_up_voice's generator (an LCG; s and r are its locals).
made_up_draw() { s=$(( (s * 1103515245 + 12345) & 0x7fffffff )); r=$(( (s >> 8) % $1 )); }
made_up_voice() {
    local s=$(( ($1 * 2654435761 + 97) & 0x7fffffff )) r k f base
    made_up_draw 53; k=$(( 84 + r ))
    made_up_draw 40; base=$(( 55 + (k - 84) * 3 + r ))
    made_up_draw 90
    printf -v variant 'language variant\nname fbv%03d\npitch %d %d\n' \
        "$1" "$base" $(( base + 15 + r ))
    for f in 1 2 3 4 5; do
        made_up_draw 17; local freq=$(( k + r - 8 ))
        made_up_draw 60; local height=$(( 75 + r ))
        made_up_draw 80
        variant+="formant $f $freq $height $(( 75 + r ))"$'\n'
    done
    made_up_draw 2; if (( r )); then made_up_draw 80; variant+="voicing $(( 60 + r ))"$'\n'; fi
    made_up_draw 2; if (( r )); then
        made_up_draw 80; local a=$(( 50 + r )); made_up_draw 80
        variant+="consonants $a $(( 50 + r ))"$'\n'
    fi
    made_up_draw 4; if (( r == 0 )); then
        made_up_draw 4; variant+="breath 0 $(( r + 1 )) $(( r + 1 )) $(( r + 1 )) 2 2 2 2"$'\n'
    fi
    made_up_draw 10; if (( r < 3 )); then made_up_draw 6; variant+="roughness $r"$'\n'; fi
    made_up_draw 10; if (( r < 3 )); then made_up_draw 40; variant+="flutter $r"$'\n'; fi
    made_up_draw 10; if (( r < 3 )); then
        made_up_draw 156; local lo=$(( 100 + r ))
        made_up_draw 156; local mid=$(( 100 + r ))
        made_up_draw 156
        variant+="tone 600 $lo 1200 $mid 2000 $(( 100 + r ))"$'\n'
    fi
    made_up_draw 10; case $r in 4) variant+="klatt 2"$'\n' ;; 5) variant+="klatt 4"$'\n' ;;
                        6) variant+="klatt 5"$'\n' ;; 7) variant+="klatt 6"$'\n' ;; esac
}
# espeak-ng reads variants from its data folder only, and lists no more than 349 voices,
# languages and variants together (the installed folder has 322): past that it drops some
# unannounced, English's languages among them. So the made-up variants go into a folder of
# their own, made-up/, beside links to the installed folder's parts: espeak-ng lists voices/ and
# lang/ only, and espeak_voice names a made-up variant by its path from voices/!v
# ("en-us+../../made-up/fbv001"), which espeak-ng reads as it reads its own. espeak-ng and
# flowbench-speak read the folder through ESPEAK_DATA_PATH.
# Sets ev to the name to give espeak-ng for VOICE. espeak-ng 1.51 (Debian 12) ignores a variant
# after "en-gb" ("en-gb+f2" sounds exactly as "en-gb" does, byte for byte), so that the data
# set's 24 British English voices of versions 1 to 4 were one; "en" is the same accent and keeps
# the variant. (Its "en-us-nyc" says the digits exactly as "en-us" does, variants and all.)
# A made-up variant (fbvNNN) is named by its path from espeak-ng's variants, voices/!v, to the
# script's made-up/ (made_up_folder, below).
espeak_voice() {
    if [[ $1 == en-gb+* ]]; then ev="en+${1#en-gb+}"; else ev=$1; fi
    if [[ $ev =~ ^(.+)\+(fbv[0-9]+)$ ]]; then
        ev="${BASH_REMATCH[1]}+../../made-up/${BASH_REMATCH[2]}"
    fi
}
# made_up_folder DIR FIRST LAST: such a folder in DIR (DIR/espeak-ng-data) with the made-up
# voices FIRST to LAST.
made_up_folder() {
    local home=$1 first=$2 last=$3 espeak_data copy part i v variant
    espeak_data=$(espeak-ng --version 2>/dev/null | sed -n 's/.*Data at: //p')
    if [[ ! -d $espeak_data/voices/'!v' || ! -d $espeak_data/lang/gmw ]]; then
        echo "make_spoken_digits: espeak-ng's data folder was not found" \
            "(espeak-ng --version: '$espeak_data')" >&2
        exit 1
    fi
    # voices/ and voices/!v are folders here, not links: ".." from a link goes up from what it
    # points to, the installed folder.
    copy=$home/espeak-ng-data
    mkdir -p "$copy/made-up" "$copy/voices/!v"
    local parts=() parts_v=()
    for part in "$espeak_data"/*; do [[ ${part##*/} == voices ]] || parts+=("$part"); done
    for part in "$espeak_data"/voices/*; do [[ ${part##*/} == '!v' ]] || parts_v+=("$part"); done
    # One ln for each folder (a fork costs milliseconds on some machines).
    ln -s "${parts[@]}" "$copy/"
    (( ${#parts_v[@]} )) && ln -s "${parts_v[@]}" "$copy/voices/"
    ln -s "$espeak_data"/voices/'!v'/* "$copy/voices/!v/"
    for ((i = first; i <= last; i++)); do
        made_up_voice "$i"
        printf -v v 'fbv%03d' "$i"
        printf '%s' "$variant" > "$copy/made-up/$v"
    done
    # A variant espeak-ng cannot read is no error to it, the command's or the library's that
    # flowbench-speak calls: it says the words in the accent's own voice. The first made-up voice
    # must sound otherwise (and en-us must be there at all).
    if (( first <= last )); then
        printf -v v 'en-us+fbv%03d' "$first"
        espeak_voice "$v"
        if [[ "$(ESPEAK_DATA_PATH=$home espeak-ng -v "$ev" --stdout one | cksum)" == \
              "$(ESPEAK_DATA_PATH=$home espeak-ng -v en-us --stdout one | cksum)" ]]; then
            echo "make_spoken_digits: espeak-ng did not read the made-up voice $ev" \
                "(or has no en-us voice)" >&2
            exit 1
        fi
    fi
}
# --made-up-voices DIR FIRST LAST: only that folder, for voices the data set does not have, drawn
# as its own are (tests/make_listen_recording.sh's new-made-up voices: fbv241 and after); on
# stdout each voice as the data set would name it, in the accent it would give it
# (ACCENT+fbvNNN, the speakers' list below), a line each.
if [[ "${1:-}" == --made-up-voices ]]; then
    if (( $# != 4 )) || ! [[ $3 =~ ^[0-9]{1,6}$ && $4 =~ ^[0-9]{1,6}$ ]] ||
       (( 10#$3 < 1 || 10#$4 < 10#$3 )); then
        echo "make_spoken_digits: --made-up-voices DIR FIRST LAST (1 <= FIRST <= LAST)" >&2
        exit 2
    fi
    made_up_folder "$2" $(( 10#$3 )) $(( 10#$4 ))
    for ((i = 10#$3; i <= 10#$4; i++)); do printf '%s+fbv%03d\n' "${accents[i % 6]}" "$i"; done
    exit 0
fi
# --espeak-names VOICE...: espeak-ng's name for each voice (espeak_voice), a line each, for
# scripts that say the data set's voices (en-gb+m3 is en+m3; en-us+fbv241 is read from the
# made-up folder of --made-up-voices, with ESPEAK_DATA_PATH=DIR).
if [[ "${1:-}" == --espeak-names ]]; then
    shift
    for v in "$@"; do espeak_voice "$v"; echo "$ev"; done
    exit 0
fi
# For make_one, which xargs' bash runs.
export FESTIVAL_VOICES="${festival_voices[*]} ${script_voices[*]}"
export SCRIPT_VOICES="${script_voices[*]}"
# Hard negatives, for the "unknown" class. Until 2026-12-02 they began with 384 made-up words
# (espeak-ng's phonemes) that bench/hard_negatives.py had mined with the model of version 3.
# With the words below in the data set, the example found more of the digits of accents it never
# heard without them: 78.7% within 2 false alarms an hour, where version 5 gave 73.7% (three
# seeds each, heard once; docs/audio-history.md, "Fewer hard negatives, and the weights averaged").
# The list is in git history, and bench/hard_negatives.py mines such words again.
# Real words as hard negatives too (2026-11-28): 161 words of festival's CMU dictionary that the
# example (version 5) took for a digit at 0.5 or more, of 16,000 tried, each said by one of the
# data set's espeak-ng voices (`bench/hard_negatives.py --real-words
# /usr/share/festival/dicts/cmu/cmudict-0.4.out --words 16000 --seed 2`; none of them a word the
# listening test says, one the data set has, a digit or a homophone of one). The made-up words
# alone leave the real words nearest a digit ("fork", "cavern") as sure as the digits; with both
# and the 12 more variants, two training seeds found 88.5% of the unseen accents' digits at
# listen's defaults with 16 false alarms an hour, where the variants alone found 91.7% with 34,
# and as many or more digits within every budget of false alarms an hour
# (bench/results/listen-real-negatives-20261128.md). ACCENT+VARIANT/WORD/SPEED/PITCH/N, named
# unknown_espeak-VOICE_rN.wav and made as bench/hard_negatives.py makes them, the voice alone.
real_negatives=(
    "en-029+Annie/sheeks/173/43/3333" "en-029+david/plue/177/29/92"
    "en-029+david/warren/190/49/9878" "en-029+edward/hur/158/64/7275"
    "en-029+f2/salmon/192/33/3796" "en-029+f3/haith/150/48/2235" "en-029+f3/zang/163/26/5071"
    "en-029+grandma/bennette/172/68/707" "en-029+klatt2/checks/177/25/240"
    "en-029+klatt2/frieze/137/72/8636" "en-029+klatt2/head/184/53/13090"
    "en-029+klatt4/raith/144/32/1745" "en-029+klatt5/gib/174/29/15898" "en-029+m1/eyed/184/40/10"
    "en-029+m1/nollie/124/68/14002" "en-029+m3/far/187/46/9401" "en-029+m4/haas/126/63/5968"
    "en-029+m5/eater/147/49/13905" "en-029+m7/findley/183/33/3445" "en-029+m8/redi/195/38/1102"
    "en-029+robert/hike/145/26/8574" "en-029+steph/hah/195/73/5871" "en-gb+david/vang/188/72/4929"
    "en-gb+david/stier/195/57/7499" "en-gb+david/seats/141/41/9333" "en-gb+f3/sieben/163/49/3177"
    "en-gb+grandma/fahs/156/69/10647" "en-gb+klatt2/fake/161/40/2564"
    "en-gb+klatt2/tier/179/45/6527" "en-gb+klatt4/chuah/157/36/4559"
    "en-gb+klatt4/sidon/171/45/6381" "en-gb+klatt4/kuhn/194/54/7236"
    "en-gb+klatt4/malle/141/33/8121" "en-gb+klatt5/inns/190/59/4814"
    "en-gb+klatt6/faure/134/61/4065" "en-gb+klatt6/higham/194/46/10386"
    "en-gb+klatt6/seher/176/72/12336" "en-gb+m2/nerio/142/30/4870" "en-gb+m3/flea/183/41/706"
    "en-gb+m3/thelen/198/56/11844" "en-gb+m3/leora/129/26/14618" "en-gb+m4/severance/121/45/9786"
    "en-gb+m4/seber/159/38/10893" "en-gb+m4/stenner/191/35/10978" "en-gb+m5/schurman/137/51/5781"
    "en-gb+m5/aug/197/58/12282" "en-gb+m6/achebe/137/28/490" "en-gb+m6/servers/138/65/8155"
    "en-gb+m7/schlee/169/27/3660" "en-gb+paul/wanna/175/58/11753"
    "en-gb+robert/seiberling/148/65/5793" "en-gb+steph/hawe/199/33/1409"
    "en-gb-scotland+Annie/hoh/152/68/2931" "en-gb-scotland+david/born/143/42/14093"
    "en-gb-scotland+david/krall/174/43/15293" "en-gb-scotland+edward/saran/152/33/461"
    "en-gb-scotland+edward/sinner/136/56/1092" "en-gb-scotland+edward/suhm/176/35/3700"
    "en-gb-scotland+edward/sheiks/193/52/12807" "en-gb-scotland+grandma/sayer/150/71/5149"
    "en-gb-scotland+klatt4/epp/157/57/6994" "en-gb-scotland+klatt4/poel/129/44/7081"
    "en-gb-scotland+klatt5/plane/155/55/1884" "en-gb-scotland+klatt5/theory/191/48/3160"
    "en-gb-scotland+klatt5/ooze/179/71/5551" "en-gb-scotland+klatt5/maiolo/121/44/9279"
    "en-gb-scotland+klatt5/hitt/142/64/11970" "en-gb-scotland+klatt6/hemann/197/63/7800"
    "en-gb-scotland+klatt6/stinging/198/44/9751" "en-gb-scotland+m1/theora/185/69/1505"
    "en-gb-scotland+m3/beehler/142/37/14984" "en-gb-scotland+m3/ferrel/173/27/15387"
    "en-gb-scotland+m7/coote/188/31/696" "en-gb-scotland+m7/fall/196/43/12946"
    "en-gb-scotland+paul/fifer/133/49/15400" "en-gb-x-gbclan+david/wreak/151/34/13452"
    "en-gb-x-gbclan+edward/chul/197/59/7054" "en-gb-x-gbclan+edward/harn/128/41/7556"
    "en-gb-x-gbclan+edward/sirman/132/47/15726" "en-gb-x-gbclan+f2/sake/182/45/11450"
    "en-gb-x-gbclan+f3/stever/190/55/7750" "en-gb-x-gbclan+f4/symon/173/52/4618"
    "en-gb-x-gbclan+f4/vann/120/70/6868" "en-gb-x-gbclan+f5/sever/150/31/3837"
    "en-gb-x-gbclan+grandma/favour/182/53/3393" "en-gb-x-gbclan+grandma/gau/131/43/3777"
    "en-gb-x-gbclan+grandma/thaw/172/52/8992" "en-gb-x-gbclan+grandma/celeron/188/64/9180"
    "en-gb-x-gbclan+grandma/moye/152/72/14745" "en-gb-x-gbclan+klatt2/semmel/156/62/7828"
    "en-gb-x-gbclan+klatt2/neumeier/175/58/14796" "en-gb-x-gbclan+klatt4/pique/177/35/7930"
    "en-gb-x-gbclan+klatt4/pigg/164/61/12089" "en-gb-x-gbclan+klatt5/preened/180/39/241"
    "en-gb-x-gbclan+klatt5/fern/125/46/748" "en-gb-x-gbclan+klatt5/burell/138/71/9696"
    "en-gb-x-gbclan+klatt5/joy/139/61/10605" "en-gb-x-gbclan+klatt5/phenom/176/57/13490"
    "en-gb-x-gbclan+klatt5/sinned/156/36/14822" "en-gb-x-gbclan+klatt6/suhr/172/52/1846"
    "en-gb-x-gbclan+klatt6/cech/171/69/6429" "en-gb-x-gbclan+klatt6/frewin/168/55/7034"
    "en-gb-x-gbclan+m1/severin/138/73/3887" "en-gb-x-gbclan+m7/ayes/142/28/7573"
    "en-gb-x-gbclan+m7/visceral/184/71/10132" "en-gb-x-gbclan+paul/zeebrugge/147/60/77"
    "en-gb-x-gbclan+robert/theiss/197/44/10797" "en-gb-x-rp+david/sorry/140/48/6282"
    "en-gb-x-rp+david/poet/169/48/11461" "en-gb-x-rp+david/stuewe/147/54/13016"
    "en-gb-x-rp+david/erl/120/72/14640" "en-gb-x-rp+edward/kise/128/45/4580"
    "en-gb-x-rp+edward/bleary/154/66/8359" "en-gb-x-rp+edward/aimed/123/57/9906"
    "en-gb-x-rp+edward/niall/124/29/9958" "en-gb-x-rp+f2/haid/181/65/8063"
    "en-gb-x-rp+f3/fenelon/195/55/4502" "en-gb-x-rp+f4/eighths/161/55/4251"
    "en-gb-x-rp+klatt2/shedden/179/33/4738" "en-gb-x-rp+klatt2/asch/190/50/5811"
    "en-gb-x-rp+klatt2/fewer/157/66/13070" "en-gb-x-rp+klatt4/timan/143/71/1763"
    "en-gb-x-rp+klatt4/lye/188/47/14310" "en-gb-x-rp+klatt5/hirt/159/61/12962"
    "en-gb-x-rp+klatt5/kerl/163/28/14993" "en-gb-x-rp+klatt6/walle/168/28/2867"
    "en-gb-x-rp+klatt6/sandon/153/38/6925" "en-gb-x-rp+m1/ziel/146/43/4239"
    "en-gb-x-rp+m5/sievers/123/34/3836" "en-gb-x-rp+m6/quan/197/66/12564"
    "en-gb-x-rp+m6/irked/151/63/13790" "en-gb-x-rp+m6/setaro/171/45/15897"
    "en-gb-x-rp+paul/truly/179/46/10614" "en-gb-x-rp+robert/ita/195/43/11280"
    "en-gb-x-rp+steph/gaffe/178/49/1137" "en-gb-x-rp+steph/hoke/198/74/11935"
    "en-us+david/kall/149/67/9306" "en-us+edward/pae/163/37/1853" "en-us+edward/name/191/57/6877"
    "en-us+edward/singly/131/72/8722" "en-us+f1/sebring/140/66/14377" "en-us+f3/senf/124/36/15231"
    "en-us+f5/zillmer/122/58/1995" "en-us+f5/zumel/133/65/3905" "en-us+f5/sirmon/185/53/7380"
    "en-us+grandma/cruey/129/64/12434" "en-us+klatt2/xena/163/69/11434"
    "en-us+klatt4/sailors/190/42/12015" "en-us+klatt5/ide/126/68/1272"
    "en-us+klatt5/await/179/66/12188" "en-us+klatt5/juran/130/29/13389"
    "en-us+klatt5/duo/194/57/14552" "en-us+klatt5/joe/197/59/15174"
    "en-us+klatt6/mayne/186/41/11639" "en-us+klatt6/senna/145/43/14238"
    "en-us+m1/sentman/144/59/7391" "en-us+paul/whew/147/57/13399" "en-us+paul/pew/133/66/15176"
    "en-us+robert/sullivan/157/61/9544" "en-us+steph/villela/152/52/8746"
    "en-us+steph/thar/124/72/12467"
)
# Number words that hold a digit and more (2026-11-28): the teens, the tens, the ordinals, the
# plurals and the numbers past nine. A digit spotter hears "fourteen", "fourth" and "fours" every
# day, and none is "four"; each is said by six of the data set's espeak-ng voices (an accent and
# a variant, a speed and a pitch drawn from its place in the list), named
# unknown_espeak-VOICE_nN and made as the hard negatives are.
number_words=(thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty
              fifty sixty seventy eighty ninety fourth fifth sixth seventh eighth ninth tenth
              zeros ones twos threes fours fives sixes sevens eights nines ten eleven twelve
              hundred)
number_negatives=()
for ((i = 0; i < ${#number_words[@]}; i++)); do
    for ((k = 0; k < 6; k++)); do
        n=$(( i * 6 + k ))
        h=$(( (n * 1103515245 + 12345) % 2147483648 ))
        accent=${accents[$(( (i + 2 * k + 1) % 6 ))]}
        variant=${variants[$(( (7 * i + 5 * k + 3) % ${#variants[@]} ))]}
        number_negatives+=("$accent+$variant/${number_words[$i]}/$(( 120 + h % 80 ))/$(( 25 + (h >> 8) % 50 ))/$n")
    done
done
# Words whose sound holds a digit's and more, as hard negatives too (2026-11-28, evening): 106
# words of festival's CMU dictionary ("form", "forth", "swann", "tomb", "states", "hate") that a
# model trained with noise beside its words (the noise_beside node) took for a digit at 0.5 or
# more, said alone or with noise beside them, of the 2231 such words there are, each said by one
# of the data set's espeak-ng voices (`bench/hard_negatives.py --real-words
# /usr/share/festival/dicts/cmu/cmudict-0.4.out --holding-digits --noise-beside --words 3000`,
# seeds 3 and 4; none a word the listening test says, one the data set has or a number word).
# The real words above leave them out: their sound is a digit's beside another, which no accent
# makes of a digit. ACCENT+VARIANT/WORD/SPEED/PITCH/N, named unknown_espeak-VOICE_cN.wav and
# made as the hard negatives are (bench/results/listen-digit-words-20261128.md).
digit_word_negatives=(
    "en-029+f3/fate/188/55/1" "en-029+f4/hate/137/51/2" "en-029+f5/spate/125/43/3"
    "en-029+f5/wonda/195/68/4" "en-029+grandma/eighths/185/45/5" "en-029+grandma/forrer/160/63/6"
    "en-029+grandma/fourths/157/58/7" "en-029+klatt2/stu/162/29/8" "en-029+klatt4/skate/127/61/9"
    "en-029+klatt5/swans/190/70/10" "en-029+klatt6/geitz/129/65/11" "en-029+klatt6/oneil/190/30/12"
    "en-029+m1/kwon/131/25/13" "en-029+m1/oscillates/150/37/14" "en-029+m2/sixths/129/48/15"
    "en-029+m3/fort/128/41/16" "en-029+m3/tattoo/130/74/17" "en-029+m6/forts/151/59/18"
    "en-029+m8/toone/186/54/19" "en-029+paul/asics/154/36/20" "en-029+paul/hait/149/30/21"
    "en-029+paul/leite/124/46/22" "en-029+steph/ates/159/64/23" "en-029+steph/forney/124/29/24"
    "en-gb+Annie/fete/155/28/25" "en-gb+Annie/zeroed/125/39/26" "en-gb+edward/stu/164/38/27"
    "en-gb+f2/keitz/132/33/28" "en-gb+f2/spates/166/51/29" "en-gb+f3/afford/148/64/30"
    "en-gb+f3/feit/174/56/31" "en-gb+f4/fete/127/36/32" "en-gb+f5/sixed/163/50/33"
    "en-gb+grandma/taite/122/50/34" "en-gb+grandma/weight/150/44/35" "en-gb+klatt2/foard/180/65/36"
    "en-gb+klatt2/hate/199/50/37" "en-gb+klatt2/tomb/195/39/38" "en-gb+klatt6/forgue/127/69/39"
    "en-gb+m1/asics/172/72/40" "en-gb+m1/benignly/132/68/41" "en-gb+m5/oney/197/44/42"
    "en-gb+m5/stew/150/60/43" "en-gb+m7/fourman/137/60/44" "en-gb+paul/essex/126/54/45"
    "en-gb+steph/states/188/59/46" "en-gb-scotland+david/tatem/166/27/47"
    "en-gb-scotland+f1/forth/126/63/48" "en-gb-scotland+f3/collate/122/69/49"
    "en-gb-scotland+f4/defore/138/44/50" "en-gb-scotland+f5/kwon/123/63/51"
    "en-gb-scotland+klatt2/form/120/54/52" "en-gb-scotland+klatt2/states/157/62/53"
    "en-gb-scotland+klatt2/toxics/153/68/54" "en-gb-scotland+klatt6/keitz/127/51/55"
    "en-gb-scotland+m3/scheidt/121/52/56" "en-gb-scotland+m5/seitz/170/29/57"
    "en-gb-scotland+m7/inmate/171/50/58" "en-gb-scotland+paul/gates/155/39/59"
    "en-gb-x-gbclan+david/mobutu/120/29/60" "en-gb-x-gbclan+edward/benign/131/57/61"
    "en-gb-x-gbclan+edward/unimate/124/69/62" "en-gb-x-gbclan+f4/tewell/142/57/63"
    "en-gb-x-gbclan+klatt5/junine/135/59/64" "en-gb-x-gbclan+klatt5/mcfate/123/47/65"
    "en-gb-x-gbclan+m1/skates/133/56/66" "en-gb-x-gbclan+m2/feit/121/52/67"
    "en-gb-x-gbclan+m3/benign/172/38/68" "en-gb-x-gbclan+m4/form/186/48/69"
    "en-gb-x-gbclan+m5/zeroes/178/52/70" "en-gb-x-gbclan+m6/beitz/171/31/71"
    "en-gb-x-gbclan+m7/ates/152/35/72" "en-gb-x-gbclan+m7/sixed/123/59/73"
    "en-gb-x-gbclan+m7/swann/194/52/74" "en-gb-x-gbclan+steph/oney/130/31/75"
    "en-gb-x-rp+edward/forum/180/59/76" "en-gb-x-rp+f2/beethoven/193/73/77"
    "en-gb-x-rp+f2/haight/164/26/78" "en-gb-x-rp+klatt2/sixths/196/50/79"
    "en-gb-x-rp+klatt4/heydt/175/27/80" "en-gb-x-rp+klatt4/stool/187/25/81"
    "en-gb-x-rp+klatt5/pait/146/56/82" "en-gb-x-rp+klatt5/tube/194/64/83"
    "en-gb-x-rp+klatt6/stew/191/37/84" "en-gb-x-rp+m7/benignly/148/53/85"
    "en-gb-x-rp+m8/toon/187/33/86" "en-gb-x-rp+paul/anyone/126/37/87" "en-us+Annie/nate/140/68/88"
    "en-us+Annie/renate/125/33/89" "en-us+david/stuhr/123/36/90" "en-us+edward/sixteenth/170/31/91"
    "en-us+edward/stoop/155/39/92" "en-us+f3/seitz/128/69/93" "en-us+f3/swann/126/68/94"
    "en-us+f3/zeroing/129/42/95" "en-us+f5/toone/121/59/96" "en-us+f5/zeroing/199/60/97"
    "en-us+grandma/feight/180/49/98" "en-us+klatt5/opportune/185/45/99"
    "en-us+klatt5/quon/155/29/100" "en-us+klatt6/stoop/190/46/101" "en-us+klatt6/tool/161/48/102"
    "en-us+m1/taitt/128/62/103" "en-us+m4/pait/138/74/104" "en-us+m7/toole/160/71/105"
    "en-us+robert/eighths/199/71/106"
)
# A digit with one sound more (7, 2026-12-03): every digit, as espeak-ng's English accents say
# it, with a consonant after it or before it ("f'O@t", "h'eIt", "sw'Vn", "s'Iksp"), made-up or
# real, each said by two of the data set's espeak-ng voices. A window of a long recording often
# holds a digit with noise right beside it, which the model must take for the digit (the
# example's noise_beside: pink or brown noise, no quiet between it and the word); these teach it
# that a consonant beside a digit makes another word, which the 106 words above teach for a few.
# Together they found 94.1 and 96.6% of new voices' digits within 2 false alarms an hour, where
# the example without either found 92.7 and 89.3% (docs/audio-history.md, "A consonant or noise
# beside the digit"). The listening test's own words ("fork" f'O@k, "swan" sw'0n) are left out, so
# that the false alarms it counts are words the model never heard.
# ACCENT+VARIANT/[[PHONEMES]]/SPEED/PITCH/N, named unknown_espeak-VOICE_dN and made as the hard
# negatives are.
digit_forms=("z'i@roU" "w'Vn" "w'0n" "t'u:" "Tr'i:" "f'o@" "f'O:" "f'O@" "f'aIv" "s'Iks"
             "s'Ev@n" "'eIt" "n'aIn")
digit_codas=(p t k b d g f v T s z S tS m n l)
digit_onsets=(p b t d k g f s S h m n l r w j)
digit_plus_test_words=" f'O@k sw'0n "
digit_plus_negatives=()
n=0
for form in "${digit_forms[@]}"; do
    bare=${form//\'/}
    plus=()
    for c in "${digit_codas[@]}"; do
        [[ $bare == *"$c" ]] || plus+=("$form$c")
    done
    for o in "${digit_onsets[@]}"; do
        [[ $bare == "$o"* ]] || plus+=("$o$form")
    done
    for w in "${plus[@]}"; do
        [[ $digit_plus_test_words == *" $w "* ]] && continue
        for ((k = 0; k < 2; k++)); do
            n=$((n + 1))
            h=$(( (n * 1103515245 + 12345) % 2147483648 ))
            accent=${accents[$(( (h >> 4) % 6 ))]}
            variant=${variants[$(( (h >> 8) % ${#variants[@]} ))]}
            digit_plus_negatives+=("$accent+$variant/[[$w]]/$(( 120 + (h >> 12) % 80 ))/$(( 25 + (h >> 19) % 50 ))/$n")
        done
    done
done
every="${FLOWBENCH_PROGRESS_SECONDS:-2}"
# of the layout, effects and lists: a folder made by another version is made again (6, 2026-12-02:
# without the 384 made-up hard negatives of 5, which a folder of 5 would keep; 7, 2026-12-03: the
# 794 digits with one sound more)
version=7

# engine voice takes other_words
speakers=()
n_pseudo=5 # made-up words for each espeak-ng voice, in its "unknown" class
for a in "${accents[@]}"; do
    for v in "${variants[@]}"; do
        speakers+=("espeak $a+$v 2 8")
    done
done
for v in kal16 awb rms slt; do speakers+=("flite $v 12 32"); done
for v in "${festival_voices[@]}"; do speakers+=("festival ${v%%:*} 12 32"); done
# Twelve more of espeak-ng's variants for every accent (2026-11-28; none of them one the
# listening test's voices use): with them 77.6% of the unseen accents' digits reach 0.9 in two
# training seeds instead of 68.8%, and 76.6% are found within 2 false alarms an hour instead of
# 71.7% (bench/results/listen-more-variants-20261128.md). After the others, so that a folder
# made before keeps its recordings (every voice's words follow its place) and gains these.
for a in "${accents[@]}"; do
    for v in "${more_variants[@]}"; do
        speakers+=("espeak $a+$v 2 8")
    done
done
# Twenty-four more variants (2026-11-28, session 31; none of them one the listening test's voices
# use), each in three of the accents, every other one of the list above: the odd ones' en-gb,
# Scottish and Lancastrian, the even ones' en-us, RP and Caribbean (72 voices: more variants for
# the cost of twelve in every accent). With them two training seeds found 79.3% of the unseen
# accents' digits within 2 false alarms an hour instead of 77.4%, and 89.6% at the defaults with
# 16.6 false alarms an hour instead of 88.5% with 16.1; the two together 83.4% within 2 instead
# of 80.0% (bench/results/listen-third-variants-20261128.md). After the others, as above.
for ((i = 0; i < ${#third_variants[@]}; i++)); do
    for k in 0 2 4; do
        speakers+=("espeak ${accents[(i + k) % 6]}+${third_variants[i]} 2 8")
    done
done
# Made-up voices (2026-12-02): espeak-ng voice variants of our own, each a vocal tract and a
# voice drawn at random (made_up_voice, below): a vocal tract 0.84 to 1.36 times espeak-ng's
# (its formants 0.76 to 1.44 times), a man's to a child's, with a pitch to match, and now and
# then breathy, rough, shaky or through a tone control, in one of the six accents, one take of
# each digit and four other words. A
# model trained on espeak-ng's own variants alone was sure of only half the digits of a voice
# whose second formant sat above every one of theirs (its Alicia: 20 of 41 reached 0.9), and
# of fewer of a voice whose pitch alone was new (Gene2, Gene 20 Hz higher); these fill in the space
# between and around them. With 120, 5 to 10 points more of the digits of voices it never
# heard are found at every budget of false alarms from 2 an hour (two training seeds;
# bench/results/listen-made-up-voices-20261202.md); with 240 (fbv121 to fbv240 since
# 2026-12-02, evening), 10 points more again within 2 an hour as listen hears them (three ways;
# 4 and 9 heard once), 1 to 1.5 more within 10, and a third fewer false alarms at listen's
# defaults
# (bench/results/listen-240-made-up-voices-20261202.md). After the others, so that a folder made
# before gains them. Any number: espeak-ng reads them from a folder it does not list (below).
n_made_up_voices=240
for ((i = 1; i <= n_made_up_voices; i++)); do
    printf -v v 'fbv%03d' "$i"
    speakers+=("espeak ${accents[i % 6]}+$v 1 4")
done
# festival's voices that read their own script (above), as festival's others: 12 takes of each
# digit and 32 other words, theirs from script_others. Last, so that a folder made before gains
# them (the Russian voice, after the Indian ones, since 2026-12-06).
for v in "${script_voices[@]}"; do speakers+=("festival ${v%%:*} 12 32"); done
# The other words the script voices say, each one festival_script_word can write in their scripts:
# words of `others`, which other voices say too, so that no word enters the data set that the
# listening tests' recordings say as one it never heard (test_cli checks).
script_others=(water summer doctor market salad super lion hospital rocket tiger mango banana
               hotel radio piano lemon butter camera hello ticket bottle house sugar sister
               evening happy school metal cricket computer mother machine picture holiday
               village letter jacket tomato planet father milk)
background_per_speaker=2 # 1-second noise clips per voice made
# Short sounds over a quiet floor per voice made (background too): since 2026-12-07, when the
# example took 25 of 28 clicks, taps and knocks of 3 to 80 ms for a digit ("8" at 96% for a
# 10 ms click), having heard no sound as short that was not part of a word. Added to version 7
# without a new version: a folder made before gains them and keeps the rest.
clicks_per_speaker=1

if [[ -n "${FLOWBENCH_SPOKEN_DIGITS_VOICES:-}" ]]; then
    n="$FLOWBENCH_SPOKEN_DIGITS_VOICES"
    if ! [[ "$n" =~ ^[0-9]+$ ]] || (( n < 1 || n > ${#speakers[@]} )); then
        echo "make_spoken_digits: FLOWBENCH_SPOKEN_DIGITS_VOICES must be 1 to ${#speakers[@]}, not '$n'" >&2
        exit 2
    fi
    speakers=("${speakers[@]:0:n}")
fi
if [[ -n "${FLOWBENCH_SPOKEN_DIGITS_ONLY:-}" ]]; then
    kept=()
    for s in "${speakers[@]}"; do
        read -r engine voice _ <<<"$s"
        [[ "$engine-${voice/+/-}" =~ $FLOWBENCH_SPOKEN_DIGITS_ONLY ]] && kept+=("$s")
    done
    if (( ${#kept[@]} == 0 )); then
        echo "make_spoken_digits: no voice matches FLOWBENCH_SPOKEN_DIGITS_ONLY '$FLOWBENCH_SPOKEN_DIGITS_ONLY'" >&2
        exit 2
    fi
    speakers=("${kept[@]}")
fi

needs=(espeak-ng sox soxi)
for s in "${speakers[@]}"; do
    case $s in flite*) needs+=(flite) ;; festival*) needs+=(festival) ;; esac
done
if [[ " ${needs[*]} " == *" festival "* ]]; then
    for v in "${festival_voices[@]}" "${script_voices[@]}"; do
        IFS=: read -r name dir package files <<<"$v"
        [[ -d /usr/share/festival/voices/$dir ]] || {
            echo "make_spoken_digits: festival's voice $dir is missing; install it: sudo apt install $package" >&2
            exit 1
        }
        # The Indian voices load their language's files from /usr/share/festival/FILES.
        if [[ -n $files && ! -d /usr/share/festival/$files ]]; then
            echo "make_spoken_digits: festival's voice $dir is there but its language's files (/usr/share/festival/$files) are missing; install them: sudo apt install $package" >&2
            exit 1
        fi
    done
fi
for tool in $(printf '%s\n' "${needs[@]}" | sort -u); do
    command -v "$tool" >/dev/null || {
        echo "make_spoken_digits: $tool is missing; install espeak-ng, flite, festival, its voices and sox: sudo apt install $packages" >&2
        exit 1
    }
done

# Every recording to make, one line each: kind name engine voice word. (No command
# substitutions in these loops: a fork each would cost seconds on some machines.)
espeak_jobs=() # espeak-ng's recordings (and the background noise)
other_jobs=()  # flite's and festival's, made from their raw words
names=()
# flite's and festival's words, synthesized once and varied by sox per take: flite's a job a
# word (raw_list), festival's a job a voice (voice_list, make_raw_voice)
raw_list=()
voice_list=()
declare -A made_voice=() # the espeak-ng voices made, whose hard negatives are made too
k=0
for s in "${speakers[@]}"; do
    read -r engine voice takes n_other <<<"$s"
    speaker="$engine-${voice/+/-}"
    raw_words=()
    [[ $engine == espeak ]] && made_voice[$voice]=1
    for d in "${!digits[@]}"; do
        for ((t = 1; t <= takes; t++)); do
            # espeak-ng's second take may say the digit as another accent would (make_one).
            word=${digits[$d]}
            [[ $engine == espeak && $t == 2 ]] && word+="~$(( (k * 7 + d) % 4 ))"
            job="speech ${d}_${speaker}_$t $engine $voice $word"
            if [[ $engine == espeak ]]; then espeak_jobs+=("$job"); else other_jobs+=("$job"); fi
            names+=("${d}_${speaker}_$t")
        done
        [[ $engine != espeak ]] && raw_words+=("${digits[$d]}")
    done
    for ((t = 0; t < n_other; t++)); do
        # A different run of the list for each voice.
        w=${others[$(( (k * 37 + t * 23) % ${#others[@]} ))]}
        [[ $engine == festival ]] && is_script_voice "$voice" &&
            w=${script_others[$(( (k * 37 + t * 23) % ${#script_others[@]} ))]}
        job="speech unknown_${speaker}_$((t + 1)) $engine $voice $w"
        if [[ $engine == espeak ]]; then espeak_jobs+=("$job"); else other_jobs+=("$job"); fi
        names+=("unknown_${speaker}_$((t + 1))")
        [[ $engine != espeak ]] && raw_words+=("$w")
    done
    if [[ $engine == flite ]]; then
        for w in "${raw_words[@]}"; do raw_list+=("raw - flite $voice $w"); done
    elif [[ $engine == festival ]]; then
        w="${raw_words[*]}"
        voice_list+=("rawvoice - festival $voice ${w// /,}")
    fi
    # Made-up words (make_one): sounds of English in orders no word list has.
    for ((t = n_other; t < n_other + n_pseudo; t++)); do
        [[ $engine == espeak ]] || break
        espeak_jobs+=("speech unknown_${speaker}_$((t + 1)) $engine $voice pseudo~$k.$t")
        names+=("unknown_${speaker}_$((t + 1))")
    done
    k=$((k + 1))
done
# The hard negatives of the voices made (all of them unless FLOWBENCH_SPOKEN_DIGITS_VOICES): the
# real words as _rN, the number words as _nN and the words holding a digit as _cN, said as words
# (the entries get that letter in front).
for h in "${real_negatives[@]/#/r/}" "${number_negatives[@]/#/n/}" \
    "${digit_word_negatives[@]/#/c/}" "${digit_plus_negatives[@]/#/d/}"; do
    IFS=/ read -r is voice word speed pitch n <<<"$h"
    [[ -n "${made_voice[$voice]:-}" ]] || continue
    # xargs reads quotes in its input: the stress mark travels as % and make_one turns it back.
    espeak_jobs+=("hard unknown_espeak-${voice/+/-}_$is$n espeak $voice ${word//\'/%}/$speed/$pitch")
    names+=("unknown_espeak-${voice/+/-}_$is$n")
done
n_background=$(( ${#speakers[@]} * background_per_speaker ))
for ((i = 0; i < n_background; i++)); do
    # 20 clips per noise "speaker", so that the speaker split holds out some of each kind.
    name="background_noise-$(( i / 20 ))_$(( i % 20 + 1 ))"
    espeak_jobs+=("noise $name - - -") # needs no raw word either
    names+=("$name")
done
# Background too: short sounds that are no word (clicks, keys, taps, knocks), one a voice.
n_clicks=$(( ${#speakers[@]} * clicks_per_speaker ))
for ((i = 0; i < n_clicks; i++)); do
    name="background_click-$(( i / 20 ))_$(( i % 20 + 1 ))"
    espeak_jobs+=("click $name - - -")
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
# A folder of another version (the first two wrote no .version) is made again, finished or
# not: its voices, takes and noise clips' names differ, so that every recording goes (and its
# half-made .tmp.wav); flite's and festival's raw words in .raw are kept.
if [[ "$(cat "$out/.version" 2>/dev/null || true)" != "$version" ]]; then
    rm -f "$out"/[0-9]_*.wav "$out"/unknown_*.wav "$out"/background_*.wav
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

# One line of the list. Every random choice comes from a hash of the name (cksum's), so every
# run makes the same files.
#
# A worker (work, below) makes a few dozen recordings in one bash, in one folder of its own, and
# draws the hashes in bash arithmetic; it hands each recording's recipe to its flowbench-speak
# (or, without one, runs espeak-ng and sox three times, and nothing else that forks). On a
# 2-core machine where a fork costs 4 ms, the cksum pipelines, soxi, mktemp and a bash for every
# recording were two thirds of the time, and the commands' starts most of the rest.

# POSIX cksum's CRC of a string, in bash arithmetic (a `printf | cksum | cut` pipeline is three
# processes): the polynomial 0x04C11DB7 most significant bit first, then the length's bytes,
# then the complement, the number cksum(1) prints. crc_init fills the table once a worker.
crc_init() {
    local i c b
    crc_table=()
    for ((i = 0; i < 256; i++)); do
        c=$(( i << 24 ))
        for ((b = 0; b < 8; b++)); do
            c=$(( c & 0x80000000 ? ((c << 1) ^ 0x04C11DB7) & 0xFFFFFFFF : (c << 1) & 0xFFFFFFFF ))
        done
        crc_table[i]=$c
    done
}
# Sets crc to cksum's checksum of $1 (ASCII).
cksum_of() {
    local s=$1 i n=${#1} c=0 byte
    for ((i = 0; i < n; i++)); do
        printf -v byte '%d' "'${s:i:1}"
        c=$(( ((c << 8) & 0xFFFFFFFF) ^ crc_table[((c >> 24) ^ byte) & 255] ))
    done
    for ((; n > 0; n >>= 8)); do
        c=$(( ((c << 8) & 0xFFFFFFFF) ^ crc_table[((c >> 24) ^ n) & 255] ))
    done
    crc=$(( ~c & 0xFFFFFFFF ))
}
# Sets raw to where ENGINE's VOICE saying WORD is kept, in OUT/.raw (flite's and festival's).
raw_of() {
    raw="$1/.raw/$2-${3/+/-}-$4.wav"
}
# Sets fv to festival's name for its VOICE (voice_kal_diphone for kal: festival names a voice
# after its folder).
festival_voice() {
    local v='' entry dir
    for entry in $FESTIVAL_VOICES; do
        IFS=: read -r v dir _ <<<"$entry"
        [[ $v == "$1" ]] && break
    done
    # Not the last entry's voice by default: an unknown name is an error of the script.
    [[ $v == "$1" ]] || { echo "make_spoken_digits: no festival voice '$1'" >&2; return 1; }
    fv=voice_${dir##*/}
}
# Makes the jobs given as arguments (6 words each: out kind name engine voice word), one after
# another in this bash, until a signal asks it to stop: then after the recording being made, so
# that no half-made one is left and what the script says it made is there.
#
# With flowbench-speak ($FB_SPEAK), the worker hands it each recording's recipe and it makes
# them, one after another, in a process of its own; stopping, the worker tells it to stop after
# the recording in hand, and waits for it.
work() {
    local stopping=0 speak_pid='' status=0
    trap 'stopping=1' TERM INT HUP
    crc_init
    tmp=$(mktemp -d) || return 1
    if [[ -n $FB_SPEAK ]]; then
        trap '' PIPE # a flowbench-speak that ended (stopped) fails the write, not the worker
        exec {speak_fd}> >(exec "$FB_SPEAK" ${FB_R:+--repeatable})
        speak_pid=$!
    fi
    while (( $# >= 6 && !stopping )); do
        make_one "${@:1:6}"
        shift 6
    done
    if [[ -n $speak_pid ]]; then
        (( stopping )) && kill -TERM "$speak_pid" 2>/dev/null
        exec {speak_fd}>&-
        wait "$speak_pid" || status=$?
    fi
    rm -rf "$tmp"
    return "$status"
}
# The raw words of festival's VOICE ($4) that are not in .raw yet, the comma-separated WORDS
# ($5), in one festival: a festival takes a second to start, and 12 voices x 42 words started
# one each took 10 minutes of a core. The same waves as text2wave makes of each word alone
# (compared byte for byte): festival's random numbers are seeded again before each word, as a
# new festival's are (the Czech voices draw their durations from them), with the Czech voices'
# range found again. A word this misses (festival crashes now and then) is made alone later, by
# the recordings that need it.
make_raw_voice() {
    local out=$1 voice=$2 words=$3 word raw part script=() made=()
    festival_voice "$voice" || return 1
    for word in ${words//,/ }; do
        raw_of "$out" festival "$voice" "$word"
        [[ -s "$raw" ]] && continue
        part="$raw.$BASHPID.tmp.wav"
        festival_word "$voice" "$word"
        script+=("(fb_say \"$said\" \"$part\")")
        made+=("$part")
    done
    (( ${#made[@]} )) || return 0
    {
        festival_script "$voice"
        printf '%s\n' "${script[@]}"
    } >"$tmp/say.scm"
    # In the background, so that a signal to stop (work) need not wait for the voice's last
    # word: festival is stopped, and what it finished is kept.
    local pid status
    festival --batch "$tmp/say.scm" >/dev/null 2>&1 &
    pid=$!
    while :; do
        wait "$pid"
        status=$?
        kill -0 "$pid" 2>/dev/null || break
        (( stopping )) && kill "$pid" 2>/dev/null # a signal ended the wait, not festival
    done
    # festival writes the words one after another: when it did not end well (stopped, or
    # crashed), the last one written may be cut short and is made again later.
    local last=-1 i
    for i in "${!made[@]}"; do [[ -s "${made[i]}" ]] && last=$i; done
    for i in "${!made[@]}"; do
        part=${made[i]}
        if [[ -s "$part" ]] && (( status == 0 || i < last )); then
            festival_keep "$part"
        else
            rm -f "$part" "$part.trim"
        fi
    done
    return 0
}
# Prints the start of a festival script that says words with VOICE ($1): (fb_say TEXT FILE)
# writes FILE, as text2wave would (the same samples). For script_voices it also writes
# FILE.trim, the seconds to keep: from 0.1 s before the first pause ends to 0.15 s after the last
# one starts (festival's segment times), which festival_keep cuts.
festival_script() {
    festival_voice "$1" || return 1
    echo "($fv)"
    is_script_voice "$1" && echo "(set! fb_trim t)" || echo "(set! fb_trim nil)"
    echo "(define (fb_say text file)"
    echo "  (srand 1)"
    echo "  (if (symbol-bound? 'czech-rand-range) (set! czech-rand-range nil))"
    echo "  (let ((u (utt.synth (eval (list 'Utterance 'Text text)))))"
    echo "    (utt.wave.resample u 16000)"
    echo "    (utt.save.wave u file 'riff)"
    echo "    (if fb_trim"
    echo "      (let ((segs (utt.relation.items u 'Segment)) (fd (fopen (string-append file \".trim\") \"w\")))"
    echo "        (format fd \"%f %f\\n\" (- (item.feat (car segs) 'end) 0.1)"
    echo "                (+ (item.feat (car (last segs)) 'segment_start) 0.15))"
    echo "        (fclose fd)))))"
}
# Keeps festival's word PART ($1, NAME.PID.tmp.wav) as NAME: cut to PART.trim's seconds where
# festival_script wrote them.
festival_keep() {
    local part=$1 from to
    if [[ -f "$part.trim" ]]; then
        read -r from to <"$part.trim"
        rm -f "$part.trim"
        # A word whose first pause is shorter than 0.1 s (the Russian voice's "ту") is kept from
        # its start: sox reads a negative position from the end.
        [[ $from == -* ]] && from=0
        sox -q -V1 "$part" "$part.cut.wav" trim "$from" "=$to" && mv "$part.cut.wav" "$part" || {
            rm -f "$part" "$part.cut.wav"
            return 1
        }
    fi
    mv "$part" "${part%.*.tmp.wav}"
}
make_one() {
    local out=$1 kind=$2 name=$3 engine=$4 voice=$5 word=$6
    if [[ $kind == rawvoice ]]; then
        make_raw_voice "$out" "$voice" "$word"
        return
    fi
    local raw
    raw_of "$out" "$engine" "$voice" "$word"
    if [[ $kind == raw ]]; then
        [[ -s "$raw" ]] && return 0
        # A name of its own: a recording whose raw word is not there yet makes it too (below).
        local part="$raw.$BASHPID.tmp.wav"
        if [[ $engine == flite ]]; then
            flite -voice "$voice" -t "$word" -o "$part" || return 1
            [[ -s "$part" ]] && mv "$part" "$raw"
            return
        fi
        # festival: make_raw_voice's script for one word (text2wave's samples; the script
        # voices' words cut to festival's segment times).
        festival_word "$voice" "$word"
        { festival_script "$voice" && echo "(fb_say \"$said\" \"$part\")"; } >"$tmp/one.scm" ||
            return 1
        # festival crashes now and then (a segmentation fault: seen twice with its Catalan
        # voice, then not again in 16 tries of the same words): a few tries.
        local try
        for try in 1 2 3; do
            festival --batch "$tmp/one.scm" >/dev/null 2>&1 && [[ -s "$part" ]] &&
                festival_keep "$part" && break
        done
        rm -f "$part" "$part.trim"
        return
    fi
    [[ -s "$out/$name.wav" ]] && return 0
    if [[ $kind == hard ]]; then
        # A hard negative: TEXT/SPEED/PITCH said by the voice, nothing more (above); TEXT is a
        # made-up word's [[PHONEMES]] or a real word.
        local text=${word%%/*} rest=${word#*/}
        text=${text//%/\'}
        espeak_voice "$voice"
        if [[ -n $FB_SPEAK ]]; then
            recipe "$out/$name.wav" espeak "$ev" "${rest%%/*}" "${rest#*/}" "$text" effects norm -3
            return
        fi
        espeak-ng -v "$ev" -s "${rest%%/*}" -p "${rest#*/}" -w "$tmp/voice.wav" "$text" &&
            sox $FB_R -q -V1 "$tmp/voice.wav" -r 16000 -c 1 -b 16 "$out/$name.tmp.wav" norm -3 &&
            mv "$out/$name.tmp.wav" "$out/$name.wav"
        return
    fi
    local h g noises levels
    cksum_of "$name"
    h=$crc
    cksum_of "x$name"
    g=$crc
    noises=(whitenoise pinknoise brownnoise)
    levels=(0.0005 0.001 0.002 0.003 0.005 0.007 0.01 0.015 0.02 0.03)
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
            effects=(synth "${len:0:1}.${len:1}" "${noises[$(( (h / 200) % 3 ))]}" synth sine mix
                     $(( (h / 600) % 2 ? 50 : 60 )) vol "${levels[$(( (h / 1200) % 10 ))]}")
        else
            effects=(synth "${len:0:1}.${len:1}" "${noises[$(( (h / 200) % 3 ))]}"
                     vol "${levels[$(( (h / 1200) % 10 ))]}" "${effects[@]}")
        fi
        if [[ -n $FB_SPEAK ]]; then
            recipe "$out/$name.wav" silence effects "${effects[@]}"
            return
        fi
        sox $FB_R -q -n -r 16000 -c 1 -b 16 "$out/$name.tmp.wav" "${effects[@]}" &&
            mv "$out/$name.tmp.wav" "$out/$name.wav"
        return
    fi
    if [[ $kind == click ]]; then
        # A short sound that is no word, 3 to 100 ms, decaying: an electronic click (a square
        # wave), a tap or thump on the microphone (a low sine), a key or a mouse button (white
        # noise above 1 to 4 kHz), a knock (brown noise below 0.4 to 2 kHz) or pink noise; once
        # to three times, 40 to 400 ms apart, sometimes in a room, 0.1 to 0.7 s of quiet on each
        # side, at a level of its own over a quiet noise floor. Trimmed and centred, it is what
        # a click in the microphone looks like to a model.
        local bursts=(square sine whitenoise brownnoise pinknoise) b=$(( g % 5 ))
        local ms=$(( 3 + (h / 7) % 98 )) times=$(( 1 + (g / 5) % 3 ))
        local chain=(synth "$(printf '0.%03d' "$ms")" "${bursts[b]}")
        case $b in
            0) chain+=($(( 300 + (h / 700) % 2700 ))) ;;
            1) chain+=($(( 60 + (h / 700) % 190 ))) ;;
        esac
        chain+=(fade q 0.0005 "$(printf '0.%03d' "$ms")" "$(printf '0.%04d' $(( ms * 8 )))")
        case $b in
            2) chain+=(highpass $(( 1000 + (g / 15) % 3000 ))) ;;
            3) chain+=(lowpass $(( 400 + (g / 15) % 1600 ))) ;;
        esac
        (( times > 1 )) &&
            chain+=(pad 0 "$(printf '0.%03d' $(( 40 + (h / 70000) % 361 )))" repeat $(( times - 1 )))
        chain+=(pad "$(printf '0.%03d' $(( 100 + (g / 45000) % 601 )))"
                "$(printf '0.%03d' $(( 100 + (h / 2000000) % 601 )))")
        (( (g / 600) % 3 == 0 )) && chain+=(reverb $(( 20 + (g / 1800) % 60 )))
        chain+=(rate 16000 norm -$(( 1 + (h / 20) % 20 )))
        local noise=${noises[$(( (h / 3) % 3 ))]} level=${levels[$(( (g / 11) % 6 ))]}
        local source=(silence) src=-n
        make_take
        return
    fi
    # Speech: the engine's voice (espeak-ng's at a speed and pitch of its own), then tempo and
    # pitch, a room or a channel, a level and a noise floor.
    local src="$raw" pitch_span=900 source=(file "$raw")
    if [[ $engine != espeak && ! -s "$raw" ]]; then
        make_one "$out" raw - "$engine" "$voice" "$word" || return 1
    fi
    if [[ $engine == espeak ]]; then
        # WORD~N: the digit as accents other than espeak-ng's six say it, in its phonemes
        # (N = 0 or one beyond the list: the word as the voice's accent says it). Vowels
        # are what English accents differ in most: "five" as Birmingham's or Australia's
        # "foive", the American South's "fahv"; "eight" as London's "ait" or Scotland's
        # "ayt" with a pure vowel; "three" with th-stopping or th-fronting.
        local say=${word%~*} alt=()
        if [[ $say == pseudo ]]; then
            pseudo_word "$h"
            say="[[$pseudo]]"
        elif [[ $word == *~* ]]; then
            case $say in
                zero) alt=("z'i:roU" "z'Ir@U") ;;
                one) alt=("w'0n" "w'Vn") ;;
                three) alt=("tr'i:" "fr'i:") ;;
                four) alt=("f'O:" "f'o@r") ;;
                five) alt=("f'OIv" "f'A:v" "f'VIv") ;;
                six) alt=("s'Eks" "s'i:ks") ;;
                seven) alt=("s'Evn-") ;;
                eight) alt=("'aIt" "'e:t" "'E:t") ;;
                nine) alt=("n'OIn" "n'A:n" "n'VIn") ;;
            esac
            local n=${word##*~}
            (( n >= 1 && n <= ${#alt[@]} )) && say="[[${alt[$((n - 1))]}]]"
        fi
        espeak_voice "$voice"
        source=(espeak "$ev" $(( 120 + h % 80 )) $(( 25 + (h / 80) % 50 )) "$say")
        if [[ -z $FB_SPEAK ]]; then
            espeak-ng -v "$ev" -s "${source[2]}" -p "${source[3]}" -w "$tmp/voice.wav" "$say" ||
                return 1
            src="$tmp/voice.wav"
        fi
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
    local noise=${noises[$(( (h / 7) % 3 ))]} level=${levels[$(( (g / 11) % 10 ))]}
    make_take
}
# make_one's last step for a take, a word or a short sound: its source through the effects
# `chain`, over a noise floor of colour `noise` at `level`, into `out`/`name`.wav; it reads
# these locals of make_one (bash's dynamic scope), `source` (the recipe's source fields) for
# flowbench-speak and `src` (a file, or -n for none) for the sox commands.
make_take() {
    if [[ -n $FB_SPEAK ]]; then
        recipe "$out/$name.wav" "${source[@]}" noise "$noise" "$level" effects "${chain[@]}"
        return
    fi
    # The noise floor as long as the speech: made from it (synth replaces it) at 48 kHz and
    # brought down to 16 kHz, which is what `sox -n ... synth SECONDS` did (-n is 48 kHz), so
    # that white noise keeps its level below 8 kHz.
    sox $FB_R -q -V1 "$src" -r 16000 -c 1 -b 16 "$tmp/speech.wav" "${chain[@]}" &&
        sox $FB_R -q -V1 "$tmp/speech.wav" -r 16000 -c 1 -b 16 "$tmp/noise.wav" rate 48000 synth 0 \
            "$noise" vol "$level" rate 16000 &&
        sox $FB_R -q -V1 -m -v 1 "$tmp/speech.wav" -v 1 "$tmp/noise.wav" "$out/$name.tmp.wav" &&
        mv "$out/$name.tmp.wav" "$out/$name.wav"
}
# Hands flowbench-speak (work's) the recipe of one recording: OUT then its fields, tab-separated
# (app/speak/main.cpp reads them).
recipe() {
    local IFS=$'\t'
    printf 'out\t%s\n' "$*" 2>/dev/null >&"$speak_fd"
}
# Sets said to what festival's VOICE ($1) is given to say WORD ($2): an English digit as a speaker of the
# voice's language would write down how it sounds in English ("three" as Italian "tri", Czech
# "fajv" for "five"), so that its letter-to-sound rules give an accented English digit; anything
# else as it is. English's own voices get every word as it is.
festival_word() {
    local voice=$1 word=$2 d
    local -A say=(
        [it]="ziro uan tu tri for faiv sics seven eit nain"
        [ca]="ziro uan tu tri for faiv sics seven eit nain"
        [fi]="siirou van tuu trii foor faiv siks seven eit nain"
        [cs]="zirou van tu tri for fajv siks sevn ejt najn"
    )
    local digits=(zero one two three four five six seven eight nine) words
    if is_script_voice "$voice"; then
        festival_script_word "$voice" "$word"
        return
    fi
    read -ra words <<<"${say[${voice%%-*}]:-}"
    for d in "${!digits[@]}"; do
        if [[ ${#words[@]} == 10 && $word == "${digits[$d]}" ]]; then
            said=${words[$d]}
            return
        fi
    done
    said=$word
}
# Sets said to English WORD ($2) as Hindi (VOICE hi), Telugu (te) or Russian (ru) writes it: the
# digits and script_others, ENGLISH then a column for each of script_voices, in their order
# (ENGLISH:HINDI:TELUGU:RUSSIAN). Hindi's final consonants carry a virama
# (festival adds a vowel to one without); no nukta (festival crashes on it): "zero" is said with
# a j, as many Indian speakers say it. Russian writes "th" as с or з ("сри", "мазер"), as many
# Russian speakers say it.
festival_script_word() {
    local e v column=0 i=1
    for v in ${SCRIPT_VOICES:-${script_voices[*]}}; do
        [[ ${v%%:*} == "$1" ]] && column=$i
        i=$((i + 1))
    done
    local script_words=(
        zero:जीरो:జీరో:зиро one:वन्:వన్:уан two:टू:టూ:ту three:थ्री:త్రీ:сри four:फोर्:ఫోర్:фор
        five:फाइव्:ఫైవ్:файв six:सिक्स्:సిక్స్:сикс seven:सेवन्:సెవెన్:севен eight:एट्:ఎయిట్:эйт
        nine:नाइन्:నైన్:найн water:वाटर्:వాటర్:уотер summer:समर्:సమ్మర్:саммер
        doctor:डाक्टर्:డాక్టర్:доктор market:मार्केट्:మార్కెట్:маркет salad:सलाद्:సలాడ్:салад
        super:सुपर्:సూపర్:супер lion:लायन्:లయన్:лайон hospital:हास्पिटल्:హాస్పిటల్:хоспитал
        rocket:राकेट्:రాకెట్:рокет tiger:टाइगर्:టైగర్:тайгер mango:मैंगो:మాంగో:манго
        banana:बनाना:బనానా:банана hotel:होटल्:హోటల్:хоутел radio:रेडियो:రేడియో:рейдио
        piano:पियानो:పియానో:пиано lemon:लेमन्:లెమన్:лемон butter:बटर्:బటర్:баттер
        camera:कैमरा:కెమెరా:кэмера hello:हेलो:హలో:хэллоу ticket:टिकट्:టికెట్:тикет
        bottle:बोतल्:బాటిల్:ботл house:हाउस्:హౌస్:хаус sugar:शुगर्:షుగర్:шугар
        sister:सिस्टर्:సిస్టర్:систер evening:ईवनिंग्:ఈవెనింగ్:ивнинг happy:हैपी:హ్యాపీ:хэппи
        school:स्कूल्:స్కూల్:скул metal:मेटल्:మెటల్:метал cricket:क्रिकेट्:క్రికెట్:крикет
        computer:कंप्यूटर्:కంప్యూటర్:компьютер mother:मदर्:మదర్:мазер machine:मशीन्:మెషిన్:машин
        picture:पिक्चर्:పిక్చర్:пикчер holiday:हालिडे:హాలిడే:холидей village:विलेज्:విలేజ్:вилледж
        letter:लेटर्:లెటర్:леттер jacket:जैकेट्:జాకెట్:джекет tomato:टोमैटो:టొమాటో:томейто
        planet:प्लानेट्:ప్లానెట్:планет father:फादर्:ఫాదర్:фазер milk:मिल्क्:మిల్క్:милк
    )
    for e in "${script_words[@]}"; do
        [[ ${e%%:*} == "$2" ]] || continue
        (( column )) || break
        IFS=: read -ra e <<<"$e"
        said=${e[column]}
        return 0
    done
    echo "make_spoken_digits: no $1 script for '$2'" >&2
    said=$2
    return 1
}
# Sets pseudo to a made-up word of 1 to 3 syllables in espeak-ng's phonemes, stressed on the
# first, from the number $1: English onsets, vowels and codas in any order, so that "unknown" holds sounds
# near every digit's ("s'Ikt", "f'aIk") that no list of real words has, and the model must
# hear a digit whole. Never a digit itself (nor one of make_one's accents of it).
pseudo_word() {
    local h=$1 w s n o v c
    local onsets=("" p b t d k g f v T D s z S h m n l r w j tS dZ st sp sk pl bl kl gl fl sl
                  pr br tr dr kr gr fr Tr sw kw sm sn)
    local vowels=(a E I 0 V U i: u: A: O: 3: eI aI OI aU oU i@ e@)
    local codas=("" "" p b t d k g f v s z S m n N l ks nt nd st mp lt ns ts)
    local digits=" z'i@roU z'i:roU z'Ir@U w'0n w'Vn t'u: Tr'i: tr'i: fr'i: f'o@ f'O: f'o@r f'O@
                  f'aIv f'OIv f'A:v f'VIv s'Iks s'Eks s'i:ks s'Ev@n s'Evn- 'eIt 'aIt 'e:t 'E:t
                  n'aIn n'OIn n'A:n n'VIn "
    while :; do
        w="" n=$(( 1 + h % 3 ))
        for ((s = 0; s < n; s++)); do
            h=$(( (h * 1103515245 + 12345) % 2147483648 )) # a step of a linear congruence
            o=${onsets[$(( (h >> 4) % ${#onsets[@]} ))]}
            v=${vowels[$(( (h >> 10) % ${#vowels[@]} ))]}
            c=${codas[$(( (h >> 16) % ${#codas[@]} ))]}
            if (( s == 0 )); then
                w+="$o'$v$c"
            else
                (( (h >> 24) % 2 )) && v=@ # unstressed syllables are often a schwa
                w+="$o$v$c"
            fi
        done
        [[ $digits == *" $w "* ]] || break
    done
    pseudo=$w
}
export -f work make_one make_take make_raw_voice raw_of crc_init cksum_of pseudo_word \
    espeak_voice festival_voice festival_word festival_script_word festival_script festival_keep \
    is_script_voice recipe

# flowbench-speak (app/speak) makes the recordings in one process with libespeak-ng and libsox,
# the very same samples as the espeak-ng and sox commands, in a third of the time (a process
# started per step was most of it). FLOWBENCH_SPEAK names it (flowbench-cli sets it to the one
# beside it; "none": the commands); else the one beside the installed script
# (<prefix>/lib/flowbench) or the source tree's build/bin; else the commands.
FB_SPEAK=${FLOWBENCH_SPEAK:-}
if [[ -z $FB_SPEAK ]]; then
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    for candidate in "$here/../../lib/flowbench/flowbench-speak" "$here/../build/bin/flowbench-speak"; do
        if [[ -x $candidate ]]; then FB_SPEAK=$candidate; break; fi
    done
fi
[[ $FB_SPEAK == none ]] && FB_SPEAK=''
if [[ -n $FB_SPEAK && ! -x $FB_SPEAK ]]; then
    echo "make_spoken_digits: FLOWBENCH_SPEAK is '$FB_SPEAK', not a program" >&2
    exit 2
fi
export FB_SPEAK
# FLOWBENCH_SPOKEN_DIGITS_REPEATABLE=1: sox -R, random numbers (noise, dither) the same in every
# run, and flowbench-speak --repeatable, so that the two ways make the same files bit for bit
# (test_cli compares them). Not for training: every recording's noise would be the same noise.
FB_R=''
[[ ${FLOWBENCH_SPOKEN_DIGITS_REPEATABLE:-} == 1 ]] && FB_R=-R
export FB_R

# The made-up voices' espeak-ng data folder (made_up_folder, above), made again every run and
# gone at its end.
voices_home=$(mktemp -d)
trap 'rm -rf "$voices_home"' EXIT
made_up_folder "$voices_home" 1 "$n_made_up_voices" # and checks espeak-ng reads them
export ESPEAK_DATA_PATH=$voices_home

jobs=$(nproc 2>/dev/null || echo 2)
echo "spoken digits: making $want recordings in $out ($jobs at a time, ${FB_SPEAK:-with the espeak-ng and sox commands})" >&2

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
# handing out recordings and the workers stop after the one they are making, so no
# half-written file is left, and the script waits for them, so that what it says it made is
# what is there when it ends.
make_pid='' progress_pid=''
workers_of() { # the processes whose parent is $1 (from /proc: procps may not be installed)
    local stat pid comm state ppid rest
    for stat in /proc/[0-9]*/stat; do
        read -r pid comm state ppid rest 2>/dev/null < "$stat" || continue
        if [[ $ppid == "$1" ]]; then echo "$pid"; fi
    done
}
stop() {
    trap '' HUP INT TERM # once is enough: a signal to the whole group comes twice
    local workers='' pid
    [[ -n $make_pid ]] && workers=$(workers_of "$make_pid")
    # xargs hands out no more; a worker finishes the recording it is making (work).
    for pid in $make_pid $progress_pid $workers; do kill "$pid" 2>/dev/null || true; done
    local deadline=$(( SECONDS + 30 )) # a recording takes a second or two; a hung one is left
    for pid in $workers; do
        while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do sleep 0.05; done
    done
    echo "spoken digits: stopped with $(count_made) of $want made in $out; run again to finish" >&2
    exit "$1"
}
trap 'stop 129' HUP
trap 'stop 130' INT
trap 'stop 143' TERM
report_progress &
progress_pid=$!
# festival's voices' words first (one worker makes them while the others start on espeak-ng's
# recordings, so that the count grows at once), then flite's words, then their recordings. A
# worker takes 25 jobs at a time: a second or two of work.
{
    (( ${#voice_list[@]} )) && printf "$out %s\n" "${voice_list[@]}"
    (( ${#espeak_jobs[@]} )) && printf "$out %s\n" "${espeak_jobs[@]}"
    (( ${#raw_list[@]} )) && printf "$out %s\n" "${raw_list[@]}"
    (( ${#other_jobs[@]} )) && printf "$out %s\n" "${other_jobs[@]}"
    true # an empty last list is not a failure
} | xargs -P "$jobs" -n $(( 6 * 25 )) bash -c 'work "$@"' _ &
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
