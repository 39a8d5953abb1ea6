//! The tracing switch: whether tracing is on (`KTRACE=1`, or
//! [`set_enabled`]), and [`KernelModule`], the traced and untraced builds of
//! a kernel file that it picks between. Nothing here touches the device, so
//! the region table and kernels that `include_ktrace!` brings in compile
//! without the `cuda` feature.

use std::sync::atomic::{AtomicU8, Ordering};

/// `KTRACE`: tracing is on when it is `1`.
pub const ENV_ENABLE: &str = "KTRACE";

/// 0: follow `KTRACE`; 1: forced off; 2: forced on.
static FORCED: AtomicU8 = AtomicU8::new(0);

/// Whether tracing is on: forced through [`set_enabled`], or else `KTRACE=1`.
pub fn enabled() -> bool {
    match FORCED.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => crate::settings::var(ENV_ENABLE).is_some_and(|v| v == "1"),
    }
}

/// Forces tracing on or off for the whole process (`None`: follow `KTRACE`
/// again). Affects sessions and modules created afterwards.
pub fn set_enabled(on: Option<bool>) {
    let v = match on {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    };
    FORCED.store(v, Ordering::Relaxed);
}

/// A kernel file built twice by ktrace-build: with markers (traced) and
/// without (untraced). The generated `ktrace.rs` defines one constant per
/// kernel file.
#[derive(Clone, Copy, Debug)]
pub struct KernelModule {
    /// The kernel file's name.
    pub name: &'static str,
    /// The cubin built with tracing on.
    pub traced: &'static [u8],
    /// The cubin built with tracing off.
    pub untraced: &'static [u8],
    /// The traced cubin's instruction → region map, as ktrace-build wrote
    /// it (read by [`crate::format::pc_map::PcMap::parse`]).
    pub traced_map: &'static str,
    /// The untraced cubin's instruction → region map.
    pub untraced_map: &'static str,
}

impl KernelModule {
    /// The cubin for tracing on or off.
    pub fn image(&self, traced: bool) -> &'static [u8] {
        if traced {
            self.traced
        } else {
            self.untraced
        }
    }

    /// The instruction → region map of the cubin for tracing on or off.
    pub fn map(&self, traced: bool) -> &'static str {
        if traced {
            self.traced_map
        } else {
            self.untraced_map
        }
    }
}
