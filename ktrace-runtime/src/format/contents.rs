//! What a capture holds: the device, the launches with their shapes and
//! buffers, the clock syncs, and a continuous session's host steps and
//! sites. [`capture`](crate::format::capture) reads and writes them as a
//! file, through [`stream`](crate::format::stream).

use crate::error::{Error, Result};
use crate::format::buffer::LaunchBuffer;
use crate::format::clock_sync::ClockSync;
use crate::format::compact::compact_len;
use crate::format::layout::LAYOUT_VERSION;
use crate::format::regions::Regions;
use crate::format::shape::LaunchShape;
use crate::format::stalls::StallSamples;

/// The first eight bytes of every capture file.
pub const MAGIC: [u8; 8] = *b"\x89KTRACE\n";
/// The capture format version this build writes, and the newest it reads.
pub const FORMAT_VERSION: u16 = 3;

/// The longest device, kernel, step or site name a capture holds, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 4096;

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
    /// The launch's index among the site's launches (its launch number),
    /// counted on the device: graph replays included, kept or not.
    pub epoch: u32,
    /// `%gridid` of the launch: a plain launch's own, or its graph node's
    /// (every replay of a graph reuses its nodes' ids).
    pub grid_id: u64,
    /// The index of the host step the launch belongs to: the last step
    /// (`ContinuousSession::step`) begun before the launch was enqueued,
    /// in its stream's order, as the launch read it on the device. `None`
    /// before the first step, and in captures written before it was
    /// recorded.
    pub step: Option<u64>,
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

/// What a site does with a kept launch when its ring is full (every slab
/// holds a kept launch the host has not drained yet). Either way nothing
/// is lost silently: the launches lost are counted, in the capture's site
/// record and on the screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WhenFull {
    /// The new launch records nothing (its warps count themselves in the
    /// site's `dropped`): the capture keeps the oldest launches and the
    /// ring takes new ones once the drain has freed it.
    #[default]
    DropNew,
    /// The new launch writes over the oldest slab not yet drained: the
    /// capture keeps the newest launches, and the drain counts those
    /// overwritten before it could copy them. Needs a ring of 4 slabs or
    /// more.
    KeepNewest,
}

impl WhenFull {
    /// What became of the launches a full ring lost, for messages:
    /// "dropped" (new ones) or "overwritten" (old ones).
    pub fn lost(self) -> &'static str {
        match self {
            WhenFull::DropNew => "dropped",
            WhenFull::KeepNewest => "overwritten",
        }
    }

    /// The smallest ring this policy works with: a site that keeps the
    /// newest launches copies only slabs no running launch can be writing,
    /// at most the ring less one.
    pub fn min_slabs(self) -> u32 {
        match self {
            WhenFull::DropNew => 2,
            WhenFull::KeepNewest => 4,
        }
    }
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
    /// Launches the site saw, kept or not.
    pub launches: u64,
    /// Launches written to a slab (the capture holds those that were
    /// drained).
    pub kept: u64,
    /// Launches the keep rule chose that were lost because every slab still
    /// waited to be drained: with [`WhenFull::DropNew`] the new launches
    /// that recorded nothing, with [`WhenFull::KeepNewest`] the old ones
    /// written over before they were drained.
    pub dropped: u64,
    /// What the site did when its ring was full (bit 0 of the site
    /// record's flags: it kept the newest launches).
    pub when_full: WhenFull,
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
    /// PC samples of launches, per launch sampled (`KTRACE_STALLS`), in
    /// the order taken.
    pub stalls: Vec<StallSamples>,
    /// How a version 3 file ended: with its end record, or cut (its writer
    /// did not finish). `None` for a capture made in memory or read from a
    /// version 1 or 2 file.
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
}
