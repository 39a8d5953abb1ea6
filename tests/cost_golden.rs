//! The markers' instruction cost of every example kernel's traced build
//! (ktrace-build's `.cost` files, `ktrace_build::cost`), held to the golden
//! file `tests/golden/marker_costs.txt`: a change to the device headers that
//! adds an instruction to any traced kernel's loops, or to its open and
//! flush, fails here until the file is re-blessed
//! (`KTRACE_BLESS=1 cargo test --test cost_golden`), and the commit that
//! re-blesses it quotes a GPU measurement of the kernels it changed.
//!
//! Needs the build's SASS maps (nvdisasm, scripts/setup-cuda.sh); skipped
//! with a message without it, unless `KTRACE_REQUIRE_NVCC` is set.

use std::path::Path;

#[test]
fn marker_costs_match_the_golden_file() {
    ktrace_build::test_support::check_marker_costs(
        Path::new(env!("OUT_DIR")),
        &Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .join("tests/golden/marker_costs.txt"),
        &["gemm", "sgemm_bench"],
    );
}
