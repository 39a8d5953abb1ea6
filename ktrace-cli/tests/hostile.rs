//! Hostile captures through the command line, under a memory limit: a
//! clear error and exit 1, never an abort (134) or a panic.

use std::process::Command;

/// Runs `ktrace ARGS` with its address space limited to 4 GiB.
fn limited(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_ktrace"))
        .args(args)
        .output()
        .expect("sh runs")
}

#[test]
fn a_capture_claiming_512_gib_is_refused_with_exit_1() {
    let dir = std::env::temp_dir().join(format!("ktrace-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("claims_512_gib.ktrace");
    std::fs::write(&path, ktrace_runtime::synth::claims_512_gib_capture()).unwrap();
    let p = path.to_str().unwrap();
    let out_json = dir.join("out.json");
    for args in [
        vec!["summary", p],
        vec!["export", p, "-o", out_json.to_str().unwrap()],
        vec!["launches", p],
    ] {
        let out = limited(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("raw_len 549756076032"), "{args:?}: {err}");
        assert!(
            err.contains("too large for this machine"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("corrupt"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

use ktrace_runtime::format::capture::Capture;
use ktrace_runtime::format::layout::{EventKind, EVENT_VALUE, META_BYTES};
use ktrace_runtime::synth::{sample_capture, SynthLaunch, SynthWarp};

/// `capture` as its file holds it.
fn bytes_of(capture: &Capture) -> Vec<u8> {
    let mut b = Vec::new();
    capture.write_to(&mut b).unwrap();
    b
}

/// A capture of one synthetic launch of layout version 3, with `edit`
/// applied to its raw buffer.
fn one_launch(l: SynthLaunch, edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut l = l.layout(3);
    edit(&mut l.raw);
    let mut cap = sample_capture();
    cap.launches = vec![l.into_capture()];
    bytes_of(&cap)
}

/// The hostile inputs of each kind the reader has met: what `ktrace
/// summary` and `ktrace export` must say (`Err`: exit 1 with this in the
/// error; `Ok`: exit 0 with this in the output, or `!` and a text that must
/// not be there).
fn hostile_cases() -> Vec<(&'static str, Vec<u8>, Result<&'static str, &'static str>)> {
    let sample = bytes_of(&sample_capture());
    let with = |at: usize, v: &[u8]| {
        let mut b = sample.clone();
        b[at..at + v.len()].copy_from_slice(v);
        b
    };
    let v2 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/h200_gemm2048_v2.ktrace"
    ))
    .expect("tests/data/h200_gemm2048_v2.ktrace");
    let mut cut_v2 = v2.clone();
    let raw_len = Capture::from_bytes(&v2).unwrap().launches[0].raw.len() as u64;
    let at = v2
        .windows(8)
        .rposition(|w| w == raw_len.to_le_bytes())
        .unwrap();
    let stored = u64::from_le_bytes(v2[at + 8..at + 16].try_into().unwrap());
    cut_v2[at + 8..at + 16].copy_from_slice(&(stored - 64).to_le_bytes());
    cut_v2.truncate(v2.len() - 64);
    let unknown = one_launch(
        SynthLaunch::all_traced(1, 32, 32)
            .with(SynthWarp::new(0, 0).begin(100, 0).mark(200, 1).end(400, 0)),
        |raw| {
            let at = META_BYTES + 8;
            raw[at..at + 4].copy_from_slice(&3_000_000_000u32.to_le_bytes());
            raw[at + 6..at + 8].copy_from_slice(&9u16.to_le_bytes());
        },
    );
    let stray = one_launch(
        SynthLaunch::all_traced(1, 32, 32).with(
            SynthWarp::new(0, 0)
                .event_value(100, 0, EventKind::Begin, 7)
                .mark(200, 1)
                .end(300, 0),
        ),
        |raw| {
            let m = META_BYTES + 16;
            raw[m + 6..m + 8].copy_from_slice(&EVENT_VALUE.to_le_bytes());
        },
    );
    vec![
        (
            "claims 512 GiB",
            ktrace_runtime::synth::claims_512_gib_capture(),
            Err("raw_len 549756076032"),
        ),
        (
            "launch count all ones",
            with(12, &u32::MAX.to_le_bytes()),
            Err("launch"),
        ),
        (
            "device name of 4 GiB",
            with(32, &u32::MAX.to_le_bytes()),
            Err("device name"),
        ),
        (
            "version 2, slots past the end",
            cut_v2,
            Err("capture truncated"),
        ),
        (
            "version 2 cut in half",
            v2[..v2.len() / 2].to_vec(),
            Err("capture truncated"),
        ),
        ("unknown entry type", unknown, Ok("unknown type 9")),
        (
            "stray value",
            stray,
            Ok("after an event that had its value already"),
        ),
    ]
}

#[test]
fn hostile_captures_of_each_kind_are_an_error_or_a_diagnostic_never_an_abort() {
    let dir = std::env::temp_dir().join(format!("ktrace-hostile-kinds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (name, bytes, want)) in hostile_cases().into_iter().enumerate() {
        let path = dir.join(format!("case{i}.ktrace"));
        std::fs::write(&path, &bytes).unwrap();
        let p = path.to_str().unwrap();
        let out_json = dir.join(format!("case{i}.json"));
        for args in [
            vec!["summary", p],
            vec!["export", p, "-o", out_json.to_str().unwrap()],
        ] {
            let out = limited(&args);
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!text.contains("panicked"), "{name}, {args:?}: {text}");
            match want {
                Err(msg) => {
                    assert_eq!(out.status.code(), Some(1), "{name}, {args:?}: {text}");
                    assert!(text.contains(msg), "{name}, {args:?}: {text}");
                }
                Ok(msg) => {
                    assert_eq!(out.status.code(), Some(0), "{name}, {args:?}: {text}");
                    if args[0] == "summary" {
                        assert!(text.contains(msg), "{name}, {args:?}: {text}");
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
