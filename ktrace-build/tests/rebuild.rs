//! Rebuilds run nvcc only for the images whose inputs changed: with a fake
//! nvcc (always) and with the real one (skipped with a message when none is
//! found and `KTRACE_REQUIRE_NVCC` is unset).

use std::path::{Path, PathBuf};

use ktrace_build::test_support::cuda_tools;
use ktrace_build::{Build, Freshness, Output, Variant};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn append(path: &Path, text: &str) {
    let old = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, old + text).unwrap();
}

/// The jobs that ran: file name, variant, why.
fn ran(o: &Output) -> Vec<(String, Variant, Freshness)> {
    o.jobs
        .iter()
        .filter(|j| j.2.ran())
        .map(|(src, v, f)| {
            let name = src.file_name().unwrap().to_string_lossy().to_string();
            (name, *v, f.clone())
        })
        .collect()
}

fn log_lines(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

const KERNEL: &str = r#"
#include <ktrace.cuh>
#include "common.cuh"
extern "C" __global__ void NAME(float* x, int n, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  KTRACE_B("body");
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= SCALE;
  KTRACE_E("body");
}
"#;

/// `kernels/a.cu` (including `inc/common.cuh`, outside the scanned
/// directory) and `kernels/b.cu` (not including it).
fn sources(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (a, b) = (root.join("kernels/a.cu"), root.join("kernels/b.cu"));
    let common = root.join("inc/common.cuh");
    write(&a, &KERNEL.replace("NAME", "a"));
    write(
        &b,
        &KERNEL
            .replace("NAME", "b")
            .replace("#include \"common.cuh\"\n", "#define SCALE 3.0f\n"),
    );
    write(&common, "#define SCALE 2.0f\n");
    (a, b, common)
}

fn build(root: &Path, nvcc: &Path) -> Build {
    let mut b = Build::new();
    b.kernel_dir(root.join("kernels"))
        .include(root.join("inc"))
        .nvcc(nvcc)
        .out_dir(root.join("out"))
        .ptxas_verbose(true);
    b
}

fn compile(b: &Build) -> Output {
    b.try_compile().unwrap_or_else(|e| panic!("{e}"))
}

/// A script that logs each run to `runs.log` and runs `nvcc`, to see that
/// nvcc did not start at all. Returns it and the log.
fn logging_wrapper(root: &Path, nvcc: &Path) -> (PathBuf, PathBuf) {
    let (wrapper, log) = (root.join("nvcc-wrapper"), root.join("runs.log"));
    let script = format!(
        "#!/bin/sh\necho run >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        nvcc.display()
    );
    write(&wrapper, &script);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (wrapper, log)
}

/// Both variants of `name`, rebuilt because `why`.
fn both(name: &str, why: Freshness) -> [(String, Variant, Freshness); 2] {
    [
        (name.into(), Variant::Traced, why.clone()),
        (name.into(), Variant::Untraced, why),
    ]
}

#[test]
fn real_nvcc_rebuilds_only_what_changed() {
    let Some([real]) = cuda_tools(["nvcc"]) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (a, b, common) = sources(root);
    let (wrapper, log) = logging_wrapper(root, &real);
    let builder = build(root, &wrapper);
    let first = compile(&builder);
    assert_eq!(ran(&first).len(), 4, "{:?}", first.jobs);
    assert_eq!(log_lines(&log), 4);

    let second = compile(&builder);
    assert_eq!(ran(&second), [], "a second build runs no nvcc job");
    assert_eq!(log_lines(&log), 4);
    assert_eq!(second.nvcc_messages.len(), 4);
    for (_, _, messages) in &second.nvcc_messages {
        assert!(messages.contains("registers"), "replayed: {messages}");
    }

    // A new time with the same content rebuilds nothing.
    let f = std::fs::File::options().write(true).open(&a).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    assert_eq!(ran(&compile(&builder)), []);

    append(&b, "// an edit\n");
    let changed = Freshness::InputChanged(b.clone());
    assert_eq!(ran(&compile(&builder)), both("b.cu", changed));
    assert_eq!(log_lines(&log), 6, "exactly b's two variants ran");

    write(&common, "#define SCALE 4.0f\n");
    let changed = Freshness::InputChanged(common.clone());
    assert_eq!(ran(&compile(&builder)), both("a.cu", changed));
    assert_eq!(log_lines(&log), 8, "a header a.cu includes rebuilds a.cu");
}

#[cfg(unix)]
#[test]
fn fake_nvcc_runs_what_is_out_of_date() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (a, _, common) = sources(root);
    let (nvcc, log) = ktrace_build::test_support::fake_nvcc(root, &[&common]);
    let builder = build(root, &nvcc);
    let first = compile(&builder);
    assert!(first.jobs.iter().all(|j| j.2 == Freshness::NoManifest));
    assert_eq!(log_lines(&log), 4);
    assert_eq!(ran(&compile(&builder)), []);
    assert_eq!(log_lines(&log), 4);

    // The fake names common.cuh for both sources.
    write(&common, "#define SCALE 5.0f\n");
    assert_eq!(ran(&compile(&builder)).len(), 4);

    // A lost image is rebuilt, alone.
    std::fs::remove_file(&first.modules[0].2).unwrap();
    let lost = ran(&compile(&builder));
    assert_eq!(
        lost,
        [("a.cu".into(), Variant::Untraced, Freshness::NoImage)]
    );

    // Another flag changes every command line.
    let mut flagged = build(root, &nvcc);
    flagged.flag("-lineinfo");
    let all = ran(&compile(&flagged));
    assert_eq!(all.len(), 4);
    assert!(all.iter().all(|j| j.2 == Freshness::CommandChanged));

    // A failed run leaves no manifest: back to the content it last built
    // from, the source is still built again.
    let good = std::fs::read_to_string(&a).unwrap();
    append(&a, "// KTRACE_FAKE_FAIL\n");
    let err = flagged.try_compile().unwrap_err().to_string();
    assert!(err.contains("a.cu(1): error: fake"), "{err}");
    write(&a, &good);
    assert_eq!(ran(&compile(&flagged)), both("a.cu", Freshness::NoManifest));
}
