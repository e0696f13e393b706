#!/usr/bin/env bash
# The one set-up command: install what is missing, build, and run the Fashion-MNIST CNN example.
#
#   scripts/start.sh                              the window if there is a display, else headless
#   scripts/start.sh --headless                   always headless (flowbench-cli)
#   scripts/start.sh --set train.epochs=1         extra arguments go to the run
#   scripts/start.sh --device cuda --threads 4
#
# Headless runs write to runs/<YYYYmmdd-HHMMSS>/ (unless you pass --out DIR): progress on
# stderr, and the run's summary as one JSON object on the last line of stdout.
# Works from any directory. FLOWBENCH_JOBS=N limits parallel compile jobs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

PIPELINE="resources/examples/fashion_mnist_cnn.json"

headless=0
if [[ "${1:-}" == "--headless" ]]; then headless=1; shift; fi
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi

bash scripts/deps.sh >&2 || fb_die "installing dependencies failed (see above)"
fb_build >&2   # keep stdout for the run's JSON summary

[[ -f "$PIPELINE" ]] || fb_die "$PIPELINE is missing from this checkout"
# The spoken-digits example's recordings are made here, once (1 to 4 minutes on 2 cores, with
# the flowbench-speak just built; nothing is downloaded): resources/examples/spoken_digits.json
# reads them.
FLOWBENCH_SPEAK="$FB_ROOT/$FB_BUILD_DIR/bin/flowbench-speak" bash scripts/make_spoken_digits.sh >&2 ||
    fb_say "(the spoken-digits data set could not be made; that example needs it)"

# With a display, the workbench window opens with the example; --set/--threads/--device given
# here apply to the runs started from it. Without one, the example trains headless.
if (( ! headless )) && [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]] &&
    [[ -x "$FB_BUILD_DIR/bin/flowbench" ]]; then
    fb_say "== starting the workbench with $PIPELINE"
    exec "$FB_BUILD_DIR/bin/flowbench" "$PIPELINE" "$@"
fi

cli="$FB_BUILD_DIR/bin/flowbench-cli"
[[ -x "$cli" ]] || fb_die "$cli was not built"

out=()
has_out=0
for a in "$@"; do [[ "$a" == "--out" || "$a" == --out=* ]] && has_out=1; done
if (( ! has_out )); then
    mkdir -p runs
    out=(--out "runs/$(date +%Y%m%d-%H%M%S)")
fi
fb_say "== headless run: $cli run $PIPELINE ${out[*]} $*"
exec "$cli" run "$PIPELINE" "${out[@]}" "$@"
