//! The crate's imports run one way. Reads every file under `src/`, takes
//! each `crate::` and `super::` path in its code (not in comments, not in
//! an item marked `#[cfg(test)]`, wherever it sits, not in a `tests.rs`
//! file), and checks that
//!
//! - no module names an item through the crate root (`crate::Decoder`,
//!   `crate::capture`): the root re-exports the user's path and nothing
//!   inside the crate leans on it;
//! - the files import each other without a circle;
//! - the top-level modules (`format`, `decode`, `export`, ...) do too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `src/format/capture.rs` -> `format::capture`; `src/export/mod.rs` -> `export`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments, string and character contents,
/// and every item marked `#[cfg(test)]` (a test module, wherever it sits
/// in the file, a test-only `use` or function), so that nothing after such
/// an item escapes the check.
fn code_of(text: &str) -> String {
    without_test_items(&without_comments_and_strings(text))
}

fn without_comments_and_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A character literal ('{'), not a lifetime.
            out.push_str("''");
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') {
            out.push_str("''");
            i += 4;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// `code` (comments and strings already out) without each item that a
/// `#[cfg(test)]` attribute marks: from the attribute to the item's
/// closing brace, or to its `;` when it has no body.
fn without_test_items(code: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        let b = item.as_bytes();
        let mut depth = 0usize;
        let mut end = b.len();
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn ident_len(s: &str) -> usize {
    s.bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count()
}

/// Every path that starts at `at` in `code` (after `crate::` or
/// `super::`), with `use` groups expanded: `a::{b, c::d}` gives `a::b`
/// and `a::c::d`.
fn paths_at(code: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    let mut i = 0;
    loop {
        let rest = &code[i..];
        if rest.starts_with('{') {
            i += 1;
            loop {
                let inner = &code[i..];
                let skip = inner.len() - inner.trim_start().len();
                i += skip;
                if code[i..].starts_with('}') {
                    return i + 1;
                }
                i += paths_at(&code[i..], &path, out);
                let inner = &code[i..];
                let skip = inner.len() - inner.trim_start_matches([' ', '\n', ',']).len();
                i += skip;
                if skip == 0 && !code[i..].starts_with('}') {
                    return i;
                }
            }
        }
        let n = ident_len(rest);
        if n == 0 {
            break;
        }
        path.push(rest[..n].to_string());
        i += n;
        if code[i..].starts_with("::") {
            i += 2;
        } else {
            break;
        }
    }
    out.push(path);
    i
}

struct Graph {
    modules: BTreeSet<String>,
    /// File-level module -> the modules it names.
    edges: BTreeMap<String, BTreeSet<String>>,
    /// `crate::X` paths whose first segment is not a module.
    through_root: Vec<String>,
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut through_root = Vec::new();
    for f in &files {
        let me = module_of(&src, f);
        if me.is_empty() || f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        let mut found = Vec::new();
        for (i, _) in code.match_indices("crate::") {
            if i > 0 && code.as_bytes()[i - 1] == b'$' {
                continue;
            }
            paths_at(&code[i + 7..], &[], &mut found);
        }
        for (i, _) in code.match_indices("super::") {
            if i > 0
                && (code.as_bytes()[i - 1].is_ascii_alphanumeric()
                    || code[..i].ends_with("super::"))
            {
                continue;
            }
            // Each `super` drops one segment (`a::b`'s is `a`, so is
            // `a/mod.rs`'s parent: the root).
            let mut base: Vec<String> = me.split("::").map(String::from).collect();
            let mut rest = &code[i..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            let start = code.len() - rest.len();
            paths_at(&code[start..], &base, &mut found);
        }
        let mut to = BTreeSet::new();
        for p in found {
            // The longest prefix of the path that is a module.
            let target = (1..=p.len())
                .rev()
                .map(|n| p[..n].join("::"))
                .find(|m| modules.contains(m));
            match target {
                Some(t) if t != me && !me.starts_with(&format!("{t}::")) => {
                    to.insert(t);
                }
                Some(_) => {}
                None => through_root.push(format!("{me}: crate::{}", p.join("::"))),
            }
        }
        edges.insert(me, to);
    }
    Graph {
        modules,
        edges,
        through_root,
    }
}

/// The circles of a graph (strongly connected parts of more than one node).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = edges.keys().collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for t in edges.get(&n).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    stack.push(t.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        if !reaches[n].contains(*n) {
            continue;
        }
        let part: Vec<String> = nodes
            .iter()
            .filter(|m| reaches[n].contains(**m) && reaches[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        if !out.contains(&part) {
            out.push(part);
        }
    }
    out
}

#[test]
fn nothing_inside_the_crate_names_an_item_through_the_root() {
    let g = graph();
    assert!(g.modules.contains("format::buffer"), "{:?}", g.modules);
    assert!(g.through_root.is_empty(), "{:#?}", g.through_root);
}

#[test]
fn files_import_each_other_without_a_circle() {
    let g = graph();
    // The parser finds the imports it should: the decoder reads the buffer view.
    assert!(
        g.edges["decode"].contains("format::buffer"),
        "{:?}",
        g.edges["decode"]
    );
    assert!(g.edges["fill"].contains("format::buffer"));
    let c = circles(&g.edges);
    assert!(c.is_empty(), "circles: {c:#?}");
}

#[test]
fn top_level_modules_import_each_other_without_a_circle() {
    let g = graph();
    let top = |m: &str| m.split("::").next().unwrap().to_string();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in &g.edges {
        let e = edges.entry(top(from)).or_default();
        e.extend(to.iter().map(|t| top(t)).filter(|t| *t != top(from)));
    }
    assert!(edges["export"].contains("decode"));
    let c = circles(&edges);
    assert!(c.is_empty(), "circles: {c:#?}");
}

#[test]
fn the_circle_check_finds_a_circle() {
    let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    e.insert("a".into(), ["b".to_string()].into());
    e.insert("b".into(), ["c".to_string()].into());
    e.insert("c".into(), ["a".to_string()].into());
    e.insert("d".into(), ["a".to_string()].into());
    assert_eq!(
        circles(&e),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    let mut found = Vec::new();
    paths_at("format::{buffer::X, layout::{A, B}};", &[], &mut found);
    let joined: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        [
            "format::buffer::X",
            "format::layout::A",
            "format::layout::B"
        ]
    );
}

/// The check itself: an item marked `#[cfg(test)]` is skipped wherever it
/// sits, and only it; braces and `#[cfg(test)]` inside comments, strings
/// and character literals do not count.
#[test]
fn the_check_skips_test_items_and_only_them() {
    let file = r##"
#[cfg(test)]
mod tests;
use crate::a::B;
#[cfg(test)]
use crate::test_only::X;
fn f() -> char { '{' }
// #[cfg(test)] in a comment
const S: &str = "#[cfg(test)] {";
#[cfg(test)]
mod inline {
    use crate::hidden::Y;
    fn g() { if true { } }
}
use super::after::Z;
"##;
    let code = code_of(file);
    assert!(code.contains("crate::a::B"), "{code}");
    assert!(code.contains("super::after::Z"), "{code}");
    assert!(!code.contains("test_only"), "{code}");
    assert!(!code.contains("hidden"), "{code}");
    assert!(!code.contains("mod tests"), "{code}");
    assert!(code.contains("fn f()"), "{code}");
    let mut found = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        paths_at(&code[i + 7..], &[], &mut found);
    }
    assert_eq!(found, vec![vec!["a".to_string(), "B".to_string()]]);
}
