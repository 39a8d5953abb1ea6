//! Builds the example kernels (traced and untraced cubins for sm_90a), the
//! variants of some of them (examples/kernels/variants.rs: the same source
//! with another recorder or register split, each a module of its own) and
//! the C++ launcher library of the `cc_launcher` example.

include!("kernels/variants.rs");

fn main() {
    let mut build = ktrace_build::Build::new();
    build
        .kernel_dir("kernels")
        .scan_dir("bench")
        .launcher("launchers/cc_launcher.cu")
        .launcher_header("launchers/cc_launcher.h")
        .include("launchers")
        .arch("sm_90a");
    for (module, source, defines) in KERNEL_VARIANTS {
        let variant = build.variant(module, source);
        for (name, value) in *defines {
            variant.define(name, *value);
        }
    }
    build.compile();
}
