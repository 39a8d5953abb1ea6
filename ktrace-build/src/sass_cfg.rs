//! The control flow of one SASS function: basic blocks, their edges, and
//! the natural loops (a back edge's target dominates its source; the loop
//! is every block that reaches the source without passing the target).
//!
//! ptxas lays code out of order (a rare path moved to the function's end
//! and a branch back), so a loop is found from the graph, not from the
//! address range between a backward branch and its target.
//!
//! Pure: built from a parsed [`SassFunction`].

use std::collections::BTreeMap;

use crate::pc_map::{SassFunction, SassInstruction};

/// A basic block: instructions `first..end` (indices into the function's
/// instructions) and the blocks control may go to next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Index of its first instruction.
    pub first: usize,
    /// One past its last instruction.
    pub end: usize,
    /// Successor blocks: the branch's target, then the fall-through.
    pub succ: Vec<usize>,
}

/// A natural loop: its header block and every block of its body (the
/// header included), sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    /// The block every iteration enters by.
    pub header: usize,
    /// The blocks of the body, the header among them, in order.
    pub blocks: Vec<usize>,
}

/// The function's blocks in address order, and its loops in order of their
/// headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cfg {
    /// The basic blocks.
    pub blocks: Vec<Block>,
    /// The natural loops, back edges to one header merged.
    pub loops: Vec<Loop>,
}

/// The offset a branch or call operand names: a label (`` `(.L_x_5) ``,
/// `` `($kernel$callee) ``) or an offset (`0x50`).
fn jump_target(f: &SassFunction, operand: &str) -> Option<u32> {
    let t = operand.trim().trim_start_matches('`');
    if let Some(label) = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        return f.labels.iter().find(|(l, _)| l == label).map(|&(_, o)| o);
    }
    u32::from_str_radix(t.strip_prefix("0x")?, 16).ok()
}

/// The target of a branch instruction (`BRA`, any modifiers; its last
/// operand), `None` for other instructions and indirect branches.
fn branch_target(f: &SassFunction, i: &SassInstruction) -> Option<u32> {
    if !i.opcode.starts_with("BRA") {
        return None;
    }
    jump_target(f, i.operands.rsplit(',').next()?)
}

/// The target of a call to a function placed in the same section
/// (`CALL.REL`, `CALL.REL.NOINC`).
fn call_target(f: &SassFunction, i: &SassInstruction) -> Option<u32> {
    if !i.opcode.starts_with("CALL.REL") {
        return None;
    }
    jump_target(f, &i.operands)
}

/// Whether `i` ends a basic block: a branch, exit, return or indirect jump.
fn ends_block(i: &SassInstruction) -> bool {
    let op = i.opcode.as_str();
    ["BRA", "EXIT", "RET", "BRX", "JMX", "JMP", "KILL"]
        .iter()
        .any(|e| op == *e || op.starts_with(&format!("{e}.")))
}

/// Whether control may go on to the next instruction after `i`: not after
/// an unconditional branch, exit, return or indirect jump.
fn falls_through(i: &SassInstruction) -> bool {
    if !ends_block(i) {
        return true;
    }
    // A guard, or a uniform predicate operand (`BRA.U !UP0, 0x50`), makes
    // it conditional; `@PT` is always true.
    let guarded = i.guard.as_deref().is_some_and(|g| g != "@PT");
    let pred_operand = i.operands.split(',').count() > 1
        && i.operands
            .split(',')
            .next()
            .is_some_and(|p| p.trim().trim_start_matches('!').contains('P'));
    guarded || pred_operand
}

/// The control-flow graph and natural loops of `f`.
pub fn cfg(f: &SassFunction) -> Cfg {
    let ins = &f.instructions;
    if ins.is_empty() {
        return Cfg {
            blocks: Vec::new(),
            loops: Vec::new(),
        };
    }
    let index: BTreeMap<u32, usize> = ins.iter().enumerate().map(|(k, i)| (i.offset, k)).collect();
    let mut leader = vec![false; ins.len()];
    leader[0] = true;
    for (k, i) in ins.iter().enumerate() {
        if let Some(&t) = branch_target(f, i)
            .or_else(|| call_target(f, i))
            .and_then(|t| index.get(&t))
        {
            leader[t] = true;
        }
        if ends_block(i) && k + 1 < ins.len() {
            leader[k + 1] = true;
        }
    }
    let starts: Vec<usize> = (0..ins.len()).filter(|&k| leader[k]).collect();
    let block_of_ins = |k: usize| starts.partition_point(|&s| s <= k) - 1;
    let mut blocks: Vec<Block> = starts
        .iter()
        .enumerate()
        .map(|(b, &first)| Block {
            first,
            end: starts.get(b + 1).copied().unwrap_or(ins.len()),
            succ: Vec::new(),
        })
        .collect();
    let n = blocks.len();
    for b in 0..n {
        let last = &ins[blocks[b].end - 1];
        let mut succ = Vec::new();
        if let Some(&t) = branch_target(f, last).and_then(|t| index.get(&t)) {
            succ.push(block_of_ins(t));
        }
        if falls_through(last) && b + 1 < n && !succ.contains(&(b + 1)) {
            succ.push(b + 1);
        }
        blocks[b].succ = succ;
    }
    // Entries: the function's start, and each function placed in its
    // section that a call reaches (ptxas puts a `__noinline__` callee
    // there).
    let mut entries = vec![0];
    for i in ins {
        if let Some(&t) = call_target(f, i).and_then(|t| index.get(&t)) {
            let b = block_of_ins(t);
            if !entries.contains(&b) {
                entries.push(b);
            }
        }
    }
    let loops = natural_loops(&blocks, &entries);
    Cfg { blocks, loops }
}

/// Dominator sets of every block reachable from an entry (`preds`: each
/// block's predecessors), as bit vectors (an entry is dominated by itself alone; a block no entry reaches
/// dominates nothing and is dominated by nothing).
fn dominators(blocks: &[Block], preds: &[Vec<usize>], entries: &[usize]) -> Vec<Vec<bool>> {
    let n = blocks.len();
    let mut reach = vec![false; n];
    let mut stack = entries.to_vec();
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut reach[b], true) {
            stack.extend(blocks[b].succ.iter().copied());
        }
    }
    let mut dom: Vec<Vec<bool>> = (0..n)
        .map(|b| {
            if entries.contains(&b) {
                (0..n).map(|k| k == b).collect()
            } else {
                vec![reach[b]; n]
            }
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..n {
            if !reach[b] || entries.contains(&b) {
                continue;
            }
            let mut d = vec![true; n];
            for &p in preds[b].iter().filter(|&&p| reach[p]) {
                for k in 0..n {
                    d[k] &= dom[p][k];
                }
            }
            d[b] = true;
            if d != dom[b] {
                dom[b] = d;
                changed = true;
            }
        }
    }
    dom
}

/// The natural loops of `blocks`, back edges to one header merged.
fn natural_loops(blocks: &[Block], entries: &[usize]) -> Vec<Loop> {
    let n = blocks.len();
    let mut preds = vec![Vec::new(); n];
    for (b, blk) in blocks.iter().enumerate() {
        for &s in &blk.succ {
            preds[s].push(b);
        }
    }
    let dom = dominators(blocks, &preds, entries);
    let mut by_header: BTreeMap<usize, Vec<bool>> = BTreeMap::new();
    for (src, blk) in blocks.iter().enumerate() {
        for &h in &blk.succ {
            if !dom[src][h] {
                continue;
            }
            let body = by_header.entry(h).or_insert_with(|| {
                let mut v = vec![false; n];
                v[h] = true;
                v
            });
            let mut stack = vec![src];
            while let Some(b) = stack.pop() {
                if !std::mem::replace(&mut body[b], true) {
                    stack.extend(preds[b].iter().copied());
                }
            }
        }
    }
    by_header
        .into_iter()
        .map(|(header, body)| Loop {
            header,
            blocks: (0..n).filter(|&b| body[b]).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pc_map::parse_disassembly;

    /// A loop whose rare path ptxas moved past the exit, with a spin loop
    /// nested in it.
    const LISTING: &str = "\
        .text.k:
        /*0000*/                   MOV R1, RZ ;
        .L_x_0:
        /*0010*/                   FFMA R1, R2, R3, R1 ;
        /*0020*/               @P0 BRA `(.L_x_9) ;
        .L_x_1:
        /*0030*/                   FFMA R1, R2, R3, R1 ;
        .L_x_2:
        /*0040*/                   SYNCS.PHASECHK.TRANS64 P2, [R4], R5 ;
        /*0050*/              @!P2 BRA `(.L_x_2) ;
        /*0060*/               @P1 BRA `(.L_x_0) ;
        /*0070*/                   EXIT ;
        .L_x_9:
        /*0080*/                   STG.E.64 desc[UR4][R8.64], R6 ;
        /*0090*/                   BRA `(.L_x_1) ;
";

    #[test]
    fn blocks_edges_and_loops_follow_the_graph_not_the_addresses() {
        let d = parse_disassembly(LISTING);
        let g = cfg(&d.functions[0]);
        let firsts: Vec<usize> = g.blocks.iter().map(|b| b.first).collect();
        // MOV | FFMA BRA | FFMA | SYNCS BRA | BRA | EXIT | STG BRA
        assert_eq!(firsts, [0, 1, 3, 4, 6, 7, 8]);
        assert_eq!(g.blocks[1].succ, [6, 2]);
        assert_eq!(g.blocks[5].succ, Vec::<usize>::new());
        assert_eq!(g.blocks[6].succ, [2]);
        assert_eq!(
            g.loops,
            vec![
                Loop {
                    header: 1,
                    blocks: vec![1, 2, 3, 4, 6]
                },
                Loop {
                    header: 3,
                    blocks: vec![3]
                },
            ]
        );
    }

    #[test]
    fn a_callee_in_the_section_is_an_entry_of_its_own() {
        let text = ".text.k:\n/*0000*/ CALL.REL.NOINC `($k$callee) ;\n/*0010*/ EXIT ;\n\
                    /*0020*/ NOP ;\n$k$callee:\n/*0030*/ FFMA R1, R2, R3, R1 ;\n\
                    /*0040*/ @P0 BRA 0x30 ;\n/*0050*/ RET.REL.NODEC R20 `(k) ;\n";
        let g = cfg(&parse_disassembly(text).functions[0]);
        // CALL EXIT | NOP | FFMA BRA | RET: the callee's loop is found.
        assert_eq!(g.blocks.len(), 4);
        assert_eq!(
            g.loops,
            vec![Loop {
                header: 2,
                blocks: vec![2]
            }]
        );
    }

    #[test]
    fn a_uniform_predicate_operand_makes_a_branch_conditional() {
        let text = ".text.k:\n/*0000*/ BRA.U !UP0, 0x20 ;\n/*0010*/ NOP ;\n/*0020*/ EXIT ;\n\
                    /*0030*/ BRA 0x30 ;\n";
        let g = cfg(&parse_disassembly(text).functions[0]);
        assert_eq!(g.blocks[0].succ, [2, 1]);
        // An unconditional branch to itself is a loop of one block.
        assert_eq!(g.blocks[3].succ, [3]);
        assert!(g.loops.is_empty(), "unreachable from the entry: no loop");
    }
}
