//! cudaforge compiles the kernels, twice: traced and untraced, each into
//! the directory ktrace-build names, with the arguments it gives.
use cudaforge::KernelBuilder;
use ktrace_build::Variant;

fn main() {
    // Scans kernels/ for markers and writes the region header and
    // OUT_DIR/ktrace.rs; runs no nvcc.
    let gen = ktrace_build::Build::new().kernel_dir("kernels").generate();
    for variant in [Variant::Traced, Variant::Untraced] {
        KernelBuilder::new()
            .source_dir("kernels")
            .compute_cap(90)
            .out_dir(gen.out_dir(variant))
            .args(gen.args(variant))
            .build_ptx()
            .unwrap_or_else(|e| panic!("cudaforge ({variant}): {e}"));
    }
}
