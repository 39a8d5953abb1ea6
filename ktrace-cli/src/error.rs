//! What can stop a command: [`CliError`]. `main` reports it, prefixed
//! with `ktrace: ` there and nowhere else.

use std::path::PathBuf;

use ktrace_runtime::analysis::AnalysisError;
use ktrace_runtime::export::filter::FilterError;

/// What can stop a command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading, decoding or writing failed.
    #[error(transparent)]
    Runtime(#[from] ktrace_runtime::Error),
    /// The capture file holds no launch to read.
    #[error("{path}: the capture holds no launch")]
    NoLaunch {
        /// The capture file.
        path: PathBuf,
    },
    /// A filter option that cannot be parsed.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// Exporting one launch failed.
    #[error("launch {launch}: {error}")]
    Launch {
        /// The launch.
        launch: u32,
        /// Why.
        error: ktrace_runtime::Error,
    },
    /// Options that do not go together.
    #[error("{0}")]
    Usage(String),
    /// Analysis options that cannot be used.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// Writing the output failed.
    #[error("{path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}
