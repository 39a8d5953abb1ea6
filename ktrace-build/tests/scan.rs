//! Scanner behaviour on tricky sources.

use std::path::Path;

use ktrace_build::scan::{check_name, scan_source, Marker};

fn names(src: &str) -> Vec<(String, usize)> {
    scan_source(Path::new("k.cu"), src)
        .unwrap_or_else(|e| panic!("unexpected errors: {e:?}"))
        .into_iter()
        .map(|m: Marker| (m.name, m.line))
        .collect()
}

fn errors(src: &str) -> Vec<String> {
    match scan_source(Path::new("k.cu"), src) {
        Ok(m) => panic!("expected errors, got markers {m:?}"),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn finds_every_marker_kind_with_lines() {
    let src = r#"
KTRACE_B("load");
  KTRACE_E("load");
KTRACE_M("tick"); KTRACE_SCOPE("scope a");
KTRACE_B_IF(i % 16 == 0, "hot");
KTRACE_E_IF((f(a, b) > 0) && g[1], "hot");
KTRACE_M_IF(x, "m:1/2");
"#;
    assert_eq!(
        names(src),
        vec![
            ("load".into(), 2),
            ("load".into(), 3),
            ("tick".into(), 4),
            ("scope a".into(), 4),
            ("hot".into(), 5),
            ("hot".into(), 6),
            ("m:1/2".into(), 7),
        ]
    );
}

#[test]
fn value_markers_name_their_region_and_skip_the_value() {
    let src = r#"
KTRACE_B_V("tile", t);
KTRACE_E_V("tile", f(a, (b + 1)) * g[2]);
KTRACE_M_V("stage", s == ')' ? 1 : 2);
KTRACE_M_V("depth",
           q.size());
"#;
    assert_eq!(
        names(src),
        vec![
            ("tile".into(), 2),
            ("tile".into(), 3),
            ("stage".into(), 4),
            ("depth".into(), 5),
        ]
    );
}

#[test]
fn value_markers_without_a_value_are_errors() {
    for src in [r#"KTRACE_M_V("tile");"#, r#"KTRACE_B_V("tile", );"#] {
        let e = errors(src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("expects a region name and a value"), "{e:?}");
    }
}

#[test]
fn markers_split_over_lines() {
    let src = "KTRACE_B\n(\n  \"split\"\n  )\n;\nKTRACE_B_IF(a,\n \\\n \"b\");";
    assert_eq!(names(src), vec![("split".into(), 1), ("b".into(), 6)]);
}

#[test]
fn comments_and_strings_are_not_markers() {
    let src = r#"
// KTRACE_B("in line comment")
/* KTRACE_B("in block comment")
   KTRACE_E("still in it") */
const char* s = "KTRACE_B(\"in string\")";
const char c = '"'; KTRACE_M("real");
auto r = R"x(KTRACE_B("in raw string") )" )x";
auto u = u8"KTRACE_B(\"u8\")";
// a continued line comment \
KTRACE_B("continued comment")
int n = 1'000'000; KTRACE_M("after digits");
"#;
    assert_eq!(
        names(src),
        vec![("real".into(), 6), ("after digits".into(), 11)]
    );
}

#[test]
fn identifiers_that_merely_contain_marker_names_are_ignored() {
    let src = "MY_KTRACE_B(\"x\"); KTRACE_BX(\"y\"); #ifdef KTRACE_B\n#endif\n";
    assert!(names(src).is_empty());
}

#[test]
fn markers_inside_macros_with_literals_are_found() {
    let src =
        "#define LOAD_BEGIN KTRACE_B(\"load\")\n#define STEP(i) KTRACE_M_IF((i) == 0, \"step\")\n";
    assert_eq!(names(src), vec![("load".into(), 1), ("step".into(), 2)]);
}

#[test]
fn non_literal_names_are_errors_with_file_and_line() {
    let e = errors("\n\nKTRACE_B(name);");
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with("k.cu:3: KTRACE_B: the region name must be one plain string literal"),
        "{}",
        e[0]
    );
    let e = errors("#define MYB(x) KTRACE_B(x)\n");
    assert!(e[0].starts_with("k.cu:1:"), "{}", e[0]);
    let e = errors("KTRACE_E(\"a\" \"b\");");
    assert!(e[0].contains("one plain string literal"));
    let e = errors("KTRACE_B_IF(\"only a name\");");
    assert!(
        e[0].contains("expects a condition and a region name"),
        "{}",
        e[0]
    );
    let e = errors("KTRACE_M(NAME \"x\");");
    assert!(e[0].contains("one plain string literal"));
}

#[test]
fn bad_names_are_errors() {
    let e = errors("KTRACE_B(\"\");");
    assert!(e[0].contains("region name is empty"), "{}", e[0]);
    let long = "x".repeat(65);
    let e = errors(&format!("KTRACE_B(\"{long}\");"));
    assert!(e[0].contains("is 65 bytes long"), "{}", e[0]);
    let e = errors("KTRACE_B(\"tab\\there\");");
    assert!(e[0].contains("escape sequence"), "{}", e[0]);
    let e = errors("KTRACE_B(\"caf\u{e9}\");");
    assert!(e[0].contains("cannot appear in a track name"), "{}", e[0]);
    let e = errors("KTRACE_B(\"a;b\");");
    assert!(e[0].contains("';'"), "{}", e[0]);
}

#[test]
fn every_bad_marker_is_reported_not_just_the_first() {
    let e = errors("KTRACE_B(x);\nKTRACE_E(\"\");\nKTRACE_M(\"ok\");\nKTRACE_M(y);");
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e[0].starts_with("k.cu:1:"));
    assert!(e[1].starts_with("k.cu:2:"));
    assert!(e[2].starts_with("k.cu:4:"));
}

#[test]
fn unterminated_input_is_an_error_not_a_hang() {
    let e = errors("KTRACE_B(\"open");
    assert!(e[0].contains("unterminated string literal"), "{e:?}");
    let e = errors("/* never closed\nKTRACE_B(\"x\");");
    assert!(e[0].contains("unterminated /* comment"), "{e:?}");
    let e = errors("KTRACE_B_IF(a, \"x\"");
    assert!(e[0].contains("one plain string literal"), "{e:?}");
}

#[test]
fn name_rules() {
    assert!(check_name("mma k-tile 0").is_ok());
    assert!(check_name("a/b:c.d[0]<1>(2)=3,#4@5+6").is_ok());
    assert!(check_name(&"x".repeat(64)).is_ok());
    assert!(check_name(" lead").is_err());
    assert!(check_name("quote\"").is_err());
    assert!(check_name("back\\slash").is_err());
    assert!(check_name("new\nline").is_err());
}

#[test]
fn spans_cover_the_whole_invocation() {
    let src = "x; KTRACE_B_IF( a(b), \"n\" ) ; y";
    let m = scan_source(Path::new("k.cu"), src).unwrap();
    assert_eq!(&src[m[0].span.clone()], "KTRACE_B_IF( a(b), \"n\" )");
}

#[test]
fn invocations_skip_comments_and_balance_parentheses() {
    let src = "// KTRACE_OPEN(x)\nKTRACE_OPEN(f(a, \")\")); KTRACE_FLUSH (); /* KTRACE_FLUSH() */ KTRACE_OPEN;";
    let spans = ktrace_build::scan::invocations(src, &["KTRACE_OPEN", "KTRACE_FLUSH"]);
    let found: Vec<&str> = spans.into_iter().map(|r| &src[r]).collect();
    assert_eq!(found, ["KTRACE_OPEN(f(a, \")\"))", "KTRACE_FLUSH ()"]);
}
