#!/usr/bin/env bash
# Issue 20 (d) on a machine with a GPU and no browser, in one call of the workplace's `device` tool (15 minutes of
# device time in all): benchmark 8 in Node, on WebGPU through Dawn, beside the same machine's CPU.
#
# Here first: bash bench/device/pack.sh   (writes .devpack/, about 44 MiB)
# Then:       device run, carry [".devpack"], timeout_s 580, command "bash bench/device/model-rollout-webgpu.sh"
#
# Each part has its own time limit and its own results file, so that what finished comes back when a later part
# runs out of time: $OUT/decode.json (decode tokens/s at batch 1 and 32, WebGPU then the CPU), $OUT/ab.json (new
# policy against transformers.js generate(), sync and async, and prefilled ÷ new context on WebGPU), $OUT/jitter.json
# (async ÷ sync wall with 0–50 ms steps on WebGPU); $OUT/log holds everything printed. Append them to
# bench/results/model-rollout.json here (bench/README.md section 8 says how). Without $OUT (on this machine, to try
# the pack) the files go to .devpack/out/. SECONDS_DECODE, SECONDS_AB and SECONDS_JITTER change the limits;
# BENCH_ARGS adds options to every part (smaller sizes to try the pack on a software adapter).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-.devpack/out}
mkdir -p "$out"
exec > >(tee -a "$out/log") 2>&1

tar -C .devpack -xJf .devpack/runtime.tar.xz
export PATH="$PWD/.devpack/bin:$PATH"
if ! ldconfig -p | grep -q libvulkan.so.1; then
  dpkg -x .devpack/libvulkan1.deb / && ldconfig
fi
# The NVIDIA driver's Vulkan manifest, where the device machines keep it (the tool's README).
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -f "$nvidia_icd" ]; then export VK_DRIVER_FILES="$nvidia_icd"; fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
echo "node $(node --version); $(nvidia-smi -L 2>/dev/null || echo 'no nvidia-smi')"

bench() { # seconds, results file, arguments
  local seconds=$1 file=$2
  shift 2
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of options
  timeout "$seconds" node .devpack/bench/node/model-rollout.mjs --only node --out "$out/$file" --append "$@" ${BENCH_ARGS:-} ||
    echo "bench $* ended with status $? (124: out of time)"
}
bench "${SECONDS_DECODE:-150}" decode.json --device webgpu --parts decode --rounds 3
bench 60 decode.json --parts decode --rounds 3
bench "${SECONDS_AB:-200}" ab.json --device webgpu --parts ab
bench "${SECONDS_JITTER:-120}" jitter.json --device webgpu --parts jitter
ls -la "$out"
