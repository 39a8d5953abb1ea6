//! Outputs are written atomically, and a machine without a CUDA driver gets
//! a clear error rather than a panic.

use std::io::Write;

use ktrace_runtime::output::write_atomic;

#[test]
fn a_failed_write_leaves_the_previous_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    write_atomic(&path, |w| w.write_all(b"{\"complete\":true}")).unwrap();
    // A writer that fails half-way (a crash, a full disk): the old file
    // stays whole and no partial file is left beside it.
    let err = write_atomic::<()>(&path, |w| {
        w.write_all(b"{\"traceEvents\":[{\"ph\":\"X\"")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert!(err.to_string().contains("disk full"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"complete\":true}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["trace.json"], "temporary files left: {names:?}");
}

#[test]
fn a_panic_during_a_write_never_produces_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    let p = path.clone();
    let r = std::panic::catch_unwind(move || {
        let _ = write_atomic::<()>(&p, |w| {
            w.write_all(b"{\"traceEvents\":[")?;
            panic!("crash while writing");
        });
    });
    assert!(r.is_err());
    assert!(!path.exists(), "a half-written trace.json exists");
}

#[cfg(feature = "cuda")]
#[test]
fn no_driver_is_an_error_not_a_panic() {
    // SAFETY: only probes whether the library can be loaded.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let err = ktrace_runtime::open_device(0).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("the CUDA driver library could not be loaded"),
        "{text}"
    );
    assert!(text.contains("libcuda.so"), "{text}");
}
