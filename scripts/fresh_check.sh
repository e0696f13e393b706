#!/usr/bin/env bash
# The fresh-machine check: runs the README's set-up commands in a Debian 12 made just now, so
# that a missing install step fails here instead of on a new user's machine.
#
#   scripts/fresh_check.sh               the README's two commands in a fresh Debian 12:
#                                        scripts/start.sh --headless --set train.epochs=1
#                                        (must print an ok summary), then scripts/test.sh,
#                                        then scripts/fuzz.sh for 30 s per fuzzer
#   scripts/fresh_check.sh --tests       only scripts/test.sh and scripts/fuzz.sh
#   scripts/fresh_check.sh --package     build the .deb there (scripts/package.sh), install it
#                                        into a second fresh Debian 12 with apt, train the
#                                        installed example and screenshot the window (Xvfb)
#   scripts/fresh_check.sh --all         the README commands, then the package check (CI runs this)
#   --uncommitted    take tracked files as they are in the work tree (default: HEAD, as
#                    `git archive` gives it); untracked files never go in
#   --keep           leave the fresh roots in place afterwards (for a look inside)
#   --out DIR        where logs, the .deb and the screenshot go (default: fresh-check/)
#   --can-run        make nothing; exit 0 if this machine can make a fresh root, else say why
#
# How: `debootstrap --variant=minbase bookworm` makes the base system (Debian's minimal one: no
# compiler, no Qt, no Python), the committed tree goes in with `git archive`, and the commands
# run there under chroot with their own /proc, /dev and /tmp. Nothing of the host leaks in: no
# host packages, no /usr/local, no environment beyond PATH, HOME, TERM and CI. One deliberate
# exception: a CUDA toolkit at the host's /usr/local/cuda is bind-mounted read-only, so that
# the GPU backend is compiled there too (it is not Debian's, and no apt command installs it).
#
# Cached between runs, outside the checkout, without weakening the check
# (FLOWBENCH_FRESH_CACHE, default /var/cache/flowbench-fresh): the pristine base system as a
# tarball (remade after 7 days), and apt's downloaded .deb files (bind-mounted as the fresh
# machine's /var/cache/apt/archives; apt still resolves and installs every package there).
# apt retries on network errors. And ccache's cache (bind-mounted as the fresh machine's
# ~/.cache/ccache; scripts/deps.sh installs ccache there like any other package): the builds
# compile only what changed since the last run, and the package's build takes the README
# build's objects. This hides no missing package: ccache reuses an object only when the
# compiler, its flags and the preprocessed source with every header it includes hash the same,
# so a missing header still fails the compile, a missing library the link and a missing CMake
# package the configure.
# Needs root, debootstrap (installed here when missing) and
# mount. Exit 0 when every step passed; the last lines say where the time went.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fb_cd_root

mode=readme
uncommitted=0
keep=0
out_dir="$FB_ROOT/fresh-check"
while (( $# )); do
    case "$1" in
        --tests) mode=tests ;;
        --package) mode=package ;;
        --all) mode=all ;;
        --uncommitted) uncommitted=1 ;;
        --keep) keep=1 ;;
        --can-run) mode=can-run ;;
        --out) out_dir="$(realpath -m "$2")"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) fb_die "fresh_check: unknown option '$1' (try --help)" ;;
    esac
    shift
done

# Whether this machine can make a fresh root: root, debootstrap (installed when missing), and
# mounts allowed. Prints the reason when it cannot.
can_run() {
    (( EUID == 0 )) || { echo "not root"; return 1; }
    if ! command -v debootstrap >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            debootstrap >/dev/null 2>&1 || { echo "debootstrap is missing and could not be installed"; return 1; }
    fi
    command -v chroot >/dev/null || { echo "chroot is missing"; return 1; }
    local probe; probe=$(mktemp -d)
    if ! mount -t tmpfs tmpfs "$probe" 2>/dev/null; then
        rmdir "$probe"; echo "mounting is not allowed here"; return 1
    fi
    umount "$probe"; rmdir "$probe"
}
if [[ "$mode" == can-run ]]; then
    why=$(can_run) && exit 0
    echo "$why"; exit 1
fi

cache="${FLOWBENCH_FRESH_CACHE:-/var/cache/flowbench-fresh}"
suite=bookworm
base_tar="$cache/base-$suite-minbase.tar"
apt_cache="$cache/apt-archives"
ccache_dir="$cache/ccache"
work="$(mktemp -d "${TMPDIR:-/var/tmp}/flowbench-fresh.XXXXXX")"
mkdir -p "$out_dir" "$apt_cache/partial" "$ccache_dir"
# Room for the README's build, the package's and the fuzzers' (about 1 GB together), and for a
# few runs' worth of changes before ccache evicts the oldest.
[[ -f "$ccache_dir/ccache.conf" ]] || echo "max_size = 8G" >"$ccache_dir/ccache.conf"
log="$out_dir/fresh-check.log"
: >"$log"

# ---- timing: one row per phase, printed at the end ----------------------------------------
phases=()
phase_start=0
phase_name=""
begin() { phase_name="$1"; phase_start=$(date +%s); fb_say "== fresh: $1"; }
end_phase() {
    local now; now=$(date +%s)
    phases+=("$(printf '%-34s %6d s%s' "$phase_name" $((now - phase_start)) "$(ccache_note)")")
}

# What ccache reused since it was last zeroed, as "  (ccache: H of N compiles reused)", then
# zeroed for the next phase; nothing where nothing was compiled or ccache is not installed yet.
ccache_note() {
    local root=${roots[0]:-} stats hits misses
    [[ -n "$root" && -x "$root/usr/bin/ccache" ]] || return 0
    stats=$(in_root "$root" 'ccache --print-stats && ccache --zero-stats >/dev/null' 2>/dev/null) || return 0
    hits=$(awk '$1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { n += $2 } END { print n + 0 }' <<<"$stats")
    misses=$(awk '$1 == "cache_miss" { n += $2 } END { print n + 0 }' <<<"$stats")
    (( hits + misses > 0 )) && printf '  (ccache: %d of %d compiles reused)' "$hits" $((hits + misses))
    return 0
}
# To stderr and to the end of the log, which the output folder keeps when CI passes and its
# printout is gone: where a slow run spent its time can be read afterwards.
report_times() {
    (( ${#phases[@]} )) || return 0
    {
        echo ""
        echo "== fresh: where the time went"
        local p; for p in "${phases[@]}"; do echo "   $p"; done
    } | tee -a "$log" >&2
}

# ---- roots and their mounts ----------------------------------------------------------------
roots=()
test_counts=""
unmount_all() {
    local root="$1" m
    # Deepest first; lazily, so a process that still holds a file cannot keep a mount alive.
    while read -r m; do umount -l "$m" 2>/dev/null || true; done < <(
        awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r)
}
cleanup() {
    local status=$?
    local r
    for r in "${roots[@]}"; do unmount_all "$r"; done
    if (( keep )); then
        fb_say "fresh: kept $work"
    else
        # --one-file-system: never follow a mount that somehow survived into the host's files.
        for r in "${roots[@]}"; do
            if awk -v r="$r" 'index($2, r) == 1 { f = 1 } END { exit !f }' /proc/mounts; then
                fb_say "fresh: $r still has mounts; left in place"
            else
                rm -rf --one-file-system "$r"
            fi
        done
        rmdir "$work" 2>/dev/null || true
    fi
    report_times
    # CTest's counts, as the last line (the plain form CI's reader takes in any language).
    [[ -n "$test_counts" ]] && printf 'tests: %s\n' "$test_counts"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    fb_say "fresh: FAILED: $*"
    fb_say "fresh: the last lines of $log:"
    tail -n 60 "$log" >&2 || true
    exit 1
}

preflight() {
    local why
    why=$(can_run) || fb_die "fresh_check cannot make a fresh Debian 12 here: $why"
}

# The mirror the host's apt uses (a site may have its own); debootstrap's default otherwise.
host_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
        [[ -f "$f" ]] || continue
        uri=$(awk '
            /^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }
            /^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) {
                if ($i !~ /security/) { print $i; exit } else break } }' "$f")
        [[ -n "$uri" ]] && { printf '%s\n' "$uri"; return; }
    done
}

# The pristine base system, made once a week and kept as a tarball.
make_base() {
    local fresh=1
    if [[ -f "$base_tar" ]] && [[ -n "$(find "$base_tar" -mtime -7 2>/dev/null)" ]]; then fresh=0; fi
    if (( fresh )); then
        local tmp="$work/base" mirror
        mirror=$(host_mirror || true)
        fb_say "fresh: debootstrap --variant=minbase $suite ${mirror:-(default mirror)}"
        local tries=0
        until debootstrap --variant=minbase --cache-dir="$apt_cache" "$suite" "$tmp" \
            ${mirror:+"$mirror"} >>"$log" 2>&1; do
            tries=$((tries + 1))
            (( tries < 3 )) || fail "debootstrap failed 3 times (network?)"
            fb_say "fresh: debootstrap failed; trying again in 10 s"
            rm -rf --one-file-system "$tmp"; sleep 10
        done
        # Sources as a new installation has them: the release, its updates and security.
        local m="${mirror:-http://deb.debian.org/debian}"
        {
            echo "deb $m $suite main"
            echo "deb $m $suite-updates main"
            echo "deb ${m%/debian}/debian-security $suite-security main"
        } >"$tmp/etc/apt/sources.list"
        tar -C "$tmp" -cf "$base_tar.tmp" . && mv "$base_tar.tmp" "$base_tar"
        rm -rf --one-file-system "$tmp"
    fi
}

# A new root from the base tarball, with its own /proc, /sys, /dev, /tmp, the apt cache and,
# where the host has one, the CUDA toolkit (read-only).
new_root() {
    local root="$1"
    mkdir -p "$root"
    roots+=("$root")
    tar -C "$root" -xf "$base_tar"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    # apt: retry on network errors; keep the downloaded .deb files for the next run.
    printf 'Acquire::Retries "5";\nAPT::Keep-Downloaded-Packages "true";\n' \
        >"$root/etc/apt/apt.conf.d/80flowbench-fresh"
    # dpkg without an fsync per file: the root is thrown away after the check, so a crash
    # cannot leave a half-written system anyone uses, and unpacking ~550 packages is minutes faster.
    echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/80flowbench-fresh"
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    mount --bind /dev "$root/dev"
    mount --bind /dev/pts "$root/dev/pts" 2>/dev/null || true
    mount -t tmpfs tmpfs "$root/dev/shm"
    mount -t tmpfs -o size=8g tmpfs "$root/tmp"
    mkdir -p "$root/var/cache/apt/archives"
    mount --bind "$apt_cache" "$root/var/cache/apt/archives"
    mkdir -p "$root/root/.cache/ccache"
    mount --bind "$ccache_dir" "$root/root/.cache/ccache"
    if [[ -d /usr/local/cuda ]]; then
        local cuda; cuda="$(realpath /usr/local/cuda)"
        mkdir -p "$root/usr/local/cuda"
        mount --bind "$cuda" "$root/usr/local/cuda"
        mount -o remount,bind,ro "$root/usr/local/cuda"
    fi
}

# Runs a command inside a root with a clean environment, as root, from /root/flowbench.
in_root() {
    local root="$1"; shift
    local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
                TERM=dumb DEBIAN_FRONTEND=noninteractive)
    [[ -n "${CI:-}" ]] && envs+=("CI=$CI")
    [[ -n "${FLOWBENCH_JOBS:-}" ]] && envs+=("FLOWBENCH_JOBS=$FLOWBENCH_JOBS")
    env -i "${envs[@]}" chroot "$root" /bin/bash -c "cd /root/flowbench 2>/dev/null || cd /root; $*"
}

put_tree() {
    local root="$1" rev=HEAD
    if (( uncommitted )); then rev=$(git stash create 2>/dev/null || true); rev=${rev:-HEAD}; fi
    mkdir -p "$root/root/flowbench"
    git -C "$FB_ROOT" archive --format=tar "$rev" | tar -C "$root/root/flowbench" -xf -
    fb_say "fresh: tree $(git -C "$FB_ROOT" rev-parse --short HEAD)$( ((uncommitted)) && echo ' + uncommitted changes')"
}

# Runs the README's first command; its own phases (packages, build, data, training) are timed
# from the lines it prints.
run_start() {
    local root="$1" t0 line now
    t0=$(date +%s)
    local marks=() last=$t0 label="start.sh: packages (apt)"
    local summary=""
    set +e
    while IFS= read -r line; do
        printf '%s\n' "$line" >>"$log"
        now=$(date +%s)
        case "$line" in
            "== configure"*|"== build"*)
                # ccache is installed by now: count from here (a failed run may have left counts).
                [[ "$label" == *packages* ]] && { marks+=("$label|$((now - last))"); last=$now; label="start.sh: build"
                    ccache_note >/dev/null; } ;;
            "spoken digits:"*)
                [[ "$label" == *build* ]] && { marks+=("$label|$((now - last))|$(ccache_note)"); last=$now; label="start.sh: spoken-digits data"; } ;;
            "== headless run"*)
                marks+=("$label|$((now - last))"); last=$now; label="start.sh: train 1 epoch" ;;
            "{"*) summary="$line" ;;
        esac
    done < <(in_root "$root" 'bash scripts/start.sh --headless --set train.epochs=1 2>&1; echo "start.sh exit $?"')
    set -e
    marks+=("$label|$(($(date +%s) - last))")
    local m f
    for m in "${marks[@]}"; do
        IFS='|' read -r -a f <<<"$m"
        phases+=("$(printf '%-34s %6d s%s' "${f[0]}" "${f[1]}" "${f[2]:-}")")
    done
    grep -q '^start.sh exit 0$' "$log" || fail "scripts/start.sh --headless --set train.epochs=1 failed"
    [[ "$summary" == *'"status":"ok"'* ]] || fail "start.sh printed no ok summary (last: ${summary:-none})"
    fb_say "fresh: start.sh trained one epoch: $summary"
}

# Runs the README's second command; CTest's output is shown as it comes.
run_tests() {
    local root="$1" status=0
    begin "test.sh (build + every test)"
    set +e
    # test_spoken_digits reads the recordings start.sh made (or makes them there): the same
    # files, made once, saving CI two minutes.
    in_root "$root" 'FLOWBENCH_TEST_SPOKEN_DIGITS=$HOME/.local/share/flowbench/spoken_digits bash scripts/test.sh 2>&1' | tee -a "$log" |
        grep --line-buffered -v '^\(Get\|Selecting\|Preparing\|Unpacking\|Setting up\|Processing\)'
    status=${PIPESTATUS[0]}
    set -e
    end_phase
    # scripts/test.sh's last line: "tests: N passed, N failed, N skipped".
    test_counts=$(sed -n 's/^tests: \([0-9]* passed, [0-9]* failed, [0-9]* skipped\)$/\1/p' "$log" | tail -n 1)
    (( status == 0 )) || fail "scripts/test.sh failed (exit $status)"
}

# A short run of every fuzzer (scripts/fuzz.sh: Clang, ASan and UBSan), from the seeds and the
# regression inputs in fuzz/: a reader that crashes on them, or on what a minute of mutation
# finds, fails CI.
run_fuzz() {
    local root="$1" status=0
    begin "fuzz.sh (every fuzzer, ${FLOWBENCH_FUZZ_SECONDS:-30} s each)"
    set +e
    in_root "$root" "bash scripts/fuzz.sh --seconds ${FLOWBENCH_FUZZ_SECONDS:-30} --jobs 2 2>&1" |
        tee -a "$log" | grep --line-buffered '^fuzz\|^target\|^fuzz_\|^    \|^error'
    status=${PIPESTATUS[0]}
    set -e
    end_phase
    if (( status != 0 )); then
        # The inputs and the stack traces outlive the throwaway machine: the finding can be
        # replayed (build-fuzz/bin/TARGET FILE) and kept under fuzz/regressions/.
        mkdir -p "$out_dir/fuzz"
        cp -r "$root/root/flowbench/build-fuzz/crashes" "$root/root/flowbench/build-fuzz/logs" \
            "$out_dir/fuzz/" 2>/dev/null || true
        fail "scripts/fuzz.sh failed (exit $status): a fuzzer found a crash (inputs and logs: $out_dir/fuzz)"
    fi
}

check_package() {
    local root_a="$1" root_b="$work/pkg" deb
    begin "package: build and lint the .deb"
    in_root "$root_a" 'bash scripts/package.sh --check' >>"$log" 2>&1 ||
        fail "scripts/package.sh --check (build, lintian, validators) failed in the fresh machine"
    deb=$(find "$root_a/root/flowbench/build-deb" -maxdepth 1 -name 'flowbench_*.deb' | head -n 1)
    [[ -n "$deb" ]] || fail "scripts/package.sh made no .deb"
    cp "$deb" "$out_dir/"
    end_phase

    begin "package: fresh root + apt install ./$(basename "$deb")"
    new_root "$root_b"
    cp "$deb" "$root_b/root/"
    in_root "$root_b" "apt-get update -q && apt-get install -y -q ./$(basename "$deb")" >>"$log" 2>&1 ||
        fail "apt-get install ./$(basename "$deb") failed in a fresh Debian 12"
    end_phase

    begin "package: train the installed example"
    local summary
    summary=$(in_root "$root_b" 'flowbench-cli run /usr/share/flowbench/examples/fashion_mnist_mlp.json --set train.epochs=1 --out /root/run 2>>/root/run.log | tail -n 1') ||
        { cat "$root_b/root/run.log" >>"$log"; fail "the installed flowbench-cli run failed"; }
    [[ "$summary" == *'"status":"ok"'* ]] || fail "installed run: no ok summary ($summary)"
    fb_say "fresh: installed flowbench-cli trained: $summary"
    end_phase

    begin "package: the window under Xvfb"
    # The test harness's own tools (not the package's dependencies) come in only now.
    in_root "$root_b" 'apt-get install -y -q --no-install-recommends xvfb xauth' >>"$log" 2>&1 ||
        fail "could not install xvfb in the package's fresh root"
    in_root "$root_b" 'xvfb-run -a -s "-screen 0 1600x1000x24" flowbench --run --set train.epochs=1 \
        --screenshot /root/window.png --screenshot-after 12 --quit-when-done --runs-dir /root/gui-runs \
        /usr/share/flowbench/examples/fashion_mnist_mlp.json' >>"$log" 2>&1 ||
        fail "the installed window did not train and quit cleanly under Xvfb"
    [[ -s "$root_b/root/window.png" ]] || fail "the installed window saved no screenshot"
    cp "$root_b/root/window.png" "$out_dir/installed-window.png"
    fb_say "fresh: screenshot of the installed window: $out_dir/installed-window.png"
    end_phase
}

preflight
begin "base system (debootstrap, cached)"
make_base
root="$work/root"
new_root "$root"
put_tree "$root"
end_phase

case "$mode" in
    readme|all)
        run_start "$root"
        run_tests "$root"
        run_fuzz "$root"
        ;;
    tests)
        run_tests "$root"
        run_fuzz "$root"
        ;;
esac
[[ "$mode" == package || "$mode" == all ]] && check_package "$root"
fb_say "fresh: all checks passed (mode $mode); log: $log"
