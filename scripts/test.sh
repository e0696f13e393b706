#!/usr/bin/env bash
# The test command: install what is missing, build, run every test with CTest.
#
#   scripts/test.sh                 everything
#   scripts/test.sh -R tensor       extra arguments go to ctest (here: only tests matching "tensor")
#
# Exits with CTest's status; the last line counts the tests that passed, failed and were
# skipped (CTest's own summary counts a skipped test as passed). Works from any directory,
# non-interactively (CI runs it through .ci/run). GUI tests run on Qt's offscreen platform
# unless QT_QPA_PLATFORM says otherwise. FLOWBENCH_JOBS=N limits parallel compile jobs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi

bash scripts/deps.sh >&2 || fb_die "installing dependencies failed (see above)"
fb_build

export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
fb_say "== test: ctest --test-dir $FB_BUILD_DIR --output-on-failure -j2 $*"
set +e
ctest --test-dir "$FB_BUILD_DIR" --output-on-failure -j2 "$@" 2>&1 | tee "$FB_BUILD_DIR/ctest-last.log"
status=${PIPESTATUS[0]}
set -e
fb_ctest_counts tests "$FB_BUILD_DIR/ctest-last.log"
exit "$status"
