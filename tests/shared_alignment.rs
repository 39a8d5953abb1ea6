//! The build's shared-memory alignment check against the example kernels'
//! real images (built by build.rs): the static shared memory it reads from
//! each cubin's ELF sections is what `cuobjdump -res-usage` reports for
//! every kernel, and no example kernel's traced build starts its dynamic
//! shared memory off a 1,024-byte alignment that its untraced build has;
//! among them `smem_align_own_newest`, whose 100 bytes of static shared
//! memory of its own sit beside the newest-N recorder's rings. Needs
//! cuobjdump (scripts/setup-cuda.sh); skipped with a message when it is
//! missing, unless `KTRACE_REQUIRE_NVCC` is set.

use std::collections::BTreeMap;
use std::path::Path;

use ktrace_build::shared_memory::{image_shared_shifts, static_shared, DYNAMIC_SHARED_ALIGN};
use ktrace_build::test_support::cuda_tools;

mod common;

/// `SHARED` of every function in `cubin`, by `cuobjdump -res-usage`.
fn res_usage_shared(tool: &Path, cubin: &Path) -> BTreeMap<String, u64> {
    common::res_usage_lines(tool, cubin)
        .into_iter()
        .map(|(f, line)| (f, common::res_field(&line, "SHARED")))
        .collect()
}

#[test]
fn the_alignment_check_reads_what_cuobjdump_reads_and_finds_no_shift() {
    let Some([cuobjdump]) = cuda_tools(["cuobjdump"]) else {
        return;
    };
    let kernels = Path::new(env!("OUT_DIR")).join("ktrace/kernels");
    let mut modules: Vec<String> = std::fs::read_dir(&kernels)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().to_string();
            Some(name.strip_suffix(".traced.cubin")?.to_string())
        })
        .collect();
    modules.sort();
    assert!(
        modules.iter().any(|m| m == "smem_align_own_newest") && modules.len() >= 10,
        "example kernels not found: {modules:?}"
    );
    for module in &modules {
        let traced = kernels.join(format!("{module}.traced.cubin"));
        let untraced = kernels.join(format!("{module}.untraced.cubin"));
        for image in [&traced, &untraced] {
            let ours = static_shared(&std::fs::read(image).unwrap()).unwrap();
            let theirs = res_usage_shared(&cuobjdump, image);
            for (f, &bytes) in &theirs {
                assert_eq!(
                    ours.get(f).copied().unwrap_or(0),
                    bytes,
                    "{}: {f}: static shared memory",
                    image.display()
                );
            }
            for f in ours.keys() {
                assert!(
                    theirs.contains_key(f),
                    "{}: {f} unknown to cuobjdump",
                    image.display()
                );
            }
        }
        let shifts = image_shared_shifts(&traced, &untraced).unwrap();
        assert_eq!(shifts, Some(Vec::new()), "{module}");
    }
    // The kernel with shared memory of its own: the compiler pads it to its
    // dynamic array's 1,024-byte alignment untraced, and the recorder's
    // rings keep that traced.
    let own = |v: &str| {
        let image = kernels.join(format!("smem_align_own_newest.{v}.cubin"));
        static_shared(&std::fs::read(image).unwrap()).unwrap()["smem_align"]
    };
    let (t, u) = (own("traced"), own("untraced"));
    println!("smem_align_own_newest: static shared memory {u} bytes untraced, {t} traced");
    assert!(
        u % DYNAMIC_SHARED_ALIGN == 0 && t % DYNAMIC_SHARED_ALIGN == 0 && t > u,
        "smem_align_own_newest: {u} bytes untraced, {t} traced"
    );
}
