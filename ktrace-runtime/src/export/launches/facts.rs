//! What [`LaunchInfo`] tells of a launch, owned and without its buffer, and
//! reading it of every launch of a capture file a record at a time.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use super::{host_range, slot_facts, GpuSpan, LaunchInfo};
use crate::error::Result;
use crate::format::capture::{Capture, HostSpan, LaunchCapture, LaunchOrigin};
use crate::format::clock_sync::ClockSync;
use crate::timeline::HostAxis;

/// One launch as its slot metadata tells it, without its buffer: a small
/// record that [`LaunchFacts::info`] makes a [`LaunchInfo`] of once the
/// capture's clock syncs are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchFacts {
    /// Its index (the `launch` of its shape).
    pub launch: u32,
    /// Its kernel's name (empty when the session was not told it), shared
    /// among the launches of one kernel when read through [`KernelNames`].
    pub kernel: Arc<str>,
    /// Its site and epoch, for a launch of a continuous session.
    pub origin: Option<LaunchOrigin>,
    /// Slots opened (warps that ran traced).
    pub warps: u64,
    /// Of those, the slots that flushed.
    pub flushed: u64,
    /// Its span on the GPU; `None` when no slot was opened and flushed.
    pub gpu: Option<GpuSpan>,
    /// Its recorded enqueue → completion span, if any.
    pub host_span: Option<HostSpan>,
}

impl LaunchFacts {
    /// The facts of `l`; fails only when its buffer does not match its
    /// shape.
    pub fn of(l: &LaunchCapture) -> Result<LaunchFacts> {
        LaunchFacts::named(l, Arc::from(l.kernel.as_str()))
    }

    /// The facts of `l`, its kernel's name taken from `names`.
    pub fn with_names(l: &LaunchCapture, names: &mut KernelNames) -> Result<LaunchFacts> {
        LaunchFacts::named(l, names.get(&l.kernel))
    }

    fn named(l: &LaunchCapture, kernel: Arc<str>) -> Result<LaunchFacts> {
        let (warps, flushed, gpu) = slot_facts(l)?;
        Ok(LaunchFacts {
            launch: l.shape.launch,
            kernel,
            origin: l.origin,
            warps,
            flushed,
            gpu,
            host_span: l.host_span,
        })
    }

    /// The launch's [`LaunchInfo`], its host range placed through `axis`
    /// when one is given (as [`super::launch_info`] places it).
    pub fn info(&self, axis: Option<&HostAxis>) -> LaunchInfo<'_> {
        LaunchInfo {
            launch: self.launch,
            kernel: &self.kernel,
            origin: self.origin,
            warps: self.warps,
            flushed: self.flushed,
            gpu: self.gpu,
            host: host_range(self.gpu, self.host_span, axis),
        }
    }
}

/// Kernel names, each held once however many launches share it.
#[derive(Clone, Debug, Default)]
pub struct KernelNames(HashSet<Arc<str>>);

impl KernelNames {
    /// The name `name`, shared with every earlier launch of it.
    pub fn get(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.0.get(name) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(name);
        self.0.insert(n.clone());
        n
    }
}

/// A capture file read for its launches' facts: the facts of every launch,
/// and the capture holding only the launches that were asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureFacts {
    /// The capture: its device, regions, clock syncs, steps, sites and end,
    /// and the launches kept.
    pub capture: Capture,
    /// Every launch of the file, in order.
    pub launches: Vec<LaunchFacts>,
}

impl CaptureFacts {
    /// The facts of every launch of `cap`, and `cap` itself.
    pub fn of(cap: Capture) -> Result<CaptureFacts> {
        let mut names = KernelNames::default();
        let launches = cap
            .launches
            .iter()
            .map(|l| LaunchFacts::with_names(l, &mut names))
            .collect::<Result<_>>()?;
        Ok(CaptureFacts {
            capture: cap,
            launches,
        })
    }

    /// [`LaunchFacts::info`] of every launch, placed on the host's clock
    /// through the capture's clock syncs when it has some.
    pub fn infos(&self) -> Result<Vec<LaunchInfo<'_>>> {
        facts_infos(&self.launches, &self.capture.clock_syncs)
    }
}

/// [`LaunchFacts::info`] of each of `facts`, placed on the host's clock
/// through `syncs` when there are some.
pub fn facts_infos<'f>(
    facts: &'f [LaunchFacts],
    syncs: &[ClockSync],
) -> Result<Vec<LaunchInfo<'f>>> {
    let axis = HostAxis::new(syncs)?;
    Ok(facts.iter().map(|f| f.info(axis.as_ref())).collect())
}

/// Reads the capture file at `path` a record at a time
/// ([`Capture::read_selected`]): the facts of every launch, and the capture
/// with the launches for which `keep` is true. With a `keep` that keeps
/// none, it takes the memory of a small record per launch whatever the
/// size of their buffers.
pub fn read_facts(
    path: impl AsRef<Path>,
    keep: impl FnMut(&LaunchCapture) -> bool,
) -> Result<CaptureFacts> {
    read_facts_on(path, 1, keep)
}

/// [`read_facts`], each large launch buffer read on up to `threads`
/// threads (0: one per core).
pub fn read_facts_on(
    path: impl AsRef<Path>,
    threads: usize,
    mut keep: impl FnMut(&LaunchCapture) -> bool,
) -> Result<CaptureFacts> {
    let mut names = KernelNames::default();
    let mut launches = Vec::new();
    let mut failed = None;
    let capture = Capture::read_selected_on(path, threads, |l| {
        match LaunchFacts::with_names(l, &mut names) {
            Ok(f) => launches.push(f),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
        keep(l)
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(CaptureFacts { capture, launches }),
    }
}
