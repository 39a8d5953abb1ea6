//! `ktrace`: reads capture files (`.ktrace`) written by ktrace-runtime.
//!
//! - `ktrace export CAPTURE [-o OUT.json]`: Chrome trace JSON (open it in
//!   ui.perfetto.dev) and the summary beside it; `-o OUT.pftrace` (or
//!   `--format perfetto`): Perfetto's own format, every launch in one file;
//!   `--time`, `--blocks`, `--sms`, `--warps` and `--regions` keep part of
//!   it.
//! - `ktrace merge A.ktrace B.ktrace ... -o all.pftrace`: the launches of
//!   several captures (processes, GPUs) on one timeline.
//! - `ktrace report CAPTURE -o report.html`: one self-contained HTML page
//!   per launch: header, timeline, histograms, heatmaps, analysis.
//! - `ktrace summary CAPTURE`: a table of region statistics.
//! - `ktrace launches CAPTURE`: per kernel, its launches' durations
//!   (p50, p99, max) and the slowest launch; `--each`: a row per launch.
//!   `--kernels` and `--steps` choose launches here and in `export` and
//!   `summary`.
//! - `ktrace analyze CAPTURE`: warp roles and their wait share, imbalance
//!   across blocks and the tail, warps inside each region over time
//!   (`--json`: the analysis as documented in `docs/analysis.md`).
//! - `ktrace diff A B`: region statistics of two captures side by side, and
//!   the time per warp of each warp role.
//!
//! The arguments are declared in `cli.rs`; each command runs in its module
//! under `commands/`. `main` parses, dispatches and reports a command's
//! error, prefixed with `ktrace: ` there and nowhere else.

#![deny(missing_docs)]

mod analysis_text;
mod cli;
mod commands;
mod error;
mod progress;
mod table;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use error::CliError;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing to a closed pipe (`ktrace summary
    // ... | head`) would panic; a command-line tool should just stop, as
    // other Unix tools do.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default before any
    // other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match parse().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ktrace: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The command line's command. A value that one of the runtime's parsers
/// refused (a filter, a wait pattern) comes back as the program's error;
/// clap reports every other error, and the help, itself and exits.
fn parse() -> Result<Command, CliError> {
    match Cli::try_parse() {
        Ok(cli) => Ok(cli.command),
        Err(e) => match cli::parse_error(&e) {
            Some(err) => Err(err),
            None => e.exit(),
        },
    }
}

/// Runs `command`.
fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Export(args) => commands::export::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Summary(args) => commands::summary::run(args),
        Command::Launches(args) => commands::launches::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Analyze(args) => commands::analyze::run(args),
        Command::Stalls(args) => commands::stalls::run(args),
    }
}
