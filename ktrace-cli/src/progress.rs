//! A progress line on stderr for exports that take a while: warps decoded
//! out of the launch's, and events decoded per second.
//!
//! It is drawn only when stderr is a terminal (and `TERM` is not `dumb`),
//! only once the export has run for [`DELAY`], and at most once per
//! [`INTERVAL`]; piped or redirected, it writes nothing. Each update costs
//! one clock read; the export calls it once per warp.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use ktrace_runtime::export::ExportProgress;

/// How long an export runs before the line appears.
pub const DELAY: Duration = Duration::from_secs(1);

/// The least time between two draws.
pub const INTERVAL: Duration = Duration::from_millis(200);

/// Width of the bar, in characters.
const BAR: usize = 24;

/// The progress line of one export.
pub struct ProgressLine<W: Write> {
    out: W,
    enabled: bool,
    label: String,
    start: Instant,
    last_draw: Option<Instant>,
}

impl ProgressLine<io::Stderr> {
    /// A line on stderr, labelled `label`, enabled when stderr is a
    /// terminal.
    pub fn stderr(label: String) -> Self {
        let err = io::stderr();
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        let enabled = err.is_terminal() && !dumb;
        ProgressLine::new(err, enabled, label, Instant::now())
    }
}

impl<W: Write> ProgressLine<W> {
    /// A line to `out` for an export that started at `start`; writes
    /// nothing unless `enabled`.
    pub fn new(out: W, enabled: bool, label: String, start: Instant) -> Self {
        ProgressLine {
            out,
            enabled,
            label,
            start,
            last_draw: None,
        }
    }

    /// Takes the export's progress; draws when it is time to.
    pub fn update(&mut self, p: &ExportProgress) {
        if self.enabled {
            self.update_at(p, Instant::now());
        }
    }

    /// [`ProgressLine::update`] at time `now`.
    pub fn update_at(&mut self, p: &ExportProgress, now: Instant) {
        if !self.enabled {
            return;
        }
        let elapsed = now.saturating_duration_since(self.start);
        if elapsed < DELAY {
            return;
        }
        if self
            .last_draw
            .is_some_and(|t| now.saturating_duration_since(t) < INTERVAL)
        {
            return;
        }
        self.last_draw = Some(now);
        let line = render(&self.label, p, elapsed);
        // A failed write to stderr is not worth stopping the export for.
        let _ = write!(self.out, "\r{line}\x1b[K");
        let _ = self.out.flush();
    }

    /// Clears the line, if it was drawn.
    pub fn finish(&mut self) {
        if self.last_draw.take().is_some() {
            let _ = write!(self.out, "\r\x1b[K");
            let _ = self.out.flush();
        }
    }

    /// The writer (for tests).
    #[cfg(test)]
    fn into_inner(self) -> W {
        self.out
    }
}

/// The line: `LABEL [=====>      ] 1200/4800 warps, 8.3 M events/s, 2.1 s`.
pub fn render(label: &str, p: &ExportProgress, elapsed: Duration) -> String {
    let total = p.warps.max(1);
    let filled = (p.warps_done.min(total) * BAR) / total;
    let mut bar = "=".repeat(filled);
    if filled < BAR {
        bar.push('>');
        bar.push_str(&" ".repeat(BAR - filled - 1));
    }
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        p.events as f64 / secs / 1e6
    } else {
        0.0
    };
    format!(
        "{label} [{bar}] {}/{} warps, {rate:.1} M events/s, {secs:.1} s",
        p.warps_done, p.warps
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(done: usize, events: u64) -> ExportProgress {
        ExportProgress {
            warps_done: done,
            warps: 100,
            events,
        }
    }

    #[test]
    fn the_line() {
        let p = at(50, 12_000_000);
        assert_eq!(
            render("launch 0:", &p, Duration::from_millis(1500)),
            "launch 0: [============>           ] 50/100 warps, 8.0 M events/s, 1.5 s"
        );
        let done = render("x", &at(100, 0), Duration::from_secs(2));
        assert!(
            done.starts_with("x [========================] 100/100"),
            "{done}"
        );
        let empty = ExportProgress::default();
        let none = render("x", &empty, Duration::ZERO);
        assert_eq!(
            none,
            format!("x [>{}] 0/0 warps, 0.0 M events/s, 0.0 s", " ".repeat(23))
        );
    }

    #[test]
    fn drawn_after_a_second_and_at_most_five_times_a_second() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut line = ProgressLine::new(Vec::new(), true, "l".into(), t0);
        // Calls every 10 ms over 2 s: nothing in the first second, then
        // one draw per 200 ms.
        for i in 0..200 {
            line.update_at(&at(i / 2, i as u64 * 1000), ms(i as u64 * 10));
        }
        line.finish();
        let out = String::from_utf8(line.into_inner()).unwrap();
        let draws: Vec<&str> = out.split('\r').filter(|s| s.contains("warps")).collect();
        assert_eq!(draws.len(), 5, "{out:?}");
        assert!(draws[0].starts_with("l [") && draws[0].contains(" 50/100 warps"));
        assert!(draws[0].ends_with(", 1.0 s\x1b[K"), "{:?}", draws[0]);
        assert!(draws[4].contains(" 90/100 warps"), "{:?}", draws[4]);
        // Cleared at the end.
        assert!(out.ends_with("\r\x1b[K"), "{out:?}");
    }

    #[test]
    fn quiet_when_disabled_or_quick() {
        let t0 = Instant::now();
        let mut off = ProgressLine::new(Vec::new(), false, "l".into(), t0);
        off.update_at(&at(1, 1), t0 + Duration::from_secs(5));
        off.finish();
        assert!(off.into_inner().is_empty());
        let mut quick = ProgressLine::new(Vec::new(), true, "l".into(), t0);
        quick.update_at(&at(100, 1), t0 + Duration::from_millis(999));
        quick.finish();
        assert!(quick.into_inner().is_empty());
    }
}
