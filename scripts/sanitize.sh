#!/usr/bin/env bash
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer: a Debug build with
# -fsanitize=address,undefined (GCC's, as Debian 12 ships it) in build-asan/, without the GPU
# backend (the sanitizers do not follow CUDA's device memory), then every test with CTest.
#
#   scripts/sanitize.sh                  build and run every test
#   scripts/sanitize.sh -R test_graph    extra arguments go to ctest
#
# Any error a sanitizer reports fails the test that hit it (halt_on_error, and UBSan's reports
# are made errors). Leak checking is off: Qt and fontconfig keep caches until exit on purpose.
# Exits with CTest's status; the last line is `sanitize: N passed, N failed, N skipped`.
# FLOWBENCH_JOBS=N limits parallel compile jobs (a sanitized C++ job takes more memory).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi

dir=build-asan
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
fb_instrumented_build "$dir" "$flags" "-fsanitize=address,undefined" -- -DCMAKE_BUILD_TYPE=Debug

export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
# allocator_may_return_null: an absurd allocation returns null as in the product (tests ask for
# 64 TiB on purpose) instead of ASan stopping the process.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Sanitized code runs several times slower: Qt Test's 300 s per test function is too short for
# the million-point plot test.
export QTEST_FUNCTION_TIMEOUT=1800000
fb_say "== test: ctest --test-dir $dir --output-on-failure -j2 $*"
set +e
ctest --test-dir "$dir" --output-on-failure -j2 --timeout 1800 "$@" 2>&1 | tee "$dir/ctest-last.log"
status=${PIPESTATUS[0]}
set -e
fb_ctest_counts sanitize "$dir/ctest-last.log"
exit "$status"
