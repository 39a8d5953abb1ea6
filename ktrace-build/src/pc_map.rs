//! The instruction → region map of a kernel image, made at build time.
//!
//! Every image is compiled with `-lineinfo`, so each SASS instruction
//! carries its source line and the lines it was inlined at. The scanner
//! knows where each region's markers are. An instruction is in region `R`
//! when any of its lines (its own, or one of the call sites it was inlined
//! at) lies between a begin marker of `R` and the matching end marker, both
//! lines included; for `KTRACE_SCOPE`, between the marker and the closing
//! brace of its block. An instruction with a line in ktrace's device
//! headers (its own or one it was inlined through) is a marker's own
//! instruction: the traced build's cost.
//!
//! This is a pure module: [`parse_disassembly`] reads `nvdisasm -c -g -gi`
//! text, [`region_spans`] turns one file's markers into line spans,
//! [`map`] joins them, and [`PcMap::render`] writes the text that the build
//! embeds beside the image and ktrace-runtime reads (`format/pc_map.rs`
//! there; the format is in `docs/stalls.md`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::scan::{Marker, MarkerRole};

/// First line of a map: the format and its version.
pub const MAP_HEADER: &str = "ktrace-pcmap 1";

/// The map file of `image`: `a.untraced.cubin.pcmap` beside it.
pub fn map_path(image: &Path) -> PathBuf {
    let mut name = image.as_os_str().to_owned();
    name.push(".pcmap");
    PathBuf::from(name)
}

/// The lines between a region's markers in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionSpan {
    /// The file that holds the markers.
    pub file: PathBuf,
    /// The region's id.
    pub region: u16,
    /// The begin marker's line (1-based).
    pub first_line: u32,
    /// The end marker's line, or the closing brace of a scope's block.
    pub last_line: u32,
}

/// The spans of the regions that `markers` (one file's, in source order)
/// open and close: each begin with the next end of its name after it
/// (nested begins of one name pair innermost first), each `KTRACE_SCOPE`
/// from its line to the end of its block in `src`. A begin without an
/// end, an end without a begin, and marks add no span. `id` gives a
/// region's id by name.
pub fn region_spans(
    file: &Path,
    src: &str,
    markers: &[Marker],
    id: impl Fn(&str) -> Option<u16>,
) -> Vec<RegionSpan> {
    let mut open: Vec<(&str, u32)> = Vec::new();
    let mut spans = Vec::new();
    let mut push = |name: &str, first: u32, last: u32| {
        if let Some(region) = id(name) {
            spans.push(RegionSpan {
                file: file.to_path_buf(),
                region,
                first_line: first,
                last_line: last,
            });
        }
    };
    for m in markers {
        let line = m.line as u32;
        match m.role() {
            MarkerRole::Begin => open.push((&m.name, line)),
            MarkerRole::End => {
                if let Some(k) = open.iter().rposition(|(n, _)| *n == m.name) {
                    let (_, first) = open.remove(k);
                    push(&m.name, first, line);
                }
            }
            MarkerRole::Scope => push(&m.name, line, block_end_line(src, m.span.end)),
            MarkerRole::Mark => {}
        }
    }
    spans.sort_by_key(|s| (s.first_line, s.last_line, s.region));
    spans
}

/// The line of the `}` that closes the block open at byte `from` of `src`
/// (comments, string and character literals skipped); the last line when
/// the block does not close.
fn block_end_line(src: &str, from: usize) -> u32 {
    let b = src.as_bytes();
    let mut depth = 0usize;
    let mut i = from.min(b.len());
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => depth += 1,
            b'}' if depth == 0 => return line_of(src, i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    line_of(src, b.len())
}

/// The 1-based line of byte `at`.
fn line_of(src: &str, at: usize) -> u32 {
    1 + src.as_bytes()[..at.min(src.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count() as u32
}

/// One SASS instruction of a disassembly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassInstruction {
    /// Byte offset from the function's start.
    pub offset: u32,
    /// The opcode with its modifiers (`LDG.E.128`), without predicate and
    /// operands.
    pub opcode: String,
    /// Its guard predicate (`@P0`, `@!UP1`), if any.
    pub guard: Option<String>,
    /// Its operands as listed (`R84, SR_CLOCKLO`), without the `;`.
    pub operands: String,
    /// Its source locations, innermost first: its own line, then each
    /// line it was inlined at. Indices into [`Disassembly::files`]. Empty
    /// when the image has no line information for it.
    pub frames: Vec<(usize, u32)>,
}

/// One function's instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassFunction {
    /// The function's (mangled) name.
    pub name: String,
    /// Its instructions in address order.
    pub instructions: Vec<SassInstruction>,
    /// Its branch labels (`.L_x_5`), and the symbols of the functions
    /// placed in its section (`$kernel$callee`), with the offset of the
    /// instruction each names, in address order.
    pub labels: Vec<(String, u32)>,
}

/// A parsed `nvdisasm -c -g -gi` listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Disassembly {
    /// The source files named, in order of first appearance.
    pub files: Vec<PathBuf>,
    /// The functions, in listing order.
    pub functions: Vec<SassFunction>,
}

/// Parses the text of `nvdisasm -c -g -gi IMAGE`: functions from their
/// `.text.NAME:` labels, instructions from their `/*OFFSET*/` lines, and
/// each instruction's locations from the `//## File "F", line N [inlined
/// at ...]` lines before it (an instruction without such lines keeps the
/// locations of the one before it, as the line table does).
pub fn parse_disassembly(text: &str) -> Disassembly {
    let mut d = Disassembly::default();
    let mut pending: Vec<(usize, u32)> = Vec::new();
    let mut fresh = false;
    let mut current: Vec<(usize, u32)> = Vec::new();
    // Labels seen since the last instruction: they name the next one.
    let mut labels: Vec<String> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(name) = line
            .strip_prefix(".text.")
            .and_then(|l| l.strip_suffix(':'))
        {
            d.functions.push(SassFunction {
                name: name.to_string(),
                instructions: Vec::new(),
                labels: Vec::new(),
            });
            labels.clear();
            current.clear();
            pending.clear();
            fresh = false;
        } else if let Some(label) = line
            .strip_suffix(':')
            .filter(|l| l.starts_with(".L") || l.starts_with('$'))
        {
            labels.push(label.to_string());
        } else if let Some(rest) = line.strip_prefix("//## File ") {
            if !fresh {
                pending.clear();
                fresh = true;
            }
            if let Some((file, n)) = file_and_line(rest) {
                let idx = file_index(&mut d.files, file);
                pending.push((idx, n));
            }
        } else if let Some((offset, guard, opcode, operands)) = instruction(line) {
            if fresh {
                current = std::mem::take(&mut pending);
                fresh = false;
            }
            if let Some(f) = d.functions.last_mut() {
                f.labels
                    .extend(labels.drain(..).map(|label| (label, offset)));
                f.instructions.push(SassInstruction {
                    offset,
                    opcode,
                    guard,
                    operands,
                    frames: current.clone(),
                });
            }
        }
    }
    d
}

/// `"F", line N` (and anything after it) → (F, N).
fn file_and_line(rest: &str) -> Option<(&str, u32)> {
    let rest = rest.strip_prefix('"')?;
    let (file, after) = rest.split_once('"')?;
    let after = after.trim_start().strip_prefix(',')?.trim_start();
    let digits: String = after
        .strip_prefix("line")?
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((file, digits.parse().ok()?))
}

fn file_index(files: &mut Vec<PathBuf>, file: &str) -> usize {
    match files.iter().position(|f| f.as_os_str() == file) {
        Some(i) => i,
        None => {
            files.push(PathBuf::from(file));
            files.len() - 1
        }
    }
}

/// `/*0080*/ @!P0 LDC.64 R2, c[0x0][0x210] ;` → (0x80, `@!P0`, `LDC.64`,
/// `R2, c[0x0][0x210]`).
fn instruction(line: &str) -> Option<(u32, Option<String>, String, String)> {
    let rest = line.strip_prefix("/*")?;
    let (hex, body) = rest.split_once("*/")?;
    let offset = u32::from_str_radix(hex, 16).ok()?;
    let body = body.split(';').next()?.trim();
    let (mut op, mut rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    let mut guard = None;
    if op.starts_with('@') {
        guard = Some(op.to_string());
        (op, rest) = rest
            .trim_start()
            .split_once(char::is_whitespace)
            .unwrap_or((rest.trim_start(), ""));
    }
    if op.is_empty() || op.starts_with("/*") {
        return None;
    }
    Some((offset, guard, op.to_string(), rest.trim().to_string()))
}

/// What an instruction of the map is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcKind {
    /// The kernel's own code.
    User,
    /// A marker's instruction: one of its lines is in ktrace's device
    /// headers (user code is never inlined through them).
    Marker,
    /// No line information: it cannot be placed.
    Unknown,
}

impl PcKind {
    fn letter(self) -> char {
        match self {
            PcKind::User => 'u',
            PcKind::Marker => 'm',
            PcKind::Unknown => '?',
        }
    }
}

/// One instruction of the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcEntry {
    /// Byte offset from the function's start (CUPTI's `pcOffset`).
    pub offset: u32,
    /// The regions around it, ascending ids.
    pub regions: Vec<u16>,
    /// User code, a marker's instruction, or unknown.
    pub kind: PcKind,
    /// Its own source location (index into [`PcMap::files`], line).
    pub location: Option<(usize, u32)>,
    /// The opcode with its modifiers.
    pub opcode: String,
}

/// The map of one image: per function, each instruction's regions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PcMap {
    /// The source files the entries name.
    pub files: Vec<PathBuf>,
    /// Per function (mangled name), its instructions.
    pub functions: Vec<(String, Vec<PcEntry>)>,
}

/// Whether `path` is the device header of the block dispatch
/// (`ktrace/dispatch.cuh`), which inlines the user's kernel body.
pub fn is_dispatch_header(path: &Path) -> bool {
    path.ends_with("ktrace/dispatch.cuh")
}

/// Whether an instruction with source locations `frames` (innermost
/// first) is a marker's: one of its locations is in ktrace's device
/// headers (`is_ktrace`), counting only those inside the block dispatch's
/// call of the body (`is_dispatch`): the body, inlined through
/// `ktrace/dispatch.cuh`, is the user's code, but the dispatch's own
/// instructions are ktrace's.
pub fn is_marker_frames(
    frames: &[(usize, u32)],
    is_ktrace: impl Fn(usize) -> bool,
    is_dispatch: impl Fn(usize) -> bool,
) -> bool {
    match frames.iter().position(|&(file, _)| is_dispatch(file)) {
        Some(0) => true,
        Some(k) => frames[..k].iter().any(|&(file, _)| is_ktrace(file)),
        None => frames.iter().any(|&(file, _)| is_ktrace(file)),
    }
}

/// Joins a disassembly with the region spans of the kernel sources.
/// `is_ktrace_header` says whether a file is one of ktrace's device headers;
/// `line_count` gives a file's number of lines, when known: a location past
/// its file's end is dropped (an instruction left with none is unknown).
pub fn map(
    disassembly: &Disassembly,
    spans: &[RegionSpan],
    is_ktrace_header: impl Fn(&Path) -> bool,
    line_count: impl Fn(&Path) -> Option<u32>,
) -> PcMap {
    let files = &disassembly.files;
    let ktrace: Vec<bool> = files.iter().map(|f| is_ktrace_header(f)).collect();
    let dispatch: Vec<bool> = files.iter().map(|f| is_dispatch_header(f)).collect();
    let lines: Vec<Option<u32>> = files.iter().map(|f| line_count(f)).collect();
    // A line past its file's end is one the line table got wrong (nvcc
    // names the including file for some of a header's lines): not trusted.
    let real = |&(file, line): &(usize, u32)| lines[file].map_or(true, |n| line <= n);
    let functions = disassembly
        .functions
        .iter()
        .map(|f| {
            let entries = f
                .instructions
                .iter()
                .map(|i| {
                    let frames: Vec<(usize, u32)> = i.frames.iter().copied().filter(real).collect();
                    let mut regions: Vec<u16> = frames
                        .iter()
                        .flat_map(|&(file, line)| {
                            spans.iter().filter(move |s| {
                                s.file == files[file]
                                    && (s.first_line..=s.last_line).contains(&line)
                            })
                        })
                        .map(|s| s.region)
                        .collect();
                    regions.sort_unstable();
                    regions.dedup();
                    let kind = if frames.is_empty() {
                        PcKind::Unknown
                    } else if is_marker_frames(&frames, |file| ktrace[file], |file| dispatch[file])
                    {
                        PcKind::Marker
                    } else {
                        PcKind::User
                    };
                    PcEntry {
                        offset: i.offset,
                        regions,
                        kind,
                        location: frames.first().copied(),
                        opcode: i.opcode.clone(),
                    }
                })
                .collect();
            (f.name.clone(), entries)
        })
        .collect();
    PcMap {
        files: files.clone(),
        functions,
    }
}

impl PcMap {
    /// The map as text:
    ///
    /// ```text
    /// ktrace-pcmap 1
    /// file 0 /abs/kernels/gemm.cu
    /// function gemm_kernel
    /// 0080 3,5 u 0:41 LDG.E.128
    /// ```
    ///
    /// An instruction line is its hexadecimal offset, its region ids (`-`
    /// for none), its kind (`u` user code, `m` a marker's, `?` unknown),
    /// its location (`FILE:LINE`, or `-`) and its opcode.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str(MAP_HEADER);
        s.push('\n');
        for (i, f) in self.files.iter().enumerate() {
            let _ = writeln!(s, "file {i} {}", f.display());
        }
        for (name, entries) in &self.functions {
            let _ = writeln!(s, "function {name}");
            for e in entries {
                let regions = if e.regions.is_empty() {
                    "-".to_string()
                } else {
                    e.regions
                        .iter()
                        .map(u16::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                };
                let location = match e.location {
                    Some((f, l)) => format!("{f}:{l}"),
                    None => "-".into(),
                };
                let _ = writeln!(
                    s,
                    "{:04x} {regions} {} {location} {}",
                    e.offset,
                    e.kind.letter(),
                    e.opcode
                );
            }
        }
        s
    }

    /// A map that says why there is none: the header and one `none REASON`
    /// line.
    pub fn none(reason: &str) -> String {
        format!("{MAP_HEADER}\nnone {}\n", reason.replace('\n', " "))
    }
}

#[cfg(test)]
mod tests;
