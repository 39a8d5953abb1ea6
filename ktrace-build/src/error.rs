//! The errors a build can end in.

use std::fmt;
use std::path::PathBuf;

use crate::nvcc::NvccFailure;
use crate::scan::ScanError;

/// Why a ktrace build failed. Its `Display` is the message a user sees.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Bad markers in the sources; every one found is listed.
    Markers(Vec<ScanError>),
    /// No nvcc was found; lists where ktrace looked.
    NvccNotFound {
        /// Each place tried.
        tried: Vec<String>,
    },
    /// nvcc rejected a source.
    Compile {
        /// The source file.
        source: PathBuf,
        /// `traced` or `untraced`.
        variant: &'static str,
        /// What nvcc said and how it was run.
        failure: NvccFailure,
    },
    /// A setting is wrong (architecture, file names, region count).
    Config(String),
    /// Reading sources or writing outputs failed.
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        error: std::io::Error,
    },
    /// Building the C++ launcher library failed.
    Launcher(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Markers(errs) => {
                writeln!(
                    f,
                    "ktrace: {} bad trace marker{}:",
                    errs.len(),
                    if errs.len() == 1 { "" } else { "s" }
                )?;
                for e in errs {
                    writeln!(f, "  {e}")?;
                }
                Ok(())
            }
            Error::NvccNotFound { tried } => {
                writeln!(
                    f,
                    "ktrace: nvcc, the CUDA compiler, was not found. Looked in:"
                )?;
                for t in tried {
                    writeln!(f, "  {t}")?;
                }
                writeln!(
                    f,
                    "Set NVCC to the nvcc binary, or CUDA_HOME to the toolkit root (the folder \
                     holding bin/nvcc). To install CUDA 13.0 without root:\n  python3 -m pip \
                     install --target ~/cuda13 \"nvidia-cuda-nvcc==13.0.*\" \
                     \"nvidia-cuda-runtime==13.0.*\" \"nvidia-cuda-crt==13.0.*\" \
                     \"nvidia-nvvm==13.0.*\"\n  export CUDA_HOME=~/cuda13/nvidia/cu13\n\
                     (in the ktrace repository, scripts/setup-cuda.sh does this)"
                )
            }
            Error::Compile {
                source,
                variant,
                failure,
            } => {
                writeln!(
                    f,
                    "ktrace: nvcc failed on {} ({variant} variant, {}):",
                    source.display(),
                    failure.status
                )?;
                for line in failure.output.lines() {
                    writeln!(f, "  {line}")?;
                }
                writeln!(f, "command: {}", failure.command)
            }
            Error::Config(m) => writeln!(f, "ktrace: {m}"),
            Error::Io { what, error } => writeln!(f, "ktrace: {what}: {error}"),
            Error::Launcher(m) => writeln!(f, "ktrace: building the launcher library failed: {m}"),
        }
    }
}

impl std::error::Error for Error {}
