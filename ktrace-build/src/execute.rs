//! Carrying out a [`Plan`]: the thin layer that writes files and runs nvcc.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::plan::{Job, Plan};
use crate::{env, io, launcher, nvcc, write_if_changed, Error, Output, Variant};

/// Writes the headers, runs nvcc, installs the images, writes the Rust file
/// and builds the launcher library. `nvcc` is set when the plan needs it.
pub(crate) fn execute(plan: Plan, nvcc: Option<&Path>, cargo: bool) -> Result<Output, Error> {
    for d in [&plan.include_dir, &plan.image_dir] {
        std::fs::create_dir_all(d).map_err(|e| io(format!("creating {}", d.display()), e))?;
    }
    for (path, text) in &plan.headers {
        write_if_changed(path, text.as_bytes())?;
    }
    let messages = match nvcc {
        Some(nvcc) if !plan.jobs.is_empty() => run_jobs(nvcc, &plan.jobs)?,
        _ => Vec::new(),
    };
    for job in &plan.jobs {
        install(&job.nvcc.output, &job.image)?;
    }
    let (rust_file, rust) = plan.rust_file;
    write_if_changed(&rust_file, rust.as_bytes())?;
    if let (Some(nvcc), Some(launchers)) = (nvcc, &plan.launchers) {
        launcher::build(launchers, nvcc, cargo)?;
    }
    Ok(Output {
        regions: plan.table,
        include_dir: plan.include_dir,
        rust_file,
        modules: plan.modules,
        nvcc_messages: messages,
    })
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

/// Runs nvcc jobs in parallel (`NUM_JOBS` or the machine's parallelism);
/// returns nvcc's messages in job order, or the first failure in job order.
fn run_jobs(nvcc: &Path, jobs: &[Job]) -> Result<Vec<(PathBuf, Variant, String)>, Error> {
    let workers = env::cargo("NUM_JOBS")
        .and_then(|v| v.into_string().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .clamp(1, jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        done.push((i, nvcc::run(nvcc, &job.nvcc)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results
        .into_iter()
        .map(|(i, result)| {
            let (source, variant) = (jobs[i].nvcc.source.clone(), jobs[i].nvcc.variant);
            match result {
                Ok(text) => Ok((source, variant, text)),
                Err(failure) => Err(Error::Compile {
                    source,
                    variant,
                    failure,
                }),
            }
        })
        .collect()
}
