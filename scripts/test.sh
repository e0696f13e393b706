#!/usr/bin/env bash
# The test command: install what is missing, build, run every test with CTest.
#
#   scripts/test.sh                 everything
#   scripts/test.sh -R tensor       extra arguments go to ctest (here: only tests matching "tensor")
#
# Exits with CTest's status. Works from any directory, non-interactively (CI runs it through
# .ci/run). GUI tests run on Qt's offscreen platform unless QT_QPA_PLATFORM says otherwise.
# FLOWBENCH_JOBS=N limits parallel compile jobs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi

bash scripts/deps.sh >&2 || fb_die "installing dependencies failed (see above)"
fb_build

export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
fb_say "== test: ctest --test-dir $FB_BUILD_DIR --output-on-failure -j2 $*"
status=0
ctest --test-dir "$FB_BUILD_DIR" --output-on-failure -j2 "$@" || status=$?
exit "$status"
