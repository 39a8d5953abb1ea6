use super::*;
use crate::format::pc_map::PcMap;
use crate::format::stalls::PcSample;

const MAP: &str =
    "ktrace-pcmap 1\nfile 0 /src/kernels/k.cu\nfile 1 /out/include/ktrace/store.cuh\n\
                   function k\n\
                   0000 - u 0:3 LDC\n\
                   0010 1 u 0:10 LDG.E\n\
                   0020 1,2 u 0:12 FFMA\n\
                   0030 2 m 1:40 CS2R\n\
                   0040 2 u 0:14 BAR.SYNC\n";

fn samples(launch: u32, counts: &[(u64, &[(u32, u32)])]) -> StallSamples {
    let map = PcMap::parse(MAP).unwrap();
    StallSamples {
        launch,
        kernel: "k".into(),
        period_log2: 10,
        reasons: vec![
            "long_scoreboard".into(),
            "wait".into(),
            "barrier".into(),
            "long_scoreboard_not_issued".into(),
        ],
        total_samples: 0,
        pcs: counts
            .iter()
            .map(|&(off, c)| PcSample::placed("k", off, c.to_vec(), &map))
            .collect(),
        ..Default::default()
    }
}

fn regions() -> Regions {
    Regions::from_table(&[(1, "load"), (2, "math")])
}

#[test]
fn samples_gather_per_region_nested_regions_each_counting_them() {
    let s = [
        samples(
            0,
            &[
                (0x00, &[(1, 10)]),
                (0x10, &[(0, 60), (3, 50)]),
                (0x20, &[(1, 20)]),
            ],
        ),
        samples(
            1,
            &[
                (0x10, &[(0, 20)]),
                (0x30, &[(1, 5)]),
                (0x50, &[(2, 30), (1, 5)]),
            ],
        ),
    ];
    let t = &stall_tables(&s, &regions(), None)[0];
    assert_eq!(t.launches, [0, 1]);
    // the _not_issued repeat is left out: 10 + 80 + 20 + 5 + 30 + 5
    assert_eq!(t.samples, 150);
    let names: Vec<&str> = t.regions.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["load", "math"]);
    let load = &t.regions[0];
    assert_eq!(load.samples, 100);
    assert!((load.share - 100.0 * 100.0 / 150.0).abs() < 1e-9);
    assert_eq!(load.reasons[0], ("long_scoreboard".into(), 80, 80.0));
    assert_eq!(load.reasons[1], ("wait".into(), 20, 20.0));
    assert_eq!(load.hottest[0].offset, 0x10);
    assert_eq!(load.hottest[0].source, "kernels/k.cu:10");
    assert_eq!(load.hottest[0].reason, "long_scoreboard");
    // math: the FFMA (in both) and the barrier's wait, sampled at the
    // instruction after BAR.SYNC (which the map lacks), not the marker's
    // CS2R
    let math = &t.regions[1];
    assert_eq!(math.samples, 50);
    assert_eq!(math.reasons[0].0, "barrier");
    assert_eq!(t.markers.samples, 5);
    assert_eq!(t.markers.hottest[0].opcode, "CS2R");
    assert_eq!(t.outside.samples, 10);
    assert_eq!(t.unplaced.samples, 5);
    assert!(t.unplaced.hottest[0].source.is_empty());
}

#[test]
fn a_region_pattern_keeps_the_regions_it_names() {
    let s = [samples(0, &[(0x10, &[(0, 6)]), (0x50, &[(2, 3)])])];
    let t = &stall_tables(&s, &regions(), Some("ma*"))[0];
    assert_eq!(t.regions.len(), 1);
    assert_eq!(t.regions[0].name, "math");
    assert_eq!(t.regions[0].samples, 3);
    assert_eq!(t.samples, 9);
    let mut traced = s[0].clone();
    traced.traced = true;
    let both = stall_tables(&[s[0].clone(), traced], &regions(), None);
    assert_eq!(both.len(), 2, "the traced and untraced builds apart");
    assert!(stall_tables(&[], &regions(), None).is_empty());
}
