//! The host's part of a continuous session's drain, per launch, on a
//! synthetic slab: the copy out of pinned memory at the capacity its warps
//! needed (`fitted_slab`), the slab made into a
//! launch (`slab_launch`), the counts the drain takes (entries, the fullest
//! warp, the GPU span) and the capture writer's record, written to
//! `/dev/null` (the disk's speed is not the drain's). Two slab sizes: 264 warps at cap 32 (82.5
//! KiB, `pdl_loop`'s) and 2,048 warps at cap 256 (4.1 MiB), each warp with
//! 8 entries. `cargo bench -p ktrace-runtime --bench drain`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ktrace_runtime::format::capture::DeviceInfo;
use ktrace_runtime::format::layout::{SlotMeta, FLUSH_MAGIC, META_BYTES, OPEN_MAGIC};
use ktrace_runtime::format::regions::Regions;
use ktrace_runtime::format::shape::{BlockSampling, LaunchShape, WarpSampling};
use ktrace_runtime::format::site::{fitted_slab, gpu_span, slab_launch};
use ktrace_runtime::format::stream::CaptureWriter;

/// A slab of `blocks` blocks of 4 warps at `cap`, every warp flushed with
/// 8 entries of launch 5.
fn slab(blocks: u32, cap: u32) -> (LaunchShape, Vec<u8>) {
    let shape = LaunchShape::new(
        [blocks, 1, 1],
        [128, 1, 1],
        cap,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .expect("a shape");
    let slot = shape.slot_bytes() as usize;
    let mut raw = vec![0u8; shape.buffer_bytes().expect("fits") as usize];
    for i in 0..shape.slot_count() as usize {
        let m = SlotMeta {
            init_globaltimer: 1_000,
            final_globaltimer: 2_000,
            open_magic: OPEN_MAGIC,
            flush_magic: FLUSH_MAGIC,
            block_linear: (i / 4) as u32,
            warp: (i % 4) as u16,
            launch: 5,
            count: 8,
            grid_id: 3,
            ..SlotMeta::default()
        };
        raw[i * slot..i * slot + META_BYTES].copy_from_slice(&m.to_bytes());
        for e in 0..8u32 {
            let at = i * slot + META_BYTES + e as usize * 8;
            raw[at..at + 4].copy_from_slice(&(e * 100).to_le_bytes());
            raw[at + 4..at + 8].copy_from_slice(&((e % 2) << 16).to_le_bytes());
        }
    }
    (shape, raw)
}

fn drain(c: &mut Criterion) {
    let mut g = c.benchmark_group("drain_per_launch");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for (name, blocks, cap) in [("264_warps_cap32", 66, 32), ("2048_warps_cap256", 512, 256)] {
        let (shape, raw) = slab(blocks, cap);
        g.throughput(Throughput::Elements(1));
        let path = std::path::Path::new("/dev/null");
        let mut w = CaptureWriter::create(path, &DeviceInfo::default(), &Regions::new())
            .expect("a capture file");
        let mut epoch = 0u32;
        // As the drain does it, and as it did before it fitted the slabs'
        // capacity to what their warps recorded (the whole slab copied).
        for fit in [true, false] {
            let id = format!("{name}/{}", if fit { "fitted" } else { "whole" });
            g.bench_function(id, |b| {
                b.iter(|| {
                    let (fitted, bytes) = if fit {
                        fitted_slab(&raw, &shape).expect("a slab")
                    } else {
                        (shape, raw.clone())
                    };
                    let (launch, _) =
                        slab_launch(bytes, &fitted, 0, epoch, "k", Some(4), 0).expect("a slab");
                    let launch = launch.expect("a launch");
                    let buffer = launch.buffer().expect("fits its shape");
                    let records: u64 = buffer.slots().map(|s| u64::from(s.stored_entries())).sum();
                    let fullest = buffer.slots().map(|s| s.meta().count).max();
                    black_box((records, fullest, gpu_span(&buffer)));
                    w.launch(&launch).expect("written");
                    epoch = epoch.wrapping_add(1);
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, drain);
criterion_main!(benches);
