// The example kernels built again with other settings, each a module of
// its own (`ktrace_build::Build::variant`). Included by build.rs, which
// declares them, and by tests/registers.rs, which checks the shared memory
// their recorder takes.

/// A kernel variant: `(module, source, macros)`, each macro `(name, value)`.
type ExampleVariant = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const KERNEL_VARIANTS: &[ExampleVariant] = &[
    // The bf16 GEMM of examples/kernels/gemm.cu with the newest-N
    // shared-memory recorder (12 warps per block: 7,168 bytes of static
    // shared memory beside the kernel's 197,760 dynamic ones), for
    // `gemm --bench`.
    (
        "gemm_newest",
        "kernels/gemm.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "12"),
        ],
    ),
    // The bf16 GEMM with the newest-N shared-memory recorder without the
    // skip branch (KTRACE_NEWEST_BRANCH 0), for `gemm --bench`. Its producer
    // keeps 40 registers (gemm.cu: 24): at 24, ptxas spills the tile loop's
    // stride (gridDim.x, 8 bytes) in this build.
    (
        "gemm_newest_nobranch",
        "kernels/gemm.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_NEWEST_BRANCH", "0"),
            ("KTRACE_SMEM_WARPS", "12"),
            ("GEMM_PRODUCER_REGS", "40"),
            ("GEMM_CONSUMER_REGS", "232"),
        ],
    ),
    // The serving loop's kernels without the L2 evict-last policy on the
    // site's ticket, reads and count (KTRACE_SITE_EVICT_LAST 0), for
    // `serving_loop --plain-l2`.
    (
        "serving_plain_l2",
        "kernels/serving.cu",
        &[("KTRACE_SITE_EVICT_LAST", "0")],
    ),
    // The serving loop's kernels with the null argument's early out at
    // KTRACE_OPEN (KTRACE_NULL_EARLY_OUT 1), for tests/recorder_sass.rs.
    (
        "serving_null_early_out",
        "kernels/serving.cu",
        &[("KTRACE_NULL_EARLY_OUT", "1")],
    ),
    // The bf16 GEMM with time anchors by the event count
    // (KTRACE_ANCHORS_COUNT), for `gemm --bench`.
    (
        "gemm_count",
        "kernels/gemm.cu",
        &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_COUNT")],
    ),
    // The bf16 GEMM with time anchors by the clock (KTRACE_ANCHORS_CLOCK,
    // the default before stamped events), for `gemm --bench`.
    (
        "gemm_clock",
        "kernels/gemm.cu",
        &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_CLOCK")],
    ),
    // The bf16 GEMM with its producer warpgroup at 40 registers and its
    // consumers at 232 (gemm.cu: 24 and 240), for `gemm --bench`: what the
    // 24-register producer costs or saves untraced.
    (
        "gemm_p40",
        "kernels/gemm.cu",
        &[("GEMM_PRODUCER_REGS", "40"), ("GEMM_CONSUMER_REGS", "232")],
    ),
    // Recorder microbenchmark, newest-N shared-memory recorder
    // (KTRACE_RECORDER_NEWEST: each warp keeps its newest 64 events in
    // shared memory, like Proton's instrumentation). 4 warps per block.
    (
        "recorder_newest",
        "bench/recorder_bench.cuh",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "4"),
        ],
    ),
    // Recorder microbenchmark, newest-N shared-memory recorder without the
    // skip branch (KTRACE_NEWEST_BRANCH 0: every warp records, an event is 5
    // instructions). 4 warps per block.
    (
        "recorder_newest_nobranch",
        "bench/recorder_bench.cuh",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_NEWEST_BRANCH", "0"),
            ("KTRACE_SMEM_WARPS", "4"),
        ],
    ),
    // Recorder microbenchmark, newest-N shared-memory recorder built with
    // KTRACE_NEWEST_PIN 1: an event's entry and address in registers of
    // their own until the next event.
    (
        "recorder_newest_pin",
        "bench/recorder_bench.cuh",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "4"),
            ("KTRACE_NEWEST_PIN", "1"),
        ],
    ),
    // Recorder microbenchmark, register-ring recorder.
    (
        "recorder_ring",
        "bench/recorder_bench.cuh",
        &[("KTRACE_RECORDER", "1")],
    ),
    // Recorder microbenchmark, shared-memory staging recorder
    // (KTRACE_RECORDER_SMEM, sm_90 and later).
    (
        "recorder_smem",
        "bench/recorder_bench.cuh",
        &[("KTRACE_RECORDER", "2")],
    ),
    // Recorder microbenchmark, shared-memory staging recorder without time
    // anchors: what the recorder costs without the per-event anchor test
    // (like Proton, which records none).
    (
        "recorder_smem_noanchor",
        "bench/recorder_bench.cuh",
        &[("KTRACE_RECORDER", "2"), ("KTRACE_ANCHOR_CYCLES", "0")],
    ),
    // Recorder microbenchmark, store recorder without time anchors: what
    // the per-event anchor test costs the default recorder.
    (
        "recorder_store_noanchor",
        "bench/recorder_bench.cuh",
        &[("KTRACE_RECORDER", "0"), ("KTRACE_ANCHOR_CYCLES", "0")],
    ),
    // Recorder microbenchmark, store recorder with events that do not
    // branch (KTRACE_STORE_BRANCH 0): what the skip branch costs a traced
    // warp.
    (
        "recorder_store_pred",
        "bench/recorder_bench.cuh",
        &[("KTRACE_RECORDER", "0"), ("KTRACE_STORE_BRANCH", "0")],
    ),
    // The fp32 SGEMM with time anchors by the event count
    // (KTRACE_ANCHORS_COUNT), for recorder_bench.
    (
        "sgemm_bench_count",
        "kernels/sgemm_bench.cu",
        &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_COUNT")],
    ),
    // Recorder microbenchmark, store recorder with time anchors by the
    // event count (KTRACE_ANCHORS_COUNT).
    (
        "recorder_store_count",
        "bench/recorder_bench.cuh",
        &[
            ("KTRACE_RECORDER", "0"),
            ("KTRACE_ANCHORS", "KTRACE_ANCHORS_COUNT"),
        ],
    ),
    // The dvfs kernel with time anchors by the event count, for `dvfs
    // --count` (every warp traced: the load warps' anchors map the
    // timeline warp too).
    (
        "dvfs_count",
        "kernels/dvfs.cu",
        &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_COUNT")],
    ),
    // Recorder microbenchmark, store recorder with time anchors by the
    // clock (KTRACE_ANCHORS_CLOCK): the anchor test in every event.
    (
        "recorder_store_clock",
        "bench/recorder_bench.cuh",
        &[
            ("KTRACE_RECORDER", "0"),
            ("KTRACE_ANCHORS", "KTRACE_ANCHORS_CLOCK"),
        ],
    ),
    // The fp32 SGEMM with time anchors by the clock (KTRACE_ANCHORS_CLOCK),
    // for recorder_bench and tests/recorder_sass.rs.
    (
        "sgemm_bench_clock",
        "kernels/sgemm_bench.cu",
        &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_CLOCK")],
    ),
    // The dvfs kernel with time anchors by the clock (KTRACE_ANCHORS_CLOCK),
    // for `dvfs --clock`.
    (
        "dvfs_clock",
        "kernels/dvfs.cu",
        &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_CLOCK")],
    ),
    // The fp32 SGEMM without time anchors, for recorder_bench.
    (
        "sgemm_bench_noanchor",
        "kernels/sgemm_bench.cu",
        &[("KTRACE_ANCHOR_CYCLES", "0")],
    ),
    // examples/kernels/smem_align.cu with each shared-memory recorder (4
    // warps per block), for the `smem_align` example.
    (
        "smem_align_newest",
        "kernels/smem_align.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "4"),
        ],
    ),
    // smem_align.cu with 100 bytes of static shared memory of its own and
    // the newest-N recorder beside them: the compiler places the two, and
    // the dynamic shared memory must still start where it does untraced
    // (the `smem_align` example on a GPU, tests/shared_alignment.rs in the
    // images).
    (
        "smem_align_own_newest",
        "kernels/smem_align.cu",
        &[
            ("SMEM_ALIGN_OWN_BYTES", "100"),
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "4"),
        ],
    ),
    (
        "smem_align_smem",
        "kernels/smem_align.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_SMEM"),
            ("KTRACE_SMEM_WARPS", "4"),
        ],
    ),
    // Recorder microbenchmark, per-event store recorder (the default).
    (
        "recorder_store",
        "bench/recorder_bench.cuh",
        &[("KTRACE_RECORDER", "0")],
    ),
    // fp32 SGEMM of examples/kernels/sgemm_bench.cu with the newest-N
    // shared-memory recorder (8 warps per block), beside the default build,
    // for recorder_bench.
    (
        "sgemm_bench_newest",
        "kernels/sgemm_bench.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "8"),
        ],
    ),
    // The fp32 SGEMM with the newest-N shared-memory recorder without the
    // skip branch (KTRACE_NEWEST_BRANCH 0), for recorder_bench.
    (
        "sgemm_bench_newest_nobranch",
        "kernels/sgemm_bench.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_NEWEST_BRANCH", "0"),
            ("KTRACE_SMEM_WARPS", "8"),
        ],
    ),
    // The fp32 SGEMM with the shared-memory recorder, beside the default
    // (store recorder) build, for recorder_bench.
    (
        "sgemm_bench_smem",
        "kernels/sgemm_bench.cu",
        &[("KTRACE_RECORDER", "KTRACE_RECORDER_SMEM")],
    ),
    // examples/kernels/values.cu with the newest-N shared-memory recorder,
    // keeping 128 entries per warp (every entry of a 20-step probe).
    (
        "values_newest",
        "kernels/values.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "4"),
            ("KTRACE_NEWEST_ENTRIES", "128"),
        ],
    ),
    // values.cu with the newest-N shared-memory recorder without the skip
    // branch (KTRACE_NEWEST_BRANCH 0), 128 entries per warp.
    (
        "values_newest_nobranch",
        "kernels/values.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_NEWEST_BRANCH", "0"),
            ("KTRACE_SMEM_WARPS", "4"),
            ("KTRACE_NEWEST_ENTRIES", "128"),
        ],
    ),
    // values.cu with the ring recorder.
    (
        "values_ring",
        "kernels/values.cu",
        &[("KTRACE_RECORDER", "KTRACE_RECORDER_RING")],
    ),
    // values.cu with the shared-memory recorder.
    (
        "values_smem",
        "kernels/values.cu",
        &[("KTRACE_RECORDER", "KTRACE_RECORDER_SMEM")],
    ),
    // examples/kernels/warp_specialized.cu with the newest-N shared-memory
    // recorder (64 events kept per warp, 8 warps: 4,224 bytes), for
    // `warp_specialized --newest` and `--bench`; its producer too runs in 24
    // registers (tests/registers.rs checks).
    (
        "warp_specialized_newest",
        "kernels/warp_specialized.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_SMEM_WARPS", "8"),
        ],
    ),
    // warp_specialized.cu with the newest-N shared-memory recorder without
    // the skip branch (KTRACE_NEWEST_BRANCH 0), for `warp_specialized
    // --bench`; its producer too runs in 24 registers.
    (
        "warp_specialized_newest_nobranch",
        "kernels/warp_specialized.cu",
        &[
            ("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST"),
            ("KTRACE_NEWEST_BRANCH", "0"),
            ("KTRACE_SMEM_WARPS", "8"),
        ],
    ),
    // warp_specialized.cu with the default store recorder (no shared
    // memory), for `warp_specialized --bench`; its producer too runs in 24
    // registers without spilling (tests/registers.rs checks).
    (
        "warp_specialized_store",
        "kernels/warp_specialized.cu",
        &[("KTRACE_RECORDER", "KTRACE_RECORDER_STORE")],
    ),
];
