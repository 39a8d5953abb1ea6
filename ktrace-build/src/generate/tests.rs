use super::*;
use crate::scan::scan_source;

fn scanned(files: &[(&str, &str)]) -> Vec<SourceFile> {
    files
        .iter()
        .map(|(path, text)| SourceFile {
            path: PathBuf::from(path),
            markers: scan_source(Path::new(path), text).unwrap(),
        })
        .collect()
}

fn plan_in(out: &Path, files: &[(&str, &str)]) -> GeneratePlan {
    let modules: Vec<PathBuf> = files
        .iter()
        .filter(|(p, _)| p.ends_with(".cu"))
        .map(|(p, _)| PathBuf::from(p))
        .collect();
    plan(
        out,
        &modules,
        &scanned(files),
        &[("TILE".into(), Some("64".into())), ("FAST".into(), None)],
        &[PathBuf::from("vendor/include")],
    )
    .unwrap()
}

fn text_of<'p>(p: &'p GeneratePlan, name: &str) -> &'p str {
    p.files
        .iter()
        .find(|(path, _)| path.ends_with(name))
        .map(|(_, t)| t.as_str())
        .unwrap_or_else(|| panic!("no {name} in {:?}", p.files))
}

#[test]
fn each_variant_gets_the_include_dir_and_its_defines() {
    let p = plan_in(
        Path::new("out"),
        &[("k/saxpy.cu", "KTRACE_B(\"body\"); KTRACE_E(\"body\");")],
    );
    let g = &p.generated;
    assert_eq!(g.include_dir, Path::new("out/ktrace/include"));
    assert_eq!(
        g.args(Variant::Traced),
        [
            "-Iout/ktrace/include",
            "-Ivendor/include",
            "-DKTRACE_ENABLED=1",
            "-DTILE=64",
            "-DFAST"
        ]
    );
    assert_eq!(
        g.args(Variant::Untraced),
        [
            "-Iout/ktrace/include",
            "-Ivendor/include",
            "-DTILE=64",
            "-DFAST"
        ]
    );
    let leaked = g.static_args(Variant::Traced);
    assert_eq!(leaked, g.args(Variant::Traced));
    assert_eq!(g.out_dir(Variant::Traced), Path::new("out/ktrace/traced"));
    assert_eq!(
        g.out_dir(Variant::Untraced),
        Path::new("out/ktrace/untraced")
    );
    assert_eq!(g.sources, [PathBuf::from("k/saxpy.cu")]);
}

#[test]
fn modules_embed_the_other_builders_ptx_with_a_map_that_says_why_there_is_none() {
    let p = plan_in(
        Path::new("out"),
        &[
            ("k/saxpy.cu", "KTRACE_B(\"body\"); KTRACE_E(\"body\");"),
            ("k/common.cuh", "KTRACE_M(\"shared\");"),
        ],
    );
    assert_eq!(
        p.generated.modules,
        [(
            "saxpy".to_string(),
            PathBuf::from("out/ktrace/traced/saxpy.ptx"),
            PathBuf::from("out/ktrace/untraced/saxpy.ptx")
        )]
    );
    let rust = text_of(&p, "ktrace.rs");
    assert!(rust.contains("pub const SAXPY: ::ktrace_runtime::KernelModule"));
    assert!(rust.contains(r#"include_bytes!("out/ktrace/traced/saxpy.ptx")"#));
    assert!(rust.contains(r#"include_bytes!("out/ktrace/untraced/saxpy.ptx")"#));
    assert!(rust.contains(r#"include_str!("out/ktrace/prebuilt.pcmap")"#));
    assert!(rust.contains(r#"(0, "body")"#) && rust.contains(r#"(1, "shared")"#));
    let map = text_of(&p, "prebuilt.pcmap");
    assert!(
        map.contains("none compiled to PTX by another builder"),
        "{map}"
    );
    // The header is the one `compile` writes, with both regions.
    let header = text_of(&p, "ktrace_regions.h");
    assert!(header.contains("body") && header.contains("shared"));
    assert!(p.files.iter().any(|(f, _)| f.ends_with("ktrace.cuh")));
}

#[test]
fn the_stamp_follows_the_region_table() {
    let one = plan_in(Path::new("out"), &[("k/a.cu", "KTRACE_M(\"x\");")]);
    let same = plan_in(Path::new("out"), &[("k/a.cu", "KTRACE_M(\"x\");")]);
    let other = plan_in(Path::new("out"), &[("k/a.cu", "KTRACE_M(\"y\");")]);
    assert_eq!(one.stamps, same.stamps);
    assert_ne!(one.stamps[0].1, other.stamps[0].1);
    assert_eq!(
        one.stamps[0].0,
        Path::new("out/ktrace/traced").join(STAMP_NAME)
    );
    assert_eq!(one.stamps[0].1, one.stamps[1].1);
}

#[test]
fn a_changed_table_removes_the_images_built_against_the_old_one() {
    let out = std::env::temp_dir().join(format!("ktrace-generate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let g = write(plan_in(&out, &[("k/a.cu", "KTRACE_M(\"x\");")])).unwrap();
    let (_, traced, untraced) = g.modules[0].clone();
    for image in [&traced, &untraced] {
        std::fs::write(image, "// ptx").unwrap();
    }
    // The same table: the images stay.
    write(plan_in(&out, &[("k/a.cu", "KTRACE_M(\"x\");")])).unwrap();
    assert!(traced.is_file() && untraced.is_file());
    // A region renamed: both go, so the other builder compiles them again.
    write(plan_in(&out, &[("k/a.cu", "KTRACE_M(\"y\");")])).unwrap();
    assert!(!traced.exists() && !untraced.exists());
    assert!(out.join("ktrace.rs").is_file());
    assert!(out.join("ktrace/include/ktrace_regions.h").is_file());
    std::fs::remove_dir_all(&out).unwrap();
}
