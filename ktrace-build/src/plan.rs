//! What a build will do, decided before anything runs.
//!
//! [`plan`] is a pure function from the scanned sources and the settings to
//! everything the build then does: the region table, module names (and the
//! error when two sources give the same one), cubin or fatbin, every output
//! path, the generated header and Rust file, the nvcc jobs and the launcher
//! library. It reads no environment variable, touches no file and runs no
//! tool, so all of it is tested without nvcc; [`crate::Build`] carries the
//! plan out.

use std::path::{Path, PathBuf};

use crate::codegen::{self, ModuleEntry};
use crate::kernel_variant::KernelVariant;
use crate::launcher::Launchers;
use crate::nvcc::{Arch, NvccJob, Variant};
use crate::pc_map::map_path;
use crate::regions::RegionTable;
use crate::scan::SourceFile;
use crate::{Error, DEVICE_HEADERS};

/// What goes into a plan: the sources found and scanned, and the settings
/// with the environment already applied.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inputs<'a> {
    /// Where the outputs go (`OUT_DIR`).
    pub out_dir: &'a Path,
    /// The `.cu` files that become kernel modules, sorted.
    pub modules: &'a [PathBuf],
    /// The kernel variants, each a module after those of `modules`.
    pub variants: &'a [KernelVariant],
    /// Every scanned file with its markers, sorted by path.
    pub scanned: &'a [SourceFile],
    /// Target architectures, at least one.
    pub archs: &'a [Arch],
    /// The user's include directories.
    pub includes: &'a [PathBuf],
    /// The user's `-D` definitions.
    pub defines: &'a [(String, Option<String>)],
    /// Extra nvcc flags, after the base flags.
    pub flags: &'a [String],
    /// Launcher sources; none means no launcher library.
    pub launchers: &'a [PathBuf],
    /// Launcher headers for bindgen.
    pub launcher_headers: &'a [PathBuf],
    /// Name of the launcher library.
    pub lib_name: &'a str,
}

/// A kernel build's extra flags: the user's, then `-Xptxas -v` unless they
/// have it, so that nvcc's messages carry ptxas's register and spill report
/// for the spill check ([`crate::spills`]).
fn kernel_flags(flags: &[String]) -> Vec<String> {
    let mut out = flags.to_vec();
    if !flags.windows(2).any(|w| w[0] == "-Xptxas" && w[1] == "-v") {
        out.extend(["-Xptxas".to_string(), "-v".to_string()]);
    }
    out
}

/// One nvcc run and the image it installs.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    /// The run; it writes a temporary image and a dependency file beside
    /// `image`.
    pub nvcc: NvccJob,
    /// Where the image goes once nvcc succeeded (rewritten only if changed).
    pub image: PathBuf,
    /// Beside the image: how it was built ([`crate::manifest`]).
    pub manifest: PathBuf,
}

/// A build, decided.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The region table.
    pub table: RegionTable,
    /// `OUT_DIR/ktrace/include`: the device headers and the region header.
    pub include_dir: PathBuf,
    /// `OUT_DIR/ktrace/kernels`: the images.
    pub image_dir: PathBuf,
    /// Files to write before nvcc runs: path and text.
    pub headers: Vec<(PathBuf, String)>,
    /// The nvcc runs, traced then untraced for each module, in the order of
    /// `modules`.
    pub jobs: Vec<Job>,
    /// Each module: name, traced image, untraced image. The kernel sources'
    /// modules, then the variants.
    pub modules: Vec<(String, PathBuf, PathBuf)>,
    /// `OUT_DIR/ktrace.rs` and its text.
    pub rust_file: (PathBuf, String),
    /// The launcher library, when there are launcher sources.
    pub launchers: Option<Launchers>,
}

impl Plan {
    /// Whether any step runs nvcc.
    pub fn needs_nvcc(&self) -> bool {
        !self.jobs.is_empty() || self.launchers.is_some()
    }
}

/// Decides the build. Fails on too many regions, a module source or variant
/// without a usable name, or two modules with one name.
pub(crate) fn plan(inputs: &Inputs<'_>) -> Result<Plan, Error> {
    let table = RegionTable::from_sources(inputs.scanned).map_err(Error::Regions)?;
    let include_dir = inputs.out_dir.join("ktrace").join("include");
    let image_dir = inputs.out_dir.join("ktrace").join("kernels");
    let headers = headers(&include_dir, &table, inputs.scanned)?;
    let mut includes = vec![include_dir.clone()];
    includes.extend(inputs.includes.iter().cloned());
    let entries = module_entries(inputs.modules, inputs.variants, inputs.archs, &image_dir)?;
    let jobs = entries
        .iter()
        .flat_map(|m| m.jobs(inputs, &includes))
        .collect();
    let modules = entries
        .iter()
        .map(|m| (m.entry.name.clone(), m.traced.clone(), m.untraced.clone()))
        .collect();
    let codegen_entries: Vec<ModuleEntry> = entries.into_iter().map(|m| m.entry).collect();
    let rust = codegen::rust_file(&table, &codegen_entries).map_err(Error::Render)?;
    let launchers = (!inputs.launchers.is_empty()).then(|| Launchers {
        sources: inputs.launchers.to_vec(),
        headers: inputs.launcher_headers.to_vec(),
        includes,
        archs: inputs.archs.to_vec(),
        defines: inputs.defines.to_vec(),
        flags: inputs.flags.to_vec(),
        out_dir: inputs.out_dir.to_path_buf(),
        lib_name: inputs.lib_name.to_string(),
    });
    Ok(Plan {
        table,
        include_dir,
        image_dir,
        headers,
        jobs,
        modules,
        rust_file: (inputs.out_dir.join(codegen::RUST_FILE_NAME), rust),
        launchers,
    })
}

/// The shipped device headers and the generated region header.
fn headers(
    include_dir: &Path,
    table: &RegionTable,
    scanned: &[SourceFile],
) -> Result<Vec<(PathBuf, String)>, Error> {
    let files: Vec<String> = scanned
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let regions = codegen::regions_header(table, &files).map_err(Error::Render)?;
    let mut headers: Vec<(PathBuf, String)> = DEVICE_HEADERS
        .iter()
        .map(|(name, text)| (include_dir.join(name), text.to_string()))
        .collect();
    headers.push((include_dir.join(codegen::REGIONS_HEADER_NAME), regions));
    Ok(headers)
}

/// A kernel module: its entry in the Rust file and its two images.
struct Module {
    source: PathBuf,
    /// The variant's own definitions, after the build's (none for a kernel
    /// source's module).
    defines: Vec<(String, Option<String>)>,
    /// What gave the module, for errors: `kernel source k.cu`, `kernel
    /// variant v (of k.cu)`.
    origin: String,
    entry: ModuleEntry,
    traced: PathBuf,
    untraced: PathBuf,
}

impl Module {
    /// The module `name` built from `source`, its images in `image_dir`
    /// with the extension `ext` (`cubin` or `fatbin`).
    fn new(name: &str, source: &Path, ext: &str, arch_list: &str, image_dir: &Path) -> Self {
        let traced = image_dir.join(format!("{name}.traced.{ext}"));
        let untraced = image_dir.join(format!("{name}.untraced.{ext}"));
        Module {
            source: source.to_path_buf(),
            defines: Vec::new(),
            origin: format!("kernel source {}", source.display()),
            entry: ModuleEntry {
                name: name.to_string(),
                const_name: codegen::const_name(name),
                source: source.display().to_string(),
                archs: arch_list.to_string(),
                traced_path: format!("{:?}", traced.display().to_string()),
                untraced_path: format!("{:?}", untraced.display().to_string()),
                traced_map_path: format!("{:?}", map_path(&traced).display().to_string()),
                untraced_map_path: format!("{:?}", map_path(&untraced).display().to_string()),
            },
            traced,
            untraced,
        }
    }

    /// The two nvcc runs, traced first.
    fn jobs(&self, inputs: &Inputs<'_>, includes: &[PathBuf]) -> [Job; 2] {
        let mut defines = inputs.defines.to_vec();
        defines.extend(self.defines.iter().cloned());
        [
            (Variant::Traced, &self.traced),
            (Variant::Untraced, &self.untraced),
        ]
        .map(|(variant, image)| Job {
            nvcc: NvccJob {
                source: self.source.clone(),
                output: beside(image, "tmp"),
                variant,
                archs: inputs.archs.to_vec(),
                includes: includes.to_vec(),
                defines: defines.clone(),
                flags: kernel_flags(inputs.flags),
                depfile: Some(beside(image, "d")),
            },
            image: image.clone(),
            manifest: beside(image, "manifest"),
        })
    }
}

/// Names every module after its file stem (`my-kernel.cu` → `my-kernel`,
/// constant `MY_KERNEL`), then adds the variants under their own names,
/// refusing two with one constant. One architecture gives cubins, several
/// give fatbins.
fn module_entries(
    sources: &[PathBuf],
    variants: &[KernelVariant],
    archs: &[Arch],
    image_dir: &Path,
) -> Result<Vec<Module>, Error> {
    let ext = if archs.len() == 1 { "cubin" } else { "fatbin" };
    let arch_list = archs.iter().map(Arch::sm).collect::<Vec<_>>().join(", ");
    let mut modules: Vec<Module> = Vec::new();
    for src in sources {
        let stem = src
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| Error::Config(format!("{} has no usable file name", src.display())))?;
        let module = Module::new(stem, src, ext, &arch_list, image_dir);
        if let Some(prev) = same_name(&modules, &module) {
            return Err(Error::DuplicateModule {
                name: module.entry.const_name,
                first: prev.source.clone(),
                second: src.clone(),
            });
        }
        modules.push(module);
    }
    for v in variants {
        let mut module = Module::new(&v.name, &v.source, ext, &arch_list, image_dir);
        module.origin = format!("kernel variant {} (of {})", v.name, v.source.display());
        if v.name.is_empty() || v.name.contains(['/', '\\']) || v.name.starts_with('.') {
            return Err(Error::Config(format!(
                "{}: a variant's name is its images' file name: not empty, without / or \\, \
                 not starting with .",
                module.origin
            )));
        }
        if let Some(prev) = same_name(&modules, &module) {
            return Err(Error::Config(format!(
                "{} gives the module name {}, as {} does; rename one",
                module.origin, module.entry.const_name, prev.origin
            )));
        }
        module.defines = v.defines.clone();
        modules.push(module);
    }
    Ok(modules)
}

/// The module among `modules` with the constant of `module`, if any.
fn same_name<'m>(modules: &'m [Module], module: &Module) -> Option<&'m Module> {
    modules
        .iter()
        .find(|m| m.entry.const_name == module.entry.const_name)
}

/// A file beside an image: `a.traced.cubin.tmp` (what nvcc writes before it
/// is installed), `.d` (nvcc's dependency output), `.manifest`.
fn beside(image: &Path, extension: &str) -> PathBuf {
    let mut name = image.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    PathBuf::from(name)
}

/// The files of the image directory, by name (`listing`), that belong to
/// no module of this build (`modules`): the images and sidecars of a
/// module or variant that an earlier build had and this one dropped or
/// renamed (`old.traced.cubin`, `old.untraced.cubin.pcmap`, ...), which
/// would otherwise stay beside the build's own images.
pub(crate) fn stale_images<'l>(listing: &'l [String], modules: &[String]) -> Vec<&'l str> {
    listing
        .iter()
        .filter(|name| {
            [".traced.", ".untraced."].iter().any(|build| {
                name.split_once(build)
                    .is_some_and(|(module, _)| !modules.iter().any(|m| m == module))
            })
        })
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan_source;

    fn scanned(files: &[(&str, &str)]) -> Vec<SourceFile> {
        files
            .iter()
            .map(|(path, text)| SourceFile {
                path: PathBuf::from(path),
                markers: scan_source(Path::new(path), text).unwrap(),
            })
            .collect()
    }

    fn archs(names: &[&str]) -> Vec<Arch> {
        names.iter().map(|a| Arch::parse(a).unwrap()).collect()
    }

    /// A plan of `modules` (each scanned, one marker apiece) for `arch_names`.
    fn plan_of(
        modules: &[&str],
        arch_names: &[&str],
        launchers: &[PathBuf],
    ) -> Result<Plan, Error> {
        plan_with_variants(modules, &[], arch_names, launchers)
    }

    /// [`plan_of`] with kernel variants.
    fn plan_with_variants(
        modules: &[&str],
        variants: &[KernelVariant],
        arch_names: &[&str],
        launchers: &[PathBuf],
    ) -> Result<Plan, Error> {
        let files: Vec<(&str, &str)> = modules.iter().map(|m| (*m, "KTRACE_M(\"m\");")).collect();
        let scanned = scanned(&files);
        let modules: Vec<PathBuf> = modules.iter().map(PathBuf::from).collect();
        let archs = archs(arch_names);
        plan(&Inputs {
            out_dir: Path::new("out"),
            modules: &modules,
            variants,
            scanned: &scanned,
            archs: &archs,
            includes: &[PathBuf::from("inc")],
            defines: &[("TILE".into(), Some("128".into()))],
            flags: &["-lineinfo".into()],
            launchers,
            launcher_headers: &[],
            lib_name: "ktrace_launchers",
        })
    }

    #[test]
    fn modules_are_named_after_their_stems() {
        let p = plan_of(&["k/my-kernel.cu", "k/3d.cu"], &["sm_90"], &[]).unwrap();
        let names: Vec<&str> = p.modules.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["my-kernel", "3d"]);
        let rust = &p.rust_file.1;
        assert!(rust.contains("pub const MY_KERNEL: ::ktrace_runtime::KernelModule"));
        assert!(rust.contains("pub const _3D: ::ktrace_runtime::KernelModule"));
        assert!(rust.contains("name: \"my-kernel\","));
        assert_eq!(p.rust_file.0, Path::new("out").join("ktrace.rs"));
    }

    #[test]
    fn two_sources_with_one_module_name_are_an_error() {
        let err = plan_of(&["x/k.cu", "y/k.cu"], &["sm_90"], &[]).unwrap_err();
        match &err {
            Error::DuplicateModule {
                name,
                first,
                second,
            } => {
                assert_eq!(name, "K");
                assert_eq!(first, Path::new("x/k.cu"));
                assert_eq!(second, Path::new("y/k.cu"));
            }
            other => panic!("{other:?}"),
        }
        assert!(err
            .to_string()
            .contains("both give the module name K; rename one"));
        // Different stems, one constant: a-b and a_b are both A_B.
        assert!(matches!(
            plan_of(&["a-b.cu", "a_b.cu"], &["sm_90"], &[]),
            Err(Error::DuplicateModule { .. })
        ));
    }

    #[test]
    fn one_architecture_gives_cubins_several_give_fatbins() {
        let one = plan_of(&["k.cu"], &["sm_90a"], &[]).unwrap();
        let images = Path::new("out").join("ktrace").join("kernels");
        assert_eq!(one.modules[0].1, images.join("k.traced.cubin"));
        assert_eq!(one.modules[0].2, images.join("k.untraced.cubin"));
        assert_eq!(one.jobs[0].nvcc.args()[0], "-cubin");
        assert!(one.rust_file.1.contains("for sm_90a."));

        let two = plan_of(&["k.cu"], &["sm_90a", "sm_80"], &[]).unwrap();
        assert_eq!(two.modules[0].1, images.join("k.traced.fatbin"));
        assert_eq!(two.jobs[1].nvcc.args()[0], "-fatbin");
        assert!(two.rust_file.1.contains("for sm_90a, sm_80."));
    }

    #[test]
    fn jobs_build_each_module_traced_then_untraced() {
        let p = plan_of(&["a.cu", "b.cu"], &["sm_90"], &[]).unwrap();
        let ktrace = Path::new("out").join("ktrace");
        let images = ktrace.join("kernels");
        let got: Vec<(&Path, Variant, &Path, &Path)> = p
            .jobs
            .iter()
            .map(|j| {
                let n = &j.nvcc;
                (
                    n.source.as_path(),
                    n.variant,
                    n.output.as_path(),
                    j.image.as_path(),
                )
            })
            .collect();
        let (traced, untraced) = (Variant::Traced, Variant::Untraced);
        let a_t = images.join("a.traced.cubin");
        let a_u = images.join("a.untraced.cubin");
        let b_t = images.join("b.traced.cubin");
        let b_u = images.join("b.untraced.cubin");
        let tmp = |p: &Path| beside(p, "tmp");
        let (a_tt, a_ut, b_tt, b_ut) = (tmp(&a_t), tmp(&a_u), tmp(&b_t), tmp(&b_u));
        assert_eq!(
            got,
            [
                (Path::new("a.cu"), traced, a_tt.as_path(), a_t.as_path()),
                (Path::new("a.cu"), untraced, a_ut.as_path(), a_u.as_path()),
                (Path::new("b.cu"), traced, b_tt.as_path(), b_t.as_path()),
                (Path::new("b.cu"), untraced, b_ut.as_path(), b_u.as_path()),
            ]
        );
        assert_eq!(a_tt, images.join("a.traced.cubin.tmp"));
        assert_eq!(p.jobs[0].manifest, images.join("a.traced.cubin.manifest"));
        let job = &p.jobs[0].nvcc;
        assert_eq!(job.depfile, Some(images.join("a.traced.cubin.d")));
        let args = job.args();
        let md = args.iter().position(|a| a == "-MD").expect("-MD");
        assert_eq!(args[md + 1], "-MF");
        assert_eq!(
            args[md + 2],
            images.join("a.traced.cubin.d").display().to_string()
        );
        assert_eq!(job.includes, [ktrace.join("include"), PathBuf::from("inc")]);
        assert_eq!(job.defines, [("TILE".to_string(), Some("128".to_string()))]);
        assert_eq!(job.flags, ["-lineinfo", "-Xptxas", "-v"]);
        assert!(p.needs_nvcc());
        assert!(p.launchers.is_none());
    }

    #[test]
    fn kernel_builds_ask_ptxas_for_its_report_once() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(kernel_flags(&v(&[])), v(&["-Xptxas", "-v"]));
        let verbose = v(&["-Xptxas", "-v", "-lineinfo"]);
        assert_eq!(kernel_flags(&verbose), verbose);
    }

    #[test]
    fn headers_go_to_the_include_dir_with_the_region_table() {
        let p = plan_of(&["a.cu"], &["sm_90"], &[]).unwrap();
        let include = Path::new("out").join("ktrace").join("include");
        let names: Vec<&Path> = p.headers.iter().map(|h| h.0.as_path()).collect();
        assert_eq!(
            names,
            [
                include.join("ktrace.cuh"),
                include.join("ktrace/config.cuh"),
                include.join("ktrace/common.cuh"),
                include.join("ktrace/store.cuh"),
                include.join("ktrace/ring.cuh"),
                include.join("ktrace/global.cuh"),
                include.join("ktrace/smem.cuh"),
                include.join("ktrace/newest.cuh"),
                include.join("ktrace/off.cuh"),
                include.join("ktrace/dispatch.cuh"),
                include.join("ktrace/markers.cuh"),
                include.join("ktrace_layout.h"),
                include.join("ktrace_launcher.h"),
                include.join("ktrace_regions.h"),
            ]
        );
        let regions = &p.headers.last().expect("the region table").1;
        assert!(regions.contains("{\"m\", 0u},"));
        assert!(regions.contains("1 region(s) found in\n// 1 source file(s)"));
        assert_eq!(p.include_dir, include);
    }

    #[test]
    fn no_modules_and_no_launchers_need_no_nvcc() {
        let p = plan_of(&[], &["sm_90"], &[]).unwrap();
        assert!(p.jobs.is_empty() && p.modules.is_empty());
        assert!(!p.needs_nvcc());
        let l = plan_of(&[], &["sm_90"], &[PathBuf::from("l.cu")]).unwrap();
        assert!(l.needs_nvcc());
        let launchers = l.launchers.unwrap();
        assert_eq!(launchers.sources, [PathBuf::from("l.cu")]);
        assert_eq!(launchers.includes[0], l.include_dir);
        assert_eq!(launchers.out_dir, Path::new("out"));
    }

    /// The variant `name` of `source` with `defines`.
    fn variant(name: &str, source: &str, defines: &[(&str, Option<&str>)]) -> KernelVariant {
        let mut v = KernelVariant::new(name, Path::new(source));
        for (k, value) in defines {
            v.define(k, *value);
        }
        v
    }

    #[test]
    fn variants_are_modules_after_the_sources_with_their_own_defines() {
        let variants = [
            variant(
                "gemm_p40",
                "k/gemm.cu",
                &[("GEMM_PRODUCER_REGS", Some("40")), ("FAST", None)],
            ),
            variant(
                "recorder_ring",
                "b/bench.cuh",
                &[("KTRACE_RECORDER", Some("KTRACE_RECORDER_RING"))],
            ),
        ];
        let p =
            plan_with_variants(&["k/gemm.cu", "k/values.cu"], &variants, &["sm_90a"], &[]).unwrap();
        let names: Vec<&str> = p.modules.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["gemm", "values", "gemm_p40", "recorder_ring"]);
        let images = Path::new("out").join("ktrace").join("kernels");
        assert_eq!(p.modules[2].1, images.join("gemm_p40.traced.cubin"));
        assert_eq!(p.modules[2].2, images.join("gemm_p40.untraced.cubin"));
        assert_eq!(p.jobs.len(), 8);
        let tile = ("TILE".to_string(), Some("128".to_string()));
        for job in &p.jobs[..4] {
            assert_eq!(job.nvcc.defines, std::slice::from_ref(&tile));
        }
        let (traced, untraced) = (&p.jobs[4], &p.jobs[5]);
        assert_eq!(traced.nvcc.source, Path::new("k/gemm.cu"));
        assert_eq!(traced.nvcc.variant, Variant::Traced);
        assert_eq!(untraced.nvcc.variant, Variant::Untraced);
        assert_eq!(traced.image, images.join("gemm_p40.traced.cubin"));
        assert_eq!(
            traced.manifest,
            images.join("gemm_p40.traced.cubin.manifest")
        );
        let own = [
            tile.clone(),
            ("GEMM_PRODUCER_REGS".to_string(), Some("40".to_string())),
            ("FAST".to_string(), None),
        ];
        assert_eq!(traced.nvcc.defines, own);
        assert_eq!(untraced.nvcc.defines, own);
        let args = traced.nvcc.args();
        let at = |flag: &str| args.iter().position(|a| a == flag).expect(flag);
        assert!(at("-DTILE=128") < at("-DGEMM_PRODUCER_REGS=40"), "{args:?}");
        assert!(args.contains(&"-DFAST".to_string()), "{args:?}");
        assert!(!args.contains(&"-x".to_string()), "{args:?}");
        // A header as the source is compiled as CUDA.
        let args = p.jobs[6].nvcc.args();
        assert_eq!(args[args.len() - 3..], ["-x", "cu", "b/bench.cuh"]);
        assert!(args.contains(&"-DKTRACE_RECORDER=KTRACE_RECORDER_RING".to_string()));
        let rust = &p.rust_file.1;
        assert!(rust.contains("pub const GEMM_P40: ::ktrace_runtime::KernelModule"));
        assert!(rust.contains("name: \"gemm_p40\","));
        assert!(rust.contains("/// Built from `k/gemm.cu` for sm_90a."));
        assert!(rust.contains("pub const RECORDER_RING: ::ktrace_runtime::KernelModule"));
    }

    #[test]
    fn a_variant_needs_a_name_of_its_own() {
        let err = |modules: &[&str], variants: &[KernelVariant]| match plan_with_variants(
            modules,
            variants,
            &["sm_90"],
            &[],
        ) {
            Err(Error::Config(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            err(&["k/gemm.cu"], &[variant("gemm", "k/other.cu", &[])]),
            "kernel variant gemm (of k/other.cu) gives the module name GEMM, as kernel source \
             k/gemm.cu does; rename one"
        );
        assert_eq!(
            err(
                &[],
                &[variant("a-b", "k.cu", &[]), variant("a_b", "k.cu", &[])]
            ),
            "kernel variant a_b (of k.cu) gives the module name A_B, as kernel variant a-b (of \
             k.cu) does; rename one"
        );
        for bad in ["", "x/y", ".hidden"] {
            let m = err(&[], &[variant(bad, "k.cu", &[])]);
            assert!(
                m.starts_with(&format!(
                    "kernel variant {bad} (of k.cu): a variant's name is"
                )),
                "{m}"
            );
        }
        // Two variants of one source are two modules.
        let two = [variant("k_a", "k.cu", &[]), variant("k_b", "k.cu", &[])];
        assert_eq!(
            plan_with_variants(&["k.cu"], &two, &["sm_90"], &[])
                .unwrap()
                .modules
                .len(),
            3
        );
    }

    #[test]
    fn images_of_dropped_modules_are_stale_and_nothing_else_is() {
        let listing: Vec<String> = [
            "a.traced.cubin",
            "a.untraced.cubin.pcmap",
            "old.traced.cubin",
            "old.untraced.cubin.predicated",
            "old_b.traced.fatbin.manifest",
            "notes.txt",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let modules = vec!["a".to_string(), "old_c".to_string()];
        assert_eq!(
            stale_images(&listing, &modules),
            [
                "old.traced.cubin",
                "old.untraced.cubin.predicated",
                "old_b.traced.fatbin.manifest"
            ]
        );
    }
}
