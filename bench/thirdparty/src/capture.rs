//! After a pass's timed rounds: each design's `every` configuration
//! launched once more the way a traced program runs it (a fresh
//! `TraceSession`, `FunctionPair::for_arg`, `finish_launch`), its result
//! checked and its capture decoded into one line: warps, events, anchors,
//! drops, the fullest ring, spans per region, diagnostics and the SM clock
//! that the capture's anchors measured. Whatever fails is said on the line;
//! nothing here panics the bench.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::driver::CudaStream;
use ktrace_runtime::decode::{describe_clock, ClockStats, DecodeOptions, Decoder, WarpTrace};
use ktrace_runtime::format::buffer::LaunchBuffer;
use ktrace_runtime::{FunctionPair, TraceConfig, TraceSession};

use crate::designs::module_name;
use crate::problem::{Problem, Result};

/// The line of one design: `  sgemm   default   max rel err ...`.
pub fn line(
    stream: &std::sync::Arc<CudaStream>,
    problem: &mut dyn Problem,
    pair: &FunctionPair,
    design: &str,
    clock_khz: u64,
    regions: &[(u16, &str)],
) -> String {
    let head = format!("  {:<7} {design:<9} ", problem.name());
    match capture(stream, problem, pair, design, clock_khz, regions) {
        Ok(text) => head + &text,
        Err(e) => format!("{head}capture failed: {e}"),
    }
}

fn capture(
    stream: &std::sync::Arc<CudaStream>,
    problem: &mut dyn Problem,
    pair: &FunctionPair,
    design: &str,
    clock_khz: u64,
    regions: &[(u16, &str)],
) -> Result<String> {
    problem.clear_output()?;
    ktrace_runtime::set_enabled(Some(true));
    let cfg = problem.config();
    let mut tc = TraceConfig::for_launch(&cfg).kernel(module_name(problem.name(), design));
    tc.cap = problem.cap();
    tc.quiet = true;
    let mut session = TraceSession::new(stream, tc, regions)?;
    let text = record(&mut session, problem, pair, clock_khz, regions);
    // Nothing is written: the capture was for this line only.
    session.discard();
    text
}

fn record(
    session: &mut TraceSession,
    problem: &mut dyn Problem,
    pair: &FunctionPair,
    clock_khz: u64,
    regions: &[(u16, &str)],
) -> Result<String> {
    let arg = session.arg();
    problem.launch(pair.for_arg(&arg), &arg)?;
    session.finish_launch()?;
    let check = match problem.check() {
        Ok(c) => c.describe(),
        Err(e) => format!("result check failed: {e}"),
    };
    let launch = session
        .launches()
        .first()
        .ok_or("the session kept no launch")?;
    let fill = *session
        .fills()
        .first()
        .ok_or("the session measured no ring fill")?;
    let opts = DecodeOptions {
        nominal_clock_khz: clock_khz,
        ..DecodeOptions::default()
    };
    let decoded: std::result::Result<Stats, String> = match launch.buffer() {
        Ok(buffer) => catch_unwind(AssertUnwindSafe(|| Stats::of(buffer, &opts)))
            .map_err(|p| format!("the decoder panicked: {}", panic_text(&*p))),
        Err(e) => Err(format!("reading the buffer: {e}")),
    };
    let s = match decoded {
        Ok(s) => s,
        Err(e) => return Ok(format!("{check}; decoding failed: {e}")),
    };
    let spans: Vec<String> = s
        .spans
        .iter()
        .map(|(&id, &(n, ps))| {
            let name = regions
                .iter()
                .find(|(r, _)| *r == id)
                .map_or_else(|| format!("region {id}"), |(_, n)| n.to_string());
            (name, (n, ps))
        })
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .map(|(name, (n, ps))| format!("{name} {n} x {:.2} us", ps as f64 / n.max(1) as f64 / 1e6))
        .collect();
    let diagnostics: usize = s.diagnostics.values().sum();
    let mut text = format!(
        "{check}; warps {} (unflushed {}), events {} (expected {}), anchors {}, dropped {} \
         (overflowed warps {}), fullest warp {} of {} entries; spans: {}; diagnostics {}; {}",
        s.warps,
        s.unflushed,
        s.events,
        problem.expected_events(),
        fill.anchors,
        s.dropped,
        fill.overflowed,
        fill.max_entries,
        fill.cap,
        if spans.is_empty() {
            "none".to_string()
        } else {
            spans.join(", ")
        },
        diagnostics,
        describe_clock(&s.clock)
    );
    if diagnostics > 0 {
        let kinds: Vec<String> = s
            .diagnostics
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        text.push_str(&format!("\n      diagnostics: {}", kinds.join(", ")));
    }
    Ok(text)
}

/// What the decoded warps of a launch add up to.
#[derive(Default)]
struct Stats {
    warps: u64,
    unflushed: u64,
    events: u64,
    dropped: u64,
    /// Per region id: spans and their total duration in ps.
    spans: BTreeMap<u16, (u64, u128)>,
    /// Per kind: diagnostics, the launch's and every warp's.
    diagnostics: BTreeMap<&'static str, usize>,
    clock: ClockStats,
}

impl Stats {
    /// Decodes every warp of `buffer`, on as many threads as there are
    /// cores (each decodes a run of warps and keeps only its sums).
    fn of(buffer: LaunchBuffer<'_>, opts: &DecodeOptions) -> Stats {
        let decoder = Decoder::new(buffer, opts);
        let n = decoder.warp_count();
        let threads = std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .clamp(1, 32);
        let per = n.div_ceil(threads).max(1);
        let mut total = Stats::default();
        for d in decoder.diagnostics().items() {
            *total.diagnostics.entry(d.kind()).or_default() += 1;
        }
        let parts: Vec<Stats> = std::thread::scope(|scope| {
            let decoder = &decoder;
            let handles: Vec<_> = (0..n)
                .step_by(per)
                .map(|from| {
                    scope.spawn(move || {
                        let mut part = Stats::default();
                        for i in from..(from + per).min(n) {
                            if let Some(w) = decoder.warp(i) {
                                part.add(&w);
                            }
                        }
                        part
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        for p in parts {
            total.merge(p);
        }
        total
    }

    fn add(&mut self, w: &WarpTrace) {
        self.warps += 1;
        self.unflushed += u64::from(!w.flushed);
        self.events += w.events.len() as u64;
        self.dropped += w.dropped;
        for s in &w.spans {
            let e = self.spans.entry(s.region).or_default();
            e.0 += 1;
            e.1 += u128::from(s.dur_ps());
        }
        for d in &w.diagnostics {
            *self.diagnostics.entry(d.kind()).or_default() += 1;
        }
        self.clock.merge(&w.clock);
    }

    fn merge(&mut self, o: Stats) {
        self.warps += o.warps;
        self.unflushed += o.unflushed;
        self.events += o.events;
        self.dropped += o.dropped;
        for (id, (n, ps)) in o.spans {
            let e = self.spans.entry(id).or_default();
            e.0 += n;
            e.1 += ps;
        }
        for (k, n) in o.diagnostics {
            *self.diagnostics.entry(k).or_default() += n;
        }
        self.clock.merge(&o.clock);
    }
}

/// A panic's message.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
