//! Capture files: save, load, decode the same; bad files are errors, never
//! panics or huge allocations.

use std::path::PathBuf;

use ktrace_runtime::format::capture::{Capture, HostSpan, StreamEnd, FORMAT_VERSION, MAGIC};
use ktrace_runtime::synth::sample_capture;
use ktrace_runtime::timeline::ClockSync;
use ktrace_runtime::{decode::decode, decode::DecodeOptions, Error};

fn bytes_of(c: &Capture) -> Vec<u8> {
    let mut v = Vec::new();
    c.write_to(&mut v).unwrap();
    v
}

/// The fixture in the repository's `tests/data`: a capture in format
/// version 1 that every later version must keep reading.
fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/sample_v1.ktrace")
}

/// The sample capture with everything format version 2 adds: the device's
/// ordinal and UUID, clock syncs, kernel names and host spans.
fn sample_v2() -> Capture {
    let mut cap = sample_capture();
    cap.device.ordinal = Some(1);
    cap.device.uuid = Some(*b"0123456789abcdef");
    cap.clock_syncs = vec![
        ClockSync {
            host_before_ns: 1_700_000_000_000_000_000,
            gpu_ns: 1_700_000_000_000_095_000,
            host_after_ns: 1_700_000_000_000_002_800,
            boottime_ns: 5_000_000_000,
        },
        ClockSync {
            host_before_ns: 1_700_000_001_000_000_000,
            gpu_ns: 1_700_000_001_000_096_400,
            host_after_ns: 1_700_000_001_000_002_600,
            boottime_ns: 6_000_000_000,
        },
    ];
    for (i, l) in cap.launches.iter_mut().enumerate() {
        l.kernel = format!("kernel_{i}");
        l.host_span = Some(HostSpan {
            enqueue_ns: 1_700_000_000_100_000_000 + i as u64,
            complete_ns: 1_700_000_000_200_000_000 + i as u64,
        });
    }
    cap
}

#[test]
fn version_3_keeps_identity_syncs_kernels_and_host_spans_and_stores_only_used_entries() {
    let cap = sample_v2();
    let b = bytes_of(&cap);
    assert_eq!(u16::from_le_bytes([b[8], b[9]]), FORMAT_VERSION);
    let back = Capture::from_bytes(&b).unwrap();
    assert_eq!(
        back,
        Capture {
            stream_end: Some(StreamEnd::Closed),
            ..cap.clone()
        }
    );
    assert_eq!(back.launches[1].title(), "launch 1: kernel_1");
    assert_eq!(back.device.label(), "GPU 1: Synthetic GPU");
    // The same launches in version 1 (whole buffers) are larger: the rings
    // of 32 entries are mostly empty.
    let v1 = std::fs::metadata(fixture()).map(|m| m.len());
    if let Ok(v1) = v1 {
        assert!((b.len() as u64) < v1, "{} vs {v1}", b.len());
    }
    let stored: usize = cap.launches.iter().map(|l| l.stored_bytes() as usize).sum();
    let raw: usize = cap.launches.iter().map(|l| l.raw.len()).sum();
    assert!(stored < raw, "{stored} of {raw}");
    // A file whose declared stored length disagrees with its slots' metadata
    // is refused: make launch 0 claim 8 bytes more (past its record). The launch records come
    // last before the end record (32 bytes), each a 16-byte record header,
    // a 128-byte launch header, the kernel name and the buffer.
    let first_launch = b.len()
        - 32
        - cap
            .launches
            .iter()
            .map(|l| 16 + 128 + l.kernel.len() + l.stored_bytes() as usize)
            .sum::<usize>();
    let stored_at = first_launch + 16 + 56;
    let mut bad = b.clone();
    let declared = u64::from_le_bytes(bad[stored_at..stored_at + 8].try_into().unwrap());
    bad[stored_at..stored_at + 8].copy_from_slice(&(declared + 8).to_le_bytes());
    let e = Capture::from_bytes(&bad).unwrap_err().to_string();
    assert!(e.contains("launch record 0's buffer needs"), "{e}");
    // And with the record 8 bytes longer to match, the metadata disagrees.
    let record_len = first_launch + 8;
    let len = u64::from_le_bytes(bad[record_len..record_len + 8].try_into().unwrap());
    bad[record_len..record_len + 8].copy_from_slice(&(len + 8).to_le_bytes());
    let end = first_launch + 16 + len as usize;
    bad.splice(end..end, [0u8; 8]);
    let e = Capture::from_bytes(&bad).unwrap_err().to_string();
    assert!(e.contains("the record declares"), "{e}");
}

#[test]
fn version_2_files_still_read() {
    let path = fixture().with_file_name("h200_two_gpus_gpu0.ktrace");
    if !path.exists() {
        eprintln!("no tests/data beside this crate (packaged build); skipped");
        return;
    }
    let b = std::fs::read(&path).unwrap();
    assert_eq!(u16::from_le_bytes([b[8], b[9]]), 2);
    let cap = Capture::read(&path).unwrap();
    assert!(!cap.launches.is_empty() && !cap.clock_syncs.is_empty());
    assert_eq!(cap.stream_end, None);
    // Every truncation of a version 2 file is an error, as it always was.
    for len in (0..b.len()).step_by(997) {
        assert!(Capture::from_bytes(&b[..len]).is_err(), "length {len}");
    }
}

#[test]
fn save_load_decode_identical() {
    let cap = sample_capture();
    let dir = std::env::temp_dir().join(format!("ktrace-capture-{}", std::process::id()));
    let path = dir.join("sub/sample.ktrace");
    cap.save(&path).unwrap();
    let back = Capture::read(&path).unwrap();
    assert_eq!(back.stream_end, Some(StreamEnd::Closed));
    assert_eq!(
        back,
        Capture {
            stream_end: Some(StreamEnd::Closed),
            ..cap.clone()
        }
    );
    for (a, b) in cap.launches.iter().zip(&back.launches) {
        let opts = DecodeOptions::default();
        assert_eq!(
            decode(a.buffer().unwrap(), &opts),
            decode(b.buffer().unwrap(), &opts)
        );
    }
    assert_eq!(back.launch(1).unwrap().shape.launch, 1);
    assert!(matches!(
        back.launch(7),
        Err(Error::NoSuchLaunch { asked: 7, .. })
    ));
    // No temporary file left behind.
    let left: Vec<_> = std::fs::read_dir(dir.join("sub")).unwrap().collect();
    assert_eq!(left.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fixture_still_reads() {
    let cap = sample_capture();
    let path = fixture();
    #[allow(clippy::disallowed_methods)] // the test's own switch, not the crate's
    if std::env::var_os("KTRACE_BLESS").is_some_and(|v| v == "1") {
        cap.save(&path).unwrap();
    }
    if !path.parent().unwrap().exists() {
        eprintln!("no tests/data beside this crate (packaged build); skipped");
        return;
    }
    let back = Capture::read(&path)
        .unwrap_or_else(|e| panic!("{e}; run with KTRACE_BLESS=1 to create the fixture"));
    assert_eq!(back, cap);
}

#[test]
fn every_truncation_is_an_error_in_the_head_and_a_cut_after() {
    let cap = sample_capture();
    let b = bytes_of(&cap);
    // The head: header, device name, region table, device identity.
    let regions: usize = cap.regions.iter().map(|(_, n)| 4 + n.len()).sum();
    let head = 32 + 4 + cap.device.name.len() + 4 + regions + 24;
    for len in 0..b.len() {
        let got = Capture::from_bytes(&b[..len]);
        if len < head {
            let e = got.unwrap_err();
            let msg = e.to_string();
            assert!(
                matches!(e, Error::Truncated { .. } | Error::BadMagic { .. }),
                "length {len}: {msg}"
            );
        } else {
            let c = got.unwrap_or_else(|e| panic!("length {len}: {e}"));
            assert!(
                matches!(c.stream_end, Some(StreamEnd::Cut { offset, left }) if offset + left == len as u64),
                "length {len}: {:?}",
                c.stream_end
            );
        }
    }
}

#[test]
fn every_corrupted_byte_is_handled() {
    // Flip each header and launch-header byte in turn: an error or a capture,
    // never a panic. Raw buffer bytes are data, any value decodes.
    let b = bytes_of(&sample_capture());
    let header_end = 200.min(b.len());
    for i in 0..header_end {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut c = b.clone();
            c[i] ^= flip;
            if let Ok(cap) = Capture::from_bytes(&c) {
                for l in &cap.launches {
                    if let Ok(buffer) = l.buffer() {
                        let _ = decode(buffer, &DecodeOptions::default());
                    }
                }
            }
        }
    }
}

#[test]
fn bad_magic() {
    let e = Capture::from_bytes(b"{\"traceEvents\":[]}  padding padding").unwrap_err();
    assert!(matches!(e, Error::BadMagic { .. }));
    assert!(e.to_string().contains("not a ktrace capture"), "{e}");
}

#[test]
fn newer_version() {
    let mut b = bytes_of(&sample_capture());
    b[8..10].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = Capture::from_bytes(&b).unwrap_err();
    assert!(matches!(
        e,
        Error::NewerFormat { found, supported } if found == FORMAT_VERSION + 1 && supported == FORMAT_VERSION
    ));
    assert!(e.to_string().contains("upgrade ktrace"), "{e}");
}

#[test]
fn other_layout_version() {
    let mut b = bytes_of(&sample_capture());
    b[10..12].copy_from_slice(&9u16.to_le_bytes());
    assert!(matches!(
        Capture::from_bytes(&b),
        Err(Error::UnsupportedLayout { found: 9, .. })
    ));
}

/// A header that claims much more than the file holds.
fn lying(launches: u32, raw_len: u64, blocks_traced: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&MAGIC);
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    // launches, SMs, clock, flags, reserved, name length, region count
    for v in [launches, 132, 1_980_000, 0, 0, 0, 0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for v in [
        0u32,
        1 << 20,
        1,
        1,
        1024,
        1,
        1,
        24,
        u32::MAX,
        32,
        1,
        blocks_traced,
    ] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&raw_len.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes());
    b
}

#[test]
fn lying_lengths_are_refused_before_allocating() {
    // A launch whose buffer would be petabytes, in a file of 100 bytes.
    let slot = 64u64 + 8 * (1 << 24);
    let blocks = 1 << 20;
    let raw = slot * 32 * u64::from(blocks);
    let e = Capture::from_bytes(&lying(1, raw, blocks)).unwrap_err();
    assert!(matches!(e, Error::Truncated { .. }), "{e}");
    // A launch count the file cannot hold.
    let e = Capture::from_bytes(&lying(u32::MAX, raw, blocks)).unwrap_err();
    assert!(matches!(e, Error::Truncated { .. }), "{e}");
    // A raw length that disagrees with the shape.
    let e = Capture::from_bytes(&lying(1, 12, blocks)).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
}

#[test]
fn trailing_bytes_are_corrupt() {
    let mut b = bytes_of(&sample_capture());
    b.push(0);
    assert!(matches!(Capture::from_bytes(&b), Err(Error::Corrupt(_))));
}

#[test]
fn missing_file_names_the_path() {
    let e = Capture::read("/nonexistent/x.ktrace").unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.ktrace"), "{e}");
}

#[test]
fn a_capture_that_cannot_be_written_keeps_its_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out/x.ktrace");
    let mut cap = sample_capture();
    cap.launches[1].raw.pop();
    let e = cap.save(&path).unwrap_err();
    assert!(matches!(e, Error::BufferSize { .. }), "{e:?}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn messages_carry_their_cause_once_and_no_prefix() {
    let e = Capture::read("/nonexistent/x.ktrace").unwrap_err();
    let text = e.to_string();
    assert!(!text.starts_with("ktrace:"), "{text}");
    assert_eq!(text.matches("No such file").count(), 1, "{text}");
    // The cause is reachable for inspection; the message already ends with
    // it, so a reporter prints the message alone.
    let cause = std::error::Error::source(&e).expect("the io error");
    let io = cause.downcast_ref::<std::io::Error>().expect("an io error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(text.ends_with(&format!(": {io}")), "{text}");
}

#[test]
fn compact_slots_that_run_past_the_end_of_a_version_2_file_are_a_truncation() {
    // The committed format-2 capture, its last launch's stored length made
    // 64 bytes shorter and the file cut to match: the record's own length
    // fits, but its slots' metadata asks for bytes the file does not hold.
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/h200_gemm2048_v2.ktrace");
    let Ok(mut b) = std::fs::read(&path) else {
        eprintln!("no tests/data beside this crate (packaged build); skipped");
        return;
    };
    let cap = Capture::from_bytes(&b).unwrap();
    let raw_len = cap.launches.last().unwrap().raw.len() as u64;
    let at = b
        .windows(8)
        .rposition(|w| w == raw_len.to_le_bytes())
        .expect("the last launch's raw length");
    let stored = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap());
    assert!(stored < raw_len && stored < b.len() as u64, "{stored}");
    b[at + 8..at + 16].copy_from_slice(&(stored - 64).to_le_bytes());
    b.truncate(b.len() - 64);
    let e = Capture::from_bytes(&b).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::Truncated { ref what, needed, available, .. }
            if what.contains("slots") && needed > available),
        "{msg}"
    );
    assert!(msg.contains("at byte"), "{msg}");
}
