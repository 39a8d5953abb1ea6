//! The drain thread's work for a [`ContinuousSession`](super::ContinuousSession):
//! each round it reads every site, works out which kept launches have
//! ended ([`complete_kept`]), plans what to copy ([`drain_plan`]), copies
//! those slabs through pinned memory on its own stream, frees them on the
//! device and hands each slab, made into a launch ([`slab_launch`]), to the
//! writer thread.

use std::sync::atomic::Ordering;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result as cu, sys, CudaStream};

use crate::error::{Error, Result};
use crate::format::layout::{Site, SlotMeta, META_BYTES};
use crate::format::shape::LaunchShape;
use crate::format::site::{
    complete_kept, drain_plan, finished_until, fitted_slab, gpu_span, newest_plan, opened_after,
    opened_kept, overwritten_during, slab_finished, slab_launch, DrainPlan, SiteRead,
};

use super::super::device::driver;
use super::{Counters, Message, SiteFill, SiteSlot};

/// Pinned host memory the drain thread copies into: copies from the arena
/// run at the link's speed and need no staging by the driver.
struct Staging {
    ptr: *mut u8,
    len: usize,
}

impl Staging {
    fn new(len: usize) -> Result<Self> {
        // SAFETY: a plain allocation, freed in Drop.
        let ptr = unsafe { cu::malloc_host(len, 0) }.map_err(driver("allocating pinned memory"))?;
        Ok(Staging {
            ptr: ptr.cast(),
            len,
        })
    }

    fn bytes(&mut self, at: usize, len: usize) -> &mut [u8] {
        assert!(at + len <= self.len, "staging overrun");
        // SAFETY: inside the allocation, which `self` owns.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), len) }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_host; no copy into it is in flight
        // (every copy is waited for).
        let _ = unsafe { cu::free_host(self.ptr.cast()) };
    }
}

/// A drained slab's shape and bytes, at the capacity its warps needed,
/// and its step word (the host's step + 1, 0 before the first).
type Fitted = (LaunchShape, Vec<u8>, u64);

/// Bytes of pinned memory a drain round copies at most.
const STAGING_BYTES: usize = 64 << 20;
/// Bytes of a slab's step word.
const STEP_BYTES: usize = 8;

/// What the drain thread needs of a site, taken once per round.
struct SiteView {
    addr: u64,
    shape: LaunchShape,
    slab_bytes: u64,
    head_bytes: u64,
    kernel: String,
    drained: u32,
    last: SiteRead,
    /// Its launches may overlap (`SiteConfig::overlapping`).
    overlapping: bool,
}

/// The drain thread's state: its stream, its pinned memory, where drained
/// launches go, and the counters.
pub(super) struct Drainer {
    pub(super) stream: Arc<CudaStream>,
    staging: Staging,
    pub(super) tx: SyncSender<Message>,
    counters: Arc<Counters>,
    next_launch: u32,
    /// Per site, per slab: the launch drained from it last.
    drained_from: Vec<Vec<Option<u32>>>,
}

/// What [`Drainer::hand_over`] did with a round's slabs of one site.
struct Handed {
    /// GPU durations of the launches written, in ns.
    durations: Vec<u64>,
    /// Launches written.
    written: u64,
    /// Slabs that held no newer launch: dropped launches.
    dropped: u64,
    /// How full the written launches' rings were.
    fill: SiteFill,
}

impl Drainer {
    /// A drainer on `stream` (the drain thread's own), with its pinned
    /// memory, sending launches to `tx`.
    pub(super) fn new(
        stream: Arc<CudaStream>,
        tx: SyncSender<Message>,
        counters: Arc<Counters>,
    ) -> Result<Self> {
        Ok(Drainer {
            stream,
            staging: Staging::new(STAGING_BYTES)?,
            tx,
            counters,
            next_launch: 0,
            drained_from: Vec::new(),
        })
    }

    /// One pass over every site: reads every site's state with one wait,
    /// copies its ready slabs (a run of the ring at a time, as many as the
    /// pinned memory holds), hands them to the writer and tells the device
    /// they are free. Returns whether complete launches are still waiting
    /// (the pinned memory held fewer).
    pub(super) fn round(&mut self, sites: &Mutex<Vec<SiteSlot>>) -> Result<bool> {
        let views: Vec<SiteView> = sites
            .lock()
            .expect("sites")
            .iter()
            .map(|s| SiteView {
                addr: s.addr,
                shape: s.shape,
                slab_bytes: s.slab_bytes,
                head_bytes: s.head_bytes,
                kernel: s.config.kernel.clone(),
                drained: s.drained,
                last: s.last,
                overlapping: s.config.overlapping,
            })
            .collect();
        let states = self.site_states(&views)?;
        let mut waiting = false;
        for (i, (v, state)) in views.iter().zip(states).enumerate() {
            // A slab and its step word.
            let most = (STAGING_BYTES as u64 / (v.slab_bytes + STEP_BYTES as u64))
                .clamp(1, u64::from(u32::MAX)) as u32;
            let mut complete = complete_kept(Some(&v.last), &state);
            if v.overlapping {
                complete = self.finished_kept(v, &state, complete, most)?;
            }
            let (plan, raws, over) = if state.site.keeps_newest() {
                self.newest_copies(v, &state, complete, most)?
            } else {
                let plan = self.oldest_plan(i, v, &state, complete, most)?;
                let raws = self.copy_slabs(v, &plan.copy)?;
                (plan, raws, 0)
            };
            let drained = plan.drained;
            if drained != v.drained {
                let at = v.addr + std::mem::offset_of!(Site, drained) as u64;
                // SAFETY: inside the arena; the device only reads `drained`.
                unsafe {
                    cu::memcpy_htod_async(at, &drained.to_le_bytes(), self.stream.cu_stream())
                        .map_err(driver("freeing drained slabs"))?;
                }
            }
            let handed = self.hand_over(i, v, &plan.copy[over as usize..], raws)?;
            waiting |= plan.drained != complete;
            let mut s = sites.lock().expect("sites");
            let slot = &mut s[i];
            slot.drained = drained;
            slot.last = state;
            slot.written += handed.written;
            slot.dropped += u64::from(plan.dropped) + u64::from(over) + handed.dropped;
            slot.fill.merge(&handed.fill);
            for d in handed.durations {
                slot.durations.add(d);
            }
        }
        self.stream
            .synchronize()
            .map_err(driver("freeing drained slabs"))?;
        Ok(waiting)
    }

    /// The plan of a site that drops new launches when its ring is full:
    /// the kept launches that have ended, in order, but for those a full
    /// ring dropped (only once warps have dropped can a slab still hold
    /// the launch drained from it: then slot 0 of every slab says which
    /// launch it holds, in one strided copy).
    fn oldest_plan(
        &mut self,
        i: usize,
        v: &SiteView,
        state: &SiteRead,
        complete: u32,
        most: u32,
    ) -> Result<DrainPlan> {
        let count = state.site.ring();
        let heads = if state.site.dropped != 0 && complete.wrapping_sub(v.drained) as i32 > 0 {
            Some(self.slab_heads(v, count)?)
        } else {
            None
        };
        let from = self.drained_from.get(i).map_or(&[][..], Vec::as_slice);
        let written = |slab: u32| match &heads {
            None => true,
            Some(h) => opened_after(
                &h[slab as usize],
                from.get(slab as usize).copied().flatten(),
            ),
        };
        drain_plan(count, v.drained, complete, most, written)
    }

    /// The copies of a site that keeps the newest launches: the plan
    /// ([`newest_plan`]), the slabs' bytes, and how many of the oldest
    /// copies a launch may have written over while they were made (the
    /// site read again after them), which are lost.
    fn newest_copies(
        &mut self,
        v: &SiteView,
        state: &SiteRead,
        complete: u32,
        most: u32,
    ) -> Result<(DrainPlan, Vec<Fitted>, u32)> {
        let count = state.site.ring();
        let plan = newest_plan(count, v.drained, complete, opened_kept(state), most)?;
        if plan.copy.is_empty() {
            return Ok((plan, Vec::new(), 0));
        }
        let mut raws = self.copy_slabs(v, &plan.copy)?;
        let after = self.site_states(std::slice::from_ref(v))?;
        let first = v.drained.wrapping_add(plan.dropped);
        let over = overwritten_during(first, plan.copy.len() as u32, count, opened_kept(&after[0]));
        raws.drain(..over as usize);
        Ok((plan, raws, over))
    }

    /// Of a site whose launches may overlap, the kept launches of
    /// `drained..complete` whose warps have all finished, in order: the
    /// slabs' slot metadata (of `most` slabs at most) in one strided copy
    /// (two where they wrap round the ring), with one wait
    /// ([`finished_until`]).
    fn finished_kept(
        &mut self,
        v: &SiteView,
        state: &SiteRead,
        complete: u32,
        most: u32,
    ) -> Result<u32> {
        let ring = state.site.ring();
        let waiting = complete.wrapping_sub(v.drained);
        if waiting as i32 <= 0 || ring == 0 {
            return Ok(complete);
        }
        let n = waiting.min(ring).min(most.max(1));
        let warps = v.shape.slot_count() as usize;
        let slot_bytes = v.shape.slot_bytes();
        // The slabs follow each other, slot after slot: the metadata of a
        // run of them is one strided copy, and two where the run wraps
        // round the ring.
        debug_assert_eq!(v.slab_bytes, warps as u64 * slot_bytes);
        let start = v.drained & (ring - 1);
        let before_wrap = n.min(ring - start);
        let src = v.addr + v.head_bytes + u64::from(start) * v.slab_bytes;
        self.enqueue_metas(src, slot_bytes, before_wrap as usize * warps, 0)?;
        if n > before_wrap {
            let rows = (n - before_wrap) as usize * warps;
            self.enqueue_metas(
                v.addr + v.head_bytes,
                slot_bytes,
                rows,
                before_wrap as usize * warps,
            )?;
        }
        self.stream
            .synchronize()
            .map_err(driver("reading the slabs' slots"))?;
        let metas: Vec<SlotMeta> = (0..n as usize * warps).map(|j| self.meta_at(j)).collect();
        let first = v.drained;
        let upto = first.wrapping_add(n);
        let by_slab = |slab: u32| {
            let k = slab.wrapping_sub(first & (ring - 1)) & (ring - 1);
            slab_finished(&metas[k as usize * warps..(k as usize + 1) * warps])
        };
        let done = finished_until(ring, first, upto, by_slab);
        Ok(if done == upto { complete } else { done })
    }

    /// Every site's state, copied with one wait.
    fn site_states(&mut self, views: &[SiteView]) -> Result<Vec<SiteRead>> {
        const N: usize = SiteRead::BYTES;
        for (i, v) in views.iter().enumerate() {
            let dst = self.staging.bytes(i * N, N);
            // SAFETY: the site lies inside the arena, which outlives the
            // thread; `dst` is pinned and waited for below.
            unsafe { cu::memcpy_dtoh_async(dst, v.addr, self.stream.cu_stream()) }
                .map_err(driver("reading the trace sites"))?;
        }
        self.stream
            .synchronize()
            .map_err(driver("reading the trace sites"))?;
        Ok((0..views.len())
            .map(|i| {
                let b: [u8; N] = self.staging.bytes(i * N, N)[..].try_into().expect("a site");
                SiteRead::from_bytes(&b)
            })
            .collect())
    }

    /// Slot 0's metadata of each of a site's `count` slabs, in one strided
    /// copy.
    fn slab_heads(&mut self, v: &SiteView, count: u32) -> Result<Vec<SlotMeta>> {
        let n = count as usize;
        self.enqueue_metas(v.addr + v.head_bytes, v.slab_bytes, n, 0)?;
        self.stream
            .synchronize()
            .map_err(driver("reading the slabs' first slots"))?;
        Ok((0..n).map(|j| self.meta_at(j)).collect())
    }

    /// Enqueues one strided copy of `rows` slots' metadata, `pitch` bytes
    /// apart from device address `src`, into the pinned memory from the
    /// metadata's index `at` on; the caller waits for the stream.
    fn enqueue_metas(&mut self, src: u64, pitch: u64, rows: usize, at: usize) -> Result<()> {
        let dst = self.staging.bytes(at * META_BYTES, rows * META_BYTES);
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcPitch: pitch as usize,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            dstHost: dst.as_mut_ptr().cast(),
            dstDevice: 0,
            dstArray: std::ptr::null_mut(),
            dstPitch: META_BYTES,
            WidthInBytes: META_BYTES,
            Height: rows,
        };
        // SAFETY: the source rows lie inside the site's slabs, the
        // destination in pinned memory, which the caller waits for.
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, self.stream.cu_stream()) }
            .result()
            .map_err(driver("reading the slabs' slots"))
    }

    /// The `j`-th slot metadata copied by [`Drainer::enqueue_metas`].
    fn meta_at(&mut self, j: usize) -> SlotMeta {
        let b: &[u8; META_BYTES] = self.staging.bytes(j * META_BYTES, META_BYTES)[..]
            .try_into()
            .expect("a slot's metadata");
        SlotMeta::from_bytes(b)
    }

    /// The bytes of slabs `ready` of a site (consecutive indices of its ring
    /// copied as one run), each in a vector of its own at the capacity that
    /// holds what its warps recorded ([`fitted_slab`]), with its step word
    /// (below the site, the words of a run in one copy).
    fn copy_slabs(&mut self, v: &SiteView, ready: &[u32]) -> Result<Vec<Fitted>> {
        let sb = v.slab_bytes as usize;
        let steps_at = ready.len() * sb;
        let runs = ring_runs(ready);
        for &(k, run) in &runs {
            let src = v.addr + v.head_bytes + u64::from(ready[k]) * v.slab_bytes;
            let dst = self.staging.bytes(k * sb, run * sb);
            // SAFETY: the run lies inside the site's slabs; `dst` is pinned
            // and waited for below.
            unsafe { cu::memcpy_dtoh_async(dst, src, self.stream.cu_stream()) }
                .map_err(driver("draining the trace arena"))?;
            // Slab j's step is at the site's address - 8 (j + 1), so the
            // run's words lie backwards, its last slab's lowest.
            let below = STEP_BYTES as u64 * (u64::from(ready[k]) + run as u64);
            let dst = self
                .staging
                .bytes(steps_at + k * STEP_BYTES, run * STEP_BYTES);
            // SAFETY: the words lie below the site, inside its part of the
            // arena; `dst` is pinned and waited for below.
            unsafe { cu::memcpy_dtoh_async(dst, v.addr - below, self.stream.cu_stream()) }
                .map_err(driver("draining the trace arena"))?;
        }
        self.stream
            .synchronize()
            .map_err(driver("draining the trace arena"))?;
        let mut steps = vec![0u64; ready.len()];
        for &(k, run) in &runs {
            for (i, step) in steps[k..k + run].iter_mut().enumerate() {
                let at = steps_at + (k + run - 1 - i) * STEP_BYTES;
                let w = self.staging.bytes(at, STEP_BYTES);
                *step = u64::from_le_bytes(w[..].try_into().expect("a step word"));
            }
        }
        (0..ready.len())
            .map(|j| {
                let (shape, raw) = fitted_slab(self.staging.bytes(j * sb, sb), &v.shape)?;
                Ok((shape, raw, steps[j]))
            })
            .collect()
    }

    /// Makes drained slabs (ring indices `slabs`) into launches and sends
    /// them to the writer; a slab that still holds the launch drained from
    /// it before belongs to a dropped launch.
    fn hand_over(
        &mut self,
        site: usize,
        v: &SiteView,
        slabs: &[u32],
        raws: Vec<Fitted>,
    ) -> Result<Handed> {
        let mut handed = Handed {
            durations: Vec::with_capacity(raws.len()),
            written: 0,
            dropped: 0,
            fill: SiteFill {
                cap: v.shape.cap(),
                ..SiteFill::default()
            },
        };
        if self.drained_from.len() <= site {
            self.drained_from.resize(site + 1, Vec::new());
        }
        let ring = v.last.site.ring() as usize;
        if self.drained_from[site].len() < ring {
            self.drained_from[site].resize(ring, None);
        }
        for (&slab, (shape, raw, step)) in slabs.iter().zip(raws) {
            let after = self.drained_from[site][slab as usize];
            let (launch, report) = slab_launch(
                raw,
                &shape,
                site as u32,
                self.next_launch,
                &v.kernel,
                after,
                step,
            )?;
            let Some(launch) = launch else {
                handed.dropped += 1;
                continue;
            };
            self.drained_from[site][slab as usize] = launch.origin.map(|o| o.epoch);
            self.next_launch = self.next_launch.wrapping_add(1);
            handed.written += 1;
            let buffer = launch.buffer()?;
            let mut records = 0u64;
            for slot in buffer.slots() {
                records += u64::from(slot.stored_entries());
                handed.fill.add(slot.meta());
            }
            if let Some(span) = gpu_span(&buffer) {
                handed.durations.push(span.duration_ns());
            }
            let c = &self.counters;
            c.records.fetch_add(records, Ordering::Relaxed);
            c.launches.fetch_add(1, Ordering::Relaxed);
            c.stale_slots
                .fetch_add(report.stale_slots, Ordering::Relaxed);
            c.overlaps
                .fetch_add(u64::from(report.extra_grids > 0), Ordering::Relaxed);
            if self.tx.send(Message::Launch(launch)).is_err() {
                return Err(Error::Config("the capture writer stopped".into()));
            }
        }
        Ok(handed)
    }
}

/// The runs of consecutive ring indices in `ready`, each as (its first
/// position in `ready`, its length): a run is copied in one piece.
fn ring_runs(ready: &[u32]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut k = 0;
    while k < ready.len() {
        let mut run = 1;
        while k + run < ready.len() && ready[k + run] == ready[k] + run as u32 {
            run += 1;
        }
        runs.push((k, run));
        k += run;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::ring_runs;

    #[test]
    fn runs_split_where_the_ring_wraps_or_skips() {
        assert_eq!(ring_runs(&[]), []);
        assert_eq!(ring_runs(&[5]), [(0, 1)]);
        assert_eq!(ring_runs(&[6, 7, 0, 1, 2]), [(0, 2), (2, 3)]);
        assert_eq!(ring_runs(&[1, 3, 4]), [(0, 1), (1, 2)]);
    }
}
