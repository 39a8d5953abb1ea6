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

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use crate::decode::{Span, TimedEvent, WarpTrace};
use crate::layout::EventKind;
use crate::regions::Regions;

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
    let sign = if ps < 0 { "-" } else { "" };
    let a = ps.unsigned_abs();
    let (int, frac) = (a / 1_000_000, a % 1_000_000);
    if frac == 0 {
        write!(w, "{sign}{int}")
    } else {
        let f = format!("{frac:06}");
        write!(w, "{sign}{int}.{}", f.trim_end_matches('0'))
    }
}

/// Streams a Chrome trace: [`ChromeWriter::begin`], then
/// [`ChromeWriter::warp`] for each warp, then [`ChromeWriter::finish`].
pub struct ChromeWriter<W: Write> {
    w: W,
    opts: ChromeOptions,
    t0: i64,
    first: bool,
    seen_pids: HashSet<u64>,
    names: HashMap<u16, String>,
    regions: Regions,
    events: u64,
    unknown_regions: Vec<u16>,
}

impl<W: Write> ChromeWriter<W> {
    /// Starts the file. `t0_ps` is the time (from the launch origin) that
    /// becomes 0 in the file: the launch's first event.
    pub fn begin(mut w: W, regions: &Regions, opts: ChromeOptions, t0_ps: i64) -> io::Result<Self> {
        w.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        Ok(ChromeWriter {
            w,
            opts,
            t0: t0_ps,
            first: true,
            seen_pids: HashSet::new(),
            names: HashMap::new(),
            regions: regions.clone(),
            events: 0,
            unknown_regions: Vec::new(),
        })
    }

    /// Trace events written so far (metadata events not counted).
    pub fn events_written(&self) -> u64 {
        self.events
    }

    /// Region ids seen that the region table does not name, in order seen.
    pub fn unknown_regions(&self) -> &[u16] {
        &self.unknown_regions
    }

    fn sep(&mut self) -> io::Result<()> {
        if self.first {
            self.first = false;
            Ok(())
        } else {
            self.w.write_all(b",\n")
        }
    }

    fn name_json(&mut self, region: u16) -> io::Result<String> {
        if let Some(n) = self.names.get(&region) {
            return Ok(n.clone());
        }
        if self.regions.get(region).is_none() {
            self.unknown_regions.push(region);
        }
        let s = serde_json::to_string(&self.regions.name(region)).map_err(io::Error::other)?;
        self.names.insert(region, s.clone());
        Ok(s)
    }

    fn meta_event(&mut self, name: &str, pid: u64, tid: u64, arg: &str) -> io::Result<()> {
        self.sep()?;
        write!(
            self.w,
            "{{\"ph\":\"M\",\"name\":\"{name}\",\"pid\":{pid},\"tid\":{tid},\"args\":{arg}}}"
        )
    }

    /// Writes one warp: its process and thread names (once per process),
    /// then its events.
    pub fn warp(&mut self, warp: &WarpTrace) -> io::Result<()> {
        let id = warp.id;
        let (pid, tid) = if self.opts.by_sm {
            (
                u64::from(id.sm),
                u64::from(id.block) * 32 + u64::from(id.warp),
            )
        } else {
            (u64::from(id.block), u64::from(id.warp))
        };
        if self.seen_pids.insert(pid) {
            let pname = if self.opts.by_sm {
                format!("SM {:03}", id.sm)
            } else {
                format!("SM {:03} Block {:04}", id.sm, id.block)
            };
            let arg = format!("{{\"name\":{}}}", json_str(&pname)?);
            self.meta_event("process_name", pid, 0, &arg)?;
            self.meta_event(
                "process_sort_index",
                pid,
                0,
                &format!("{{\"sort_index\":{pid}}}"),
            )?;
        }
        let tname = if self.opts.by_sm {
            format!("Block {:04} Warp {:02}", id.block, id.warp)
        } else {
            format!("Warp {:02}", id.warp)
        };
        let arg = format!("{{\"name\":{}}}", json_str(&tname)?);
        self.meta_event("thread_name", pid, tid, &arg)?;
        self.meta_event(
            "thread_sort_index",
            pid,
            tid,
            &format!("{{\"sort_index\":{tid}}}"),
        )?;
        let args = format!(
            "{{\"sm\":{},\"block\":{},\"warp\":{}}}",
            id.sm, id.block, id.warp
        );
        if self.opts.raw_events {
            for e in &warp.events {
                self.event(pid, tid, &args, e)?;
            }
        } else {
            // Spans and marks merged by time, so each thread reads in order.
            let mut marks = warp.marks().peekable();
            for s in &warp.spans {
                while let Some(m) = marks.next_if(|m| m.t_ps < s.start_ps) {
                    self.event(pid, tid, &args, m)?;
                }
                self.span(pid, tid, &args, s)?;
            }
            for m in marks {
                self.event(pid, tid, &args, m)?;
            }
        }
        Ok(())
    }

    fn span(&mut self, pid: u64, tid: u64, args: &str, s: &Span) -> io::Result<()> {
        let name = self.name_json(s.region)?;
        self.sep()?;
        write!(self.w, "{{\"name\":{name},\"ph\":\"X\",\"ts\":")?;
        write_us(&mut self.w, s.start_ps.saturating_sub(self.t0))?;
        self.w.write_all(b",\"dur\":")?;
        write_us(&mut self.w, s.end_ps.saturating_sub(s.start_ps).max(0))?;
        write!(
            self.w,
            ",\"pid\":{pid},\"tid\":{tid},\"cname\":\"{}\",\"args\":{args}}}",
            color(s.region)
        )?;
        self.events += 1;
        Ok(())
    }

    fn event(&mut self, pid: u64, tid: u64, args: &str, e: &TimedEvent) -> io::Result<()> {
        let name = self.name_json(e.region)?;
        let ph = match e.kind {
            EventKind::Begin => "\"B\"",
            EventKind::End => "\"E\"",
            EventKind::Mark => "\"i\",\"s\":\"t\"",
        };
        self.sep()?;
        write!(self.w, "{{\"name\":{name},\"ph\":{ph},\"ts\":")?;
        write_us(&mut self.w, e.t_ps.saturating_sub(self.t0))?;
        write!(
            self.w,
            ",\"pid\":{pid},\"tid\":{tid},\"cname\":\"{}\",\"args\":{args}}}",
            color(e.region)
        )?;
        self.events += 1;
        Ok(())
    }

    /// Ends the event list, writes `otherData` and returns the writer.
    pub fn finish(mut self, other_data: &serde_json::Value) -> io::Result<W> {
        self.w.write_all(b"\n],\n\"otherData\":")?;
        serde_json::to_writer(&mut self.w, other_data).map_err(io::Error::other)?;
        self.w.write_all(b"}\n")?;
        self.w.flush()?;
        Ok(self.w)
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
    }
}
