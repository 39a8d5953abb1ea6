//! Finding nvcc with nothing set: a PyPI toolkit in the site-packages of
//! the Python on `PATH` is found, and with none a clear error lists where
//! ktrace looked and how to install one. Its own test binary, because it
//! changes the process environment (one test, so the steps never overlap).

use std::path::Path;

fn clear_cuda_variables() {
    for v in ["NVCC", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        std::env::remove_var(v);
    }
    // The repository's own toolkit, when scripts/setup-cuda.sh installed it,
    // is searched last: point that search at an empty folder.
    std::env::set_var("KTRACE_SETUP_CUDA_DIR", "/nonexistent/.cuda");
}

#[test]
fn nvcc_is_found_in_site_packages_or_named_with_its_install_command() {
    if Path::new("/usr/local/cuda/bin/nvcc").exists() {
        eprintln!("skipped: /usr/local/cuda/bin/nvcc exists on this machine");
        return;
    }
    clear_cuda_variables();
    missing_nvcc_lists_where_it_looked();
    #[cfg(unix)]
    pypi_toolkit_is_found_through_python();
}

fn missing_nvcc_lists_where_it_looked() {
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
        "PyPI: no python3 or python on PATH",
        "ktrace's scripts/setup-cuda.sh: /nonexistent/.cuda/13.0/nvidia/cu13/bin/nvcc",
        "Set NVCC",
        "python3 -m pip install --target ~/cuda13 \"nvidia-cuda-nvcc==13.0.*\" \
         \"nvidia-cuda-crt==13.0.*\" \"nvidia-nvvm==13.0.*\" \"nvidia-cuda-runtime==13.0.*\" \
         \"nvidia-cuda-cccl==13.0.*\"\n  export CUDA_HOME=~/cuda13/nvidia/cu13\n",
        "Installed without --target",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

/// Writes an executable script.
#[cfg(unix)]
fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `python3` on `PATH` that names three site-packages directories, the
/// second with `nvidia/cu13/bin/nvcc`; then one that fails.
#[cfg(unix)]
fn pypi_toolkit_is_found_through_python() {
    let tmp = tempfile::tempdir().unwrap();
    let (bin, empty, sp) = (
        tmp.path().join("bin"),
        tmp.path().join("empty"),
        tmp.path().join("sp"),
    );
    let nvcc = sp.join("nvidia/cu13/bin/nvcc");
    std::fs::create_dir_all(nvcc.parent().unwrap()).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(&nvcc, "").unwrap();
    let python = bin.join("python3");
    let (e, s) = (empty.display(), sp.display());
    script(
        &python,
        &format!("#!/bin/sh\nprintf '%s\\n' '{e}' '{s}' '{e}'\n"),
    );
    std::env::set_var("PATH", &bin);
    let search = ktrace_build::nvcc::find_nvcc();
    assert_eq!(
        search.found.as_deref(),
        Some(nvcc.as_path()),
        "{:?}",
        search.tried
    );
    let what = format!("PyPI ({} site-packages): ", python.display());
    let tried: Vec<&String> = search
        .tried
        .iter()
        .filter(|t| t.starts_with(&what))
        .collect();
    assert_eq!(tried.len(), 2, "each directory once: {:?}", search.tried);
    assert!(tried[1].ends_with("sp/nvidia/cu13/bin/nvcc"), "{tried:?}");

    script(&python, "#!/bin/sh\nexit 3\n");
    let search = ktrace_build::nvcc::find_nvcc();
    assert_eq!(search.found, None);
    let pypi = &search.tried[search.tried.len() - 2];
    assert!(
        pypi.contains("did not list its site-packages: exit status: 3"),
        "{pypi}"
    );
    let last = search.tried.last().unwrap();
    assert!(
        last.starts_with("ktrace's scripts/setup-cuda.sh: "),
        "{last}"
    );
}
