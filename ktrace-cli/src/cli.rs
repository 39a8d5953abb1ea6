//! The command line: every command's arguments, as clap parses them.
//!
//! Arguments that more than one command takes, or that belong together,
//! are declared once as an [`Args`] struct and flattened into each command
//! that takes them. Values with a grammar of their own (the filters, the
//! wait patterns) are parsed by clap through the runtime's parsers, so a
//! command receives them typed; [`parse_error`] turns such a parser's
//! error back into the program's own error, so it reads as before.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ktrace_runtime::analysis::{ActiveWindow, AnalysisError, WaitPatterns};
use ktrace_runtime::export::chrome::ChromeOptions;
use ktrace_runtime::export::filter::{
    FilterError, FilterPart, IdList, RegionNames, SummaryScope, TimeWindow, TraceFilter,
};
use ktrace_runtime::export::launches::{LaunchSelection, StepRange};
use ktrace_runtime::export::summary::Breakdown;
use ktrace_runtime::settings::{parse_threads, threads_from_env};

use crate::error::CliError;

/// `ktrace` and its command.
#[derive(Parser, Debug)]
#[command(
    name = "ktrace",
    version,
    about = "Export, summarise and compare ktrace captures"
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Write the trace (Chrome JSON or Perfetto) and the summary of a capture.
    ///
    /// --time, --blocks, --sms, --warps and --regions keep part of each
    /// launch in the trace: the warps in all the lists given, and of those
    /// the spans and marks in the window and of the regions named. A span
    /// that overlaps the window is kept whole, even where it starts before
    /// the window or ends after it. The summary covers the whole launch
    /// unless --filter-summary is given; otherData.filter in the trace
    /// records the filter.
    ///
    /// A Perfetto trace puts the launches on the host's CLOCK_REALTIME
    /// when the capture holds clock syncs (captures of format 2 from a
    /// TraceSession), with each launch's host enqueue-to-completion span.
    ///
    /// A progress line appears on stderr when an export runs for more than
    /// a second and stderr is a terminal.
    #[command(verbatim_doc_comment)]
    Export(ExportArgs),
    /// Put the launches of several captures (other processes, other GPUs)
    /// on one timeline, in one Perfetto trace.
    ///
    /// Each capture's %globaltimer is placed on the host's CLOCK_REALTIME
    /// through its clock syncs (interpolated between them), so events of
    /// different GPUs line up; each launch is a group under its GPU with
    /// its kernel name and its host enqueue-to-completion span. Captures
    /// without clock syncs can be merged only when all come from one GPU
    /// (same UUID): then the raw %globaltimer is the axis.
    #[command(verbatim_doc_comment)]
    Merge(MergeArgs),
    /// Write one self-contained HTML report of a launch: the launch header,
    /// a timeline of every traced warp (zoom with the wheel, pan by
    /// dragging, hover for a span), per-region histograms, percentiles and
    /// heatmaps, the analysis (as `ktrace analyze`: warp roles and wait
    /// share, slowest blocks and the tail, warps inside each region over
    /// time) and the diagnostics. It needs no network: open it in any
    /// browser.
    Report(ReportArgs),
    /// Print region statistics of a capture.
    Summary(SummaryArgs),
    /// Print statistics across the launches of a capture: per kernel its
    /// launches and their duration (p50, p99, max) and the slowest launch;
    /// --each: a row per launch.
    ///
    /// A launch's duration runs from the earliest open to the latest flush
    /// of its traced warps (their %globaltimer), read from the slots'
    /// metadata without decoding. A launch slower than 1.5 x its kernel's
    /// p50 is listed as an outlier. Sites of a continuous session that
    /// dropped launches (no free slab) are warned about, and a capture
    /// whose file was cut short says where.
    #[command(verbatim_doc_comment)]
    Launches(LaunchesArgs),
    /// Compare region statistics of two captures (before, after), and the
    /// time per warp of each warp role.
    Diff(DiffArgs),
    /// Analyse a capture: warp roles and their wait share, imbalance across
    /// blocks and the tail, warps inside each region over time.
    ///
    /// Warps are grouped into roles by the set of regions they run (the
    /// producer and consumer warps of a warp-specialized kernel). A warp's
    /// active time runs from its first event to its last (--active
    /// open-to-flush: from its open to its flush); its wait share is the
    /// part of it spent in regions matching --wait. docs/analysis.md
    /// defines every figure and the JSON that --json writes.
    #[command(verbatim_doc_comment)]
    Analyze(AnalyzeArgs),
    /// Why each region is slow: the PC samples of a run with
    /// KTRACE_STALLS=1, per region.
    ///
    /// For each kernel sampled: per region its samples, their share of the
    /// kernel's (a sample counts towards every region around its
    /// instruction, so nested regions overlap), its top stall reasons and
    /// its hottest instructions; then the samples outside every region, on
    /// ktrace's own marker instructions (a traced build's cost) and on
    /// instructions without line information. docs/stalls.md says how
    /// instructions are placed in regions and where that is approximate.
    #[command(verbatim_doc_comment)]
    Stalls(StallsArgs),
}

/// The arguments of `ktrace stalls`.
#[derive(Args, Debug)]
pub struct StallsArgs {
    /// The capture file (.ktrace).
    pub capture: PathBuf,
    /// Only regions matching PATTERN (a name, or a glob with *).
    #[arg(long, value_name = "PATTERN")]
    pub region: Option<String>,
    /// Only kernels matching PATTERN; repeat for more.
    #[arg(long = "kernels", value_name = "PATTERN")]
    pub kernels: Vec<String>,
    /// Write the tables as JSON (schema ktrace.stalls/1).
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// The arguments of `ktrace export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The capture file (.ktrace).
    pub capture: PathBuf,
    /// The trace file; the summary goes beside it (NAME_summary.json).
    /// Default: the capture's name with .json (.pftrace for --format
    /// perfetto). A name ending in .pftrace or .perfetto-trace asks for
    /// the Perfetto format. Chrome: launches after the first go to
    /// NAME_launchN.json unless --launch picks one, each with its own
    /// summary. Perfetto: every launch goes into the one file, and one
    /// summary beside it (NAME_summary.json) lists every launch's.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The trace format: chrome (JSON) or perfetto (.pftrace). Default:
    /// from the output's name, else chrome.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// How the Chrome trace is laid out.
    #[command(flatten)]
    pub chrome: ChromeArgs,
    /// Perfetto: sm, block, warp and region as arguments of every slice
    /// and instant (a larger file; the tracks already say them).
    #[arg(long)]
    pub args: bool,
    /// Export only this launch.
    #[arg(long)]
    pub launch: Option<u32>,
    /// Add per-block or per-warp totals to the summary.
    #[arg(long, value_enum, default_value_t = BreakdownArg::None)]
    pub breakdown: BreakdownArg,
    /// Which launches to export.
    #[command(flatten)]
    pub select: SelectArgs,
    /// What the trace keeps of each launch.
    #[command(flatten)]
    pub filter: FilterArgs,
    /// How many threads export.
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// `--threads`, shared by the commands that decode whole launches.
#[derive(Args, Debug, Default)]
pub struct ThreadsArgs {
    /// Threads that decode, summarise and encode each launch: auto (one
    /// per core, the default) or 1 to 1024. Overrides KTRACE_THREADS. The
    /// output is the same for any number.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

impl ThreadsArgs {
    /// `--threads`, else `KTRACE_THREADS`, else 0 (one per core).
    pub fn threads(&self) -> Result<usize, CliError> {
        match self.threads {
            Some(n) => Ok(n),
            None => Ok(threads_from_env()?.unwrap_or(0)),
        }
    }
}

/// The arguments of `ktrace merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The capture files (.ktrace).
    #[arg(required = true, num_args = 1..)]
    pub captures: Vec<PathBuf>,
    /// The Perfetto trace to write (.pftrace); one summary goes beside it
    /// (NAME_summary.json), with every launch's summary in file order.
    #[arg(short, long)]
    pub output: PathBuf,
    /// sm, block, warp and region as arguments of every slice and
    /// instant.
    #[arg(long)]
    pub args: bool,
    /// How many threads export.
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// The arguments of `ktrace report`.
#[derive(Args, Debug)]
#[command(mut_arg("wait", |a| a.help(
    "Regions in which warps wait, for the analysis: a name or a glob (* matches any run of \
     characters); repeat for more. Default: wait*"
)))]
pub struct ReportArgs {
    /// The capture file (.ktrace).
    pub capture: PathBuf,
    /// The HTML file to write. Default: the capture's name with .html.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The launch to report. Default: the only launch of the capture
    /// (a capture of several launches needs --launch).
    #[arg(long)]
    pub launch: Option<u32>,
    /// The regions in which warps wait.
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// The arguments of `ktrace summary`.
#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// The capture file (.ktrace).
    pub capture: PathBuf,
    /// Only this launch (default: every launch).
    #[arg(long)]
    pub launch: Option<u32>,
    /// Instead, the durations of this region's spans grouped by the
    /// value recorded with them (KTRACE_B_V / KTRACE_E_V: the begin's
    /// value, else the end's), and its marks (KTRACE_M_V) counted by
    /// value.
    #[arg(long, value_name = "REGION", alias = "by-payload")]
    pub by_value: Option<String>,
    /// Which launches to summarise.
    #[command(flatten)]
    pub select: SelectArgs,
    /// How many threads decode.
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// The arguments of `ktrace launches`.
#[derive(Args, Debug)]
pub struct LaunchesArgs {
    /// The capture file (.ktrace).
    pub capture: PathBuf,
    /// Also a row per launch: index, kernel, site/epoch, start (from the
    /// capture's first launch), duration, warps.
    #[arg(long)]
    pub each: bool,
    /// Which launches to count.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// `--kernels` and `--steps`: which launches of a capture a command reads.
/// A selection that keeps no launch is an error that says what the
/// capture holds.
#[derive(Args, Debug, Default)]
pub struct SelectArgs {
    /// Only launches of a kernel matching PATTERN: a name, or a glob in
    /// which * matches any run of characters (gemm*); repeat for more.
    #[arg(long = "kernels", value_name = "PATTERN")]
    pub kernels: Vec<String>,
    /// Only launches of a host step with an index in A..B (B excluded, as
    /// a Rust range; A.. and ..B leave a side open, a lone A is that
    /// step): the step recorded on the device for the launch, else the
    /// steps its time on the host's clock overlaps.
    #[arg(long, value_name = "A..B", value_parser = StepRange::parse)]
    pub steps: Option<StepRange>,
}

impl SelectArgs {
    /// The selection asked for.
    pub fn selection(self) -> LaunchSelection {
        LaunchSelection {
            kernels: self.kernels,
            steps: self.steps,
        }
    }
}

/// The arguments of `ktrace diff`.
#[derive(Args, Debug)]
#[command(mut_arg("wait", |a| a.help(
    "Regions in which warps wait, for the roles' wait share: a name or a glob (* matches any \
     run of characters); repeat for more. Default: wait*"
)))]
pub struct DiffArgs {
    /// The capture before.
    pub a: PathBuf,
    /// The capture after.
    pub b: PathBuf,
    /// The launch to compare in both (default 0).
    #[arg(long, default_value_t = 0)]
    pub launch: u32,
    /// The regions in which warps wait.
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// The arguments of `ktrace analyze`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The capture file (.ktrace).
    pub capture: PathBuf,
    /// Only this launch (default: every launch).
    #[arg(long)]
    pub launch: Option<u32>,
    /// The regions in which warps wait.
    #[command(flatten)]
    pub wait: WaitArgs,
    /// What counts as a warp's active time.
    #[arg(long, value_enum, default_value_t = ActiveArg::Events)]
    pub active: ActiveArg,
    /// Bins of the busy series.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub bins: u32,
    /// The slowest blocks to list.
    #[arg(long, default_value_t = 5)]
    pub slow_blocks: usize,
    /// Write the analysis as JSON (schema ktrace.analysis/1): an object
    /// with the capture's name and one analysis per launch.
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// `--by-sm` and `--raw-events`: the shape of a Chrome trace.
#[derive(Args, Debug)]
pub struct ChromeArgs {
    /// Chrome: one process per SM instead of one per block.
    #[arg(long)]
    pub by_sm: bool,
    /// Chrome: raw begin/end events instead of complete events.
    #[arg(long)]
    pub raw_events: bool,
}

impl ChromeArgs {
    /// Whether either option was given.
    pub fn any(&self) -> bool {
        self.by_sm || self.raw_events
    }

    /// The Chrome writer's options.
    pub fn options(&self) -> ChromeOptions {
        ChromeOptions {
            by_sm: self.by_sm,
            raw_events: self.raw_events,
        }
    }
}

/// The filter options of `ktrace export`, parsed.
#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Keep only this time window, in microseconds from the launch's
    /// first event; either side may be left out: 10..250.5, 10..,
    /// ..250.5. Both edges count as inside.
    #[arg(
        long,
        value_name = "START..END",
        allow_hyphen_values = true,
        value_parser = TimeWindow::parse
    )]
    pub time: Option<TimeWindow>,
    /// Keep only these blocks (linear index): comma-separated numbers
    /// and inclusive ranges, a range with no end reaching the last
    /// block: 0-3,7,12-.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = block_list)]
    pub blocks: Option<IdList>,
    /// Keep only the warps that ran on these SMs (LIST as for --blocks).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = sm_list)]
    pub sms: Option<IdList>,
    /// Keep only these warps of each block (LIST as for --blocks).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = warp_list)]
    pub warps: Option<IdList>,
    /// Keep only these regions: names from the capture's region table,
    /// comma-separated; * matches any run of characters (wait*).
    #[arg(
        long,
        value_name = "NAME[,NAME...]",
        allow_hyphen_values = true,
        value_parser = RegionNames::parse
    )]
    pub regions: Option<RegionNames>,
    /// Summarise only what the filters keep (default: the summary
    /// covers the whole launch).
    #[arg(long)]
    pub filter_summary: bool,
}

impl FilterArgs {
    /// The filter, or `None` when no option asks for one.
    pub fn filter(self) -> Option<TraceFilter> {
        let f = TraceFilter {
            time: self.time,
            blocks: self.blocks,
            sms: self.sms,
            warps: self.warps,
            regions: self.regions,
            summary: if self.filter_summary {
                SummaryScope::Kept
            } else {
                SummaryScope::default()
            },
        };
        (!f.keeps_all()).then_some(f)
    }
}

/// `--blocks`.
fn block_list(text: &str) -> Result<IdList, FilterError> {
    IdList::parse(FilterPart::Blocks, text)
}

/// `--sms`.
fn sm_list(text: &str) -> Result<IdList, FilterError> {
    IdList::parse(FilterPart::Sms, text)
}

/// `--warps`.
fn warp_list(text: &str) -> Result<IdList, FilterError> {
    IdList::parse(FilterPart::Warps, text)
}

/// `--wait`: the regions in which warps wait. Each command that takes it
/// words its help for what it does with them (`mut_arg` on the command).
#[derive(Args, Debug)]
pub struct WaitArgs {
    /// Regions in which warps wait: a name or a glob (* matches any run
    /// of characters); repeat for more. Default: wait*.
    #[arg(long, value_name = "GLOB", value_parser = wait_pattern)]
    pub wait: Vec<String>,
}

impl WaitArgs {
    /// The patterns, `wait*` when none is given.
    pub fn patterns(self) -> Result<WaitPatterns, AnalysisError> {
        if self.wait.is_empty() {
            Ok(WaitPatterns::default())
        } else {
            WaitPatterns::new(self.wait)
        }
    }
}

/// One `--wait` pattern, checked as [`WaitPatterns::new`] checks it.
fn wait_pattern(text: &str) -> Result<String, AnalysisError> {
    WaitPatterns::new([text])?;
    Ok(text.to_string())
}

/// The program's own error for a value that one of the runtime's parsers
/// refused, so that it reads as it does when the command reports it;
/// `None` for every other error of clap's (clap reports those itself).
pub fn parse_error(e: &clap::Error) -> Option<CliError> {
    let source = std::error::Error::source(e)?;
    if let Some(f) = source.downcast_ref::<FilterError>() {
        return Some(CliError::Filter(f.clone()));
    }
    source
        .downcast_ref::<AnalysisError>()
        .map(|a| CliError::Analysis(a.clone()))
}

/// `--active`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ActiveArg {
    /// From a warp's first event to its last.
    Events,
    /// From a warp's open to its flush.
    OpenToFlush,
}

impl From<ActiveArg> for ActiveWindow {
    fn from(a: ActiveArg) -> Self {
        match a {
            ActiveArg::Events => ActiveWindow::Events,
            ActiveArg::OpenToFlush => ActiveWindow::OpenToFlush,
        }
    }
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Chrome trace event JSON.
    Chrome,
    /// Perfetto's protobuf trace (.pftrace).
    Perfetto,
}

/// `--breakdown`.
// No doc comments on the values: clap would list them in the help.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BreakdownArg {
    None,
    Block,
    Warp,
}

impl From<BreakdownArg> for Breakdown {
    fn from(b: BreakdownArg) -> Self {
        match b {
            BreakdownArg::None => Breakdown::None,
            BreakdownArg::Block => Breakdown::PerBlock,
            BreakdownArg::Warp => Breakdown::PerWarp,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// A value the runtime's parser refuses is the program's error, worded
    /// by the runtime; clap's own errors stay clap's.
    #[test]
    fn refused_values_are_the_programs_errors() {
        let refused = |args: &[&str]| {
            let e = Cli::try_parse_from(args).unwrap_err();
            parse_error(&e).map(|e| e.to_string())
        };
        assert_eq!(
            refused(&["ktrace", "export", "c.ktrace", "--blocks", "3-1"]).as_deref(),
            Some("block list \"3-1\": the range 3-1 is reversed (write 1-3)")
        );
        assert_eq!(
            refused(&["ktrace", "analyze", "c.ktrace", "--wait", ""]).as_deref(),
            Some(
                "wait pattern \"\": the pattern is empty; give a region name or a glob such as \
                 wait*"
            )
        );
        assert_eq!(
            refused(&["ktrace", "analyze", "c.ktrace", "--bins", "0"]),
            None
        );
        assert_eq!(refused(&["ktrace", "export"]), None);
    }

    #[test]
    fn the_filter_is_none_unless_an_option_asks_for_one() {
        let filter = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
            Command::Export(a) => a.filter.filter(),
            _ => unreachable!(),
        };
        assert_eq!(filter(&["ktrace", "export", "c", "--filter-summary"]), None);
        let f = filter(&["ktrace", "export", "c", "--sms", "1-2", "--filter-summary"]).unwrap();
        assert!(f.sms.is_some_and(|s| s.contains(2) && !s.contains(3)));
        assert_eq!(f.summary, SummaryScope::Kept);
    }
}
