# shellcheck shell=bash
# Shared helpers for scripts/*.sh. Source it; do not run it.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   fb_cd_root     # cd to the repository root, wherever the caller was started from
#   fb_build       # configure (first time only) and build into build/
#   fb_instrumented_build DIR FLAGS TARGETS... -- CMAKE_ARGS...   (sanitize.sh, fuzz.sh)

# The repository root: the parent of the folder holding this file.
FB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FB_BUILD_DIR="build"

fb_say() { printf '%s\n' "$*" >&2; }
fb_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

fb_cd_root() { cd "$FB_ROOT" || fb_die "cannot cd to $FB_ROOT"; }

# Prints "LABEL: N passed, N failed, N skipped" from a ctest log. CTest counts a skipped test (the
# GPU tests without a GPU) among the passed ones in its "100% tests passed"; this counts it apart,
# so the line says how much really ran. Prints nothing when the log has no summary.
fb_ctest_counts() {
    local label=$1 log=$2 total failed skipped
    total=$(sed -n 's/.*tests passed, [0-9]* tests\{0,1\} failed out of \([0-9]*\).*/\1/p' "$log" | tail -n 1)
    failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of.*/\1/p' "$log" | tail -n 1)
    skipped=$(grep -c '(Skipped)$' "$log" || true)
    if [[ -n "$total" && -n "$failed" ]]; then
        echo "$label: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
    fi
}

# Configure with the contract's command line when build/ has no Ninja build yet; afterwards
# `cmake --build` re-runs CMake by itself whenever a CMakeLists.txt changed. An existing
# configuration (say a Debug build a developer chose) is left as it is.
# FLOWBENCH_JOBS=N limits parallel compile jobs (each C++ job can take a GB of memory).
fb_build() {
    fb_cd_root
    command -v cmake >/dev/null || fb_die "cmake not found: run scripts/deps.sh first"
    command -v ninja >/dev/null || fb_die "ninja not found: run scripts/deps.sh first"
    if [[ ! -f "$FB_BUILD_DIR/build.ninja" ]]; then
        if [[ -f "$FB_BUILD_DIR/CMakeCache.txt" ]] &&
            ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$FB_BUILD_DIR/CMakeCache.txt"; then
            fb_die "$FB_BUILD_DIR/ was configured with another generator; remove it (rm -rf $FB_BUILD_DIR) and run again"
        fi
        fb_say "== configure: cmake -S . -B $FB_BUILD_DIR -G Ninja -DCMAKE_BUILD_TYPE=Release"
        cmake -S . -B "$FB_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ||
            fb_die "CMake configure failed (see above)"
    fi
    local jobs=()
    [[ -n "${FLOWBENCH_JOBS:-}" ]] && jobs=(--parallel "$FLOWBENCH_JOBS")
    fb_say "== build: cmake --build $FB_BUILD_DIR ${jobs[*]}"
    cmake --build "$FB_BUILD_DIR" "${jobs[@]}" || fb_die "build failed (see above)"
}

# An instrumented build of its own (sanitizers, fuzzing): configured the first time with the
# compiler and link flags given and no GPU backend (the sanitizers do not follow CUDA's device
# memory), then built: every target, or the ones named before `--`. After `--`, more CMake
# arguments for the first configure (the compiler, the build type, options).
fb_instrumented_build() {
    local dir=$1 flags=$2 link=$3 targets=() args=()
    shift 3
    while (( $# )) && [[ $1 != -- ]]; do targets+=("$1"); shift; done
    (( $# )) && shift
    args=("$@")
    if [[ ! -f "$dir/build.ninja" ]]; then
        fb_say "== configure: $dir with $flags"
        cmake -S . -B "$dir" -G Ninja -DFLOWBENCH_WITH_CUDA=OFF -DFLOWBENCH_HARDENING=OFF "${args[@]}" \
            -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
            -DCMAKE_EXE_LINKER_FLAGS="$link" ||
            fb_die "CMake configure failed (see above)"
    fi
    local jobs=() target_args=()
    [[ -n "${FLOWBENCH_JOBS:-}" ]] && jobs=(--parallel "$FLOWBENCH_JOBS")
    (( ${#targets[@]} )) && target_args=(--target "${targets[@]}")
    fb_say "== build: cmake --build $dir ${jobs[*]} ${target_args[*]}"
    cmake --build "$dir" "${jobs[@]}" "${target_args[@]}" || fb_die "build failed (see above)"
}
