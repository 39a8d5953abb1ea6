//! The instruction → region maps the build made for the example kernels,
//! held to what their sources say, instruction by instruction: the planted
//! kernel of `examples/kernels/stalls.cu` (each region's own instructions,
//! the barrier outside any region, no marker instruction in the untraced
//! build) and `block_sum.cu` (CUB's reduction, inlined from the toolkit's
//! headers, inside "reduce"; the helper's load inside "load one").
//!
//! The maps are built by ktrace-examples' build script, which needs
//! nvcc and nvdisasm (scripts/setup-cuda.sh); a map the build could not
//! make says so, and then the test fails with its reason.

use ktrace_examples::{kernels, REGIONS};
use ktrace_runtime::format::pc_map::{PcKind, PcMap};

fn id(name: &str) -> u16 {
    REGIONS.iter().find(|(_, n)| *n == name).unwrap().0
}

/// Every instruction of `function` in `text`, by offset.
fn instructions(text: &str, function: &str) -> Vec<(u64, ktrace_runtime::format::pc_map::PcInfo)> {
    let map = PcMap::parse(text).unwrap();
    assert!(map.none.is_none(), "the build made no map: {:?}", map.none);
    assert!(map.has_function(function), "no {function} in the map");
    (0u64..)
        .map(|k| k * 16)
        .map_while(|o| map.get(function, o).map(|i| (o, i.clone())))
        .collect()
}

#[test]
fn the_planted_kernels_instructions_sit_in_the_regions_their_lines_are_in() {
    let all = instructions(kernels::STALLS.untraced_map, "planted");
    assert!(all.len() > 100, "{} instructions", all.len());
    let chase = id("chase");
    let (fma, slow, barrier, bank) = (
        id("fma_chain"),
        id("slow_warp"),
        id("barrier"),
        id("bank_conflicts"),
    );
    for (o, i) in &all {
        assert_ne!(
            i.kind,
            PcKind::Marker,
            "+{o:#x}: a marker instruction in the untraced build"
        );
        let line = i.location.as_ref().map_or(0, |l| l.1);
        let expected: &[u16] = match line {
            31 => &[chase],
            36 => &[fma],
            42 => &[slow],
            46 => &[barrier],
            51 => &[bank],
            // the loop, the setup and the stores: in no region
            18..=29 | 53..=56 => &[],
            _ => continue,
        };
        assert_eq!(i.regions, expected, "+{o:#x} {} at line {line}", i.opcode);
    }
    let loads: Vec<_> = all
        .iter()
        .filter(|(_, i)| i.opcode.starts_with("LDG"))
        .collect();
    assert!(!loads.is_empty());
    assert!(loads.iter().all(|(_, i)| i.regions == [chase]), "{loads:?}");
    let bars: Vec<_> = all
        .iter()
        .filter(|(_, i)| i.opcode.starts_with("BAR."))
        .collect();
    assert_eq!(
        bars.len(),
        2,
        "the first __syncthreads and the planted one: {bars:?}"
    );
    assert_eq!(
        (bars[0].1.regions.len(), bars[1].1.regions.as_slice()),
        (0, &[barrier][..])
    );
    for (region, name) in [(bank, "LDS"), (fma, "FFMA")] {
        assert!(
            all.iter()
                .any(|(_, i)| i.opcode.starts_with(name) && i.regions == [region]),
            "no {name} in region {region}"
        );
    }
}

#[test]
fn the_traced_build_marks_the_markers_own_instructions() {
    let all = instructions(kernels::STALLS.traced_map, "planted");
    let markers = all.iter().filter(|(_, i)| i.kind == PcKind::Marker).count();
    assert!(markers > 20, "{markers} marker instructions");
    // The user code keeps its regions beside the markers: the loads and the
    // planted barrier are the kernel's own.
    let loads: Vec<_> = all
        .iter()
        .filter(|(_, i)| i.opcode.starts_with("LDG"))
        .collect();
    // 64 loads of the chase, all the kernel's; the flush's few loads are
    // ktrace's (their lines point past the end of stalls.cu: not placed).
    let users: Vec<_> = loads
        .iter()
        .filter(|(_, i)| i.kind == PcKind::User)
        .collect();
    assert_eq!(users.len(), 64, "{loads:?}");
    assert!(users.iter().all(|(_, i)| i.regions == [id("chase")]));
    assert!(all.iter().any(|(_, i)| i.opcode.starts_with("BAR.")
        && i.regions == [id("barrier")]
        && i.kind == PcKind::User));
}

#[test]
fn cub_inlined_in_a_region_and_a_helpers_load_are_placed_through_their_call_sites() {
    let all = instructions(kernels::BLOCK_SUM.untraced_map, "block_sum_256");
    let reduce = id("reduce");
    let load = id("load one");
    let from_cub: Vec<_> = all
        .iter()
        .filter(|(_, i)| i.location.as_ref().is_some_and(|l| l.0.contains("/cub/")))
        .collect();
    assert!(!from_cub.is_empty(), "no instruction from CUB's headers");
    assert!(
        from_cub.iter().all(|(_, i)| i.regions == [reduce]),
        "CUB's instructions outside reduce: {from_cub:?}"
    );
    let loads: Vec<_> = all
        .iter()
        .filter(|(_, i)| i.opcode.starts_with("LDG"))
        .collect();
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(loads[0].1.regions, [load]);
}
