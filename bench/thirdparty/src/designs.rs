// The kernels and the designs (builds) of tp_bench, in one place: included
// by build.rs, which builds every kernel once per design that is on
// (`Build::variant`, module `KERNEL_DESIGN`), and by src/main.rs, which
// times and decodes them. Turning a design on or off is its one line below.

/// A kernel: `(name, source)`. The name is what the tables print and what
/// FILTER matches; the source is compiled once per design that is on.
pub type Kernel = (&'static str, &'static str);

/// A design: `(name, kernels, macros)`: the kernels it is built for (none:
/// off), and its macros, each `(name, value)` an nvcc `-D` of the design's
/// builds (traced and untraced).
pub type Design = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// Every kernel of [`KERNELS`], for a design that is built for all.
pub const ALL: &[&str] = &["sgemm", "fastcu", "softmax", "hgemm"];

pub const KERNELS: &[Kernel] = &[
    // siboehm/SGEMM_CUDA sgemmWarptiling<128,128,16,64,64,4,8,4,128>, fp32 4096^3.
    ("sgemm", "kernels/sgemm_warptiling.cu"),
    // pranjalssh/fast.cu matmulKernel12<128,256,64,384,3,128,2,1>, bf16 8192^3.
    ("fastcu", "kernels/fastcu_matmul12.cu"),
    // karpathy/llm.c softmax_forward_kernel4, one 1,024-thread block per row
    // of 4,096 fp32 values, 16,384 rows.
    ("softmax", "kernels/softmax_llmc.cu"),
    // Bruce-Lee-LY/cuda_hgemm mmaAsyncStage3Kernel: mma.sync, ldmatrix and
    // three cp.async stages, fp16 8192^3.
    ("hgemm", "kernels/hgemm_mma_stage3.cu"),
];

pub const DESIGNS: &[Design] = &[
    // The default recorder (store), its events stamped with %globaltimer
    // bits.
    ("default", ALL, &[]),
    // The same recorder with the kernel's context opened in the kernel
    // (KTRACE_OPEN) instead of KTRACE_DISPATCH: every block runs the one
    // body, whose events a warp recording nothing branches over or issues
    // predicated (the default before the block dispatch).
    ("open", ALL, &[("TP_OPEN_IN_BODY", "1")]),
    // The block dispatch written in the kernel (kernels/tp_dispatch.cuh),
    // the block's choice made from the argument alone, with no barrier, and
    // the body that records nothing first.
    ("sampled", ALL, &[("TP_SAMPLED", "1")]),
    // The default dispatch with events that do not branch
    // (KTRACE_STORE_BRANCH 0): the recording body's events are straight
    // code, a warp that records nothing in a recording block has its
    // stores predicated off.
    ("pred", ALL, &[("KTRACE_STORE_BRANCH", "0")]),
    // `sampled` with events that do not branch.
    (
        "sampred",
        ALL,
        &[("TP_SAMPLED", "1"), ("KTRACE_STORE_BRANCH", "0")],
    ),
    // Time anchors by the event count.
    ("count", ALL, &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_COUNT")]),
    // No time anchors and no stamps.
    ("noanchor", ALL, &[("KTRACE_ANCHOR_CYCLES", "0")]),
    // Time anchors by the clock (the default before stamped events).
    ("clock", ALL, &[("KTRACE_ANCHORS", "KTRACE_ANCHORS_CLOCK")]),
    // Each warp keeps its newest 64 events in shared memory.
    (
        "newest",
        ALL,
        &[("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST")],
    ),
    // Events staged in shared memory, copied out by the copy engine.
    ("smem", ALL, &[("KTRACE_RECORDER", "KTRACE_RECORDER_SMEM")]),
    // Events held in the warp's registers, written 32 at a time. Markers
    // must be reached by the whole warp: not fast.cu's one-lane producer.
    (
        "ring",
        &["sgemm"],
        &[("KTRACE_RECORDER", "KTRACE_RECORDER_RING")],
    ),
];

/// The module of `kernel` built as `design`: `sgemm_default`, the constant
/// `kernels::SGEMM_DEFAULT`.
pub fn module_name(kernel: &str, design: &str) -> String {
    format!("{kernel}_{design}")
}
