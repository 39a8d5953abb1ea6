//! Build-script support for [ktrace], an intra-kernel trace profiler for
//! CUDA C++ kernels.
//!
//! ktrace-build scans your `.cu`/`.cuh` sources for trace markers
//! (`KTRACE_B("load")` …), interns every region name into one deterministic
//! table, generates a C++ header that maps names to ids at compile time and a
//! Rust file with the same table, and compiles every kernel file twice with
//! nvcc — traced and untraced — embedding both images in your binary.
//!
//! # Example
//!
//! `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! ktrace-runtime = "0.1"
//! cudarc = { version = "0.19", default-features = false, features = ["std", "driver", "dynamic-loading", "cuda-13000"] }
//!
//! [build-dependencies]
//! ktrace-build = "0.1"
//! ```
//!
//! `build.rs`:
//!
//! ```no_run
//! // build.rs
//! ktrace_build::Build::new()
//!     .kernel_dir("kernels") // every .cu here becomes a module
//!     .arch("sm_90a")
//!     .compile(); // on failure: one clear message, exit 1
//! ```
//!
//! `kernels/saxpy.cu`:
//!
//! ```cuda
//! #include <ktrace.cuh>
//! extern "C" __global__ void saxpy(float a, const float* x, float* y, int n, ktrace_arg trace) {
//!     KTRACE_OPEN(trace);
//!     KTRACE_B("body");
//!     int i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) y[i] = a * x[i] + y[i];
//!     KTRACE_E("body");
//! }
//! ```
//!
//! `src/main.rs`:
//!
//! ```ignore
//! ktrace_runtime::include_ktrace!(); // REGIONS and kernels::SAXPY
//! ```
//!
//! # Environment variables
//!
//! Each is read through one helper that prints `cargo:rerun-if-env-changed`,
//! except `PATH` (as in cc-rs: it changes between shells and would rerun the
//! build script each time).
//!
//! - `NVCC`: the nvcc binary. Otherwise `CUDA_HOME`, `CUDA_PATH`, `CUDA_ROOT`
//!   (`<root>/bin/nvcc`), then `PATH`, then `/usr/local/cuda/bin/nvcc`.
//! - `KTRACE_CUDA_ARCH`: comma-separated architectures (`sm_90a,sm_80`),
//!   replacing those set with [`Build::arch`].
//! - `KTRACE_NVCC_FLAGS`: extra nvcc flags, split on whitespace, after the
//!   builder's own.
//! - `OUT_DIR`, `NUM_JOBS`: set by Cargo.
//!
//! # Features
//!
//! - `launcher-bindings`: Rust declarations of C++ launcher headers through
//!   bindgen ([`Build::launcher_header`]); needs libclang at build time.
//!
//! [ktrace]: https://github.com/ktrace-rs/ktrace
#![deny(missing_docs)]

pub mod codegen;
pub mod env;
mod error;
mod launcher;
pub mod nvcc;
pub mod regions;
pub mod scan;
#[doc(hidden)]
pub mod test_support;

use std::path::{Path, PathBuf};

pub use error::Error;
pub use nvcc::{Arch, Variant};
pub use regions::{Region, RegionTable};

/// The device headers shipped with this crate: `(file name, contents)`.
/// They are written to `OUT_DIR/ktrace/include`, which is put on nvcc's
/// include path.
pub const DEVICE_HEADERS: &[(&str, &str)] = &[
    ("ktrace.cuh", include_str!("../include/ktrace.cuh")),
    (
        "ktrace_layout.h",
        include_str!("../include/ktrace_layout.h"),
    ),
    (
        "ktrace_launcher.h",
        include_str!("../include/ktrace_launcher.h"),
    ),
];

/// What a successful build produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// The region table.
    pub regions: RegionTable,
    /// Directory with `ktrace.cuh`, `ktrace_layout.h` and the generated
    /// `ktrace_regions.h`; add it to other C++ builds that use markers.
    pub include_dir: PathBuf,
    /// The generated Rust file (`OUT_DIR/ktrace.rs`).
    pub rust_file: PathBuf,
    /// Each module: name, traced image, untraced image.
    pub modules: Vec<(String, PathBuf, PathBuf)>,
    /// nvcc's messages per source and variant (warnings, `-Xptxas -v`).
    pub nvcc_messages: Vec<(PathBuf, Variant, String)>,
}

/// Configures and runs a ktrace build, in the style of `cc::Build`.
#[derive(Debug, Clone, Default)]
pub struct Build {
    kernel_dirs: Vec<PathBuf>,
    kernels: Vec<PathBuf>,
    scan_dirs: Vec<PathBuf>,
    archs: Vec<String>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<String>,
    nvcc: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    launchers: Vec<PathBuf>,
    launcher_headers: Vec<PathBuf>,
    lib_name: Option<String>,
    ptxas_verbose: bool,
    cargo_metadata: Option<bool>,
}

impl Build {
    /// A build with no sources, architecture `sm_90`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every `.cu` file under `dir` becomes a kernel module; `.cu` and `.cuh`
    /// files under it are scanned for markers.
    pub fn kernel_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.kernel_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// One `.cu` file that becomes a kernel module.
    pub fn kernel(&mut self, file: impl AsRef<Path>) -> &mut Self {
        self.kernels.push(file.as_ref().to_path_buf());
        self
    }

    /// A directory of shared headers to scan for markers (not compiled).
    pub fn scan_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.scan_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds a target architecture (`sm_90`, `sm_90a`, …). Without any,
    /// `sm_90`. `KTRACE_CUDA_ARCH` overrides the list.
    pub fn arch(&mut self, arch: &str) -> &mut Self {
        self.archs.push(arch.to_string());
        self
    }

    /// Adds an include directory for nvcc.
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a preprocessor macro for every compile.
    pub fn define(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        self.defines
            .push((name.to_string(), value.map(str::to_string)));
        self
    }

    /// Adds a raw nvcc flag.
    pub fn flag(&mut self, flag: &str) -> &mut Self {
        self.flags.push(flag.to_string());
        self
    }

    /// Uses this nvcc instead of searching for one.
    pub fn nvcc(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.nvcc = Some(path.as_ref().to_path_buf());
        self
    }

    /// Writes outputs here instead of `OUT_DIR` (for tests and tools).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A `.cu` file with C++ host launchers, compiled (traced and untraced)
    /// into a static library linked into the crate. It is scanned too and is
    /// not a kernel module. See `ktrace_launcher.h`.
    pub fn launcher(&mut self, file: impl AsRef<Path>) -> &mut Self {
        self.launchers.push(file.as_ref().to_path_buf());
        self
    }

    /// A C header declaring launchers with `KTRACE_LAUNCHER`; with the
    /// `launcher-bindings` feature, bindgen writes their Rust declarations
    /// to `OUT_DIR/ktrace_launchers.rs`.
    pub fn launcher_header(&mut self, header: impl AsRef<Path>) -> &mut Self {
        self.launcher_headers.push(header.as_ref().to_path_buf());
        self
    }

    /// Name of the launcher library (default `ktrace_launchers`).
    pub fn launcher_lib_name(&mut self, name: &str) -> &mut Self {
        self.lib_name = Some(name.to_string());
        self
    }

    /// Passes `-Xptxas -v` so [`Output::nvcc_messages`] holds the register
    /// and shared-memory report of every kernel.
    pub fn ptxas_verbose(&mut self, on: bool) -> &mut Self {
        self.ptxas_verbose = on;
        self
    }

    /// Whether to print `cargo:` lines (default: when run by Cargo, i.e.
    /// when no [`Build::out_dir`] is set).
    pub fn cargo_metadata(&mut self, on: bool) -> &mut Self {
        self.cargo_metadata = Some(on);
        self
    }

    /// Runs the build; on failure prints `ktrace: ` and the error (with
    /// its causes) and exits with status 1 (no panic, no backtrace).
    pub fn compile(&mut self) -> Output {
        match self.try_compile() {
            Ok(out) => out,
            Err(e) => {
                eprintln!("{}", error::report(&e));
                std::process::exit(1);
            }
        }
    }

    /// Runs the build, returning what went wrong instead of exiting.
    pub fn try_compile(&mut self) -> Result<Output, Error> {
        let cargo = self.cargo_metadata.unwrap_or(self.out_dir.is_none());
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => env::cargo("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| Error::Config("OUT_DIR is not set: call ktrace_build from a build script, or set Build::out_dir".into()))?,
        };
        let include_dir = out_dir.join("ktrace").join("include");
        let image_dir = out_dir.join("ktrace").join("kernels");
        for d in [&include_dir, &image_dir] {
            std::fs::create_dir_all(d).map_err(|e| io(format!("creating {}", d.display()), e))?;
        }
        if cargo {
            println!("cargo:rerun-if-changed=build.rs");
            let here = Path::new(env!("CARGO_MANIFEST_DIR"));
            for t in ["templates/ktrace_regions.h.hbs", "templates/ktrace.rs.hbs"] {
                println!("cargo:rerun-if-changed={}", here.join(t).display());
            }
            for (name, _) in DEVICE_HEADERS {
                println!(
                    "cargo:rerun-if-changed={}",
                    here.join("include").join(name).display()
                );
            }
        }

        // Sources: modules, launchers, scanned-only headers.
        let mut modules: Vec<PathBuf> = Vec::new();
        let mut scanned: Vec<PathBuf> = Vec::new();
        for dir in &self.kernel_dirs {
            if cargo {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
            let files = scan::find_sources(dir)
                .map_err(|e| io(format!("reading kernel directory {}", dir.display()), e))?;
            for f in files {
                let is_launcher = self.launchers.iter().any(|l| same_file(l, &f));
                if f.extension().is_some_and(|e| e == "cu") && !is_launcher {
                    modules.push(f.clone());
                }
                scanned.push(f);
            }
        }
        for f in &self.kernels {
            if !f.is_file() {
                return Err(Error::Config(format!(
                    "kernel source {} does not exist",
                    f.display()
                )));
            }
            modules.push(f.clone());
            scanned.push(f.clone());
        }
        for dir in &self.scan_dirs {
            if cargo {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
            scanned.extend(
                scan::find_sources(dir).map_err(|e| io(format!("reading {}", dir.display()), e))?,
            );
        }
        for f in self.launchers.iter().chain(&self.launcher_headers) {
            if !f.is_file() {
                return Err(Error::Config(format!(
                    "launcher file {} does not exist",
                    f.display()
                )));
            }
            scanned.push(f.clone());
        }
        scanned.sort();
        scanned.dedup();
        modules.sort();
        modules.dedup();

        // Scan and intern.
        let mut sources = Vec::new();
        let mut bad = Vec::new();
        for path in &scanned {
            if cargo {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            let text =
                std::fs::read(path).map_err(|e| io(format!("reading {}", path.display()), e))?;
            let text = String::from_utf8_lossy(&text);
            match scan::scan_source(path, &text) {
                Ok(markers) => sources.push(scan::SourceFile {
                    path: path.clone(),
                    markers,
                }),
                Err(errs) => bad.extend(errs),
            }
        }
        if !bad.is_empty() {
            return Err(Error::Markers(bad));
        }
        let table = RegionTable::from_sources(&sources).map_err(Error::Config)?;

        // Headers.
        for (name, text) in DEVICE_HEADERS {
            write_if_changed(&include_dir.join(name), text.as_bytes())?;
        }
        let file_names: Vec<String> = scanned.iter().map(|p| p.display().to_string()).collect();
        let header = codegen::regions_header(&table, &file_names).map_err(Error::Config)?;
        write_if_changed(
            &include_dir.join(codegen::REGIONS_HEADER_NAME),
            header.as_bytes(),
        )?;

        // Architectures and compiler.
        let arch_list: Vec<String> = match env::get_string("KTRACE_CUDA_ARCH") {
            Some(v) => v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            None if self.archs.is_empty() => vec![nvcc::DEFAULT_ARCH.to_string()],
            None => self.archs.clone(),
        };
        let archs = arch_list
            .iter()
            .map(|a| Arch::parse(a))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::Config)?;
        let mut flags = self.flags.clone();
        if let Some(extra) = env::get_string("KTRACE_NVCC_FLAGS") {
            flags.extend(extra.split_whitespace().map(str::to_string));
        }
        if self.ptxas_verbose {
            flags.push("-Xptxas".into());
            flags.push("-v".into());
        }
        let needs_nvcc = !modules.is_empty() || !self.launchers.is_empty();
        let nvcc_path = match (&self.nvcc, needs_nvcc) {
            (_, false) => None,
            (Some(p), _) => Some(p.clone()),
            (None, true) => {
                let search = nvcc::find_nvcc();
                Some(search.found.ok_or(Error::NvccNotFound {
                    tried: search.tried,
                })?)
            }
        };

        // Module names must be distinct constants.
        let mut entries = Vec::new();
        let mut jobs = Vec::new();
        let ext = if archs.len() == 1 { "cubin" } else { "fatbin" };
        for src in &modules {
            let stem = src
                .file_stem()
                .and_then(|s| s.to_str())
                .ok_or_else(|| Error::Config(format!("{} has no usable file name", src.display())))?
                .to_string();
            let const_name = codegen::const_name(&stem);
            if let Some(prev) = entries
                .iter()
                .find(|e: &&codegen::ModuleEntry| e.const_name == const_name)
            {
                return Err(Error::DuplicateModule {
                    name: const_name,
                    first: PathBuf::from(&prev.source),
                    second: src.clone(),
                });
            }
            let traced = image_dir.join(format!("{stem}.traced.{ext}"));
            let untraced = image_dir.join(format!("{stem}.untraced.{ext}"));
            let mut includes = vec![include_dir.clone()];
            includes.extend(self.includes.iter().cloned());
            for (variant, output) in [(Variant::Traced, &traced), (Variant::Untraced, &untraced)] {
                jobs.push(nvcc::NvccJob {
                    source: src.clone(),
                    output: output.with_extension(format!("{ext}.tmp")),
                    variant,
                    archs: archs.clone(),
                    includes: includes.clone(),
                    defines: self.defines.clone(),
                    flags: flags.clone(),
                });
            }
            entries.push(codegen::ModuleEntry {
                name: stem,
                const_name,
                source: src.display().to_string(),
                archs: archs.iter().map(Arch::sm).collect::<Vec<_>>().join(", "),
                traced_path: format!("{:?}", traced.display().to_string()),
                untraced_path: format!("{:?}", untraced.display().to_string()),
            });
        }

        let messages = match &nvcc_path {
            Some(nvcc) if !jobs.is_empty() => run_jobs(nvcc, &jobs)?,
            _ => Vec::new(),
        };
        for job in &jobs {
            let done = job.output.with_extension("");
            let bytes = std::fs::read(&job.output)
                .map_err(|e| io(format!("reading {}", job.output.display()), e))?;
            write_if_changed(&done, &bytes)?;
            let _ = std::fs::remove_file(&job.output);
        }

        let rust = codegen::rust_file(&table, &entries).map_err(Error::Config)?;
        let rust_file = out_dir.join(codegen::RUST_FILE_NAME);
        write_if_changed(&rust_file, rust.as_bytes())?;

        if let (Some(nvcc), false) = (&nvcc_path, self.launchers.is_empty()) {
            launcher::build(&launcher::LauncherBuild {
                nvcc,
                sources: &self.launchers,
                headers: &self.launcher_headers,
                include_dir: &include_dir,
                includes: &self.includes,
                archs: &archs,
                defines: &self.defines,
                flags: &flags,
                out_dir: &out_dir,
                lib_name: self.lib_name.as_deref().unwrap_or("ktrace_launchers"),
                cargo,
            })?;
        }

        Ok(Output {
            regions: table,
            include_dir,
            rust_file,
            modules: entries
                .iter()
                .map(|e| {
                    let ext_path = |v: &str| image_dir.join(format!("{}.{v}.{ext}", e.name));
                    (e.name.clone(), ext_path("traced"), ext_path("untraced"))
                })
                .collect(),
            nvcc_messages: messages,
        })
    }
}

/// Compiles every `.cu` file under `dir` for the default architecture: the
/// one-call form of [`Build`]. Exits with a message on failure.
pub fn compile_kernels(dir: impl AsRef<Path>) -> Output {
    Build::new().kernel_dir(dir).compile()
}

fn io(what: String, error: std::io::Error) -> Error {
    Error::Io { what, error }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Writes `bytes` to `path` unless it already holds exactly them, so that
/// timestamps (and everything downstream) change only with the content.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::write(path, bytes).map_err(|e| io(format!("writing {}", path.display()), e))
}

/// Runs nvcc jobs in parallel (`NUM_JOBS` or the machine's parallelism).
fn run_jobs(nvcc: &Path, jobs: &[nvcc::NvccJob]) -> Result<Vec<(PathBuf, Variant, String)>, Error> {
    let workers = env::cargo("NUM_JOBS")
        .and_then(|v| v.into_string().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .clamp(1, jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        done.push((i, nvcc::run(nvcc, job)));
                    }
                    done
                })
            })
            .collect();
        let mut all: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all
    });
    let mut messages = Vec::new();
    for (i, r) in results {
        let job = &jobs[i];
        match r {
            Ok(text) => messages.push((job.source.clone(), job.variant, text)),
            Err(failure) => {
                return Err(Error::Compile {
                    source: job.source.clone(),
                    variant: job.variant,
                    failure,
                })
            }
        }
    }
    Ok(messages)
}
