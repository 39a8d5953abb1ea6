#!/usr/bin/env bash
# Builds the README's "Tracing your own kernels" crate from the README's own
# code blocks, in a fresh folder outside the workspace, beside a link to
# this checkout named `ktrace` (as the README lays it out), then runs it:
# without a GPU it must stop with the clear no-driver message. Needs nvcc
# (scripts/setup-cuda.sh). Part of scripts/test.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ln -s "$root" "$work/ktrace"
mkdir -p "$work/saxpy"
python3 - "$root/README.md" "$work/saxpy" <<'PY'
import os, re, sys
readme, out = sys.argv[1], sys.argv[2]
lines = open(readme, encoding="utf-8").read().split("\n")
wanted = {"Cargo.toml", "build.rs", "src/main.rs"}
written = []
i = 0
while i < len(lines):
    if lines[i].startswith("```") and len(lines[i]) > 3:
        # the paragraph right before the block starts with the file's name
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        while j > 0 and lines[j - 1].strip():
            j -= 1
        m = re.match(r"^`([^`]+)`(:| —| \()", lines[j]) if j >= 0 else None
        k = i + 1
        while not lines[k].startswith("```"):
            k += 1
        if m and (m.group(1) in wanted or re.fullmatch(r"kernels/\w+\.cu", m.group(1))):
            path = os.path.join(out, m.group(1))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w", encoding="utf-8").write("\n".join(lines[i + 1:k]) + "\n")
            written.append(m.group(1))
        i = k
    i += 1
missing = wanted - set(written)
if missing or not any(w.startswith("kernels/") for w in written):
    sys.exit(f"readme-crate: the README lacks {sorted(missing) or 'a kernel'}")
print("readme-crate: extracted " + ", ".join(written))
PY
cp "$root/Cargo.lock" "$work/saxpy/Cargo.lock"
cd "$work/saxpy"
export CARGO_TARGET_DIR="$root/target/readme-crate"
cargo build --quiet
echo "readme-crate: built"
# No GPU here: the README's main must fail with the clear message.
if out="$(cargo run --quiet 2>&1)"; then
  if [ "${KTRACE_EXPECT_GPU:-0}" = 1 ]; then echo "$out"; exit 0; fi
  echo "readme-crate: expected no GPU, but the crate ran:"; echo "$out"; exit 1
fi
echo "$out"
case "$out" in
  *"no CUDA driver"*|*"driver"*) ;;
  *) echo "readme-crate: the error does not say what is missing"; exit 1 ;;
esac
case "$out" in
  *"{ "*|*"NoDriver"*) echo "readme-crate: the error is printed in its Debug form"; exit 1 ;;
esac
echo "readme-crate: ok"
