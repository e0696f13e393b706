#!/usr/bin/env bash
# Runs on the GPU machine of the `device` tool (see scripts/device_bundle.sh): unpacks the
# bundle, finds the CUDA libraries there, lists the devices, runs the GPU tests and, with
# --bench, the GPU benchmark against the device's PyTorch. What it prints is also kept under $OUT
# (when set) for the closing note: two or three files, as few come back from that machine.
#
#   bash scripts/device_run.sh [--bench] [--quick]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bench=0
quick=0
for a in "$@"; do
    case "$a" in
    --bench) bench=1 ;;
    --quick) quick=1 ;;
    *) echo "usage: device_run.sh [--bench] [--quick]" >&2; exit 2 ;;
    esac
done
out=${OUT:-/tmp/flowbench-device-out}
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf .device/bundle.tar.xz || exit 1
root=$work/bundle

# cuBLAS, cuDNN, NCCL and the CUDA runtime: from the toolkit, else from PyTorch's wheels.
libdirs=("$root/lib")
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [[ -d $d ]] && libdirs+=("$d"); done
for name in libcudnn.so.9 libcublas.so.13 libcudart.so.13 libnccl.so.2; do
    found=$(find / -xdev -name "$name" -not -path '*/proc/*' 2>/dev/null | head -1)
    [[ -n "$found" ]] && libdirs+=("$(dirname "$found")")
done
export LD_LIBRARY_PATH=$(IFS=:; echo "${libdirs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FASHION_MNIST_DIR=$root/data
# The bundle's data is unpacked (it packs smaller); the peer reads only .gz.
for f in "$root"/data/*-ubyte; do gzip -1 -k "$f"; done

{
    echo "== $(date -u +%FT%TZ) nvidia-smi"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "== flowbench-cli devices"; "$root/bin/flowbench-cli" devices
    echo "== missing libraries"; ldd "$root/bin/flowbench-cli" | grep "not found" || echo none
    echo "== test_backend_ops"; "$root/bin/test_backend_ops"
    echo "== test_cross_device"; "$root/bin/test_cross_device"
    # Two CNN epochs each: CUDA graphs on (the default) and off, and bf16 mixed precision. The
    # log lines say whether steps were captured and whether the data went resident.
    for how in graphs no-graphs bf16; do
        echo "== two CNN epochs on the GPU: $how"
        env_args=()
        [[ $how == no-graphs ]] && env_args=(FLOWBENCH_CUDA_GRAPHS=0)
        prec=float32
        [[ $how == bf16 ]] && prec=bf16
        env "${env_args[@]}" "$root/bin/flowbench-cli" run resources/examples/fashion_mnist_cnn.json \
            --device cuda --set train.epochs=2 --set train.precision=$prec \
            --set train_data.path="$root/data" --set test_data.path="$root/data" \
            --out "$work/run-cnn-$how" --events "$work/run-cnn-$how/events.jsonl" | tail -1
        grep -h '"type":"log"' "$work/run-cnn-$how/events.jsonl" | grep -i "graph\|resident\|precision" || true
    done
    # `summary --measure` times a few synthetic training steps on the CPU and on the GPU and
    # prints the GFLOP/s each achieved beside the FLOP count (docs/summary.md).
    for m in cnn mlp; do
        echo "== summary --measure: $m"
        "$root/bin/flowbench-cli" summary resources/examples/fashion_mnist_$m.json --measure
    done
    # A run stopped after epoch 1 and resumed must end as the uninterrupted run does, to the bit,
    # with train.deterministic; without it cuDNN's timed algorithm choice may differ between the
    # processes (shown for comparison, not a failure).
    for det in true false; do
        echo "== resume on the GPU, train.deterministic=$det: the same end as an uninterrupted run?"
        common=(run resources/examples/fashion_mnist_cnn.json --device cuda
                --set train.deterministic=$det --set train_data.limit=6000
                --set test_data.limit=1000 --set train_data.path="$root/data"
                --set test_data.path="$root/data")
        "$root/bin/flowbench-cli" "${common[@]}" --set train.epochs=2 --out "$work/full-$det" \
            2>/dev/null | tail -1 >"$work/full-$det.json"
        "$root/bin/flowbench-cli" "${common[@]}" --set train.epochs=1 --out "$work/part-$det" \
            >/dev/null 2>&1
        "$root/bin/flowbench-cli" "${common[@]}" --set train.epochs=2 --out "$work/part-$det" \
            --resume "$work/part-$det" 2>/dev/null | tail -1 >"$work/resumed-$det.json"
        python3 - "$work/full-$det.json" "$work/resumed-$det.json" "$det" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
same = a["final_loss"] == b["final_loss"] and a["test_accuracy"] == b["test_accuracy"]
print(f"uninterrupted: loss {a['final_loss']!r} acc {a['test_accuracy']!r}")
print(f"resumed:       loss {b['final_loss']!r} acc {b['test_accuracy']!r}")
verdict = "PASS" if same else ("FAIL" if sys.argv[3] == "true" else "differs")
print(f"{verdict}: resumed run {'identical to' if same else 'differs from'} the uninterrupted one")
PY
    done
    # Data-parallel on GPUs (NCCL), with the Open MPI runtime the bundle carries (the device has
    # none): `mpirun -np 1` runs the whole path with one rank (NCCL's id over MPI, its
    # communicator, the broadcast of the weights, the in-place sums, their CUDA events) and, with
    # train.deterministic, should end where one plain process ends. Two ranks on one GPU is what
    # a person gets with -np 2 on a one-GPU host: it must end in a clear message, not a hang.
    if [[ -f $root/mpi.tar.xz ]]; then
        # The device may have an Open MPI of its own (another version, with another PMIx) at the
        # paths Debian's uses: ours stays apart, its plugins found through Open MPI's component
        # path. PMIx reads its plugins only from the folder it was built for, so the device's
        # are moved aside there (the machine is given back after the call).
        echo "== the device's own MPI: $(ls /usr/bin/orterun /usr/bin/mpirun 2>/dev/null | tr '\n' ' ')"
        mkdir -p "$work/mpi" && tar -C "$work/mpi" -xJf "$root/mpi.tar.xz"
        m=$work/mpi/usr/lib/x86_64-linux-gnu
        pmix_dir=/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
        [[ -d $pmix_dir ]] && mv "$pmix_dir" "$pmix_dir.device"
        mkdir -p "$(dirname "$pmix_dir")" && cp -a "$m/pmix2/lib/pmix" "$pmix_dir"
        export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$m
        export OMPI_MCA_mca_base_component_path=$m/openmpi/lib/openmpi3
        orterun=$work/mpi/usr/bin/orterun
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
            OMPI_MCA_pml=ob1 OMPI_MCA_mca_base_component_show_load_errors=0 PMIX_MCA_gds=hash \
            OMPI_MCA_btl_vader_single_copy_mechanism=none
        dp=(run resources/examples/fashion_mnist_cnn.json --device cuda --set train.epochs=2
            --set train.deterministic=true --set train_data.path="$root/data"
            --set test_data.path="$root/data")
        echo "== NCCL: one plain process, then mpirun -np 1 (the data-parallel path, one rank)"
        "$root/bin/flowbench-cli" "${dp[@]}" --out "$work/dp-plain" 2>/dev/null | tail -1 |
            tee "$work/dp-plain.json"
        timeout 180 "$orterun" -np 1 -x LD_LIBRARY_PATH -x FASHION_MNIST_DIR \
            "$root/bin/flowbench-cli" "${dp[@]}" --out "$work/dp-1" \
            --events "$work/dp-1/events.jsonl" | tail -1 | tee "$work/dp-1.json"
        echo "exit ${PIPESTATUS[0]}"
        grep -h '"type":"log"' "$work/dp-1/events.jsonl" 2>/dev/null |
            grep -i "nccl\|rank\|parallel\|graph" | head -8
        grep -h '"type":"epoch"' "$work/dp-1/events.jsonl" 2>/dev/null | tail -1
        python3 - "$work/dp-plain.json" "$work/dp-1.json" <<'PY'
import json, sys
try:
    a, b = (json.load(open(f)) for f in sys.argv[1:3])
except Exception as e:
    sys.exit(f"FAIL: no summary to compare ({e})")
same = a["final_loss"] == b["final_loss"] and a["test_accuracy"] == b["test_accuracy"]
same = same and a["status"] == b["status"] == "ok"
print(f"plain:       loss {a['final_loss']!r} acc {a['test_accuracy']!r}")
print(f"mpirun -np 1: loss {b['final_loss']!r} acc {b['test_accuracy']!r} status {b['status']}")
print("same end" if same else "differs", "(train.deterministic=true)")
PY
        echo "== NCCL: mpirun -np 2 on one GPU"
        timeout 120 "$orterun" -np 2 -x LD_LIBRARY_PATH -x FASHION_MNIST_DIR \
            "$root/bin/flowbench-cli" "${dp[@]}" --set train_data.limit=6000 \
            --set test_data.limit=1000 --out "$work/dp-2" 2>&1 | tail -12
        echo "exit ${PIPESTATUS[0]} (124: still running after 120 s)"
    fi
} 2>&1 | tee "$out/device_checks.txt"

if (( bench )); then
    # The peer's time to 92% starts at 6 epochs: its fresh runs of 1..5 epochs would spend
    # device time on a target it does not reach that early.
    args=(--cli "$root/bin/flowbench-cli" --data "$root/data" --peer-python python3 --save
          --results-dir "$out" --tta-peer-from 6 --peer .device/peer_torch.py)
    (( quick )) && args+=(--rounds 1 --skip-tta)
    echo "== $(date -u +%FT%TZ) bench/gpu_vs_peer.py" | tee "$out/gpu_bench.txt"
    PYTHONUNBUFFERED=1 timeout "${FLOWBENCH_BENCH_TIMEOUT:-420}" python3 bench/gpu_vs_peer.py "${args[@]}" 2>&1 |
        tee -a "$out/gpu_bench.txt"
    echo "== $(date -u +%FT%TZ) done" | tee -a "$out/gpu_bench.txt"
fi
