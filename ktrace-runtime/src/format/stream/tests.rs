use super::*;
use crate::format::contents::{HostSpan, LaunchOrigin};
use crate::format::pc_map::PcKind;
use crate::format::stalls::PcSample;
use crate::synth::{sample_capture, SynthLaunch, SynthWarp};

/// A launch of this build's layout version with an origin, a kernel name
/// and a host span.
fn site_launch(launch: u32, epoch: u32) -> LaunchCapture {
    let mut l = SynthLaunch::all_traced(2, 64, 32)
        .with(SynthWarp::new(0, 0).span(100, 300, 0).mark(400, 1))
        .with(SynthWarp::new(1, 1).span(120, 200 + u64::from(epoch), 0))
        .into_capture();
    l.shape.launch = launch;
    l.kernel = format!("step_kernel_{launch}");
    l.host_span = Some(HostSpan {
        enqueue_ns: 1_700_000_000_000_000_000 + u64::from(launch),
        complete_ns: 1_700_000_000_000_500_000 + u64::from(launch),
    });
    l.origin = Some(LaunchOrigin {
        site: 1,
        epoch,
        grid_id: 0x1234_5678_9abc + u64::from(epoch),
        step: (epoch % 2 == 0).then_some(u64::from(epoch) << 33),
    });
    l
}

fn sync(i: u64) -> ClockSync {
    ClockSync {
        host_before_ns: 1_700_000_000_000_000_000 + i * 1_000_000,
        gpu_ns: 1_700_000_000_000_095_000 + i * 1_000_000,
        host_after_ns: 1_700_000_000_000_002_800 + i * 1_000_000,
        boottime_ns: 5_000_000_000 + i,
    }
}

fn step(i: u64) -> HostStep {
    HostStep {
        name: "decode".into(),
        index: i,
        begin_ns: 1_700_000_000_000_000_000 + i * 10,
        end_ns: 1_700_000_000_000_000_009 + i * 10,
    }
}

fn site(launches: u64) -> SiteRecord {
    SiteRecord {
        site: 1,
        kernel: "step_kernel".into(),
        launches,
        kept: launches / 2,
        dropped: 1,
        when_full: WhenFull::DropNew,
    }
}

/// A capture with everything version 3 holds.
fn full_capture() -> Capture {
    let mut device = sample_capture().device;
    device.ordinal = Some(2);
    device.uuid = Some(*b"fedcba9876543210");
    Capture {
        device,
        regions: sample_capture().regions,
        launches: vec![site_launch(0, 3), site_launch(1, 7), {
            let mut l = site_launch(2, 9);
            l.origin = None;
            l.kernel.clear();
            l
        }],
        clock_syncs: vec![sync(0), sync(1)],
        steps: vec![step(0), step(1)],
        sites: vec![
            site(12),
            SiteRecord {
                site: 4,
                when_full: WhenFull::KeepNewest,
                ..site(3)
            },
        ],
        stalls: vec![stall_samples(1)],
        stream_end: None,
    }
}

/// PC samples of `launch`: two instructions, one placed in region 1.
fn stall_samples(launch: u32) -> StallSamples {
    StallSamples {
        launch,
        kernel: "gemm".into(),
        period_log2: 9,
        reasons: vec!["wait".into(), "barrier".into()],
        total_samples: 12,
        pcs: vec![
            PcSample {
                function: "gemm_kernel".into(),
                offset: 0x40,
                counts: vec![(0, 7), (1, 2)],
                regions: vec![1],
                kind: PcKind::User,
                file: Some("/k/gemm.cu".into()),
                line: 12,
                opcode: "HMMA".into(),
                barrier_regions: vec![1],
                barrier_kind: PcKind::User,
            },
            PcSample {
                function: "gemm_kernel".into(),
                offset: 0x80,
                counts: vec![(1, 3)],
                regions: vec![],
                kind: PcKind::Unknown,
                file: None,
                line: 0,
                opcode: String::new(),
                barrier_regions: vec![],
                barrier_kind: PcKind::Unknown,
            },
        ],
        ..Default::default()
    }
}

fn bytes_of(c: &Capture) -> Vec<u8> {
    let mut b = Vec::new();
    c.write_to(&mut b).unwrap();
    b
}

/// The byte where the records of `b` (a version 3 file) start.
fn records_at(b: &[u8]) -> usize {
    let name = u32::from_le_bytes(b[32..36].try_into().unwrap()) as usize;
    let mut at = 36 + name;
    let regions = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    at += 4;
    for _ in 0..regions {
        at += 4 + u16::from_le_bytes(b[at + 2..at + 4].try_into().unwrap()) as usize;
    }
    at + 24
}

/// A record of `kind` with `payload`.
fn record(kind: u32, payload: &[u8]) -> Vec<u8> {
    let mut r = record_header(kind, 0, payload.len() as u64).to_vec();
    r.extend_from_slice(payload);
    r
}

#[test]
fn version_3_round_trips_origins_steps_sites_and_syncs() {
    let cap = full_capture();
    let b = bytes_of(&cap);
    assert_eq!(u16::from_le_bytes([b[8], b[9]]), 3);
    assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 0);
    let back = Capture::from_bytes(&b).unwrap();
    assert_eq!(back.stream_end, Some(StreamEnd::Closed));
    assert_eq!(
        back,
        Capture {
            stream_end: Some(StreamEnd::Closed),
            ..cap.clone()
        }
    );
    // Written again, byte for byte the same.
    assert_eq!(bytes_of(&back), b);
    // The sample (layout version 1 launches) round trips too.
    let sample = sample_capture();
    let back = Capture::from_bytes(&bytes_of(&sample)).unwrap();
    assert_eq!(back.launches, sample.launches);
    assert_eq!(back.stream_end, Some(StreamEnd::Closed));
}

#[test]
fn the_stream_reads_records_in_the_order_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.ktrace");
    let cap = full_capture();
    let mut w = CaptureWriter::create(&path, &cap.device, &cap.regions).unwrap();
    w.clock_sync(&sync(0)).unwrap();
    w.launch(&cap.launches[0]).unwrap();
    w.step(&step(0)).unwrap();
    w.site(&site(1)).unwrap();
    w.launch(&cap.launches[1]).unwrap();
    w.site(&site(2)).unwrap();
    w.stall_samples(&stall_samples(1)).unwrap();
    assert_eq!(w.launches(), 2);
    let bytes = w.bytes();
    w.finish().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes + 32);
    let mut s = CaptureStream::open(&path).unwrap();
    assert_eq!(s.head().format_version, 3);
    assert_eq!(s.head().layout_version, LAYOUT_VERSION);
    assert_eq!(s.head().device, cap.device);
    assert_eq!(s.head().regions, cap.regions);
    let mut got = Vec::new();
    while let Some(r) = s.next_record().unwrap() {
        got.push(r);
    }
    assert_eq!(
        got,
        vec![
            Record::ClockSync(sync(0)),
            Record::Launch(cap.launches[0].clone()),
            Record::Step(step(0)),
            Record::Site(site(1)),
            Record::Launch(cap.launches[1].clone()),
            Record::Site(site(2)),
            Record::Stalls(stall_samples(1)),
            Record::End,
        ]
    );
    assert_eq!(s.end(), Some(StreamEnd::Closed));
    assert!(s.next_record().unwrap().is_none());
    // Read whole, the later site record replaces the earlier.
    let whole = Capture::read(&path).unwrap();
    assert_eq!(whole.sites, vec![site(2)]);
    assert_eq!(whole.stalls, vec![stall_samples(1)]);
    assert_eq!(whole.launches.len(), 2);
}

#[test]
fn a_streamed_file_cut_at_every_byte_reads_its_complete_records() {
    let cap = full_capture();
    let mut w = CaptureWriter::new(Vec::new(), &cap.device, &cap.regions).unwrap();
    // After each record: the bytes written and the launches complete.
    let mut marks = vec![(w.bytes(), 0usize)];
    let mut mark = |w: &CaptureWriter<Vec<u8>>, n| marks.push((w.bytes(), n));
    w.clock_sync(&sync(0)).unwrap();
    mark(&w, 0);
    w.launch(&cap.launches[0]).unwrap();
    mark(&w, 1);
    w.step(&step(0)).unwrap();
    mark(&w, 1);
    w.launch(&cap.launches[1]).unwrap();
    mark(&w, 2);
    w.site(&site(5)).unwrap();
    mark(&w, 2);
    w.flush().unwrap();
    let b = w.finish().unwrap();
    let head = marks[0].0 as usize;
    assert_eq!(head, records_at(&b));
    for len in head..b.len() {
        let c = Capture::from_bytes(&b[..len]).unwrap_or_else(|e| panic!("length {len}: {e}"));
        let &(offset, launches) = marks.iter().rev().find(|(m, _)| *m <= len as u64).unwrap();
        assert_eq!(
            c.stream_end,
            Some(StreamEnd::Cut {
                offset,
                left: len as u64 - offset
            }),
            "length {len}"
        );
        assert_eq!(c.launches, cap.launches[..launches], "length {len}");
        assert_eq!(c.clock_syncs.len(), usize::from(offset > marks[0].0));
    }
    let whole = Capture::from_bytes(&b).unwrap();
    assert_eq!(whole.stream_end, Some(StreamEnd::Closed));
    assert_eq!(whole.sites, vec![site(5)]);
    // Cut inside the head, the file is an error, as before.
    for len in 0..head {
        assert!(Capture::from_bytes(&b[..len]).is_err(), "length {len}");
    }
}

#[test]
fn a_file_whose_writer_was_dropped_unfinished_reads_as_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.ktrace");
    let cap = full_capture();
    let mut w = CaptureWriter::create(&path, &cap.device, &cap.regions).unwrap();
    w.launch(&cap.launches[0]).unwrap();
    w.flush().unwrap();
    let at = w.bytes();
    // As if the program were killed: the writer is never finished.
    std::mem::forget(w);
    let back = Capture::read(&path).unwrap();
    assert_eq!(back.launches, cap.launches[..1]);
    assert_eq!(
        back.stream_end,
        Some(StreamEnd::Cut {
            offset: at,
            left: 0
        })
    );
}

#[test]
fn unknown_record_kinds_are_skipped() {
    let cap = full_capture();
    let mut b = bytes_of(&cap);
    let at = records_at(&b);
    // An unknown record before the first, counted by the end record.
    let extra = record(77, b"a record from a newer ktrace");
    b.splice(at..at, extra);
    let n = b.len();
    let records = u64::from_le_bytes(b[n - 8..].try_into().unwrap());
    b[n - 8..].copy_from_slice(&(records + 1).to_le_bytes());
    let back = Capture::from_bytes(&b).unwrap();
    assert_eq!(back.launches, cap.launches);
    assert_eq!(back.steps, cap.steps);
    assert_eq!(back.stream_end, Some(StreamEnd::Closed));
    // Not counted, the end record disagrees with the file.
    b[n - 8..].copy_from_slice(&records.to_le_bytes());
    let e = Capture::from_bytes(&b).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
}

#[test]
fn bytes_after_the_end_record_are_corrupt() {
    let mut b = bytes_of(&full_capture());
    b.extend_from_slice(&record(KIND_STEP, &[0; 28]));
    let e = Capture::from_bytes(&b).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    assert!(e.to_string().contains("after the end record"), "{e}");
    let mut b = bytes_of(&full_capture());
    b.push(0);
    assert!(matches!(Capture::from_bytes(&b), Err(Error::Corrupt(_))));
}

#[test]
fn a_corrupt_complete_record_is_an_error() {
    let cap = Capture {
        launches: Vec::new(),
        ..full_capture()
    };
    let b = bytes_of(&cap);
    let at = records_at(&b);
    // The first record is a clock sync: a zero GPU reading.
    let mut bad = b.clone();
    bad[at + 16 + 8..at + 16 + 16].fill(0);
    let e = Capture::from_bytes(&bad).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    // A payload longer than its fields, and one shorter.
    for len in [40u64, 24] {
        let mut bad = b[..at].to_vec();
        bad.extend_from_slice(&record_header(KIND_CLOCK_SYNC, 0, len));
        bad.extend_from_slice(&b[at + 16..at + 48]);
        bad.resize(at + 16 + len as usize, 0);
        let e = Capture::from_bytes(&bad).unwrap_err();
        assert!(matches!(e, Error::Corrupt(_)), "length {len}: {e}");
    }
    // A step whose name runs past its record.
    let mut bad = b[..at].to_vec();
    let mut p = vec![0u8; 24];
    p.extend_from_slice(&100u32.to_le_bytes());
    p.extend_from_slice(b"short");
    bad.extend_from_slice(&record(KIND_STEP, &p));
    assert!(matches!(Capture::from_bytes(&bad), Err(Error::Corrupt(_))));
    // A launch count in a version 3 header.
    let mut bad = b.clone();
    bad[12] = 1;
    assert!(matches!(Capture::from_bytes(&bad), Err(Error::Corrupt(_))));
}

#[test]
fn a_launch_record_whose_lengths_lie_is_refused_before_allocating() {
    let cap = Capture {
        clock_syncs: Vec::new(),
        ..full_capture()
    };
    let b = bytes_of(&cap);
    let launch = records_at(&b) + 16;
    // A raw length that disagrees with the shape; a stored length past the
    // record; a kernel name past it; an origin flag of 2.
    for (off, v) in [(48, u64::MAX), (56, 1 << 40), (80, 4000), (96, 2)] {
        let mut bad = b.clone();
        let n = if off == 48 || off == 56 { 8 } else { 4 };
        bad[launch + off..launch + off + n].copy_from_slice(&v.to_le_bytes()[..n]);
        let e = Capture::from_bytes(&bad).unwrap_err();
        assert!(matches!(e, Error::Corrupt(_)), "offset {off}: {e}");
    }
}

#[test]
fn the_writer_refuses_a_launch_of_another_layout_version() {
    let cap = full_capture();
    let mut w = CaptureWriter::new(Vec::new(), &cap.device, &cap.regions).unwrap();
    let before = w.bytes();
    let old = sample_capture().launches.remove(0);
    assert_eq!(old.layout_version, 1);
    let e = w.launch(&old).unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e}");
    assert_eq!((w.bytes(), w.launches()), (before, 0));
    // Nor does a capture write launches of two versions.
    let mut mixed = sample_capture();
    mixed.launches.push(cap.launches[0].clone());
    assert!(matches!(mixed.write_to(Vec::new()), Err(Error::Config(_))));
    // What the writer wrote still reads.
    w.launch(&cap.launches[0]).unwrap();
    let b = w.finish().unwrap();
    assert_eq!(Capture::from_bytes(&b).unwrap().launches, cap.launches[..1]);
}

#[test]
fn version_1_and_2_files_stream_their_syncs_then_their_launches() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let v2 = data.join("h200_two_gpus_gpu0.ktrace");
    if !v2.exists() {
        eprintln!("no tests/data beside this crate (packaged build); skipped");
        return;
    }
    for (file, format) in [("h200_two_gpus_gpu0.ktrace", 2), ("sample_v1.ktrace", 1)] {
        let path = data.join(file);
        let whole = Capture::read(&path).unwrap();
        assert_eq!(whole.stream_end, None);
        assert_eq!(
            whole,
            Capture::from_bytes(&std::fs::read(&path).unwrap()).unwrap()
        );
        let mut s = CaptureStream::open(&path).unwrap();
        assert_eq!(s.head().format_version, format);
        let mut syncs = Vec::new();
        let mut launches = Vec::new();
        while let Some(r) = s.next_record().unwrap() {
            match r {
                Record::ClockSync(c) => {
                    assert!(launches.is_empty(), "{file}: a sync after a launch");
                    syncs.push(c);
                }
                Record::Launch(l) => launches.push(l),
                r => panic!("{file}: {r:?}"),
            }
        }
        assert_eq!(s.end(), None);
        assert_eq!(
            (syncs, launches),
            (whole.clock_syncs.clone(), whole.launches.clone())
        );
        // Written again in version 3, the same capture.
        let again = Capture::from_bytes(&bytes_of(&whole)).unwrap();
        assert_eq!(
            again,
            Capture {
                stream_end: Some(StreamEnd::Closed),
                ..whole
            }
        );
    }
}
