//! Helpers shared by the tests that read SASS: reading a cubin's
//! instructions, and a kernel source with its markers deleted. Finding cuobjdump (or skipping) is
//! `ktrace_build::test_support::cuda_tools`.

// Each test file uses some of these helpers.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use ktrace_build::scan::{invocations, scan_source};

/// `(address, instruction)` of every instruction in `cubin` (of one
/// function when `function` is given), without encodings or the `;`.
pub fn sass(tool: &Path, cubin: &Path, function: Option<&str>) -> Vec<(u64, String)> {
    let mut cmd = Command::new(tool);
    cmd.arg("-sass");
    if let Some(f) = function {
        cmd.args(["-fun", f]);
    }
    let out = cmd.arg(cubin).output().unwrap();
    assert!(
        out.status.success(),
        "cuobjdump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("/*")?;
            let (addr, rest) = l.split_once("*/")?;
            let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
            let instr = rest
                .split("/*")
                .next()?
                .trim()
                .trim_end_matches(';')
                .trim()
                .to_string();
            (!instr.is_empty()).then_some((addr, instr))
        })
        .collect()
}

/// Deletes every marker invocation, `KTRACE_OPEN(...)` and `KTRACE_FLUSH()`,
/// and the context passed to helpers (`, KTRACE_CTX_PARAM` in a parameter
/// list, `, KTRACE_CTX` in a call).
pub fn strip_markers(path: &Path, src: &str) -> String {
    let mut names: Vec<&str> = ktrace_build::scan::MARKERS.to_vec();
    names.extend(["KTRACE_OPEN", "KTRACE_FLUSH"]);
    let spans = invocations(src, &names);
    let mut out = String::new();
    let mut at = 0;
    for s in spans {
        out.push_str(&src[at..s.start]);
        at = s.end;
    }
    out.push_str(&src[at..]);
    let out = out
        .replace(", KTRACE_CTX_PARAM", "")
        .replace(", KTRACE_CTX", "");
    assert!(
        scan_source(path, &out).unwrap().is_empty() && invocations(&out, &names).is_empty(),
        "markers left after stripping:\n{out}"
    );
    out
}

/// `cuobjdump -res-usage` of `cubin`: each function's resource line
/// (`REG:.. STACK:.. SHARED:.. LOCAL:.. ...`), by function.
pub fn res_usage_lines(tool: &Path, cubin: &Path) -> std::collections::BTreeMap<String, String> {
    let out = Command::new(tool)
        .arg("-res-usage")
        .arg(cubin)
        .output()
        .expect("running cuobjdump");
    assert!(
        out.status.success(),
        "cuobjdump failed on {}",
        cubin.display()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut map = std::collections::BTreeMap::new();
    let mut function = None;
    for line in text.lines().map(str::trim) {
        if let Some(f) = line.strip_prefix("Function ") {
            function = Some(f.trim_end_matches(':').to_string());
        } else if let (Some(f), true) = (&function, line.starts_with("REG:")) {
            map.insert(f.clone(), line.to_string());
        }
    }
    map
}

/// The value of field `name` (`REG`, `SHARED`, ...) in a resource line of
/// [`res_usage_lines`].
pub fn res_field(line: &str, name: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(name)?.strip_prefix(':')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {line}"))
}
