//! Reading nvcc's dependency output (`-MD -MF file.d`).
//!
//! nvcc writes a Make rule, `image : source \` then one included file per
//! line, spaces in paths escaped as `\ `. [`parse`] returns the files after
//! the colon, the source first; it is pure and tested without nvcc.

use std::path::PathBuf;

/// The prerequisites of the rules in `text`, in order, each once.
pub(crate) fn parse(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut files: Vec<PathBuf> = Vec::new();
    for rule in joined.lines() {
        let Some(prerequisites) = after_target(rule) else {
            continue;
        };
        for word in words(prerequisites) {
            let path = PathBuf::from(word);
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files
}

/// The text after a rule's target: after `" : "` (as nvcc writes it), else
/// after the first `": "` or a final `':'` (so `C:\…` is not split).
fn after_target(rule: &str) -> Option<&str> {
    if let Some((_, rest)) = rule.split_once(" : ") {
        return Some(rest);
    }
    if let Some((_, rest)) = rule.split_once(": ") {
        return Some(rest);
    }
    rule.trim_end().strip_suffix(':').map(|_| "")
}

/// Splits on unescaped whitespace, undoing `\ `, `\#` and `$$`.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ' | '#' | '\t')) => {
                word.extend(chars.next());
            }
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn reads_what_nvcc_writes() {
        // As nvcc 13.0 wrote it for `-MD -MF "o 2.d" -o "o 2.cubin" "k 2.cu"`.
        let text = "o\\ 2.cubin : k\\ 2.cu \\\n    sp\\ ace/y#1.cuh \\\n    \
                    /cuda/bin/..//include/cuda_runtime.h \\\n    /usr/include/stdio.h\n";
        assert_eq!(
            parse(text),
            paths(&[
                "k 2.cu",
                "sp ace/y#1.cuh",
                "/cuda/bin/..//include/cuda_runtime.h",
                "/usr/include/stdio.h"
            ])
        );
    }

    #[test]
    fn other_make_spellings() {
        let text =
            "out.o: a.cu b\\#c.h cost$$.h \\\r\n  a.cu\nb\\#c.h:\n\nC:\\k\\x.o: C:\\k\\x.cu\n";
        assert_eq!(
            parse(text),
            paths(&["a.cu", "b#c.h", "cost$.h", "C:\\k\\x.cu"])
        );
        assert!(parse("").is_empty());
        assert!(parse("no rule here\n").is_empty());
    }
}
