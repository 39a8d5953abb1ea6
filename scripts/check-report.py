#!/usr/bin/env python3
"""Checks that `ktrace report` pages draw in headless Chromium.

For each capture: writes its report, loads it in Chromium (--dump-dom for
the attributes the page's script sets, --screenshot for the pixels), and
checks that the script ran, that lanes were drawn, that the timeline area
of the screenshot holds the region colours over a real share of its
pixels, and that a histogram and a heatmap exist per region. With
--bench, also loads a large capture with the page's #bench fragment and
checks that no redraw of a series of zooms and pans is slow.

Standard library only (the screenshot is read by scripts/pngread.py).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pngread import read_png  # noqa: E402

WINDOW = (1200, 1000)
# A redraw slower than this is a page that does not keep up.
SLOWEST_REDRAW_MS = 1000.0


def fail(msg):
    print(f"check-report: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def chromium_args(chromium, profile):
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ]


def run_chromium(chromium, extra, url):
    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run(
            chromium_args(chromium, profile) + extra + [url],
            capture_output=True,
            text=True,
            timeout=180,
        )
    if r.returncode != 0:
        fail(f"chromium exited with {r.returncode} for {url}:\n{r.stderr[-2000:]}")
    return r.stdout


def body_attributes(dom):
    m = re.search(r"<body([^>]*)>", dom)
    if not m:
        fail("no <body> in the dumped DOM")
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


def embedded_data(html):
    m = re.search(
        r'<script type="application/json" id="ktrace-data">(.*?)</script>', html, re.S
    )
    if not m:
        fail("no ktrace-data element in the report")
    return json.loads(m.group(1))


def hex_rgb(c):
    c = c.lstrip("#")
    return tuple(int(c[i : i + 2], 16) for i in (0, 2, 4))


def load(chromium, page, fragment):
    url = "file://" + os.path.abspath(page) + fragment
    dom = run_chromium(chromium, ["--virtual-time-budget=20000", "--dump-dom"], url)
    attrs = body_attributes(dom)
    if attrs.get("data-ready") != "1":
        fail(f"{url}: the page's script did not finish (body attributes {attrs})")
    return dom, attrs


def containers(data):
    """Regions with a span that holds another span whole."""
    out = set()
    for flat in data["lanes"]["spans"]:
        open_spans = []  # (end, region), spans not yet ended
        for k in range(0, len(flat), 3):
            r, s, d = flat[k], flat[k + 1], flat[k + 2]
            open_spans = [(e, q) for e, q in open_spans if e > s]
            out.update(q for e, q in open_spans if e >= s + d)
            open_spans.append((s + d, r))
    return out


def check_pixels(chromium, page, fragment, attrs, data):
    """Region colours in the timeline area of a screenshot."""
    url = "file://" + os.path.abspath(page) + fragment
    with tempfile.TemporaryDirectory() as d:
        shot = os.path.join(d, "shot.png")
        run_chromium(chromium, ["--virtual-time-budget=20000", f"--screenshot={shot}"], url)
        width, height, channels, rows = read_png(shot)
    x, y, w, h = (int(v) for v in attrs["data-timeline-rect"].split(","))
    y1, x1 = min(height, y + h), min(width, x + w)
    if y1 - y < 50 or x1 - x < 200:
        fail(f"{url}: timeline area {attrs['data-timeline-rect']} not in a {width}x{height} screenshot")
    colours = attrs["data-region-colours"].split(" ")
    wanted = {hex_rgb(c): i for i, c in enumerate(colours)}
    counts = [0] * len(colours)
    area = 0
    for row in rows[y:y1]:
        for px in range(x, x1):
            o = px * channels
            i = wanted.get((row[o], row[o + 1], row[o + 2]))
            if i is not None:
                counts[i] += 1
            area += 1
    covered = sum(counts) / area
    # Every region with 1% or more of the span time must show; where lanes
    # are thin (below 6 px, drawn without insets), inner spans cover the
    # spans that hold them, so then of the regions that hold no other span.
    outer = containers(data) if float(attrs["data-lane-px"]) < 6 else set()
    total = {
        s["region"]: s["stats"]["mean_dur"] * s["stats"]["count"]
        for s in data["stats"]
        if s["region"] not in outer
    }
    with_spans = [i for i, t in total.items() if t >= 0.01 * sum(total.values())]
    seen = [i for i in with_spans if counts[i] > 0]
    shown = ", ".join(f"{data['regions'][s['region']]} {counts[s['region']]}" for s in data["stats"])
    print(f"  {fragment or '#'}: {covered:.0%} of the timeline area in region colours ({shown})")
    if covered < 0.10:
        fail(f"{url}: only {covered:.1%} of the timeline area is drawn in region colours")
    if len(seen) < len(with_spans):
        fail(f"{url}: {len(seen)} of {len(with_spans)} regions visible in the timeline ({shown})")


def check(ktrace, chromium, capture, launch, out_dir, groups):
    name = os.path.splitext(os.path.basename(capture))[0]
    page = os.path.join(out_dir, f"{name}.html")
    cmd = [ktrace, "report", capture, "-o", page]
    if launch is not None:
        cmd += ["--launch", str(launch)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: {r.stderr.strip()}")
    print(f"{name}: {r.stdout.strip()}")
    with open(page, encoding="utf-8") as f:
        html = f.read()
    data = embedded_data(html)
    lanes = len(data["lanes"]["block"])
    for group in groups:
        fragment = f"#group={group}"
        dom, attrs = load(chromium, page, fragment)
        drawn = int(attrs.get("data-lanes-drawn", "0"))
        all_lanes = drawn == lanes
        if not all_lanes:
            fail(f"{page}{fragment}: {drawn} of {lanes} lanes drawn")
        if int(attrs.get("data-spans-painted", "0")) == 0 and data["header"]["spans"]:
            fail(f"{page}{fragment}: no span drawn")
        for cls in ("hist", "heat"):
            n = dom.count(f'<canvas class="{cls}"')
            if n != len(data["stats"]):
                fail(f"{page}: {n} {cls} canvases for {len(data['stats'])} regions")
        print(
            f"  {fragment}: {drawn} of {lanes} lanes drawn, {attrs['data-spans-painted']} spans painted, "
            f"first draw {attrs['data-draw-ms']} ms, page {attrs['data-load-ms']} ms"
        )
        if data["header"]["spans"]:
            check_pixels(chromium, page, fragment, attrs, data)
    return page, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ktrace", required=True, help="the ktrace binary")
    ap.add_argument("--chromium", required=True, help="the Chromium binary")
    ap.add_argument("--out", default="target/check-report", help="where the pages go")
    ap.add_argument(
        "--bench", metavar="CAPTURE", help="a large capture whose redraws are timed"
    )
    ap.add_argument("captures", nargs="+", help="CAPTURE or CAPTURE:LAUNCH")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for c in a.captures:
        path, _, launch = c.partition(":")
        check(a.ktrace, a.chromium, path, int(launch) if launch else None, a.out, ["sm", "block"])
    if a.bench:
        page, data = check(a.ktrace, a.chromium, a.bench, None, a.out, ["sm"])
        _, attrs = load(a.chromium, page, "#bench")
        slowest = float(attrs.get("data-bench-slowest-ms", "nan"))
        print(
            f"  #bench: {data['header']['warps']} warps, {data['header']['spans']} spans: "
            f"page ready in {attrs['data-load-ms']} ms, slowest of 33 redraws {slowest} ms"
        )
        if not slowest < SLOWEST_REDRAW_MS:
            fail(f"{page}: a redraw took {slowest} ms (limit {SLOWEST_REDRAW_MS} ms)")
    print("check-report: ok")


if __name__ == "__main__":
    main()
