//! Capture files (`.ktrace`): trace buffers with their launch shapes, the
//! region table, the device facts and the GPU clock measured against the
//! host's, so a trace can be exported, summarised, compared and merged later
//! on a machine without a GPU.
//!
//! The format is little-endian and versioned; `docs/capture-format.md` in the
//! repository gives every field's offset and type. In short (version 2):
//!
//! ```text
//! header (32 B)   magic "\x89KTRACE\n", format version, layout version,
//!                 launch count, SM count, clock rate (kHz), flags, reserved
//! device name     u32 length + UTF-8
//! region table    u32 count + count x (u16 id, u16 length, UTF-8 name)
//! device identity ordinal, UUID
//! clock syncs     u32 count + count x 32 bytes (host and GPU clock readings)
//! launches        count x (96-byte launch header + kernel name + the buffer
//!                 in compact form: per slot its metadata and used entries)
//! ```
//!
//! Version 1 files (no identity, no syncs, 64-byte launch headers and whole
//! buffers) still read. The reader checks every length against what is left
//! of the file before allocating anything, so a truncated or lying file
//! gives an [`Error`], never a panic or a huge allocation.

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::buffer::LaunchBuffer;
use crate::format::clock_sync::ClockSync;
pub use crate::format::compact::stored_part;
use crate::format::compact::{compact_len, read_compact, write_compact};
use crate::format::layout::{LAYOUT_VERSION, OLDEST_LAYOUT_VERSION};
use crate::format::regions::Regions;
use crate::format::shape::LaunchShape;

/// The first eight bytes of every capture file.
pub const MAGIC: [u8; 8] = *b"\x89KTRACE\n";
/// The capture format version this build writes, and the newest it reads.
pub const FORMAT_VERSION: u16 = 2;

const HEADER_BYTES: usize = 32;
/// Launch header bytes of format version 1.
const LAUNCH_HEADER_V1_BYTES: usize = 64;
/// Launch header bytes of format version 2.
const LAUNCH_HEADER_BYTES: usize = 96;
const CLOCK_SYNC_BYTES: usize = 32;
const MAX_NAME_BYTES: usize = 4096;

/// Facts about the device a capture was taken on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device name, e.g. "NVIDIA H200".
    pub name: String,
    /// Number of SMs.
    pub sm_count: u32,
    /// Nominal SM clock rate in kHz (0 if unknown).
    pub clock_khz: u32,
    /// The CUDA device ordinal in the recording process, if known.
    pub ordinal: Option<u32>,
    /// The device's UUID, if known: tells whether two captures came from
    /// one GPU.
    pub uuid: Option<[u8; 16]>,
}

impl DeviceInfo {
    /// "GPU 0: NVIDIA H200" (the ordinal where known, then the name).
    pub fn label(&self) -> String {
        let name = if self.name.is_empty() {
            "unknown device"
        } else {
            &self.name
        };
        match self.ordinal {
            Some(o) => format!("GPU {o}: {name}"),
            None => format!("GPU: {name}"),
        }
    }
}

/// When the host launched a kernel and when it saw it finish, in ns of its
/// `CLOCK_REALTIME`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostSpan {
    /// Just before the launch was enqueued (when the session handed out the
    /// launch's argument).
    pub enqueue_ns: u64,
    /// When the host saw the stream finish the launch.
    pub complete_ns: u64,
}

/// One launch: its shape and its raw buffer, byte for byte, with the layout
/// version of the device code that wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchCapture {
    /// The launch shape.
    pub shape: LaunchShape,
    /// The device buffer as copied back after the launch.
    pub raw: Vec<u8>,
    /// `KTRACE_LAYOUT_VERSION` of the device code that wrote `raw`: version
    /// 1 buffers have no time anchors, version 2 ones no values. A capture
    /// file records one for all its launches.
    pub layout_version: u32,
    /// The kernel's name, if the session was told it (empty otherwise).
    pub kernel: String,
    /// When the host enqueued the launch and saw it finish, if recorded.
    pub host_span: Option<HostSpan>,
    /// Where the launch came from when a continuous session traced it
    /// through a site (layout version 4): the site, the launch's index among
    /// the site's launches and its `%gridid`. `None` for a launch traced
    /// alone.
    pub origin: Option<LaunchOrigin>,
}

/// Which launch of which site a launch is (see [`LaunchCapture::origin`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaunchOrigin {
    /// The site (its index in the session: [`SiteRecord::site`]).
    pub site: u32,
    /// The launch's index among the site's launches (its `epoch`), counted
    /// on the device: graph replays included, kept or not.
    pub epoch: u32,
    /// `%gridid` of the launch: a plain launch's own, or its graph node's
    /// (every replay of a graph reuses its nodes' ids).
    pub grid_id: u64,
}

/// A range of host time that the program marked as one step of its work
/// (`ContinuousSession::step`), on the host's `CLOCK_REALTIME`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostStep {
    /// The step's name, e.g. "decode".
    pub name: String,
    /// The step's index, as the program gave it.
    pub index: u64,
    /// When the step began, in ns.
    pub begin_ns: u64,
    /// When it ended, in ns.
    pub end_ns: u64,
}

/// One site of a continuous session and what became of its launches: its
/// kernel, how many launches it saw, kept, dropped (chosen, but no slab was
/// free) and left out (not chosen by the keep rule).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteRecord {
    /// The site's index in the session.
    pub site: u32,
    /// The kernel's name.
    pub kernel: String,
    /// Launches the site saw (its epoch at the end).
    pub launches: u64,
    /// Launches written to a slab (the capture holds those that were
    /// drained).
    pub kept: u64,
    /// Launches the keep rule chose that found every slab still waiting to
    /// be drained: lost, and counted here.
    pub dropped: u64,
}

/// How a capture file that is written as the program runs ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEnd {
    /// With its end record: the program finished the capture.
    Closed,
    /// Without one: the file stops at byte `offset`, after the last complete
    /// record (the program was stopped, or is still writing). What it holds
    /// up to there is read.
    Cut {
        /// Bytes of the file read: its complete records.
        offset: u64,
        /// Bytes after them, an incomplete record, not read.
        left: u64,
    },
}

impl LaunchCapture {
    /// A launch written by this build's device code ([`LAYOUT_VERSION`]),
    /// with no kernel name and no host span.
    pub fn new(shape: LaunchShape, raw: Vec<u8>) -> Self {
        LaunchCapture {
            shape,
            raw,
            layout_version: LAYOUT_VERSION,
            kernel: String::new(),
            host_span: None,
            origin: None,
        }
    }

    /// The launch's buffer, checked against its shape and read as its
    /// layout version: what decoding, the ring fill and compaction read.
    pub fn buffer(&self) -> Result<LaunchBuffer<'_>> {
        LaunchBuffer::new(&self.raw, &self.shape, self.layout_version)
    }

    /// Bytes its buffer takes in a capture file (the compact form: each
    /// slot's metadata and the entries the decoder reads).
    /// 0 when the buffer does not match its shape (such a launch cannot be
    /// written).
    pub fn stored_bytes(&self) -> u64 {
        self.buffer().map_or(0, |b| compact_len(&b))
    }

    /// "launch 3: gemm" (or "launch 3" without a kernel name).
    pub fn title(&self) -> String {
        if self.kernel.is_empty() {
            format!("launch {}", self.shape.launch)
        } else {
            format!("launch {}: {}", self.shape.launch, self.kernel)
        }
    }
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
    /// The GPU's `%globaltimer` measured against the host's clock, in the
    /// order taken (empty in version 1 files).
    pub clock_syncs: Vec<ClockSync>,
    /// The host's steps (continuous sessions), in the order they ended.
    pub steps: Vec<HostStep>,
    /// The sites of a continuous session, with what became of their
    /// launches.
    pub sites: Vec<SiteRecord>,
    /// How a file written as the program ran ended; `None` for a capture
    /// written whole.
    pub stream_end: Option<StreamEnd>,
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
        let (format, launch_count, sm_count, clock_khz, layout_version) = r.header()?;
        let name_len = r.u32("device name length")? as usize;
        if name_len > MAX_NAME_BYTES {
            return Err(Error::Corrupt(format!(
                "device name of {name_len} bytes (at most {MAX_NAME_BYTES})"
            )));
        }
        let name = r.string(name_len, "device name")?;
        let regions = r.region_table()?;
        let (ordinal, uuid, clock_syncs) = if format >= 2 {
            let (ordinal, uuid) = r.device_identity()?;
            (ordinal, uuid, r.clock_syncs()?)
        } else {
            (None, None, Vec::new())
        };

        // Each launch needs at least its header: a count the file cannot hold
        // is refused before anything is allocated for it.
        let header_bytes = if format >= 2 {
            LAUNCH_HEADER_BYTES
        } else {
            LAUNCH_HEADER_V1_BYTES
        } as u64;
        let most = r.left() / header_bytes;
        if u64::from(launch_count) > most {
            return Err(Error::Truncated {
                what: format!("{launch_count} launch records"),
                offset: r.pos,
                needed: u64::from(launch_count) * header_bytes,
                available: r.left(),
            });
        }
        let launches = (0..launch_count)
            .map(|i| r.launch_record(i, format, layout_version))
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
                ordinal,
                uuid,
            },
            regions,
            launches,
            clock_syncs,
            ..Default::default()
        })
    }

    /// Writes the capture in the current format.
    pub fn write_to(&self, w: impl Write) -> Result<()> {
        let (header, buffers) = file_header(self)?;
        write_file(&header, &self.launches, &buffers, w).map_err(|e| Error::io("<capture>", e))
    }

    /// Writes the capture to `path` atomically (a temporary file in the same
    /// directory, then a rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let (header, buffers) = file_header(self)?;
        crate::output::write_atomic(path.as_ref(), |w| {
            write_file(&header, &self.launches, &buffers, w)
        })
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

/// Checks that the capture can be written, then encodes everything before the
/// launches: the header, the device name, the region table, the device's
/// identity and the clock syncs. Returns it with the launches' buffers.
fn file_header(capture: &Capture) -> Result<(Vec<u8>, Vec<LaunchBuffer<'_>>)> {
    let Capture {
        device,
        regions,
        launches,
        clock_syncs,
        ..
    } = capture;
    let name = device.name.as_bytes();
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::Config(format!(
            "device name of {} bytes (at most {MAX_NAME_BYTES})",
            name.len()
        )));
    }
    let layout_version = layout_version_of(launches)?;
    let launch_count = u32::try_from(launches.len())
        .map_err(|_| Error::Config("too many launches for one capture".into()))?;
    for s in clock_syncs {
        s.check()
            .map_err(|e| Error::Config(format!("cannot write {e}")))?;
    }
    let sync_count = u32::try_from(clock_syncs.len())
        .map_err(|_| Error::Config("too many clock syncs for one capture".into()))?;
    let mut buffers = Vec::with_capacity(launches.len());
    for l in launches {
        if l.kernel.len() > MAX_NAME_BYTES {
            return Err(Error::Config(format!(
                "kernel name of {} bytes (at most {MAX_NAME_BYTES})",
                l.kernel.len()
            )));
        }
        buffers.push(l.buffer()?);
    }
    let mut h = Vec::with_capacity(HEADER_BYTES + 8 + name.len());
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&(layout_version as u16).to_le_bytes());
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
    h.extend_from_slice(
        &device
            .ordinal
            .map_or(0, |o| o.saturating_add(1))
            .to_le_bytes(),
    );
    h.extend_from_slice(&u32::from(device.uuid.is_some()).to_le_bytes());
    h.extend_from_slice(&device.uuid.unwrap_or_default());
    h.extend_from_slice(&sync_count.to_le_bytes());
    for s in clock_syncs {
        for v in [s.host_before_ns, s.gpu_ns, s.host_after_ns, s.boottime_ns] {
            h.extend_from_slice(&v.to_le_bytes());
        }
    }
    Ok((h, buffers))
}

/// Writes the encoded `header`, then each launch's header and raw buffer
/// (checked by [`file_header`], which gave `buffers`).
fn write_file(
    header: &[u8],
    launches: &[LaunchCapture],
    buffers: &[LaunchBuffer<'_>],
    mut w: impl Write,
) -> io::Result<()> {
    w.write_all(header)?;
    for (l, b) in launches.iter().zip(buffers) {
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
        let host = l.host_span.unwrap_or_default();
        for v in [
            l.raw.len() as u64,
            compact_len(b),
            host.enqueue_ns,
            host.complete_ns,
        ] {
            lh.extend_from_slice(&v.to_le_bytes());
        }
        lh.extend_from_slice(&(l.kernel.len() as u32).to_le_bytes());
        lh.extend_from_slice(&0u32.to_le_bytes()); // flags
        lh.extend_from_slice(&0u64.to_le_bytes()); // reserved
        debug_assert_eq!(lh.len(), LAUNCH_HEADER_BYTES);
        w.write_all(&lh)?;
        w.write_all(l.kernel.as_bytes())?;
        write_compact(b, &mut w)?;
    }
    w.flush()
}

/// The sections of a capture file, read in order.
impl<S: Source> Reader<S> {
    /// The fixed header: checks the magic and versions, returns the format
    /// version, the launch count, the SM count, the clock rate and the
    /// layout version.
    fn header(&mut self) -> Result<(u16, u32, u32, u32, u32)> {
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
        Ok((format, launch_count, sm_count, clock_khz, u32::from(layout)))
    }

    /// The device's ordinal and UUID (format version 2).
    fn device_identity(&mut self) -> Result<(Option<u32>, Option<[u8; 16]>)> {
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

    /// The clock syncs (format version 2), each checked.
    fn clock_syncs(&mut self) -> Result<Vec<ClockSync>> {
        let at = self.pos;
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
            .map(|i| {
                let s = ClockSync {
                    host_before_ns: self.u64("clock sync")?,
                    gpu_ns: self.u64("clock sync")?,
                    host_after_ns: self.u64("clock sync")?,
                    boottime_ns: self.u64("clock sync")?,
                };
                s.check().map_err(|e| {
                    Error::Corrupt(format!("clock sync {i} (section at byte {at}): {e}"))
                })?;
                Ok(s)
            })
            .collect()
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

    /// Launch record `i` of a file of version `format`: its header,
    /// checked against the shape it describes, then its buffer (whole in
    /// version 1, compact from version 2 on).
    fn launch_record(&mut self, i: u32, format: u16, layout_version: u32) -> Result<LaunchCapture> {
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
        let (stored_len, host, kernel_len) = if format >= 2 {
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
        if kernel_len > MAX_NAME_BYTES {
            return Err(Error::Corrupt(format!(
                "launch record {i}: kernel name of {kernel_len} bytes (at most {MAX_NAME_BYTES})"
            )));
        }
        let kernel = self.string(kernel_len, "kernel name")?;
        let raw = match stored_len {
            None => self.vec(raw_len, "raw buffer")?,
            Some(stored) => self.compact_buffer(i, &shape, raw_len, stored)?,
        };
        Ok(LaunchCapture {
            shape,
            raw,
            layout_version,
            kernel,
            host_span: host,
            origin: None,
        })
    }

    /// A buffer of `raw_len` bytes stored in `stored` bytes of compact form.
    fn compact_buffer(
        &mut self,
        i: u32,
        shape: &LaunchShape,
        raw_len: u64,
        stored: u64,
    ) -> Result<Vec<u8>> {
        let at = self.pos;
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
                offset: at,
                needed: stored,
                available: self.left(),
            });
        }
        // Zeroed pages come fresh from the allocator; only the stored parts
        // are written.
        let mut raw = vec![0u8; raw_len as usize];
        let used = read_compact(
            &mut raw,
            shape,
            stored,
            |buf| {
                self.advance(buf.len() as u64, "buffer")?;
                self.src.read_into(buf)
            },
            |n| {
                Error::Corrupt(format!(
                    "launch record {i}: its slots' metadata asks for {n} or more stored bytes, \
                     the record declares {stored}"
                ))
            },
        )?;
        if used != stored {
            return Err(Error::Corrupt(format!(
                "launch record {i}: its slots' metadata asks for {used} stored bytes, the \
                 record declares {stored}"
            )));
        }
        Ok(raw)
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
