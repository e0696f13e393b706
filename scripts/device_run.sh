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

{
    echo "== nvidia-smi"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
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
} 2>&1 | tee "$out/device_checks.txt"

if (( bench )); then
    # The peer's time to 92% starts at 6 epochs: its fresh runs of 1..5 epochs would spend
    # device time on a target it does not reach that early.
    args=(--cli "$root/bin/flowbench-cli" --data "$root/data" --peer-python python3 --save
          --results-dir "$out" --tta-peer-from 6 --peer .device/peer_torch.py)
    (( quick )) && args+=(--rounds 1 --skip-tta)
    python3 bench/gpu_vs_peer.py "${args[@]}" 2>&1 | tee "$out/gpu_bench.txt"
fi
