use super::*;

// ptxas -v as nvcc 13.0 prints it for fast.cu's matmulKernel12 (traced)
// and its untraced build: the kernel, then ktrace's out-of-line functions.
const TRACED: &str = "\
ptxas info    : 2 bytes gmem
ptxas info    : Compiling entry function 'fastcu_matmul12' for 'sm_90a'
ptxas info    : Function properties for fastcu_matmul12
    16 bytes stack frame, 20 bytes spill stores, 28 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers, 16 bytes cumulative stack size
ptxas info    : Function properties for _ZN6ktrace13close_at_siteEmjmjbmm
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Function properties for _ZN6ktrace9site_openEmjbji
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
";
const UNTRACED: &str = "\
ptxas info    : Compiling entry function 'fastcu_matmul12' for 'sm_90a'
ptxas info    : Function properties for fastcu_matmul12
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers
";

fn key(arch: &str, f: &str) -> (String, String) {
    (arch.to_string(), f.to_string())
}

#[test]
fn parses_every_function_with_its_arch() {
    let s = parse_spills(TRACED);
    assert_eq!(s.len(), 3);
    assert_eq!(
        s[&key("sm_90a", "fastcu_matmul12")],
        Spill {
            stores: 20,
            loads: 28
        }
    );
    assert_eq!(
        s[&key("sm_90a", "_ZN6ktrace9site_openEmjbji")],
        Spill::default()
    );
}

#[test]
fn a_traced_build_that_spills_more_is_reported() {
    let g = spill_growth(TRACED, UNTRACED);
    assert_eq!(
        g,
        [SpillGrowth {
            function: "fastcu_matmul12".into(),
            arch: "sm_90a".into(),
            traced: Spill {
                stores: 20,
                loads: 28
            },
            untraced: Spill::default(),
        }]
    );
    let m = g[0].message("fastcu");
    assert!(m.starts_with("ktrace: module fastcu, function fastcu_matmul12 (sm_90a): "));
    assert!(m.contains("spills 20 bytes") && m.contains("28 loaded back"));
    assert!(m.contains("untraced build spills 0"));
}

#[test]
fn equal_or_fewer_spills_are_not_reported() {
    assert!(spill_growth(UNTRACED, UNTRACED).is_empty());
    // The untraced build spilling more (a schedule that went the other
    // way) is not the markers' doing.
    assert!(spill_growth(UNTRACED, TRACED).is_empty());
    // Spilling as much as the untraced build is not reported either.
    assert!(spill_growth(TRACED, TRACED).is_empty());
}

#[test]
fn a_function_only_in_the_traced_build_that_spills_is_reported() {
    let traced = "\
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Function properties for _ZN6ktrace9site_openEmjbji
    8 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
";
    let g = spill_growth(traced, "");
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].function, "_ZN6ktrace9site_openEmjbji");
    assert_eq!(g[0].untraced, Spill::default());
}

#[test]
fn architectures_are_compared_apart() {
    // A fat build: sm_80 spills in both builds, sm_90 only traced.
    let report = |s80: u64, s90: u64| {
        format!(
            "ptxas info    : Compiling entry function 'k' for 'sm_80'\n\
             ptxas info    : Function properties for k\n    \
             0 bytes stack frame, {s80} bytes spill stores, {s80} bytes spill loads\n\
             ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
             ptxas info    : Function properties for k\n    \
             0 bytes stack frame, {s90} bytes spill stores, {s90} bytes spill loads\n"
        )
    };
    let g = spill_growth(&report(8, 12), &report(8, 0));
    assert_eq!(g.len(), 1);
    assert_eq!((g[0].arch.as_str(), g[0].traced.stores), ("sm_90", 12));
}

#[test]
fn other_messages_and_broken_lines_are_ignored() {
    assert!(parse_spills("").is_empty());
    assert!(parse_spills("kernel.cu(3): warning: something\n").is_empty());
    // A spill line with no function before it, and a function whose line
    // is cut short.
    let text = "    4 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
                ptxas info    : Function properties for k\n    \
                0 bytes stack frame, x bytes spill stores\n";
    assert!(parse_spills(text).is_empty());
    // Before any entry line the architecture is empty, and the message
    // leaves it out.
    let text = "ptxas info    : Function properties for k\n    \
                0 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n";
    let g = spill_growth(text, "");
    assert_eq!(g[0].arch, "");
    assert!(g[0]
        .message("m")
        .starts_with("ktrace: module m, function k: "));
}
