//! How a [`ContinuousSession`](super::ContinuousSession) writes its host
//! steps on the device: into each site's `step` word, in the order of the
//! site's stream, for the launches enqueued after to copy into their slabs.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use cudarc::driver::{result as cu, sys, CudaStream, DriverError};

use crate::error::Result;

use super::super::device::driver;

/// Writes the steps of a session, falling back from one batched copy to a
/// copy a word, and from those to nothing, as the driver allows.
pub(super) struct StepWriter {
    /// How: a [`StepWrite`].
    how: AtomicU8,
    /// Print nothing.
    quiet: bool,
    /// A step found a stream being captured (said once).
    told_capture: AtomicBool,
    /// The driver has `cuMemcpyBatchAsync` (CUDA 13 or later), asked once.
    batch_supported: bool,
}

impl StepWriter {
    /// A writer that starts with one batched copy a stream and step.
    pub(super) fn new(quiet: bool) -> Self {
        StepWriter {
            how: AtomicU8::new(StepWrite::Batch as u8),
            quiet,
            told_capture: AtomicBool::new(false),
            batch_supported: driver_version() >= 13000,
        }
    }

    /// Whether `stream` is being captured into a CUDA graph (or its status
    /// cannot be read), so that step `index` must write nothing on it:
    /// said once.
    pub(super) fn captured(&self, stream: &CudaStream, index: u64) -> bool {
        let status = stream.capture_status();
        let captured = !matches!(
            status,
            Ok(sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
        );
        if captured && !self.quiet && !self.told_capture.swap(true, Ordering::Relaxed) {
            eprintln!(
                "ktrace: step {index}: a site's stream is being captured into a CUDA graph \
                 ({status:?}); steps write nothing on a stream while it is captured, so its \
                 launches keep the step written before the capture"
            );
        }
        captured
    }

    /// Writes step `index` into the step words at `at` (the sites on
    /// `stream`), in `stream`'s order: with one batched copy
    /// (`cuMemcpyBatchAsync`), or where the driver refuses that, with one
    /// copy a word (the first refusal is said once); where copies fail too,
    /// it warns and writes no more steps (launches then have none, and
    /// `--steps` places them by the host's time).
    pub(super) fn write(&self, stream: &CudaStream, at: &[u64], index: u64) {
        let how = self.how.load(Ordering::Relaxed);
        if how == StepWrite::Off as u8 || at.is_empty() {
            return;
        }
        let batch = how == StepWrite::Batch as u8;
        let word = index.wrapping_add(1);
        let written = if batch {
            copy_batch(stream, at, word, self.batch_supported)
        } else {
            copy_each(stream, at, word)
        };
        let Err(e) = written else {
            return;
        };
        let next = if batch {
            StepWrite::Each
        } else {
            StepWrite::Off
        };
        self.how.store(next as u8, Ordering::Relaxed);
        if !self.quiet {
            match next {
                StepWrite::Each => eprintln!(
                    "ktrace: step {index}: {e}; steps are written on the device with one copy \
                     a site from now on"
                ),
                _ => eprintln!(
                    "ktrace: warning: step {index}: {e}; steps are no longer recorded on the \
                     device, and --steps places launches by the host's time"
                ),
            }
        }
        if next == StepWrite::Each {
            self.write(stream, at, index);
        }
    }
}

/// The driver's version (`cuDriverGetVersion`, e.g. 13000), 0 if unknown.
fn driver_version() -> i32 {
    let mut v = 0;
    // SAFETY: writes one int.
    let _ = unsafe { sys::cuDriverGetVersion(&mut v) };
    v
}

/// Writes `word` to the device addresses `at` in `stream`'s order, after
/// the launches enqueued on it before and before those after, with one
/// batched copy from the host (`cuMemcpyBatchAsync`, a CUDA 13 driver):
/// the stream waits about 1 µs a step for it, against 2.6 µs for one copy
/// a word of three and 4.3 µs for one batch of stream memory operations
/// (an H100, `docs/continuous.md`). Refused (not supported) unless
/// `supported`: the driver has it.
fn copy_batch(stream: &CudaStream, at: &[u64], word: u64, supported: bool) -> Result<()> {
    let fail = driver("recording the host's step on the device");
    if !supported {
        return Err(fail(DriverError(sys::CUresult::CUDA_ERROR_NOT_SUPPORTED)));
    }
    let words = vec![word; at.len()];
    let mut dsts: Vec<sys::CUdeviceptr> = at.to_vec();
    let mut srcs: Vec<sys::CUdeviceptr> = words
        .iter()
        .map(|w| w as *const u64 as sys::CUdeviceptr)
        .collect();
    let mut sizes = vec![std::mem::size_of::<u64>(); at.len()];
    // SAFETY: a plain C struct, all zeros valid; its fields are set below.
    let mut attrs: sys::CUmemcpyAttributes = unsafe { std::mem::zeroed() };
    // The words are read during the call, so they may live on the stack.
    attrs.srcAccessOrder = sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    attrs.srcLocHint.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST;
    attrs.dstLocHint.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    let mut first = 0usize;
    // SAFETY: `at.len()` copies of 8 bytes each, from `words` (alive for
    // the call, which reads them during it) to sites' step words inside
    // the arena, which the device only reads; one attribute for all.
    unsafe {
        sys::cuMemcpyBatchAsync_v2(
            dsts.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            at.len(),
            &mut attrs,
            &mut first,
            1,
            stream.cu_stream(),
        )
    }
    .result()
    .map_err(fail)
}

/// Writes `word` to the device addresses `at` in `stream`'s order, one
/// copy from the host each.
fn copy_each(stream: &CudaStream, at: &[u64], word: u64) -> Result<()> {
    let fail = driver("recording the host's step on the device");
    for &a in at {
        // SAFETY: `a` is a site's step word, inside the arena; the device
        // only reads it. The copy from pageable memory is staged during
        // the call.
        unsafe { cu::memcpy_htod_async(a, &word.to_le_bytes(), stream.cu_stream()) }
            .map_err(&fail)?;
    }
    Ok(())
}

/// How a session writes its steps on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepWrite {
    /// One batched copy a stream and step (`cuMemcpyBatchAsync`).
    Batch = 0,
    /// One copy a word, where the driver refused the batch.
    Each = 1,
    /// Neither worked: steps are not written.
    Off = 2,
}
