//! Helpers shared by the tests that read SASS: reading a cubin's
//! instructions. Finding cuobjdump (or skipping) is
//! `ktrace_build::test_support::cuda_tools`.

use std::path::Path;
use std::process::Command;

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
