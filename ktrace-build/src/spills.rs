//! ptxas's spill report of both builds of a module, and the functions whose
//! traced build spills registers to local memory where the untraced build
//! spills less.
//!
//! Every build passes `-Xptxas -v`, so nvcc's messages carry, for every
//! function ptxas compiles, a line `N bytes stack frame, S bytes spill
//! stores, L bytes spill loads` after `Function properties for NAME`. The
//! markers' context holds a few registers across the kernel; a kernel at
//! its register limit (`__launch_bounds__`, `-maxrregcount`, a producer
//! warpgroup at 24 registers through `setmaxnreg`) then spills in its
//! traced build, and tracing costs it more than the figures of kernels
//! that have room. A build that spills where the untraced one does not is
//! reported, so the user knows before measuring.

use std::collections::BTreeMap;

/// Bytes ptxas spills in one function: stored to local memory and loaded
/// back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spill {
    /// Bytes of spill stores.
    pub stores: u64,
    /// Bytes of spill loads.
    pub loads: u64,
}

/// A function whose traced build spills more bytes than its untraced build
/// for one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillGrowth {
    /// The function (its symbol; a kernel, or a device function ptxas
    /// compiled on its own, such as ktrace's out-of-line open).
    pub function: String,
    /// The architecture ptxas compiled it for (`sm_90a`); empty when the
    /// report does not say.
    pub arch: String,
    /// What the traced build spills.
    pub traced: Spill,
    /// What the untraced build spills (nothing when the function is only
    /// in the traced build).
    pub untraced: Spill,
}

impl SpillGrowth {
    /// The warning for module `module`.
    pub fn message(&self, module: &str) -> String {
        let arch = if self.arch.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.arch)
        };
        format!(
            "ktrace: module {module}, function {}{arch}: the traced build spills {} bytes of \
             registers to local memory ({} loaded back) where the untraced build spills {} \
             (ptxas -v): the markers' registers pushed it past its register limit, so tracing \
             costs it more than a kernel with room; measure it, and try fewer markers in its \
             register-limited code or anchors by the count (-DKTRACE_ANCHORS=KTRACE_ANCHORS_COUNT)",
            self.function, self.traced.stores, self.traced.loads, self.untraced.stores
        )
    }
}

/// Each function's spills in ptxas's `-v` report `text`, keyed by
/// (architecture, function). A function's architecture is the one of the
/// last `Compiling entry function '…' for 'ARCH'` line before it (empty
/// before any); its spills, the `bytes spill stores` line after its
/// `Function properties for NAME` line. Lines of anything else are
/// ignored, so the report may come inside nvcc's other messages.
pub fn parse_spills(text: &str) -> BTreeMap<(String, String), Spill> {
    let mut spills = BTreeMap::new();
    let mut arch = String::new();
    let mut function: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line
            .split_once("Compiling entry function")
            .map(|(_, rest)| rest)
        {
            if let Some((_, a)) = rest.rsplit_once(" for ") {
                arch = a.trim().trim_matches('\'').to_string();
            }
        } else if let Some((_, name)) = line.split_once("Function properties for ") {
            function = Some(name.trim().to_string());
        } else if line.contains("bytes spill stores") {
            let Some(name) = function.take() else {
                continue;
            };
            let bytes_before = |what: &str| -> Option<u64> {
                let (head, _) = line.split_once(what)?;
                head.rsplit(|c: char| c == ',' || c.is_whitespace())
                    .find(|w| !w.is_empty())?
                    .parse()
                    .ok()
            };
            if let (Some(stores), Some(loads)) = (
                bytes_before("bytes spill stores"),
                bytes_before("bytes spill loads"),
            ) {
                spills.insert((arch.clone(), name), Spill { stores, loads });
            }
        }
    }
    spills
}

/// The functions of `traced`'s report that spill more bytes than in
/// `untraced`'s (both ptxas `-v` reports of one module), in (architecture,
/// function) order. A function only in the traced build counts as
/// spilling nothing untraced.
pub fn spill_growth(traced: &str, untraced: &str) -> Vec<SpillGrowth> {
    let untraced = parse_spills(untraced);
    parse_spills(traced)
        .into_iter()
        .filter_map(|((arch, function), t)| {
            let u = untraced
                .get(&(arch.clone(), function.clone()))
                .copied()
                .unwrap_or_default();
            (t.stores > u.stores).then_some(SpillGrowth {
                function,
                arch,
                traced: t,
                untraced: u,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
