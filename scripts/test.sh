#!/usr/bin/env bash
# The project's test command: installs the CUDA toolchain when missing
# (scripts/setup-cuda.sh), then checks formatting, lints and runs every test.
# No GPU is needed; tests that need one print why they were skipped.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup-cuda.sh
# shellcheck disable=SC1091
source .cuda/env.sh
export KTRACE_REQUIRE_NVCC=1
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings
echo "== cargo test"
cargo test --workspace --all-features
echo "== all tests passed"
