//! How a [`ContinuousSession`](super::ContinuousSession) writes its host
//! steps on the device: into each site's `step` word, in the order of the
//! site's stream, for the launches enqueued after to copy into their slabs.

use std::sync::atomic::{AtomicU8, Ordering};

use cudarc::driver::{result as cu, sys, CudaStream};

use crate::error::Result;

use super::super::device::driver;

/// Writes the steps of a session, falling back from stream memory
/// operations to copies, and from copies to nothing, as the driver allows.
pub(super) struct StepWriter {
    /// How: a [`StepWrite`].
    how: AtomicU8,
    /// Print nothing.
    quiet: bool,
}

impl StepWriter {
    /// A writer that starts with stream memory operations.
    pub(super) fn new(quiet: bool) -> Self {
        StepWriter {
            how: AtomicU8::new(StepWrite::MemOp as u8),
            quiet,
        }
    }

    /// Writes step `index` into the step words at `at` (the sites on
    /// `stream`), in `stream`'s order: with one batch of stream memory
    /// operations, or where the driver refuses those, with copies (the
    /// first refusal is said once); where copies fail too, it warns and
    /// writes no more steps (launches then have none, and `--steps` places
    /// them by the host's time).
    pub(super) fn write(&self, stream: &CudaStream, at: &[u64], index: u64) {
        let how = self.how.load(Ordering::Relaxed);
        if how == StepWrite::Off as u8 {
            return;
        }
        let by_copy = how == StepWrite::Copy as u8;
        let Err(e) = write_step_words(stream, at, index.wrapping_add(1), by_copy) else {
            return;
        };
        let next = if by_copy {
            StepWrite::Off
        } else {
            StepWrite::Copy
        };
        self.how.store(next as u8, Ordering::Relaxed);
        if !self.quiet {
            match next {
                StepWrite::Copy => eprintln!(
                    "ktrace: step {index}: {e}; steps are written on the device with a copy \
                     from now on"
                ),
                _ => eprintln!(
                    "ktrace: warning: step {index}: {e}; steps are no longer recorded on the \
                     device, and --steps places launches by the host's time"
                ),
            }
        }
        if next == StepWrite::Copy {
            self.write(stream, at, index);
        }
    }
}

/// Writes `word` to the device addresses `at` in `stream`'s order, after
/// the launches enqueued on it before and before those after: one batch of
/// stream memory operations (no copy, no kernel), or copies when
/// `by_copy`.
fn write_step_words(stream: &CudaStream, at: &[u64], word: u64, by_copy: bool) -> Result<()> {
    let fail = driver("recording the host's step on the device");
    if by_copy {
        for &a in at {
            // SAFETY: `a` is a site's step word, inside the arena; the
            // device only reads it.
            unsafe { cu::memcpy_htod_async(a, &word.to_le_bytes(), stream.cu_stream()) }
                .map_err(&fail)?;
        }
        return Ok(());
    }
    let mut ops: Vec<sys::CUstreamBatchMemOpParams> = at
        .iter()
        .map(|&a| {
            // SAFETY: a plain C union, all zeros valid; the write's fields
            // are set below.
            let mut op: sys::CUstreamBatchMemOpParams = unsafe { std::mem::zeroed() };
            op.writeValue.operation = sys::CUstreamBatchMemOpType::CU_STREAM_MEM_OP_WRITE_VALUE_64;
            op.writeValue.address = a;
            op.writeValue.__bindgen_anon_1.value64 = word;
            op.writeValue.flags =
                sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
            op
        })
        .collect();
    // SAFETY: `ops` holds `at.len()` writes to sites' step words, inside
    // the arena (plain device memory: the driver refuses these operations
    // on memory of the stream-ordered pool); the device only reads them.
    unsafe { sys::cuStreamBatchMemOp_v2(stream.cu_stream(), ops.len() as u32, ops.as_mut_ptr(), 0) }
        .result()
        .map_err(fail)
}

/// How a session writes its steps on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepWrite {
    /// A stream memory operation (`cuStreamWriteValue64`).
    MemOp = 0,
    /// A copy from the host, where the driver refused the first.
    Copy = 1,
    /// Neither worked: steps are not written.
    Off = 2,
}
