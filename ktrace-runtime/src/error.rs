//! The one error type of this crate.
//!
//! `Debug` prints the same text as `Display`, so a `main` that returns
//! `Result<(), Box<dyn std::error::Error>>` shows the clear message rather
//! than a struct dump.
//!
//! Each message is whole: it ends with its cause's message where there is
//! one (the driver's error, the I/O error), so printing the error alone
//! says everything, which is how ktrace reports (the `ktrace` command,
//! [`TraceSession`]'s drop). The cause is also the error's
//! [`source`](std::error::Error::source), for a program that inspects it
//! (the [`std::io::Error`]'s kind, the driver's result code) rather than
//! prints it; a reporter that prints each error of the chain would name the
//! cause twice, so print the top one. No message starts with `ktrace: `: the
//! program that reports an error adds that once.
//!
//! [`TraceSession`]: crate::session::TraceSession

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong in ktrace-runtime.
///
/// `Debug` prints the `Display` message, so `main` returning this error
/// (or a `Box<dyn Error>` holding it) shows `Error: ` and the message.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration or launch shape that cannot be traced.
    #[error("{0}")]
    Config(String),

    /// CUPTI's PC sampling could not be used: the library is missing, or
    /// profiling is not permitted, or a call failed (the message says which
    /// and what was searched). Tracing does not need it.
    #[error("PC sampling: {0}")]
    Cupti(String),

    /// An environment variable holds a value that is none of its forms.
    #[error("{var}={value:?}: {problem}; accepted: {accepted}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        problem: ValueError,
        /// The forms it takes.
        accepted: &'static str,
    },

    /// The trace buffer does not fit in the device's free memory.
    #[cfg(feature = "cuda")]
    #[error(
        "the trace buffer needs {asked} bytes ({slots} slots of {slot_bytes} bytes) but \
         the device has {free} bytes free; shrink it with a smaller per-warp capacity \
         (KTRACE_CAP or TraceConfig::cap), fewer traced warps (KTRACE_WARPS or \
         WarpSampling::Mask/List) or fewer traced blocks (KTRACE_BLOCKS or \
         BlockSampling::Stride/First)"
    )]
    BufferTooLarge {
        /// Bytes the buffer needs.
        asked: u64,
        /// Bytes free on the device.
        free: u64,
        /// Slots in the buffer.
        slots: u64,
        /// Bytes per slot.
        slot_bytes: u64,
    },

    /// No CUDA driver library could be loaded (no GPU driver installed).
    #[cfg(feature = "cuda")]
    #[error(
        "the CUDA driver library could not be loaded (tried {tried}); this machine has \
         no NVIDIA driver, or it is not on the library path (LD_LIBRARY_PATH). Tracing needs a \
         GPU; captures can still be read with `ktrace summary` / `ktrace export`"
    )]
    NoDriver {
        /// The library names tried.
        tried: String,
    },

    /// A CUDA driver call failed.
    #[cfg(feature = "cuda")]
    #[error("CUDA driver error while {what}: {error}")]
    Driver {
        /// What ktrace was doing.
        what: &'static str,
        /// The driver's error; also the [`source`](std::error::Error::source).
        #[source]
        error: cudarc::driver::DriverError,
    },

    /// The handshake that measures the GPU clock against the host's failed.
    #[cfg(feature = "cuda")]
    #[error("clock handshake: {0}")]
    Handshake(String),

    /// Reading or writing a file failed.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause; also the [`source`](std::error::Error::source).
        #[source]
        error: std::io::Error,
    },

    /// The file is not a ktrace capture.
    #[error(
        "not a ktrace capture file (bad magic bytes {found:02x?}){}",
        magic_hint(found)
    )]
    BadMagic {
        /// The first bytes of the file.
        found: Vec<u8>,
    },

    /// The capture was written by a newer ktrace.
    #[error(
        "capture format version {found} is newer than this ktrace reads (up to \
         {supported}); upgrade ktrace"
    )]
    NewerFormat {
        /// The version in the file.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },

    /// The capture holds a device buffer layout this build cannot decode.
    #[error(
        "capture buffer layout version {found} is not supported (this ktrace decodes \
         layout {supported})"
    )]
    UnsupportedLayout {
        /// The layout version in the file.
        found: u16,
        /// The layout version this build decodes.
        supported: u16,
    },

    /// The capture ends before a field it declares.
    #[error(
        "capture truncated: {what} at byte {offset} needs {needed} bytes, only \
         {available} left"
    )]
    Truncated {
        /// The field or section.
        what: String,
        /// Where it starts.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left in the file.
        available: u64,
    },

    /// Captures cannot be placed on one time axis.
    #[error("cannot put these captures on one timeline: {0}")]
    Merge(String),

    /// The capture is malformed.
    #[error("corrupt capture: {0}")]
    Corrupt(String),

    /// The capture is valid, but reading it needs more memory than this
    /// machine can allocate (a launch whose raw buffer, mostly empty slots
    /// in the file, spans more address space than there is).
    #[error(
        "capture too large for this machine: {what} needs {bytes} bytes of memory, which \
         could not be allocated; the file is valid, read it where there is that much \
         address space"
    )]
    TooLarge {
        /// What needs the memory.
        what: String,
        /// Bytes it needs.
        bytes: u64,
    },

    /// A raw buffer does not match the launch shape it is decoded with.
    #[error("raw buffer of {actual} bytes does not match the launch shape ({expected} bytes)")]
    BufferSize {
        /// Bytes the shape implies.
        expected: u64,
        /// Bytes given.
        actual: u64,
    },

    /// Asked for a launch that is not there.
    #[error("no launch {asked} (the capture holds {available} launches)")]
    NoSuchLaunch {
        /// The launch asked for.
        asked: u32,
        /// Launches available.
        available: usize,
    },
}

impl fmt::Debug for Error {
    /// The `Display` text: what `main` prints when it returns this error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error,
        }
    }
}

/// Why a value is none of a variable's forms: what a `parse_*` function
/// of [`settings`](crate::settings) returns, and the `problem` of an [`Error::Env`]. Each
/// message says what is wrong with the value alone; the variable and its
/// forms are [`Error::Env`]'s to add.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// The variable's value is not UTF-8.
    #[error("not UTF-8")]
    NotUtf8,
    /// A number that is not a whole number (or does not fit in 32 bits).
    #[error("{0:?} is not a whole number")]
    NotANumber(String),
    /// A capacity that is not a power of two in range.
    #[error("{0} is not a power of two from 32 to 16777216")]
    NotAPowerOfTwo(u32),
    /// An index list with an empty item (or no item at all).
    #[error("an empty item in the list")]
    EmptyItem,
    /// A range `A-B` of an index list with `B` below `A`, as written.
    #[error("the range {0} runs backwards")]
    Backwards(String),
    /// An index at or over its limit (a warp index of 32 or more).
    #[error("{index} is not below {limit}")]
    NotBelow {
        /// The index.
        index: u32,
        /// The first index not allowed.
        limit: u32,
    },
    /// A block sampling that selects no block (`first:0`, `stride:0`).
    #[error("0 selects no block; use at least 1")]
    NoBlock,
    /// A block sampling that is none of `all`, `first:`, `stride:`.
    #[error("{0:?} is none of the forms")]
    NoForm(String),
    /// What follows the comma of `stride:N,max:M` is not `max:M`.
    #[error("{0:?} after the comma is not `max:M`")]
    NotMax(String),
    /// A number outside its range.
    #[error("{value} is not from {first} to {last}")]
    NotIn {
        /// The number.
        value: u32,
        /// The first allowed.
        first: u32,
        /// The last allowed.
        last: u32,
    },
    /// A budget of 0 MiB.
    #[error("0 MiB holds no trace; unset KTRACE to trace nothing")]
    NoBudget,
    /// A budget whose bytes do not fit in 64 bits.
    #[error("{0} MiB is more bytes than 64 bits count")]
    BudgetTooLarge(u64),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a file that is not a capture looks like, from its first bytes: a
/// trace or summary that ktrace writes, given by mistake.
fn magic_hint(found: &[u8]) -> &'static str {
    let json = matches!(
        found.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    );
    if json {
        ": it looks like JSON (a Chrome trace or a summary that ktrace writes); ktrace reads \
         the .ktrace capture the run wrote"
    } else if found.first() == Some(&0x0a) {
        // A Perfetto trace is a sequence of TracePacket fields (field 1,
        // length-delimited: 0x0a, then its length).
        ": it looks like a Perfetto trace (.pftrace): open it in ui.perfetto.dev; ktrace \
         reads the .ktrace capture the run wrote"
    } else if found.starts_with(&[0x1f, 0x8b]) {
        ": it is gzip-compressed; decompress it first"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Error> {
        #[cfg_attr(not(feature = "cuda"), allow(unused_mut))]
        let mut v = vec![
            Error::Config("grid [0, 1, 1] has no blocks".into()),
            Error::Env {
                var: "KTRACE_CAP",
                value: "100".into(),
                problem: ValueError::NotAPowerOfTwo(100),
                accepted: "a power of two",
            },
            Error::io("run.ktrace", std::io::Error::other("disk full")),
            Error::BadMagic { found: vec![1, 2] },
            Error::NoSuchLaunch {
                asked: 3,
                available: 1,
            },
        ];
        #[cfg(feature = "cuda")]
        v.push(Error::NoDriver {
            tried: "libcuda.so, ...".into(),
        });
        v
    }

    #[test]
    fn debug_is_the_display_text_without_prefix_or_repeated_cause() {
        for e in samples() {
            let (d, s) = (format!("{e:?}"), e.to_string());
            assert_eq!(d, s);
            assert!(!s.starts_with("ktrace"), "{s}");
            // The cause, where there is one, is the message's tail and the
            // source; every other error has none.
            match std::error::Error::source(&e) {
                Some(cause) => {
                    assert!(matches!(e, Error::Io { .. }), "{s}");
                    assert!(s.ends_with(&format!(": {cause}")), "{s}");
                }
                None => assert!(!matches!(e, Error::Io { .. }), "{s}"),
            }
            // What `main` returning `Box<dyn Error>` prints.
            let boxed: Box<dyn std::error::Error> = Box::new(e);
            assert_eq!(format!("Error: {boxed:?}"), format!("Error: {s}"));
        }
        let io = Error::io("run.ktrace", std::io::Error::other("disk full")).to_string();
        assert_eq!(io.matches("disk full").count(), 1, "{io}");
    }

    #[test]
    fn the_source_of_an_io_error_is_the_io_error() {
        let e = Error::io(
            "run.ktrace",
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        );
        let source = std::error::Error::source(&e).expect("an io error has a source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("the source is the io error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(io.to_string(), "no such file");
        assert!(std::error::Error::source(io).is_none());
        // The message is unchanged: the file, then the cause, once.
        assert_eq!(e.to_string(), "run.ktrace: no such file");
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn the_source_of_a_driver_error_is_the_driver_error() {
        use cudarc::driver::{sys::CUresult, DriverError};
        let e = Error::Driver {
            what: "launching the kernel",
            error: DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED),
        };
        // Only the source is looked at: printing a driver error asks the
        // driver for its text, and this test runs without one.
        let source = std::error::Error::source(&e).expect("a driver error has a source");
        let driver = source
            .downcast_ref::<DriverError>()
            .expect("the source is the driver error");
        assert_eq!(driver.0, CUresult::CUDA_ERROR_LAUNCH_FAILED);
    }
}
