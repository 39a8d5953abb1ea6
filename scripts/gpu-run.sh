#!/usr/bin/env bash
# Runs every example on a GPU machine, untraced and traced, then the
# overhead benchmarks; used for the H200 figures in docs/. Expects the
# release example binaries in $BIN (default .device/bin, filled by
# `scripts/gpu-run.sh --stage` on the build machine) and writes everything
# under $OUT (default ./gpu-out), packed into results.tar.gz at the end.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${1:-}" = "--stage" ]; then
  cd "$root"
  cargo build --release -p ktrace-examples --examples && cargo build --release -p ktrace-cli || exit 1
  mkdir -p .device/bin
  for e in spin dvfs block_sum gemm warp_specialized big_grid cc_launcher recorder_bench faults two_gpus values smem_align stalls; do
    cp "target/release/examples/$e" .device/bin/
  done
  cp target/release/ktrace .device/bin/
  echo "staged into .device/bin"
  exit 0
fi
BIN="${BIN:-$root/.device/bin}"
OUT="${OUT:-$root/gpu-out}"
WORK="$(mktemp -d)"
mkdir -p "$OUT" "$WORK/run"
cd "$WORK/run"
log="$OUT/log.txt"
step() { echo; echo "=== $*"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  for e in spin block_sum warp_specialized big_grid cc_launcher; do
    step "$e untraced"; "$BIN/$e"; echo "exit $?"
    step "$e traced"; KTRACE=1 "$BIN/$e"; echo "exit $?"
  done
  step "values with every recorder"; "$BIN/values"; echo "exit $?"
  step "smem_align"; KTRACE=1 "$BIN/smem_align"; echo "exit $?"
  step "stalls (PC sampling, untraced and traced)"; KTRACE_STALLS=1 "$BIN/stalls"; echo "exit $?"
  KTRACE=1 KTRACE_STALLS=1 KTRACE_CAPTURE=stalls_traced.ktrace "$BIN/stalls"; echo "exit $?"
  step "dvfs under load"; KTRACE=1 "$BIN/dvfs"; echo "exit $?"
  step "dvfs quiet"; KTRACE=1 KTRACE_CAPTURE=dvfs_quiet.ktrace "$BIN/dvfs" --quiet; echo "exit $?"
  step "gemm untraced 8192^3"; "$BIN/gemm"; echo "exit $?"
  step "gemm traced 2048^3 (capture for the fixture and the picture)"
  KTRACE=1 KTRACE_OUT=gemm2048_trace.json KTRACE_CAPTURE=gemm2048.ktrace "$BIN/gemm" 2048 2048 2048; echo "exit $?"
  step "gemm traced 8192^3 (summary only)"
  KTRACE=1 KTRACE_OUT=/tmp/gemm8192_trace.json KTRACE_CAPTURE=/tmp/gemm8192.ktrace "$BIN/gemm"; echo "exit $?"
  cp /tmp/gemm8192_trace_summary.json . 2>/dev/null
  "$BIN/ktrace" summary /tmp/gemm8192.ktrace
  step "gemm overhead bench"; "$BIN/gemm" --bench 60; echo "exit $?"
  step "recorder bench"; "$BIN/recorder_bench" 50; echo "exit $?"
  step "warp_specialized overhead bench"; "$BIN/warp_specialized" --bench 100; echo "exit $?"
  step "warp_specialized traced, newest-N recorder"
  KTRACE=1 KTRACE_OUT=ws_newest_trace.json KTRACE_CAPTURE=ws_newest.ktrace "$BIN/warp_specialized" --newest; echo "exit $?"
  for c in trap too-large no-flush two-streams; do
    step "faults $c"; KTRACE=1 timeout 120 "$BIN/faults" "$c"; echo "exit $?"
  done
  if command -v compute-sanitizer >/dev/null; then
    step "compute-sanitizer memcheck, warp_specialized traced"
    KTRACE=1 KTRACE_OUT=/tmp/ws.json KTRACE_CAPTURE=/tmp/ws.ktrace compute-sanitizer --tool memcheck "$BIN/warp_specialized" 2>&1 | tail -5
  fi
} 2>&1 | tee "$log"
rm -f /tmp/gemm8192*
cd "$WORK" && tar czf "$OUT/results.tar.gz" run && ls -la "$OUT"
