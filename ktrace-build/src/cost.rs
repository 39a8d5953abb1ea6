//! What the markers cost, read from a traced image's SASS before it runs.
//!
//! For each kernel of a traced image: its loops that hold marker
//! instructions, each with the instructions of the kernel's own code in it
//! (`own`, a nested loop's counted once), the marker instructions a warp
//! that records issues per iteration (`traced`), and those a warp that
//! records nothing issues there (`idle`: on its path through the loop,
//! which at each marker's branch takes the side that leads back to the
//! kernel's code — the skip branches themselves, and events ptxas
//! predicated instead of branching over them); and the marker instructions
//! outside those loops (the open, the flush, events outside loops, the
//! recorder's own loops).
//!
//! A marker instruction is one with a source location in ktrace's device
//! headers ([`crate::pc_map::is_marker_frames`]). A loop is a natural loop
//! of the function's control flow ([`crate::sass_cfg`]); each loop counts
//! the blocks that no loop nested in it holds. A kernel whose body is run
//! through the block dispatch (`KTRACE_DISPATCH`, an instruction of
//! `ktrace/dispatch.cuh`) has a second copy of its body with no marker
//! instructions at all: blocks that record nothing run that one, and
//! `idle` is then what a warp that is not sampled pays inside a recording
//! block.
//!
//! These are instruction counts, not times: an event's global store and
//! its timer reads cost more than an integer instruction, and branches in
//! an unrolled loop cost the schedule more than their count. They say which
//! way a change moves and where; `docs/performance.md` puts them beside
//! what the GPU measured.
//!
//! Pure: [`estimate`] reads a parsed disassembly, [`render`] and [`parse`]
//! write and read the `.cost` file beside each traced image, and
//! [`KernelCost::summary`] is the line the build prints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::pc_map::{is_dispatch_header, is_marker_frames, Disassembly, SassFunction};
use crate::sass_cfg::cfg;

/// First line of a `.cost` file: the format and its version.
pub const COST_HEADER: &str = "ktrace-cost 1";

/// One loop that holds marker instructions, per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopCost {
    /// The kernel's own instructions in the loop, those of loops nested
    /// in it counted once.
    pub own: u32,
    /// Marker instructions a warp that records issues per iteration
    /// (those of nested loops are theirs).
    pub traced: u32,
    /// Marker instructions a warp that records nothing issues per
    /// iteration.
    pub idle: u32,
}

/// The marker cost of one kernel (function) of a traced image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCost {
    /// The function (its symbol).
    pub function: String,
    /// Whether the body runs through the block dispatch, so that blocks
    /// that record nothing run a copy without marker instructions.
    pub dispatched: bool,
    /// Instructions of the whole function, markers included.
    pub instructions: u32,
    /// Marker instructions outside the marked loops.
    pub outside: u32,
    /// The loops that hold marker instructions, in address order.
    pub loops: Vec<LoopCost>,
}

/// A loop whose idle warps issue at least this share (in thousandths) of
/// its own instructions is a large cost, if the whole grid pays it (no
/// block dispatch).
const LARGE_IDLE_PERMILLE: u64 = 20;

impl KernelCost {
    /// The loop to which `added` (a traced warp's or an idle warp's
    /// instructions) adds the most, relative to its own (the largest loop
    /// on ties).
    fn worst(&self, added: impl Fn(&LoopCost) -> u32) -> Option<&LoopCost> {
        self.loops.iter().max_by(|a, b| {
            share(added(a), a.own)
                .cmp(&share(added(b), b.own))
                .then(b.own.cmp(&a.own))
        })
    }

    /// One line for module `module`: the marked loops' worst case for a
    /// traced warp and for a warp that records nothing, and the marker
    /// instructions outside them.
    pub fn summary(&self, module: &str) -> String {
        let mut s = format!("ktrace: cost of {module}/{}: ", self.function);
        match (self.worst(|l| l.traced), self.worst(|l| l.idle)) {
            (Some(t), Some(i)) => {
                s += &format!(
                    "{} marked loop(s); a traced warp adds {} instructions to a loop of {} ({}), ",
                    self.loops.len(),
                    t.traced,
                    t.own,
                    percent(t.traced, t.own)
                );
                let who = if self.dispatched {
                    "an unsampled warp of a recording block"
                } else {
                    "a warp that records nothing"
                };
                s += &format!(
                    "{who} {} to a loop of {} ({})",
                    i.idle,
                    i.own,
                    percent(i.idle, i.own)
                );
            }
            _ => s += "no marked loop",
        }
        s += &format!(
            "; {} marker instructions outside them, in {} in all",
            self.outside, self.instructions
        );
        if self.dispatched {
            s += "; blocks that record nothing run no marker code (KTRACE_DISPATCH)";
        }
        s
    }

    /// Whether the cost is large enough for a `cargo:warning`: without
    /// the block dispatch, a loop in which every warp of a launch that
    /// traces nothing issues 2% more instructions. (What a traced warp
    /// adds is not judged: an event's instructions cost a tensor-core loop
    /// far less time than their count says, a memory-bound one more.)
    pub fn is_large(&self) -> bool {
        !self.dispatched
            && self
                .loops
                .iter()
                .any(|l| share(l.idle, l.own) >= LARGE_IDLE_PERMILLE)
    }
}

/// The one `cargo:warning` of a build whose kernels have large costs
/// (`costs`, with their modules), naming the first three and how many more;
/// `None` when none is large.
pub fn warning(costs: &[(String, KernelCost)]) -> Option<String> {
    let large: Vec<String> = costs
        .iter()
        .filter(|(_, c)| c.is_large())
        .map(|(m, c)| {
            let worst = c.worst(|l| l.idle).expect("a large cost has a loop");
            format!(
                "{m}/{} ({} instructions a loop of {})",
                c.function, worst.idle, worst.own
            )
        })
        .collect();
    let (first, more) = large.split_at(large.len().min(3));
    let first = first.first()?.clone()
        + &first[1..]
            .iter()
            .map(|s| format!(", {s}"))
            .collect::<String>();
    let more = if more.is_empty() {
        String::new()
    } else {
        format!(" and {} more", more.len())
    };
    Some(format!(
        "ktrace: with tracing off, every warp of {first}{more} issues marker instructions in its \
         loops; KTRACE_DISPATCH takes them out of the blocks that record nothing (measure both \
         forms: docs/performance.md, \"The block dispatch\"); each traced image's .cost file, \
         and Output::costs, hold every kernel's figures"
    ))
}

/// `part / whole` in thousandths (whole 0: part itself, so that any
/// instruction added to an empty loop counts as large).
fn share(part: u32, whole: u32) -> u64 {
    if whole == 0 {
        u64::from(part) * 1000
    } else {
        u64::from(part) * 1000 / u64::from(whole)
    }
}

fn percent(part: u32, whole: u32) -> String {
    if whole == 0 {
        return "+∞%".into();
    }
    format!("+{:.1}%", f64::from(part) * 100.0 / f64::from(whole))
}

/// The cost of every function of `disassembly` (a traced image's) that has
/// marker instructions. `is_ktrace` says whether a file of
/// [`Disassembly::files`] is one of ktrace's device headers.
pub fn estimate(disassembly: &Disassembly, is_ktrace: impl Fn(&Path) -> bool) -> Vec<KernelCost> {
    let files = &disassembly.files;
    let ktrace: Vec<bool> = files.iter().map(|f| is_ktrace(f)).collect();
    let dispatch: Vec<bool> = files.iter().map(|f| is_dispatch_header(f)).collect();
    disassembly
        .functions
        .iter()
        .filter_map(|f| {
            let marker: Vec<bool> = f
                .instructions
                .iter()
                .map(|i| is_marker_frames(&i.frames, |k| ktrace[k], |k| dispatch[k]))
                .collect();
            if !marker.iter().any(|&m| m) {
                return None;
            }
            let dispatched = f
                .instructions
                .iter()
                .any(|i| i.frames.iter().any(|&(k, _)| dispatch[k]));
            Some(function_cost(f, &marker, dispatched))
        })
        .collect()
}

fn function_cost(f: &SassFunction, marker: &[bool], dispatched: bool) -> KernelCost {
    let g = cfg(f);
    let starts_marker = |b: usize| marker[g.blocks[b].first];
    let ins_of = |b: usize| g.blocks[b].first..g.blocks[b].end;
    let mut in_marked = vec![false; g.blocks.len()];
    let mut loops = Vec::new();
    for l in &g.loops {
        // The blocks of this loop that no loop nested in it holds.
        let nested: Vec<&[usize]> = g
            .loops
            .iter()
            .filter(|m| m.header != l.header && l.blocks.contains(&m.header))
            .map(|m| m.blocks.as_slice())
            .collect();
        let exclusive: Vec<usize> = l
            .blocks
            .iter()
            .copied()
            .filter(|b| !nested.iter().any(|m| m.contains(b)))
            .collect();
        let count = |blocks: &[usize], want: bool| -> u32 {
            blocks
                .iter()
                .flat_map(|&b| ins_of(b))
                .filter(|&k| marker[k] == want)
                .count() as u32
        };
        let traced = count(&exclusive, true);
        let own = count(&l.blocks, false);
        // A loop of markers alone is the recorder's own (a flush's copy
        // loop): its instructions count outside the kernel's loops.
        if traced == 0 || own == 0 {
            continue;
        }
        for &b in &l.blocks {
            in_marked[b] = true;
        }
        // The path of a warp that records nothing: from the header, at a
        // marker's branch the side that leads back to the kernel's own
        // code (the branch's target when both sides are markers': the
        // side past the event).
        let mut seen = vec![false; g.blocks.len()];
        let mut stack = vec![l.header];
        while let Some(b) = stack.pop() {
            if !l.blocks.contains(&b) || std::mem::replace(&mut seen[b], true) {
                continue;
            }
            let succ = &g.blocks[b].succ;
            let last = g.blocks[b].end - 1;
            match *succ.as_slice() {
                [t, fall] if marker[last] => match (starts_marker(t), starts_marker(fall)) {
                    (true, false) => stack.push(fall),
                    (false, true) | (true, true) => stack.push(t),
                    (false, false) => stack.extend([t, fall]),
                },
                _ => stack.extend(succ.iter().copied()),
            }
        }
        let walked: Vec<usize> = exclusive.iter().copied().filter(|&b| seen[b]).collect();
        loops.push(LoopCost {
            own,
            traced,
            idle: count(&walked, true),
        });
    }
    let outside = (0..g.blocks.len())
        .filter(|&b| !in_marked[b])
        .flat_map(ins_of)
        .filter(|&k| marker[k])
        .count() as u32;
    KernelCost {
        function: f.name.clone(),
        dispatched,
        instructions: f.instructions.len() as u32,
        outside,
        loops,
    }
}

/// The `.cost` file beside a traced image.
pub fn cost_path(image: &Path) -> PathBuf {
    let mut p = image.as_os_str().to_owned();
    p.push(".cost");
    PathBuf::from(p)
}

/// The text of a `.cost` file: the header, then per kernel a `kernel`
/// line and a `loop` line per marked loop.
pub fn render(costs: &[KernelCost]) -> String {
    let mut s = format!("{COST_HEADER}\n");
    for c in costs {
        s += &format!(
            "kernel {} dispatch {} instructions {} outside {}\n",
            c.function,
            if c.dispatched { "block" } else { "none" },
            c.instructions,
            c.outside
        );
        for l in &c.loops {
            s += &format!("loop own {} traced {} idle {}\n", l.own, l.traced, l.idle);
        }
    }
    s
}

/// The kernels of a `.cost` file's text; `None` if it is not one.
pub fn parse(text: &str) -> Option<Vec<KernelCost>> {
    let mut lines = text.lines();
    if lines.next()? != COST_HEADER {
        return None;
    }
    let mut out: Vec<KernelCost> = Vec::new();
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |k: usize| w.get(k)?.parse::<u32>().ok();
        match w.as_slice() {
            ["kernel", name, "dispatch", d, "instructions", _, "outside", _] => {
                out.push(KernelCost {
                    function: name.to_string(),
                    dispatched: *d == "block",
                    instructions: num(5)?,
                    outside: num(7)?,
                    loops: Vec::new(),
                });
            }
            ["loop", "own", _, "traced", _, "idle", _] => out.last_mut()?.loops.push(LoopCost {
                own: num(2)?,
                traced: num(4)?,
                idle: num(6)?,
            }),
            _ => return None,
        }
    }
    Some(out)
}

/// The `.cost` files of every traced image in `kernels_dir` (a build's
/// `OUT_DIR/ktrace/kernels`) as one text: per module, in name order, a line
/// `module NAME` and the file's kernels. `None` when the directory holds no
/// `.cost` file (no build, or no `nvdisasm`).
pub fn collect(kernels_dir: &Path) -> Option<String> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(kernels_dir)
        .ok()?
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let module = name.strip_suffix(".traced.cubin.cost")?.to_string();
            Some((module, path))
        })
        .collect();
    if files.is_empty() {
        return None;
    }
    files.sort();
    let mut s = format!("{COST_HEADER}\n");
    for (module, path) in files {
        let text = std::fs::read_to_string(&path).ok()?;
        s += &format!("module {module}\n");
        s += text.strip_prefix(COST_HEADER)?.trim_start_matches('\n');
    }
    Some(s)
}

/// Compares `actual` (from [`collect`]) with the golden file `golden`, or
/// writes it there when `bless` is set. On a difference, the error lists
/// each changed line, old and new, under its module, and says how to
/// re-bless.
pub fn check_golden(golden: &Path, actual: &str, bless: bool) -> Result<(), String> {
    if bless {
        return std::fs::write(golden, actual)
            .map_err(|e| format!("writing {}: {e}", golden.display()));
    }
    let expected = std::fs::read_to_string(golden).map_err(|e| {
        format!(
            "{}: {e}; KTRACE_BLESS=1 writes it from this build",
            golden.display()
        )
    })?;
    if expected == actual {
        return Ok(());
    }
    let by_module = |text: &str| -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut current = String::new();
        for line in text.lines().skip(1) {
            match line.strip_prefix("module ") {
                Some(name) => {
                    current = name.to_string();
                    m.entry(current.clone()).or_default();
                }
                None => m.entry(current.clone()).or_default().push(line.to_string()),
            }
        }
        m
    };
    let (old, new) = (by_module(&expected), by_module(actual));
    let mut report = String::new();
    let modules: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for module in modules {
        match (old.get(module), new.get(module)) {
            (Some(_), None) => report += &format!("  {module}: in the golden file, not built\n"),
            (None, Some(_)) => report += &format!("  {module}: built, not in the golden file\n"),
            (Some(o), Some(n)) if o != n => {
                report += &format!("  {module}:\n");
                for (a, b) in o.iter().zip(n) {
                    if a != b {
                        report += &format!("    - {a}\n    + {b}\n");
                    }
                }
                for a in o.iter().skip(n.len()) {
                    report += &format!("    - {a}\n");
                }
                for b in n.iter().skip(o.len()) {
                    report += &format!("    + {b}\n");
                }
            }
            _ => {}
        }
    }
    Err(format!(
        "the markers' instruction cost changed against {}:\n{report}A change to the device \
         headers or to a kernel that moves these figures is re-blessed with KTRACE_BLESS=1, and \
         its commit quotes a GPU measurement of the kernels it changed",
        golden.display()
    ))
}

#[cfg(test)]
mod tests;
