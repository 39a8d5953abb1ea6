//! What touches the CUDA driver: opening a device, loading a kernel module,
//! the device's facts, allocating the trace buffer, and passing
//! [`KtraceArg`] to a kernel.

use std::sync::Arc;

use cudarc::driver::sys::{cudaError_enum, CUdevice_attribute};
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::format::capture::DeviceInfo;
use crate::format::layout::KtraceArg;
use crate::format::shape::LaunchShape;
use crate::switch::{enabled, KernelModule};

// SAFETY: `KtraceArg` is `#[repr(C)]`, made only of integers, with the size,
// alignment and field offsets of `ktrace_arg` (checked by the layout test).
unsafe impl cudarc::driver::DeviceRepr for KtraceArg {}

/// Opens CUDA device `ordinal` (its primary context), or says plainly that
/// there is no driver, where cudarc would panic.
pub fn open_device(ordinal: usize) -> Result<Arc<CudaContext>> {
    // SAFETY: only probes whether the driver library can be loaded.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoDriver {
            tried: cudarc::get_lib_name_candidates("cuda")
                .into_iter()
                .take(3)
                .collect::<Vec<_>>()
                .join(", ")
                + ", ...",
        });
    }
    CudaContext::new(ordinal).map_err(driver("opening the CUDA device"))
}

/// Loads a kernel module into `ctx`: the traced build when [`enabled`], the
/// untraced one otherwise.
pub fn load_module(ctx: &Arc<CudaContext>, m: &KernelModule) -> Result<Arc<CudaModule>> {
    load_module_variant(ctx, m, enabled())
}

/// Loads one build of a kernel module into `ctx`, whatever the tracing
/// switch says: the traced build (`traced`) or the untraced one. For
/// programs that run both in one process, e.g. to time one against the
/// other; [`load_module`] is this with `traced` = [`enabled`].
///
/// With `KTRACE_STALLS` on, PC sampling starts on `ctx` first (an error
/// when CUPTI cannot sample), and the module's instruction → region map is
/// kept for the samples of its kernels.
pub fn load_module_variant(
    ctx: &Arc<CudaContext>,
    m: &KernelModule,
    traced: bool,
) -> Result<Arc<CudaModule>> {
    super::stalls::loading(ctx, m, traced)?;
    ctx.load_module(Ptx::from_binary(m.loadable_image(traced)))
        .map_err(driver("loading a kernel module"))
}

pub(super) fn driver(what: &'static str) -> impl Fn(DriverError) -> Error {
    move |error| Error::Driver { what, error }
}

pub(super) fn device_info(ctx: &Arc<CudaContext>) -> DeviceInfo {
    let attr = |a| ctx.attribute(a).ok().and_then(|v| u32::try_from(v).ok());
    DeviceInfo {
        name: ctx.name().unwrap_or_default(),
        sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(0),
        clock_khz: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0),
        ordinal: u32::try_from(ctx.ordinal()).ok(),
        uuid: ctx.uuid().ok().map(|u| u.bytes.map(|b| b as u8)),
    }
}

pub(super) fn alloc_buffer(stream: &Arc<CudaStream>, shape: &LaunchShape) -> Result<CudaSlice<u8>> {
    let asked = shape
        .buffer_bytes()
        .ok_or_else(|| Error::Config("the trace buffer size overflows 64 bits".into()))?;
    let too_large = |free: u64| Error::BufferTooLarge {
        asked,
        free,
        slots: shape.slot_count(),
        slot_bytes: shape.slot_bytes(),
    };
    let ctx = stream.context();
    let (free, _total) = ctx
        .mem_get_info()
        .map_err(driver("querying free device memory"))?;
    if asked > free as u64 {
        return Err(too_large(free as u64));
    }
    let len = usize::try_from(asked).map_err(|_| too_large(free as u64))?;
    stream.alloc_zeros::<u8>(len).map_err(|e| {
        if e.0 == cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
            too_large(free as u64)
        } else {
            driver("allocating the trace buffer")(e)
        }
    })
}
