//! Checking architectures, building nvcc command lines and running nvcc;
//! finding it is [`find_nvcc`]'s part (re-exported here from the crate's
//! toolkit search).
//!
//! The command lines are plain data ([`NvccJob::args`]) so they can be tested
//! without a compiler; [`run`] is the thin layer that executes one.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use crate::executable::exe;
pub use crate::toolkit::{find_nvcc, toolkit_root, NvccSearch};

/// Architectures nvcc 12/13 knows, without the `sm_` prefix or suffix.
pub const KNOWN_ARCHS: &[u32] = &[
    50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121,
];

/// Default architecture: Hopper (H100, H200).
pub const DEFAULT_ARCH: &str = "sm_90";

/// Flags every kernel is compiled with, before the user's own.
///
/// `-std=c++17` for the compile-time region lookup; `-O3` for the device
/// code; `-DNDEBUG` because device asserts change the code (and make ptxas
/// serialise wgmma); `--expt-relaxed-constexpr` so constexpr host helpers
/// (CUTLASS, CuTe, the region table) can be used in device code;
/// `-lineinfo` so that every instruction carries its source line (and the
/// lines it was inlined at), from which the build maps each instruction to
/// the regions around it (the stall attribution). Line information does not
/// change the code: `tests/zero_cost.rs` compares SASS built with it.
pub const BASE_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O3",
    "-DNDEBUG",
    "--expt-relaxed-constexpr",
    "-lineinfo",
];

/// Variables nvcc reads that change what it builds; their values count as
/// part of the command line when deciding whether an image is up to date.
pub const ENV_READ_BY_NVCC: [&str; 3] = ["NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"];

/// A checked GPU architecture such as `sm_90a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arch {
    number: u32,
    suffix: String,
}

impl Arch {
    /// Parses `sm_90`, `sm_90a`, `sm_100f`, `compute_90` or `90`.
    pub fn parse(s: &str) -> Result<Self, ArchError> {
        let t = s.trim();
        let body = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))
            .unwrap_or(t);
        let digits: String = body.chars().take_while(|c| c.is_ascii_digit()).collect();
        let suffix = &body[digits.len()..];
        let number: u32 = digits.parse().map_err(|_| bad_arch(s))?;
        if !matches!(suffix, "" | "a" | "f") || !KNOWN_ARCHS.contains(&number) {
            return Err(bad_arch(s));
        }
        Ok(Self {
            number,
            suffix: suffix.to_string(),
        })
    }

    /// `sm_90a`.
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.number, self.suffix)
    }

    /// `-gencode=arch=compute_90a,code=sm_90a`.
    pub fn gencode(&self) -> String {
        format!(
            "-gencode=arch=compute_{n}{s},code=sm_{n}{s}",
            n = self.number,
            s = self.suffix
        )
    }
}

fn bad_arch(s: &str) -> ArchError {
    ArchError {
        given: s.to_string(),
    }
}

/// An architecture that [`Arch::parse`] does not know. Its `Display` lists
/// the ones it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchError {
    /// The text given, as it was.
    pub given: String,
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = KNOWN_ARCHS.iter().map(|n| format!("sm_{n}")).collect();
        write!(
            f,
            "unknown GPU architecture {:?}; expected sm_NN with an optional `a` or `f` suffix, \
             one of {} (sm_90a for wgmma on Hopper)",
            self.given,
            known.join(", ")
        )
    }
}

impl std::error::Error for ArchError {}

/// The nvcc a build runs, and what identifies it in the manifests that
/// decide whether an image is up to date.
#[derive(Debug, Clone)]
pub(crate) struct Toolchain {
    /// The nvcc binary.
    pub nvcc: PathBuf,
    /// The path, size and modification time of nvcc and of the ptxas and
    /// cicc beside it (they change when the toolkit is replaced, and cost a
    /// `stat` each, not a process), then nvcc's own environment variables.
    pub identity: String,
}

impl Toolchain {
    /// Identifies `nvcc`; `env` holds the variables nvcc reads
    /// (`NVCC_APPEND_FLAGS` …) with their values.
    pub fn new(nvcc: PathBuf, env: &[(&str, Option<String>)]) -> Self {
        let mut files = vec![nvcc.clone(), nvcc.with_file_name(exe("ptxas"))];
        if let Some(root) = toolkit_root(&nvcc) {
            files.push(root.join("nvvm").join("bin").join(exe("cicc")));
        }
        let mut identity = String::new();
        for f in &files {
            let stamp = std::fs::metadata(f).ok().map(|m| {
                let time = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
                (m.len(), time.unwrap_or_default().as_nanos())
            });
            identity.push_str(&format!("{}: {stamp:?}\n", f.display()));
        }
        for (name, value) in env {
            identity.push_str(&format!("{name}={value:?}\n"));
        }
        Self { nvcc, identity }
    }
}

/// Which build of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `-DKTRACE_ENABLED=1`: markers record.
    Traced,
    /// Markers compile to nothing.
    Untraced,
}

impl Variant {
    /// `traced` or `untraced`.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Traced => "traced",
            Variant::Untraced => "untraced",
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One nvcc invocation that turns a `.cu` file into a cubin or fatbin.
#[derive(Debug, Clone)]
pub struct NvccJob {
    /// The source (compiled as CUDA whatever its suffix: `-x cu` when it
    /// is not `.cu`).
    pub source: PathBuf,
    /// The image to write.
    pub output: PathBuf,
    /// Traced or not.
    pub variant: Variant,
    /// Target architectures (one gives a cubin, several a fatbin).
    pub archs: Vec<Arch>,
    /// Include directories (the device headers and the generated header first).
    pub includes: Vec<PathBuf>,
    /// `-D` definitions.
    pub defines: Vec<(String, Option<String>)>,
    /// Extra flags, after the base flags.
    pub flags: Vec<String>,
    /// Where nvcc writes the files it read, as a Make rule (`-MD -MF`).
    pub depfile: Option<PathBuf>,
}

impl NvccJob {
    /// The arguments after the nvcc path.
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        a.push(
            if self.archs.len() == 1 {
                "-cubin"
            } else {
                "-fatbin"
            }
            .to_string(),
        );
        for arch in &self.archs {
            a.push(arch.gencode());
        }
        a.extend(BASE_FLAGS.iter().map(|s| s.to_string()));
        if self.variant == Variant::Traced {
            a.push("-DKTRACE_ENABLED=1".into());
        }
        for inc in &self.includes {
            a.push(format!("-I{}", inc.display()));
        }
        for (k, v) in &self.defines {
            a.push(match v {
                Some(v) => format!("-D{k}={v}"),
                None => format!("-D{k}"),
            });
        }
        a.extend(self.flags.iter().cloned());
        if let Some(d) = &self.depfile {
            a.extend(["-MD".into(), "-MF".into(), d.display().to_string()]);
        }
        a.push("-o".into());
        a.push(self.output.display().to_string());
        if !self.source.extension().is_some_and(|e| e == "cu") {
            // nvcc picks the language by the suffix: a header (a kernel
            // variant's source, say) is CUDA too.
            a.extend(["-x".into(), "cu".into()]);
        }
        a.push(self.source.display().to_string());
        a
    }
}

/// What a failed nvcc run said.
#[derive(Debug, Clone)]
pub struct NvccFailure {
    /// The command line, for reproducing.
    pub command: String,
    /// nvcc's stderr and stdout (its messages carry file and line).
    pub output: String,
    /// Exit status, or the error that kept it from starting.
    pub status: String,
}

/// Runs one job with `nvcc`. Returns nvcc's messages (warnings, `-Xptxas -v`).
pub fn run(nvcc: &Path, job: &NvccJob) -> Result<String, NvccFailure> {
    let args = job.args();
    let command = std::iter::once(nvcc.display().to_string())
        .chain(args.iter().map(|a| shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(nvcc).args(&args).output();
    match out {
        Err(e) => Err(NvccFailure {
            command,
            output: String::new(),
            status: format!("could not start: {e}"),
        }),
        Ok(o) => {
            let mut text = String::from_utf8_lossy(&o.stderr).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stdout));
            if o.status.success() {
                Ok(text)
            } else {
                Err(NvccFailure {
                    command,
                    output: text,
                    status: o.status.to_string(),
                })
            }
        }
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
