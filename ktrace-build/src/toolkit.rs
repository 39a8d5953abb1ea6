//! Finding nvcc: the variables, `PATH`, the default install and a toolkit
//! installed from PyPI ([`crate::pypi`]), in that order, noting every place
//! looked (see "Finding nvcc" in the crate docs).

use std::path::{Path, PathBuf};

use crate::env;
use crate::executable::{exe, on_path};
use crate::pypi;

/// Where nvcc was looked for, in order, and what was found.
#[derive(Debug, Clone)]
pub struct NvccSearch {
    /// Each place tried, as `what: path`.
    pub tried: Vec<String>,
    /// The first that exists.
    pub found: Option<PathBuf>,
}

/// Looks for nvcc: `NVCC`, then `CUDA_HOME`, `CUDA_PATH`, `CUDA_ROOT`
/// (`<dir>/bin/nvcc`), then `PATH`, then `/usr/local/cuda/bin/nvcc`, then,
/// when none of those has one, a toolkit installed from PyPI into the
/// site-packages of the Python on `PATH`, then the one the ktrace
/// repository's `scripts/setup-cuda.sh` installs into its `.cuda/` beside
/// this crate (see "Finding nvcc" in the crate docs).
///
/// Each variable but `PATH` gets a `cargo:rerun-if-env-changed` line (see
/// [`env::path`]).
pub fn find_nvcc() -> NvccSearch {
    let mut search = NvccSearch {
        tried: Vec::new(),
        found: None,
    };
    match env::get("NVCC") {
        Some(v) => search.consider("NVCC", PathBuf::from(v)),
        None => search.tried.push("NVCC: not set".into()),
    }
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        match env::get(var) {
            Some(v) => search.consider(var, PathBuf::from(v).join("bin").join(exe("nvcc"))),
            None => search.tried.push(format!("{var}: not set")),
        }
    }
    let path = env::path();
    match on_path(path.as_deref(), "nvcc") {
        Some(p) => search.consider("PATH", p),
        None if path.is_some() => search
            .tried
            .push("PATH: no nvcc in any of its directories".into()),
        None => search.tried.push("PATH: not set".into()),
    }
    search.consider(
        "default",
        PathBuf::from("/usr/local/cuda/bin").join(exe("nvcc")),
    );
    if search.found.is_none() {
        match pypi::nvcc_candidates(path.as_deref()) {
            Ok((what, candidates)) => {
                for nvcc in candidates {
                    search.consider(&what, nvcc);
                }
            }
            Err(note) => search.tried.push(note),
        }
    }
    if search.found.is_none() {
        search.consider("ktrace's scripts/setup-cuda.sh", setup_cuda_nvcc());
    }
    search
}

/// Where the ktrace repository's `scripts/setup-cuda.sh` puts nvcc: under
/// `KTRACE_SETUP_CUDA_DIR`, by default the repository's `.cuda/` beside
/// this crate's folder, in the PyPI layout (nvcc finds its compilers and
/// headers from its own path, no variable needed).
fn setup_cuda_nvcc() -> PathBuf {
    // The script installs the PyPI packages with `pip --target .cuda/13.0`.
    pypi::nvcc_in(&setup_cuda_dir().join("13.0"))
}

/// `KTRACE_SETUP_CUDA_DIR`, by default the repository's `.cuda/`.
fn setup_cuda_dir() -> PathBuf {
    env::get("KTRACE_SETUP_CUDA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cuda"))
}

/// Where `scripts/setup-cuda.sh` puts the tools it installs beside nvcc
/// (`nvdisasm`, `cuobjdump`): `.cuda/tools`, in the PyPI layout.
pub(crate) fn setup_cuda_tool(name: &str) -> PathBuf {
    setup_cuda_dir()
        .join("tools/nvidia/cu13/bin")
        .join(crate::executable::exe(name))
}

impl NvccSearch {
    /// Notes `path` as tried, and takes it if it is the first that exists.
    fn consider(&mut self, what: &str, path: PathBuf) {
        self.tried.push(format!("{what}: {}", path.display()));
        if self.found.is_none() && path.is_file() {
            self.found = Some(path);
        }
    }
}

/// The CUDA toolkit root of an nvcc binary (`<root>/bin/nvcc`).
pub fn toolkit_root(nvcc: &Path) -> Option<PathBuf> {
    nvcc.parent()?.parent().map(Path::to_path_buf)
}
