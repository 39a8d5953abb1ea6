//! Aligned text tables, and the durations printed in their cells.

/// A duration given in µs, with a unit that suits it.
pub fn dur(us: f64) -> String {
    let a = us.abs();
    if a < 1.0 {
        format!("{:.1} ns", us * 1e3)
    } else if a < 1e3 {
        format!("{us:.3} us")
    } else if a < 1e6 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{:.3} s", us / 1e6)
    }
}

/// Prints `rows` as [`table_text`] does, indented by two spaces.
pub fn print_table(rows: &[Vec<String>]) {
    print!("{}", table_text(rows, "  "));
}

/// Rows as aligned columns, each line starting with `indent`: the first
/// column left-aligned, the others right-aligned.
pub fn table_text(rows: &[Vec<String>], indent: &str) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c == 0 {
                    format!("{s:<w$}", w = width[c])
                } else {
                    format!("{s:>w$}", w = width[c])
                }
            })
            .collect();
        out.push_str(indent);
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
