use std::path::Path;

use super::*;
use crate::pc_map::parse_disassembly;

const K: &str = r#"//## File "/k/k.cu", line 10"#;
const EVENT: &str = r#"//## File "/inc/ktrace/store.cuh", line 90 inlined at "/k/k.cu", line 12
	//## File "/k/k.cu", line 12"#;
const BODY: &str = r#"//## File "/k/k.cu", line 11 inlined at "/inc/ktrace/dispatch.cuh", line 44
	//## File "/inc/ktrace/dispatch.cuh", line 44 inlined at "/k/k.cu", line 30
	//## File "/k/k.cu", line 30"#;
const BODY_EVENT: &str = r#"//## File "/inc/ktrace/store.cuh", line 90 inlined at "/k/k.cu", line 12
	//## File "/k/k.cu", line 12 inlined at "/inc/ktrace/dispatch.cuh", line 44
	//## File "/inc/ktrace/dispatch.cuh", line 44 inlined at "/k/k.cu", line 30
	//## File "/k/k.cu", line 30"#;
const DISPATCH: &str = r#"//## File "/inc/ktrace/dispatch.cuh", line 42 inlined at "/k/k.cu", line 30
	//## File "/k/k.cu", line 30"#;

/// Two kernels in the shape `nvdisasm -c -g -gi` prints: `opened`, whose
/// loop holds a branched event (its skip branch over three instructions)
/// and a predicated one, and an open outside it; `dispatched`, whose
/// recording copy's loop holds one branched event and whose idle copy's
/// loop holds none, with the dispatch's barrier.
fn listing() -> String {
    format!(
        r#".text.opened:
	{EVENT}
        /*0000*/                   CS2R R2, SR_CLOCKLO ;
        /*0010*/                   STG.E.EF.128 desc[UR4][R4.64], R8 ;
	{K}
.L_x_0:
        /*0020*/                   FFMA R1, R2, R3, R1 ;
        /*0030*/                   FFMA R1, R2, R3, R1 ;
	{EVENT}
        /*0040*/              @!P0 BRA `(.L_x_1) ;
        /*0050*/                   CS2R.32 R6, SR_CLOCKLO ;
        /*0060*/                   IMAD.WIDE.U32 R8, R7, 0x8, R10 ;
        /*0070*/                   STG.E.EF.64 desc[UR4][R8.64], R6 ;
.L_x_1:
	{K}
        /*0080*/                   FFMA R1, R2, R3, R1 ;
	{EVENT}
        /*0090*/               @P0 CS2R.32 R6, SR_CLOCKLO ;
        /*00a0*/               @P0 STG.E.EF.64 desc[UR4][R8.64], R6 ;
	{K}
        /*00b0*/               @P1 BRA `(.L_x_0) ;
        /*00c0*/                   EXIT ;
.text.dispatched:
	{DISPATCH}
        /*0000*/                   BAR.RED.OR.DEFER_BLOCKING 0x0, P0 ;
        /*0010*/              @!P0 BRA 0x80 ;
	{BODY}
        /*0020*/                   FFMA R1, R2, R3, R1 ;
	{BODY_EVENT}
        /*0030*/                   BRA.U !UP0, 0x50 ;
        /*0040*/                   STG.E.EF.64 desc[UR4][R8.64], R6 ;
	{BODY}
        /*0050*/                   FFMA R1, R2, R3, R1 ;
        /*0060*/               @P1 BRA 0x20 ;
        /*0070*/                   EXIT ;
        /*0080*/                   FFMA R1, R2, R3, R1 ;
        /*0090*/                   FFMA R1, R2, R3, R1 ;
        /*00a0*/               @P1 BRA 0x80 ;
        /*00b0*/                   EXIT ;
.text.plain:
	{K}
        /*0000*/                   EXIT ;
"#
    )
}

fn costs() -> Vec<KernelCost> {
    estimate(&parse_disassembly(&listing()), |f: &Path| {
        f.starts_with("/inc")
    })
}

#[test]
fn a_loop_counts_its_own_its_traced_and_its_idle_instructions() {
    let c = costs();
    assert_eq!(c.len(), 2, "the kernel without markers has no cost");
    let opened = &c[0];
    assert_eq!(opened.function, "opened");
    assert!(!opened.dispatched);
    assert_eq!(opened.instructions, 13);
    // The open's two instructions are outside the loop.
    assert_eq!(opened.outside, 2);
    // The loop: 4 FFMAs and the back branch; the skip branch, the event it
    // jumps over (3) and the predicated event (2) are markers'; a warp that
    // records nothing issues the skip branch and the predicated event.
    assert_eq!(
        opened.loops,
        vec![LoopCost {
            own: 4,
            traced: 6,
            idle: 3
        }]
    );
}

#[test]
fn a_dispatched_body_is_user_code_and_its_idle_copy_has_no_marked_loop() {
    let c = costs();
    let d = &c[1];
    assert_eq!(d.function, "dispatched");
    assert!(d.dispatched);
    // The barrier and its branch are the dispatch's: outside any loop.
    assert_eq!(d.outside, 2);
    // Only the recording copy's loop holds markers: two FFMAs and the back
    // branch are the body's, the uniform skip branch and its store the
    // event's; a warp that records nothing issues the branch only.
    assert_eq!(
        d.loops,
        vec![LoopCost {
            own: 3,
            traced: 2,
            idle: 1
        }]
    );
}

#[test]
fn the_cost_file_round_trips() {
    let c = costs();
    let text = render(&c);
    assert!(text.starts_with("ktrace-cost 1\nkernel opened dispatch none instructions 13 outside 2\nloop own 4 traced 6 idle 3\n"), "{text}");
    assert_eq!(parse(&text), Some(c));
    assert_eq!(parse("not a cost file\n"), None);
    assert_eq!(parse("ktrace-cost 1\nloop own 1 traced 1 idle 1\n"), None);
    assert_eq!(
        cost_path(Path::new("/o/a.traced.cubin")),
        Path::new("/o/a.traced.cubin.cost")
    );
}

#[test]
fn the_summary_names_the_worst_loop_and_large_costs_warn() {
    let c = costs();
    let s = c[0].summary("m");
    assert_eq!(
        s,
        "ktrace: cost of m/opened: 1 marked loop(s); a traced warp adds 6 instructions to a \
         loop of 4 (+150.0%), a warp that records nothing 3 to a loop of 4 (+75.0%); 2 marker \
         instructions outside them, in 13 in all"
    );
    assert!(c[0].is_large());
    let w = warning(&[
        ("m".to_string(), c[0].clone()),
        ("m".to_string(), c[1].clone()),
    ])
    .expect("one large cost");
    assert!(
        w.contains("every warp of m/opened (3 instructions a loop of 4) issues"),
        "{w}"
    );
    assert!(w.contains("KTRACE_DISPATCH"), "{w}");
    assert!(
        !w.contains("dispatched"),
        "a dispatched kernel is not large: {w}"
    );
    let d = c[1].summary("m");
    assert!(
        d.contains("an unsampled warp of a recording block 1 to a loop of 3"),
        "{d}"
    );
    assert!(d.ends_with("blocks that record nothing run no marker code (KTRACE_DISPATCH)"));
    // Small shares stay quiet; without the dispatch an idle 2% warns.
    let quiet = KernelCost {
        function: "q".into(),
        dispatched: false,
        instructions: 1000,
        outside: 10,
        loops: vec![LoopCost {
            own: 100,
            traced: 20,
            idle: 1,
        }],
    };
    assert!(!quiet.is_large());
    assert_eq!(warning(&[("q".to_string(), quiet.clone())]), None);
    let idle = KernelCost {
        loops: vec![LoopCost {
            own: 100,
            traced: 20,
            idle: 2,
        }],
        ..quiet.clone()
    };
    assert!(idle.is_large());
    assert!(!KernelCost {
        dispatched: true,
        ..idle
    }
    .is_large());
}

#[test]
fn the_golden_file_names_each_changed_line_under_its_module() {
    let dir = std::env::temp_dir().join(format!("ktrace-cost-golden-{}", std::process::id()));
    let kernels = dir.join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    assert_eq!(collect(&kernels), None, "no cost file, nothing to compare");
    let write = |module: &str, text: &str| {
        std::fs::write(kernels.join(format!("{module}.traced.cubin.cost")), text).unwrap();
    };
    write(
        "b",
        "ktrace-cost 1\nkernel kb dispatch none instructions 10 outside 2\n",
    );
    write("a", &render(&costs()));
    std::fs::write(kernels.join("a.untraced.cubin.cost"), "ktrace-cost 1\n").unwrap();
    let all = collect(&kernels).unwrap();
    assert!(
        all.starts_with("ktrace-cost 1\nmodule a\nkernel opened"),
        "{all}"
    );
    assert!(
        all.ends_with("module b\nkernel kb dispatch none instructions 10 outside 2\n"),
        "{all}"
    );
    let golden = dir.join("costs.txt");
    let e = check_golden(&golden, &all, false).unwrap_err();
    assert!(e.contains("KTRACE_BLESS=1"), "{e}");
    check_golden(&golden, &all, true).unwrap();
    check_golden(&golden, &all, false).unwrap();
    // One more instruction in a traced loop, and a module built anew.
    let changed =
        all.replace("loop own 4 traced 6 idle 3", "loop own 4 traced 7 idle 3") + "module c\n";
    let e = check_golden(&golden, &changed, false).unwrap_err();
    assert!(
        e.contains("  a:\n    - loop own 4 traced 6 idle 3\n    + loop own 4 traced 7 idle 3\n"),
        "{e}"
    );
    assert!(e.contains("  c: built, not in the golden file"), "{e}");
    assert!(!e.contains("  b"), "b did not change: {e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
