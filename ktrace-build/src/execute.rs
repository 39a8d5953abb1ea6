//! Carrying out a [`Plan`]: the thin layer that writes files and runs nvcc.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::manifest::{self, Freshness, Manifest};
use crate::maps;
use crate::nvcc::{self, NvccFailure, Toolchain};
use crate::pc_map::RegionSpan;
use crate::plan::{Job, Plan};
use crate::{depfile, io, launcher, parallel, write_if_changed, Error, Output, Variant};

/// Writes the headers, runs nvcc where an image is out of date, installs
/// the images, writes their instruction → region maps (from `spans`), writes the Rust file and builds the launcher library.
/// `toolchain` is set when the plan needs nvcc.
pub(crate) fn execute(
    plan: Plan,
    toolchain: Option<&Toolchain>,
    spans: &[RegionSpan],
    cargo: bool,
) -> Result<Output, Error> {
    for d in [&plan.include_dir, &plan.image_dir] {
        std::fs::create_dir_all(d).map_err(|e| io(format!("creating {}", d.display()), e))?;
    }
    for (path, text) in &plan.headers {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| io(format!("creating {}", dir.display()), e))?;
        }
        write_if_changed(path, text.as_bytes())?;
    }
    let kernels = match toolchain {
        Some(t) if !plan.jobs.is_empty() => build_kernels(t, &plan.jobs, &plan.include_dir, cargo)?,
        _ => Kernels::default(),
    };
    if let (Some(t), false) = (toolchain, plan.jobs.is_empty()) {
        let images: Vec<PathBuf> = plan.jobs.iter().map(|j| j.image.clone()).collect();
        maps::write_maps(&images, &t.nvcc, &plan.include_dir, spans, cargo)?;
    }
    let (rust_file, rust) = plan.rust_file;
    write_if_changed(&rust_file, rust.as_bytes())?;
    if let (Some(t), Some(launchers)) = (toolchain, &plan.launchers) {
        launcher::build(launchers, &t.nvcc, cargo)?;
    }
    Ok(Output {
        regions: plan.table,
        include_dir: plan.include_dir,
        rust_file,
        modules: plan.modules,
        nvcc_messages: kernels.messages,
        jobs: kernels.report,
        shared_shifts: Vec::new(),
        spill_growth: Vec::new(),
        predicated_events: Vec::new(),
        costs: Vec::new(),
        unpaired_regions: Vec::new(),
    })
}

/// What the kernel jobs gave: messages and outcome of each, in job order.
#[derive(Default)]
struct Kernels {
    messages: Vec<(PathBuf, Variant, String)>,
    report: Vec<(PathBuf, Variant, Freshness)>,
}

/// Runs the jobs whose image is out of date (in parallel, within Cargo's
/// jobserver), installs their images and records their manifests; prints a
/// rerun line for every file the images were built from, except the
/// generated ones in `generated`. Fails with the first failure in job order,
/// after recording every job that succeeded.
fn build_kernels(
    t: &Toolchain,
    jobs: &[Job],
    generated: &Path,
    cargo: bool,
) -> Result<Kernels, Error> {
    let mut digests = Digests::default();
    let commands: Vec<u64> = jobs
        .iter()
        .map(|j| manifest::command_digest(&t.identity, &j.nvcc.args()))
        .collect();
    let mut manifests: Vec<Option<Manifest>> =
        jobs.iter().map(|j| read_manifest(&j.manifest)).collect();
    let freshness: Vec<Freshness> = jobs
        .iter()
        .zip(&commands)
        .zip(&manifests)
        .map(|((job, &command), old)| {
            manifest::check(command, old.as_ref(), job.image.is_file(), &mut |p| {
                digests.of(p)
            })
        })
        .collect();
    let stale: Vec<usize> = (0..jobs.len()).filter(|&i| freshness[i].ran()).collect();
    for &i in &stale {
        // A failed or interrupted run must leave no manifest behind.
        manifests[i] = None;
        let _ = std::fs::remove_file(&jobs[i].manifest);
    }
    let results = parallel::run(stale.len(), |k| nvcc::run(&t.nvcc, &jobs[stale[k]].nvcc));
    let mut failure = None;
    for (&i, result) in stale.iter().zip(results) {
        match result {
            Ok(messages) => manifests[i] = record(&jobs[i], commands[i], messages, &mut digests)?,
            Err(f) => failure = failure.or(Some((i, f))),
        }
    }
    if let Some((i, failure)) = failure {
        return Err(compile_error(&jobs[i], failure));
    }
    if cargo {
        rerun_if_inputs_change(&manifests, generated);
    }
    Ok(report(jobs, manifests, freshness))
}

/// Installs a job's image and writes its manifest from nvcc's dependency
/// output. Without that output (an nvcc that writes none) no manifest is
/// kept, so the job runs again next time.
fn record(
    job: &Job,
    command: u64,
    messages: String,
    digests: &mut Digests,
) -> Result<Option<Manifest>, Error> {
    install(&job.nvcc.output, &job.image)?;
    let Some(depfile) = &job.nvcc.depfile else {
        return Ok(None);
    };
    let Ok(text) = std::fs::read_to_string(depfile) else {
        return Ok(None);
    };
    let _ = std::fs::remove_file(depfile);
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut inputs = Vec::new();
    for file in depfile::parse(&text) {
        let path = cwd.join(file);
        match digests.of(&path) {
            Some(d) => inputs.push((path, d)),
            None => return Ok(None),
        }
    }
    let manifest = Manifest {
        command,
        inputs,
        messages,
    };
    if let Some(text) = manifest.render() {
        write_if_changed(&job.manifest, text.as_bytes())?;
    }
    Ok(Some(manifest))
}

/// Each job's messages (replayed from its manifest when it did not run) and
/// outcome.
fn report(jobs: &[Job], manifests: Vec<Option<Manifest>>, freshness: Vec<Freshness>) -> Kernels {
    let mut k = Kernels::default();
    for ((job, m), f) in jobs.iter().zip(manifests).zip(freshness) {
        let (source, variant) = (job.nvcc.source.clone(), job.nvcc.variant);
        let messages = m.map(|m| m.messages).unwrap_or_default();
        k.messages.push((source.clone(), variant, messages));
        k.report.push((source, variant, f));
    }
    k
}

/// One rerun line for every input of every image (each once), so that a
/// header outside the scanned directories reruns the build script too.
/// Files under `generated` are left out: the build writes them, and a file
/// newer than the build script's start would rerun it every time.
fn rerun_if_inputs_change(manifests: &[Option<Manifest>], generated: &Path) {
    let generated = std::env::current_dir().unwrap_or_default().join(generated);
    let inputs: BTreeSet<&Path> = manifests
        .iter()
        .flatten()
        .flat_map(|m| m.inputs.iter().map(|(p, _)| p.as_path()))
        .filter(|p| !p.starts_with(&generated))
        .collect();
    for p in inputs {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn read_manifest(path: &Path) -> Option<Manifest> {
    Manifest::parse(&std::fs::read_to_string(path).ok()?)
}

fn compile_error(job: &Job, failure: NvccFailure) -> Error {
    Error::Compile {
        source: job.nvcc.source.clone(),
        variant: job.nvcc.variant,
        failure,
    }
}

/// The content digest of each file read in this build, each read once.
#[derive(Default)]
struct Digests(HashMap<PathBuf, Option<u64>>);

impl Digests {
    /// `path`'s digest; `None` when it cannot be read.
    fn of(&mut self, path: &Path) -> Option<u64> {
        *self
            .0
            .entry(path.to_path_buf())
            .or_insert_with(|| std::fs::read(path).ok().map(|b| manifest::digest(&b)))
    }
}

/// Moves what nvcc wrote to `image`, leaving `image` untouched when its
/// content is the same.
fn install(written: &Path, image: &Path) -> Result<(), Error> {
    let bytes =
        std::fs::read(written).map_err(|e| io(format!("reading {}", written.display()), e))?;
    write_if_changed(image, &bytes)?;
    let _ = std::fs::remove_file(written);
    Ok(())
}

/// Removes the images and sidecars of modules that an earlier build of this
/// output directory had and this one does not (a variant dropped or
/// renamed), so that nothing reading the image directory finds them. A
/// file that cannot be removed stays; it is only stale.
pub(crate) fn remove_stale_images(out: &Output) {
    let Some(dir) = out.modules.first().and_then(|(_, t, _)| t.parent()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let listing: Vec<String> = entries
        .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
        .collect();
    let modules: Vec<String> = out.modules.iter().map(|(m, _, _)| m.clone()).collect();
    for name in crate::plan::stale_images(&listing, &modules) {
        let _ = std::fs::remove_file(dir.join(name));
    }
}
