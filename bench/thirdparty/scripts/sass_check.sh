#!/usr/bin/env bash
# Zero cost when off, checked on the third-party kernels: the untraced
# build of every design (target/{release,debug}/build/thirdparty-*/out/ktrace/
# kernels/*.untraced.cubin, from the newest `cargo build`) against the
# authors' kernel (original/), compiled with the same nvcc flags as
# ktrace-build's, instruction by instruction (cuobjdump -sass, addresses,
# encodings and function names aside).
#
#   scripts/sass_check.sh          # from bench/thirdparty, after cargo build --release
#
# Exits 1 if any untraced build differs from its original.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null || ! command -v cuobjdump >/dev/null; then
  # shellcheck disable=SC1091
  source ../../.cuda/env.sh
fi
# The newest build, release or debug: the kernels are compiled with the same
# nvcc flags in both profiles.
out=$(ls -td target/{release,debug}/build/thirdparty-*/out/ktrace/kernels 2>/dev/null | head -1 || true)
if [[ -z "$out" ]]; then
  echo "sass_check: no build found; run cargo build (--release) first" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# <cublas_v2.h> is included by the originals but used by neither kernel.
mkdir -p "$tmp/stub" && : >"$tmp/stub/cublas_v2.h"
# ktrace-build's flags (ktrace-build/src/nvcc.rs, BASE_FLAGS) for sm_90a.
flags=(-cubin -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -DNDEBUG
  --expt-relaxed-constexpr -lineinfo -I"$tmp/stub")
nvcc "${flags[@]}" -o "$tmp/sgemm.cubin" original/sgemm_original.cu
nvcc "${flags[@]}" -o "$tmp/fastcu.cubin" original/fastcu_original.cu
nvcc "${flags[@]}" -o "$tmp/softmax.cubin" original/softmax_original.cu
nvcc "${flags[@]}" -o "$tmp/hgemm.cubin" original/hgemm_original.cu

# The instructions of every function of a cubin, one a line.
sass() {
  cuobjdump -sass "$1" | sed -nE 's#^[[:space:]]*/\*[0-9a-f]{4,}\*/[[:space:]]*([^;]*);.*#\1#p' |
    sed -E 's/[[:space:]]+$//'
}

status=0
for kernel in sgemm fastcu softmax hgemm; do
  sass "$tmp/$kernel.cubin" >"$tmp/$kernel.orig"
  total=$(wc -l <"$tmp/$kernel.orig")
  found=0
  for cubin in "$out/${kernel}"_*.untraced.cubin; do
    [[ -e "$cubin" ]] || continue
    found=1
    sass "$cubin" >"$tmp/mine"
    mine=$(wc -l <"$tmp/mine")
    same=$(paste -d '\n' "$tmp/$kernel.orig" "$tmp/mine" | paste - - -d '\t' |
      awk -F '\t' '$1 == $2 { n++ } END { print n + 0 }')
    if [[ "$same" == "$total" && "$mine" == "$total" ]]; then
      verdict=identical
    else
      verdict=DIFFERENT
      status=1
    fi
    printf '%-28s %4s/%s instructions identical to the original (%s in the build): %s\n' \
      "$(basename "$cubin")" "$same" "$total" "$mine" "$verdict"
    if [[ "$verdict" == DIFFERENT ]]; then
      diff "$tmp/$kernel.orig" "$tmp/mine" | head -20 || true
    fi
  done
  if [[ "$found" == 0 ]]; then
    echo "sass_check: no untraced build of $kernel in $out" >&2
    status=1
  fi
done
exit "$status"
