//! The handshake that measures a GPU's `%globaltimer` against the host's
//! `CLOCK_REALTIME` ([`ClockSync`]): one GPU thread spins on a flag in
//! mapped host memory; the host reads its clock, writes the flag, and reads
//! its clock again when the thread's answer (with the `%globaltimer` it read
//! on seeing the flag) arrives. [`ClockProbe::measure`] gives every round;
//! [`ClockProbe::sync`] the estimate made from them
//! ([`estimate_sync`](crate::timeline::estimate_sync)).
//!
//! The kernel is a few lines of PTX kept here, JIT-compiled by the driver
//! once per session; it never spins for more than two seconds without a
//! new round, so a host that gives up cannot leave it running.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::device::driver;
use crate::error::{Error, Result};
use crate::format::clock_sync::ClockSync;
use crate::timeline::host_clocks_ns;

/// Rounds per handshake.
pub const ROUNDS: u32 = 64;
/// What the kernel writes to the answer word once it runs.
const READY: u32 = 0x5245_4459;
/// What the host writes to the flag to make the kernel return.
const ABORT: u32 = u32::MAX;
/// How long the host waits for the kernel to start (the stream may still
/// be busy), and then for each answer.
const START_TIMEOUT: Duration = Duration::from_secs(10);
const ANSWER_TIMEOUT: Duration = Duration::from_millis(500);

/// The kernel. Mailbox (mapped host memory): u32 flag at 0 (the host's
/// round number, or ABORT), u32 answer at 4 (READY, then the round seen),
/// and the `%globaltimer` read in round k (from 1) at byte 8k.
const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry ktrace_clock_sync(
    .param .u64 mailbox,
    .param .u32 rounds
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [mailbox];
    ld.param.u32 %r1, [rounds];
    mov.u32 %r2, 1;
    mov.u32 %r3, 0x52454459;
    st.release.sys.global.u32 [%rd1+4], %r3;
    mov.u64 %rd2, %globaltimer;
NEXT:
    setp.gt.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
WAIT:
    ld.acquire.sys.global.u32 %r4, [%rd1];
    setp.eq.u32 %p2, %r4, %r2;
    @%p2 bra SEEN;
    setp.eq.u32 %p3, %r4, 0xffffffff;
    @%p3 bra DONE;
    mov.u64 %rd3, %globaltimer;
    sub.u64 %rd4, %rd3, %rd2;
    setp.gt.u64 %p3, %rd4, 2000000000;
    @%p3 bra DONE;
    bra.uni WAIT;
SEEN:
    mov.u64 %rd3, %globaltimer;
    cvt.u64.u32 %rd5, %r2;
    shl.b64 %rd5, %rd5, 3;
    add.u64 %rd6, %rd1, %rd5;
    st.relaxed.sys.global.u64 [%rd6], %rd3;
    st.release.sys.global.u32 [%rd1+4], %r2;
    mov.u64 %rd2, %rd3;
    add.u32 %r2, %r2, 1;
    bra.uni NEXT;
DONE:
    ret;
}
"#;

/// Page-locked host memory mapped into the device's address space.
struct Mailbox {
    host: *mut c_void,
    device: CUdeviceptr,
    ctx: Arc<CudaContext>,
}

impl Mailbox {
    const BYTES: usize = 8 + 8 * ROUNDS as usize;

    fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        ctx.bind_to_thread()
            .map_err(driver("binding the context for the clock handshake"))?;
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: a plain allocation; the pointer is freed in `drop`.
        let host = unsafe { cudarc::driver::result::malloc_host(Self::BYTES, flags) }.map_err(
            driver("allocating mapped host memory for the clock handshake"),
        )?;
        let mut device: CUdeviceptr = 0;
        // SAFETY: `host` was allocated with DEVICEMAP in this context.
        let rc = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) };
        let mailbox = Mailbox {
            host,
            device,
            ctx: ctx.clone(),
        };
        rc.result()
            .map_err(driver("mapping host memory for the clock handshake"))?;
        Ok(mailbox)
    }

    fn word(&self, i: usize) -> &AtomicU32 {
        // SAFETY: within the allocation, aligned (page-locked memory is
        // page aligned), and only accessed atomically by the host.
        unsafe { &*(self.host as *const AtomicU32).add(i) }
    }

    fn flag(&self) -> &AtomicU32 {
        self.word(0)
    }

    fn answer(&self) -> &AtomicU32 {
        self.word(1)
    }

    fn time(&self, round: u32) -> u64 {
        // SAFETY: as in `word`; round is 1..=ROUNDS.
        let t = unsafe { &*(self.host as *const AtomicU64).add(round as usize) };
        t.load(Ordering::Acquire)
    }

    fn reset(&self) {
        for i in 0..Self::BYTES / 4 {
            self.word(i).store(0, Ordering::Relaxed);
        }
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by `malloc_host` in `new`; the kernel that used
        // it has returned (the handshake waits for it, or aborted it).
        let _ = unsafe { cudarc::driver::result::free_host(self.host) };
    }
}

/// Measures a GPU's clock against the host's, on demand. A
/// [`TraceSession`](super::TraceSession) holds one; programs that line up
/// their own events with the GPU's can use one directly.
pub struct ClockProbe {
    func: CudaFunction,
    mailbox: Mailbox,
}

impl ClockProbe {
    /// Loads the handshake kernel into `ctx` (JIT-compiled from PTX by the
    /// driver) and maps its mailbox.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        let module = ctx
            .load_module(Ptx::from_src(PTX))
            .map_err(driver("loading the clock handshake kernel"))?;
        let func = module
            .load_function("ktrace_clock_sync")
            .map_err(driver("loading the clock handshake kernel"))?;
        Ok(ClockProbe {
            func,
            mailbox: Mailbox::new(ctx)?,
        })
    }

    /// One handshake on `stream`, made into one estimate
    /// ([`estimate_sync`](crate::timeline::estimate_sync)).
    pub fn sync(&self, stream: &Arc<CudaStream>) -> Result<ClockSync> {
        crate::timeline::estimate_sync(&self.measure(stream)?)
    }

    /// One handshake of [`ROUNDS`] rounds on `stream` (work already queued
    /// there runs first): every round. Returns after the kernel has
    /// finished.
    pub fn measure(&self, stream: &Arc<CudaStream>) -> Result<Vec<ClockSync>> {
        let m = &self.mailbox;
        m.reset();
        let rounds = ROUNDS;
        let mut launch = stream.launch_builder(&self.func);
        launch.arg(&m.device).arg(&rounds);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the kernel takes (u64 pointer, u32) and touches only the
        // mailbox, which outlives it (`sync` waits for it to return).
        unsafe { launch.launch(cfg) }.map_err(driver("launching the clock handshake"))?;
        let result = self.rounds(rounds);
        if result.is_err() {
            m.flag().store(ABORT, Ordering::SeqCst);
        }
        stream
            .synchronize()
            .map_err(driver("waiting for the clock handshake"))?;
        result
    }

    fn rounds(&self, rounds: u32) -> Result<Vec<ClockSync>> {
        let m = &self.mailbox;
        wait_for(m.answer(), READY, START_TIMEOUT, "start")?;
        let mut host = Vec::with_capacity(rounds as usize);
        for k in 1..=rounds {
            let (before, _) = host_clocks_ns();
            m.flag().store(k, Ordering::SeqCst);
            wait_for(m.answer(), k, ANSWER_TIMEOUT, "answer")?;
            let (after, boottime) = host_clocks_ns();
            host.push((before, after, boottime));
        }
        Ok((1..=rounds)
            .zip(host)
            .map(|(k, (before, after, boottime))| ClockSync {
                host_before_ns: before,
                gpu_ns: m.time(k),
                host_after_ns: after,
                boottime_ns: boottime,
            })
            .collect())
    }
}

fn wait_for(word: &AtomicU32, value: u32, timeout: Duration, what: &str) -> Result<()> {
    let start = Instant::now();
    let mut spins = 0u32;
    while word.load(Ordering::Acquire) != value {
        spins = spins.wrapping_add(1);
        if spins % 1024 == 0 && start.elapsed() > timeout {
            return Err(Error::Handshake(format!(
                "no {what} from the GPU within {timeout:?}"
            )));
        }
        std::hint::spin_loop();
    }
    Ok(())
}
