//! Whether a kernel image is up to date.
//!
//! Each image has a manifest beside it (`k.traced.cubin.manifest`): a digest
//! of the nvcc command line and of the toolchain, the digest of every input
//! nvcc read (the source and each header it included, from nvcc's dependency
//! output, the generated region header among them), and nvcc's messages.
//! A later build skips the nvcc run when the manifest's command digest
//! matches, every input still has its recorded digest, and the image exists.
//!
//! Inputs are compared by content, not by modification time: `touch`, a
//! `git checkout` that restores a file, or a generated header rewritten with
//! the same text then rebuild nothing, and a file whose content changed while
//! its time and size did not (`cp -p`, archives) is still rebuilt. Reading
//! the inputs costs little beside nvcc (the example kernels' roughly 200
//! headers, toolkit ones included, take milliseconds). The digest is 64-bit
//! FNV-1a: specified, so a manifest means the same across Rust releases, and
//! any change of a single byte changes it.
//!
//! Everything here is pure: [`check`] is given the files' current digests
//! through a closure, so which jobs run is tested without nvcc.

use std::fmt;
use std::path::{Path, PathBuf};

/// First line of every manifest; a manifest without it is ignored.
const HEADER: &str = "ktrace-build manifest 1";

/// The 64-bit FNV-1a digest of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The digest of a command: the toolchain's identity and the arguments.
pub(crate) fn command_digest(toolchain: &str, args: &[String]) -> u64 {
    let mut text = toolchain.to_string();
    for a in args {
        text.push('\0');
        text.push_str(a);
    }
    digest(text.as_bytes())
}

/// How an image was built: what [`check`] compares against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Manifest {
    /// [`command_digest`] of the run.
    pub command: u64,
    /// Every file nvcc read, with the digest of its content.
    pub inputs: Vec<(PathBuf, u64)>,
    /// nvcc's messages (warnings, `-Xptxas -v`), replayed when skipped.
    pub messages: String,
}

impl Manifest {
    /// The manifest as text; `None` when an input's path cannot be written
    /// on one line (then no manifest is kept and the job always runs).
    pub fn render(&self) -> Option<String> {
        let mut text = format!("{HEADER}\ncommand {:016x}\n", self.command);
        for (path, d) in &self.inputs {
            let p = path.to_str().filter(|p| !p.contains(['\n', '\r']))?;
            text.push_str(&format!("input {d:016x} {p}\n"));
        }
        text.push_str("messages\n");
        text.push_str(&self.messages);
        Some(text)
    }

    /// Reads what [`Manifest::render`] wrote; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let mut rest = text.strip_prefix(HEADER)?.strip_prefix('\n')?;
        let mut command = None;
        let mut inputs = Vec::new();
        loop {
            let (line, after) = rest.split_once('\n')?;
            rest = after;
            if line == "messages" {
                break;
            } else if let Some(hex) = line.strip_prefix("command ") {
                command = Some(u64::from_str_radix(hex, 16).ok()?);
            } else {
                let (hex, path) = line.strip_prefix("input ")?.split_once(' ')?;
                inputs.push((PathBuf::from(path), u64::from_str_radix(hex, 16).ok()?));
            }
        }
        Some(Self {
            command: command?,
            inputs,
            messages: rest.to_string(),
        })
    }
}

/// Whether a kernel job runs, and why, as [`crate::Output::jobs`] reports
/// it (see "Rebuilds" in the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Freshness {
    /// Skipped: the image exists and nothing it was built from changed.
    UpToDate,
    /// Built: no manifest from an earlier build (the first build, or the
    /// last one failed or was interrupted).
    NoManifest,
    /// Built: the image is missing.
    NoImage,
    /// Built: the nvcc command line, nvcc itself or its environment changed.
    CommandChanged,
    /// Built: this input's content changed, or it can no longer be read.
    InputChanged(PathBuf),
}

impl Freshness {
    /// Whether nvcc ran for the job.
    pub fn ran(&self) -> bool {
        *self != Freshness::UpToDate
    }
}

impl fmt::Display for Freshness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Freshness::UpToDate => f.write_str("up to date"),
            Freshness::NoManifest => f.write_str("not built before"),
            Freshness::NoImage => f.write_str("image missing"),
            Freshness::CommandChanged => f.write_str("command line or toolchain changed"),
            Freshness::InputChanged(p) => write!(f, "{} changed", p.display()),
        }
    }
}

/// Decides one job: up to date when `manifest` was written for the command
/// `command`, the image exists, and `current` gives every recorded input its
/// recorded digest (`None`: the file cannot be read). Stops at the first
/// difference, so unchanged inputs after it are not read.
pub(crate) fn check(
    command: u64,
    manifest: Option<&Manifest>,
    image_exists: bool,
    current: &mut dyn FnMut(&Path) -> Option<u64>,
) -> Freshness {
    let Some(manifest) = manifest else {
        return Freshness::NoManifest;
    };
    if manifest.command != command {
        return Freshness::CommandChanged;
    }
    if !image_exists {
        return Freshness::NoImage;
    }
    manifest
        .inputs
        .iter()
        .find(|(path, d)| current(path) != Some(*d))
        .map_or(Freshness::UpToDate, |(path, _)| {
            Freshness::InputChanged(path.clone())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn manifest() -> Manifest {
        Manifest {
            command: 7,
            inputs: vec![
                (PathBuf::from("k.cu"), digest(b"kernel")),
                (PathBuf::from("inc/a b.cuh"), digest(b"header")),
            ],
            messages: "ptxas info : Used 8 registers\nsecond line\n".into(),
        }
    }

    /// Runs [`check`] with `files` as the current contents, returning the
    /// outcome and the files it read.
    fn check_with(
        command: u64,
        m: Option<&Manifest>,
        image: bool,
        files: &[(&str, &[u8])],
    ) -> (Freshness, Vec<PathBuf>) {
        let files: HashMap<PathBuf, u64> = files
            .iter()
            .map(|(p, text)| (PathBuf::from(p), digest(text)))
            .collect();
        let mut read = Vec::new();
        let got = check(command, m, image, &mut |p| {
            read.push(p.to_path_buf());
            files.get(p).copied()
        });
        (got, read)
    }

    #[test]
    fn digests_are_fnv1a() {
        assert_eq!(digest(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(digest(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(digest(b"ab"), digest(b"ba"));
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let c = command_digest("nvcc 1", &args(&["-O3", "-DX"]));
        assert_eq!(c, command_digest("nvcc 1", &args(&["-O3", "-DX"])));
        assert_ne!(c, command_digest("nvcc 2", &args(&["-O3", "-DX"])));
        assert_ne!(c, command_digest("nvcc 1", &args(&["-O3-DX"])));
    }

    #[test]
    fn manifests_read_back_what_they_wrote() {
        let m = manifest();
        let text = m.render().unwrap();
        assert!(text.starts_with("ktrace-build manifest 1\ncommand 0000000000000007\ninput "));
        assert_eq!(Manifest::parse(&text), Some(m.clone()));
        for bad in [
            "",
            "ktrace-build manifest 2\n",
            &text.replace("command", "cmd"),
        ] {
            assert_eq!(Manifest::parse(bad), None, "{bad:?}");
        }
        let truncated = &text[..text.find("messages").unwrap()];
        assert_eq!(Manifest::parse(truncated), None);
        let newline = Manifest {
            inputs: vec![(PathBuf::from("a\nb.cuh"), 1)],
            ..m
        };
        assert_eq!(newline.render(), None);
    }

    #[test]
    fn unchanged_inputs_and_command_are_up_to_date() {
        let m = manifest();
        let files: &[(&str, &[u8])] = &[("k.cu", b"kernel"), ("inc/a b.cuh", b"header")];
        let (got, read) = check_with(7, Some(&m), true, files);
        assert_eq!(got, Freshness::UpToDate);
        assert!(!got.ran());
        assert_eq!(read.len(), 2, "every input is compared");
    }

    #[test]
    fn a_changed_or_missing_input_names_it() {
        let m = manifest();
        let changed: &[(&str, &[u8])] = &[("k.cu", b"kernel"), ("inc/a b.cuh", b"header 2")];
        let (got, _) = check_with(7, Some(&m), true, changed);
        assert_eq!(got, Freshness::InputChanged(PathBuf::from("inc/a b.cuh")));
        assert_eq!(got.to_string(), "inc/a b.cuh changed");
        let gone: &[(&str, &[u8])] = &[("inc/a b.cuh", b"header")];
        let (got, read) = check_with(7, Some(&m), true, gone);
        assert_eq!(got, Freshness::InputChanged(PathBuf::from("k.cu")));
        assert_eq!(read, [PathBuf::from("k.cu")], "stops at the first change");
    }

    #[test]
    fn no_manifest_a_new_command_or_no_image_rebuild_without_reading_inputs() {
        let m = manifest();
        let files: &[(&str, &[u8])] = &[("k.cu", b"kernel"), ("inc/a b.cuh", b"header")];
        for (command, m, image, want) in [
            (7, None, true, Freshness::NoManifest),
            (8, Some(&m), true, Freshness::CommandChanged),
            (7, Some(&m), false, Freshness::NoImage),
        ] {
            let (got, read) = check_with(command, m, image, files);
            assert_eq!(got, want);
            assert!(got.ran());
            assert!(read.is_empty(), "{want:?} read {read:?}");
        }
    }
}
