#!/usr/bin/env bash
# Builds the Debian package: a CPU-only Release build in build-deb/, then cpack.
#
#   scripts/package.sh            -> build-deb/flowbench_<version>_<arch>.deb
#   scripts/package.sh --check    ... and check it: lintian (no errors), the desktop file and
#                                 the AppStream metainfo as installed by the package
#
# The last line on stdout is the path of the .deb; everything else goes to stderr. Works from
# any folder. FLOWBENCH_JOBS=N limits parallel compile jobs, as for scripts/start.sh.
#
# The package is built without CUDA whatever the machine has: a GPU build links the CUDA
# toolkit's libraries, which no Debian package provides (packaging/CPackConfig.cmake refuses
# to package such a build). build-deb/ is separate from build/ so that a developer's GPU build
# is never reconfigured by this script.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEB_BUILD_DIR="build-deb"

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }

check=0
for arg in "$@"; do
    case "$arg" in
        --check) check=1 ;;
        -h|--help) usage; exit 0 ;;
        *) fb_die "unknown option '$arg' (try --help)" ;;
    esac
done

fb_cd_root
# Installs what is missing, as start.sh and test.sh do, plus the packaging tools.
bash scripts/deps.sh --package >&2 || fb_die "installing dependencies failed (see above)"
# help2man writes the man pages; CPack's DEB generator needs dpkg-shlibdeps (dpkg-dev) for
# Depends and `file` to tell which installed files are ELF binaries.
for tool in cmake ninja cpack help2man dpkg-shlibdeps file; do
    command -v "$tool" >/dev/null || fb_die "$tool not found: run scripts/deps.sh first"
done
if (( check )); then
    for tool in lintian desktop-file-validate appstreamcli; do
        command -v "$tool" >/dev/null || fb_die "$tool not found (needed by --check)"
    done
fi
if [[ -f "$DEB_BUILD_DIR/CMakeCache.txt" ]] &&
    ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$DEB_BUILD_DIR/CMakeCache.txt"; then
    fb_die "$DEB_BUILD_DIR/ was configured with another generator; remove it (rm -rf $DEB_BUILD_DIR) and run again"
fi

# Configured every time (quick when nothing changed), so that the options below hold even if
# someone changed them in build-deb/ by hand.
config=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOWBENCH_WITH_CUDA=OFF -DFLOWBENCH_BUILD_TESTS=OFF
        -DCMAKE_CXX_FLAGS= -DCMAKE_EXE_LINKER_FLAGS=)
# Debian's hardening flags come from CMakeLists.txt (FLOWBENCH_HARDENING, on in every build), so
# this build compiles the same objects as the README's build/ and ccache hands them over.
fb_say "== configure: cmake -S . -B $DEB_BUILD_DIR ${config[*]}"
cmake -S . -B "$DEB_BUILD_DIR" "${config[@]}" >&2 || fb_die "CMake configure failed (see above)"

jobs=()
[[ -n "${FLOWBENCH_JOBS:-}" ]] && jobs=(--parallel "$FLOWBENCH_JOBS")
fb_say "== build: cmake --build $DEB_BUILD_DIR ${jobs[*]}"
cmake --build "$DEB_BUILD_DIR" "${jobs[@]}" >&2 || fb_die "build failed (see above)"

fb_say "== package: cpack -G DEB (in $DEB_BUILD_DIR)"
log="$DEB_BUILD_DIR/cpack.log"
if ! (cd "$DEB_BUILD_DIR" && cpack -G DEB) >"$log" 2>&1; then
    cat "$log" >&2
    fb_die "cpack failed (see above; also $log)"
fi
cat "$log" >&2
# cpack says "CPack: - package: /abs/path/flowbench_0.1.0_amd64.deb generated."
deb="$(sed -n 's/^CPack: - package: \(.*\.deb\) generated\.$/\1/p' "$log" | tail -n 1)"
[[ -n "$deb" && -f "$deb" ]] || fb_die "cpack did not report a .deb (see $log)"

if (( check )); then
    fb_say "== check: lintian --fail-on error"
    lintian --fail-on error --display-info "$deb" >&2 || fb_die "lintian found errors in $deb"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    dpkg-deb -x "$deb" "$tmp"
    fb_say "== check: desktop-file-validate"
    desktop-file-validate "$tmp/usr/share/applications/io.flowbench.Flowbench.desktop" >&2 ||
        fb_die "the desktop file does not validate"
    fb_say "== check: appstreamcli validate --no-net"
    appstreamcli validate --no-net "$tmp/usr/share/metainfo/io.flowbench.Flowbench.metainfo.xml" >&2 ||
        fb_die "the AppStream metainfo does not validate"
fi

fb_say "== package: $deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
