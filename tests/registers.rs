//! What tracing costs a kernel in registers and shared memory, read with
//! `cuobjdump -res-usage` from the traced and untraced cubins of every
//! example kernel (built by build.rs) and of tests/cuda/all_markers.cu:
//!
//! - no traced kernel spills (no stack, no local memory);
//! - the shared-memory recorder (`KTRACE_RECORDER_SMEM`, which a kernel
//!   opts into) adds 272 bytes of static shared memory per warp of
//!   `KTRACE_SMEM_WARPS` to a block, the newest-N recorder
//!   (`KTRACE_RECORDER_NEWEST`) 8 bytes per entry and 16 per warp (528
//!   bytes per warp with 64 entries), each rounded up to a multiple of
//!   1,024 bytes (9,216 bytes for the smem recorder's default 32 warps), so
//!   that a kernel's dynamic shared memory keeps its 1,024-byte alignment;
//!   the other recorders (the default store recorder) none;
//! - on the small kernels the traced build keeps the occupancy of the
//!   untraced one (blocks per SM from registers, threads and shared memory
//!   on sm_90), and adds at most a fixed number of registers, with the
//!   default recorder and with the newest-N recorder (the small kernels
//!   built a second time with it);
//! - the warp-specialized kernel's producer runs in 24 registers
//!   (`setmaxnreg`), traced too, with either of its recorders.
//!
//! Prints every kernel's registers, untraced and traced. Needs nvcc and
//! cuobjdump (scripts/setup-cuda.sh); skipped with a message when they are
//! missing, unless `KTRACE_REQUIRE_NVCC` is set.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ktrace_build::test_support::cuda_tools;

// KERNEL_VARIANTS: the modules build.rs builds from another module's
// source, with their macros.
include!("../examples/kernels/variants.rs");

/// Shared memory the shared-memory recorder takes per warp: 2 x 16
/// entries x 8 bytes and 16 bytes of state.
const SMEM_WARP_BYTES: u64 = 2 * 16 * 8 + 16;
/// The block's shared memory the driver reserves on sm_90, which
/// `-res-usage` counts once a kernel has any.
const RESERVED_SMEM: u64 = 1024;

#[derive(Clone, Copy, Debug)]
struct Usage {
    reg: u64,
    stack: u64,
    local: u64,
    shared: u64,
}

/// `cuobjdump -res-usage`, by function.
fn res_usage(tool: &Path, cubin: &Path) -> BTreeMap<String, Usage> {
    let map: BTreeMap<String, Usage> = common::res_usage_lines(tool, cubin)
        .into_iter()
        .map(|(f, line)| {
            let field = |name: &str| common::res_field(&line, name);
            let usage = Usage {
                reg: field("REG"),
                stack: field("STACK"),
                local: field("LOCAL"),
                shared: field("SHARED"),
            };
            (f, usage)
        })
        .collect();
    assert!(!map.is_empty(), "no function in {}", cubin.display());
    map
}

/// Resident blocks per SM on sm_90 for a block of `threads` threads:
/// registers are given out per warp in units of 256 (8 per thread), 64 K
/// per SM; at most 2,048 threads, 32 blocks and 228 KiB of shared memory
/// per SM, of which each block takes its own plus 1 KiB the system reserves.
fn blocks_per_sm(u: &Usage, threads: u64) -> u64 {
    let warps = threads.div_ceil(32);
    let by_regs = 65536 / (u.reg.div_ceil(8) * 8 * 32 * warps);
    let by_threads = 2048 / threads;
    let by_smem = 233_472 / (u.shared + 1024);
    by_regs.min(by_threads).min(by_smem).min(32)
}

/// The traced and untraced cubins of tests/cuda/all_markers.cu, built the
/// way build.rs builds the examples.
fn build_all_markers(nvcc: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let src = root.join("tests/cuda/all_markers.cu");
    let built = ktrace_build::Build::new()
        .kernel(&src)
        .arch("sm_90a")
        .nvcc(nvcc)
        .out_dir(dir)
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, traced, untraced) = built.modules[0].clone();
    (traced, untraced)
}

/// The shared memory the traced build of module `module` should add to a
/// block: the staging areas when its source (or, for a variant, its
/// macros) picks a shared-memory recorder (`KTRACE_SMEM_WARPS` of them, 32
/// unless it says otherwise), rounded up to a multiple of 1,024 bytes, else
/// none.
fn recorder_smem(module: &str) -> u64 {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let src = if module == "all_markers" {
        root.join("tests/cuda/all_markers.cu")
    } else {
        root.join(format!("examples/kernels/{module}.cu"))
    };
    let variant = KERNEL_VARIANTS.iter().find(|v| v.0 == module);
    let text = match (module.strip_suffix("@newest"), variant) {
        (Some(_), _) => return (NEWEST_SMALL_WARPS * (64 * 8 + 16)).next_multiple_of(1024),
        (None, Some(_)) => String::new(),
        (None, None) => {
            std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        }
    };
    let define = |name: &str| match variant {
        Some((_, _, defines)) => defines
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string()),
        None => text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name))
                .then(|| w.next().unwrap_or("").to_string())
        }),
    };
    let per_warp = match define("KTRACE_RECORDER").as_deref() {
        Some("2") | Some("KTRACE_RECORDER_SMEM") => SMEM_WARP_BYTES,
        Some("3") | Some("KTRACE_RECORDER_NEWEST") => {
            let entries = define("KTRACE_NEWEST_ENTRIES").map_or(64, |w| w.parse::<u64>().unwrap());
            entries * 8 + 16
        }
        _ => return 0,
    };
    let warps = define("KTRACE_SMEM_WARPS").map_or(32, |w| w.parse::<u64>().unwrap());
    (warps * per_warp).next_multiple_of(1024)
}

/// `KTRACE_SMEM_WARPS` of the small kernels' newest-N builds.
const NEWEST_SMALL_WARPS: u64 = 8;

/// The small kernels (big_grid, spin, all_markers) built again with the
/// newest-N recorder: `(module@newest, traced, untraced)`.
fn build_small_newest(nvcc: &Path, dir: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let warps = NEWEST_SMALL_WARPS.to_string();
    let built = ktrace_build::Build::new()
        .kernel(root.join("examples/kernels/big_grid.cu"))
        .kernel(root.join("examples/kernels/spin.cu"))
        .kernel(root.join("tests/cuda/all_markers.cu"))
        .define("KTRACE_RECORDER", Some("KTRACE_RECORDER_NEWEST"))
        .define("KTRACE_SMEM_WARPS", Some(&warps))
        .arch("sm_90a")
        .nvcc(nvcc)
        .out_dir(dir)
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    built
        .modules
        .iter()
        .map(|(name, t, u)| (format!("{name}@newest"), t.clone(), u.clone()))
        .collect()
}

#[test]
fn registers_and_shared_memory_of_traced_builds() {
    let Some([nvcc, cuobjdump]) = cuda_tools(["nvcc", "cuobjdump"]) else {
        return;
    };
    let kernels = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    let mut modules: Vec<(String, PathBuf, PathBuf)> = std::fs::read_dir(&kernels)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().to_string();
            let module = name.strip_suffix(".traced.cubin")?.to_string();
            Some((
                module.clone(),
                kernels.join(&name),
                kernels.join(format!("{module}.untraced.cubin")),
            ))
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let (t, u) = build_all_markers(&nvcc, tmp.path());
    modules.push(("all_markers".into(), t, u));
    let tmp_newest = tempfile::tempdir().unwrap();
    modules.extend(build_small_newest(&nvcc, tmp_newest.path()));
    modules.sort();
    assert!(
        modules.len() >= 10,
        "example kernels not found: {modules:?}"
    );

    // The small kernels: block size (their launches, for occupancy) and
    // the most registers the default recorder may add to them. The target
    // was 6; the open's support for sites (layout version 4: a call that
    // takes a sampled warp's ticket and reads the site's keep rule and
    // ring, then one shuffle of the facts the markers branch on) takes
    // more at the open, where these kernels peak: the kernel's count
    // includes the call's registers: about 28 to 32 for any traced
    // kernel (held windows need the site's `triggered` word in every warp
    // at the open: 2 registers more on all_markers, 1 on big_grid_axpy). On sm_90 a kernel of at most 32 registers still runs 2,048
    // threads per SM, so none of them loses occupancy by it (checked
    // below), and kernels whose peak is elsewhere (their main loop) do
    // not pay it. Stamped events (the default since layout version 6)
    // take one more on all_markers (31 registers, against 29 with time
    // anchors by the clock): ptxas predicates one of its events instead
    // of branching over it, and keeps the predicated block's operands
    // live.
    let small: BTreeMap<&str, (u64, u64)> = [
        ("big_grid_axpy", (256, 17)),
        ("spin", (128, 8)),
        ("all_markers", (256, 21)),
    ]
    .into_iter()
    .collect();
    // Most registers the newest-N recorder may add to them.
    const MAX_EXTRA_NEWEST: u64 = 21;
    let mut seen_small = 0;
    println!(
        "{:<22} {:<24} {:>9} {:>7} {:>7} {:>14}",
        "module", "function", "untraced", "traced", "extra", "extra shared"
    );
    for (module, traced, untraced) in &modules {
        let t = res_usage(&cuobjdump, traced);
        let u = res_usage(&cuobjdump, untraced);
        assert_eq!(
            t.keys().collect::<Vec<_>>(),
            u.keys().collect::<Vec<_>>(),
            "{module}: functions differ"
        );
        for (f, tu) in &t {
            let uu = &u[f];
            assert!(
                tu.stack == uu.stack && tu.local == uu.local,
                "{module} {f}: the traced build spills (stack {}, local {}; untraced {}, {})",
                tu.stack,
                tu.local,
                uu.stack,
                uu.local
            );
            let reserved = if uu.shared == 0 { RESERVED_SMEM } else { 0 };
            let extra_shared = tu.shared - uu.shared - reserved.min(tu.shared - uu.shared);
            let expected = recorder_smem(module);
            if expected == 0 {
                assert_eq!(tu.shared, uu.shared, "{module} {f}: shared memory added");
            } else {
                // One 1,024-byte-aligned block after the kernel's own
                // static shared memory (which ends where it ends).
                assert!(
                    (expected..expected + 1024).contains(&extra_shared),
                    "{module} {f}: the traced build adds {extra_shared} bytes of shared \
                     memory, not {expected}"
                );
                // A kernel without static shared memory of its own: its
                // dynamic shared memory starts where it would untraced,
                // modulo 1,024.
                if uu.shared == 0 {
                    assert_eq!(
                        extra_shared % 1024,
                        0,
                        "{module} {f}: the recorder's {extra_shared} bytes move the dynamic \
                         shared memory off its 1,024-byte alignment"
                    );
                }
            }
            let extra = tu.reg as i64 - uu.reg as i64;
            println!(
                "{module:<22} {f:<24} {:>9} {:>7} {extra:>+7} {extra_shared:>14}",
                uu.reg, tu.reg
            );
            if let Some(&(threads, max_default)) = small.get(f.as_str()) {
                seen_small += 1;
                let max = if module.ends_with("@newest") {
                    MAX_EXTRA_NEWEST
                } else {
                    max_default
                };
                assert!(
                    extra <= max as i64,
                    "{module} {f}: tracing adds {extra} registers (at most {max})"
                );
                assert_eq!(
                    blocks_per_sm(tu, threads),
                    blocks_per_sm(uu, threads),
                    "{module} {f}: tracing lowers the blocks per SM ({tu:?} against {uu:?})"
                );
            }
        }
    }
    assert_eq!(seen_small, 2 * small.len(), "small kernels not found");

    // The producer warpgroups give their registers back down to 24, in the
    // traced builds too (which spill nothing, checked above); the gemm's
    // no-branch build and its comparison build keep 40.
    for (module, function, regs) in [
        ("warp_specialized", "warp_specialized", 24),
        ("warp_specialized_store", "warp_specialized", 24),
        ("warp_specialized_newest", "warp_specialized", 24),
        ("warp_specialized_newest_nobranch", "warp_specialized", 24),
        ("gemm", "ktrace_gemm_bf16_tn", 24),
        ("gemm_newest", "ktrace_gemm_bf16_tn", 24),
        ("gemm_newest_nobranch", "ktrace_gemm_bf16_tn", 40),
        ("gemm_p40", "ktrace_gemm_bf16_tn", 40),
    ] {
        for variant in ["traced", "untraced"] {
            let cubin = kernels.join(format!("{module}.{variant}.cubin"));
            let code = common::sass(&cuobjdump, &cubin, Some(function));
            let dealloc = format!("{regs:#x}");
            assert!(
                code.iter()
                    .any(|(_, s)| s.contains("USETMAXREG.DEALLOC") && s.ends_with(&dealloc)),
                "{module} {variant}: no setmaxnreg.dec to {regs} registers"
            );
        }
    }
}
