//! Capture files (`.ktrace`): raw trace buffers with their launch shapes, the
//! region table and the device facts, so a trace can be exported, summarised
//! and compared later on a machine without a GPU.
//!
//! The format is little-endian and versioned; `docs/capture-format.md` in the
//! repository gives every field's offset and type. In short:
//!
//! ```text
//! header (32 B)   magic "\x89KTRACE\n", format version, layout version,
//!                 launch count, SM count, clock rate (kHz), flags, reserved
//! device name     u32 length + UTF-8
//! region table    u32 count + count x (u16 id, u16 length, UTF-8 name)
//! launches        count x (64-byte launch header + raw buffer bytes)
//! ```
//!
//! The reader checks every length against what is left of the file before
//! allocating anything, so a truncated or lying file gives an [`Error`], never
//! a panic or a huge allocation.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::layout::{LAYOUT_VERSION, OLDEST_LAYOUT_VERSION};
use crate::regions::Regions;
use crate::shape::LaunchShape;

/// The first eight bytes of every capture file.
pub const MAGIC: [u8; 8] = *b"\x89KTRACE\n";
/// The capture format version this build writes, and the newest it reads.
pub const FORMAT_VERSION: u16 = 1;

const HEADER_BYTES: usize = 32;
const LAUNCH_HEADER_BYTES: usize = 64;
const MAX_NAME_BYTES: usize = 4096;

/// Facts about the device a capture was taken on, and the layout its
/// device code wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device name, e.g. "NVIDIA H200".
    pub name: String,
    /// Number of SMs.
    pub sm_count: u32,
    /// Nominal SM clock rate in kHz (0 if unknown).
    pub clock_khz: u32,
    /// `KTRACE_LAYOUT_VERSION` of the raw buffers: version 1 buffers have
    /// no time anchors. Default: this build's [`LAYOUT_VERSION`].
    pub layout_version: u32,
}

impl Default for DeviceInfo {
    fn default() -> Self {
        DeviceInfo {
            name: String::new(),
            sm_count: 0,
            clock_khz: 0,
            layout_version: LAYOUT_VERSION,
        }
    }
}

/// One launch: its shape and its raw buffer, byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchCapture {
    /// The launch shape.
    pub shape: LaunchShape,
    /// The device buffer as copied back after the launch.
    pub raw: Vec<u8>,
}

/// A capture: device facts, region table and one or more launches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// The device.
    pub device: DeviceInfo,
    /// Region names.
    pub regions: Regions,
    /// The launches, in the order they ran.
    pub launches: Vec<LaunchCapture>,
}

impl Capture {
    /// The launch with index `launch` (the `launch` field of its shape).
    pub fn launch(&self, launch: u32) -> Result<&LaunchCapture> {
        self.launches
            .iter()
            .find(|l| l.shape.launch == launch)
            .ok_or(Error::NoSuchLaunch {
                asked: launch,
                available: self.launches.len(),
            })
    }

    /// Reads a capture file. Each launch's raw buffer is read from the
    /// file straight into its own allocation, so reading takes about as
    /// much memory as the buffers themselves.
    pub fn read(path: impl AsRef<Path>) -> Result<Capture> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
        let src = FileSource {
            r: BufReader::with_capacity(64 * 1024, f),
            path,
        };
        Capture::parse(Reader { src, pos: 0, len })
    }

    /// Parses a capture from its bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Capture> {
        let len = bytes.len() as u64;
        Capture::parse(Reader {
            src: SliceSource(bytes),
            pos: 0,
            len,
        })
    }

    fn parse<S: Source>(mut r: Reader<S>) -> Result<Capture> {
        let (launch_count, sm_count, clock_khz, layout_version) = r.header()?;
        let name_len = r.u32("device name length")? as usize;
        if name_len > MAX_NAME_BYTES {
            return Err(Error::Corrupt(format!(
                "device name of {name_len} bytes (at most {MAX_NAME_BYTES})"
            )));
        }
        let name = r.string(name_len, "device name")?;
        let regions = r.region_table()?;

        // Each launch needs at least its header: a count the file cannot hold
        // is refused before anything is allocated for it.
        let most = r.left() / LAUNCH_HEADER_BYTES as u64;
        if u64::from(launch_count) > most {
            return Err(Error::Truncated {
                what: format!("{launch_count} launch records"),
                offset: r.pos,
                needed: u64::from(launch_count) * LAUNCH_HEADER_BYTES as u64,
                available: r.left(),
            });
        }
        let launches = (0..launch_count)
            .map(|i| r.launch_record(i))
            .collect::<Result<Vec<_>>>()?;
        if r.left() != 0 {
            return Err(Error::Corrupt(format!(
                "{} unexpected bytes after the last launch",
                r.left()
            )));
        }
        Ok(Capture {
            device: DeviceInfo {
                name,
                sm_count,
                clock_khz,
                layout_version,
            },
            regions,
            launches,
        })
    }

    /// Writes the capture in the current format.
    pub fn write_to(&self, w: impl Write) -> Result<()> {
        write_capture(&self.device, &self.regions, &self.launches, w)
    }

    /// Writes the capture to `path` atomically (a temporary file in the same
    /// directory, then a rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        save_capture(&self.device, &self.regions, &self.launches, path.as_ref())
    }
}

/// [`Capture::write_to`] for parts held elsewhere (a session's launches),
/// without gathering them into a [`Capture`] first.
pub(crate) fn write_capture(
    device: &DeviceInfo,
    regions: &Regions,
    launches: &[LaunchCapture],
    w: impl Write,
) -> Result<()> {
    let header = file_header(device, regions, launches)?;
    write_file(&header, launches, w).map_err(|e| Error::io("<capture>", e))
}

/// [`Capture::save`] for parts held elsewhere.
pub(crate) fn save_capture(
    device: &DeviceInfo,
    regions: &Regions,
    launches: &[LaunchCapture],
    path: &Path,
) -> Result<()> {
    let header = file_header(device, regions, launches)?;
    crate::output::write_atomic(path, |w| write_file(&header, launches, w))
}

/// Checks that the parts can be written, then encodes everything before the
/// launches: the header, the device name and the region table.
fn file_header(
    device: &DeviceInfo,
    regions: &Regions,
    launches: &[LaunchCapture],
) -> Result<Vec<u8>> {
    let name = device.name.as_bytes();
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::Config(format!(
            "device name of {} bytes (at most {MAX_NAME_BYTES})",
            name.len()
        )));
    }
    if !(OLDEST_LAYOUT_VERSION..=LAYOUT_VERSION).contains(&device.layout_version) {
        return Err(Error::Config(format!(
            "layout version {} (this build writes {OLDEST_LAYOUT_VERSION} to {LAYOUT_VERSION})",
            device.layout_version
        )));
    }
    let launch_count = u32::try_from(launches.len())
        .map_err(|_| Error::Config("too many launches for one capture".into()))?;
    for l in launches {
        l.shape.validate()?;
        let expected = l.shape.buffer_bytes().unwrap_or(u64::MAX);
        if l.raw.len() as u64 != expected {
            return Err(Error::BufferSize {
                expected,
                actual: l.raw.len() as u64,
            });
        }
    }
    let mut h = Vec::with_capacity(HEADER_BYTES + 8 + name.len());
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&(device.layout_version as u16).to_le_bytes());
    h.extend_from_slice(&launch_count.to_le_bytes());
    h.extend_from_slice(&device.sm_count.to_le_bytes());
    h.extend_from_slice(&device.clock_khz.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes()); // flags
    h.extend_from_slice(&0u32.to_le_bytes()); // reserved
    debug_assert_eq!(h.len(), HEADER_BYTES);
    h.extend_from_slice(&(name.len() as u32).to_le_bytes());
    h.extend_from_slice(name);
    h.extend_from_slice(&(regions.len() as u32).to_le_bytes());
    for (id, n) in regions.iter() {
        let n = n.as_bytes();
        let len = u16::try_from(n.len())
            .map_err(|_| Error::Config(format!("region {id}: name too long")))?;
        h.extend_from_slice(&id.to_le_bytes());
        h.extend_from_slice(&len.to_le_bytes());
        h.extend_from_slice(n);
    }
    Ok(h)
}

/// Writes the encoded `header`, then each launch's header and raw buffer
/// (checked by [`file_header`]).
fn write_file(header: &[u8], launches: &[LaunchCapture], mut w: impl Write) -> io::Result<()> {
    w.write_all(header)?;
    for l in launches {
        let s = &l.shape;
        let mut lh = Vec::with_capacity(LAUNCH_HEADER_BYTES);
        for v in [s.launch, s.grid[0], s.grid[1], s.grid[2]]
            .into_iter()
            .chain(s.block)
            .chain([
                s.cap_log2,
                s.warp_mask,
                s.warps_traced(),
                s.block_stride,
                s.blocks_traced,
            ])
        {
            lh.extend_from_slice(&v.to_le_bytes());
        }
        lh.extend_from_slice(&(l.raw.len() as u64).to_le_bytes());
        lh.extend_from_slice(&0u64.to_le_bytes());
        debug_assert_eq!(lh.len(), LAUNCH_HEADER_BYTES);
        w.write_all(&lh)?;
        w.write_all(&l.raw)?;
    }
    w.flush()
}

/// The sections of a capture file, read in order.
impl<S: Source> Reader<S> {
    /// The fixed header: checks the magic and versions, returns the launch
    /// count, the SM count, the clock rate and the layout version.
    fn header(&mut self) -> Result<(u32, u32, u32, u32)> {
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
        Ok((launch_count, sm_count, clock_khz, u32::from(layout)))
    }

    /// The region table, ids strictly increasing.
    fn region_table(&mut self) -> Result<Regions> {
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

    /// Launch record `i`: its header, checked against the shape it
    /// describes, then its raw buffer.
    fn launch_record(&mut self, i: u32) -> Result<LaunchCapture> {
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
        let _reserved = self.u64("reserved")?;
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
        let raw = self.vec(raw_len, "raw buffer")?;
        Ok(LaunchCapture { shape, raw })
    }
}

/// Where a capture is parsed from: the bytes in memory, or a file read
/// piece by piece.
trait Source {
    /// Fills `buf` (the caller has checked that the bytes are there).
    fn read_into(&mut self, buf: &mut [u8]) -> Result<()>;
    /// The next `n` bytes in a vector of their own (checked likewise).
    fn read_vec(&mut self, n: usize) -> Result<Vec<u8>>;
}

struct SliceSource<'a>(&'a [u8]);

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
}

struct FileSource<'p> {
    r: BufReader<File>,
    path: &'p Path,
}

impl Source for FileSource<'_> {
    fn read_into(&mut self, buf: &mut [u8]) -> Result<()> {
        self.r.read_exact(buf).map_err(|e| Error::io(self.path, e))
    }

    fn read_vec(&mut self, n: usize) -> Result<Vec<u8>> {
        // Zeroed pages come fresh from the allocator: the read is the only
        // pass over the memory.
        let mut v = vec![0u8; n];
        self.read_into(&mut v)?;
        Ok(v)
    }
}

struct Reader<S> {
    src: S,
    pos: u64,
    len: u64,
}

impl<S: Source> Reader<S> {
    fn left(&self) -> u64 {
        self.len - self.pos
    }

    /// Checks that `n` more bytes are there, then counts them as read.
    fn advance(&mut self, n: u64, what: &str) -> Result<()> {
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

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        self.advance(N as u64, what)?;
        let mut a = [0u8; N];
        self.src.read_into(&mut a)?;
        Ok(a)
    }

    fn vec(&mut self, n: u64, what: &str) -> Result<Vec<u8>> {
        self.advance(n, what)?;
        self.src.read_vec(n as usize)
    }

    fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, n: usize, what: &str) -> Result<String> {
        let at = self.pos;
        let b = self.vec(n as u64, what)?;
        String::from_utf8(b)
            .map_err(|_| Error::Corrupt(format!("{what} at byte {at} is not UTF-8")))
    }
}
