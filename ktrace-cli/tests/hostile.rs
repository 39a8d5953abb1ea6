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
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
