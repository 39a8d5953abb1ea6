//! [`TraceConfig`], what a session is asked to trace, and [`SessionPlan`],
//! what it traces once the environment's overrides and the memory budget
//! have had their say. Planning touches no device.

use std::path::PathBuf;

use cudarc::driver::LaunchConfig;

use crate::error::{Error, Result};
use crate::export::ExportOptions;
use crate::format::shape::{BlockSampling, WarpSampling};
use crate::settings::{LaunchSelection, Overrides};
use crate::sizing::{fit_buffer, SizeRequest, Sizing, DEFAULT_BUDGET};

/// What to trace in a launch, and where the output goes.
///
/// `KTRACE_CAP`, `KTRACE_WARPS`, `KTRACE_BLOCKS`, `KTRACE_BUDGET_MB` and
/// `KTRACE_LAUNCHES` override the matching fields when set (see the crate
/// docs), so a traced program can be steered without a rebuild.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    /// Grid dimensions of the launch, in blocks.
    pub grid: (u32, u32, u32),
    /// Block dimensions of the launch, in threads.
    pub block: (u32, u32, u32),
    /// Per-warp ring capacity in entries (events and time anchors): a
    /// power of two from [`MIN_CAP`](crate::format::layout::MIN_CAP) to
    /// [`MAX_CAP`](crate::format::layout::MAX_CAP), kept even over the budget; or 0
    /// (the default) for automatic:
    /// [`DEFAULT_CAP`](crate::sizing::DEFAULT_CAP), lowered to fit the
    /// budget (see [`sizing`](crate::sizing)).
    pub cap: u32,
    /// Which warps of a traced block to trace. Default all.
    pub warps: WarpSampling,
    /// Which blocks to trace. Default all; with an automatic cap, every
    /// `N`-th block when the buffer would not fit the budget otherwise.
    /// Any other choice is kept.
    pub blocks: BlockSampling,
    /// The most bytes an automatically sized buffer may take. `None`:
    /// [`DEFAULT_BUDGET`] (256 MiB).
    pub budget: Option<u64>,
    /// Which launches to trace (counted by
    /// [`TraceSession::finish_launch`](crate::session::TraceSession::finish_launch)).
    /// Default all.
    pub launches: LaunchSelection,
    /// The trace file of launch 0; later launches go to `NAME_launchN.json`.
    /// A name ending in `.pftrace` (or `.perfetto-trace`) writes one
    /// Perfetto trace holding every launch of the session instead, each a
    /// group with the kernel's name and its host enqueue-to-completion span,
    /// on the host's `CLOCK_REALTIME` (through the session's clock syncs).
    /// `None`: `KTRACE_OUT`, or else `trace.json` — or no trace at all when
    /// `KTRACE_CAPTURE` is set and neither this, `KTRACE_OUT` nor
    /// [`TraceConfig::capture`] is (the capture only).
    pub output: Option<PathBuf>,
    /// Capture file saved by
    /// [`TraceSession::finish`](crate::session::TraceSession::finish). `None`:
    /// `KTRACE_CAPTURE`, or else no capture.
    pub capture: Option<PathBuf>,
    /// Decoding, trace layout and summary choices.
    pub export: ExportOptions,
    /// Print nothing: neither the sizing line nor the lines per launch and
    /// file ([`TraceSession::sizing`](crate::session::TraceSession::sizing) and the
    /// reports say the same).
    pub quiet: bool,
    /// The kernel's name, shown with each launch (in a Perfetto trace, the
    /// launch's track; in captures, beside the launch). Default empty.
    pub kernel: String,
    /// Measure the GPU's `%globaltimer` against the host's clock at the
    /// session's start and after every traced launch (a handshake of about
    /// 0.3 ms through mapped host memory; see
    /// [`timeline`](crate::timeline)), so traces line up with the host and
    /// with other GPUs and processes. Default on; off, launches can only be
    /// placed on one GPU's raw `%globaltimer` axis.
    pub clock_sync: bool,
    /// Sample the launches' PCs with CUPTI (stall reasons per region,
    /// `ktrace stalls`): 0 (the default) off, else one sample every
    /// `2^stalls` cycles per SM (5 to 31). `KTRACE_STALLS` overrides it.
    /// The samples go into the capture (`capture`, `KTRACE_CAPTURE`, else
    /// `stalls.ktrace`), with tracing on or off.
    pub stalls: u32,
}

/// What a session traces: the buffer and the launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionPlan {
    /// The buffer: launch shape, and how it fits the budget.
    pub sizing: Sizing,
    /// The launches traced.
    pub launches: LaunchSelection,
    /// The PC sampling period's power of two; 0: no sampling.
    pub stalls: u32,
    /// The threads of the session's own export (`KTRACE_THREADS`, else
    /// [`ExportOptions::threads`]; 0: one per core).
    pub threads: usize,
}

impl TraceConfig {
    /// Defaults for a launch of `grid` blocks of `block` threads.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        TraceConfig {
            grid,
            block,
            cap: 0,
            warps: WarpSampling::All,
            blocks: BlockSampling::All,
            budget: None,
            launches: LaunchSelection::All,
            output: None,
            capture: None,
            export: ExportOptions::default(),
            quiet: false,
            kernel: String::new(),
            clock_sync: true,
            stalls: 0,
        }
    }

    /// Names the kernel (see [`TraceConfig::kernel`]).
    pub fn kernel(mut self, name: impl Into<String>) -> Self {
        self.kernel = name.into();
        self
    }

    /// Defaults for a cudarc launch configuration.
    pub fn for_launch(cfg: &LaunchConfig) -> Self {
        Self::new(cfg.grid_dim, cfg.block_dim)
    }

    /// What a session with this configuration traces under `env` (from
    /// [`Overrides::from_env`]): every set variable replaces its field,
    /// then the buffer is fitted to the budget. Fails on a shape that
    /// cannot be traced, naming the variables that shaped it.
    pub fn plan(&self, env: &Overrides) -> Result<SessionPlan> {
        let (g, b) = (self.grid, self.block);
        let warps = env.warps.as_ref().unwrap_or(&self.warps);
        let request = SizeRequest {
            grid: [g.0, g.1, g.2],
            block: [b.0, b.1, b.2],
            cap: env.cap.unwrap_or(self.cap),
            warps,
            blocks: env.blocks.unwrap_or(self.blocks),
            blocks_chosen: env.blocks.is_some() || self.blocks != BlockSampling::All,
            budget: env.budget.or(self.budget).unwrap_or(DEFAULT_BUDGET),
        };
        let sizing = fit_buffer(&request).map_err(|e| match e {
            Error::Config(m) if !env.shape_vars().is_empty() => {
                Error::Config(format!("{m} (set by {})", env.shape_vars().join(", ")))
            }
            e => e,
        })?;
        Ok(SessionPlan {
            sizing,
            launches: env
                .launches
                .clone()
                .unwrap_or_else(|| self.launches.clone()),
            stalls: match env.stalls.unwrap_or(self.stalls) {
                0 => 0,
                n if (5..=31).contains(&n) => n,
                n => {
                    return Err(Error::Config(format!(
                        "TraceConfig::stalls {n}: the sampling period is 2^5 to 2^31 cycles \
                         (5 to 31), or 0 for none"
                    )))
                }
            },
            threads: env.threads.unwrap_or(self.export.threads),
        })
    }
}

/// Where a session writes: the trace (`None`: none) and the capture.
/// The trace is [`TraceConfig::output`], else `KTRACE_OUT` (`env_out`),
/// else `trace.json` — except that `KTRACE_CAPTURE` (`env_capture`) alone,
/// with no trace and no capture asked for in the configuration, writes the
/// capture only (a traced run of a big kernel would otherwise write
/// hundreds of MB of JSON that `ktrace export` can make later). The capture
/// is [`TraceConfig::capture`], else `KTRACE_CAPTURE`.
pub(crate) fn outputs(
    config: &TraceConfig,
    env_out: Option<PathBuf>,
    env_capture: Option<PathBuf>,
) -> (Option<PathBuf>, Option<PathBuf>) {
    let output = config.output.clone().or(env_out);
    let capture_only = output.is_none() && config.capture.is_none() && env_capture.is_some();
    let capture = config.capture.clone().or(env_capture);
    if capture_only {
        (None, capture)
    } else {
        (
            Some(output.unwrap_or_else(|| PathBuf::from("trace.json"))),
            capture,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ktrace_capture_alone_writes_the_capture_only() {
        let p = |s: &str| Some(PathBuf::from(s));
        let plain = TraceConfig::new((1, 1, 1), (32, 1, 1));
        // Nothing asked: the default trace, no capture.
        assert_eq!(outputs(&plain, None, None), (p("trace.json"), None));
        // KTRACE_CAPTURE alone: the capture only.
        assert_eq!(outputs(&plain, None, p("a.ktrace")), (None, p("a.ktrace")));
        // With KTRACE_OUT too: both.
        assert_eq!(
            outputs(&plain, p("t.pftrace"), p("a.ktrace")),
            (p("t.pftrace"), p("a.ktrace"))
        );
        // A capture asked for in code keeps the default trace; the
        // environment's capture path wins over no path in code only.
        let coded = TraceConfig {
            capture: p("coded.ktrace"),
            ..TraceConfig::new((1, 1, 1), (32, 1, 1))
        };
        assert_eq!(
            outputs(&coded, None, None),
            (p("trace.json"), p("coded.ktrace"))
        );
        assert_eq!(
            outputs(&coded, None, p("env.ktrace")),
            (p("trace.json"), p("coded.ktrace"))
        );
        let traced = TraceConfig {
            output: p("mine.json"),
            ..TraceConfig::new((1, 1, 1), (32, 1, 1))
        };
        assert_eq!(
            outputs(&traced, None, p("a.ktrace")),
            (p("mine.json"), p("a.ktrace"))
        );
    }
    use crate::sizing::{Fit, CAP_FLOOR};

    fn saxpy() -> TraceConfig {
        TraceConfig::new((4096, 1, 1), (256, 1, 1))
    }

    #[test]
    fn the_defaults_fit_the_budget() {
        let p = saxpy().plan(&Overrides::default()).unwrap();
        assert_eq!((p.sizing.fit, p.sizing.shape.cap()), (Fit::CapLowered, 512));
        assert_eq!(p.launches, LaunchSelection::All);
        assert!(p.sizing.message().unwrap().contains("instead of 4096"));
    }

    #[test]
    fn the_environment_overrides_the_config() {
        let mut c = saxpy();
        c.cap = 64;
        c.launches = LaunchSelection::only([0]);
        let env = Overrides {
            cap: Some(0),
            warps: Some(WarpSampling::List(vec![0, 2])),
            budget: Some(1 << 20),
            launches: Some(LaunchSelection::only([3])),
            ..Overrides::default()
        };
        let p = c.plan(&env).unwrap();
        let s = &p.sizing.shape;
        assert_eq!((s.warp_mask, s.cap()), (0b101, CAP_FLOOR));
        assert_eq!(p.sizing.fit, Fit::BlocksSampled);
        assert!(p.sizing.bytes() <= 1 << 20);
        assert!(!p.launches.contains(0) && p.launches.contains(3));
    }

    #[test]
    fn ktrace_threads_overrides_the_exports_threads() {
        let mut c = saxpy();
        assert_eq!(c.plan(&Overrides::default()).unwrap().threads, 0);
        c.export.threads = 3;
        assert_eq!(c.plan(&Overrides::default()).unwrap().threads, 3);
        let env = Overrides {
            threads: Some(1),
            ..Overrides::default()
        };
        assert_eq!(c.plan(&env).unwrap().threads, 1);
        let env = Overrides::from_lookup(|name| {
            (name == crate::settings::ENV_THREADS).then(|| "auto".into())
        })
        .unwrap();
        assert_eq!(c.plan(&env).unwrap().threads, 0);
        let e = Overrides::from_lookup(|name| {
            (name == crate::settings::ENV_THREADS).then(|| "0".into())
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("KTRACE_THREADS") && e.contains("auto"), "{e}");
    }

    #[test]
    fn chosen_blocks_and_caps_are_kept() {
        let mut c = saxpy();
        c.blocks = BlockSampling::First(4);
        let p = c.plan(&Overrides::default()).unwrap();
        assert_eq!((p.sizing.fit, p.sizing.shape.cap()), (Fit::AsAsked, 4096));
        let env = Overrides {
            blocks: Some(BlockSampling::All),
            budget: Some(1 << 20),
            ..Overrides::default()
        };
        let p = saxpy().plan(&env).unwrap();
        assert_eq!(p.sizing.fit, Fit::OverWithChosenBlocks);
        let env = Overrides {
            cap: Some(1 << 16),
            ..Overrides::default()
        };
        let p = saxpy().plan(&env).unwrap();
        assert_eq!(
            (p.sizing.fit, p.sizing.shape.cap()),
            (Fit::OverWithChosenCap, 1 << 16)
        );
    }

    #[test]
    fn a_bad_shape_names_the_variables_that_made_it() {
        let env = Overrides {
            warps: Some(WarpSampling::List(vec![9])),
            ..Overrides::default()
        };
        let e = saxpy().plan(&env).unwrap_err().to_string();
        assert!(
            e.contains("does not have") && e.ends_with("(set by KTRACE_WARPS)"),
            "{e}"
        );
        let mut c = saxpy();
        c.cap = 48;
        let e = c.plan(&Overrides::default()).unwrap_err().to_string();
        assert!(e.contains("power of two") && !e.contains("set by"), "{e}");
    }
}
