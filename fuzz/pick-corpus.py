#!/usr/bin/env python3
"""Keep the committed fuzz corpus small: add to fuzz/corpus/<target>/ the few
inputs found by a fuzzing run that add the most coverage.

    python3 fuzz/pick-corpus.py BINARY fuzz/corpus/TARGET fuzz/scratch/TARGET [--add N]

BINARY is the built fuzz target (for example
fuzz/target/x86_64-unknown-linux-gnu/release/decode). The script asks
libFuzzer for every input's coverage (a set-cover merge with edge features
only, -use_counters=0, into a throwaway folder; its control file lists each
input's features), keeps every file already in the corpus, then picks
greedily the N candidates (default 8) that add the most features not yet
covered, the smaller file on a tie, and copies them in as cmin-<sha1>.
It prints how much of the candidates' coverage the corpus then keeps.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("corpus")
    ap.add_argument("candidates", nargs="+")
    ap.add_argument("--add", type=int, default=8)
    ap.add_argument("--max-size", type=int, default=4096)
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        ctl = os.path.join(tmp, "control")
        cmd = [
            a.binary,
            "-set_cover_merge=1",
            "-use_counters=0",
            "-rss_limit_mb=512",
            "-malloc_limit_mb=256",
            f"-merge_control_file={ctl}",
            out,
            a.corpus,
            *a.candidates,
        ]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"merge failed:\n{r.stderr[-3000:]}")
        with open(ctl) as f:
            lines = f.read().splitlines()

    n = int(lines[0])
    files = lines[2 : 2 + n]
    features = {}
    for line in lines[2 + n :]:
        if line.startswith("FT "):
            parts = line.split()
            features[int(parts[1])] = set(map(int, parts[2:]))

    corpus = os.path.realpath(a.corpus)
    covered = set()
    candidates = []
    for i, path in enumerate(files):
        ft = features.get(i, set())
        if os.path.dirname(os.path.realpath(path)) == corpus:
            covered |= ft
        elif os.path.getsize(path) <= a.max_size:
            candidates.append((path, ft))
    everything = covered.union(*(ft for _, ft in candidates))
    before = len(covered)

    picked = []
    for _ in range(a.add):
        best = max(
            candidates,
            key=lambda c: (len(c[1] - covered), -os.path.getsize(c[0])),
            default=None,
        )
        if best is None or not best[1] - covered:
            break
        picked.append(best[0])
        covered |= best[1]
        candidates.remove(best)

    for path in picked:
        with open(path, "rb") as f:
            digest = hashlib.sha1(f.read()).hexdigest()[:12]
        shutil.copyfile(path, os.path.join(a.corpus, f"cmin-{digest}"))
    print(
        f"{a.corpus}: kept {len(picked)} of {len(files)} inputs; features "
        f"{before} -> {len(covered)} of {len(everything)} "
        f"({100 * len(covered) / max(1, len(everything)):.1f}%)"
    )


if __name__ == "__main__":
    main()
