//! Reading the parts of a capture file: where the bytes come from (memory
//! or a file read piece by piece), the primitive fields, and each section
//! and record the format has. [`stream`](crate::format::stream) puts them
//! together; every length is checked against what is left before anything
//! is allocated for it.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::format::clock_sync::ClockSync;
use crate::format::compact::read_compact;
use crate::format::compact_file::read_compact_file;
use crate::format::contents::{
    HostSpan, HostStep, LaunchCapture, LaunchOrigin, SiteRecord, FORMAT_VERSION, MAGIC,
    MAX_NAME_BYTES,
};
use crate::format::layout::{LAYOUT_VERSION, OLDEST_LAYOUT_VERSION};
use crate::format::regions::Regions;
use crate::format::shape::LaunchShape;

/// Bytes of the fixed file header.
pub(crate) const HEADER_BYTES: usize = 32;
/// Launch header bytes of format version 1.
pub(crate) const LAUNCH_HEADER_V1_BYTES: usize = 64;
/// Launch header bytes of format version 2 (and of a version 3 launch
/// record before its extension).
pub(crate) const LAUNCH_HEADER_BYTES: usize = 96;
/// Bytes of the launch header's extension in format version 3.
pub(crate) const LAUNCH_EXTENSION_BYTES: usize = 32;
/// Set in a launch origin's flags when its `origin_step` holds the
/// launch's host step.
pub(crate) const ORIGIN_HAS_STEP: u32 = 1;
/// Bytes of one clock sync.
pub(crate) const CLOCK_SYNC_BYTES: usize = 32;

/// The fixed header's fields.
pub(crate) struct FileHeader {
    pub format: u16,
    pub layout_version: u32,
    pub launch_count: u32,
    pub sm_count: u32,
    pub clock_khz: u32,
}

/// Where a capture is parsed from: the bytes in memory, or a file read
/// piece by piece.
pub(crate) trait Source {
    /// Fills `buf` (the caller has checked that the bytes are there).
    fn read_into(&mut self, buf: &mut [u8]) -> Result<()>;
    /// The next `n` bytes in a vector of their own (checked likewise).
    fn read_vec(&mut self, n: usize) -> Result<Vec<u8>>;
    /// Passes over the next `n` bytes (checked likewise).
    fn skip(&mut self, n: u64) -> Result<()>;

    /// Reads a compact buffer of `shape` that starts at byte `at` (the
    /// next byte) into `raw` as [`read_compact`] does, if this source
    /// does it better than piece by piece; `None` to be read piece by
    /// piece. Afterwards the source is past the bytes read.
    fn read_compact_at(
        &mut self,
        _at: u64,
        _raw: &mut [u8],
        _shape: &LaunchShape,
        _limit: u64,
        _too_long: &dyn Fn(u64) -> Error,
    ) -> Option<Result<u64>> {
        None
    }
}

/// Bytes in memory.
pub(crate) struct SliceSource<'a>(pub &'a [u8]);

impl Source for SliceSource<'_> {
    fn read_into(&mut self, buf: &mut [u8]) -> Result<()> {
        let (head, rest) = self.0.split_at(buf.len());
        buf.copy_from_slice(head);
        self.0 = rest;
        Ok(())
    }

    fn read_vec(&mut self, n: usize) -> Result<Vec<u8>> {
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head.to_vec())
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        self.0 = &self.0[n as usize..];
        Ok(())
    }
}

/// A file, read through a buffer.
pub(crate) struct FileSource {
    pub r: BufReader<File>,
    pub path: PathBuf,
    /// Threads that read a large compact buffer.
    pub threads: usize,
}

/// A compact buffer of at least this many bytes is read straight from the
/// file, on the source's threads.
const DIRECT_READ_BYTES: u64 = 1 << 20;

impl Source for FileSource {
    fn read_into(&mut self, buf: &mut [u8]) -> Result<()> {
        self.r.read_exact(buf).map_err(|e| Error::io(&self.path, e))
    }

    fn read_vec(&mut self, n: usize) -> Result<Vec<u8>> {
        // Zeroed pages come fresh from the allocator: the read is the only
        // pass over the memory.
        let mut v = vec![0u8; n];
        self.read_into(&mut v)?;
        Ok(v)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let copied = io::copy(&mut (&mut self.r).take(n), &mut io::sink())
            .map_err(|e| Error::io(&self.path, e))?;
        if copied != n {
            let e = io::Error::new(io::ErrorKind::UnexpectedEof, "the file got shorter");
            return Err(Error::io(&self.path, e));
        }
        Ok(())
    }

    fn read_compact_at(
        &mut self,
        at: u64,
        raw: &mut [u8],
        shape: &LaunchShape,
        limit: u64,
        too_long: &dyn Fn(u64) -> Error,
    ) -> Option<Result<u64>> {
        if limit < DIRECT_READ_BYTES {
            return None;
        }
        let path = &self.path;
        let io_err = |e| Error::io(path, e);
        let record = at..at + limit;
        let file = self.r.get_ref();
        let used = read_compact_file(file, record, raw, shape, self.threads, io_err, too_long);
        Some(used.and_then(|used| {
            self.r
                .seek(SeekFrom::Start(at + used))
                .map_err(|e| Error::io(&self.path, e))?;
            Ok(used)
        }))
    }
}

/// A position in a source of known length. `end` is where the part being
/// read ends: the file's end, or the end of the record being read.
pub(crate) struct Reader<S> {
    pub src: S,
    pub pos: u64,
    pub end: u64,
}

impl<S: Source> Reader<S> {
    pub fn new(src: S, len: u64) -> Self {
        Reader {
            src,
            pos: 0,
            end: len,
        }
    }

    /// Bytes left before `end`.
    pub fn left(&self) -> u64 {
        self.end - self.pos
    }

    /// Checks that `n` more bytes are there, then counts them as read.
    pub fn advance(&mut self, n: u64, what: &str) -> Result<()> {
        if n > self.left() {
            return Err(Error::Truncated {
                what: what.to_string(),
                offset: self.pos,
                needed: n,
                available: self.left(),
            });
        }
        self.pos += n;
        Ok(())
    }

    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        self.advance(N as u64, what)?;
        let mut a = [0u8; N];
        self.src.read_into(&mut a)?;
        Ok(a)
    }

    pub fn vec(&mut self, n: u64, what: &str) -> Result<Vec<u8>> {
        self.advance(n, what)?;
        self.src.read_vec(n as usize)
    }

    pub fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        self.advance(n, what)?;
        self.src.skip(n)
    }

    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    pub fn string(&mut self, n: usize, what: &str) -> Result<String> {
        let at = self.pos;
        let b = self.vec(n as u64, what)?;
        String::from_utf8(b)
            .map_err(|_| Error::Corrupt(format!("{what} at byte {at} is not UTF-8")))
    }

    /// A name: its u32 length, at most [`MAX_NAME_BYTES`], then its bytes.
    pub fn name(&mut self, what: &str) -> Result<String> {
        let len = self.u32(&format!("{what} length"))? as usize;
        self.name_of(len, what)
    }

    /// A name of `len` bytes, checked against [`MAX_NAME_BYTES`].
    pub fn name_of(&mut self, len: usize, what: &str) -> Result<String> {
        if len > MAX_NAME_BYTES {
            return Err(Error::Corrupt(format!(
                "{what} of {len} bytes at byte {} (at most {MAX_NAME_BYTES})",
                self.pos
            )));
        }
        self.string(len, what)
    }
}

/// The sections of a capture file before its launches, and its records.
impl<S: Source> Reader<S> {
    /// The fixed header: checks the magic and versions.
    pub fn header(&mut self) -> Result<FileHeader> {
        let magic: [u8; 8] = self.array("magic")?;
        if magic != MAGIC {
            return Err(Error::BadMagic {
                found: magic.to_vec(),
            });
        }
        let format = self.u16("format version")?;
        if format > FORMAT_VERSION {
            return Err(Error::NewerFormat {
                found: format,
                supported: FORMAT_VERSION,
            });
        }
        if format == 0 {
            return Err(Error::Corrupt("format version 0".into()));
        }
        let layout = self.u16("layout version")?;
        if !(OLDEST_LAYOUT_VERSION..=LAYOUT_VERSION).contains(&u32::from(layout)) {
            return Err(Error::UnsupportedLayout {
                found: layout,
                supported: LAYOUT_VERSION as u16,
            });
        }
        let launch_count = self.u32("launch count")?;
        let sm_count = self.u32("SM count")?;
        let clock_khz = self.u32("clock rate")?;
        let _flags = self.u32("flags")?;
        let _reserved = self.u32("reserved")?;
        debug_assert_eq!(self.pos, HEADER_BYTES as u64);
        Ok(FileHeader {
            format,
            layout_version: u32::from(layout),
            launch_count,
            sm_count,
            clock_khz,
        })
    }

    /// The device's ordinal and UUID (format version 2 on).
    pub fn device_identity(&mut self) -> Result<(Option<u32>, Option<[u8; 16]>)> {
        let ordinal = self.u32("device ordinal")?.checked_sub(1);
        let has_uuid = self.u32("device UUID flag")?;
        let uuid: [u8; 16] = self.array("device UUID")?;
        let uuid = match has_uuid {
            0 => None,
            1 => Some(uuid),
            f => return Err(Error::Corrupt(format!("device UUID flag {f} (0 or 1)"))),
        };
        Ok((ordinal, uuid))
    }

    /// One clock sync, checked; `what` names it in an error.
    pub fn clock_sync(&mut self, what: &str) -> Result<ClockSync> {
        let at = self.pos;
        let s = ClockSync {
            host_before_ns: self.u64("clock sync")?,
            gpu_ns: self.u64("clock sync")?,
            host_after_ns: self.u64("clock sync")?,
            boottime_ns: self.u64("clock sync")?,
        };
        s.check()
            .map_err(|e| Error::Corrupt(format!("{what} at byte {at}: {e}")))?;
        Ok(s)
    }

    /// The clock sync section (format version 2), each checked.
    pub fn clock_syncs(&mut self) -> Result<Vec<ClockSync>> {
        let count = u64::from(self.u32("clock sync count")?);
        let needed = count * CLOCK_SYNC_BYTES as u64;
        if needed > self.left() {
            return Err(Error::Truncated {
                what: format!("{count} clock syncs"),
                offset: self.pos,
                needed,
                available: self.left(),
            });
        }
        (0..count)
            .map(|i| self.clock_sync(&format!("clock sync {i}")))
            .collect()
    }

    /// The region table, ids strictly increasing.
    pub fn region_table(&mut self) -> Result<Regions> {
        let region_count = self.u32("region count")?;
        if region_count > 65536 {
            return Err(Error::Corrupt(format!(
                "{region_count} regions (at most 65536)"
            )));
        }
        let mut regions = Regions::new();
        let mut last: Option<u16> = None;
        for _ in 0..region_count {
            let id = self.u16("region id")?;
            let len = self.u16("region name length")? as usize;
            let n = self.string(len, "region name")?;
            if last.is_some_and(|l| id <= l) {
                return Err(Error::Corrupt(format!(
                    "region ids not increasing at id {id}"
                )));
            }
            last = Some(id);
            regions.insert(id, n);
        }
        Ok(regions)
    }

    /// A host step record's payload (format version 3).
    pub fn step(&mut self) -> Result<HostStep> {
        let index = self.u64("step index")?;
        let begin_ns = self.u64("step begin")?;
        let end_ns = self.u64("step end")?;
        let name = self.name("step name")?;
        Ok(HostStep {
            name,
            index,
            begin_ns,
            end_ns,
        })
    }

    /// A site record's payload (format version 3).
    pub fn site(&mut self) -> Result<SiteRecord> {
        let site = self.u32("site")?;
        let name_len = self.u32("site kernel name length")? as usize;
        let launches = self.u64("site launches")?;
        let kept = self.u64("site kept")?;
        let dropped = self.u64("site dropped")?;
        let kernel = self.name_of(name_len, "site kernel name")?;
        Ok(SiteRecord {
            site,
            kernel,
            launches,
            kept,
            dropped,
            when_full: Default::default(),
        })
    }

    /// The launch header fields up to the raw length: the shape, checked,
    /// and the raw length, checked against it.
    fn launch_shape(&mut self, i: u64) -> Result<(LaunchShape, u64)> {
        let at = self.pos;
        let launch = self.u32("launch index")?;
        let grid = [self.u32("grid")?, self.u32("grid")?, self.u32("grid")?];
        let block = [self.u32("block")?, self.u32("block")?, self.u32("block")?];
        let cap_log2 = self.u32("cap_log2")?;
        let warp_mask = self.u32("warp mask")?;
        let warps_traced = self.u32("warps traced")?;
        let block_stride = self.u32("block stride")?;
        let blocks_traced = self.u32("blocks traced")?;
        let raw_len = self.u64("raw length")?;
        let shape = LaunchShape {
            grid,
            block,
            cap_log2,
            warp_mask,
            block_stride,
            blocks_traced,
            launch,
        };
        shape
            .validate()
            .map_err(|e| Error::Corrupt(format!("launch record {i} at byte {at}: {e}")))?;
        if warps_traced != shape.warps_traced() {
            return Err(Error::Corrupt(format!(
                "launch record {i}: {warps_traced} warps traced but the mask {warp_mask:#x} \
                 has {}",
                shape.warps_traced()
            )));
        }
        if Some(raw_len) != shape.buffer_bytes() {
            return Err(Error::Corrupt(format!(
                "launch record {i}: raw buffer of {raw_len} bytes, the shape needs {}",
                shape.buffer_bytes().unwrap_or(u64::MAX)
            )));
        }
        Ok((shape, raw_len))
    }

    /// The version 3 extension of a launch header: the launch's origin.
    fn launch_origin(&mut self, i: u64) -> Result<Option<LaunchOrigin>> {
        let present = self.u32("origin flag")?;
        let site = self.u32("origin site")?;
        let epoch = self.u32("origin epoch")?;
        // Bit 0: `step` holds; the other bits are 0 and ignored.
        let flags = self.u32("origin flags")?;
        let grid_id = self.u64("origin grid id")?;
        let step = self.u64("origin step")?;
        match present {
            0 => Ok(None),
            1 => Ok(Some(LaunchOrigin {
                site,
                epoch,
                grid_id,
                step: (flags & ORIGIN_HAS_STEP != 0).then_some(step),
            })),
            f => Err(Error::Corrupt(format!(
                "launch record {i}: origin flag {f} (0 or 1)"
            ))),
        }
    }

    /// Launch record `i` of a file of version `format`: its header,
    /// checked against the shape it describes, then its buffer (whole in
    /// version 1, compact from version 2 on).
    pub fn launch_record(
        &mut self,
        i: u64,
        format: u16,
        layout_version: u32,
    ) -> Result<LaunchCapture> {
        let (shape, raw_len) = self.launch_shape(i)?;
        let (stored_len, host_span, kernel_len) = if format >= 2 {
            let stored = self.u64("stored length")?;
            let enqueue_ns = self.u64("host enqueue time")?;
            let complete_ns = self.u64("host completion time")?;
            let kernel_len = self.u32("kernel name length")? as usize;
            let _flags = self.u32("launch flags")?;
            let _reserved = self.u64("reserved")?;
            let host = (enqueue_ns != 0 || complete_ns != 0).then_some(HostSpan {
                enqueue_ns,
                complete_ns,
            });
            (Some(stored), host, kernel_len)
        } else {
            let _reserved = self.u64("reserved")?;
            (None, None, 0)
        };
        let origin = if format >= 3 {
            self.launch_origin(i)?
        } else {
            None
        };
        let kernel = self.name_of(kernel_len, &format!("launch record {i}: kernel name"))?;
        let raw = match stored_len {
            None => self.vec(raw_len, "raw buffer")?,
            Some(stored) => self.compact_buffer(i, &shape, raw_len, stored)?,
        };
        Ok(LaunchCapture {
            shape,
            raw,
            layout_version,
            kernel,
            host_span,
            origin,
        })
    }

    /// Refuses a compact buffer's declared `stored` length when it exceeds
    /// `raw_len`, cannot hold the slots' metadata, or runs past what is
    /// left to read.
    fn check_stored(&self, i: u64, shape: &LaunchShape, raw_len: u64, stored: u64) -> Result<()> {
        if stored > raw_len {
            return Err(Error::Corrupt(format!(
                "launch record {i}: {stored} stored bytes for a buffer of {raw_len}"
            )));
        }
        let metadata = shape
            .slot_count()
            .saturating_mul(crate::format::layout::META_BYTES as u64);
        if metadata > stored {
            return Err(Error::Corrupt(format!(
                "launch record {i}: {stored} stored bytes cannot hold the metadata of its {} \
                 slots ({metadata} bytes)",
                shape.slot_count()
            )));
        }
        if stored > self.left() {
            return Err(Error::Truncated {
                what: format!("launch record {i}'s buffer"),
                offset: self.pos,
                needed: stored,
                available: self.left(),
            });
        }
        Ok(())
    }

    /// A buffer of `raw_len` bytes stored in `stored` bytes of compact form.
    fn compact_buffer(
        &mut self,
        i: u64,
        shape: &LaunchShape,
        raw_len: u64,
        stored: u64,
    ) -> Result<Vec<u8>> {
        let at = self.pos;
        self.check_stored(i, shape, raw_len, stored)?;
        // Zeroed pages come fresh from the allocator; only the stored parts
        // are written, so the memory used is what the file holds (a page
        // of each slot written), whatever the raw length says.
        let mut raw = zeroed(raw_len).ok_or_else(|| Error::TooLarge {
            what: format!(
                "launch record {i}'s raw buffer (raw_len {raw_len}: {} slots of {} entries)",
                shape.slot_count(),
                shape.cap()
            ),
            bytes: raw_len,
        })?;
        let available = self.left();
        let too_long = |n| {
            if n > available {
                // The slots run past the end of what holds them: the file
                // (or the record) was cut, whatever `stored` says.
                Error::Truncated {
                    what: format!("launch record {i}'s slots"),
                    offset: at,
                    needed: n,
                    available,
                }
            } else {
                Error::Corrupt(format!(
                    "launch record {i}: its slots' metadata asks for {n} or more stored bytes, \
                     the record declares {stored}"
                ))
            }
        };
        let used = match self
            .src
            .read_compact_at(self.pos, &mut raw, shape, stored, &too_long)
        {
            Some(used) => {
                let used = used?;
                self.advance(used, "buffer")?;
                used
            }
            None => read_compact(
                &mut raw,
                shape,
                stored,
                |buf| {
                    self.advance(buf.len() as u64, "buffer")?;
                    self.src.read_into(buf)
                },
                too_long,
            )?,
        };
        if used != stored {
            return Err(Error::Corrupt(format!(
                "launch record {i}: its slots' metadata asks for {used} stored bytes, the \
                 record declares {stored}"
            )));
        }
        Ok(raw)
    }
}

/// `n` zeroed bytes, or `None` when the allocator cannot give them (a
/// capture's header may ask for any size: that is an error to report, not
/// an abort). Large allocations come as untouched zero pages, so only the
/// pages written use memory.
pub(crate) fn zeroed(n: u64) -> Option<Vec<u8>> {
    let len = usize::try_from(n).ok()?;
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout
    // of `len` bytes, all of them initialised (zero).
    Some(unsafe { Vec::from_raw_parts(ptr, len, len) })
}
