//! Marker events that ptxas predicated instead of branching over them.
//!
//! Each event of a traced build sits behind a branch that a warp recording
//! nothing (tracing off, its warp or block sampled out, a conditional
//! marker's condition false) takes over the event: one instruction. Where
//! the event is a short straight block, ptxas may instead guard every one
//! of its instructions with the branch's predicate (if-conversion), and
//! such a warp then issues the whole event. That happens to stamped events
//! (`KTRACE_ANCHORS_STAMP`, the store recorder's default) and to events
//! without anchors, never to an event with the clock's anchors, whose
//! anchor path keeps the block from being straight (docs/performance.md,
//! "Stamped events"). An event's clock read is a
//! 32-bit read of `SR_CLOCKLO` (`CS2R.32`, `S2R` or `S2UR`; the open and
//! the flush read all 64 bits), so a predicated one is a predicated event.
//!
//! Only events inside a loop count (a natural loop of the function's
//! control flow, [`crate::sass_cfg`]): there a warp that records nothing
//! issues the event every iteration. A predicated event outside any loop
//! costs such a warp a few instructions once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::pc_map::{Disassembly, SassInstruction};
use crate::sass_cfg::cfg;

/// The predicated events of one function of a traced image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredicatedEvents {
    /// The function (its symbol).
    pub function: String,
    /// Events whose clock read is predicated.
    pub events: u32,
}

impl PredicatedEvents {
    /// The warning for module `module`.
    pub fn message(&self, module: &str) -> String {
        format!(
            "ktrace: module {module}, function {}: ptxas predicated {} marker event(s) in a loop \
             instead of branching over them (their clock read is `@P... SR_CLOCKLO` in the SASS), \
             so a warp that records nothing there (tracing off, sampled out, a condition false) \
             issues each whole every iteration; measure the traced build with tracing off, and if \
             it costs, build with time anchors by the clock (-DKTRACE_ANCHORS=KTRACE_ANCHORS_CLOCK), \
             whose events keep their branch",
            self.function, self.events
        )
    }
}

/// The functions of `disassembly` (a traced image's, parsed by
/// [`crate::pc_map::parse_disassembly`]) with predicated event clock reads, by
/// name.
pub fn predicated_events(disassembly: &Disassembly) -> Vec<PredicatedEvents> {
    let mut found: BTreeMap<String, u32> = BTreeMap::new();
    for f in &disassembly.functions {
        let g = cfg(f);
        let mut in_loop = vec![false; f.instructions.len()];
        for b in g.loops.iter().flat_map(|l| &l.blocks) {
            let block = &g.blocks[*b];
            in_loop[block.first..block.end].fill(true);
        }
        let events = f
            .instructions
            .iter()
            .zip(&in_loop)
            .filter(|(i, &looped)| looped && is_predicated_clock_read(i))
            .count() as u32;
        if events > 0 {
            *found.entry(f.name.clone()).or_default() += events;
        }
    }
    found
        .into_iter()
        .map(|(function, events)| PredicatedEvents { function, events })
        .collect()
}

/// The file beside `image` that holds its predicated clock reads, written
/// with its instruction → region map.
pub(crate) fn sidecar_path(image: &Path) -> PathBuf {
    let mut p = image.as_os_str().to_owned();
    p.push(".predicated");
    PathBuf::from(p)
}

/// `found` as the sidecar holds it: a line `FUNCTION COUNT` each.
pub(crate) fn render(found: &[PredicatedEvents]) -> String {
    found
        .iter()
        .map(|p| format!("{} {}\n", p.function, p.events))
        .collect()
}

/// The counts of a sidecar's text, by function.
fn parse(text: &str) -> BTreeMap<String, u32> {
    text.lines()
        .filter_map(|l| {
            let (f, n) = l.rsplit_once(' ')?;
            Some((f.to_string(), n.parse().ok()?))
        })
        .collect()
}

/// The functions whose traced image `traced` has more predicated clock
/// reads than its untraced image `untraced` (the kernel's own reads, if
/// any, are in both), from what the build wrote beside the two images when
/// it disassembled them; `None` when it wrote nothing there (no `nvdisasm`,
/// or a fatbin).
pub fn module_growth(traced: &Path, untraced: &Path) -> Option<Vec<PredicatedEvents>> {
    let read = |image: &Path| std::fs::read_to_string(sidecar_path(image)).ok();
    Some(growth(&parse(&read(traced)?), &parse(&read(untraced)?)))
}

/// The functions of `traced` with more predicated clock reads than in
/// `untraced`, and how many more.
fn growth(
    traced: &BTreeMap<String, u32>,
    untraced: &BTreeMap<String, u32>,
) -> Vec<PredicatedEvents> {
    traced
        .iter()
        .filter_map(|(f, &t)| {
            let u = untraced.get(f).copied().unwrap_or(0);
            (t > u).then(|| PredicatedEvents {
                function: f.clone(),
                events: t - u,
            })
        })
        .collect()
}

/// Whether `i` is `@P… OP R…, SR_CLOCKLO` with OP a 32-bit
/// special-register read.
fn is_predicated_clock_read(i: &SassInstruction) -> bool {
    i.guard.is_some()
        && matches!(i.opcode.as_str(), "CS2R.32" | "S2R" | "S2UR")
        && i.operands.split(',').any(|w| w.trim() == "SR_CLOCKLO")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pc_map::parse_disassembly;

    /// Four functions as nvdisasm writes them: one with a predicated
    /// stamped event in its loop and a branched one, one whose 64-bit
    /// clock read (the open's) is predicated and whose 32-bit one is in a
    /// loop branched to by offset, one with a predicated event outside its
    /// loop, one with nothing predicated.
    const NVDISASM: &str = "\
        .text.stamped:
        .L_x_4:
        /*0fa0*/                   @P0 CS2R.32 R84, SR_CLOCKLO ;
        /*0fb0*/                   @P0 CS2R.32 R85, SR_GLOBALTIMERLO ;
        /*10b0*/                   @P0 LOP3.LUT R87, R92, R6, RZ, 0xc0, !PT ;
        /*1110*/                   @P0 STG.E.EF.64 desc[UR10][R86.64], R84 ;
        /*1180*/                  @!P0 BRA `(.L_x_6) ;
        /*1190*/                   CS2R.32 R80, SR_CLOCKLO ;
        .L_x_6:
        /*1220*/                   @P1 BRA `(.L_x_4) ;
        .text.opened:
        /*0830*/                   @P1 CS2R R8, SR_CLOCKLO ;
        /*0840*/                   @!UP0 S2UR UR5, SR_CLOCKLO ;
        /*0850*/                   @P3 BRA 0x840 ;
        .text.once:
        .L_x_9:
        /*0100*/                   @P0 CS2R.32 R84, SR_CLOCKLO ;
        /*0110*/                   @P0 STG.E.EF.64 desc[UR10][R86.64], R84 ;
        .L_x_10:
        /*0120*/                   FFMA R1, R2, R3, R1 ;
        /*0130*/                   @P1 BRA `(.L_x_10) ;
        /*0140*/                   BRA `(.L_x_11) ;
        .L_x_11:
        /*0150*/                   EXIT ;
        .text.plain:
        /*0100*/                   S2UR UR5, SR_CLOCKLO ;
        /*0110*/                   @P2 IADD3 R1, R1, 0x1, RZ ;
";

    #[test]
    fn labels_name_the_instruction_after_them() {
        let d = parse_disassembly(NVDISASM);
        assert_eq!(
            d.functions[0].labels,
            vec![
                (".L_x_4".to_string(), 0xfa0),
                (".L_x_6".to_string(), 0x1220)
            ]
        );
        let loop_offsets = |k: usize| -> Vec<u32> {
            let f = &d.functions[k];
            let g = cfg(f);
            g.loops
                .iter()
                .flat_map(|l| &l.blocks)
                .flat_map(|&b| g.blocks[b].first..g.blocks[b].end)
                .map(|i| f.instructions[i].offset)
                .collect()
        };
        assert_eq!(
            loop_offsets(0),
            [0xfa0, 0xfb0, 0x10b0, 0x1110, 0x1180, 0x1190, 0x1220]
        );
        assert_eq!(loop_offsets(2), [0x120, 0x130]);
    }

    #[test]
    fn counts_predicated_32_bit_clock_reads_in_loops_per_function() {
        assert_eq!(
            predicated_events(&parse_disassembly(NVDISASM)),
            vec![
                PredicatedEvents {
                    function: "opened".into(),
                    events: 1
                },
                PredicatedEvents {
                    function: "stamped".into(),
                    events: 1
                },
            ]
        );
    }

    #[test]
    fn the_warning_names_module_function_and_count() {
        let found = predicated_events(&parse_disassembly(NVDISASM));
        let m = found[1].message("sgemm");
        assert!(m.contains("module sgemm, function stamped"), "{m}");
        assert!(m.contains("predicated 1 marker event(s) in a loop"), "{m}");
    }

    #[test]
    fn the_sidecar_round_trips_and_the_kernels_own_reads_do_not_count() {
        let traced = parse(&render(&predicated_events(&parse_disassembly(NVDISASM))));
        assert_eq!(traced.get("stamped"), Some(&1));
        // The untraced build reads the clock under a predicate in `opened`
        // itself: that read is the kernel's, not a marker's.
        let untraced = parse("opened 1\n");
        assert_eq!(
            growth(&traced, &untraced),
            vec![PredicatedEvents {
                function: "stamped".into(),
                events: 1
            }]
        );
    }

    #[test]
    fn nothing_predicated_is_nothing_reported() {
        let text = ".text.k:\n/*0010*/ @!P0 BRA 0x80 ;\n/*0020*/ CS2R.32 R2, SR_CLOCKLO ;\n";
        assert!(predicated_events(&parse_disassembly(text)).is_empty());
    }
}
