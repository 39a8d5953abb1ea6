//! Capture files written as the program runs, and read record by record
//! (format version 3).
//!
//! A version 3 file is the head of a version 2 file (header, device name,
//! region table, device identity) followed by self-delimiting records until
//! the end of the file:
//!
//! ```text
//! record = u32 kind, u32 flags (0), u64 payload length, payload
//! kind 1 launch      v2 launch header (96 B) + extension (32 B: origin)
//!                    + kernel name + the buffer in compact form
//! kind 2 clock sync  32 B
//! kind 3 host step   u64 index, u64 begin, u64 end, u32 name length, name
//! kind 4 site        u32 site, u32 name length, u64 launches, kept,
//!                    dropped, name (a later one for a site replaces it)
//! kind 5 end         u64 launch records, u64 records before it
//! kind 6 PC samples  one launch's PC samples, as JSON (format/stalls.rs)
//! ```
//!
//! [`CaptureWriter`] appends records and can flush after each, so a program
//! that is killed leaves a file whose complete records all read;
//! [`CaptureStream`] reads a file (of any version) a record at a time, and
//! tells whether it ended with its end record or was cut.
//! `docs/capture-format.md` gives every field.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::clock_sync::ClockSync;
use crate::format::compact::{compact_len, write_compact};
use crate::format::contents::{
    Capture, DeviceInfo, HostStep, LaunchCapture, SiteRecord, StreamEnd, WhenFull, FORMAT_VERSION,
    MAGIC, MAX_NAME_BYTES,
};
use crate::format::layout::{LAYOUT_VERSION, OLDEST_LAYOUT_VERSION};
use crate::format::reader::{
    FileSource, Reader, SliceSource, Source, CLOCK_SYNC_BYTES, HEADER_BYTES,
    LAUNCH_EXTENSION_BYTES, LAUNCH_HEADER_BYTES, LAUNCH_HEADER_V1_BYTES, ORIGIN_HAS_STEP,
};
use crate::format::regions::Regions;
use crate::format::stalls::StallSamples;

/// Bytes of a record's header: kind, flags, payload length.
const RECORD_HEADER_BYTES: u64 = 16;
/// Record kind: a launch.
const KIND_LAUNCH: u32 = 1;
/// Record kind: a clock sync.
const KIND_CLOCK_SYNC: u32 = 2;
/// Record kind: a host step.
const KIND_STEP: u32 = 3;
/// Record kind: a site and what became of its launches.
const KIND_SITE: u32 = 4;
/// Record kind: the end, written last by a writer that finished.
const KIND_END: u32 = 5;
/// Record kind: one launch's PC samples.
const KIND_STALLS: u32 = 6;
/// A site record's flag: the site kept the newest launches when its ring
/// was full ([`WhenFull::KeepNewest`]). Readers ignore the flags of other
/// kinds.
const SITE_KEEPS_NEWEST: u32 = 1;

/// Writes a capture file (format version 3) a record at a time: the head
/// when it is made, then each launch, clock sync, step and site record as
/// it is given, and the end record when finished.
pub struct CaptureWriter<W: Write> {
    w: W,
    /// What io errors name: the file, or `<capture>`.
    path: PathBuf,
    layout_version: u32,
    bytes: u64,
    launches: u64,
    records: u64,
}

impl CaptureWriter<BufWriter<File>> {
    /// Creates (truncates) `path` and writes the header.
    pub fn create(path: &Path, device: &DeviceInfo, regions: &Regions) -> Result<Self> {
        let f = File::create(path).map_err(|e| Error::io(path, e))?;
        let w = BufWriter::with_capacity(64 * 1024, f);
        CaptureWriter::start(w, path.to_path_buf(), device, regions, LAYOUT_VERSION)
    }
}

impl<W: Write> CaptureWriter<W> {
    /// Writes the header to `w`; the file's launches are of this build's
    /// layout version ([`LAYOUT_VERSION`]).
    pub fn new(w: W, device: &DeviceInfo, regions: &Regions) -> Result<Self> {
        CaptureWriter::start(w, "<capture>".into(), device, regions, LAYOUT_VERSION)
    }

    /// Writes the head of a file whose launches are of `layout_version`.
    pub(crate) fn start(
        w: W,
        path: PathBuf,
        device: &DeviceInfo,
        regions: &Regions,
        layout_version: u32,
    ) -> Result<Self> {
        if !(OLDEST_LAYOUT_VERSION..=LAYOUT_VERSION).contains(&layout_version) {
            return Err(Error::Config(format!(
                "layout version {layout_version} (this build writes {OLDEST_LAYOUT_VERSION} to \
                 {LAYOUT_VERSION})"
            )));
        }
        let head = head_bytes(device, regions, layout_version)?;
        let mut cw = CaptureWriter {
            w,
            path,
            layout_version,
            bytes: 0,
            launches: 0,
            records: 0,
        };
        cw.put(&head)?;
        Ok(cw)
    }

    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.w.write_all(b).map_err(|e| Error::io(&self.path, e))?;
        self.bytes += b.len() as u64;
        Ok(())
    }

    /// Writes a record of `kind` whose payload is `payload`.
    fn record(&mut self, kind: u32, payload: &[u8]) -> Result<()> {
        self.record_flagged(kind, 0, payload)
    }

    fn record_flagged(&mut self, kind: u32, flags: u32, payload: &[u8]) -> Result<()> {
        self.put(&record_header(kind, flags, payload.len() as u64))?;
        self.put(payload)?;
        self.records += 1;
        Ok(())
    }

    /// Appends a launch record. The launch must be of the file's layout
    /// version (an [`Error::Config`] otherwise, and nothing is written), its
    /// buffer must match its shape and its kernel name be at most 4096
    /// bytes.
    pub fn launch(&mut self, launch: &LaunchCapture) -> Result<()> {
        if launch.layout_version != self.layout_version {
            return Err(Error::Config(format!(
                "{} has layout version {} and the capture {}: one capture holds one layout \
                 version",
                launch.title(),
                launch.layout_version,
                self.layout_version
            )));
        }
        check_name(&launch.kernel, "kernel name")?;
        let buffer = launch.buffer()?;
        let stored = compact_len(&buffer);
        let head = launch_header(launch, stored);
        let payload = head.len() as u64 + launch.kernel.len() as u64 + stored;
        self.put(&record_header(KIND_LAUNCH, 0, payload))?;
        self.put(&head)?;
        self.put(launch.kernel.as_bytes())?;
        write_compact(&buffer, &mut self.w).map_err(|e| Error::io(&self.path, e))?;
        self.bytes += stored;
        self.records += 1;
        self.launches += 1;
        Ok(())
    }

    /// Appends a clock sync record (the sync must pass
    /// [`ClockSync::check`]).
    pub fn clock_sync(&mut self, sync: &ClockSync) -> Result<()> {
        sync.check()
            .map_err(|e| Error::Config(format!("cannot write {e}")))?;
        let mut p = Vec::with_capacity(CLOCK_SYNC_BYTES);
        for v in [
            sync.host_before_ns,
            sync.gpu_ns,
            sync.host_after_ns,
            sync.boottime_ns,
        ] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        self.record(KIND_CLOCK_SYNC, &p)
    }

    /// Appends a host step record.
    pub fn step(&mut self, step: &HostStep) -> Result<()> {
        check_name(&step.name, "step name")?;
        let mut p = Vec::with_capacity(28 + step.name.len());
        for v in [step.index, step.begin_ns, step.end_ns] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        p.extend_from_slice(&(step.name.len() as u32).to_le_bytes());
        p.extend_from_slice(step.name.as_bytes());
        self.record(KIND_STEP, &p)
    }

    /// Appends a site record; a reader keeps the last one of each site.
    pub fn site(&mut self, site: &SiteRecord) -> Result<()> {
        check_name(&site.kernel, "site kernel name")?;
        let mut p = Vec::with_capacity(32 + site.kernel.len());
        p.extend_from_slice(&site.site.to_le_bytes());
        p.extend_from_slice(&(site.kernel.len() as u32).to_le_bytes());
        for v in [site.launches, site.kept, site.dropped] {
            p.extend_from_slice(&v.to_le_bytes());
        }
        p.extend_from_slice(site.kernel.as_bytes());
        let flags = match site.when_full {
            WhenFull::DropNew => 0,
            WhenFull::KeepNewest => SITE_KEEPS_NEWEST,
        };
        self.record_flagged(KIND_SITE, flags, &p)
    }

    /// Appends the PC samples of one launch.
    pub fn stall_samples(&mut self, samples: &StallSamples) -> Result<()> {
        check_name(&samples.kernel, "kernel name")?;
        self.record(KIND_STALLS, &samples.to_payload())
    }

    /// Pushes what is buffered to the file, so a program killed later
    /// leaves every record written so far readable.
    pub fn flush(&mut self) -> Result<()> {
        self.w.flush().map_err(|e| Error::io(&self.path, e))
    }

    /// Writes the end record and flushes; returns the writer.
    pub fn finish(mut self) -> Result<W> {
        let mut p = Vec::with_capacity(16);
        p.extend_from_slice(&self.launches.to_le_bytes());
        p.extend_from_slice(&self.records.to_le_bytes());
        self.put(&record_header(KIND_END, 0, p.len() as u64))?;
        self.put(&p)?;
        self.flush()?;
        Ok(self.w)
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Launch records written so far.
    pub fn launches(&self) -> u64 {
        self.launches
    }
}

fn check_name(name: &str, what: &str) -> Result<()> {
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::Config(format!(
            "{what} of {} bytes (at most {MAX_NAME_BYTES})",
            name.len()
        )));
    }
    Ok(())
}

fn record_header(kind: u32, flags: u32, len: u64) -> [u8; RECORD_HEADER_BYTES as usize] {
    let mut h = [0u8; RECORD_HEADER_BYTES as usize];
    h[0..4].copy_from_slice(&kind.to_le_bytes());
    h[4..8].copy_from_slice(&flags.to_le_bytes());
    h[8..16].copy_from_slice(&len.to_le_bytes());
    h
}

/// Everything before the records: the header, the device name, the region
/// table and the device's identity.
fn head_bytes(device: &DeviceInfo, regions: &Regions, layout_version: u32) -> Result<Vec<u8>> {
    check_name(&device.name, "device name")?;
    let name = device.name.as_bytes();
    let mut h = Vec::with_capacity(HEADER_BYTES + 8 + name.len());
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    h.extend_from_slice(&(layout_version as u16).to_le_bytes());
    // launch count (0: records follow until the end), SMs, clock, flags,
    // reserved
    for v in [0, device.sm_count, device.clock_khz, 0, 0] {
        h.extend_from_slice(&v.to_le_bytes());
    }
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
    let ordinal = device.ordinal.map_or(0, |o| o.saturating_add(1));
    h.extend_from_slice(&ordinal.to_le_bytes());
    h.extend_from_slice(&u32::from(device.uuid.is_some()).to_le_bytes());
    h.extend_from_slice(&device.uuid.unwrap_or_default());
    Ok(h)
}

/// A launch record's header and its extension, for a buffer stored in
/// `stored` bytes.
fn launch_header(l: &LaunchCapture, stored: u64) -> Vec<u8> {
    let s = &l.shape;
    let mut h = Vec::with_capacity(LAUNCH_HEADER_BYTES + LAUNCH_EXTENSION_BYTES);
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
        h.extend_from_slice(&v.to_le_bytes());
    }
    let host = l.host_span.unwrap_or_default();
    for v in [
        l.raw.len() as u64,
        stored,
        host.enqueue_ns,
        host.complete_ns,
    ] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h.extend_from_slice(&(l.kernel.len() as u32).to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes()); // flags
    h.extend_from_slice(&0u64.to_le_bytes()); // reserved
    debug_assert_eq!(h.len(), LAUNCH_HEADER_BYTES);
    let o = l.origin.unwrap_or_default();
    let flags = u32::from(o.step.is_some()) * ORIGIN_HAS_STEP;
    for v in [u32::from(l.origin.is_some()), o.site, o.epoch, flags] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h.extend_from_slice(&o.grid_id.to_le_bytes());
    h.extend_from_slice(&o.step.unwrap_or(0).to_le_bytes());
    debug_assert_eq!(h.len(), LAUNCH_HEADER_BYTES + LAUNCH_EXTENSION_BYTES);
    h
}

/// One record of a capture file, as [`CaptureStream::next_record`] reads
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A launch.
    Launch(LaunchCapture),
    /// A clock sync.
    ClockSync(ClockSync),
    /// A host step.
    Step(HostStep),
    /// A site and what became of its launches so far (a later record of
    /// the same site replaces it).
    Site(SiteRecord),
    /// One launch's PC samples.
    Stalls(StallSamples),
    /// The end record (version 3): the writer finished the file.
    End,
}

/// What a capture file holds before its records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureHead {
    /// The file's format version (1, 2 or 3).
    pub format_version: u16,
    /// The layout version of its launches' buffers.
    pub layout_version: u32,
    /// The device.
    pub device: DeviceInfo,
    /// Region names.
    pub regions: Regions,
}

/// Where a [`RecordReader`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Reading,
    /// The end record was read (and returned).
    Ended,
    /// Nothing more: `next` gives `None`.
    Done,
}

/// Reads the records of a capture of any format version from a source.
pub(crate) struct RecordReader<S> {
    r: Reader<S>,
    head: CaptureHead,
    /// Version 2's clock syncs, given before its launches.
    syncs: std::vec::IntoIter<ClockSync>,
    /// Version 1 and 2: the launches the header declares.
    launch_count: u64,
    /// Launch records read.
    launches: u64,
    /// Version 3: records read before the end record.
    records: u64,
    state: State,
    end: Option<StreamEnd>,
}

impl<S: Source> RecordReader<S> {
    /// Reads the head of the file.
    pub(crate) fn new(mut r: Reader<S>) -> Result<Self> {
        let h = r.header()?;
        let name = r.name("device name")?;
        let regions = r.region_table()?;
        let (ordinal, uuid) = if h.format >= 2 {
            r.device_identity()?
        } else {
            (None, None)
        };
        let syncs = if h.format == 2 {
            r.clock_syncs()?
        } else {
            Vec::new()
        };
        if h.format >= 3 {
            if h.launch_count != 0 {
                return Err(Error::Corrupt(format!(
                    "launch count {} in a version 3 header (records follow: 0)",
                    h.launch_count
                )));
            }
        } else {
            // Each launch needs at least its header: a count the file
            // cannot hold is refused before anything is allocated for it.
            let header_bytes = if h.format >= 2 {
                LAUNCH_HEADER_BYTES
            } else {
                LAUNCH_HEADER_V1_BYTES
            } as u64;
            if u64::from(h.launch_count) > r.left() / header_bytes {
                return Err(Error::Truncated {
                    what: format!("{} launch records", h.launch_count),
                    offset: r.pos,
                    needed: u64::from(h.launch_count) * header_bytes,
                    available: r.left(),
                });
            }
        }
        let device = DeviceInfo {
            name,
            sm_count: h.sm_count,
            clock_khz: h.clock_khz,
            ordinal,
            uuid,
        };
        Ok(RecordReader {
            r,
            head: CaptureHead {
                format_version: h.format,
                layout_version: h.layout_version,
                device,
                regions,
            },
            syncs: syncs.into_iter(),
            launch_count: u64::from(h.launch_count),
            launches: 0,
            records: 0,
            state: State::Reading,
            end: None,
        })
    }

    /// The next record, or `None` after the last.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>> {
        match self.state {
            State::Reading if self.head.format_version >= 3 => self.next_v3(),
            State::Reading => self.next_v2(),
            State::Ended | State::Done => {
                self.state = State::Done;
                Ok(None)
            }
        }
    }

    /// Versions 1 and 2: the syncs, then the launches.
    fn next_v2(&mut self) -> Result<Option<Record>> {
        if let Some(s) = self.syncs.next() {
            return Ok(Some(Record::ClockSync(s)));
        }
        if self.launches < self.launch_count {
            let (format, layout) = (self.head.format_version, self.head.layout_version);
            let l = self.r.launch_record(self.launches, format, layout)?;
            self.launches += 1;
            return Ok(Some(Record::Launch(l)));
        }
        if self.r.left() != 0 {
            return Err(Error::Corrupt(format!(
                "{} unexpected bytes after the last launch",
                self.r.left()
            )));
        }
        self.state = State::Done;
        Ok(None)
    }

    /// Stops at a record that the file holds only `left` bytes of, from
    /// byte `at`.
    fn cut(&mut self, at: u64, left: u64) -> Option<Record> {
        self.end = Some(StreamEnd::Cut { offset: at, left });
        self.state = State::Done;
        None
    }

    /// Version 3: the next record whose kind is known.
    fn next_v3(&mut self) -> Result<Option<Record>> {
        loop {
            let at = self.r.pos;
            let left = self.r.left();
            if left < RECORD_HEADER_BYTES {
                return Ok(self.cut(at, left));
            }
            let kind = self.r.u32("record kind")?;
            let flags = self.r.u32("record flags")?;
            let len = self.r.u64("record length")?;
            if len > self.r.left() {
                return Ok(self.cut(at, left));
            }
            let file_end = self.r.end;
            self.r.end = self.r.pos + len;
            let record = self.payload(kind, flags, len).map_err(|e| match e {
                Error::Truncated {
                    what,
                    needed,
                    available,
                    ..
                } => Error::Corrupt(format!(
                    "record of kind {kind} at byte {at} ({len} bytes): its {what} needs \
                     {needed} bytes, the record has {available} left"
                )),
                e => e,
            })?;
            if self.r.left() != 0 {
                return Err(Error::Corrupt(format!(
                    "record of kind {kind} at byte {at}: {len} bytes, its fields take {}",
                    len - self.r.left()
                )));
            }
            self.r.end = file_end;
            match record {
                None => self.records += 1,
                Some(Record::End) => return self.end_record(at).map(Some),
                Some(rec) => {
                    self.records += 1;
                    return Ok(Some(rec));
                }
            }
        }
    }

    /// The payload of a record of `kind` and `len` bytes; `None` for a kind
    /// this build does not know (skipped).
    fn payload(&mut self, kind: u32, flags: u32, len: u64) -> Result<Option<Record>> {
        let r = &mut self.r;
        Ok(Some(match kind {
            KIND_LAUNCH => {
                let (format, layout) = (self.head.format_version, self.head.layout_version);
                let l = r.launch_record(self.launches, format, layout)?;
                self.launches += 1;
                Record::Launch(l)
            }
            KIND_CLOCK_SYNC => Record::ClockSync(r.clock_sync("clock sync record")?),
            KIND_STEP => Record::Step(r.step()?),
            KIND_SITE => Record::Site(SiteRecord {
                when_full: if flags & SITE_KEEPS_NEWEST != 0 {
                    WhenFull::KeepNewest
                } else {
                    WhenFull::DropNew
                },
                ..r.site()?
            }),
            KIND_STALLS => Record::Stalls(StallSamples::from_payload(&r.vec(len, "PC samples")?)?),
            KIND_END => {
                let launches = r.u64("end record's launch count")?;
                let records = r.u64("end record's record count")?;
                if launches != self.launches || records != self.records {
                    return Err(Error::Corrupt(format!(
                        "the end record counts {launches} launches in {records} records, the \
                         file holds {} in {}",
                        self.launches, self.records
                    )));
                }
                Record::End
            }
            _ => {
                r.skip(len, "record")?;
                return Ok(None);
            }
        }))
    }

    /// After the end record that started at byte `at`: nothing may follow.
    fn end_record(&mut self, at: u64) -> Result<Record> {
        if self.r.left() != 0 {
            return Err(Error::Corrupt(format!(
                "{} bytes after the end record (at byte {at})",
                self.r.left()
            )));
        }
        self.end = Some(StreamEnd::Closed);
        self.state = State::Ended;
        Ok(Record::End)
    }

    /// Reads every record into a capture, keeping the launches for which
    /// `keep` is true: each other launch is dropped as soon as it is read.
    pub(crate) fn into_capture_selected(
        mut self,
        mut keep: impl FnMut(&LaunchCapture) -> bool,
    ) -> Result<Capture> {
        let mut cap = Capture {
            device: self.head.device.clone(),
            regions: self.head.regions.clone(),
            ..Default::default()
        };
        while let Some(rec) = self.next_record()? {
            match rec {
                Record::Launch(l) if keep(&l) => cap.launches.push(l),
                Record::Launch(_) => {}
                Record::ClockSync(s) => cap.clock_syncs.push(s),
                Record::Step(s) => cap.steps.push(s),
                Record::Site(s) => match cap.sites.iter_mut().find(|o| o.site == s.site) {
                    Some(old) => *old = s,
                    None => cap.sites.push(s),
                },
                Record::Stalls(s) => cap.stalls.push(s),
                Record::End => {}
            }
        }
        cap.stream_end = self.end;
        Ok(cap)
    }
}

/// Reads a capture of the bytes in memory, keeping the launches for which
/// `keep` is true.
pub(crate) fn capture_from_bytes(
    bytes: &[u8],
    keep: impl FnMut(&LaunchCapture) -> bool,
) -> Result<Capture> {
    RecordReader::new(Reader::new(SliceSource(bytes), bytes.len() as u64))?
        .into_capture_selected(keep)
}

/// A capture file read a record at a time, so that a large one need not be
/// held in memory whole. Reads every format version: those before 3 give
/// their clock syncs, then their launches.
pub struct CaptureStream {
    inner: RecordReader<FileSource>,
}

impl CaptureStream {
    /// Opens `path` and reads its head.
    pub fn open(path: impl AsRef<Path>) -> Result<CaptureStream> {
        Self::open_on(path, 1)
    }

    /// [`CaptureStream::open`], a large launch buffer read on up to
    /// `threads` threads (0: one per core) straight into its place.
    pub fn open_on(path: impl AsRef<Path>, threads: usize) -> Result<CaptureStream> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| Error::io(path, e))?;
        let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
        let src = FileSource {
            r: BufReader::with_capacity(64 * 1024, f),
            path: path.to_path_buf(),
            threads: crate::threads::thread_count(threads),
        };
        Ok(CaptureStream {
            inner: RecordReader::new(Reader::new(src, len))?,
        })
    }

    /// What the file holds before its records: versions, device, regions.
    pub fn head(&self) -> &CaptureHead {
        &self.inner.head
    }

    /// The next record, or `None` after the last (a version 3 file's end
    /// record is given as [`Record::End`] first). A record the file holds
    /// only part of ends the stream (see [`CaptureStream::end`]); a
    /// complete record that is corrupt is an error.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        self.inner.next_record()
    }

    /// How a version 3 file ended, once [`CaptureStream::next_record`]
    /// returned `None`: closed by its end record, or cut. `None` for files
    /// of versions 1 and 2, and before the end.
    pub fn end(&self) -> Option<StreamEnd> {
        self.inner.end
    }

    /// Reads every record left into a capture.
    pub fn into_capture(self) -> Result<Capture> {
        self.inner.into_capture_selected(|_| true)
    }

    /// Reads every record left into a capture that holds only the launches
    /// for which `keep` is true; each other launch is dropped as soon as it
    /// is read, so this takes the memory of the launches kept and of one
    /// record. Clock syncs, steps, sites and the end are kept as
    /// [`CaptureStream::into_capture`] keeps them.
    pub fn into_capture_selected(
        self,
        keep: impl FnMut(&LaunchCapture) -> bool,
    ) -> Result<Capture> {
        self.inner.into_capture_selected(keep)
    }
}

#[cfg(test)]
mod tests;
