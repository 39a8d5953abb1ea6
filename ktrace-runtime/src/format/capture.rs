//! Capture files (`.ktrace`): trace buffers with their launch shapes, the
//! region table, the device facts and the GPU clock measured against the
//! host's, so a trace can be exported, summarised, compared and merged later
//! on a machine without a GPU.
//!
//! The format is little-endian and versioned; `docs/capture-format.md` in the
//! repository gives every field's offset and type. In short (version 3):
//!
//! ```text
//! header (32 B)   magic "\x89KTRACE\n", format version, layout version,
//!                 launch count (0), SM count, clock rate (kHz), flags, reserved
//! device name     u32 length + UTF-8
//! region table    u32 count + count x (u16 id, u16 length, UTF-8 name)
//! device identity ordinal, UUID
//! records         until the end of the file, each u32 kind, u32 flags,
//!                 u64 payload length, payload: launches (launch header +
//!                 kernel name + the buffer in compact form: per slot its
//!                 metadata and used entries), clock syncs, host steps,
//!                 sites, and last the end record
//! ```
//!
//! A file is written a record at a time ([`CaptureWriter`]) and can be read
//! so ([`CaptureStream`]); one whose writer never finished reads up to its
//! last complete record. Version 1 and 2 files (a launch count in the
//! header, and the launches after the clock syncs) still read. The reader
//! checks every length against what is left of the file before allocating
//! anything, so a truncated or lying file gives an [`Error`] (or, for a
//! version 3 file cut inside a record, a [`StreamEnd::Cut`]), never a panic
//! or a huge allocation.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
pub use crate::format::compact::stored_part;
use crate::format::contents::MAX_NAME_BYTES;
pub use crate::format::contents::{
    Capture, DeviceInfo, HostSpan, HostStep, LaunchCapture, LaunchOrigin, SiteRecord, StreamEnd,
    FORMAT_VERSION, MAGIC,
};
use crate::format::layout::{LAYOUT_VERSION, OLDEST_LAYOUT_VERSION};
pub use crate::format::stream::{CaptureStream, CaptureWriter};

impl Capture {
    /// Reads a capture file of any format version, a record at a time
    /// ([`CaptureStream`]). Each launch's raw buffer is read from the file
    /// straight into its own allocation, so reading takes about as much
    /// memory as the buffers themselves. A version 3 file that was cut
    /// (its writer did not finish) reads up to its last complete record,
    /// and says so in [`Capture::stream_end`].
    pub fn read(path: impl AsRef<Path>) -> Result<Capture> {
        CaptureStream::open(path)?.into_capture()
    }

    /// [`Capture::read`], each large launch buffer read on up to `threads`
    /// threads (0: one per core); the capture is the same.
    pub fn read_on(path: impl AsRef<Path>, threads: usize) -> Result<Capture> {
        CaptureStream::open_on(path, threads)?.into_capture()
    }

    /// [`Capture::read_selected`], each large launch buffer read on up to
    /// `threads` threads (0: one per core).
    pub fn read_selected_on(
        path: impl AsRef<Path>,
        threads: usize,
        keep: impl FnMut(&LaunchCapture) -> bool,
    ) -> Result<Capture> {
        CaptureStream::open_on(path, threads)?.into_capture_selected(keep)
    }

    /// Reads a capture file as [`Capture::read`] does, but keeps only the
    /// launches for which `keep` is true: each launch is read, given to
    /// `keep` (in the order of the file) and dropped at once unless kept.
    /// Reading takes the memory of the launches kept and of one record at a
    /// time. The clock syncs, steps, sites and [`Capture::stream_end`] are
    /// those [`Capture::read`] gives.
    pub fn read_selected(
        path: impl AsRef<Path>,
        keep: impl FnMut(&LaunchCapture) -> bool,
    ) -> Result<Capture> {
        CaptureStream::open(path)?.into_capture_selected(keep)
    }

    /// Parses a capture from its bytes (as [`Capture::read`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Capture> {
        crate::format::stream::capture_from_bytes(bytes, |_| true)
    }

    /// Parses a capture from its bytes, keeping the launches for which
    /// `keep` is true (as [`Capture::read_selected`]).
    pub fn from_bytes_selected(
        bytes: &[u8],
        keep: impl FnMut(&LaunchCapture) -> bool,
    ) -> Result<Capture> {
        crate::format::stream::capture_from_bytes(bytes, keep)
    }

    /// Checks that the capture can be written; returns the layout version
    /// of its launches.
    fn check_writable(&self) -> Result<u32> {
        let layout_version = layout_version_of(&self.launches)?;
        let long = |what: &str, n: usize| {
            Error::Config(format!("{what} of {n} bytes (at most {MAX_NAME_BYTES})"))
        };
        if self.device.name.len() > MAX_NAME_BYTES {
            return Err(long("device name", self.device.name.len()));
        }
        for l in &self.launches {
            if l.kernel.len() > MAX_NAME_BYTES {
                return Err(long("kernel name", l.kernel.len()));
            }
            l.buffer()?;
        }
        for s in &self.clock_syncs {
            s.check()
                .map_err(|e| Error::Config(format!("cannot write {e}")))?;
        }
        if let Some(s) = self.steps.iter().find(|s| s.name.len() > MAX_NAME_BYTES) {
            return Err(long("step name", s.name.len()));
        }
        if let Some(s) = self.sites.iter().find(|s| s.kernel.len() > MAX_NAME_BYTES) {
            return Err(long("site kernel name", s.kernel.len()));
        }
        Ok(layout_version)
    }

    /// Writes the capture in the current format through a
    /// [`CaptureWriter`]: its clock syncs, launches, steps, sites and PC
    /// samples, then the end record.
    pub fn write_to(&self, w: impl Write) -> Result<()> {
        self.write_named(w, "<capture>".into())
    }

    fn write_named(&self, w: impl Write, path: PathBuf) -> Result<()> {
        let layout_version = self.check_writable()?;
        let mut cw = CaptureWriter::start(w, path, &self.device, &self.regions, layout_version)?;
        for s in &self.clock_syncs {
            cw.clock_sync(s)?;
        }
        for l in &self.launches {
            cw.launch(l)?;
        }
        for s in &self.steps {
            cw.step(s)?;
        }
        for s in &self.sites {
            cw.site(s)?;
        }
        for s in &self.stalls {
            cw.stall_samples(s)?;
        }
        cw.finish()?;
        Ok(())
    }

    /// Writes the capture to `path` atomically (a temporary file in the same
    /// directory, then a rename). A capture that cannot be written gives its
    /// error and writes nothing.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        self.check_writable()?;
        crate::output::write_atomic_with(path, |w| self.write_named(w, path.to_path_buf()))
    }
}

/// The one layout version of `launches`, which a capture file records in
/// its header (this build's when there are no launches).
fn layout_version_of(launches: &[LaunchCapture]) -> Result<u32> {
    let version = launches
        .first()
        .map_or(LAYOUT_VERSION, |l| l.layout_version);
    if !(OLDEST_LAYOUT_VERSION..=LAYOUT_VERSION).contains(&version) {
        return Err(Error::Config(format!(
            "layout version {version} (this build writes {OLDEST_LAYOUT_VERSION} to {LAYOUT_VERSION})"
        )));
    }
    if let Some(l) = launches.iter().find(|l| l.layout_version != version) {
        return Err(Error::Config(format!(
            "launch {} has layout version {} and launch {} {version}: one capture holds one \
             layout version",
            l.shape.launch, l.layout_version, launches[0].shape.launch
        )));
    }
    Ok(version)
}

#[cfg(test)]
mod tests;
