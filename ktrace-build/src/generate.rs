//! Generating without compiling: the region header, the device headers and
//! the Rust table for a crate whose kernels another builder compiles
//! (cudaforge, bindgen_cuda, a hand-written nvcc call).
//!
//! `plan` decides everything as text and paths (pure, tested here);
//! [`write`] writes it and removes images that were compiled against an
//! older region table, so the other builder compiles them again.

use std::path::{Path, PathBuf};

use crate::codegen::{self, ModuleEntry};
use crate::manifest;
use crate::pc_map::PcMap;
use crate::plan::{self, Inputs};
use crate::regions::RegionTable;
use crate::scan::SourceFile;
use crate::{io, write_if_changed, Build, Error, Variant};

/// The extension of the images another builder writes: both cudaforge's
/// and bindgen_cuda's `build_ptx` write `STEM.ptx` into their output
/// directory.
pub const IMAGE_EXTENSION: &str = "ptx";

/// Name of the file beside each variant's images that records the region
/// table they must have been compiled against.
pub const STAMP_NAME: &str = "ktrace-regions.stamp";

/// What another builder needs to compile a crate's marked kernels, from
/// [`crate::Build::generate`].
///
/// Compile every source in [`Generated::sources`] twice, once with
/// [`Generated::args`]`(Variant::Traced)` into
/// [`Generated::out_dir`]`(Variant::Traced)` and once with the untraced
/// arguments into the untraced directory; each image named `STEM.ptx` (as
/// cudaforge's and bindgen_cuda's `build_ptx` name them). The generated
/// Rust file embeds those images as `kernels::STEM` modules.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The region table.
    pub regions: RegionTable,
    /// Directory with `ktrace.cuh`, its parts and the generated
    /// `ktrace_regions.h`: on the include path of both variants (it is the
    /// first `-I` of [`Generated::args`]).
    pub include_dir: PathBuf,
    /// The generated Rust file (`OUT_DIR/ktrace.rs`), included with
    /// `ktrace_runtime::include_ktrace!()`.
    pub rust_file: PathBuf,
    /// The kernel sources (each `.cu` of a [`crate::Build::kernel_dir`] and
    /// each [`crate::Build::kernel`]), sorted: what the other builder
    /// compiles.
    pub sources: Vec<PathBuf>,
    /// Each module: name, where its traced image must be, where its
    /// untraced image must be.
    pub modules: Vec<(String, PathBuf, PathBuf)>,
    out_dirs: [PathBuf; 2],
    defines: Vec<(String, Option<String>)>,
    includes: Vec<PathBuf>,
}

impl Generated {
    /// Where the other builder writes `variant`'s images
    /// (`OUT_DIR/ktrace/traced`, `OUT_DIR/ktrace/untraced`).
    pub fn out_dir(&self, variant: Variant) -> &Path {
        &self.out_dirs[variant_index(variant)]
    }

    /// The macros of `variant`: `KTRACE_ENABLED=1` for the traced one
    /// (markers record), then those of [`crate::Build::define`].
    pub fn defines(&self, variant: Variant) -> Vec<(String, Option<String>)> {
        let mut d = Vec::new();
        if variant == Variant::Traced {
            d.push(("KTRACE_ENABLED".to_string(), Some("1".to_string())));
        }
        d.extend(self.defines.iter().cloned());
        d
    }

    /// The nvcc arguments of `variant`, for the other builder's `arg`/`args`:
    /// `-I` the include directory (then those of [`crate::Build::include`]),
    /// then `-D` each of [`Generated::defines`].
    pub fn args(&self, variant: Variant) -> Vec<String> {
        let mut a: Vec<String> = std::iter::once(&self.include_dir)
            .chain(&self.includes)
            .map(|d| format!("-I{}", d.display()))
            .collect();
        a.extend(self.defines(variant).into_iter().map(|(k, v)| match v {
            Some(v) => format!("-D{k}={v}"),
            None => format!("-D{k}"),
        }));
        a
    }

    /// [`Generated::args`] as `&'static str`, for builders whose `arg`
    /// takes one (bindgen_cuda's `Builder::arg`). The strings are leaked:
    /// a build script runs once, so this costs a few hundred bytes.
    pub fn static_args(&self, variant: Variant) -> Vec<&'static str> {
        self.args(variant)
            .into_iter()
            .map(|s| &*Box::leak(s.into_boxed_str()))
            .collect()
    }
}

impl Build {
    /// Scans and generates without compiling, for a crate whose kernels
    /// another builder compiles (cudaforge, bindgen_cuda): writes the device
    /// headers and the region header to `OUT_DIR/ktrace/include` and the
    /// Rust file to `OUT_DIR/ktrace.rs`, prints the rerun lines, and returns
    /// what that builder needs: the include directory, each variant's nvcc
    /// arguments and output directory, and the sources. Runs no nvcc. On
    /// failure prints `ktrace: ` and the error and exits with status 1.
    ///
    /// ```no_run
    /// // build.rs, with cudaforge: one build per variant
    /// use ktrace_build::Variant;
    /// let gen = ktrace_build::Build::new().kernel_dir("kernels").generate();
    /// # struct KernelBuilder; impl KernelBuilder { fn new() -> Self { Self }
    /// # fn source_dir(self, _: &str) -> Self { self } fn out_dir(self, _: &std::path::Path) -> Self { self }
    /// # fn args(self, _: Vec<String>) -> Self { self } fn build_ptx(self) -> Result<(), ()> { Ok(()) } }
    /// for v in [Variant::Traced, Variant::Untraced] {
    ///     KernelBuilder::new()
    ///         .source_dir("kernels")
    ///         .out_dir(gen.out_dir(v))
    ///         .args(gen.args(v))
    ///         .build_ptx()
    ///         .unwrap();
    /// }
    /// ```
    ///
    /// Each `.cu` of a [`Build::kernel_dir`] (and each [`Build::kernel`])
    /// becomes a module `kernels::STEM` of the Rust file, embedding
    /// `OUT_DIR/ktrace/traced/STEM.ptx` and `OUT_DIR/ktrace/untraced/STEM.ptx`,
    /// which the other builder must write; a crate that only links a
    /// library of launchers names its sources with [`Build::scan_dir`]
    /// instead, and gets no modules. [`Build::define`] and
    /// [`Build::include`] go into [`Generated::args`]; the architectures,
    /// flags, [`Build::variant`]s and launchers are the other builder's
    /// business, and a variant or launcher here is an error.
    pub fn generate(&self) -> Generated {
        match self.try_generate() {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{}", crate::error::report(&e));
                std::process::exit(1);
            }
        }
    }

    /// [`Build::generate`], returning what went wrong instead of exiting.
    pub fn try_generate(&self) -> Result<Generated, Error> {
        if let Some(why) = self.compile_only() {
            return Err(Error::Config(format!("Build::generate: {why}")));
        }
        let cargo = self.cargo_metadata.unwrap_or(self.out_dir.is_none());
        let out_dir = self.output_dir()?;
        if cargo {
            crate::rerun_if_crate_files_change();
        }
        let sources = self.collect_sources(cargo)?;
        let plan = plan(
            &out_dir,
            &sources.modules,
            &sources.scanned,
            &self.defines,
            &self.includes,
        )?;
        write(plan)
    }

    /// What [`Build::generate`] cannot do: a kernel variant or a launcher
    /// library needs ktrace-build's nvcc.
    fn compile_only(&self) -> Option<String> {
        if let Some(v) = self.variants.first() {
            return Some(format!(
                "the kernel variant {} needs ktrace-build's own nvcc run (Build::compile); \
                 with another builder, give it a source of its own that defines its macros \
                 and includes the kernel",
                v.name
            ));
        }
        let launcher = self.launchers.iter().chain(&self.launcher_headers).next()?;
        Some(format!(
            "the launcher {} needs ktrace-build's own nvcc run (Build::compile); with \
             another builder, compile it there and name it with Build::scan_dir",
            launcher.display()
        ))
    }
}

fn variant_index(variant: Variant) -> usize {
    match variant {
        Variant::Traced => 0,
        Variant::Untraced => 1,
    }
}

/// Everything a generate-only build writes, decided.
#[derive(Debug, Clone)]
pub(crate) struct GeneratePlan {
    /// Files to write: the device headers, the region header, the Rust file
    /// and the map the modules point at.
    pub files: Vec<(PathBuf, String)>,
    /// Per variant directory, the stamp file and its text: the region
    /// header's digest.
    pub stamps: Vec<(PathBuf, String)>,
    /// What the caller gets.
    pub generated: Generated,
}

/// Decides a generate-only build: the region table from `scanned`, one
/// module per source in `modules` (named after its stem, as
/// [`crate::Build::compile`] names them), images expected in
/// `OUT_DIR/ktrace/{traced,untraced}/STEM.ptx`.
pub(crate) fn plan(
    out_dir: &Path,
    modules: &[PathBuf],
    scanned: &[SourceFile],
    defines: &[(String, Option<String>)],
    includes: &[PathBuf],
) -> Result<GeneratePlan, Error> {
    let base = plan::plan(&Inputs {
        out_dir,
        modules,
        variants: &[],
        scanned,
        archs: &[],
        includes,
        defines,
        flags: &[],
        launchers: &[],
        launcher_headers: &[],
        lib_name: "",
    })?;
    let root = out_dir.join("ktrace");
    let out_dirs = [root.join("traced"), root.join("untraced")];
    let map_path = root.join("prebuilt.pcmap");
    let (entries, module_paths) = module_entries(&base.modules, modules, &out_dirs, &map_path);
    let rust = codegen::rust_file(&base.table, &entries).map_err(Error::Render)?;
    let regions_header = base
        .headers
        .iter()
        .find(|(p, _)| p.ends_with(codegen::REGIONS_HEADER_NAME))
        .map(|(_, text)| text.clone())
        .unwrap_or_default();
    let stamp = format!("{:016x}\n", manifest::digest(regions_header.as_bytes()));
    let mut files = base.headers;
    files.push((out_dir.join(codegen::RUST_FILE_NAME), rust));
    files.push((
        map_path,
        PcMap::none("compiled to PTX by another builder: the driver's code has no map"),
    ));
    Ok(GeneratePlan {
        files,
        stamps: out_dirs
            .iter()
            .map(|d| (d.join(STAMP_NAME), stamp.clone()))
            .collect(),
        generated: Generated {
            regions: base.table,
            include_dir: base.include_dir,
            rust_file: out_dir.join(codegen::RUST_FILE_NAME),
            sources: modules.to_vec(),
            modules: module_paths,
            out_dirs,
            defines: defines.to_vec(),
            includes: includes.to_vec(),
        },
    })
}

/// Each named module's entry in `ktrace.rs` and its two image paths: the
/// images another builder writes into `out_dirs`, one map (`map_path`) for
/// both variants.
fn module_entries(
    named: &[(String, PathBuf, PathBuf)],
    modules: &[PathBuf],
    out_dirs: &[PathBuf; 2],
    map_path: &Path,
) -> (Vec<ModuleEntry>, Vec<(String, PathBuf, PathBuf)>) {
    let quoted = |p: &Path| format!("{:?}", p.display().to_string());
    let mut entries = Vec::new();
    let mut module_paths = Vec::new();
    // plan::plan has named every module and refused two with one constant.
    for (name, _, _) in named {
        let [t, u] = out_dirs
            .each_ref()
            .map(|d| d.join(format!("{name}.{IMAGE_EXTENSION}")));
        let source = modules
            .iter()
            .find(|s| s.file_stem().and_then(|x| x.to_str()) == Some(name))
            .map(|s| s.display().to_string())
            .unwrap_or_default();
        entries.push(ModuleEntry {
            name: name.clone(),
            const_name: codegen::const_name(name),
            source,
            archs: "the architecture its builder chose (PTX, compiled by the driver at load)"
                .to_string(),
            traced_path: quoted(&t),
            untraced_path: quoted(&u),
            traced_map_path: quoted(map_path),
            untraced_map_path: quoted(map_path),
        });
        module_paths.push((name.clone(), t, u));
    }
    (entries, module_paths)
}

/// Writes a [`GeneratePlan`]. Where a variant's stamp differs from the
/// plan's (the region table changed, or the directory is new), the images
/// of the plan's modules there are removed first: compiled against the old
/// table they would name the wrong regions, and the other builders decide
/// what to recompile from their sources' times or digests, which a change
/// in the generated header does not touch.
pub(crate) fn write(plan: GeneratePlan) -> Result<Generated, Error> {
    for (path, text) in &plan.files {
        if let Some(dir) = path.parent() {
            create_dir(dir)?;
        }
        write_if_changed(path, text.as_bytes())?;
    }
    for (v, (stamp, text)) in plan.stamps.iter().enumerate() {
        create_dir(&plan.generated.out_dirs[v])?;
        if std::fs::read_to_string(stamp).is_ok_and(|old| old == *text) {
            continue;
        }
        for (_, traced, untraced) in &plan.generated.modules {
            let image = if v == 0 { traced } else { untraced };
            match std::fs::remove_file(image) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io(format!("removing {}", image.display()), e))
                }
                _ => {}
            }
        }
        write_if_changed(stamp, text.as_bytes())?;
    }
    Ok(plan.generated)
}

fn create_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| io(format!("creating {}", dir.display()), e))
}

#[cfg(test)]
mod tests;
