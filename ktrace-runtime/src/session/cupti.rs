//! CUPTI's PC sampling (`cupti_pcsampling.h`), loaded at run time: the few
//! functions and structs ktrace needs, declared here by hand (the layouts
//! of CUDA 12 and 13's header, whose structs all begin with their size),
//! and [`PcSampler`], which samples one context's kernels in
//! kernel-serialized mode and hands back each launch's samples.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr::null_mut;
use std::sync::Arc;

use cudarc::driver::{sys::CUcontext, CudaContext};

use crate::error::{Error, Result};
use crate::settings::{var, ENV_CUPTI};

type CuptiResult = u32;
const CUPTI_SUCCESS: CuptiResult = 0;
const CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: CuptiResult = 35;
const CUPTI_STALL_REASON_STRING_SIZE: usize = 128;

const ATTR_SAMPLING_PERIOD: u32 = 1;
const ATTR_SCRATCH_BUFFER_SIZE: u32 = 3;
const ATTR_COLLECTION_MODE: u32 = 5;
const ATTR_OUTPUT_DATA_FORMAT: u32 = 7;
const ATTR_SAMPLING_DATA_BUFFER: u32 = 8;
const MODE_KERNEL_SERIALIZED: u64 = 2;
const FORMAT_PARSED: u64 = 1;

/// PCs one read of the samples takes; more are read in further rounds.
const PCS_PER_READ: usize = 4096;

#[repr(C)]
struct StallReason {
    index: u32,
    samples: u32,
}

#[repr(C)]
struct PcData {
    size: usize,
    cubin_crc: u64,
    pc_offset: u64,
    function_index: u32,
    pad: u32,
    function_name: *mut c_char,
    stall_reason_count: usize,
    stall_reason: *mut StallReason,
    correlation_id: u32,
}

#[repr(C)]
struct SamplingData {
    size: usize,
    collect_num_pcs: usize,
    total_samples: u64,
    dropped_samples: u64,
    total_num_pcs: usize,
    remaining_num_pcs: usize,
    range_id: u64,
    pc_data: *mut PcData,
    non_usr_kernels_total_samples: u64,
    hardware_buffer_full: u8,
}

#[repr(C)]
struct ConfigInfo {
    attribute_type: u32,
    attribute_status: CuptiResult,
    data: [u64; 3],
}

#[repr(C)]
struct ConfigParams {
    size: usize,
    p_priv: *mut c_void,
    ctx: CUcontext,
    num_attributes: usize,
    info: *mut ConfigInfo,
}

#[repr(C)]
struct CtxParams {
    size: usize,
    p_priv: *mut c_void,
    ctx: CUcontext,
}

#[repr(C)]
struct NumReasonsParams {
    size: usize,
    p_priv: *mut c_void,
    ctx: CUcontext,
    num: *mut usize,
}

#[repr(C)]
struct ReasonsParams {
    size: usize,
    p_priv: *mut c_void,
    ctx: CUcontext,
    num: usize,
    index: *mut u32,
    names: *mut *mut c_char,
}

#[repr(C)]
struct GetDataParams {
    size: usize,
    p_priv: *mut c_void,
    ctx: CUcontext,
    data: *mut c_void,
}

#[repr(C)]
struct CubinCrcParams {
    size: usize,
    cubin_size: usize,
    cubin: *const c_void,
    crc: u64,
}

type Call<P> = unsafe extern "C" fn(*mut P) -> CuptiResult;

/// The CUPTI functions, from the library found.
struct Cupti {
    path: String,
    enable: Call<CtxParams>,
    disable: Call<CtxParams>,
    num_reasons: Call<NumReasonsParams>,
    reasons: Call<ReasonsParams>,
    configure: Call<ConfigParams>,
    get_data: Call<GetDataParams>,
    cubin_crc: Call<CubinCrcParams>,
    result_string: unsafe extern "C" fn(CuptiResult, *mut *const c_char) -> CuptiResult,
}

/// Where CUPTI is looked for, in order: `KTRACE_CUPTI`, the toolkit of
/// `CUDA_HOME` / `CUDA_PATH`, `/usr/local/cuda` and `/usr/local/cuda-*`
/// (newest first), PyPI's wheel in the Python library directories, then
/// the loader's own search (`LD_LIBRARY_PATH`).
fn candidates() -> Vec<String> {
    let mut c = Vec::new();
    if let Some(p) = var(ENV_CUPTI) {
        c.push(p.to_string_lossy().into_owned());
    }
    let mut roots: Vec<String> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| var(v).map(|p| p.to_string_lossy().into_owned()))
        .collect();
    roots.push("/usr/local/cuda".into());
    let mut versioned: Vec<String> = std::fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().to_string_lossy().into_owned())
        .filter(|p| p.starts_with("/usr/local/cuda-"))
        .collect();
    versioned.sort_unstable_by(|a, b| b.cmp(a));
    roots.extend(versioned);
    for root in roots {
        for dir in [
            "extras/CUPTI/lib64",
            "targets/x86_64-linux/lib",
            "lib64",
            "lib",
        ] {
            for name in ["libcupti.so", "libcupti.so.13", "libcupti.so.12"] {
                c.push(format!("{root}/{dir}/{name}"));
            }
        }
    }
    c.extend(python_wheels());
    c.extend([
        "libcupti.so".into(),
        "libcupti.so.13".into(),
        "libcupti.so.12".into(),
    ]);
    c
}

/// PyPI's `nvidia-cuda-cupti` wheels in the usual Python library
/// directories (a virtual environment's, the user's, the system's).
fn python_wheels() -> Vec<String> {
    let mut bases: Vec<String> = Vec::new();
    if let Some(v) = var("VIRTUAL_ENV") {
        bases.push(format!("{}/lib", v.to_string_lossy()));
    }
    if let Some(h) = var("HOME") {
        bases.push(format!("{}/.local/lib", h.to_string_lossy()));
    }
    bases.extend(["/usr/local/lib".into(), "/usr/lib".into()]);
    let mut out = Vec::new();
    for base in bases {
        let Ok(dir) = std::fs::read_dir(&base) else {
            continue;
        };
        let mut pythons: Vec<String> = dir
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("python3"))
            .collect();
        pythons.sort_unstable();
        for py in pythons {
            for packages in ["site-packages", "dist-packages"] {
                let root = format!("{base}/{py}/{packages}/nvidia");
                out.push(format!("{root}/cu13/lib/libcupti.so.13"));
                out.push(format!("{root}/cuda_cupti/lib/libcupti.so.12"));
            }
        }
    }
    out
}

/// The function `name` of the library `handle` (opened from `path`), as
/// the function pointer type `F`.
///
/// # Safety
/// `F` must be the symbol's real signature, a function pointer type.
unsafe fn symbol<F: Copy>(handle: *mut c_void, path: &str, name: &str) -> Result<F> {
    let n = CString::new(name).expect("symbol names have no NUL");
    // SAFETY: dlsym on a handle dlopen returned.
    let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
    if p.is_null() {
        return Err(Error::Cupti(format!("{path} has no {name}")));
    }
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: the caller names the symbol's type; a function pointer is
    // pointer-sized.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

impl Cupti {
    fn load() -> Result<Cupti> {
        let tried = candidates();
        for path in &tried {
            let Ok(c) = CString::new(path.as_str()) else {
                continue;
            };
            // SAFETY: dlopen of a library path; the handle is kept open for
            // the life of the process (never closed).
            let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                continue;
            }
            // SAFETY: the symbols are CUPTI's, with the signatures declared
            // above (cupti_pcsampling.h, cupti_result.h).
            return unsafe {
                Ok(Cupti {
                    path: path.clone(),
                    enable: symbol(handle, path, "cuptiPCSamplingEnable")?,
                    disable: symbol(handle, path, "cuptiPCSamplingDisable")?,
                    num_reasons: symbol(handle, path, "cuptiPCSamplingGetNumStallReasons")?,
                    reasons: symbol(handle, path, "cuptiPCSamplingGetStallReasons")?,
                    configure: symbol(handle, path, "cuptiPCSamplingSetConfigurationAttribute")?,
                    get_data: symbol(handle, path, "cuptiPCSamplingGetData")?,
                    cubin_crc: symbol(handle, path, "cuptiGetCubinCrc")?,
                    result_string: symbol(handle, path, "cuptiGetResultString")?,
                })
            };
        }
        Err(Error::Cupti(format!(
            "CUPTI (libcupti.so) was not found; set KTRACE_CUPTI to its path (it is in the CUDA \
             toolkit's extras/CUPTI/lib64 or targets/x86_64-linux/lib, or PyPI's \
             nvidia-cuda-cupti); searched {}",
            tried.join(", ")
        )))
    }

    /// `what` failed with `r`, in CUPTI's words.
    fn error(&self, what: &str, r: CuptiResult) -> Error {
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: CUPTI writes a pointer to a static string.
        let text = unsafe {
            if (self.result_string)(r, &mut s) == CUPTI_SUCCESS && !s.is_null() {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            } else {
                format!("error {r}")
            }
        };
        let hint = if r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES {
            "; PC sampling needs root or the driver's NVreg_RestrictProfilingToAdminUsers=0"
        } else {
            ""
        };
        Error::Cupti(format!("{what} ({}): {text}{hint}", self.path))
    }

    fn check(&self, what: &str, r: CuptiResult) -> Result<()> {
        if r == CUPTI_SUCCESS {
            Ok(())
        } else {
            Err(self.error(what, r))
        }
    }
}

/// One instruction's counts, as CUPTI gave them.
pub(crate) struct RawPc {
    pub cubin_crc: u64,
    pub function: String,
    pub offset: u64,
    /// `(index into PcSampler::reasons, samples)`.
    pub counts: Vec<(u32, u32)>,
}

/// What one read after a launch gave.
pub(crate) struct RawSamples {
    pub pcs: Vec<RawPc>,
    pub total: u64,
    pub dropped: u64,
}

/// A PC-sampling buffer that CUPTI fills: the struct and the arrays it
/// points to, owned here.
struct Buffer {
    data: Box<SamplingData>,
    _pcs: Vec<PcData>,
    _reasons: Vec<Vec<StallReason>>,
}

impl Buffer {
    fn new(pcs: usize, reasons: usize) -> Buffer {
        let mut reason_arrays: Vec<Vec<StallReason>> = (0..pcs)
            .map(|_| {
                (0..reasons)
                    .map(|_| StallReason {
                        index: 0,
                        samples: 0,
                    })
                    .collect()
            })
            .collect();
        let mut pc_data: Vec<PcData> = reason_arrays
            .iter_mut()
            .map(|r| PcData {
                size: std::mem::size_of::<PcData>(),
                cubin_crc: 0,
                pc_offset: 0,
                function_index: 0,
                pad: 0,
                function_name: null_mut(),
                stall_reason_count: 0,
                stall_reason: r.as_mut_ptr(),
                correlation_id: 0,
            })
            .collect();
        let data = Box::new(SamplingData {
            size: std::mem::size_of::<SamplingData>(),
            collect_num_pcs: pcs,
            total_samples: 0,
            dropped_samples: 0,
            total_num_pcs: 0,
            remaining_num_pcs: 0,
            range_id: 0,
            pc_data: pc_data.as_mut_ptr(),
            non_usr_kernels_total_samples: 0,
            hardware_buffer_full: 0,
        });
        Buffer {
            data,
            _pcs: pc_data,
            _reasons: reason_arrays,
        }
    }
}

/// The stall reasons CUPTI samples on `ctx`: their indices and names.
fn stall_reasons(cupti: &Cupti, raw_ctx: CUcontext) -> Result<(Vec<u32>, Vec<String>)> {
    let mut n = 0usize;
    let mut np = NumReasonsParams {
        size: std::mem::size_of::<NumReasonsParams>(),
        p_priv: null_mut(),
        ctx: raw_ctx,
        num: &mut n,
    };
    // SAFETY: as above; CUPTI writes `n`.
    cupti.check("counting stall reasons", unsafe {
        (cupti.num_reasons)(&mut np)
    })?;
    let mut index = vec![0u32; n];
    let mut names: Vec<Vec<c_char>> = (0..n)
        .map(|_| vec![0; CUPTI_STALL_REASON_STRING_SIZE])
        .collect();
    let mut name_ptrs: Vec<*mut c_char> = names.iter_mut().map(|v| v.as_mut_ptr()).collect();
    let mut rp = ReasonsParams {
        size: std::mem::size_of::<ReasonsParams>(),
        p_priv: null_mut(),
        ctx: raw_ctx,
        num: n,
        index: index.as_mut_ptr(),
        names: name_ptrs.as_mut_ptr(),
    };
    // SAFETY: CUPTI writes n indices and n names of at most 128 bytes.
    cupti.check("naming stall reasons", unsafe { (cupti.reasons)(&mut rp) })?;
    let reasons: Vec<String> = names
        .iter()
        .map(|v| {
            // SAFETY: CUPTI wrote a NUL-terminated name into the array.
            unsafe { CStr::from_ptr(v.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    Ok((index, reasons))
}

/// PC sampling of one context, kernel-serialized: every kernel launched
/// in the context is sampled, one at a time, and [`PcSampler::take`]
/// after a launch reads its samples.
pub(crate) struct PcSampler {
    cupti: Cupti,
    ctx: Arc<CudaContext>,
    /// Stall reason names, by CUPTI's index (as `RawPc::counts` give them).
    pub reasons: Vec<String>,
    index_of: Vec<u32>,
    /// The buffer given to the configuration (filled at disable).
    _config_buffer: Buffer,
    read: Buffer,
    /// The period, a power of two of cycles.
    pub period_log2: u32,
    /// The function names CUPTI handed out: the caller's to free, once
    /// each, after sampling ends (reads share them).
    names: Vec<*mut c_char>,
}

// SAFETY: the raw pointers are into buffers this struct owns; CUPTI calls
// are made with the context bound, from whichever thread holds the sampler.
unsafe impl Send for PcSampler {}

impl PcSampler {
    /// Loads CUPTI, enables PC sampling on `ctx` and configures it: every
    /// stall reason, kernel-serialized, one sample every `2^period_log2`
    /// cycles.
    pub(crate) fn new(ctx: &Arc<CudaContext>, period_log2: u32) -> Result<PcSampler> {
        let cupti = Cupti::load()?;
        ctx.bind_to_thread()
            .map_err(|e| Error::Cupti(format!("binding the context: {e}")))?;
        let raw_ctx = ctx.cu_ctx();
        let mut p = CtxParams {
            size: std::mem::size_of::<CtxParams>(),
            p_priv: null_mut(),
            ctx: raw_ctx,
        };
        // SAFETY: CUPTI reads the params for the duration of the call.
        cupti.check("enabling PC sampling", unsafe { (cupti.enable)(&mut p) })?;
        let (index, reasons) = stall_reasons(&cupti, raw_ctx)?;
        let n = index.len();
        let mut config_buffer = Buffer::new(PCS_PER_READ, n);
        let read = Buffer::new(PCS_PER_READ, n);
        let data_ptr = &mut *config_buffer.data as *mut SamplingData as u64;
        let mut info = [
            (ATTR_SAMPLING_PERIOD, u64::from(period_log2)),
            (ATTR_SCRATCH_BUFFER_SIZE, 16 << 20),
            (ATTR_COLLECTION_MODE, MODE_KERNEL_SERIALIZED),
            (ATTR_OUTPUT_DATA_FORMAT, FORMAT_PARSED),
            (ATTR_SAMPLING_DATA_BUFFER, data_ptr),
        ]
        .map(|(attribute_type, v)| ConfigInfo {
            attribute_type,
            attribute_status: 0,
            data: [v, 0, 0],
        });
        let mut cp = ConfigParams {
            size: std::mem::size_of::<ConfigParams>(),
            p_priv: null_mut(),
            ctx: raw_ctx,
            num_attributes: info.len(),
            info: info.as_mut_ptr(),
        };
        // SAFETY: CUPTI reads the attributes; the data buffer lives in
        // `config_buffer`, owned by the sampler until it disables sampling.
        cupti.check("configuring PC sampling", unsafe {
            (cupti.configure)(&mut cp)
        })?;
        Ok(PcSampler {
            cupti,
            ctx: ctx.clone(),
            reasons,
            index_of: index,
            _config_buffer: config_buffer,
            read,
            period_log2,
            names: Vec::new(),
        })
    }

    /// The ordinal of the device sampled.
    pub(crate) fn context_ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The CRC that CUPTI gives the PCs of `cubin`.
    pub(crate) fn cubin_crc(&self, cubin: &[u8]) -> Result<u64> {
        let mut p = CubinCrcParams {
            size: std::mem::size_of::<CubinCrcParams>(),
            cubin_size: cubin.len(),
            cubin: cubin.as_ptr().cast(),
            crc: 0,
        };
        // SAFETY: CUPTI reads the cubin and writes the CRC.
        self.cupti.check("the CRC of a cubin", unsafe {
            (self.cupti.cubin_crc)(&mut p)
        })?;
        Ok(p.crc)
    }

    /// Reads every sample CUPTI holds (the launches since the last read,
    /// which the caller has waited for).
    pub(crate) fn take(&mut self) -> Result<RawSamples> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| Error::Cupti(format!("binding the context: {e}")))?;
        let mut out = RawSamples {
            pcs: Vec::new(),
            total: 0,
            dropped: 0,
        };
        let names = &mut self.names;
        loop {
            let d = &mut *self.read.data;
            let mut p = GetDataParams {
                size: std::mem::size_of::<GetDataParams>(),
                p_priv: null_mut(),
                ctx: self.ctx.cu_ctx(),
                data: (d as *mut SamplingData).cast(),
            };
            // SAFETY: CUPTI fills the buffer's PC array (collect_num_pcs
            // entries, each with room for every stall reason).
            let r = unsafe { (self.cupti.get_data)(&mut p) };
            if r != CUPTI_SUCCESS && d.hardware_buffer_full == 0 {
                return Err(self.cupti.error("reading PC samples", r));
            }
            out.total += d.total_samples;
            out.dropped += d.dropped_samples;
            for k in 0..d.total_num_pcs.min(d.collect_num_pcs) {
                // SAFETY: CUPTI wrote `total_num_pcs` entries.
                let pc = unsafe { &*d.pc_data.add(k) };
                let name = if pc.function_name.is_null() {
                    String::new()
                } else {
                    if !names.contains(&pc.function_name) {
                        names.push(pc.function_name);
                    }
                    // SAFETY: CUPTI's NUL-terminated name.
                    unsafe { CStr::from_ptr(pc.function_name) }
                        .to_string_lossy()
                        .into_owned()
                };
                let counts = (0..pc.stall_reason_count)
                    .filter_map(|j| {
                        // SAFETY: `stall_reason_count` entries were written.
                        let s = unsafe { &*pc.stall_reason.add(j) };
                        let at = self.index_of.iter().position(|&i| i == s.index)?;
                        (s.samples > 0).then_some((at as u32, s.samples))
                    })
                    .collect();
                out.pcs.push(RawPc {
                    cubin_crc: pc.cubin_crc,
                    function: name,
                    offset: pc.pc_offset,
                    counts,
                });
            }
            if d.remaining_num_pcs == 0 || d.total_num_pcs == 0 {
                return Ok(out);
            }
        }
    }
}

impl Drop for PcSampler {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let mut p = CtxParams {
            size: std::mem::size_of::<CtxParams>(),
            p_priv: null_mut(),
            ctx: self.ctx.cu_ctx(),
        };
        // SAFETY: disables sampling on the context it was enabled on; the
        // configuration's buffer is still alive.
        unsafe { (self.cupti.disable)(&mut p) };
        for n in self.names.drain(..) {
            // SAFETY: malloc'd by CUPTI, freed once, after sampling ended.
            unsafe { libc::free(n.cast()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_cupti_is_an_error_naming_what_was_searched() {
        let tried = candidates();
        assert!(
            tried.iter().any(|c| c.starts_with("/usr/local/cuda/")),
            "{tried:?}"
        );
        assert_eq!(tried.last().map(String::as_str), Some("libcupti.so.12"));
        match Cupti::load() {
            Ok(c) => eprintln!(
                "CUPTI found at {} here: the missing case is not checked",
                c.path
            ),
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.starts_with("PC sampling: CUPTI (libcupti.so) was not found"),
                    "{e}"
                );
                assert!(
                    e.contains("KTRACE_CUPTI") && e.contains("/usr/local/cuda/"),
                    "{e}"
                );
            }
        }
    }
}
