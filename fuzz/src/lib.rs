//! The fuzz harness of ktrace-runtime: one function per cargo-fuzz target
//! (`fuzz_targets/*.rs` call them) and the seed inputs of the corpus.
//!
//! ktrace-examples' `tests/fuzz_corpus.rs` includes this file with
//! `#[path]` and replays every file of `fuzz/corpus/*/` through the same
//! functions on stable Rust, so this file may use only `std`,
//! `ktrace_runtime` and `serde_json` (never `libfuzzer_sys`).
//!
//! Every function takes arbitrary bytes and must not panic: errors from the
//! runtime are fine, a panic (including an arithmetic overflow, since fuzz
//! builds keep debug assertions) is a bug. Besides "no panic", the functions
//! check a few things that hold for every input:
//!
//! - a capture that parsed writes back and parses to the same capture;
//! - every decoded warp keeps at most `cap` events, in time order, with
//!   `dropped = count - cap` (flushed warps) and every span begin ≤ end;
//! - `summarize_launch` (`ktrace summary`) and `write_trace` (`ktrace
//!   export`) give the same summary and the same diagnostics;
//! - the Chrome trace and the summary are valid JSON (checked by the
//!   corpus replay, not inside the fuzz targets: see [`fuzz_mode`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use ktrace_runtime::decode::TimeModel;
use ktrace_runtime::decode::{DecodeOptions, DecodedLaunch, Decoder};
use ktrace_runtime::export::chrome::ChromeOptions;
use ktrace_runtime::export::summary::{Breakdown, SummaryOptions};
use ktrace_runtime::export::{summarize_launch, write_trace, ExportOptions};
use ktrace_runtime::format::capture::{Capture, DeviceInfo, LaunchCapture};
use ktrace_runtime::format::layout::EventKind;
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use ktrace_runtime::synth::{self, SynthLaunch, SynthWarp, BASE_GT};

pub mod headers;
pub use headers::capture_headers;

/// The largest raw buffer the `decode` target builds, so that every run
/// stays fast and small.
pub const MAX_DECODE_BUFFER: u64 = 64 * 1024;

static FUZZ_MODE: AtomicBool = AtomicBool::new(false);

/// Called once by each fuzz target: skips parsing the JSON outputs back,
/// which is slow and mostly exercises serde_json (the corpus replay test,
/// which does not call this, keeps that check).
pub fn fuzz_mode() {
    FUZZ_MODE.store(true, Ordering::Relaxed);
}

/// The largest single allocation the fuzz targets allow (256 MiB), as
/// libFuzzer's `-malloc_limit_mb=256`.
pub const MALLOC_LIMIT: usize = 256 << 20;

/// The fuzz targets' global allocator: the system allocator, aborting on
/// any single allocation of [`MALLOC_LIMIT`] bytes or more. libFuzzer
/// enforces `-malloc_limit_mb` only through a sanitizer's allocator hooks,
/// so this keeps the limit when the targets are built without one
/// (`cargo fuzz run -s none`); libFuzzer reports the abort as a crash.
pub struct LimitedAlloc;

fn check_size(size: usize) {
    if size >= MALLOC_LIMIT {
        use std::io::Write;
        let _ = std::io::stderr().write_all(b"==ktrace-fuzz== allocation of 256 MiB or more\n");
        std::process::abort();
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_size(layout.size());
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_size(layout.size());
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check_size(new_size);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Reads the input front to back; past its end every read gives zeros.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    fn rest(&self) -> &'a [u8] {
        self.0
    }
}

/// Export options from two bytes of the input.
///
/// `a`: bit 0 one process per SM, bit 1 raw B/E events, bits 2-3 the
/// breakdown (none, per block, per warp), bits 4-7 the histogram bins
/// (0-15; 0 is treated as 1 by the summary), bit 7 also the threads (1 or
/// 2). `b`: the short-span threshold
/// of the decoder (0, the default 10 µs, never, or `b` × 100 ns).
pub fn options(a: u8, b: u8) -> ExportOptions {
    let short_span_ns = match b & 3 {
        0 => 0,
        1 => DecodeOptions::default().short_span_ns,
        2 => u64::MAX,
        _ => u64::from(b) * 100,
    };
    ExportOptions {
        decode: DecodeOptions {
            short_span_ns,
            time_model: if a & 0x40 != 0 {
                TimeModel::TwoPoint
            } else {
                TimeModel::Anchors
            },
            ..DecodeOptions::default()
        },
        chrome: ChromeOptions {
            by_sm: a & 1 != 0,
            raw_events: a & 2 != 0,
        },
        summary: SummaryOptions {
            hist_bins: usize::from(a >> 4),
            breakdown: match (a >> 2) & 3 {
                0 | 3 => Breakdown::None,
                1 => Breakdown::PerBlock,
                _ => Breakdown::PerWarp,
            },
        },
        filter: None,
        // Bit 7 of `a`: two threads where an export decodes by itself.
        threads: 1 + usize::from(a >> 7),
    }
}

/// What [`export_to_memory`] wrote.
#[derive(Debug)]
pub struct Exported {
    /// The Chrome trace.
    pub chrome: Vec<u8>,
    /// The summary, as `trace_summary.json` holds it.
    pub summary: Vec<u8>,
    /// Trace events written.
    pub events: u64,
    /// Warps decoded.
    pub warps: usize,
}

/// What `export_launch` does, to memory instead of files: the metadata
/// pass ([`Decoder::new`]), every warp decoded (here all at once,
/// [`Decoder::decode_all`], and checked; `export_launch` streams the same
/// [`Decoder::warps`]), then [`write_trace`], the Chrome trace and the
/// summary that `export_launch` writes; then the same summary again
/// through `summarize_launch` (what `ktrace summary` runs), which must
/// agree, diagnostics included. Outside the fuzz targets ([`fuzz_mode`])
/// both outputs are also parsed back as JSON.
pub fn export_to_memory(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
) -> ktrace_runtime::Result<Exported> {
    let dec = Decoder::new(launch.buffer()?, &opts.decode_for(device));
    let decoded = dec.decode_all();
    check_launch(&decoded);
    let mut chrome = Vec::new();
    let written = write_trace(
        &dec,
        &decoded.warps,
        device,
        regions,
        opts,
        Path::new("trace.json"),
        &mut chrome,
    )
    .expect("writing to memory cannot fail");
    let summary_json = serde_json::to_vec_pretty(&written.summary).expect("a summary serialises");
    let (again, diagnostics) = summarize_launch(launch, device, regions, opts)?;
    assert!(
        again.regions == written.summary.regions && again.per_block == written.summary.per_block,
        "summarize_launch and the streamed summary disagree"
    );
    assert_eq!(
        diagnostics, written.diagnostics,
        "summarize_launch and write_trace report different diagnostics"
    );
    assert_eq!(again.diagnostics, written.summary.diagnostics);
    if !FUZZ_MODE.load(Ordering::Relaxed) {
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&chrome) {
            panic!(
                "the Chrome trace is not valid JSON ({e}): {}",
                String::from_utf8_lossy(&chrome)
            );
        }
        serde_json::from_slice::<serde_json::Value>(&summary_json)
            .expect("the summary is valid JSON");
    }
    Ok(Exported {
        chrome,
        summary: summary_json,
        events: written.events,
        warps: dec.warp_count(),
    })
}

/// What holds for every decoded warp, whatever the buffer held.
fn check_warp(shape: &LaunchShape, w: &ktrace_runtime::decode::WarpTrace) {
    let cap = shape.cap();
    assert!(
        w.events.len() as u64 <= u64::from(cap),
        "more events than the ring holds"
    );
    if w.flushed {
        assert_eq!(w.dropped, u64::from(w.recorded.saturating_sub(cap)));
    } else {
        assert_eq!((w.recorded, w.dropped), (0, 0));
    }
    assert!(
        w.events
            .windows(2)
            .all(|p| (p[0].t_ps, p[0].kind.tie_rank()) <= (p[1].t_ps, p[1].kind.tie_rank())),
        "events out of time order"
    );
    assert!(
        w.spans.iter().all(|s| s.start_ps <= s.end_ps),
        "a span ends before it begins"
    );
    let begins = w
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Begin)
        .count();
    let ends = w.events.iter().filter(|e| e.kind == EventKind::End).count();
    assert!(
        w.spans.len() <= begins.min(ends),
        "more spans than begin/end pairs"
    );
}

/// What holds for a whole decoded launch.
fn check_launch(d: &DecodedLaunch) {
    let per_warp: usize = d.warps.iter().map(|w| w.diagnostics.len()).sum();
    assert!(d.diagnostics.len() >= per_warp);
    assert!(
        d.warps.windows(2).all(|p| p[0].slot < p[1].slot),
        "warps not in slot order"
    );
    for w in &d.warps {
        assert!(w.slot < d.shape.slot_count());
        check_warp(&d.shape, w);
    }
}

/// Decodes and exports one launch to memory; errors are fine.
fn decode_and_export(
    launch: &LaunchCapture,
    device: &DeviceInfo,
    regions: &Regions,
    opts: &ExportOptions,
) {
    let _ = export_to_memory(launch, device, regions, opts);
}

/// Target `capture_parse`: the bytes are a capture file. When it parses,
/// it must write back to a capture that parses the same (up to the bytes a
/// compact capture does not store, which read back as zeros and which the
/// decoder never reads), and every launch is decoded and exported to
/// memory, decoding alike from the capture read and from the one written
/// back. The export options come from the
/// low bytes of the header's `flags` and `reserved` fields (offsets 24 and
/// 28), which readers ignore.
pub fn capture_parse(data: &[u8]) {
    let Ok(cap) = Capture::from_bytes(data) else {
        return;
    };
    let mut out = Vec::new();
    cap.write_to(&mut out)
        .expect("a capture that was read can be written");
    let again = Capture::from_bytes(&out).expect("a written capture reads");
    let mut stored = cap.clone();
    // Whatever file it came from (an older version, or one that was cut),
    // it is written back whole, with its end record.
    stored.stream_end = Some(ktrace_runtime::format::capture::StreamEnd::Closed);
    for l in &mut stored.launches {
        l.raw =
            ktrace_runtime::format::capture::stored_part(&l.buffer().expect("a written capture"));
    }
    assert_eq!(again, stored, "capture changed in a write/read round trip");
    // PC samples gather into stall tables whatever they hold.
    let _ = ktrace_runtime::analysis::stalls::stall_tables(&cap.stalls, &cap.regions, None);
    for (a, b) in cap.launches.iter().zip(&again.launches) {
        let d = ExportOptions::default().decode_for(&cap.device);
        assert_eq!(
            a.buffer()
                .ok()
                .map(|x| ktrace_runtime::decode::decode(x, &d)),
            b.buffer()
                .ok()
                .map(|x| ktrace_runtime::decode::decode(x, &d)),
            "a compact capture decodes differently"
        );
    }
    if let Some(first) = cap.launches.first() {
        assert!(cap.launch(first.shape.launch).is_ok());
    }
    let opts = options(
        data.get(24).copied().unwrap_or(0),
        data.get(28).copied().unwrap_or(0),
    );
    for l in &cap.launches {
        decode_and_export(l, &cap.device, &cap.regions, &opts);
    }
}

/// Target `decode`: the first bytes pick a launch shape, the rest is the
/// raw buffer.
///
/// Byte 0 is the mode. Bit 7 clear: a bounded shape through
/// `LaunchShape::new` (grid up to 4×3×2 blocks, up to 1024 threads,
/// capacity 32 or 64, every warp/block sampling kind), bytes 1-13. Bit 7
/// set: every shape field straight from bytes 1-40 (so mostly shapes that
/// `validate` or the length check refuse). Then two option bytes (see
/// [`options`]). Bit 6 of the mode: the raw buffer is the rest of the input
/// as it is (usually the wrong length); else it is the rest of the input
/// repeated (bit 5) or padded with zeros (bit 5 clear) to the shape's size,
/// when that is at most [`MAX_DECODE_BUFFER`].
pub fn decode(data: &[u8]) {
    let mut b = Bytes(data);
    let mode = b.u8();
    let shape = if mode & 0x80 == 0 {
        match bounded_shape(&mut b) {
            Some(s) => s,
            None => return,
        }
    } else {
        LaunchShape {
            grid: [b.u32(), b.u32(), b.u32()],
            block: [b.u32(), b.u32(), b.u32()],
            cap_log2: b.u32(),
            warp_mask: b.u32(),
            block_stride: b.u32(),
            blocks_traced: b.u32(),
            launch: 0,
        }
    };
    let opts = options(b.u8(), b.u8());
    let rest = b.rest();
    let raw = if mode & 0x40 != 0 {
        rest.to_vec()
    } else {
        match shape.buffer_bytes() {
            Some(n) if n <= MAX_DECODE_BUFFER => {
                let n = n as usize;
                if mode & 0x20 != 0 && !rest.is_empty() {
                    rest.iter().copied().cycle().take(n).collect()
                } else {
                    let mut v = rest[..rest.len().min(n)].to_vec();
                    v.resize(n, 0);
                    v
                }
            }
            _ => rest.to_vec(),
        }
    };
    let regions = Regions::from_table(synth::SAMPLE_REGIONS);
    let device = DeviceInfo {
        name: "fuzz".into(),
        sm_count: 132,
        clock_khz: 1_980_000,
        ..DeviceInfo::default()
    };
    decode_and_export(&LaunchCapture::new(shape, raw), &device, &regions, &opts);
}

/// A small launch shape from 13 bytes, through `LaunchShape::new`.
fn bounded_shape(b: &mut Bytes<'_>) -> Option<LaunchShape> {
    let grid = [
        1 + u32::from(b.u8() % 4),
        1 + u32::from(b.u8() % 3),
        1 + u32::from(b.u8() % 2),
    ];
    let block = [1 + u32::from(b.u16() % 512), 1 + u32::from(b.u8() % 2), 1];
    let cap = 32 << (b.u8() % 2);
    let kind = b.u8();
    let warps = match kind % 3 {
        0 => WarpSampling::All,
        1 => WarpSampling::Mask(b.u32()),
        _ => {
            let n = b.u8() % 4;
            WarpSampling::List((0..n).map(|_| u32::from(b.u8() % 40)).collect())
        }
    };
    let (x, y) = (u32::from(b.u8() % 6), u32::from(b.u8() % 6));
    let blocks = match (kind / 3) % 4 {
        0 => BlockSampling::All,
        1 => BlockSampling::Stride(x),
        2 => BlockSampling::First(x),
        _ => BlockSampling::StrideMax { stride: x, max: y },
    };
    let mut shape = LaunchShape::new(grid, block, cap, &warps, blocks).ok()?;
    shape.launch = u32::from(b.u8());
    Some(shape)
}

/// Regions of the `export` bases: the sample's, plus names that need
/// escaping in JSON.
fn export_regions() -> Regions {
    let mut r = Regions::from_table(synth::SAMPLE_REGIONS);
    r.insert(3, "quote \" backslash \\ newline \n tab \t");
    r.insert(4, "ünïcödé ✓ \u{1}");
    r
}

/// The valid launches that the `export` target mutates.
pub fn export_bases() -> &'static [LaunchCapture] {
    static BASES: OnceLock<Vec<LaunchCapture>> = OnceLock::new();
    BASES.get_or_init(|| {
        vec![
            synth::sample_launch(0, 0),
            synth::sample_launch(1, 200),
            sampled_launch(),
        ]
    })
}

/// A launch with warp and block sampling, nested and repeated regions,
/// a 32-bit clock wrap, slots long and short enough for their own clock
/// rate, ring overflow and a never-flushed warp.
fn sampled_launch() -> LaunchCapture {
    let mut shape = LaunchShape::new(
        [4, 2, 1],
        [96, 2, 1],
        64,
        &WarpSampling::List(vec![0, 3, 5]),
        BlockSampling::StrideMax { stride: 3, max: 2 },
    )
    .expect("a valid shape");
    shape.launch = 2;
    let mut long = SynthWarp::new(0, 0)
        .rate(1000, 1980)
        .open_at(BASE_GT, u64::from(u32::MAX) - 500);
    for i in 0..30u64 {
        long = long
            .begin(i * 1000, 3)
            .span(i * 1000 + 10, i * 1000 + 300, 4)
            .mark(i * 1000 + 400, 2)
            .end(i * 1000 + 900, 3);
    }
    let long = long.flush_at(40_000);
    let mut over = SynthWarp::new(3, 5).rate(1000, 2010).sm(17);
    for i in 0..100u64 {
        over = over.span(i * 50, i * 50 + 20, 1);
    }
    SynthLaunch::new(shape)
        .with(long)
        .with(SynthWarp::new(0, 3).span(10, 20, 0).span(15, 30, 0))
        .with(SynthWarp::new(0, 5).end(5, 1).begin(10, 1).begin(12, 1))
        .with(over)
        .with(SynthWarp::new(3, 0).span(100, 200, 4).never_flushed())
        .into_capture()
}

/// Target `export`: a valid synthetic launch mutated by the input, then
/// decoded and exported to memory.
///
/// Byte 0 picks the base launch ([`export_bases`]), bytes 1-2 the options
/// ([`options`]); then every 3 bytes `(offset: u16 LE, x: u8)` XOR byte
/// `offset % len` of the raw buffer with `x`.
pub fn export(data: &[u8]) {
    let bases = export_bases();
    let mut b = Bytes(data);
    let mut launch = bases[usize::from(b.u8()) % bases.len()].clone();
    let opts = options(b.u8(), b.u8());
    for flip in b.rest().chunks_exact(3) {
        let off = usize::from(u16::from_le_bytes([flip[0], flip[1]])) % launch.raw.len();
        launch.raw[off] ^= flip[2];
    }
    let device = DeviceInfo {
        name: "Synthetic GPU".into(),
        sm_count: 132,
        clock_khz: 1_980_000,
        ..DeviceInfo::default()
    };
    decode_and_export(&launch, &device, &export_regions(), &opts);
}

/// A seed input: (target, file name, bytes).
type Seed = (&'static str, String, Vec<u8>);

/// Seed inputs for each target: (target, file name, bytes). The corpus
/// replay test writes them to `fuzz/corpus/<target>/` when asked
/// (`KTRACE_WRITE_SEEDS=1`) and always runs them.
pub fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = Vec::new();
    capture_parse_seeds(&mut out);
    headers::seeds(&mut out);
    decode_seeds(&mut out);
    export_seeds(&mut out);
    out
}

/// `capture` as its file holds it.
fn written(capture: &Capture) -> Vec<u8> {
    let mut b = Vec::new();
    capture.write_to(&mut b).expect("writes");
    b
}

/// capture_parse: the sample capture (as is, it is the fixture
/// tests/data/sample_v1.ktrace, which the corpus holds) with other
/// options, a sampled launch, no launch, headers that lie about their
/// sizes and a truncated file.
fn capture_parse_seeds(out: &mut Vec<Seed>) {
    let sample = synth::sample_capture();
    let bytes = written(&sample);
    let mut opts = bytes.clone();
    opts[24] = 0b1111_0111;
    opts[28] = 3;
    out.push(("capture_parse", "seed-sample-options".into(), opts));
    sampled_capture_seeds(out, &sample);
    let launch_at = length_lie_seeds(out, &sample, &bytes);
    let b = written(&v2_capture(&sample));
    out.push(("capture_parse", "seed-v2-syncs-kernels".into(), b));
    let b = written(&v3_capture());
    out.push(("capture_parse", "seed-v3-sites-steps".into(), b.clone()));
    out.push((
        "capture_parse",
        "seed-v3-cut".into(),
        b[..b.len() * 2 / 3].to_vec(),
    ));
    let mut lie = bytes.clone();
    for (off, v) in [(4, u32::MAX), (8, u32::MAX), (12, 2)] {
        lie[launch_at + off..launch_at + off + 4].copy_from_slice(&v.to_le_bytes());
    }
    out.push(("capture_parse", "seed-lie-grid".into(), lie));
    out.push((
        "capture_parse",
        "seed-truncated".into(),
        bytes[..bytes.len() / 2].to_vec(),
    ));
}

/// A sampled launch with the sample's device, the same with no launch and
/// no device name, and that with a huge device name.
fn sampled_capture_seeds(out: &mut Vec<Seed>, sample: &Capture) {
    // Written as the sample's launches are: layout version 1.
    let mut sampled = Capture {
        device: sample.device.clone(),
        regions: export_regions(),
        launches: vec![LaunchCapture {
            layout_version: 1,
            ..sampled_launch()
        }],
        clock_syncs: Vec::new(),
        ..Default::default()
    };
    out.push(("capture_parse", "seed-sampled".into(), written(&sampled)));
    sampled.launches.clear();
    sampled.device.name.clear();
    let b = written(&sampled);
    out.push(("capture_parse", "seed-no-launch".into(), b.clone()));
    // Lies: a huge device name, region count, launch count and raw length.
    let mut lie = b.clone();
    lie[32..36].copy_from_slice(&4096u32.to_le_bytes());
    out.push(("capture_parse", "seed-lie-name".into(), lie));
}

/// The sample (written as `bytes`) with a huge launch count, region count,
/// raw length and stored length; returns where its first launch header
/// starts.
fn length_lie_seeds(out: &mut Vec<Seed>, sample: &Capture, bytes: &[u8]) -> usize {
    let mut lie = bytes.to_vec();
    lie[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    out.push(("capture_parse", "seed-lie-launches".into(), lie));
    let name_len = u32::from_le_bytes([bytes[32], bytes[33], bytes[34], bytes[35]]) as usize;
    let mut lie = bytes.to_vec();
    lie[36 + name_len..40 + name_len].copy_from_slice(&65536u32.to_le_bytes());
    out.push(("capture_parse", "seed-lie-regions".into(), lie));
    // The first launch header starts after the header, name, regions, the
    // device identity (24 bytes) and its record's header (16 bytes): the
    // sample has no clock syncs, whose records would come first.
    let regions_len: usize = sample.regions.iter().map(|(_, n)| 4 + n.len()).sum();
    let launch_at = 40 + name_len + regions_len + 24 + 16;
    let mut lie = bytes.to_vec();
    lie[launch_at + 48..launch_at + 56].copy_from_slice(&u64::MAX.to_le_bytes());
    out.push(("capture_parse", "seed-lie-raw-len".into(), lie));
    let mut lie = bytes.to_vec();
    lie[launch_at + 56..launch_at + 64].copy_from_slice(&u64::MAX.to_le_bytes());
    out.push(("capture_parse", "seed-lie-stored-len".into(), lie));
    launch_at
}

/// A capture with what format version 3 adds: launches of this build's
/// layout version with their origins, host steps, sites (one of them
/// twice: the later record replaces the earlier) and PC samples.
fn v3_capture() -> Capture {
    use ktrace_runtime::format::capture::{HostStep, LaunchOrigin, SiteRecord};
    let mut launch = sampled_launch();
    launch.kernel = "decode_step".into();
    launch.origin = Some(LaunchOrigin {
        site: 2,
        epoch: 41,
        grid_id: 0x1_0000_0007,
        step: Some(17),
    });
    let site = SiteRecord {
        site: 2,
        kernel: "decode_step".into(),
        launches: 40,
        kept: 3,
        dropped: 1,
        when_full: Default::default(),
    };
    Capture {
        device: DeviceInfo {
            name: "Synthetic GPU".into(),
            ordinal: Some(0),
            ..DeviceInfo::default()
        },
        regions: export_regions(),
        launches: vec![launch],
        clock_syncs: v2_capture(&synth::sample_capture()).clock_syncs,
        steps: vec![HostStep {
            name: "step".into(),
            index: 7,
            begin_ns: 1_700_000_000_000_000_000,
            end_ns: 1_700_000_000_000_900_000,
        }],
        sites: vec![
            site.clone(),
            SiteRecord {
                launches: 42,
                ..site
            },
        ],
        stalls: vec![stall_samples()],
        stream_end: None,
    }
}

/// PC samples of launch 0: one instruction in a region, one not placed.
fn stall_samples() -> ktrace_runtime::format::stalls::StallSamples {
    use ktrace_runtime::format::pc_map::PcMap;
    use ktrace_runtime::format::stalls::{PcSample, StallSamples};
    let map = PcMap::parse(
        "ktrace-pcmap 1\nfile 0 /k/decode.cu\nfunction decode_step\n0010 1 u 0:9 LDG.E\n",
    )
    .unwrap_or_default();
    StallSamples {
        launch: 0,
        kernel: "decode_step".into(),
        period_log2: 10,
        reasons: vec!["long_scoreboard".into(), "barrier".into()],
        total_samples: 9,
        pcs: vec![
            PcSample::placed("decode_step", 0x20, vec![(1, 4)], &map),
            PcSample::placed("decode_step", 0x40, vec![(0, 5)], &map),
        ],
        ..Default::default()
    }
}

/// The sample with everything format version 2 adds: identity, clock
/// syncs, kernel names, host spans.
fn v2_capture(sample: &Capture) -> Capture {
    let mut full = sample.clone();
    full.device.ordinal = Some(0);
    full.device.uuid = Some([7; 16]);
    full.clock_syncs = vec![ktrace_runtime::timeline::ClockSync {
        host_before_ns: 1_700_000_000_000_000_000,
        gpu_ns: 1_700_000_000_000_095_000,
        host_after_ns: 1_700_000_000_000_002_800,
        boottime_ns: 1_000,
    }];
    for l in &mut full.launches {
        l.kernel = "gemm".into();
        l.host_span = Some(ktrace_runtime::format::capture::HostSpan {
            enqueue_ns: 1_700_000_000_000_010_000,
            complete_ns: 1_700_000_000_000_990_000,
        });
    }
    full
}

/// decode: bounded shapes with the sample's buffers and a raw shape.
fn decode_seeds(out: &mut Vec<Seed>) {
    for (i, l) in [synth::sample_launch(0, 0), sampled_launch()]
        .iter()
        .enumerate()
    {
        out.push(("decode", format!("seed-raw-shape-{i}"), raw_shape_input(l)));
    }
    // The sample launch as a bounded shape: grid 3, 64 threads, cap 32.
    let l = synth::sample_launch(0, 0);
    let mut d = vec![0x00, 2, 0, 0];
    d.extend_from_slice(&63u16.to_le_bytes());
    d.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x05, 0x01]);
    d.extend_from_slice(&l.raw);
    out.push(("decode", "seed-bounded-sample".into(), d));
    out.push(("decode", "seed-bounded-tiled".into(), {
        // Grid 4x3x2, 1024 threads, cap 32, warps 0, 1 and 9, every 2nd
        // block, every slot a copy of the sample's slot 0.
        let mut d = vec![
            0x20, 3, 2, 1, 255, 1, 1, 0, 4, 3, 2, 0, 0, 2, 0, 7, 0x26, 0x01,
        ];
        d.extend_from_slice(&l.raw[..l.shape.slot_bytes() as usize]);
        d
    }));
    out.push(("decode", "seed-wrong-length".into(), {
        let mut d = vec![0x40, 0, 0, 0, 31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        d.extend_from_slice(&l.raw[..100]);
        d
    }));
}

/// export: each base with no flips and with a few.
fn export_seeds(out: &mut Vec<Seed>) {
    for i in 0..export_bases().len() as u8 {
        out.push(("export", format!("seed-base-{i}"), vec![i, 0, 1]));
        out.push((
            "export",
            format!("seed-flips-{i}"),
            vec![i, 0b0110_0111, 3, 48, 0, 0xff, 24, 0, 0x01, 0x60, 1, 0x80],
        ));
    }
}

/// A `decode` input with every shape field given (mode bit 7) and `l`'s
/// buffer.
fn raw_shape_input(l: &LaunchCapture) -> Vec<u8> {
    let s = &l.shape;
    let mut d = vec![0x80];
    for v in s.grid.into_iter().chain(s.block).chain([
        s.cap_log2,
        s.warp_mask,
        s.block_stride,
        s.blocks_traced,
    ]) {
        d.extend_from_slice(&v.to_le_bytes());
    }
    d.extend_from_slice(&[0x14, 0x01]);
    d.extend_from_slice(&l.raw);
    d
}
