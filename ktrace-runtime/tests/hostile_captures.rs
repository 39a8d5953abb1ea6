//! Captures that lie or carry what this build does not know: each is a
//! clear error or a decoded launch with a diagnostic, never an abort, a
//! panic or a time that is seconds wrong.

use ktrace_runtime::decode::{decode, DecodeOptions};
use ktrace_runtime::format::buffer::LaunchBuffer;
use ktrace_runtime::format::layout::{EventKind, EVENT_VALUE, META_BYTES};
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};
use ktrace_runtime::{format::shape::LaunchShape, BlockSampling, WarpSampling};

fn one_warp(cap: u32) -> LaunchShape {
    LaunchShape::new(
        [1, 1, 1],
        [32, 1, 1],
        cap,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .unwrap()
}

/// An entry of a type no layout defines, between two events, with a clock
/// far ahead of the next event's: it takes no part in the warp's clock
/// chain, so the events after it keep their times.
#[test]
fn an_unknown_entry_does_not_move_the_events_after_it() {
    let mut l = SynthLaunch::new(one_warp(32)).with(
        SynthWarp::new(0, 0)
            .begin(100, 0)
            .mark(200, 1)
            .mark(300, 1)
            .end(400, 0)
            .flush_at(1000),
    );
    // Entry 1 (the first mark) becomes type 9 with a clock 3 G cycles on.
    let at = META_BYTES + 8;
    let clock = u32::from_le_bytes(l.raw[at..at + 4].try_into().unwrap());
    l.raw[at..at + 4].copy_from_slice(&clock.wrapping_add(3_000_000_000).to_le_bytes());
    l.raw[at + 6..at + 8].copy_from_slice(&9u16.to_le_bytes());
    let d = decode(
        LaunchBuffer::new(&l.raw, &l.shape, 1).unwrap(),
        &DecodeOptions::default(),
    );
    let w = &d.warps[0];
    // 2 GHz: a cycle is 500 ps.
    let t: Vec<(i64, EventKind)> = w.events.iter().map(|e| (e.t_ps, e.kind)).collect();
    assert_eq!(
        t,
        [
            (50_000, EventKind::Begin),
            (150_000, EventKind::Mark),
            (200_000, EventKind::End)
        ]
    );
    let kinds: Vec<&str> = d.diagnostics.items().iter().map(|d| d.kind()).collect();
    assert_eq!(kinds, ["unknown_event_type"]);
    let text = d.diagnostics.items()[0].to_string();
    assert!(text.contains("type 9"), "{text}");
    assert!(text.contains("no part in its times"), "{text}");
}

/// Resident memory of this process, in bytes (Linux), if known.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A 256 KiB capture whose launch header says its 4,096 empty slots hold
/// 2^24 entries each: a raw buffer of 512 GiB. Reading it must not abort:
/// either the allocator refuses (a clear error naming `raw_len`), or the
/// buffer is untouched zero pages and the memory used stays what the file
/// holds.
#[test]
fn a_header_that_claims_512_gib_is_an_error_or_costs_what_the_file_holds() {
    let bytes = ktrace_runtime::synth::claims_512_gib_capture();
    let raw_len: u64 = 549_756_076_032;
    let before = rss_bytes();
    match ktrace_runtime::Capture::from_bytes(&bytes) {
        Err(e) => {
            let text = e.to_string();
            eprintln!("refused: {text}");
            assert!(text.contains("raw_len 549756076032"), "{text}");
            // Valid per the format, only too large for this machine.
            assert!(
                matches!(e, ktrace_runtime::Error::TooLarge { bytes, .. } if bytes == raw_len),
                "{e:?}"
            );
            assert!(
                text.starts_with("capture too large for this machine"),
                "{text}"
            );
        }
        Ok(read) => {
            let l = &read.launches[0];
            assert_eq!(l.raw.len() as u64, raw_len);
            eprintln!("read as untouched zero pages");
            let d = decode(l.buffer().unwrap(), &DecodeOptions::default());
            assert!(d.warps.is_empty());
            if let (Some(b), Some(a)) = (before, rss_bytes()) {
                assert!(
                    a.saturating_sub(b) < 256 << 20,
                    "{} MiB more resident",
                    (a - b) >> 20
                );
            }
        }
    }
}

/// A second value after one event, and a value of another region than its
/// event's: the device writes neither, so the decoder says so
/// (`stray_value`) instead of dropping or attaching them silently.
#[test]
fn stray_values_are_reported() {
    let mut l = SynthLaunch::new(one_warp(32)).with(
        SynthWarp::new(0, 0)
            .event_value(100, 0, EventKind::Begin, 7)
            .mark(200, 1)
            .end(300, 0)
            .flush_at(1000),
    );
    let entry = |i: usize| META_BYTES + 8 * i;
    // Entry 1 is the begin's value: give it region 5. Entry 2, the mark,
    // becomes a second value after the begin.
    let (v, m) = (entry(1), entry(2));
    l.raw[v + 4..v + 6].copy_from_slice(&5u16.to_le_bytes());
    l.raw[m + 6..m + 8].copy_from_slice(&EVENT_VALUE.to_le_bytes());
    let d = decode(
        LaunchBuffer::new(&l.raw, &l.shape, 3).unwrap(),
        &DecodeOptions::default(),
    );
    let w = &d.warps[0];
    let events: Vec<(EventKind, Option<u32>)> =
        w.events.iter().map(|e| (e.kind, e.value)).collect();
    assert_eq!(
        events,
        [(EventKind::Begin, Some(7)), (EventKind::End, None)]
    );
    let stray: Vec<String> = d
        .diagnostics
        .items()
        .iter()
        .filter(|d| d.kind() == "stray_value")
        .map(|d| d.to_string())
        .collect();
    assert_eq!(stray.len(), 1, "{:?}", d.diagnostics);
    assert!(
        stray[0].contains("1 value entr(ies) after an event that had its value already"),
        "{}",
        stray[0]
    );
    assert!(
        stray[0].contains("1 value(s) attached to an event of another region"),
        "{}",
        stray[0]
    );
}
