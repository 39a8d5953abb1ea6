//! Finding a CUDA toolkit installed from PyPI.
//!
//! NVIDIA publishes the CUDA 13 compiler as wheels ([`PACKAGES`]) that all
//! install into one tree, `site-packages/nvidia/cu13/` (`bin/nvcc`,
//! `include/`, `nvvm/`, `lib/`). nvcc finds its headers and cicc relative to
//! itself (`bin/nvcc.profile`), so that path alone is enough, with no
//! `CUDA_HOME` and nothing on `PATH`. The CUDA 12 wheels hold no nvcc
//! (`nvidia-cuda-nvcc-cu12` 12.8 and 12.9 ship only `ptxas`), so only the
//! CUDA 13 layout is looked for.
//!
//! The site-packages directories come from the Python on `PATH`
//! (`python3`, else `python`): its `purelib`, its `site.getsitepackages()`
//! and its user site. Python is asked only when no other place has nvcc, and
//! is given a few seconds to answer. [`crate::toolkit::find_nvcc`] notes
//! each place this module names.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::executable::{exe, on_path};

/// The wheels that make a CUDA 13.0 toolkit for ktrace: nvcc and ptxas,
/// the device runtime headers (crt), cicc (nvvm), the runtime (headers and
/// `libcudart_static.a`, which the C++ launcher path links) and the
/// libcu++/CCCL headers (`<cuda/std/…>`, which CUTLASS includes).
/// scripts/setup-cuda.sh installs the same list.
pub const PACKAGES: &[&str] = &[
    "nvidia-cuda-nvcc==13.0.*",
    "nvidia-cuda-crt==13.0.*",
    "nvidia-nvvm==13.0.*",
    "nvidia-cuda-runtime==13.0.*",
    "nvidia-cuda-cccl==13.0.*",
];

/// Prints Python's site-packages directories, one a line.
const SITE_PACKAGES_SCRIPT: &str = "import site, sysconfig\n\
print(sysconfig.get_paths()['purelib'])\n\
for p in getattr(site, 'getsitepackages', list)(): print(p)\n\
print(site.getusersitepackages())\n";

/// How long Python may take to answer.
const PYTHON_TIMEOUT: Duration = Duration::from_secs(10);

/// Where nvcc would be in the site-packages of the Python on `path`: what
/// names those places (`PyPI (<python> site-packages)`) and each place, in
/// order; or, when Python cannot be asked, the note that says why.
pub(crate) fn nvcc_candidates(path: Option<&OsStr>) -> Result<(String, Vec<PathBuf>), String> {
    let Some(python) = on_path(path, "python3").or_else(|| on_path(path, "python")) else {
        return Err("PyPI: no python3 or python on PATH to ask for site-packages".into());
    };
    match site_packages(&python) {
        Ok(dirs) => Ok((
            format!("PyPI ({} site-packages)", python.display()),
            dirs.iter().map(|dir| nvcc_in(dir)).collect(),
        )),
        Err(e) => Err(format!(
            "PyPI: {} did not list its site-packages: {e}",
            python.display()
        )),
    }
}

/// nvcc in the site-packages directory `dir`: `nvidia/cu13/bin/nvcc`.
pub fn nvcc_in(dir: &Path) -> PathBuf {
    dir.join("nvidia")
        .join("cu13")
        .join("bin")
        .join(exe("nvcc"))
}

/// `python`'s site-packages directories, each once, in its order.
fn site_packages(python: &Path) -> Result<Vec<PathBuf>, String> {
    let mut child = Command::new(python)
        .args(["-c", SITE_PACKAGES_SCRIPT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if start.elapsed() > PYTHON_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer in {} s", PYTHON_TIMEOUT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        std::io::Read::read_to_string(&mut stdout, &mut out).map_err(|e| e.to_string())?;
    }
    if !status.success() {
        return Err(status.to_string());
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for line in out.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !dirs.iter().any(|d| d == Path::new(line)) {
            dirs.push(PathBuf::from(line));
        }
    }
    Ok(dirs)
}

/// The command that installs [`PACKAGES`] into `target` with pip.
pub fn install_command(target: &str) -> String {
    let quoted: Vec<String> = PACKAGES.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        "python3 -m pip install --target {target} {}",
        quoted.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_command_names_every_package() {
        let cmd = install_command("~/cuda13");
        assert!(cmd
            .starts_with("python3 -m pip install --target ~/cuda13 \"nvidia-cuda-nvcc==13.0.*\""));
        for p in PACKAGES {
            assert!(cmd.contains(&format!(" \"{p}\"")), "{cmd}");
        }
        assert_eq!(
            nvcc_in(Path::new("sp")),
            Path::new("sp/nvidia/cu13/bin").join(exe("nvcc"))
        );
    }

    /// scripts/setup-cuda.sh installs the packages the error message names
    /// (checked where the repository is at hand, not in a packaged crate).
    #[test]
    fn setup_script_installs_the_same_packages() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/setup-cuda.sh");
        let Ok(text) = std::fs::read_to_string(&script) else {
            eprintln!("skipped: {} not found", script.display());
            return;
        };
        for p in PACKAGES {
            assert!(
                text.contains(&format!("\"{p}\"")),
                "setup-cuda.sh lacks {p}"
            );
        }
        assert!(text.contains("nvidia/cu13/bin/nvcc"));
    }
}
