#!/usr/bin/env bash
# Packs what the GPU machine of the `device` tool needs to run Flowbench's GPU checks, into one
# file under the git-ignored .device/ folder (DESIGN.md: that machine has CMake, nvcc, PyTorch
# with cuDNN and cuBLAS, but none of our Debian libraries, and a call carries at most 64 MiB).
#
#   scripts/device_bundle.sh [BUILD_DIR]     # default: build (configured with CUDA)
#   scripts/device_bundle.sh --fuzz          # the fuzzers of build-fuzz/ (scripts/fuzz.sh; only
#                                            # those in FLOWBENCH_FUZZ_TARGETS when set), to
#                                            # run on that machine's 16 cores: fuzz-bundle.tar.xz
#
# The bundle holds flowbench-cli, the GPU test executables, every shared library they load
# except glibc's and the CUDA libraries, NCCL's included (218 MB; those come from the device:
# /usr/local/cuda or PyTorch's own copies), the example pipelines, the benchmark and the four Fashion-MNIST files.
# On the device: `run` with carry [".device"] and the command `bash scripts/device_run.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzz=0
[[ "${1:-}" == --fuzz ]] && { fuzz=1; shift; set -- build-fuzz; }
build=${1:-build}
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
bins=(flowbench-cli test_backend_ops test_cross_device)
bundle_name=bundle
if (( fuzz )); then
    bins=(fuzz_pipeline fuzz_idx fuzz_model fuzz_image fuzz_audio fuzz_event_log fuzz_command)
    [[ -n "${FLOWBENCH_FUZZ_TARGETS:-}" ]] && read -ra bins <<<"$FLOWBENCH_FUZZ_TARGETS"
    bundle_name=fuzz-bundle
fi

for b in "${bins[@]}"; do
    [[ -x "$build/bin/$b" ]] || { echo "device_bundle: $build/bin/$b is missing; build first" >&2; exit 2; }
done
(( fuzz )) || grep -q "FLOWBENCH_HAVE_CUDA" "$build/build.ninja" "$build/Makefile" 2>/dev/null ||
    { echo "device_bundle: $build was configured without the GPU backend" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bundle/bin" "$stage/bundle/lib" "$stage/bundle/data"
for b in "${bins[@]}"; do cp "$build/bin/$b" "$stage/bundle/bin/"; done
# Every library the binaries load, but not glibc's (the device has its own, and they must match
# its loader) and not CUDA's (taken from the device, matching its driver).
#
# OpenCV's image reader links GDAL and GDCM (for geodata and DICOM, which Flowbench never reads),
# and they pull in about 110 MB of libraries: too much to carry. In their place the bundle has
# stubs with the same names that define exactly the functions OpenCV imports from them, each
# one returning 0. Not a trap: OpenCV calls GDAL's registration when it first decodes any image
# (found running fuzz_image on the device, where traps stopped every decode); 0 is "nothing
# registered, nothing found" to it, and the DICOM and GDAL decoders are never chosen for the
# PNG, JPEG and other files Flowbench reads.
#
# LAPACK and BLAS (with gfortran and quadmath behind them, 3 MB compressed, which a call of 64 MiB
# cannot spare) come to OpenCV's core for its linear algebra (cv::solve, cv::SVD, cv::gemm),
# which Flowbench never calls: their stubs trap (ud2), so a call would stop loudly, never return
# a wrong number.
stubbed=(libgdal.so.32 libgdcmMSFF.so.3.0 libgdcmDSED.so.3.0 liblapack.so.3 libblas.so.3)
trapped=(liblapack.so.3 libblas.so.3)
skip_re='/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|/libcuda|/libcudart|/libcublas|/libcudnn|/libnvidia|/libnccl'
cache=$(ldconfig -p)
declare -A seen=()
stubs=()
queue=()
for b in "${bins[@]}"; do queue+=("$build/bin/$b"); done
while ((${#queue[@]})); do
    f=${queue[0]}
    queue=("${queue[@]:1}")
    for name in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [[ -n "${seen[$name]:-}" ]] && continue
        seen[$name]=1
        path=$(awk -v n="$name" '$1 == n && /x86-64/ && !p {p = $NF} END {print p}' <<<"$cache")
        [[ -z "$path" || "$path" =~ $skip_re ]] && continue
        if [[ " ${stubbed[*]} " == *" $name "* ]]; then stubs+=("$path"); continue; fi
        cp -L "$path" "$stage/bundle/lib/$name"
        queue+=("$path")
    done
done
for path in "${stubs[@]}"; do
    name=$(basename "$path")
    body='xorl %eax, %eax; ret' what="returning 0"
    if [[ " ${trapped[*]} " == *" $name "* ]]; then body=ud2 what="that trap"; fi
    # The symbols the bundled libraries import that this library defines.
    nm -D --defined-only "$path" | awk '$2 == "T" || $2 == "W" {print $3}' | sed 's/@.*//' |
        sort -u >"$stage/defined"
    for l in "$stage"/bundle/lib/*; do nm -D --undefined-only "$l"; done | awk '{print $2}' |
        sed 's/@.*//' | sort -u | comm -12 - "$stage/defined" |
        awk -v body="$body" '{printf ".globl %s\n.type %s,@function\n%s:\n\t%s\n", $1, $1, $1, body}' \
            >"$stage/stub.s"
    gcc -shared -nostdlib -Wl,-soname,"$name" -o "$stage/bundle/lib/$name" "$stage/stub.s"
    echo "device_bundle: $name is a stub of $(grep -c '^\.globl' "$stage/stub.s") functions $what"
done
# Qt finds no platform plugin and needs none: the GPU tests are core tests.
# The data goes unpacked: xz packs it 4 MB smaller than gzip did. device_run.sh gzips it again
# for the peer, which reads only .gz; Flowbench reads either.
if (( ! fuzz )); then
    for f in "$data"/*-ubyte.gz; do zcat "$f" >"$stage/bundle/data/$(basename "$f" .gz)"; done
fi
mkdir -p .device
# Open MPI's runtime (mpirun, its plugins, PMIx's, their help and configuration files), for the
# NCCL check: the device has no MPI. device_run.sh unpacks it at the same absolute paths, where
# Open MPI looks for its plugins, without overwriting anything already there. The libraries its
# programs load (libmpi, libopen-rte, libopen-pal, libpmix) come from bundle/lib, not from here,
# and its OpenSHMEM, Fortran, Java and MPI-IO parts stay behind. A plugin whose library is absent
# there (InfiniBand, UCX, libfabric, munge) is skipped by Open MPI; one host needs none of them.
if (( ! fuzz )) && grep -q "FLOWBENCH_HAVE_MPI" "$build/build.ninja" 2>/dev/null; then
    mpi_pkgs=(openmpi-bin openmpi-common libopenmpi3 libpmix2)
    dpkg -L "${mpi_pkgs[@]}" | grep -v '^/usr/share/\(doc\|man\|lintian\)' |
        grep -v '/libmpi\.\|/libopen-\|/libpmix\.\|oshmem\|mpifh\|usempi\|_java\|romio' |
        while read -r f; do if [[ -f $f || -L $f ]]; then echo "${f#/}"; fi; done >"$stage/mpi-files"
    # Open MPI's PMIx plugin loads libpmix, which libmpi does not.
    path=$(awk '$1 == "libpmix.so.2" && /x86-64/ && !p {p = $NF} END {print p}' <<<"$cache")
    if [[ -n "$path" ]]; then cp -L "$path" "$stage/bundle/lib/libpmix.so.2"; fi
    tar -C / -cJf "$stage/bundle/mpi.tar.xz" -T "$stage/mpi-files"
    echo "device_bundle: Open MPI's runtime, $(wc -l <"$stage/mpi-files") files" \
        "($(($(stat -c %s "$stage/bundle/mpi.tar.xz") >> 10)) KiB)"
fi
# The peer (../shared/bench/peer_torch.py) does not travel with the checkout: it goes beside the
# bundle, and device_run.sh passes it to the benchmark.
peer=${FLOWBENCH_PEER:-../shared/bench/peer_torch.py}
if (( fuzz )); then :; elif [[ -f "$peer" ]]; then cp "$peer" .device/peer_torch.py; else echo "device_bundle: no peer at $peer; the benchmark will not run" >&2; fi
XZ_OPT=-9e tar -C "$stage" -cJf ".device/$bundle_name.tar.xz" bundle
size=$(stat -c %s ".device/$bundle_name.tar.xz")
echo "device_bundle: .device/$bundle_name.tar.xz, $((size >> 20)) MiB (the carry limit is 64 MiB)"
(( size < 60 * 1024 * 1024 )) || { echo "device_bundle: too large to carry" >&2; exit 1; }
