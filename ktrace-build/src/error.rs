//! The errors a build can end in.
//!
//! `Display` gives the message alone: no `ktrace: ` prefix and no final
//! newline, and not the underlying error, which [`std::error::Error::source`]
//! returns. [`crate::Build::compile`] adds the prefix and the chain of
//! sources once, where it reports.

use std::fmt;
use std::path::PathBuf;

use crate::codegen::RenderError;
use crate::nvcc::{ArchError, NvccFailure, Variant};
use crate::regions::TooManyRegions;
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
        /// Which build of it failed.
        variant: Variant,
        /// What nvcc said and how it was run.
        failure: NvccFailure,
    },
    /// Two kernel sources give the same module name.
    DuplicateModule {
        /// The Rust constant both would define.
        name: String,
        /// The source that claimed it first.
        first: PathBuf,
        /// The other one.
        second: PathBuf,
    },
    /// A setting is wrong (file names, module names, features).
    Config(String),
    /// An architecture that ktrace does not know.
    Arch(ArchError),
    /// More region names than 16-bit ids.
    Regions(TooManyRegions),
    /// A generated file's template did not render.
    Render(RenderError),
    /// Reading sources or writing outputs failed.
    Io {
        /// What was being done.
        what: String,
        /// The underlying error, also given by `source()`.
        error: std::io::Error,
    },
    /// Building the C++ launcher library failed; the error from cc (or
    /// bindgen) is also given by `source()`.
    Launcher(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Markers(errs) => {
                let s = if errs.len() == 1 { "" } else { "s" };
                write!(f, "{} bad trace marker{s}:", errs.len())?;
                errs.iter().try_for_each(|e| write!(f, "\n  {e}"))
            }
            Error::NvccNotFound { tried } => {
                write!(f, "nvcc, the CUDA compiler, was not found. Looked in:")?;
                tried.iter().try_for_each(|t| write!(f, "\n  {t}"))?;
                write!(
                    f,
                    "\nSet NVCC to the nvcc binary, or CUDA_HOME to the toolkit root (the folder \
                     holding bin/nvcc). To install CUDA 13.0 from PyPI, without root:\n  {}\n  \
                     export CUDA_HOME=~/cuda13/nvidia/cu13\n\
                     Installed without --target, into the site-packages of the python3 on PATH \
                     (a virtualenv's, say), it is found with no variable set.\n\
                     (in the ktrace repository, scripts/setup-cuda.sh does this)",
                    crate::pypi::install_command("~/cuda13")
                )
            }
            Error::Compile {
                source,
                variant,
                failure,
            } => {
                write!(
                    f,
                    "nvcc failed on {} ({variant} variant, {}):",
                    source.display(),
                    failure.status
                )?;
                for line in failure.output.lines() {
                    write!(f, "\n  {line}")?;
                }
                write!(f, "\ncommand: {}", failure.command)
            }
            Error::DuplicateModule {
                name,
                first,
                second,
            } => write!(
                f,
                "kernel sources {} and {} both give the module name {name}; rename one",
                first.display(),
                second.display()
            ),
            Error::Config(m) => f.write_str(m),
            Error::Arch(e) => fmt::Display::fmt(e, f),
            Error::Regions(e) => fmt::Display::fmt(e, f),
            Error::Render(e) => fmt::Display::fmt(e, f),
            Error::Io { what, .. } => f.write_str(what),
            Error::Launcher(_) => f.write_str("building the launcher library failed"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { error, .. } => Some(error),
            Error::Launcher(error) => Some(&**error),
            // These show their own message, so their sources are theirs.
            Error::Arch(e) => std::error::Error::source(e),
            Error::Regions(e) => std::error::Error::source(e),
            Error::Render(e) => std::error::Error::source(e),
            Error::Markers(_)
            | Error::NvccNotFound { .. }
            | Error::Compile { .. }
            | Error::DuplicateModule { .. }
            | Error::Config(_) => None,
        }
    }
}

/// The report of a failed build: `ktrace: `, the message, then each
/// underlying error after a `: `.
pub(crate) fn report(error: &dyn std::error::Error) -> String {
    let mut text = format!("ktrace: {error}");
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_error() -> Error {
        Error::Io {
            what: "writing out/ktrace.rs".into(),
            error: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only"),
        }
    }

    #[test]
    fn io_errors_name_their_source_once() {
        let e = io_error();
        assert_eq!(e.to_string(), "writing out/ktrace.rs");
        let source = std::error::Error::source(&e).expect("the io error");
        assert_eq!(source.to_string(), "read-only");
        assert_eq!(report(&e), "ktrace: writing out/ktrace.rs: read-only");
    }

    #[test]
    fn messages_have_no_prefix_and_no_final_newline() {
        let errors = [
            io_error(),
            Error::Config("kernel source k.cu does not exist".into()),
            Error::Launcher("cc failed".into()),
            Error::NvccNotFound {
                tried: vec!["NVCC: not set".into()],
            },
            Error::Markers(vec![ScanError {
                file: "k.cu".into(),
                line: 2,
                message: "KTRACE_B: region name is empty".into(),
            }]),
            Error::Compile {
                source: "k.cu".into(),
                variant: Variant::Traced,
                failure: NvccFailure {
                    command: "nvcc k.cu".into(),
                    output: "k.cu(3): error\n".into(),
                    status: "exit status: 2".into(),
                },
            },
        ];
        for e in &errors {
            let text = e.to_string();
            assert!(!text.starts_with("ktrace:"), "{text}");
            assert!(!text.ends_with('\n'), "{text:?}");
            if std::error::Error::source(e).is_none() {
                assert_eq!(report(e), format!("ktrace: {text}"));
            }
        }
        assert_eq!(
            errors[4].to_string(),
            "1 bad trace marker:\n  k.cu:2: KTRACE_B: region name is empty"
        );
        assert_eq!(
            errors[5].to_string(),
            "nvcc failed on k.cu (traced variant, exit status: 2):\n  k.cu(3): error\n\
             command: nvcc k.cu"
        );
    }

    #[test]
    fn launcher_errors_give_cc_error_as_source() {
        let e = Error::Launcher("cc failed".into());
        assert_eq!(e.to_string(), "building the launcher library failed");
        let source = std::error::Error::source(&e).expect("the cc error");
        assert_eq!(source.to_string(), "cc failed");
        assert_eq!(
            report(&e),
            "ktrace: building the launcher library failed: cc failed"
        );
    }

    #[test]
    fn typed_setting_errors_read_as_they_did() {
        let arch = Error::Arch(crate::Arch::parse("sm_91").unwrap_err());
        assert!(arch.to_string().starts_with(
            "unknown GPU architecture \"sm_91\"; expected sm_NN with an optional `a` or `f` \
             suffix, one of sm_50, sm_52,"
        ));
        let regions = Error::Regions(TooManyRegions { count: 65536 });
        assert_eq!(
            regions.to_string(),
            "65536 distinct region names found; ktrace ids are 16 bits, so at most 65535 \
             regions fit; merge or remove some"
        );
        for e in [arch, regions] {
            assert!(std::error::Error::source(&e).is_none());
            assert_eq!(report(&e), format!("ktrace: {e}"));
        }
    }
}
