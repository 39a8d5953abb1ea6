//! A session's PC sampling: the modules ktrace loaded (so each sample's
//! cubin is known with its instruction → region map), the one sampler of
//! the process, and each launch's samples made into [`StallSamples`].
//!
//! Sampling is enabled on a context by the first of [`load_module`] and
//! [`TraceSession::new`](super::TraceSession::new) that runs with
//! `KTRACE_STALLS` (or [`TraceConfig::stalls`](super::TraceConfig::stalls))
//! on, and stays on for the process: CUPTI samples every kernel of the
//! context, serialized. One context (one GPU) per process is sampled.
//!
//! [`load_module`]: super::load_module

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::CudaContext;

use crate::error::{Error, Result};
use crate::format::pc_map::PcMap;
use crate::format::stalls::{short_reason, PcSample, StallSamples};
use crate::settings::stalls_from_env;
use crate::switch::KernelModule;

use super::cupti::PcSampler;

/// An image ktrace loaded.
struct Loaded {
    image: &'static [u8],
    map: &'static str,
    traced: bool,
    /// CUPTI's CRC of the image, once computed.
    crc: Option<u64>,
    parsed: Option<std::result::Result<PcMap, String>>,
}

struct State {
    loaded: Vec<Loaded>,
    sampler: Option<PcSampler>,
}

static STATE: Mutex<State> = Mutex::new(State {
    loaded: Vec::new(),
    sampler: None,
});

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Notes that one build of `m` was loaded; with `KTRACE_STALLS` on, starts
/// sampling `ctx` first (before the module is in it).
pub(super) fn loading(ctx: &Arc<CudaContext>, m: &KernelModule, traced: bool) -> Result<()> {
    let period = stalls_from_env()?;
    if period > 0 {
        start(ctx, period)?;
    }
    let image = m.image(traced);
    let mut s = state();
    if !s.loaded.iter().any(|l| std::ptr::eq(l.image, image)) {
        s.loaded.push(Loaded {
            image,
            map: m.map(traced),
            traced,
            crc: None,
            parsed: None,
        });
    }
    Ok(())
}

/// Starts sampling `ctx` every `2^period_log2` cycles, unless it is
/// sampled already (then the first period holds). Another context is an
/// error: one per process.
pub(super) fn start(ctx: &Arc<CudaContext>, period_log2: u32) -> Result<()> {
    let mut s = state();
    match &s.sampler {
        Some(p) if p.context_ordinal() == ctx.ordinal() => Ok(()),
        Some(p) => Err(Error::Cupti(format!(
            "device {} is sampled already; one device per process",
            p.context_ordinal()
        ))),
        None => {
            s.sampler = Some(PcSampler::new(ctx, period_log2)?);
            Ok(())
        }
    }
}

/// Reads the samples CUPTI holds and drops them (the work before a
/// launch: the session's clock handshake).
pub(super) fn discard() -> Result<()> {
    let mut s = state();
    if let Some(p) = s.sampler.as_mut() {
        p.take()?;
    }
    Ok(())
}

/// The samples of the launch that just finished (the caller waited for
/// it), as launch `launch` of `kernel`; `None` without a sampler.
pub(super) fn take(launch: u32, kernel: &str) -> Result<Option<StallSamples>> {
    let mut guard = state();
    let s = &mut *guard;
    let Some(sampler) = s.sampler.as_mut() else {
        return Ok(None);
    };
    let raw = sampler.take()?;
    for l in s.loaded.iter_mut().filter(|l| l.crc.is_none()) {
        l.crc = Some(sampler.cubin_crc(l.image)?);
    }
    let mut out = StallSamples {
        launch,
        kernel: kernel.to_string(),
        traced: crate::switch::enabled(),
        period_log2: sampler.period_log2,
        reasons: sampler
            .reasons
            .iter()
            .map(|r| short_reason(r).to_string())
            .collect(),
        total_samples: raw.total,
        dropped_samples: raw.dropped,
        unmapped: None,
        pcs: Vec::with_capacity(raw.pcs.len()),
    };
    let empty = PcMap::default();
    for pc in raw.pcs {
        let loaded = s.loaded.iter_mut().find(|l| l.crc == Some(pc.cubin_crc));
        let map = match loaded {
            Some(l) => {
                out.traced = l.traced;
                let parsed = l
                    .parsed
                    .get_or_insert_with(|| PcMap::parse(l.map).map_err(|e| e.to_string()));
                match parsed {
                    Ok(m) => {
                        if let (Some(why), None) = (&m.none, &out.unmapped) {
                            out.unmapped = Some(format!("the build made no map: {why}"));
                        }
                        m
                    }
                    Err(e) => {
                        out.unmapped.get_or_insert_with(|| e.clone());
                        &empty
                    }
                }
            }
            None => {
                out.unmapped.get_or_insert_with(|| {
                    format!(
                        "{} is in an image that ktrace did not load (load it with \
                         ktrace_runtime::load_module)",
                        pc.function
                    )
                });
                &empty
            }
        };
        out.pcs
            .push(PcSample::placed(&pc.function, pc.offset, pc.counts, map));
    }
    Ok(Some(out))
}
