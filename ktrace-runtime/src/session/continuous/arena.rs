//! The device memory of a [`ContinuousSession`](super::ContinuousSession).

use std::sync::Arc;

use cudarc::driver::{result as cu, sys, CudaStream};

use crate::error::Result;

use super::super::device::driver;

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
