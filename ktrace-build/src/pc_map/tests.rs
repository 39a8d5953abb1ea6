use std::path::{Path, PathBuf};

use super::*;

/// A listing in the shape `nvdisasm -c -g -gi` prints (cut from a real one
/// of `block_sum.cu`, paths shortened).
const LISTING: &str = r#"	.target	sm_90a
//--------------------- .text.block_sum_512       --------------------------
	.section	.text.block_sum_512,"ax",@progbits
block_sum_512:
.text.block_sum_512:
	//## File "/k/block_sum.cu", line 31
        /*0000*/                   LDC R1, c[0x0][0x28] ;
	//## File "/k/block_sum.cu", line 19 inlined at "/k/block_sum.cu", line 32
	//## File "/k/block_sum.cu", line 32
        /*0010*/                   S2R R5, SR_CTAID.X ;
        /*0020*/              @!P0 LDG.E R0, desc[UR6][R2.64] ;
	//## File "/inc/ktrace/store.cuh", line 40 inlined at "/k/block_sum.cu", line 20
	//## File "/k/block_sum.cu", line 20 inlined at "/k/block_sum.cu", line 32
	//## File "/k/block_sum.cu", line 32
        /*0030*/                   CS2R R4, SR_CLOCKLO ;
.L_x_0:
        /*0040*/                   EXIT ;
.text.other:
        /*0000*/                   BRA `(.L_x_1) ;
"#;

fn marker(macro_name: &'static str, name: &str, line: usize, end: usize) -> Marker {
    Marker {
        macro_name,
        name: name.into(),
        line,
        span: end..end,
    }
}

fn ids(name: &str) -> Option<u16> {
    match name {
        "load" => Some(1),
        "reduce" => Some(2),
        "step" => Some(3),
        _ => None,
    }
}

#[test]
fn a_listing_gives_functions_instructions_and_their_inline_chains() {
    let d = parse_disassembly(LISTING);
    assert_eq!(
        d.files,
        vec![
            PathBuf::from("/k/block_sum.cu"),
            PathBuf::from("/inc/ktrace/store.cuh")
        ]
    );
    assert_eq!(d.functions.len(), 2);
    let f = &d.functions[0];
    assert_eq!(f.name, "block_sum_512");
    let offsets: Vec<u32> = f.instructions.iter().map(|i| i.offset).collect();
    assert_eq!(offsets, [0x0, 0x10, 0x20, 0x30, 0x40]);
    assert_eq!(f.instructions[0].frames, [(0, 31)]);
    assert_eq!(f.instructions[1].frames, [(0, 19), (0, 32)]);
    // no location lines: the one before holds
    assert_eq!(f.instructions[2].frames, [(0, 19), (0, 32)]);
    assert_eq!(f.instructions[2].opcode, "LDG.E");
    assert_eq!(f.instructions[2].guard.as_deref(), Some("@!P0"));
    assert_eq!(f.instructions[2].operands, "R0, desc[UR6][R2.64]");
    assert_eq!(f.instructions[3].guard, None);
    assert_eq!(f.instructions[3].operands, "R4, SR_CLOCKLO");
    assert_eq!(f.instructions[3].frames, [(1, 40), (0, 20), (0, 32)]);
    assert_eq!(f.instructions[3].opcode, "CS2R");
    assert_eq!(f.instructions[4].opcode, "EXIT");
    assert_eq!(d.functions[1].name, "other");
    assert!(d.functions[1].instructions[0].frames.is_empty());
}

#[test]
fn begins_pair_with_their_ends_and_scopes_run_to_their_closing_brace() {
    let src =
        "__device__ void f() {\n  KTRACE_SCOPE(\"step\");\n  int x = '}';\n  // }\n  x++;\n}\n";
    let scope_end = src.find(';').unwrap();
    let markers = vec![
        marker("KTRACE_B", "load", 10, 0),
        marker("KTRACE_B", "load", 12, 0),
        marker("KTRACE_E", "load", 14, 0),
        marker("KTRACE_E", "load", 20, 0),
        marker("KTRACE_E_IF", "reduce", 22, 0),
        marker("KTRACE_M", "load", 23, 0),
        marker("KTRACE_SCOPE", "step", 2, scope_end),
        marker("KTRACE_B", "unknown", 30, 0),
        marker("KTRACE_E", "unknown", 31, 0),
    ];
    let spans = region_spans(Path::new("/k/a.cu"), src, &markers, ids);
    let got: Vec<(u16, u32, u32)> = spans
        .iter()
        .map(|s| (s.region, s.first_line, s.last_line))
        .collect();
    // the scope ends at line 6, the '}' in a literal and a comment skipped
    assert_eq!(got, [(3, 2, 6), (1, 10, 20), (1, 12, 14)]);
}

#[test]
fn an_instruction_is_in_every_region_around_any_of_its_lines() {
    let d = parse_disassembly(LISTING);
    let span = |region, first_line, last_line| RegionSpan {
        file: PathBuf::from("/k/block_sum.cu"),
        region,
        first_line,
        last_line,
    };
    // "load" around the call at line 32, "reduce" inside the helper
    let spans = [span(1, 32, 32), span(2, 18, 19)];
    let m = map(&d, &spans, |f| f.starts_with("/inc"), |_| None);
    let (name, entries) = &m.functions[0];
    assert_eq!(name, "block_sum_512");
    let got: Vec<(u32, Vec<u16>, PcKind)> = entries
        .iter()
        .map(|e| (e.offset, e.regions.clone(), e.kind))
        .collect();
    assert_eq!(
        got,
        [
            (0x0, vec![], PcKind::User),
            (0x10, vec![1, 2], PcKind::User),
            (0x20, vec![1, 2], PcKind::User),
            (0x30, vec![1], PcKind::Marker),
            (0x40, vec![1], PcKind::Marker),
        ]
    );
    assert_eq!(m.functions[1].1[0].kind, PcKind::Unknown);
    let text = m.render();
    let expected = "ktrace-pcmap 1\n\
        file 0 /k/block_sum.cu\n\
        file 1 /inc/ktrace/store.cuh\n\
        function block_sum_512\n\
        0000 - u 0:31 LDC\n\
        0010 1,2 u 0:19 S2R\n\
        0020 1,2 u 0:19 LDG.E\n\
        0030 1 m 1:40 CS2R\n\
        0040 1 m 1:40 EXIT\n\
        function other\n\
        0000 - ? - BRA\n";
    assert_eq!(text, expected);
    assert_eq!(
        PcMap::none("no nvdisasm\nfound"),
        "ktrace-pcmap 1\nnone no nvdisasm found\n"
    );
}

#[test]
fn a_location_past_its_files_end_is_not_trusted() {
    let d = parse_disassembly(LISTING);
    // block_sum.cu has 30 lines here: line 31 and 32 are the line table's
    // mistakes, line 19 and 20 are real.
    let lines = |f: &Path| (f == Path::new("/k/block_sum.cu")).then_some(30);
    let m = map(&d, &[], |f| f.starts_with("/inc"), lines);
    let e = &m.functions[0].1;
    assert_eq!((e[0].kind, e[0].location), (PcKind::Unknown, None));
    assert_eq!((e[1].kind, e[1].location), (PcKind::User, Some((0, 19))));
    assert_eq!(e[3].kind, PcKind::Marker);
}

#[test]
fn the_body_inlined_through_the_dispatch_is_the_users_code() {
    // Files: 0 the kernel, 1 store.cuh, 2 dispatch.cuh.
    let ktrace = |f: usize| f != 0;
    let dispatch = |f: usize| f == 2;
    // The body's own instruction, inlined through the dispatch.
    assert!(!is_marker_frames(
        &[(0, 12), (2, 40), (0, 30)],
        ktrace,
        dispatch
    ));
    // A marker's event inside that body.
    assert!(is_marker_frames(
        &[(1, 90), (0, 12), (2, 40), (0, 30)],
        ktrace,
        dispatch
    ));
    // The dispatch's own barrier.
    assert!(is_marker_frames(&[(2, 41), (0, 30)], ktrace, dispatch));
    // A marker in a kernel that opens its context itself.
    assert!(is_marker_frames(&[(1, 90), (0, 12)], ktrace, dispatch));
    assert!(!is_marker_frames(&[(0, 12)], ktrace, dispatch));
    assert!(is_dispatch_header(Path::new("/inc/ktrace/dispatch.cuh")));
    assert!(!is_dispatch_header(Path::new("/inc/ktrace/store.cuh")));
}
