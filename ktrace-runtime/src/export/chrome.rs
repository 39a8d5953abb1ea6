//! Chrome Trace Event JSON, for Perfetto (ui.perfetto.dev) and
//! chrome://tracing, written warp by warp.
//!
//! The file is `{"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}`
//! with one event per line. Times (`ts`, `dur`) are in microseconds from the
//! first event of the launch, printed exactly from integer picoseconds.
//! By default each block is a process ("SM 012 Block 0003") and each warp a
//! thread ("Warp 02"); [`ChromeOptions::by_sm`] makes each SM a process with
//! threads "Block 0003 Warp 02". Begin/end pairs become complete (`X`)
//! events, marks thread-scoped instants (`i`, `"s":"t"`), unless
//! [`ChromeOptions::raw_events`] asks for the raw `B`/`E` events.

use std::collections::HashSet;
use std::io::{self, Write};

use super::parallel::{ChunkEncoder, ChunkSink, Encoded};
use super::region_slots::RegionSlots;
use crate::decode::{Span, TimedEvent, WarpTrace};
use crate::format::layout::EventKind;
use crate::format::regions::Regions;

/// Layout choices for the Chrome trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChromeOptions {
    /// One process per SM instead of one per block.
    pub by_sm: bool,
    /// Raw begin/end (`B`/`E`) events instead of complete (`X`) events.
    pub raw_events: bool,
}

/// Colour names that Chrome's trace viewer reserves (and Perfetto honours),
/// picked so neighbouring region ids get distinct colours.
pub const COLORS: &[&str] = &[
    "thread_state_running",
    "thread_state_runnable",
    "thread_state_iowait",
    "rail_response",
    "rail_animation",
    "rail_idle",
    "rail_load",
    "startup",
    "cq_build_passed",
    "cq_build_failed",
    "generic_work",
    "good",
    "bad",
    "terrible",
    "yellow",
    "olive",
    "thread_state_uninterruptible",
    "heap_dump_stack_frame",
    "detailed_memory_dump",
    "grey",
];

/// The colour of a region.
pub fn color(region: u16) -> &'static str {
    COLORS[usize::from(region) % COLORS.len()]
}

/// Writes `ps` picoseconds as microseconds, exactly (up to six decimals, no
/// trailing zeros).
pub fn write_us(w: &mut impl Write, ps: i64) -> io::Result<()> {
    let mut v = Vec::with_capacity(24);
    push_us(&mut v, ps);
    w.write_all(&v)
}

/// Pairs of decimal digits, "00" to "99".
const DIGITS2: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// `v` in decimal in `buf`, ending just before `end`; returns where the
/// digits start. `buf` must have room: up to 20 digits before `end`.
#[inline]
fn fmt_digits(buf: &mut [u8], end: usize, mut v: u64) -> usize {
    let mut i = end;
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS2[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS2[r..r + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    i
}

/// Appends `v` in decimal (`{v}`).
fn push_u64(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; 20];
    let i = fmt_digits(&mut b, 20, v);
    out.extend_from_slice(&b[i..]);
}

/// Appends `v` in decimal, zero-padded to `width` digits (`{v:0width$}`).
fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = [0u8; 20];
    let i = fmt_digits(&mut b, 20, v);
    for _ in b.len() - i..width {
        out.push(b'0');
    }
    out.extend_from_slice(&b[i..]);
}

/// Appends `ps` picoseconds as microseconds, as [`write_us`] writes them.
fn push_us(out: &mut Vec<u8>, ps: i64) {
    let a = ps.unsigned_abs();
    let (int, frac) = (a / 1_000_000, (a % 1_000_000) as usize);
    // Written right to left, ending at byte 24: sign, up to 13 integer
    // digits, point, six decimals of which the trailing zeros are left out.
    // The 24 bytes after the start are copied whole (a fixed-size copy, no
    // call to memcpy), then the tail is cut.
    let mut b = [0u8; 48];
    let mut end = 24;
    let mut i = end;
    if frac != 0 {
        let (hi, mid, lo) = (frac / 10_000, frac / 100 % 100, frac % 100);
        b[18..20].copy_from_slice(&DIGITS2[hi * 2..hi * 2 + 2]);
        b[20..22].copy_from_slice(&DIGITS2[mid * 2..mid * 2 + 2]);
        b[22..24].copy_from_slice(&DIGITS2[lo * 2..lo * 2 + 2]);
        b[17] = b'.';
        let mut f = frac;
        while f % 10 == 0 {
            f /= 10;
            end -= 1;
        }
        i = 17;
    }
    i = fmt_digits(&mut b, i, int);
    if ps < 0 {
        i -= 1;
        b[i] = b'-';
    }
    let len = out.len() + (end - i);
    out.extend_from_slice(&b[i..i + 24]);
    out.truncate(len);
}

/// Output is gathered here and handed to the writer in chunks of this size.
const CHUNK: usize = 64 * 1024;

/// The process id of the host steps' track: above every SM's.
const HOST_STEPS_PID: u64 = 1 << 40;

/// Streams a Chrome trace: [`ChromeWriter::begin`], then
/// [`ChromeWriter::warp`] for each warp, then [`ChromeWriter::finish`].
///
/// Events are formatted into an internal buffer that goes to the writer in
/// 64 KiB chunks; [`ChromeWriter::finish`] writes the rest.
pub struct ChromeWriter<W: Write> {
    w: W,
    out: Vec<u8>,
    opts: ChromeOptions,
    t0: i64,
    /// What the warps written so far decide for the next.
    running: ChromeRunning,
    /// `out` goes to the writer once it holds this many bytes (never, in a
    /// fork that encodes a chunk).
    flush_at: usize,
    /// Indices of region ids into `heads` and `tails`.
    slots: RegionSlots,
    /// Per slot, once seen: `{"name":NAME,"ph":`.
    heads: Vec<Option<Box<[u8]>>>,
    /// Per slot: `,"pid":..,"tid":..,"cname":"..","args":{..}}` for the
    /// warp whose number is the first field.
    tails: Vec<(u64, Vec<u8>)>,
    /// Number of the current warp (from 1).
    warp_no: u64,
    /// The current warp's `,"pid":P,"tid":T,"cname":"`.
    pid_tid: Vec<u8>,
    /// The current warp's `","args":{"sm":S,"block":B,"warp":W}}`.
    args: Vec<u8>,
    regions: Regions,
    events: u64,
}

impl<W: Write> ChromeWriter<W> {
    /// Starts the file. `t0_ps` is the time (from the launch origin) that
    /// becomes 0 in the file: the launch's first event.
    pub fn begin(mut w: W, regions: &Regions, opts: ChromeOptions, t0_ps: i64) -> io::Result<Self> {
        w.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        Ok(ChromeWriter {
            w,
            out: Vec::with_capacity(CHUNK + 4096),
            opts,
            t0: t0_ps,
            running: ChromeRunning {
                by_sm: opts.by_sm,
                first: true,
                seen_pids: HashSet::new(),
            },
            flush_at: CHUNK,
            slots: RegionSlots::new(regions),
            heads: Vec::new(),
            tails: Vec::new(),
            warp_no: 0,
            pid_tid: Vec::new(),
            args: Vec::new(),
            regions: regions.clone(),
            events: 0,
        })
    }

    /// Trace events written so far (metadata events not counted).
    pub fn events_written(&self) -> u64 {
        self.events
    }

    /// Starts the next event: hands a full chunk to the writer, then the
    /// separator.
    fn sep(&mut self) -> io::Result<()> {
        if self.out.len() >= self.flush_at {
            self.w.write_all(&self.out)?;
            self.out.clear();
        }
        if self.running.first {
            self.running.first = false;
        } else {
            self.out.extend_from_slice(b",\n");
        }
        Ok(())
    }

    /// Appends `{"name":NAME,"ph":` for `region`, whose slot is `i`.
    fn push_head(&mut self, i: usize, region: u16) -> io::Result<()> {
        if i >= self.heads.len() {
            self.heads.resize(i + 1, None);
        }
        if self.heads[i].is_none() {
            let name = json_str(&self.regions.name(region))?;
            let head = format!("{{\"name\":{name},\"ph\":");
            self.heads[i] = Some(head.into_bytes().into_boxed_slice());
        }
        if let Some(h) = &self.heads[i] {
            self.out.extend_from_slice(h);
        }
        Ok(())
    }

    /// Appends the current warp's `,"pid":..}}` for `region`, whose slot is `i`.
    fn push_tail(&mut self, i: usize, region: u16) {
        if i >= self.tails.len() {
            self.tails.resize_with(i + 1, || (0, Vec::new()));
        }
        let (no, tail) = &mut self.tails[i];
        if *no != self.warp_no {
            *no = self.warp_no;
            tail.clear();
            tail.extend_from_slice(&self.pid_tid);
            tail.extend_from_slice(color(region).as_bytes());
            tail.extend_from_slice(&self.args);
        }
        self.out.extend_from_slice(tail);
    }

    /// As [`Self::push_tail`], with the values recorded with the event (or
    /// a span's begin and end) added to its args as `"value"` and
    /// `"end_value"`.
    fn push_tail_values(&mut self, i: usize, region: u16, value: Option<u32>, end: Option<u32>) {
        self.push_tail(i, region);
        if value.is_none() && end.is_none() {
            return;
        }
        // Reopen the args object: the tail ends with `}}`.
        self.out.truncate(self.out.len() - 2);
        for (key, v) in [(&b",\"value\":"[..], value), (&b",\"end_value\":"[..], end)] {
            if let Some(v) = v {
                self.out.extend_from_slice(key);
                push_u64(&mut self.out, u64::from(v));
            }
        }
        self.out.extend_from_slice(b"}}");
    }

    fn meta_event(&mut self, name: &str, pid: u64, tid: u64, arg: &[u8]) -> io::Result<()> {
        self.sep()?;
        self.out.extend_from_slice(b"{\"ph\":\"M\",\"name\":\"");
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\",\"pid\":");
        push_u64(&mut self.out, pid);
        self.out.extend_from_slice(b",\"tid\":");
        push_u64(&mut self.out, tid);
        self.out.extend_from_slice(b",\"args\":");
        self.out.extend_from_slice(arg);
        self.out.push(b'}');
        Ok(())
    }

    /// Writes one host step as a complete event ("X") named `title` on a
    /// "Host steps" process of its own, from `start_ps` to `end_ps` (ps
    /// from the launch origin, as the warps' events).
    pub fn host_step(&mut self, title: &str, start_ps: i64, end_ps: i64) -> io::Result<()> {
        if self.running.seen_pids.insert(HOST_STEPS_PID) {
            self.meta_event(
                "process_name",
                HOST_STEPS_PID,
                0,
                b"{\"name\":\"Host steps\"}",
            )?;
            self.meta_event(
                "process_sort_index",
                HOST_STEPS_PID,
                0,
                b"{\"sort_index\":-1}",
            )?;
        }
        self.sep()?;
        self.out.extend_from_slice(b"{\"name\":");
        let name = serde_json::to_string(title).map_err(io::Error::other)?;
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b",\"ph\":\"X\",\"ts\":");
        write_us(&mut self.out, start_ps - self.t0)?;
        self.out.extend_from_slice(b",\"dur\":");
        write_us(&mut self.out, (end_ps - start_ps).max(0))?;
        self.out.extend_from_slice(b",\"pid\":");
        push_u64(&mut self.out, HOST_STEPS_PID);
        self.out.extend_from_slice(b",\"tid\":0}");
        Ok(())
    }

    /// Writes one warp: its process and thread names (once per process),
    /// then its events.
    pub fn warp(&mut self, warp: &WarpTrace) -> io::Result<()> {
        let order = self.running.order(warp);
        self.encode_warp(warp, order)
    }

    /// [`ChromeWriter::warp`] at the place `order` says.
    fn encode_warp(&mut self, warp: &WarpTrace, order: ChromeOrder) -> io::Result<()> {
        let id = warp.id;
        let (pid, tid) = process_thread(self.opts, warp);
        self.running.first = order.first;
        let mut arg = Vec::with_capacity(64);
        if order.new_pid {
            // {"name":"SM 004"} or {"name":"SM 004 Block 0003"}: digits
            // and spaces, nothing to escape.
            arg.extend_from_slice(b"{\"name\":\"SM ");
            push_padded(&mut arg, u64::from(id.sm), 3);
            if !self.opts.by_sm {
                arg.extend_from_slice(b" Block ");
                push_padded(&mut arg, u64::from(id.block), 4);
            }
            arg.extend_from_slice(b"\"}");
            self.meta_event("process_name", pid, 0, &arg)?;
            arg.clear();
            arg.extend_from_slice(b"{\"sort_index\":");
            push_u64(&mut arg, pid);
            arg.push(b'}');
            self.meta_event("process_sort_index", pid, 0, &arg)?;
        }
        arg.clear();
        arg.extend_from_slice(b"{\"name\":\"");
        if self.opts.by_sm {
            arg.extend_from_slice(b"Block ");
            push_padded(&mut arg, u64::from(id.block), 4);
            arg.push(b' ');
        }
        arg.extend_from_slice(b"Warp ");
        push_padded(&mut arg, u64::from(id.warp), 2);
        arg.extend_from_slice(b"\"}");
        self.meta_event("thread_name", pid, tid, &arg)?;
        arg.clear();
        arg.extend_from_slice(b"{\"sort_index\":");
        push_u64(&mut arg, tid);
        arg.push(b'}');
        self.meta_event("thread_sort_index", pid, tid, &arg)?;

        self.warp_no += 1;
        self.pid_tid.clear();
        self.pid_tid.extend_from_slice(b",\"pid\":");
        push_u64(&mut self.pid_tid, pid);
        self.pid_tid.extend_from_slice(b",\"tid\":");
        push_u64(&mut self.pid_tid, tid);
        self.pid_tid.extend_from_slice(b",\"cname\":\"");
        self.args.clear();
        self.args.extend_from_slice(b"\",\"args\":{\"sm\":");
        push_u64(&mut self.args, u64::from(id.sm));
        self.args.extend_from_slice(b",\"block\":");
        push_u64(&mut self.args, u64::from(id.block));
        self.args.extend_from_slice(b",\"warp\":");
        push_u64(&mut self.args, u64::from(id.warp));
        self.args.extend_from_slice(b"}}");

        if self.opts.raw_events {
            for e in &warp.events {
                self.event(e)?;
            }
        } else {
            // Spans and marks merged by time, so each thread reads in order.
            let mut marks = warp.marks().peekable();
            for s in &warp.spans {
                while let Some(m) = marks.next_if(|m| m.t_ps < s.start_ps) {
                    self.event(m)?;
                }
                self.span(s)?;
            }
            for m in marks {
                self.event(m)?;
            }
        }
        Ok(())
    }

    fn span(&mut self, s: &Span) -> io::Result<()> {
        self.sep()?;
        let slot = self.slots.index(s.region);
        self.push_head(slot, s.region)?;
        self.out.extend_from_slice(b"\"X\",\"ts\":");
        push_us(&mut self.out, s.start_ps.saturating_sub(self.t0));
        self.out.extend_from_slice(b",\"dur\":");
        push_us(&mut self.out, s.end_ps.saturating_sub(s.start_ps).max(0));
        self.push_tail_values(slot, s.region, s.begin_value, s.end_value);
        self.events += 1;
        Ok(())
    }

    fn event(&mut self, e: &TimedEvent) -> io::Result<()> {
        self.sep()?;
        let slot = self.slots.index(e.region);
        self.push_head(slot, e.region)?;
        self.out.extend_from_slice(match e.kind {
            EventKind::Begin => b"\"B\",\"ts\":",
            EventKind::End => b"\"E\",\"ts\":",
            EventKind::Mark => b"\"i\",\"s\":\"t\",\"ts\":",
        });
        push_us(&mut self.out, e.t_ps.saturating_sub(self.t0));
        self.push_tail_values(slot, e.region, e.value, None);
        self.events += 1;
        Ok(())
    }

    /// Ends the event list, writes `otherData` and returns the writer.
    pub fn finish(mut self, other_data: &serde_json::Value) -> io::Result<W> {
        self.out.extend_from_slice(b"\n],\n\"otherData\":");
        serde_json::to_writer(&mut self.out, other_data).map_err(io::Error::other)?;
        self.out.extend_from_slice(b"}\n");
        self.w.write_all(&self.out)?;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// The process and thread of `warp` in the trace.
fn process_thread(opts: ChromeOptions, warp: &WarpTrace) -> (u64, u64) {
    let id = warp.id;
    if opts.by_sm {
        (
            u64::from(id.sm),
            u64::from(id.block) * 32 + u64::from(id.warp),
        )
    } else {
        (u64::from(id.block), u64::from(id.warp))
    }
}

/// What the warps written so far decide for the next: whether anything
/// was written, and the processes already named.
pub(crate) struct ChromeRunning {
    by_sm: bool,
    /// Nothing written yet: the next event has no separator before it.
    first: bool,
    seen_pids: HashSet<u64>,
}

/// A warp's place in the trace.
pub(crate) struct ChromeOrder {
    /// Its first event is the trace's first.
    first: bool,
    /// Its process is named here (its first warp).
    new_pid: bool,
}

impl ChromeRunning {
    /// The place of `warp`, after the warps given theirs so far.
    fn order(&mut self, warp: &WarpTrace) -> ChromeOrder {
        let by_sm = ChromeOptions {
            by_sm: self.by_sm,
            raw_events: false,
        };
        let (pid, _) = process_thread(by_sm, warp);
        let order = ChromeOrder {
            first: self.first,
            new_pid: self.seen_pids.insert(pid),
        };
        // Every warp writes its thread's name.
        self.first = false;
        order
    }
}

impl<W: Write> ChunkSink for ChromeWriter<W> {
    type Running = ChromeRunning;
    type Order = ChromeOrder;
    type Prep = ();
    type Fork = ChromeWriter<io::Sink>;

    fn warp(&mut self, warp: &WarpTrace) -> io::Result<()> {
        ChromeWriter::warp(self, warp)
    }

    fn take_running(&mut self) -> ChromeRunning {
        let empty = ChromeRunning {
            by_sm: self.opts.by_sm,
            first: self.running.first,
            seen_pids: HashSet::new(),
        };
        std::mem::replace(&mut self.running, empty)
    }

    fn put_running(&mut self, running: ChromeRunning) {
        self.running = running;
    }

    fn order(running: &mut ChromeRunning, warp: &WarpTrace, (): ()) -> ChromeOrder {
        running.order(warp)
    }

    /// A writer of the same trace whose output stays in its buffer.
    fn fork(&self) -> ChromeWriter<io::Sink> {
        ChromeWriter {
            w: io::sink(),
            out: Vec::new(),
            opts: self.opts,
            t0: self.t0,
            running: ChromeRunning {
                by_sm: self.opts.by_sm,
                first: false,
                seen_pids: HashSet::new(),
            },
            flush_at: usize::MAX,
            slots: RegionSlots::new(&self.regions),
            heads: Vec::new(),
            tails: Vec::new(),
            warp_no: 0,
            pid_tid: Vec::new(),
            args: Vec::new(),
            regions: self.regions.clone(),
            events: 0,
        }
    }

    fn write_chunk(&mut self, chunk: &Encoded) -> io::Result<()> {
        self.w.write_all(&self.out)?;
        self.out.clear();
        self.w.write_all(&chunk.bytes[..chunk.len])?;
        self.events += chunk.events;
        Ok(())
    }
}

impl ChunkEncoder for ChromeWriter<io::Sink> {
    type Order = ChromeOrder;
    type Prep = ();

    fn prepare(&self, _: &WarpTrace) {}

    fn encode(&mut self, warp: &WarpTrace, order: ChromeOrder) -> io::Result<()> {
        self.encode_warp(warp, order)
    }

    fn take(&mut self, mut spare: Vec<u8>) -> Encoded {
        spare.clear();
        let bytes = std::mem::replace(&mut self.out, spare);
        Encoded {
            len: bytes.len(),
            bytes,
            events: std::mem::take(&mut self.events),
            track_events: 0,
        }
    }
}

fn json_str(s: &str) -> io::Result<String> {
    serde_json::to_string(s).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(ps: i64) -> String {
        let mut v = Vec::new();
        write_us(&mut v, ps).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn microseconds_exact() {
        assert_eq!(us(0), "0");
        assert_eq!(us(20_202), "0.020202");
        assert_eq!(us(1_500_000), "1.5");
        assert_eq!(us(-2_000_001), "-2.000001");
        assert_eq!(us(123_456_789_000), "123456.789");
        assert_eq!(us(i64::MIN), "-9223372036854.775808");
        assert_eq!(us(i64::MAX), "9223372036854.775807");
    }

    /// The formatting that `push_us` replaced, as the reference.
    fn us_fmt(ps: i64) -> String {
        let sign = if ps < 0 { "-" } else { "" };
        let a = ps.unsigned_abs();
        let (int, frac) = (a / 1_000_000, a % 1_000_000);
        if frac == 0 {
            format!("{sign}{int}")
        } else {
            let f = format!("{frac:06}");
            format!("{sign}{int}.{}", f.trim_end_matches('0'))
        }
    }

    #[test]
    fn microseconds_match_std_formatting() {
        let mut next = crate::synth::xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut values = vec![0, 1, -1, 9, 10, 99, 100, 999_999, 1_000_000, 1_000_001];
        for _ in 0..20_000 {
            let x = next();
            values.push(x as i64);
            values.push((x >> (x % 64)) as i64);
            values.push(-((x % 10_000_000_000) as i64));
        }
        for v in values {
            assert_eq!(us(v), us_fmt(v), "{v}");
        }
        let mut out = Vec::new();
        for (v, w) in [(0, 2), (7, 2), (42, 2), (123, 2), (5, 4), (12345, 4)] {
            out.clear();
            push_padded(&mut out, v, w);
            assert_eq!(String::from_utf8(out.clone()).unwrap(), format!("{v:0w$}"));
        }
    }
    #[test]
    fn stray_region_ids_do_not_size_the_tables() {
        use crate::decode::{decode, DecodeOptions};
        use crate::synth::{SynthLaunch, SynthWarp};

        let l = SynthLaunch::all_traced(1, 64, 32)
            .with(
                SynthWarp::new(0, 0)
                    .span(100, 200, 1)
                    .span(300, 400, 0xffff)
                    .mark(450, 0xfffe)
                    .flush_at(1000),
            )
            .with(
                SynthWarp::new(0, 1)
                    .span(100, 200, 0xffff)
                    .span(300, 400, 2)
                    .flush_at(1000),
            );
        let d = decode(l.buffer(), &DecodeOptions::default());
        let regions = Regions::from_table(&[(1, "load"), (2, "mma")]);
        let mut w = ChromeWriter::begin(Vec::new(), &regions, ChromeOptions::default(), 0).unwrap();
        for warp in &d.warps {
            w.warp(warp).unwrap();
        }
        // 64 direct slots, then one per stray id: not 0x10000.
        assert_eq!(w.heads.len(), 66);
        assert_eq!(w.tails.len(), 66);
        assert_eq!(w.events_written(), 5);
        let out = w.finish(&serde_json::Value::Null).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let names: Vec<(&str, u64)> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] != "M")
            .map(|e| (e["name"].as_str().unwrap(), e["tid"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            names,
            [
                ("load", 0),
                ("region 65535", 0),
                ("region 65534", 0),
                ("region 65535", 1),
                ("mma", 1)
            ]
        );
    }
}
