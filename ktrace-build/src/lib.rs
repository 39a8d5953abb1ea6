//! Build-script support for ktrace, an intra-kernel trace profiler for
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
//! - `NVCC`, `CUDA_HOME`, `CUDA_PATH`, `CUDA_ROOT`: where nvcc is; see
//!   [Finding nvcc](#finding-nvcc).
//! - `KTRACE_SETUP_CUDA_DIR`: the `.cuda` folder of `scripts/setup-cuda.sh`
//!   searched last for nvcc (see [Finding nvcc](#finding-nvcc)).
//! - `KTRACE_CUDA_ARCH`: comma-separated architectures (`sm_90a,sm_80`),
//!   replacing those set with [`Build::arch`].
//! - `KTRACE_NVCC_FLAGS`: extra nvcc flags, split on whitespace, after the
//!   builder's own.
//! - `NVCC_PREPEND_FLAGS`, `NVCC_APPEND_FLAGS`, `NVCC_CCBIN`: read by nvcc
//!   itself; ktrace-build reads them only to rebuild when they change.
//! - `OUT_DIR`, `NUM_JOBS`, `CARGO_MAKEFLAGS`: set by Cargo (see
//!   [Rebuilds](#rebuilds)).
//!
//! # Finding nvcc
//!
//! [`Build::nvcc`] if given, else the first that exists of:
//!
//! 1. `NVCC`, the binary itself;
//! 2. `$CUDA_HOME/bin/nvcc`, then `CUDA_PATH`, then `CUDA_ROOT`;
//! 3. `nvcc` in a directory of `PATH`;
//! 4. `/usr/local/cuda/bin/nvcc`;
//! 5. a CUDA 13 toolkit installed from PyPI: `nvidia/cu13/bin/nvcc` in the
//!    site-packages of the `python3` (else `python`) on `PATH` (its
//!    `purelib`, `site.getsitepackages()` and user site; Python is run only
//!    when steps 1–4 find nothing). nvcc finds its headers and cicc relative
//!    to itself, so no variable is needed;
//! 6. the toolkit the ktrace repository's `scripts/setup-cuda.sh` installs:
//!    `.cuda/13.0/nvidia/cu13/bin/nvcc` in the repository that holds this
//!    crate (`KTRACE_SETUP_CUDA_DIR` names another `.cuda`), so a crate
//!    beside a copy of the repository builds without sourcing
//!    `.cuda/env.sh` first.
//!
//! When none exists, the error lists every place looked and the command
//! that installs the toolkit from PyPI without root:
//!
//! ```text
//! python3 -m pip install --target ~/cuda13 "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-crt==13.0.*" \
//!     "nvidia-nvvm==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-cccl==13.0.*"
//! export CUDA_HOME=~/cuda13/nvidia/cu13
//! ```
//!
//! The launcher library is compiled with the same nvcc, and linked against
//! the `libcudart_static.a` under its toolkit root (`lib/` for the PyPI
//! toolkit, `lib64/` for a system one).
//!
//! # Rebuilds
//!
//! nvcc runs only for the images whose inputs changed. Beside each image in
//! `OUT_DIR/ktrace/kernels` a manifest records a digest of the nvcc command
//! line (flags, architectures, defines, include directories, the nvcc path,
//! the size and time of nvcc, ptxas and cicc, and nvcc's own variables) and
//! of the content of every file nvcc read: the source and each header it
//! included, as nvcc's `-MD` output lists them (toolkit headers and the
//! generated `ktrace_regions.h` among them). A job whose manifest matches
//! and whose image exists is skipped, its nvcc messages replayed from the
//! manifest; [`Output::jobs`] says which ran and why. Content, not time, is
//! compared: touching a file or checking it out again rebuilds nothing. Every
//! header read gets a `cargo:rerun-if-changed` line, so editing one outside
//! the scanned directories reruns the build script too.
//!
//! Any change to the region table (a marker added, renamed or removed, or a
//! scanned file added or removed, as the generated header counts them)
//! rebuilds every kernel that includes `ktrace.cuh`. A header newly created
//! earlier on the include path than the one a source used is not noticed
//! (as with Make and Ninja); `cargo clean` rebuilds everything.
//!
//! nvcc jobs run in parallel under Cargo's jobserver: with `cargo build -j N`
//! the kernels, rustc and other build scripts together run at most `N`
//! processes. Without a jobserver, at most `NUM_JOBS` (else the machine's
//! parallelism) run at once.
//!
//! # Instruction → region maps
//!
//! Every image is compiled with `-lineinfo`. After nvcc, the build runs
//! `nvdisasm -c -g -gi` on each cubin (nvdisasm beside nvcc, on `PATH`, or
//! in the repository's `.cuda/tools`) and writes `IMAGE.pcmap` beside it:
//! each instruction's offset, the regions whose markers' lines enclose one
//! of its source lines (its own or one it was inlined at), whether it is a
//! marker's own instruction, its line and opcode ([`pc_map`]). The
//! generated `ktrace.rs` embeds the maps (`KernelModule::traced_map`,
//! `untraced_map`) for stall attribution (`KTRACE_STALLS`). A map is made
//! again when its image is newer; without nvdisasm, or for a fatbin, the
//! map says why there is none and the build warns once.
//!
//! # Kernels compiled by another builder
//!
//! A crate whose kernels cudaforge, bindgen_cuda or a hand-written nvcc
//! call compiles keeps that builder: [`Build::generate`] writes the
//! headers and `ktrace.rs` without running nvcc and returns a
//! [`Generated`] with each variant's output directory and nvcc arguments.
//! Run the builder once per variant; each kernel source's `STEM.ptx` in
//! the two directories becomes the module `kernels::STEM`. The
//! repository's `examples/builders/` holds a crate for each builder.
//!
//! # Features
//!
//! - `launcher-bindings`: Rust declarations of C++ launcher headers through
//!   bindgen ([`Build::launcher_header`]); needs libclang at build time.
//!
//! `ARCHITECTURE.md` in the repository maps this crate's modules: the
//! scan, the pure plan and the thin layer that executes it.
#![deny(missing_docs)]

pub mod codegen;
pub mod cost;
mod depfile;
mod device_headers;
pub mod env;
mod error;
mod executable;
mod execute;
pub mod generate;
mod kernel_variant;
mod launcher;
mod manifest;
mod maps;
pub mod nvcc;
mod pairing;
mod parallel;
pub mod pc_map;
mod plan;
pub mod predicated;
mod pypi;
pub mod regions;
pub mod sass_cfg;
pub mod scan;
pub mod shared_memory;
pub mod spills;
#[doc(hidden)]
pub mod test_support;
mod toolkit;

pub use pairing::UnpairedRegion;

use std::path::{Path, PathBuf};

use nvcc::Toolchain;
use plan::Plan;
use scan::SourceFile;

pub use device_headers::DEVICE_HEADERS;
pub use error::Error;
pub use generate::Generated;
pub use kernel_variant::KernelVariant;
pub use manifest::Freshness;
pub use nvcc::{Arch, Variant};
pub use regions::{Region, RegionTable};

/// What a successful build produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// The region table.
    pub regions: RegionTable,
    /// Directory with `ktrace.cuh` (and its parts, in `ktrace/`),
    /// `ktrace_layout.h` and the generated `ktrace_regions.h`; add it to
    /// other C++ builds that use markers.
    pub include_dir: PathBuf,
    /// The generated Rust file (`OUT_DIR/ktrace.rs`).
    pub rust_file: PathBuf,
    /// Each module: name, traced image, untraced image. The kernel
    /// sources' modules, then the [`Build::variant`]s.
    pub modules: Vec<(String, PathBuf, PathBuf)>,
    /// nvcc's messages per source and variant (warnings, `-Xptxas -v`),
    /// from the run that built the image: replayed when it was up to date.
    /// In the order of [`Output::modules`], traced then untraced (two
    /// variants of one source name the same source).
    pub nvcc_messages: Vec<(PathBuf, Variant, String)>,
    /// Each kernel build, per source and variant: whether nvcc ran, and why,
    /// or the image was up to date (see "Rebuilds" in the crate docs). In
    /// the order of [`Output::nvcc_messages`].
    pub jobs: Vec<(PathBuf, Variant, Freshness)>,
    /// Kernels whose traced build starts the dynamic shared memory
    /// elsewhere, modulo 1,024 bytes, than the untraced build (a
    /// shared-memory recorder beside static shared memory of the kernel's
    /// own), with their module; run by Cargo, each is also a
    /// `cargo:warning`. Read from single-architecture builds (cubins) only.
    pub shared_shifts: Vec<(String, shared_memory::SharedShift)>,
    /// Functions whose traced build spills more bytes of registers to
    /// local memory than their untraced build (ptxas's `-v` report, which
    /// every build asks for), with their module; run by Cargo, each is also
    /// a `cargo:warning`. From the builds that ran ptxas (not PTX-only
    /// ones).
    pub spill_growth: Vec<(String, spills::SpillGrowth)>,
    /// Functions of a traced build in which ptxas predicated marker events
    /// inside a loop instead of branching over them (a warp that records
    /// nothing there issues them whole every iteration), with their module; run by Cargo, each is also a
    /// `cargo:warning`. Read from cubins with `nvdisasm` when their
    /// instruction → region maps are written; empty without it.
    pub predicated_events: Vec<(String, predicated::PredicatedEvents)>,
    /// The markers' instruction cost of each kernel of each traced build
    /// ([`cost`]: per marked loop, what a traced warp and a warp that
    /// records nothing add to it), with its module; also written beside
    /// the traced image (`.cost`). Run by Cargo, each is a line of the
    /// build's output (`cargo build -vv` shows it), and one
    /// `cargo:warning` names the kernels whose cost is large
    /// ([`cost::KernelCost::is_large`]). Read from cubins with `nvdisasm`;
    /// empty without it.
    pub costs: Vec<(String, cost::KernelCost)>,
    /// Regions whose markers can never pair: a name that the scanned
    /// sources begin and never end, or end and never begin
    /// (`KTRACE_B("compute") … KTRACE_E("body")`); run by Cargo, each is
    /// also a `cargo:warning`.
    pub unpaired_regions: Vec<UnpairedRegion>,
}

/// Configures and runs a ktrace build, in the style of `cc::Build`.
#[derive(Debug, Clone, Default)]
pub struct Build {
    kernel_dirs: Vec<PathBuf>,
    kernels: Vec<PathBuf>,
    variants: Vec<KernelVariant>,
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

    /// Builds `source` again as the module `name`, with the macros that
    /// [`KernelVariant::define`] adds to what this returns: another recorder
    /// for the same kernel, say, in place of a wrapper `.cu` file that
    /// defines them and includes the kernel.
    ///
    /// ```no_run
    /// // build.rs
    /// let mut build = ktrace_build::Build::new();
    /// build.kernel_dir("kernels").arch("sm_90a");
    /// // The module GEMM_NEWEST: kernels/gemm.cu with the newest-N recorder.
    /// build
    ///     .variant("gemm_newest", "kernels/gemm.cu")
    ///     .define("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST")
    ///     .define("KTRACE_SMEM_WARPS", "12");
    /// build.compile();
    /// ```
    ///
    /// `name` is the module's name as a file stem is for a kernel source:
    /// its constant is `name` in upper snake case, its images
    /// `name.traced.cubin` and `name.untraced.cubin`; no other module may
    /// have that constant. The source is scanned for markers; it need not be
    /// in a kernel directory, nor end in `.cu` (nvcc compiles any other as
    /// CUDA, `-x cu`). Variants come after the kernel sources' modules, in
    /// the order declared.
    pub fn variant(&mut self, name: &str, source: impl AsRef<Path>) -> &mut KernelVariant {
        let at = self.variants.len();
        self.variants
            .push(KernelVariant::new(name, source.as_ref()));
        &mut self.variants[at]
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

    /// Prints ptxas's register, spill and shared-memory report of every
    /// kernel ([`ptxas_report`]) as `cargo:warning` lines when run by
    /// Cargo, so `cargo build` shows them, and passes `-Xptxas -v` to the
    /// launchers' builds too. The kernels' builds always pass it (so
    /// [`Output::nvcc_messages`] holds the report either way, replayed for
    /// images that were up to date); for them this only prints it.
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
    pub fn compile(&self) -> Output {
        match self.try_compile() {
            Ok(out) => out,
            Err(e) => {
                eprintln!("{}", error::report(&e));
                std::process::exit(1);
            }
        }
    }

    /// Runs the build, returning what went wrong instead of exiting.
    ///
    /// The steps: find the sources and scan them, decide the whole build
    /// (a pure plan: region table, module names, output paths, nvcc jobs),
    /// find nvcc, then carry the plan out.
    pub fn try_compile(&self) -> Result<Output, Error> {
        let cargo = self.cargo_metadata.unwrap_or(self.out_dir.is_none());
        let out_dir = self.output_dir()?;
        if cargo {
            rerun_if_crate_files_change();
        }
        let sources = self.collect_sources(cargo)?;
        let plan = self.plan(&out_dir, &sources)?;
        let toolchain = self.toolchain(&plan)?;
        let spans = maps::spans(&sources.scanned, &plan.table);
        let mut out = execute::execute(plan, toolchain.as_ref(), &spans, cargo)?;
        execute::remove_stale_images(&out);
        for (module, traced, untraced) in &out.modules {
            // A module whose images cannot be read was just written by
            // nvcc: its build says what went wrong, not this check.
            if let Ok(Some(shifts)) = shared_memory::image_shared_shifts(traced, untraced) {
                out.shared_shifts
                    .extend(shifts.into_iter().map(|s| (module.clone(), s)));
            }
        }
        out.spill_growth = module_spill_growth(&out);
        out.predicated_events = module_predicated_events(&out);
        out.costs = module_costs(&out);
        out.unpaired_regions = pairing::unpaired_regions(&sources.scanned);
        if cargo {
            for u in &out.unpaired_regions {
                println!("cargo:warning={}", u.message());
            }
            for (module, c) in &out.costs {
                println!("{}", c.summary(module));
            }
            if let Some(w) = cost::warning(&out.costs) {
                println!("cargo:warning={w}");
            }
            for (module, shift) in &out.shared_shifts {
                println!("cargo:warning={}", shift.message(module));
            }
            for (module, growth) in &out.spill_growth {
                println!("cargo:warning={}", growth.message(module));
            }
            for (module, found) in &out.predicated_events {
                println!("cargo:warning={}", found.message(module));
            }
        }
        if cargo && self.ptxas_verbose {
            // Cargo shows a build script's output only for warnings.
            for line in ptxas_report(&out) {
                println!("cargo:warning={line}");
            }
        }
        Ok(out)
    }

    /// [`Build::out_dir`], else Cargo's `OUT_DIR`.
    fn output_dir(&self) -> Result<PathBuf, Error> {
        match &self.out_dir {
            Some(d) => Ok(d.clone()),
            None => env::cargo("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Error::Config(
                    "OUT_DIR is not set: call ktrace_build from a build script, or set \
                     Build::out_dir"
                        .into(),
                )
            }),
        }
    }

    /// The kernel modules, and every source read and scanned for markers.
    fn collect_sources(&self, cargo: bool) -> Result<Sources, Error> {
        let (modules, paths) = self.source_paths(cargo)?;
        let scanned = scan_sources(&paths, cargo)?;
        Ok(Sources { modules, scanned })
    }

    /// The kernel modules and every file to scan, both sorted, with a rerun
    /// line for each directory searched.
    fn source_paths(&self, cargo: bool) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
        let mut modules = Vec::new();
        let mut scanned = Vec::new();
        for dir in &self.kernel_dirs {
            for f in list_sources(dir, "reading kernel directory", cargo)? {
                let is_launcher = self.launchers.iter().any(|l| same_file(l, &f));
                if f.extension().is_some_and(|e| e == "cu") && !is_launcher {
                    modules.push(f.clone());
                }
                scanned.push(f);
            }
        }
        for f in &self.kernels {
            must_exist(f, "kernel source")?;
            modules.push(f.clone());
            scanned.push(f.clone());
        }
        for v in &self.variants {
            must_exist(&v.source, "kernel variant source")?;
            scanned.push(v.source.clone());
        }
        for dir in &self.scan_dirs {
            scanned.extend(list_sources(dir, "reading", cargo)?);
        }
        for f in self.launchers.iter().chain(&self.launcher_headers) {
            must_exist(f, "launcher file")?;
            scanned.push(f.clone());
        }
        scanned.sort();
        scanned.dedup();
        modules.sort();
        modules.dedup();
        Ok((modules, scanned))
    }

    /// The settings with the environment applied, then the pure
    /// [`plan::plan`] of the build.
    fn plan(&self, out_dir: &Path, sources: &Sources) -> Result<Plan, Error> {
        let archs = self.archs()?;
        let flags = self.nvcc_flags();
        plan::plan(&plan::Inputs {
            out_dir,
            modules: &sources.modules,
            variants: &self.variants,
            scanned: &sources.scanned,
            archs: &archs,
            includes: &self.includes,
            defines: &self.defines,
            flags: &flags,
            launchers: &self.launchers,
            launcher_headers: &self.launcher_headers,
            lib_name: self.lib_name.as_deref().unwrap_or("ktrace_launchers"),
        })
    }

    /// The target architectures: `KTRACE_CUDA_ARCH`, else the builder's,
    /// else [`nvcc::DEFAULT_ARCH`].
    fn archs(&self) -> Result<Vec<Arch>, Error> {
        let names: Vec<String> = match env::get_string("KTRACE_CUDA_ARCH") {
            Some(v) => v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            None if self.archs.is_empty() => vec![nvcc::DEFAULT_ARCH.to_string()],
            None => self.archs.clone(),
        };
        names
            .iter()
            .map(|a| Arch::parse(a))
            .collect::<Result<_, _>>()
            .map_err(Error::Arch)
    }

    /// The builder's flags, then `KTRACE_NVCC_FLAGS`, then `-Xptxas -v`
    /// with [`Build::ptxas_verbose`] (the kernels' builds ask for it
    /// anyway: [`plan`]).
    fn nvcc_flags(&self) -> Vec<String> {
        let mut flags = self.flags.clone();
        if let Some(extra) = env::get_string("KTRACE_NVCC_FLAGS") {
            flags.extend(extra.split_whitespace().map(str::to_string));
        }
        if self.ptxas_verbose {
            flags.extend(["-Xptxas".to_string(), "-v".to_string()]);
        }
        flags
    }

    /// The nvcc to run: [`Build::nvcc`], else the first place
    /// [`nvcc::find_nvcc`] finds one; none when the plan runs no nvcc.
    /// With the variables nvcc itself reads, which are part of every
    /// command line for deciding what to rebuild.
    fn toolchain(&self, plan: &Plan) -> Result<Option<Toolchain>, Error> {
        if !plan.needs_nvcc() {
            return Ok(None);
        }
        let nvcc = match &self.nvcc {
            Some(nvcc) => nvcc.clone(),
            None => {
                let search = nvcc::find_nvcc();
                search.found.ok_or(Error::NvccNotFound {
                    tried: search.tried,
                })?
            }
        };
        let nvcc_env = nvcc::ENV_READ_BY_NVCC.map(|v| (v, env::get_string(v)));
        Ok(Some(Toolchain::new(nvcc, &nvcc_env)))
    }
}

/// The register, spill and shared-memory lines of ptxas's report (`-Xptxas
/// -v`) in an output's nvcc messages, with the function each line is
/// about (`Compiling entry function`, `Function properties for`), each
/// prefixed with its source's file name and variant: `saxpy.cu (traced):
/// ptxas info    : Used 28 registers, ...`. A [`Build::variant`]'s lines
/// name its module too: `gemm.cu as gemm_newest (traced): ...`.
pub fn ptxas_report(out: &Output) -> Vec<String> {
    let mut lines = Vec::new();
    let messages =
        module_messages(out).flat_map(|(module, pair)| pair.iter().map(move |m| (m, module)));
    for ((source, variant, text), module) in messages {
        let file = source.file_name().unwrap_or_default().to_string_lossy();
        let stem = source.file_stem().unwrap_or_default().to_string_lossy();
        let name = if *module == stem {
            file.into_owned()
        } else {
            format!("{file} as {module}")
        };
        for line in text.lines().filter(|l| {
            l.contains("Compiling entry function")
                || l.contains("Function properties for")
                || l.contains("ptxas info    : Used ")
                || l.contains("bytes stack frame")
        }) {
            lines.push(format!("{name} ({variant}): {}", line.trim()));
        }
    }
    lines
}

/// Each module's name with its nvcc messages: two per module, traced then
/// untraced, in [`Output::modules`] order.
fn module_messages(out: &Output) -> impl Iterator<Item = (&String, &[(PathBuf, Variant, String)])> {
    out.nvcc_messages
        .chunks(2)
        .zip(&out.modules)
        .map(|(pair, (module, _, _))| (module, pair))
}

/// The functions of every module whose traced cubin has predicated marker
/// events ([`crate::predicated`]), from the files the maps wrote beside its
/// images (none without `nvdisasm`).
fn module_predicated_events(out: &Output) -> Vec<(String, predicated::PredicatedEvents)> {
    out.modules
        .iter()
        .flat_map(|(module, traced, untraced)| {
            predicated::module_growth(traced, untraced)
                .unwrap_or_default()
                .into_iter()
                .map(|p| (module.clone(), p))
        })
        .collect()
}

/// The markers' cost of every module's traced cubin ([`cost`]), from the
/// `.cost` file the maps wrote beside it (none without `nvdisasm`).
fn module_costs(out: &Output) -> Vec<(String, cost::KernelCost)> {
    out.modules
        .iter()
        .flat_map(|(module, traced, _)| {
            std::fs::read_to_string(cost::cost_path(traced))
                .ok()
                .and_then(|t| cost::parse(&t))
                .unwrap_or_default()
                .into_iter()
                .map(|c| (module.clone(), c))
        })
        .collect()
}

/// [`spills::spill_growth`] of every module: its traced build's report
/// against its untraced build's, in [`Output::modules`] order.
fn module_spill_growth(out: &Output) -> Vec<(String, spills::SpillGrowth)> {
    module_messages(out)
        .flat_map(|(module, pair)| {
            let growth = match pair {
                [(_, Variant::Traced, t), (_, Variant::Untraced, u)] => spills::spill_growth(t, u),
                _ => Vec::new(),
            };
            growth.into_iter().map(move |g| (module.clone(), g))
        })
        .collect()
}

/// Compiles every `.cu` file under `dir` for the default architecture: the
/// one-call form of [`Build`]. Exits with a message on failure.
pub fn compile_kernels(dir: impl AsRef<Path>) -> Output {
    Build::new().kernel_dir(dir).compile()
}

/// The files a build reads.
struct Sources {
    /// The `.cu` files that become kernel modules, sorted.
    modules: Vec<PathBuf>,
    /// Every file scanned (the modules among them), sorted, with its markers.
    scanned: Vec<SourceFile>,
}

/// Rerun lines for build.rs and for this crate's templates and device
/// headers. Printing any rerun line turns off Cargo's default of rerunning
/// the build script on every change in the package, so each input is named.
fn rerun_if_crate_files_change() {
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

/// The `.cu`/`.cuh` files under `dir`, with a rerun line for `dir`.
fn list_sources(dir: &Path, what: &str, cargo: bool) -> Result<Vec<PathBuf>, Error> {
    if cargo {
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    scan::find_sources(dir).map_err(|e| io(format!("{what} {}", dir.display()), e))
}

fn must_exist(file: &Path, what: &str) -> Result<(), Error> {
    if file.is_file() {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{what} {} does not exist",
            file.display()
        )))
    }
}

/// Reads and scans every file, with a rerun line for each. Fails listing
/// every bad marker of every file.
fn scan_sources(paths: &[PathBuf], cargo: bool) -> Result<Vec<SourceFile>, Error> {
    let mut sources = Vec::new();
    let mut bad = Vec::new();
    for path in paths {
        if cargo {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        let text = std::fs::read(path).map_err(|e| io(format!("reading {}", path.display()), e))?;
        match scan::scan_source(path, &String::from_utf8_lossy(&text)) {
            Ok(markers) => sources.push(SourceFile {
                path: path.clone(),
                markers,
            }),
            Err(errs) => bad.extend(errs),
        }
    }
    if bad.is_empty() {
        Ok(sources)
    } else {
        Err(Error::Markers(bad))
    }
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
