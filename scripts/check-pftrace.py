#!/usr/bin/env python3
"""Checks `ktrace export`'s Perfetto trace (.pftrace) against its Chrome
trace of the same capture, decoding the .pftrace with Perfetto's own schema
(`perfetto_trace_pb2` of the PyPI `perfetto` package, offline).

For each capture it runs `KTRACE export CAPTURE -o DIR/t.pftrace` (and again
with --args) and `KTRACE export CAPTURE -o DIR/t.json` (one JSON per launch),
then checks, per launch:

- the same spans and marks: region name, SM, block and warp (from the
  Perfetto track path device > launch > "SM 012" > "Block 0003" >
  "Warp 02" [> "Overlap N"]; from the Chrome event's args), and times to the
  nanosecond: Chrome's times are exact picoseconds from the launch's first
  event, and otherData gives that event's time and the launch origin, so
  each becomes origin + round((first + ts) / 1000 ps), halves up, the
  rounding the .pftrace documents. Equal absolute times are equal times
  relative to the launch's first event;
- that slices nest on every track: times never go back on a track, every
  end closes an open slice, nothing stays open;
- that tracks form the device > launch > SM > block > warp tree with
  explicit child ordering, and overlap tracks only under warps;
- with --args, that every slice begin and instant carries sm, block, warp
  and region matching its track and name;
- that the values recorded with events (annotations `value` and
  `end_value`, written with or without --args) are the Chrome args'.

Usage: check-pftrace.py --ktrace PATH/TO/ktrace CAPTURE...
Exit status 0 when every capture passes.
"""

import argparse
import collections
import decimal
import json
import os
import re
import subprocess
import sys
import tempfile

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

INCREMENTAL_CLOCK = 64
REALTIME = 1
BEGIN, END, INSTANT = 1, 2, 3
EXPLICIT = 3


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Sequence:
    def __init__(self):
        self.clock = None
        self.track = None
        self.last_ns = None
        self.names = {}
        self.arg_names = {}


def read_pftrace(path):
    """Tracks {uuid: descriptor} and events [(track, type, name, ns, args)]
    in file order, resolved as Perfetto's importer does: per-sequence
    defaults, interned names and the incremental clock."""
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tracks = {}
    events = []
    seqs = collections.defaultdict(Sequence)
    for p in trace.packet:
        check(p.HasField("trusted_packet_sequence_id"), "a packet without a sequence id")
        seq_id = p.trusted_packet_sequence_id
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            seqs[seq_id] = Sequence()
        seq = seqs[seq_id]
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            seq.clock = d.timestamp_clock_id if d.HasField("timestamp_clock_id") else None
            te = d.track_event_defaults
            seq.track = te.track_uuid if te.HasField("track_uuid") else None
        if p.HasField("interned_data"):
            for n in p.interned_data.event_names:
                seq.names[n.iid] = n.name
            for n in p.interned_data.debug_annotation_names:
                seq.arg_names[n.iid] = n.name
        kind = p.WhichOneof("data")
        if kind == "clock_snapshot":
            for c in p.clock_snapshot.clocks:
                if c.clock_id == INCREMENTAL_CLOCK:
                    check(c.is_incremental, "clock 64 is not incremental")
                    seq.last_ns = c.timestamp
        elif kind == "track_descriptor":
            d = p.track_descriptor
            check(d.uuid not in tracks, f"track {d.uuid} described twice")
            tracks[d.uuid] = d
        elif kind == "track_event":
            e = p.track_event
            check(p.HasField("timestamp"), "an event without a timestamp")
            clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else seq.clock
            if clock == INCREMENTAL_CLOCK:
                check(seq.last_ns is not None, "an incremental time before its clock snapshot")
                seq.last_ns += p.timestamp
                ns = seq.last_ns
            else:
                check(clock == REALTIME, f"unexpected clock {clock}")
                ns = p.timestamp
            if e.HasField("name_iid"):
                check(e.name_iid in seq.names, f"name iid {e.name_iid} not interned on sequence {seq_id}")
                name = seq.names[e.name_iid]
            else:
                name = e.name if e.HasField("name") else None
            track = e.track_uuid if e.HasField("track_uuid") else seq.track
            check(track is not None, "an event without a track")
            args = [(a.name if a.HasField("name") else seq.arg_names[a.name_iid], a.uint_value)
                    for a in e.debug_annotations]
            events.append((track, e.type, name, ns, args))
    return tracks, events


def track_path(tracks, uuid):
    names = []
    while True:
        check(uuid in tracks, f"track {uuid} has no descriptor")
        d = tracks[uuid]
        names.append(d.name)
        if not d.HasField("parent_uuid"):
            break
        uuid = d.parent_uuid
    return names[::-1]


NUM = {"sm": re.compile(r"^SM (\d{3,})$"), "block": re.compile(r"^Block (\d{4,})$"),
       "warp": re.compile(r"^Warp (\d{2,})$"), "lane": re.compile(r"^Overlap (\d+)$")}


def warp_of(tracks, uuid):
    """(launch title, sm, block, warp, lane) of a warp or overlap track,
    None for other tracks (the host span)."""
    p = track_path(tracks, uuid)
    if len(p) < 5:
        return None
    m = [NUM[k].match(s) for k, s in zip(("sm", "block", "warp"), p[2:5])]
    check(all(m), f"track path {p}")
    lane = 0
    if len(p) == 6:
        lm = NUM["lane"].match(p[5])
        check(lm is not None and int(lm.group(1)) > 0, f"track path {p}")
        lane = int(lm.group(1))
    check(len(p) <= 6, f"track path {p}")
    return (p[1],) + tuple(int(x.group(1)) for x in m) + (lane,)


def slices_of(tracks, events):
    """Spans and marks by launch title, checking that slices nest on every
    track."""
    spans = collections.defaultdict(list)
    marks = collections.defaultdict(list)
    stacks = collections.defaultdict(list)
    last = {}
    lanes = 0
    for track, kind, name, ns, args in events:
        check(ns >= last.get(track, 0), f"time goes back on track {track_path(tracks, track)}")
        last[track] = ns
        w = warp_of(tracks, track)
        if kind == BEGIN:
            stacks[track].append((name, ns, args))
        elif kind == END:
            check(stacks[track], f"an end without an open slice on {track_path(tracks, track)}")
            bname, start, bargs = stacks[track].pop()
            if w is not None:
                spans[w[0]].append((w[1], w[2], w[3], bname, start, ns, values_of(bargs)))
                check_args(w, bname, bargs)
                lanes += w[4] > 0
        elif kind == INSTANT:
            check(w is not None and w[4] == 0, "an instant off a warp track")
            marks[w[0]].append((w[1], w[2], w[3], name, ns, values_of(args)))
            check_args(w, name, args)
        else:
            raise Failure(f"event type {kind}")
    open_tracks = [track_path(tracks, t) for t, s in stacks.items() if s]
    check(not open_tracks, f"slices left open on {open_tracks[:3]}")
    return spans, marks, lanes


# Region id by name, per launch, from the annotations.
REGION_IDS = {}


# Annotations that carry the values recorded with events (always written),
# as opposed to the sm/block/warp/region ones that --args adds.
VALUE_ARGS = ("value", "end_value")


def values_of(args):
    """The values an event carries, as a sorted tuple of (name, value)."""
    return tuple(sorted((k, v) for k, v in args if k in VALUE_ARGS))


def check_args(w, name, args):
    args = [(k, v) for k, v in args if k not in VALUE_ARGS]
    if not args:
        return
    got = dict(args)
    check(sorted(got) == ["block", "region", "sm", "warp"], f"annotations {args}")
    check((got["sm"], got["block"], got["warp"]) == w[1:4], f"annotations {args} on {w}")
    want = REGION_IDS.setdefault((w[0], name), got["region"])
    check(got["region"] == want, f"{name}: region {got['region']} here, {want} elsewhere")


def check_tree(tracks):
    """device > "launch N…" > ("Host" | "SM nnn" > "Block nnnn" > "Warp nn"
    > "Overlap n"), every parent ordering its children explicitly."""
    for uuid, d in tracks.items():
        p = track_path(tracks, uuid)
        check(d.child_ordering == EXPLICIT, f"{p}: child ordering {d.child_ordering}")
        check(1 <= len(p) <= 6, f"track path {p}")
        if len(p) >= 2:
            check(re.match(r"^launch \d+", p[1]), f"track path {p}")
        if len(p) == 3 and p[2] == "Host":
            continue
        for name, key in zip(p[2:], ("sm", "block", "warp", "lane")):
            check(NUM[key].match(name), f"track path {p}")


def ps_of(us):
    """Microseconds as Chrome writes them (exact) -> integer ps."""
    v = us * 1_000_000
    check(v == v.to_integral_value(), f"{us} us is not a whole number of ps")
    return int(v)


def ns_round(ps):
    # Floor division rounds towards -inf, as Rust's div_euclid does.
    return (ps + 500) // 1000


def read_chrome(path):
    with open(path) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    other = doc["otherData"]
    origin = int(other["origin_globaltimer_ns"])
    t0 = int(other["first_event_ps_from_origin"])
    spans, marks = [], []
    for e in doc["traceEvents"]:
        ph = e["ph"]
        if ph == "M":
            continue
        a = e["args"]
        key = (a["sm"], a["block"], a["warp"], e["name"])
        vals = tuple(sorted((k, int(a[k])) for k in VALUE_ARGS if k in a))
        start = t0 + ps_of(decimal.Decimal(e["ts"]))
        if ph == "X":
            end = start + ps_of(decimal.Decimal(e["dur"]))
            spans.append(key + (origin + ns_round(start), origin + ns_round(end), vals))
        elif ph == "i":
            marks.append(key + (origin + ns_round(start), vals))
        else:
            raise Failure(f"unexpected Chrome event {ph}")
    return other["launch"], spans, marks


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def launch_summaries(path, launches):
    """Each launch's summary from the one summary file of a .pftrace export:
    the launch's own object, or, for several launches, `launches` of
    `{"trace", "launches"}`. Fails when the file or a launch is missing."""
    check(os.path.exists(path), f"{path}: the export's summary is missing")
    with open(path) as f:
        s = json.load(f)
    items = s["launches"] if "launches" in s else [s]
    by_launch = {x.get("launch"): x for x in items}
    check(len(items) == len(launches) and sorted(by_launch) == launches,
          f"{path}: summaries of launches {sorted(by_launch)}, the trace has {launches}")
    return by_launch


def check_capture(ktrace, capture, tmp):
    pf = os.path.join(tmp, "p.pftrace")
    pf_args = os.path.join(tmp, "p_args.pftrace")
    js = os.path.join(tmp, "t.json")
    run([ktrace, "export", capture, "-o", pf])
    run([ktrace, "export", capture, "-o", pf_args, "--args"])
    out = run([ktrace, "export", capture, "-o", js])
    jsons = [js] + sorted(
        os.path.join(tmp, f) for f in os.listdir(tmp) if re.match(r"^t_launch\d+\.json$", f))
    chrome = {}
    for j in jsons:
        launch, spans, marks = read_chrome(j)
        chrome[launch] = (spans, marks)
    summary = []
    REGION_IDS.clear()
    for path, with_args in ((pf, False), (pf_args, True)):
        tracks, events = read_pftrace(path)
        check_tree(tracks)
        spans, marks, lanes = slices_of(tracks, events)
        check(with_args == any(k not in VALUE_ARGS for e in events for k, _ in e[4]),
              "annotations other than values present iff --args")
        titles = {}
        stem = path[: -len(".pftrace")]
        summaries = launch_summaries(f"{stem}_summary.json", sorted(chrome))
        for title in set(spans) | set(marks):
            m = re.match(r"^launch (\d+)", title)
            check(m is not None, f"launch title {title!r}")
            titles[int(m.group(1))] = title
        check(sorted(titles) == sorted(chrome), f"launches {sorted(titles)} vs Chrome {sorted(chrome)}")
        for launch, (cspans, cmarks) in sorted(chrome.items()):
            t = titles[launch]
            cs, cm = sorted(tuple(x) for x in cspans), sorted(tuple(x) for x in cmarks)
            # On the host's axis (a capture with clock syncs) the launch is
            # shifted by one whole number of ns, which its summary states.
            shift = -summaries[launch].get("placement", {}).get("gpu_ahead_ns", 0)
            ps = sorted(k[:4] + tuple(x - shift for x in k[4:-1]) + k[-1:] for k in spans[t])
            pm = sorted(k[:4] + tuple(x - shift for x in k[4:-1]) + k[-1:] for k in marks[t])
            if ps != cs:
                diff = sorted(set(ps) ^ set(cs))[:5]
                raise Failure(f"launch {launch}: {len(ps)} slices vs {len(cs)} Chrome spans; first differences {diff}")
            if pm != cm:
                diff = sorted(set(pm) ^ set(cm))[:5]
                raise Failure(f"launch {launch}: {len(pm)} instants vs {len(cm)} Chrome marks; first differences {diff}")
            if not with_args:
                values = sum(len(k[-1]) for k in ps + pm)
                summary.append(f"launch {launch}: {len(ps)} spans, {len(pm)} marks, {values} values")
        if not with_args:
            summary.append(f"{lanes} spans on overlap tracks, {os.path.getsize(path)} bytes")
    return summary


def check_ping_pong(ktrace, gpu0, gpu1, tmp):
    """`ktrace merge` of the two_gpus pair: on the merged timeline every
    flag is seen after it was sent, and each launch has its host span."""
    out = os.path.join(tmp, "merged.pftrace")
    run([ktrace, "merge", gpu0, gpu1, "-o", out])
    tracks, events = read_pftrace(out)
    times = collections.defaultdict(list)
    for track, kind, name, ns, _ in events:
        times[name].append(ns)
    for v in times.values():
        v.sort()
    n = len(times["ping sent"])
    check(n > 0 and all(len(times[k]) == n for k in ("ping seen", "pong sent", "pong seen")),
          f"marks: { {k: len(v) for k, v in times.items()} }")
    late = sum(1 for i in range(n) if times["ping seen"][i] <= times["ping sent"][i]
               or times["pong seen"][i] <= times["pong sent"][i])
    check(late == 0, f"{late} of {n} rounds show a flag seen before it was sent")
    hosts = [d for d in tracks.values() if d.name == "Host"]
    launches = {d.parent_uuid for d in hosts}
    check(len(launches) >= 2, f"host span tracks under {len(launches)} launches")
    skew = sorted(((times["ping seen"][i] - times["ping sent"][i])
                   - (times["pong seen"][i] - times["pong sent"][i])) / 2 for i in range(n))
    return [f"{n} rounds in order", f"median skew {skew[n // 2]:.0f} ns",
            f"{len(hosts)} host span tracks"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ktrace", required=True, help="the ktrace binary")
    ap.add_argument("--ping-pong", nargs=2, metavar=("GPU0", "GPU1"),
                    help="also merge the two_gpus captures and check their order")
    ap.add_argument("captures", nargs="*")
    a = ap.parse_args()
    failed = 0
    if a.ping_pong:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                summary = check_ping_pong(a.ktrace, *a.ping_pong, tmp)
                print("ok   merge " + " ".join(a.ping_pong) + ": " + "; ".join(summary))
            except Failure as e:
                failed += 1
                print(f"FAIL merge: {e}")
    for c in a.captures:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                summary = check_capture(a.ktrace, c, tmp)
                print(f"ok   {c}: " + "; ".join(summary))
            except Failure as e:
                failed += 1
                print(f"FAIL {c}: {e}")
    print(f"{len(a.captures) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
