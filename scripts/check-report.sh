#!/usr/bin/env bash
# Renders `ktrace report` pages in headless Chromium and checks that they
# draw (scripts/check-report.py): the H200 gemm captures (one with values)
# and the warp-specialized gemm, a synthetic capture with nesting, marks
# and diagnostics, and a large synthetic capture (2112 warps, about 510k
# spans) whose redraws are timed.
#
# Chromium: $CHROMIUM, else `chromium` or `chromium-browser` on PATH.
# Without one the check is skipped with the reason printed, unless
# KTRACE_REQUIRE_CHROMIUM=1 (set by .ci/run), which makes it an error.
# scripts/test.sh installs Debian's chromium package when it is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

chromium="${CHROMIUM:-}"
if [[ -z "$chromium" ]]; then
    for c in chromium chromium-browser; do
        if command -v "$c" >/dev/null 2>&1; then
            chromium=$c
            break
        fi
    done
fi
if [[ -z "$chromium" ]]; then
    msg="no Chromium found (set CHROMIUM, or install Debian's package: apt-get install -y chromium)"
    if [[ "${KTRACE_REQUIRE_CHROMIUM:-}" == 1 ]]; then
        echo "error: $msg" >&2
        exit 1
    fi
    echo "skipped: the report check in a browser: $msg"
    exit 0
fi
echo "using $("$chromium" --version 2>/dev/null | head -1)"

out=target/check-report
mkdir -p "$out"
cargo build --quiet -p ktrace-cli
cargo build --quiet -p ktrace-runtime --no-default-features --example synth_capture --example host_bench
target/debug/examples/synth_capture "$out/synth.ktrace" >/dev/null
target/debug/examples/host_bench gen 1200000 "$out/stress.ktrace" >/dev/null
python3 scripts/check-report.py --ktrace target/debug/ktrace --chromium "$chromium" --out "$out" \
    --bench "$out/stress.ktrace" \
    tests/data/h200_gemm2048_v2.ktrace tests/data/h200_gemm2048_v3.ktrace \
    tests/data/h200_warp_specialized.ktrace "$out/synth.ktrace:0"
