//! bindgen_cuda compiles the kernels, twice: traced and untraced, each into
//! the directory ktrace-build names, with the arguments it gives (as
//! `&'static str`, which bindgen_cuda's `arg` takes).
use ktrace_build::Variant;

fn main() {
    // Scans kernels/ for markers and writes the region header and
    // OUT_DIR/ktrace.rs; runs no nvcc.
    let gen = ktrace_build::Build::new().kernel_dir("kernels").generate();
    // bindgen_cuda takes the architecture from CUDA_COMPUTE_CAP, else it
    // runs nvidia-smi (and panics where there is none): sm_90 unless set.
    println!("cargo:rerun-if-env-changed=CUDA_COMPUTE_CAP");
    if std::env::var_os("CUDA_COMPUTE_CAP").is_none() {
        std::env::set_var("CUDA_COMPUTE_CAP", "90");
    }
    for variant in [Variant::Traced, Variant::Untraced] {
        // It finds nvcc on PATH and the toolkit's headers through
        // CUDA_PATH, CUDA_ROOT or /usr/local/cuda.
        let mut b = bindgen_cuda::Builder::default()
            .kernel_paths(gen.sources.clone())
            .out_dir(gen.out_dir(variant));
        for arg in gen.static_args(variant) {
            b = b.arg(arg);
        }
        b.build_ptx()
            .unwrap_or_else(|e| panic!("bindgen_cuda ({variant}): {e:?}"));
    }
}
