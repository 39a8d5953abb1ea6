//! Both builds of a kernel file loaded side by side ([`ModulePair`]), and
//! one kernel of both ([`FunctionPair`]), so that each launch runs the build
//! its [`KtraceArg`] asks for: the traced build for a launch that is traced,
//! the untraced build (the kernel's own machine code, markers gone) for one
//! that is not.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};

use super::device::{driver, load_module_variant};
use crate::error::Result;
use crate::format::layout::KtraceArg;
use crate::switch::KernelModule;

/// Both builds of a kernel file, traced and untraced, loaded into one
/// context.
///
/// A launch that is not traced — tracing off, a launch
/// [`TraceConfig::launches`](crate::TraceConfig::launches) leaves out, a
/// kernel of a CUDA graph given no site — gets a null [`KtraceArg`].
/// Launched through [`FunctionPair::for_arg`], it runs the untraced build,
/// so it costs what the kernel without markers costs, not the traced
/// build's markers branching over themselves (on kernels of short-lived
/// warps that was 4–12%: `docs/performance.md`).
#[derive(Clone, Debug)]
pub struct ModulePair {
    traced: Arc<CudaModule>,
    untraced: Arc<CudaModule>,
}

/// One kernel of a [`ModulePair`]: its function in each build.
#[derive(Clone, Debug)]
pub struct FunctionPair {
    traced: CudaFunction,
    untraced: CudaFunction,
}

/// Loads both builds of a kernel file into `ctx`, whatever the tracing
/// switch says (a [`ContinuousSession`](super::continuous::ContinuousSession)
/// traces without `KTRACE=1`). Which one runs is chosen per launch, by
/// [`FunctionPair::for_arg`]; with tracing off every launch gets the null
/// argument and runs the untraced build. Loading both takes the time and
/// device memory of two modules (and the driver compiles a PTX image, as
/// another builder may embed, when it is loaded).
pub fn load_module_pair(ctx: &Arc<CudaContext>, m: &KernelModule) -> Result<ModulePair> {
    Ok(ModulePair {
        traced: load_module_variant(ctx, m, true)?,
        untraced: load_module_variant(ctx, m, false)?,
    })
}

impl ModulePair {
    /// The kernel `name` (its `extern "C"` name) in both builds.
    pub fn load_function(&self, name: &str) -> Result<FunctionPair> {
        Ok(FunctionPair {
            traced: self
                .traced
                .load_function(name)
                .map_err(driver("finding a kernel in its traced build"))?,
            untraced: self
                .untraced
                .load_function(name)
                .map_err(driver("finding a kernel in its untraced build"))?,
        })
    }

    /// The traced build.
    pub fn traced(&self) -> &Arc<CudaModule> {
        &self.traced
    }

    /// The untraced build.
    pub fn untraced(&self) -> &Arc<CudaModule> {
        &self.untraced
    }
}

impl FunctionPair {
    /// The function a launch with `arg` runs: the traced build's when `arg`
    /// traces the launch, the untraced build's when it is null
    /// ([`KtraceArg::OFF`]). Pass the same `arg` to the kernel. In a CUDA
    /// graph the choice is made once, at capture.
    pub fn for_arg(&self, arg: &KtraceArg) -> &CudaFunction {
        if arg.traces() {
            &self.traced
        } else {
            &self.untraced
        }
    }

    /// The traced build's function.
    pub fn traced(&self) -> &CudaFunction {
        &self.traced
    }

    /// The untraced build's function.
    pub fn untraced(&self) -> &CudaFunction {
        &self.untraced
    }
}
