#!/usr/bin/env bash
# One device call comparing the default recorder's time designs: the
# shared-memory alignment check, the dvfs truth with stamped events (the
# default) and with anchors by the clock (KTRACE_ANCHORS_CLOCK), the
# public kernels of bench/thirdparty in every design, and the recorder microbenchmark's
# store builds; optionally Proton's per-record figures beside them.
# Expects release binaries in .device/bin (smem_align, dvfs,
# recorder_bench and, optionally, gemm from `cargo build --release -p
# ktrace-examples --examples`; tp_bench from bench/thirdparty) and writes $OUT/log.txt, plus the default dvfs capture
# and its truth.
# Environment: TP_ROUNDS (default 100), RB_REPS (default 40), RB_DESIGNS
# (default store,storena,storeclk; empty for every design), GEMM_REPS
# (default 60), TP_PASSES (default 2), TP_FILTER, SHORT=1 to stop after tp_bench,
# NO_PROTON=1 to skip Proton (which needs ../shared/anchors or
# .device/proton_overhead.py).
B=.device/bin
cd "$(dirname "$0")/.." || exit 1
chmod +x $B/* 2>/dev/null
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
log=$OUT/log.txt
W=$(mktemp -d)
R=$PWD
step() { echo; echo "=== $* ($(date +%T))"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  step smem_align; (cd "$W" && KTRACE=1 "$R/$B/smem_align"); echo "exit $?"
  step "dvfs default"; (cd "$W" && KTRACE=1 KTRACE_CAPTURE=dvfs.ktrace "$R/$B/dvfs" 2>&1 | grep -v "warning: block\|more warnings"); echo "exit $?"
  cp "$W/dvfs.ktrace" "$OUT/" 2>/dev/null; cp "$W/dvfs_truth.bin" "$OUT/dvfs_truth.bin" 2>/dev/null
  step "dvfs --clock"; (cd "$W" && KTRACE=1 KTRACE_CAPTURE=dvfs_clock.ktrace "$R/$B/dvfs" --clock 2>&1 | grep -v "warning: block\|more warnings"); echo "exit $?"
  if [ -x $B/tp_bench ]; then
    step "tp_bench ${TP_ROUNDS:-100} ${TP_PASSES:-2}"; $B/tp_bench "${TP_ROUNDS:-100}" "${TP_PASSES:-2}" ${TP_FILTER:-}
  fi
  if [ -n "${SHORT:-}" ]; then step done; exit 0; fi
  if [ -x $B/gemm ]; then
    step "gemm --bench ${GEMM_REPS:-60}"; $B/gemm --bench "${GEMM_REPS:-60}"
  fi
  rb_designs="${RB_DESIGNS-store,storena,storeclk}"
  step "recorder_bench $rb_designs"
  if [ -n "$rb_designs" ]; then export KTRACE_BENCH_DESIGNS="$rb_designs"; fi
  $B/recorder_bench "${RB_REPS:-40}"
  proton=.device/proton_overhead.py
  [ -f "$proton" ] || proton=../shared/anchors/proton_overhead.py
  if [ -z "${NO_PROTON:-}" ] && [ -f "$proton" ]; then
    step "proton (recorder part)"; (cd "$W" && OUT="$W/proton" PYTHONUNBUFFERED=1 E2E_REPS=0 timeout 150 python3 "$R/$proton" 2>&1 | tail -40)
  fi
  step done
} > "$log" 2>&1
exit 0
