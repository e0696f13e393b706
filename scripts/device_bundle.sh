#!/usr/bin/env bash
# Packs what the GPU machine of the `device` tool needs to run Flowbench's GPU checks, into one
# file under the git-ignored .device/ folder (DESIGN.md: that machine has CMake, nvcc, PyTorch
# with cuDNN and cuBLAS, but none of our Debian libraries, and a call carries at most 64 MiB).
#
#   scripts/device_bundle.sh [BUILD_DIR]     # default: build (configured with CUDA)
#
# The bundle holds flowbench-cli, the GPU test executables, every shared library they load
# except glibc's and the CUDA libraries (those come from the device: /usr/local/cuda or
# PyTorch's own copies), the example pipelines, the benchmark and the four Fashion-MNIST files.
# On the device: `run` with carry [".device"] and the command `bash scripts/device_run.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
bins=(flowbench-cli test_backend_ops test_cross_device)

for b in "${bins[@]}"; do
    [[ -x "$build/bin/$b" ]] || { echo "device_bundle: $build/bin/$b is missing; build first" >&2; exit 2; }
done
grep -q "FLOWBENCH_HAVE_CUDA" "$build/build.ninja" "$build/Makefile" 2>/dev/null ||
    { echo "device_bundle: $build was configured without the GPU backend" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bundle/bin" "$stage/bundle/lib" "$stage/bundle/data"
for b in "${bins[@]}"; do cp "$build/bin/$b" "$stage/bundle/bin/"; done
# Every library the binaries load, but not glibc's (the device has its own, and they must match
# its loader) and not CUDA's (taken from the device, matching its driver).
for b in "${bins[@]}"; do ldd "$build/bin/$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|/libcuda|/libcudart|/libcublas|/libcudnn|/libnvidia' |
    while read -r lib; do cp -L "$lib" "$stage/bundle/lib/"; done
# Qt finds no platform plugin and needs none: the GPU tests are core tests.
cp "$data"/*-ubyte.gz "$stage/bundle/data/"
mkdir -p .device
tar -C "$stage" -cJf .device/bundle.tar.xz bundle
size=$(stat -c %s .device/bundle.tar.xz)
echo "device_bundle: .device/bundle.tar.xz, $((size >> 20)) MiB (the carry limit is 64 MiB)"
(( size < 60 * 1024 * 1024 )) || { echo "device_bundle: too large to carry" >&2; exit 1; }
