//! The timed rounds of one kernel: every configuration launched once a
//! round, in an order rotated each round, each launch between two CUDA
//! events; per configuration the median.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction};
use ktrace_runtime::KtraceArg;

use crate::problem::{Problem, Result};

/// Untimed rounds before a pass's timed ones.
pub const WARMUP_ROUNDS: usize = 2;

/// One configuration: a build launched with an argument.
pub struct Config {
    /// The design (`untraced` for the untraced build).
    pub design: &'static str,
    /// `-`, `copy`, `every`, `off` or `1in33`.
    pub label: &'static str,
    /// The function launched.
    pub function: CudaFunction,
    /// Its trace argument: a session's buffer, or [`KtraceArg::OFF`].
    pub arg: KtraceArg,
}

/// Runs `rounds` timed rounds of `configs` (after [`WARMUP_ROUNDS`]
/// untimed ones) and returns each configuration's median in ms.
pub fn medians(
    ctx: &Arc<CudaContext>,
    problem: &mut dyn Problem,
    configs: &[Config],
    rounds: usize,
) -> Result<Vec<f64>> {
    let stream = ctx.default_stream();
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let events: Vec<(CudaEvent, CudaEvent)> = configs
        .iter()
        .map(|_| Ok((ctx.new_event(flags)?, ctx.new_event(flags)?)))
        .collect::<Result<_>>()?;
    let n = configs.len();
    let mut times = vec![Vec::with_capacity(rounds); n];
    for round in 0..WARMUP_ROUNDS + rounds {
        for i in 0..n {
            let at = (round + i) % n;
            let (c, (start, end)) = (&configs[at], &events[at]);
            start.record(&stream)?;
            problem.launch(&c.function, &c.arg)?;
            end.record(&stream)?;
            end.synchronize()?;
            if round >= WARMUP_ROUNDS {
                times[at].push(start.elapsed_ms(end)?);
            }
        }
    }
    Ok(times.iter_mut().map(|t| median(t)).collect())
}

/// The median of `v` (which it sorts); NaN when empty.
pub fn median(v: &mut [f32]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => f64::from(v[n / 2]),
        _ => 0.5 * (f64::from(v[n / 2 - 1]) + f64::from(v[n / 2])),
    }
}

/// A row of the table, as tp_bench has always printed it:
/// `sgemm   default   every          3.9570     +4.75%`.
pub fn row(kernel: &str, design: &str, label: &str, ms: f64, untraced_ms: f64) -> String {
    format!(
        "{kernel:<7} {design:<9} {label:<9} {ms:>11.4} {:>+9.2}%",
        100.0 * (ms / untraced_ms - 1.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn rows_read_as_the_earlier_logs() {
        // docs/lab/profiles/lease-2026-12-06-h100-run58.txt
        assert_eq!(
            row("sgemm", "default", "every", 3.9570, 3.7775),
            "sgemm   default   every          3.9570     +4.75%"
        );
        assert_eq!(
            row("sgemm", "untraced", "copy", 3.7713, 3.7775),
            "sgemm   untraced  copy           3.7713     -0.16%"
        );
        assert_eq!(
            row("fastcu", "noanchor", "1in33", 1.5365, 1.5342),
            "fastcu  noanchor  1in33          1.5365     +0.15%"
        );
    }
}
