//! `tp_bench ptxas`: ptxas's report of every build, saved by build.rs
//! (`ktrace_build::ptxas_report`, then the build's spill and shared-memory
//! alignment checks), and a table of each kernel function's registers and
//! spills per design and build. Needs no GPU.

use crate::designs::module_name;

/// What build.rs saved.
const REPORT: &str = include_str!(concat!(env!("OUT_DIR"), "/tp_ptxas.txt"));

/// Prints the report, then the table.
pub fn print(modules: &[(&str, &str)], functions: &[(&str, &str)]) {
    println!("ptxas report of every build (-Xptxas -v), as the build saved it:");
    println!("{}", REPORT.trim_end());
    println!();
    println!("kernel  design    build     registers  stack  spill stores  spill loads");
    for (kernel, design) in modules {
        let Some((_, function)) = functions.iter().find(|(k, _)| k == kernel) else {
            continue;
        };
        for build in ["traced", "untraced"] {
            let f = figures(REPORT, &module_name(kernel, design), build, function);
            println!(
                "{kernel:<7} {design:<9} {build:<9} {:>9} {:>6} {:>13} {:>12}",
                show(f.registers, ""),
                show(f.stack, " B"),
                show(f.spill_stores, " B"),
                show(f.spill_loads, " B")
            );
        }
    }
}

fn show(v: Option<u64>, unit: &str) -> String {
    v.map_or_else(|| "?".to_string(), |v| format!("{v}{unit}"))
}

/// One function's figures in one build.
#[derive(Debug, Default, PartialEq, Eq)]
struct Figures {
    registers: Option<u64>,
    stack: Option<u64>,
    spill_stores: Option<u64>,
    spill_loads: Option<u64>,
}

/// The figures of `function` in module `module`'s `build` (`traced` or
/// `untraced`) from report lines `FILE as MODULE (BUILD): ptxas ...`.
fn figures(report: &str, module: &str, build: &str, function: &str) -> Figures {
    let tag = format!(" as {module} ({build}): ");
    let mut f = Figures::default();
    let mut current = "";
    for line in report.lines() {
        let Some((_, text)) = line.split_once(&tag) else {
            continue;
        };
        if let Some(name) = quoted_after(text, "Compiling entry function '") {
            current = name;
        } else if let Some(rest) = text.split_once("Function properties for ") {
            current = rest.1.trim();
        } else if current == function && text.contains("bytes stack frame") {
            let n = numbers(text);
            (f.stack, f.spill_stores, f.spill_loads) =
                (n.first().copied(), n.get(1).copied(), n.get(2).copied());
        } else if current == function && text.contains("Used ") {
            f.registers = text
                .split_once("Used ")
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|n| n.parse().ok());
        }
    }
    f
}

fn quoted_after<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    let (_, rest) = text.split_once(start)?;
    rest.split_once('\'').map(|(name, _)| name)
}

/// The numbers of `text`, in order.
fn numbers(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_functions_figures() {
        let report = "\
k.cu as k_a (traced): ptxas info    : Compiling entry function 'f' for 'sm_90a'
k.cu as k_a (traced): ptxas info    : Function properties for f
k.cu as k_a (traced): 16 bytes stack frame, 20 bytes spill stores, 28 bytes spill loads
k.cu as k_a (traced): ptxas info    : Used 168 registers, used 16 barriers, 16 bytes cumulative stack size
k.cu as k_a (traced): ptxas info    : Function properties for _ZN6ktrace9site_openEmjbji
k.cu as k_a (traced): 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
k.cu as k_a (untraced): ptxas info    : Function properties for f
k.cu as k_a (untraced): 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads";
        assert_eq!(
            figures(report, "k_a", "traced", "f"),
            Figures {
                registers: Some(168),
                stack: Some(16),
                spill_stores: Some(20),
                spill_loads: Some(28)
            }
        );
        let u = figures(report, "k_a", "untraced", "f");
        assert_eq!((u.spill_stores, u.registers), (Some(0), None));
    }
}
