//! Writing each image's instruction → region map beside it
//! (`a.untraced.cubin.pcmap`), its predicated clock reads
//! (`a.untraced.cubin.predicated`, [`crate::predicated`]) and the markers'
//! instruction cost (`a.traced.cubin.cost`, [`crate::cost`]): the thin layer
//! that reads the sources again and runs `nvdisasm` over [`crate::pc_map`].

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::executable::{exe, on_path};
use crate::pc_map::{self, map_path, PcMap, RegionSpan};
use crate::regions::RegionTable;
use crate::scan::SourceFile;
use crate::{cost, predicated};
use crate::{env, parallel, write_if_changed, Error};

/// The region spans of every scanned file, its path made canonical so that
/// it compares with the paths nvcc wrote into the line tables.
pub(crate) fn spans(scanned: &[SourceFile], table: &RegionTable) -> Vec<RegionSpan> {
    scanned
        .iter()
        .filter(|f| !f.markers.is_empty())
        .flat_map(|f| {
            let src = std::fs::read_to_string(&f.path).unwrap_or_default();
            let path = canonical(&f.path);
            pc_map::region_spans(&path, &src, &f.markers, |n| table.id(n))
        })
        .collect()
}

/// Writes the map of every image whose map is missing, older than the
/// image or than the running build script, or says there is none. `nvcc` locates `nvdisasm` (beside it,
/// else on `PATH`, else where `scripts/setup-cuda.sh` puts it); without it, or for a fatbin, the map says why there is
/// none, with one warning.
pub(crate) fn write_maps(
    images: &[PathBuf],
    nvcc: &Path,
    include_dir: &Path,
    spans: &[RegionSpan],
    cargo: bool,
) -> Result<(), Error> {
    let stale: Vec<&PathBuf> = images.iter().filter(|i| is_stale(i)).collect();
    if stale.is_empty() {
        return Ok(());
    }
    let nvdisasm = find_nvdisasm(nvcc);
    let include_dir = canonical(include_dir);
    let maps = parallel::run(stale.len(), |k| {
        let image = stale[k];
        match &nvdisasm {
            _ if image.extension().is_some_and(|e| e != "cubin") => Err(
                "a fatbin (several architectures): maps are made for cubins, one architecture"
                    .to_string(),
            ),
            None => Err(format!(
                "{} was not found beside nvcc, on PATH or in .cuda/tools",
                exe("nvdisasm")
            )),
            Some(tool) => disassemble(tool, image).map(|text| {
                let mut d = pc_map::parse_disassembly(&text);
                let found = predicated::predicated_events(&d);
                d.files = d.files.iter().map(|f| canonical(f)).collect();
                let lines = |f: &Path| {
                    std::fs::read(f)
                        .ok()
                        .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u32 + 1)
                };
                let map = pc_map::map(&d, spans, |f| f.starts_with(&include_dir), lines);
                let costs = cost::estimate(&d, |f| f.starts_with(&include_dir));
                (
                    map.render(),
                    predicated::render(&found),
                    cost::render(&costs),
                )
            }),
        }
    });
    let mut warned = false;
    for (image, map) in stale.into_iter().zip(maps) {
        let text = match map {
            Ok((text, found, costs)) => {
                write_if_changed(&predicated::sidecar_path(image), found.as_bytes())?;
                write_if_changed(&cost::cost_path(image), costs.as_bytes())?;
                text
            }
            Err(why) => {
                if cargo && !warned {
                    println!(
                        "cargo:warning=ktrace: no instruction → region map for {} (stall \
                         attribution needs it): {why}",
                        image.display()
                    );
                    warned = true;
                }
                PcMap::none(&why)
            }
        };
        write_if_changed(&map_path(image), text.as_bytes())?;
    }
    Ok(())
}

/// Whether `image`'s map must be made again.
fn is_stale(image: &Path) -> bool {
    let map = map_path(image);
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (Some(m), Some(i)) = (modified(&map), modified(image)) else {
        return true;
    };
    let says_none = std::fs::read_to_string(&map)
        .map(|t| t.lines().nth(1).map_or(true, |l| l.starts_with("none")))
        .unwrap_or(true);
    // A build script newer than the map was rebuilt, ktrace-build with it:
    // its maps may differ.
    let script = std::env::current_exe().ok().and_then(|p| modified(&p));
    m < i
        || says_none
        || script.is_some_and(|s| m < s)
        || !predicated::sidecar_path(image).is_file()
        || !cost::cost_path(image).is_file()
}

fn find_nvdisasm(nvcc: &Path) -> Option<PathBuf> {
    let beside = nvcc.with_file_name(exe("nvdisasm"));
    if beside.is_file() {
        return Some(beside);
    }
    on_path(env::path().as_deref(), "nvdisasm")
        .or_else(|| Some(crate::toolkit::setup_cuda_tool("nvdisasm")).filter(|p| p.is_file()))
}

/// `nvdisasm -c -g -gi IMAGE`: the code with each instruction's lines.
fn disassemble(nvdisasm: &Path, image: &Path) -> Result<String, String> {
    let out = Command::new(nvdisasm)
        .args(["-c", "-g", "-gi"])
        .arg(image)
        .output()
        .map_err(|e| format!("{} could not start: {e}", nvdisasm.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            nvdisasm.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| "nvdisasm wrote text that is not UTF-8".into())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
