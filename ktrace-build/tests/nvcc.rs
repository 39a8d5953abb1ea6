//! Builds with a real nvcc (skipped with a message when none is found and
//! `KTRACE_REQUIRE_NVCC` is unset; scripts/test.sh sets it) and with a fake
//! one that records its command line.

use std::path::{Path, PathBuf};

use ktrace_build::test_support::cuda_tools;
use ktrace_build::{Build, Error, Variant};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

const GOOD: &str = r#"
#include <ktrace.cuh>
extern "C" __global__ void scale(float* x, int n, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("body");
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
  KTRACE_E("body");
  KTRACE_M_IF(n > 4, "tick");
}
"#;

#[test]
fn real_build_writes_both_images_and_the_tables() {
    let Some([nvcc]) = cuda_tools(["nvcc"]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(&kdir, "scale.cu", GOOD);
    let mut build = Build::new();
    build
        .kernel_dir(&kdir)
        .nvcc(&nvcc)
        .out_dir(tmp.path().join("out"))
        .ptxas_verbose(true);
    // The same source again with the newest-N recorder: its report lines
    // name the variant's module.
    build
        .variant("scale_newest", kdir.join("scale.cu"))
        .define("KTRACE_RECORDER", "KTRACE_RECORDER_NEWEST")
        .define("KTRACE_SMEM_WARPS", "4");
    let o = build.try_compile().unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<_> = o
        .regions
        .regions()
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, ["body", "tick"]);
    assert!(o.unpaired_regions.is_empty(), "{:?}", o.unpaired_regions);
    let (name, traced, untraced) = &o.modules[0];
    assert_eq!(name, "scale");
    let t = std::fs::read(traced).unwrap();
    let u = std::fs::read(untraced).unwrap();
    assert_eq!(&t[..4], b"\x7fELF", "cubin is an ELF image");
    assert_eq!(&u[..4], b"\x7fELF");
    assert_ne!(t, u, "traced and untraced images differ");
    let rust = std::fs::read_to_string(&o.rust_file).unwrap();
    assert!(rust.contains("pub const SCALE: ::ktrace_runtime::KernelModule"));
    assert!(rust.contains("(0, \"body\")"));
    // Register report of both variants.
    for (src, variant, msg) in &o.nvcc_messages {
        let line = msg
            .lines()
            .find(|l| l.contains("Used"))
            .unwrap_or("(no ptxas report)");
        println!("{} {}: {}", src.display(), variant.as_str(), line.trim());
        assert!(msg.contains("registers"), "ptxas -v report missing: {msg}");
    }
    // The report's lines, as a build script prints them for Cargo.
    let report = ktrace_build::ptxas_report(&o);
    for (variant, source) in [
        ("traced", "scale.cu"),
        ("untraced", "scale.cu"),
        ("traced", "scale.cu as scale_newest"),
        ("untraced", "scale.cu as scale_newest"),
    ] {
        let prefix = format!("{source} ({variant}): ");
        assert!(
            report
                .iter()
                .any(|l| l.starts_with(&prefix) && l.contains("Used") && l.contains("registers")),
            "{report:#?}"
        );
        assert!(
            report
                .iter()
                .any(|l| l.starts_with(&prefix) && l.contains("bytes spill stores")),
            "{report:#?}"
        );
    }
    // Unchanged inputs leave outputs untouched: the same build run again.
    let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let (before, stamp) = (modified(&o.rust_file), modified(traced));
    std::thread::sleep(std::time::Duration::from_millis(20));
    build.try_compile().unwrap();
    assert_eq!(modified(&o.rust_file), before);
    assert_eq!(modified(traced), stamp);
}

#[test]
fn unknown_region_name_fails_to_compile_naming_it() {
    let Some([nvcc]) = cuda_tools(["nvcc"]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    // The header lives outside the scanned directories, so its name never
    // reaches the table.
    let inc = tmp.path().join("unscanned");
    write(&inc, "helper.cuh", "__device__ inline void helper(ktrace::Context& ktrace_ctx) { KTRACE_M(\"not_in_table\"); }\n");
    write(
        &kdir,
        "k.cu",
        "#include <ktrace.cuh>\n#include \"helper.cuh\"\nextern \"C\" __global__ void k(ktrace_arg t) { KTRACE_OPEN(t); KTRACE_B(\"known\"); helper(ktrace_ctx); KTRACE_E(\"known\"); }\n",
    );
    let err = Build::new()
        .kernel_dir(&kdir)
        .include(&inc)
        .nvcc(&nvcc)
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            Error::Compile {
                variant: Variant::Traced,
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains("\"not_in_table\" is not in the region table"),
        "{text}"
    );
    // The fix for a marker in a header outside the kernel sources.
    assert!(text.contains("Build::scan_dir"), "{text}");
    assert!(
        text.contains("helper.cuh(1)"),
        "nvcc's file and line are shown: {text}"
    );
}

#[test]
fn nvcc_errors_are_shown_with_file_and_line() {
    let Some([nvcc]) = cuda_tools(["nvcc"]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(
        &kdir,
        "broken.cu",
        "#include <ktrace.cuh>\n\n__global__ void k() { int x = ; }\n",
    );
    let err = Build::new()
        .kernel_dir(&kdir)
        .nvcc(&nvcc)
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("nvcc failed on"), "{text}");
    assert!(text.contains("broken.cu(3): error"), "{text}");
    assert!(text.contains("command: "), "{text}");
}

#[cfg(unix)]
/// 20 accumulators live across a loop, at most 32 registers a thread
/// (`__launch_bounds__(256, 8)`): the untraced build fits them, the traced
/// one gives registers to the markers' context (with time anchors by the
/// clock, whose last anchor's clock stays in a register) and spills.
const TIGHT: &str = r#"
#define KTRACE_ANCHORS KTRACE_ANCHORS_CLOCK
#include <ktrace.cuh>
extern "C" __global__ void __launch_bounds__(256, 8)
    tight(const float* __restrict__ x, float* __restrict__ y, int n, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  float a[20];
#pragma unroll
  for (int j = 0; j < 20; ++j) a[j] = x[threadIdx.x + j];
  for (int i = 0; i < n; ++i) {
    KTRACE_B("step");
    float v = x[i * blockDim.x + threadIdx.x];
#pragma unroll
    for (int j = 0; j < 20; ++j) a[j] = a[j] * v + a[(j + 1) % 20];
    KTRACE_E("step");
  }
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 20; ++j) s += a[j];
  y[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"#;

#[test]
fn a_traced_build_that_spills_where_the_untraced_does_not_is_reported() {
    let Some([nvcc]) = cuda_tools(["nvcc"]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(&kdir, "scale.cu", GOOD);
    write(&kdir, "tight.cu", TIGHT);
    // Without ptxas_verbose: every build asks ptxas for its report.
    let o = Build::new()
        .kernel_dir(&kdir)
        .arch("sm_90a")
        .nvcc(&nvcc)
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    for (src, variant, msg) in &o.nvcc_messages {
        println!("{} {}:\n{msg}", src.display(), variant.as_str());
    }
    let reported: Vec<_> = o
        .spill_growth
        .iter()
        .map(|(module, g)| (module.as_str(), g.function.as_str(), g.arch.as_str()))
        .collect();
    assert_eq!(
        reported,
        [("tight", "tight", "sm_90a")],
        "{:#?}",
        o.spill_growth
    );
    let g = &o.spill_growth[0].1;
    assert!(g.traced.stores > 0 && g.untraced.stores == 0, "{g:?}");
    // The figures are ptxas's own, from the traced build's report.
    let traced_report = &o.nvcc_messages[2].2;
    assert!(
        traced_report.contains(&format!("{} bytes spill stores", g.traced.stores)),
        "{traced_report}"
    );
    println!("{}", g.message("tight"));
}

#[test]
fn command_lines_with_a_fake_nvcc() {
    let tmp = tempfile::tempdir().unwrap();
    let (nvcc, log) = ktrace_build::test_support::fake_nvcc(tmp.path(), &[]);
    let kdir = tmp.path().join("kernels");
    write(&kdir, "a.cu", GOOD);
    write(&kdir, "sub/b.cu", "KTRACE_M(\"b\");\n");
    write(&kdir, "common.cuh", "KTRACE_M(\"from header\");\n");
    let o = Build::new()
        .kernel_dir(&kdir)
        .arch("sm_90a")
        .arch("sm_80")
        .define("TILE", Some("128"))
        .flag("-lineinfo")
        .nvcc(&nvcc)
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    let lines = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 4, "two modules, two variants: {lines:?}");
    for l in &lines {
        assert!(l.starts_with("-fatbin -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=sm_80 -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -lineinfo"), "{l}");
        assert!(
            l.contains("-DTILE=128 -lineinfo -Xptxas -v -MD -MF "),
            "{l}"
        );
        assert!(l.contains(".fatbin.d -o "), "{l}");
        assert!(l.contains("/ktrace/include"), "{l}");
    }
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("-DKTRACE_ENABLED=1"))
            .count(),
        2
    );
    let names: Vec<_> = o.regions.regions().iter().map(|r| r.name.clone()).collect();
    assert_eq!(names, ["b", "body", "from header", "tick"]);
    assert_eq!(o.modules.len(), 2);
    assert!(o.modules[0]
        .1
        .to_string_lossy()
        .ends_with("a.traced.fatbin"));
    assert_eq!(std::fs::read(&o.modules[1].2).unwrap(), b"IMAGE");
}

#[test]
fn bad_markers_fail_before_nvcc_runs_and_name_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(&kdir, "k.cu", "\nKTRACE_B(name);\nKTRACE_E(\"\");\n");
    let err = Build::new()
        .kernel_dir(&kdir)
        .nvcc("/nonexistent/nvcc")
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("2 bad trace markers:"), "{text}");
    assert!(
        text.contains("k.cu:2: KTRACE_B: the region name must be one plain string literal"),
        "{text}"
    );
    assert!(
        text.contains("k.cu:3: KTRACE_E: region name is empty"),
        "{text}"
    );
}

#[test]
fn unknown_architectures_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(&kdir, "k.cu", GOOD);
    let err = Build::new()
        .kernel_dir(&kdir)
        .arch("sm_91")
        .nvcc("/nonexistent/nvcc")
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("unknown GPU architecture \"sm_91\""),
        "{text}"
    );
    assert!(text.contains("sm_90a for wgmma"), "{text}");
    assert_eq!(ktrace_build::Arch::parse("90a").unwrap().sm(), "sm_90a");
    assert!(ktrace_build::Arch::parse("sm_90b").is_err());
}

#[test]
fn duplicate_module_names_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(&kdir, "x/k.cu", GOOD);
    write(&kdir, "y/k.cu", GOOD);
    let err = Build::new()
        .kernel_dir(&kdir)
        .nvcc("/nonexistent/nvcc")
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_err();
    assert!(
        matches!(&err, Error::DuplicateModule { name, .. } if name == "K"),
        "{err}"
    );
    assert!(
        err.to_string().contains("both give the module name K"),
        "{err}"
    );
}

/// `KTRACE_B("compute") … KTRACE_E("body")`: it compiles (each name is a
/// region), and the build says that neither can ever pair.
#[test]
fn regions_that_only_begin_or_only_end_are_reported() {
    let Some([nvcc]) = cuda_tools(["nvcc"]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let kdir = tmp.path().join("kernels");
    write(
        &kdir,
        "mixed.cu",
        &GOOD
            .replace("KTRACE_B(\"body\")", "KTRACE_B(\"compute\")")
            .replace("scale(", "mixed("),
    );
    let o = Build::new()
        .kernel_dir(&kdir)
        .nvcc(&nvcc)
        .out_dir(tmp.path().join("out"))
        .try_compile()
        .unwrap_or_else(|e| panic!("{e}"));
    let found: Vec<(&str, bool)> = o
        .unpaired_regions
        .iter()
        .map(|u| (u.name.as_str(), u.begins_only))
        .collect();
    assert_eq!(found, [("body", false), ("compute", true)]);
    let m = o.unpaired_regions[1].message();
    assert!(
        m.contains("mixed.cu:5") && m.contains("KTRACE_E(\"compute\")"),
        "{m}"
    );
}
