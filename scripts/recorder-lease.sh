#!/usr/bin/env bash
# The per-event cost figures of docs/performance.md in one lease (the
# earlier leases are in docs/lab/performance-notes.md): the
# recorder microbenchmark, the gemm and warp_specialized overhead benches,
# Proton's own instrumentation benchmark and an ncu profile of the
# newest-N recorder without the skip branch at four events per iteration
# and one block per SM, one after the other on the same GPU.
#
#   scripts/recorder-lease.sh BIN PROTON_OVERHEAD_PY
#
# BIN holds release builds of recorder_bench, gemm and warp_specialized
# (`cargo build --release -p ktrace-examples --example recorder_bench --example gemm
# --example warp_specialized`); PROTON_OVERHEAD_PY is Proton's benchmark
# script (needs torch and triton 3.6). Writes under $OUT (default
# ./lease-out).
set -uo pipefail
BIN="$(cd "$1" && pwd)"
PROTON="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
OUT="${OUT:-$PWD/lease-out}"
mkdir -p "$OUT"
cd "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv
echo "=== recorder_bench 50"
KTRACE_BENCH_DESIGNS="${KTRACE_BENCH_DESIGNS:-store,ring,smem,newest,newestpin,newestnb}" \
  "$BIN/recorder_bench" 50 2>&1 | tee recorder_bench.txt
echo "=== gemm --bench 60"
"$BIN/gemm" --bench 60 2>&1 | tee gemm.txt
echo "=== warp_specialized --bench 100"
"$BIN/warp_specialized" --bench 100 2>&1 | tee warp_specialized.txt
echo "=== proton"
# Proton's traces stay out of $OUT: only its log comes back.
OUT="$(mktemp -d)" REPS=50 E2E_REPS=0 PYTHONUNBUFFERED=1 timeout 300 python3 "$PROTON" \
  >proton-log.txt 2>&1
sed -n '/^SUMMARY/,$p' proton-log.txt | tee proton.txt
echo "=== ncu, newest-N recorder without the skip branch, four events per iteration, 1 block per SM"
if command -v ncu >/dev/null; then
  # The first two bench_e4 launches: the untraced build, then the traced.
  KTRACE_BENCH_DESIGNS=newestnb timeout 90 ncu --clock-control none -k regex:bench_e4 -c 2 \
    --section WarpStateStats --section SourceCounters --section SchedulerStats \
    "$BIN/recorder_bench" 1 20000 >ncu-newestnb-e4.txt 2>&1
  grep -E "bench_e4|Warp Cycles Per Issued|Stall|Issued Warp|No Eligible|Executed Instructions|Elapsed Cycles" \
    ncu-newestnb-e4.txt | head -60
else
  echo "no ncu"
fi
