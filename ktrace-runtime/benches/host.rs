//! Host-side benchmarks on a ~1 M event synthetic launch (132 blocks x 8
//! warps x ~950 events, see `common/mod.rs`): decoding, Chrome and Perfetto
//! export to `io::sink`, the summary, the whole export pipeline for each
//! format, and capture parse and write. `cargo bench -p ktrace-runtime --bench host`; the end-to-end
//! numbers (the `ktrace` binary, 1 M to 100 M events, peak RSS) come from
//! `examples/host_bench.rs`.

mod common;

use std::hint::black_box;
use std::io;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ktrace_runtime::export::chrome::ChromeWriter;
use ktrace_runtime::export::perfetto::{LaunchGroup, PerfettoOptions, PerfettoWriter};
use ktrace_runtime::export::summary::SummaryBuilder;
use ktrace_runtime::format::capture::LaunchCapture;
use ktrace_runtime::synth::SynthWarp;
use ktrace_runtime::{
    decode::DecodeOptions, decode::Decoder, export::chrome::ChromeOptions,
    export::summary::SummaryOptions, Capture,
};

fn opts() -> DecodeOptions {
    DecodeOptions {
        nominal_clock_khz: u64::from(common::CLOCK_KHZ),
        ..DecodeOptions::default()
    }
}

/// Decodes every warp of `launch`: its events and spans.
fn decode_all(launch: &LaunchCapture) -> usize {
    let dec = Decoder::new(launch.buffer().expect("fits its shape"), &opts());
    dec.warps().map(|w| w.events.len() + w.spans.len()).sum()
}

fn host(c: &mut Criterion) {
    let cap = common::capture(1_000_000);
    let events = common::Plan::for_events(1_000_000).events();
    let launch = &cap.launches[0];
    let regions = &cap.regions;
    let dec = Decoder::new(launch.buffer().expect("fits its shape"), &opts());
    let warps: Vec<_> = dec.warps().collect();
    let mut bytes = Vec::new();
    cap.write_to(&mut bytes).expect("writes");

    let mut g = c.benchmark_group("host_1M");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));

    g.bench_function("decode", |b| b.iter(|| black_box(decode_all(launch))));
    // The same warps with a time anchor every 2,048 cycles, and with
    // stamped events (KTRACE_ANCHORS_STAMP), whose stamps are unwrapped.
    for (name, build) in [
        (
            "decode_anchored",
            (|w: SynthWarp| w.anchors(2048)) as fn(SynthWarp) -> SynthWarp,
        ),
        ("decode_stamped", |w: SynthWarp| w.stamped()),
    ] {
        let cap = common::capture_as(1_000_000, build);
        let launch = &cap.launches[0];
        g.bench_function(name, |b| b.iter(|| black_box(decode_all(launch))));
    }
    g.bench_function("chrome_to_sink", |b| {
        b.iter(|| {
            let mut cw = ChromeWriter::begin(io::sink(), regions, ChromeOptions::default(), 0)
                .expect("sink");
            for w in &warps {
                cw.warp(w).expect("sink");
            }
            cw.finish(&serde_json::Value::Null).expect("sink");
        })
    });
    let group = LaunchGroup {
        title: "launch 0".into(),
        device: "GPU".into(),
        ..LaunchGroup::default()
    };
    g.bench_function("perfetto_to_sink", |b| {
        b.iter(|| {
            let mut pw =
                PerfettoWriter::begin(io::sink(), PerfettoOptions::default()).expect("sink");
            pw.launch(&group, &dec, regions).expect("sink");
            for w in &warps {
                pw.warp(w).expect("sink");
            }
            pw.finish().expect("sink");
        })
    });
    g.bench_function("summary", |b| {
        b.iter(|| {
            let mut s = SummaryBuilder::new(regions, SummaryOptions::default());
            for w in &warps {
                s.add_warp(w);
            }
            black_box(s.region_stats())
        })
    });
    g.bench_function("export_pipeline_to_sink", |b| {
        b.iter(|| {
            let dec = Decoder::new(launch.buffer().expect("fits its shape"), &opts());
            let t0 = dec.first_event_of_launch().unwrap_or(0);
            let mut cw = ChromeWriter::begin(io::sink(), regions, ChromeOptions::default(), t0)
                .expect("sink");
            let mut s = SummaryBuilder::new(regions, SummaryOptions::default());
            for w in dec.warps() {
                cw.warp(&w).expect("sink");
                s.add_warp(&w);
            }
            cw.finish(&serde_json::Value::Null).expect("sink");
            black_box(s.region_stats())
        })
    });
    g.bench_function("export_pipeline_perfetto_to_sink", |b| {
        b.iter(|| {
            let dec = Decoder::new(launch.buffer().expect("fits its shape"), &opts());
            let mut pw =
                PerfettoWriter::begin(io::sink(), PerfettoOptions::default()).expect("sink");
            pw.launch(&group, &dec, regions).expect("sink");
            let mut s = SummaryBuilder::new(regions, SummaryOptions::default());
            for w in dec.warps() {
                pw.warp(&w).expect("sink");
                s.add_warp(&w);
            }
            pw.finish().expect("sink");
            black_box(s.region_stats())
        })
    });
    g.bench_function("capture_parse", |b| {
        b.iter(|| black_box(Capture::from_bytes(&bytes).expect("parses")))
    });
    g.bench_function("capture_write", |b| {
        let mut out = Vec::with_capacity(bytes.len());
        b.iter(|| {
            out.clear();
            cap.write_to(&mut out).expect("writes");
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(benches, host);
criterion_main!(benches);
