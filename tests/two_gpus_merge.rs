//! Two GPUs on one timeline, without a GPU: synthetic captures of the
//! `two_gpus` ping-pong whose clocks are offset from the host's and drift,
//! and the real pair recorded on two H200s, placed on one axis through
//! their clock syncs. No flag may be seen before it was sent, and the
//! alignment error must stay within what the handshakes prove.

use std::path::Path;

use ktrace_examples::ping_pong::{quantile, rounds, Round};
use ktrace_runtime::format::capture::{Capture, DeviceInfo, HostSpan};
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::synth::{SynthLaunch, SynthWarp};
use ktrace_runtime::timeline::{place, Axis, ClockSync};

const T0: u64 = 1_764_000_000_000_000_000;
const REGIONS: &[(u16, &str)] = &[
    (0, "ping sent"),
    (1, "pong seen"),
    (2, "ping seen"),
    (3, "pong sent"),
];

/// A GPU whose `%globaltimer` is `offset` ns ahead of the host at `T0` and
/// gains `drift` ns per second.
struct Gpu {
    offset: i64,
    drift: f64,
}

impl Gpu {
    fn gt(&self, host: u64) -> u64 {
        let secs = (host as i64 - T0 as i64) as f64 / 1e9;
        (host as i64 + self.offset + (self.drift * secs).round() as i64) as u64
    }

    /// A handshake at host time `h` with a 3 µs round trip whose GPU
    /// reading lands `bias` ns after the midpoint.
    fn sync(&self, h: u64, bias: i64) -> ClockSync {
        ClockSync {
            host_before_ns: h - 1_500,
            gpu_ns: (self.gt(h) as i64 + bias) as u64,
            host_after_ns: h + 1_500,
            boottime_ns: 0,
        }
    }
}

/// One capture per GPU: `launches` launches 2 s apart of `n` rounds each,
/// 2 µs per round, 700 ns each way; syncs at the start and after each
/// launch.
fn pair(launches: u64, n: u64, gpus: [&Gpu; 2]) -> [Capture; 2] {
    let mut caps = [0, 1].map(|g| Capture {
        device: DeviceInfo {
            name: format!("Synthetic GPU {g}"),
            ordinal: Some(g),
            uuid: Some([g as u8; 16]),
            ..DeviceInfo::default()
        },
        regions: Regions::from_table(REGIONS),
        launches: Vec::new(),
        clock_syncs: Vec::new(),
        ..Default::default()
    });
    for (g, cap) in caps.iter_mut().enumerate() {
        cap.clock_syncs
            .push(gpus[g].sync(T0 - 1_000_000, 40 * g as i64));
    }
    for k in 0..launches {
        let start = T0 + k * 2_000_000_000;
        for (g, cap) in caps.iter_mut().enumerate() {
            let gpu = gpus[g];
            let open = gpu.gt(start);
            // 2 cycles per ns from the open.
            let cyc = |host: u64| 2 * (gpu.gt(host) - open);
            let mut w = SynthWarp::new(0, 0).open_at(open, 1_000_000 + k);
            for i in 0..n {
                let t = start + 1_000 + i * 2_000;
                w = if g == 0 {
                    w.mark(cyc(t), 0).mark(cyc(t + 1_450), 1)
                } else {
                    w.mark(cyc(t + 700), 2).mark(cyc(t + 750), 3)
                };
            }
            let mut l = SynthLaunch::all_traced(1, 32, (4 * n.next_power_of_two() as u32).max(32))
                .layout(1)
                .with(w)
                .into_capture();
            l.shape.launch = k as u32;
            l.kernel = if g == 0 { "ping" } else { "pong" }.into();
            l.host_span = Some(HostSpan {
                enqueue_ns: start - 5_000,
                complete_ns: start + n * 2_000 + 10_000,
            });
            cap.launches.push(l);
            let after = start + n * 2_000 + 50_000;
            cap.clock_syncs.push(gpu.sync(after, 40 * g as i64 - 30));
        }
    }
    caps
}

fn skews(rs: &[Vec<Round>]) -> Vec<f64> {
    rs.iter()
        .map(|l| {
            let mut v: Vec<f64> = l.iter().map(|r| r.skew() as f64).collect();
            quantile(&mut v, 0.5)
        })
        .collect()
}

#[test]
fn drifting_gpus_are_put_in_causal_order_by_their_clock_syncs() {
    // Offsets and drifts as measured on two H200s of one host.
    let g0 = Gpu {
        offset: 94_600,
        drift: 1_200.0,
    };
    let g1 = Gpu {
        offset: 201_000,
        drift: 6_600.0,
    };
    let [c0, c1] = pair(31, 50, [&g0, &g1]);
    // The captures survive a write and a read.
    let reread = |c: &Capture| {
        let mut b = Vec::new();
        c.write_to(&mut b).unwrap();
        Capture::from_bytes(&b).unwrap()
    };
    let (c0, c1) = (reread(&c0), reread(&c1));
    let p = place(&[("gpu0", &c0), ("gpu1", &c1)]).unwrap();
    assert_eq!(p.axis, Axis::HostRealtime);
    let fixed = rounds(&c0, &c1, &p, true).unwrap();
    let raw = rounds(&c0, &c1, &p, false).unwrap();
    assert_eq!(fixed.len(), 31);
    assert!(fixed.iter().flatten().all(|r| !r.violates_order()));
    // On the raw clocks GPU 1 runs over 100 µs ahead: every pong is
    // "seen" before it was sent.
    assert!(raw.iter().flatten().all(|r| r.violates_order()));
    // The syncs' GPU readings are biased by 0..40 ns, so the skew is tens
    // of ns; the one-way delays come back at 700 ns.
    for s in skews(&fixed) {
        assert!(s.abs() <= 100_000.0, "{s} ps");
    }
    let r = fixed[30][0];
    assert!((r.there() - 700_000).abs() <= 100_000, "{}", r.there());
}

#[test]
fn without_clock_syncs_two_gpus_cannot_be_merged() {
    let g = Gpu {
        offset: 0,
        drift: 0.0,
    };
    let [mut c0, mut c1] = pair(2, 4, [&g, &g]);
    c0.clock_syncs.clear();
    c1.clock_syncs.clear();
    let e = place(&[("gpu0.ktrace", &c0), ("gpu1.ktrace", &c1)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("do not all come from one GPU"), "{e}");
}

#[test]
fn the_pair_recorded_on_two_h200s_is_in_causal_order_after_the_merge() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/data");
    let (a, b) = (
        dir.join("h200_two_gpus_gpu0.ktrace"),
        dir.join("h200_two_gpus_gpu1.ktrace"),
    );
    let c0 = Capture::read(&a).unwrap();
    let c1 = Capture::read(&b).unwrap();
    assert_ne!(c0.device.uuid, c1.device.uuid, "two different GPUs");
    let p = place(&[("gpu0", &c0), ("gpu1", &c1)]).unwrap();
    let fixed = rounds(&c0, &c1, &p, true).unwrap();
    let raw = rounds(&c0, &c1, &p, false).unwrap();
    // A minute or more of launches.
    let first = fixed[0][0].ping_sent;
    let last = fixed.last().unwrap()[0].ping_sent;
    assert!(last - first >= 60_000_000_000_000, "{} ps", last - first);
    let bad = fixed
        .iter()
        .flatten()
        .filter(|r| r.violates_order())
        .count();
    assert_eq!(
        bad, 0,
        "flags seen before they were sent on the merged timeline"
    );
    let raw_bad = raw.iter().flatten().filter(|r| r.violates_order()).count();
    assert!(raw_bad > 0, "the raw clocks were expected to disagree");
    // Every launch's median skew within half the handshakes' round trip.
    let half_rtt = c0
        .clock_syncs
        .iter()
        .chain(&c1.clock_syncs)
        .map(|s| s.uncertainty_ns())
        .max()
        .unwrap();
    for s in skews(&fixed) {
        assert!(
            s.abs() / 1000.0 <= half_rtt as f64,
            "{s} ps vs {half_rtt} ns"
        );
    }
}
