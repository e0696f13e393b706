#!/usr/bin/env bash
# Fuzzing with libFuzzer (fuzz/README.md): builds the targets of fuzz/ with Clang under
# AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/, then runs each one from its seed
# corpus (fuzz/corpus/TARGET) and its regression inputs (fuzz/regressions/TARGET).
#
#   scripts/fuzz.sh                         every target for 60 s, two at a time
#   scripts/fuzz.sh --seconds 600 --jobs 4  longer, more at once
#   scripts/fuzz.sh --copies 2 --jobs 14    two processes per target sharing its corpus
#   scripts/fuzz.sh --runs 2000000 fuzz_idx one target until it has run this many inputs
#   scripts/fuzz.sh --regress               only the seeds and regression inputs, once each
#   scripts/fuzz.sh --no-build --bin DIR    fuzzers built elsewhere (the device machine:
#                                           scripts/device_bundle.sh --fuzz)
#
# New inputs that reach new code go to build-fuzz/corpus/TARGET (kept between runs), crashers to
# build-fuzz/crashes/. Prints a table of executions per target; the last line is
# `fuzz: N executions in total, N failing targets` and the exit status is 1 when any failed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

seconds=60
runs=0
jobs=2
copies=1
regress=0
build=1
bin=
targets=()
while (( $# )); do
    case "$1" in
    --seconds) seconds=$2; shift ;;
    --runs) runs=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --copies) copies=$2; shift ;;
    --regress) regress=1 ;;
    --no-build) build=0 ;;
    --bin) bin=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    fuzz_*) targets+=("$1") ;;
    *) fb_die "unknown argument '$1' (try --help)" ;;
    esac
    shift
done
all=(fuzz_pipeline fuzz_idx fuzz_model fuzz_image fuzz_audio fuzz_event_log fuzz_command)
(( ${#targets[@]} )) || targets=("${all[@]}")

dir=${FLOWBENCH_FUZZ_DIR:-build-fuzz}
bin=${bin:-$dir/bin}
if (( build )); then
    bash scripts/deps.sh --fuzz >&2 || fb_die "installing dependencies failed (see above)"
    flags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined"
    flags+=" -fno-sanitize-recover=undefined"
    CC=clang CXX=clang++ fb_instrumented_build "$dir" "$flags" "-fsanitize=address,undefined" \
        "${targets[@]}" -- -DCMAKE_BUILD_TYPE=None -DFLOWBENCH_BUILD_TESTS=OFF \
        -DFLOWBENCH_BUILD_FUZZERS=ON
fi

# Leaks are not checked: Qt and OpenCV keep caches until exit on purpose. libFuzzer's own limits
# stay: an input that makes a reader take more than 2 GB, or 10 s, is a finding.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export QT_QPA_PLATFORM=offscreen
mkdir -p "$dir/crashes" "$dir/logs"

run_one() { # target copy -> its log; libFuzzer's exit status
    local t=$1 k=$2 args=()
    local work="$dir/corpus/$t"
    mkdir -p "$work"
    for d in "fuzz/corpus/$t" "fuzz/regressions/$t"; do [[ -d $d ]] && args+=("$d"); done
    # The example pipelines are seeds too.
    [[ $t == fuzz_pipeline ]] && args+=(resources/examples)
    [[ -f "fuzz/dict/$t.dict" ]] && args+=("-dict=fuzz/dict/$t.dict")
    if (( regress )); then
        # Every seed and regression input once (libFuzzer runs the files it is given).
        local files=()
        for d in "fuzz/corpus/$t" "fuzz/regressions/$t"; do
            [[ -d $d ]] && while IFS= read -r f; do files+=("$f"); done < <(find "$d" -type f)
        done
        "$bin/$t" -runs=0 "${files[@]}" >"$dir/logs/$t.$k.log" 2>&1
        return
    fi
    local limit=(-max_total_time="$seconds")
    (( runs > 0 )) && limit=(-runs="$runs")
    "$bin/$t" "$work" "${args[@]}" "${limit[@]}" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$dir/crashes/$t-" >"$dir/logs/$t.$k.log" 2>&1
}

fb_say "== fuzz: ${targets[*]}, $( ((regress)) && echo "seeds and regressions once" ||
    { ((runs > 0)) && echo "$runs inputs each" || echo "${seconds} s each"; }), $jobs at a time"
(( regress )) && copies=1
rm -f "$dir"/logs/*.log
pids=()
declare -A status
for t in "${targets[@]}"; do
    for ((k = 1; k <= copies; k++)); do
        run_one "$t" "$k" & pids+=("$!:$t.$k")
        if (( ${#pids[@]} >= jobs )); then
            p=${pids[0]}; pids=("${pids[@]:1}")
            wait "${p%%:*}" && status[${p#*:}]=0 || status[${p#*:}]=$?
        fi
    done
done
for p in "${pids[@]}"; do wait "${p%%:*}" && status[${p#*:}]=0 || status[${p#*:}]=$?; done

total=0
failed=0
printf '%-16s %12s %10s %8s  %s\n' target executions "exec/s" corpus result
for t in "${targets[@]}"; do
    execs=0 rate=0 bad=()
    for ((k = 1; k <= copies; k++)); do
        log="$dir/logs/$t.$k.log"
        if (( regress )); then
            n=$(grep -c "^Executed " "$log" || true)
        else
            n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
            r=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
            rate=$((rate + ${r:-0}))
        fi
        execs=$((execs + ${n:-0}))
        if (( ${status[$t.$k]} != 0 )); then
            bad+=("exit ${status[$t.$k]}: $log")
            grep -m3 "ERROR: \|fuzz: broken promise\|SUMMARY: " "$log" | sed 's/^/    /' >&2 || true
        fi
    done
    corpus=$(find "$dir/corpus/$t" -type f 2>/dev/null | wc -l)
    result=ok
    if (( ${#bad[@]} )); then
        result="FAILED (${bad[*]})"
        failed=$((failed + 1))
    fi
    (( regress )) && rate=-
    printf '%-16s %12s %10s %8s  %s\n' "$t" "$execs" "$rate" "$corpus" "$result"
    total=$((total + execs))
done
echo "fuzz: $total executions in total, $failed failing targets"
(( failed == 0 ))
