#!/usr/bin/env bash
# Installs the Debian 12 packages Flowbench needs, and only the ones that are missing.
#
#   scripts/deps.sh            build tools and libraries + the Fashion-MNIST data set
#   scripts/deps.sh --bench    ... plus PyTorch and NumPy for bench/cpu_vs_peer.py's peer
#   scripts/deps.sh --package  ... plus what scripts/package.sh needs to make and check a .deb
#   scripts/deps.sh --fuzz     ... plus Clang with libFuzzer for scripts/fuzz.sh
#   scripts/deps.sh --check    install nothing; list what is missing (exit 1 if anything is)
#
# Safe to run again and again: a package counts as present when dpkg-query reports
# "install ok installed", and apt-get runs only when something is missing. Non-interactive
# (DEBIAN_FRONTEND=noninteractive), so it works in CI with no stdin. Needs root, or sudo.
# The last line on stdout says what was installed, or that everything was present.
set -euo pipefail

# qt6-qpa-plugins: Qt's GLX/EGL integrations and input contexts for the window (the xcb and
# offscreen platforms themselves come with libqt6gui6); fonts-dejavu-core gives the window (and
# its offscreen screenshots) a font on machines that have none; ocl-icd-opencl-dev: oneDNN's
# CMake package looks for OpenCL, whose development files libdnnl-dev only recommends;
# libonnx-dev and libprotobuf-dev: ONNX export (optional at configure time, like CUDA);
# libopenmpi-dev and openmpi-bin: data-parallel training under mpirun (optional too);
# libpulse-dev: `flowbench-cli listen --mic` (PulseAudio's simple API, loaded when used);
# libsox-dev and libespeak-ng-dev: flowbench-speak, which makes the spoken-digits recordings;
# ccache: rebuilds compile only what changed, and the package's build reuses the README's.
BUILD_PKGS=(build-essential ccache cmake ninja-build pkg-config qt6-base-dev qt6-qpa-plugins
            libqcustomplot-dev fonts-dejavu-core libdnnl-dev nlohmann-json3-dev zlib1g-dev
            libopencv-dev libjpeg-dev libsndfile1-dev libsamplerate0-dev qt6-multimedia-dev libpulse-dev
            libsox-dev libespeak-ng-dev
            ocl-icd-opencl-dev libonnx-dev libprotobuf-dev libssl-dev libopenmpi-dev openmpi-bin)
# The spoken-digits data set's makers, as scripts/make_spoken_digits.sh lists them (--packages):
# espeak-ng, flite, festival with three English voices and twelve of other languages (real
# people's voices saying English with their accents; festvox-ru, 178 MB, is the largest), and sox.
# pulseaudio and pulseaudio-utils: the virtual microphone test_spoken_digits listens through (a
# server of the test's own with a null sink, fed by paplay).
spoken_digits_pkgs=$(bash "$(dirname "${BASH_SOURCE[0]}")/make_spoken_digits.sh" --packages)
read -ra spoken_digits_pkgs <<<"$spoken_digits_pkgs"
DATA_PKGS=(dataset-fashion-mnist "${spoken_digits_pkgs[@]}" pulseaudio pulseaudio-utils)
BENCH_PKGS=(python3-torch python3-numpy python3-torchvision python3-pil)
# help2man writes the man pages from the programs' --help; CPack's DEB generator needs `file`
# (dpkg-shlibdeps comes with build-essential's dpkg-dev); the rest check the package.
PACKAGE_PKGS=(help2man file lintian desktop-file-utils appstream)
# libFuzzer comes with Clang's run-time libraries; OpenMP for oneDNN's users compiled by Clang.
FUZZ_PKGS=(clang libclang-rt-14-dev libomp-dev)

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }

want_bench=0
want_package=0
want_fuzz=0
check_only=0
for arg in "$@"; do
    case "$arg" in
        --bench) want_bench=1 ;;
        --package) want_package=1 ;;
        --fuzz) want_fuzz=1 ;;
        --check) check_only=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "deps: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

groups="build data"
wanted=("${BUILD_PKGS[@]}" "${DATA_PKGS[@]}")
if (( want_bench )); then
    groups+=" bench"
    wanted+=("${BENCH_PKGS[@]}")
fi
if (( want_package )); then
    groups+=" package"
    wanted+=("${PACKAGE_PKGS[@]}")
fi
if (( want_fuzz )); then
    groups+=" fuzz"
    wanted+=("${FUZZ_PKGS[@]}")
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: dpkg-query not found: this script supports Debian 12 only." >&2
    echo "deps: install these packages (or their equivalents) by hand: ${wanted[*]}" >&2
    exit 1
fi

is_installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${wanted[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if (( ${#missing[@]} == 0 )); then
    echo "deps: all ${#wanted[@]} packages present ($groups)"
    exit 0
fi

if (( check_only )); then
    echo "deps: missing ${#missing[@]} package(s): ${missing[*]}"
    exit 1
fi

# Root runs apt-get directly; otherwise sudo (non-interactive -n when there is no terminal,
# so CI fails with a message instead of waiting for a password nobody will type).
as_root=()
if (( EUID != 0 )); then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "deps: missing packages: ${missing[*]}" >&2
        echo "deps: not running as root and sudo is not available; as root, run:" >&2
        echo "      apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
    if [[ -t 0 ]]; then as_root=(sudo); else as_root=(sudo -n); fi
fi
# Retries: a dropped connection to the mirror should not fail a set-up (or a CI run).
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=5)

echo "deps: installing ${missing[*]}" >&2
# apt's chatter goes to stderr so that stdout carries only the one summary line.
if ! "${apt[@]}" update -q >&2; then
    echo "deps: 'apt-get update' failed (network, sources.list, or permissions?)" >&2
    exit 1
fi
if ! "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" >&2; then
    echo "deps: 'apt-get install' failed for: ${missing[*]}" >&2
    exit 1
fi

still=()
for p in "${missing[@]}"; do
    is_installed "$p" || still+=("$p")
done
if (( ${#still[@]} )); then
    echo "deps: apt-get finished but these are still not installed: ${still[*]}" >&2
    exit 1
fi
echo "deps: installed ${#missing[@]} package(s): ${missing[*]} ($groups now complete)"
