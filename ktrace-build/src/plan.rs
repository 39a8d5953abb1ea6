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
use crate::launcher::Launchers;
use crate::nvcc::{Arch, NvccJob, Variant};
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
    /// The nvcc runs, traced then untraced for each module.
    pub jobs: Vec<Job>,
    /// Each module: name, traced image, untraced image.
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

/// Decides the build. Fails on too many regions, a module source without a
/// usable name, or two modules with one name.
pub(crate) fn plan(inputs: &Inputs<'_>) -> Result<Plan, Error> {
    let table = RegionTable::from_sources(inputs.scanned).map_err(Error::Config)?;
    let include_dir = inputs.out_dir.join("ktrace").join("include");
    let image_dir = inputs.out_dir.join("ktrace").join("kernels");
    let headers = headers(&include_dir, &table, inputs.scanned)?;
    let mut includes = vec![include_dir.clone()];
    includes.extend(inputs.includes.iter().cloned());
    let entries = module_entries(inputs.modules, inputs.archs, &image_dir)?;
    let jobs = entries
        .iter()
        .flat_map(|m| m.jobs(inputs, &includes))
        .collect();
    let modules = entries
        .iter()
        .map(|m| (m.entry.name.clone(), m.traced.clone(), m.untraced.clone()))
        .collect();
    let codegen_entries: Vec<ModuleEntry> = entries.into_iter().map(|m| m.entry).collect();
    let rust = codegen::rust_file(&table, &codegen_entries).map_err(Error::Config)?;
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
    let regions = codegen::regions_header(table, &files).map_err(Error::Config)?;
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
    entry: ModuleEntry,
    traced: PathBuf,
    untraced: PathBuf,
}

impl Module {
    /// The two nvcc runs, traced first.
    fn jobs(&self, inputs: &Inputs<'_>, includes: &[PathBuf]) -> [Job; 2] {
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
                defines: inputs.defines.to_vec(),
                flags: inputs.flags.to_vec(),
                depfile: Some(beside(image, "d")),
            },
            image: image.clone(),
            manifest: beside(image, "manifest"),
        })
    }
}

/// Names every module after its file stem (`my-kernel.cu` → `my-kernel`,
/// constant `MY_KERNEL`), refusing two with one constant. One architecture
/// gives cubins, several give fatbins.
fn module_entries(
    sources: &[PathBuf],
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
        let const_name = codegen::const_name(stem);
        if let Some(prev) = modules.iter().find(|m| m.entry.const_name == const_name) {
            return Err(Error::DuplicateModule {
                name: const_name,
                first: prev.source.clone(),
                second: src.clone(),
            });
        }
        let traced = image_dir.join(format!("{stem}.traced.{ext}"));
        let untraced = image_dir.join(format!("{stem}.untraced.{ext}"));
        modules.push(Module {
            source: src.clone(),
            entry: ModuleEntry {
                name: stem.to_string(),
                const_name,
                source: src.display().to_string(),
                archs: arch_list.clone(),
                traced_path: format!("{:?}", traced.display().to_string()),
                untraced_path: format!("{:?}", untraced.display().to_string()),
            },
            traced,
            untraced,
        });
    }
    Ok(modules)
}

/// A file beside an image: `a.traced.cubin.tmp` (what nvcc writes before it
/// is installed), `.d` (nvcc's dependency output), `.manifest`.
fn beside(image: &Path, extension: &str) -> PathBuf {
    let mut name = image.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    PathBuf::from(name)
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
        let files: Vec<(&str, &str)> = modules.iter().map(|m| (*m, "KTRACE_M(\"m\");")).collect();
        let scanned = scanned(&files);
        let modules: Vec<PathBuf> = modules.iter().map(PathBuf::from).collect();
        let archs = archs(arch_names);
        plan(&Inputs {
            out_dir: Path::new("out"),
            modules: &modules,
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
        assert_eq!(job.flags, ["-lineinfo"]);
        assert!(p.needs_nvcc());
        assert!(p.launchers.is_none());
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
                include.join("ktrace/markers.cuh"),
                include.join("ktrace_layout.h"),
                include.join("ktrace_launcher.h"),
                include.join("ktrace_regions.h"),
            ]
        );
        let regions = &p.headers[12].1;
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
}
