//! A missing nvcc is a clear error listing where ktrace looked. Its own test
//! binary, because it changes the process environment.

#[test]
fn missing_nvcc_lists_where_it_looked() {
    if std::path::Path::new("/usr/local/cuda/bin/nvcc").exists() {
        eprintln!("skipped: /usr/local/cuda/bin/nvcc exists on this machine");
        return;
    }
    for v in ["NVCC", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        std::env::remove_var(v);
    }
    std::env::set_var("PATH", "/nonexistent");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let err = ktrace_build::Build::new()
        .kernel_dir(tmp.path())
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("nvcc, the CUDA compiler, was not found."),
        "{text}"
    );
    for needle in [
        "NVCC: not set",
        "CUDA_HOME: not set",
        "CUDA_PATH: not set",
        "CUDA_ROOT: not set",
        "PATH: no nvcc",
        "default: /usr/local/cuda/bin/nvcc",
        "Set NVCC",
        "pip",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}
