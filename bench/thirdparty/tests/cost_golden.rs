//! The markers' instruction cost of every kernel and design of tp_bench
//! (ktrace-build's `.cost` files, `ktrace_build::cost`), held to the golden
//! file `golden/marker_costs.txt`: a change to the device headers that
//! adds an instruction to any traced kernel's loops, or to its open and
//! flush, fails here until the file is re-blessed
//! (`KTRACE_BLESS=1 cargo test --test cost_golden`, from bench/thirdparty), and the commit that
//! re-blesses it quotes a GPU measurement of the kernels it changed.
//!
//! Needs the build's SASS maps (nvdisasm, ../../scripts/setup-cuda.sh); skipped
//! with a message without it, unless `KTRACE_REQUIRE_NVCC` is set.

use std::path::Path;

use ktrace_build::test_support::cuda_tools;

#[test]
fn marker_costs_match_the_golden_file() {
    if cuda_tools(["nvdisasm"]).is_none() {
        return;
    }
    let kernels = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    let actual = ktrace_build::cost::collect(&kernels)
        .unwrap_or_else(|| panic!("no .cost file in {}", kernels.display()));
    assert!(
        actual.contains("module sgemm_default\n") && actual.contains("module softmax_default\n"),
        "the bench modules are missing:\n{actual}"
    );
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/marker_costs.txt");
    let bless = std::env::var_os("KTRACE_BLESS").is_some_and(|v| v == "1");
    if let Err(e) = ktrace_build::cost::check_golden(&golden, &actual, bless) {
        panic!("{e}");
    }
}
