//! Builds the example kernels (traced and untraced cubins for sm_90a) and
//! the C++ launcher library of the `cc_launcher` example.
fn main() {
    ktrace_build::Build::new()
        .kernel_dir("examples/kernels")
        .scan_dir("examples/bench")
        .launcher("examples/launchers/cc_launcher.cu")
        .launcher_header("examples/launchers/cc_launcher.h")
        .include("examples/launchers")
        .arch("sm_90a")
        .compile();
}
