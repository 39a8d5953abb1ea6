//! The device memory of a [`ContinuousSession`](super::ContinuousSession):
//! the arena, and each site's ring in it.

use std::sync::Arc;

use cudarc::driver::{result as cu, sys, CudaStream};

use crate::error::{Error, Result};
use crate::format::shape::LaunchShape;
use crate::format::site::{ring_slabs, site_bytes, site_head_bytes, WhenFull};
use crate::sizing::bytes_text;

use super::super::device::driver;
use super::SiteConfig;

/// The session's device memory: a plain allocation (`cuMemAlloc`), not one
/// of the stream-ordered pool's: it lives as long as the session, and the
/// driver refuses stream memory operations on pool memory (an
/// invalid-value error, seen on an H100 with driver 580). Zeroed when
/// made, freed when dropped.
pub(super) struct Arena {
    pub(super) ptr: sys::CUdeviceptr,
    stream: Arc<CudaStream>,
}

impl Arena {
    pub(super) fn new(stream: &Arc<CudaStream>, len: usize) -> Result<Self> {
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("allocating the trace arena"))?;
        // SAFETY: a plain allocation of `len` bytes, freed in Drop.
        let ptr = unsafe { cu::malloc_sync(len) }.map_err(driver("allocating the trace arena"))?;
        let arena = Arena {
            ptr,
            stream: stream.clone(),
        };
        // SAFETY: inside the allocation just made.
        unsafe { cu::memset_d8_sync(ptr, 0, len) }.map_err(driver("zeroing the trace arena"))?;
        Ok(arena)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_sync; the session has waited for the
        // device and stopped the drain before its fields drop.
        if self.stream.context().bind_to_thread().is_ok() {
            let _ = unsafe { cu::free_sync(self.ptr) };
        }
    }
}

/// A site's ring: its slabs and its bytes in the arena, `left` bytes of it
/// free; fails on a ring too small for the site's policy, or on a policy
/// the site cannot have.
pub(super) fn site_ring(config: &SiteConfig, shape: &LaunchShape, left: u64) -> Result<(u32, u64)> {
    let slab_bytes = shape.buffer_bytes().unwrap_or(u64::MAX);
    let head_bytes = site_head_bytes(shape.warps_traced() * shape.blocks_traced);
    let slab_count = ring_slabs(config.slabs, left, head_bytes, slab_bytes)
        .map_err(|e| Error::Config(format!("site {}: {e}", config.kernel)))?;
    let bytes = site_bytes(shape, slab_count).unwrap_or(u64::MAX);
    let least = config.when_full.min_slabs();
    if slab_count < least || bytes > left {
        return Err(Error::Config(format!(
            "site {}: {slab_count} slab(s) of {} in the {} left of the arena; a site \
             {}needs {least} or more (give the session a larger arena_bytes, or this site \
             fewer blocks, warps or entries)",
            config.kernel,
            bytes_text(slab_bytes),
            bytes_text(left),
            match config.when_full {
                WhenFull::DropNew => "",
                WhenFull::KeepNewest => "that keeps the newest launches ",
            }
        )));
    }
    if config.overlapping && config.when_full == WhenFull::KeepNewest {
        return Err(Error::Config(format!(
            "site {}: a site whose launches overlap keeps the oldest launches when its \
             ring is full (WhenFull::DropNew), not the newest",
            config.kernel
        )));
    }
    Ok((slab_count, bytes))
}
