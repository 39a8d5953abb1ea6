//! The instruction → region map that ktrace-build writes beside each image
//! and embeds in [`KernelModule`](crate::KernelModule): per function, each
//! instruction's offset, the regions around it, whether it is a marker's
//! own instruction, its source location and its opcode. `docs/stalls.md`
//! gives the format and how the build makes it.

use std::collections::HashMap;

use crate::error::{Error, Result};

/// The map's first line.
pub const MAP_HEADER: &str = "ktrace-pcmap 1";

/// What an instruction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcKind {
    /// The kernel's own code.
    User,
    /// A marker's own instruction (its line is in ktrace's device headers).
    Marker,
    /// No line information: not placed.
    Unknown,
}

/// One instruction of a map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcInfo {
    /// The regions around it, ascending ids.
    pub regions: Vec<u16>,
    /// User code, a marker's, or unknown.
    pub kind: PcKind,
    /// Its source file and line, when known.
    pub location: Option<(String, u32)>,
    /// Its opcode with modifiers.
    pub opcode: String,
}

/// A parsed map: per function, its instructions by offset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcMap {
    functions: HashMap<String, HashMap<u64, PcInfo>>,
    /// Why the build made no map (`none …`), if it did not.
    pub none: Option<String>,
}

impl PcMap {
    /// Parses a map's text. An empty text is a map without functions (a
    /// module built by hand); a `none` line says why the build made none.
    pub fn parse(text: &str) -> Result<PcMap> {
        let mut map = PcMap::default();
        let mut lines = text.lines().enumerate();
        match lines.next() {
            None => return Ok(map),
            Some((_, MAP_HEADER)) => {}
            Some((_, other)) => {
                return Err(Error::Corrupt(format!(
                    "instruction map: first line {other:?}, expected {MAP_HEADER:?}"
                )))
            }
        }
        let mut files: Vec<String> = Vec::new();
        let mut function: Option<&mut HashMap<u64, PcInfo>> = None;
        let bad = |n: usize, what: &str| {
            Error::Corrupt(format!("instruction map line {}: {what}", n + 1))
        };
        for (n, line) in lines {
            if let Some(why) = line.strip_prefix("none ") {
                map.none = Some(why.to_string());
            } else if let Some(rest) = line.strip_prefix("file ") {
                let (idx, path) = rest
                    .split_once(' ')
                    .ok_or_else(|| bad(n, "file without a path"))?;
                if idx.parse::<usize>().ok() != Some(files.len()) {
                    return Err(bad(n, "files out of order"));
                }
                files.push(path.to_string());
            } else if let Some(name) = line.strip_prefix("function ") {
                function = Some(map.functions.entry(name.to_string()).or_default());
            } else {
                let f = function
                    .as_mut()
                    .ok_or_else(|| bad(n, "an instruction before any function"))?;
                let (offset, info) = instruction(line, &files).ok_or_else(|| bad(n, line))?;
                f.insert(offset, info);
            }
        }
        Ok(map)
    }

    /// The instruction at `offset` of `function`, if the map has it.
    pub fn get(&self, function: &str, offset: u64) -> Option<&PcInfo> {
        self.functions.get(function)?.get(&offset)
    }

    /// Whether the map holds `function`.
    pub fn has_function(&self, function: &str) -> bool {
        self.functions.contains_key(function)
    }
}

/// `0080 3,5 u 0:41 LDG.E.128`.
fn instruction(line: &str, files: &[String]) -> Option<(u64, PcInfo)> {
    let mut w = line.split(' ');
    let offset = u64::from_str_radix(w.next()?, 16).ok()?;
    let regions = match w.next()? {
        "-" => Vec::new(),
        list => list
            .split(',')
            .map(|r| r.parse().ok())
            .collect::<Option<Vec<u16>>>()?,
    };
    let kind = match w.next()? {
        "u" => PcKind::User,
        "m" => PcKind::Marker,
        "?" => PcKind::Unknown,
        _ => return None,
    };
    let location = match w.next()? {
        "-" => None,
        loc => {
            let (f, l) = loc.split_once(':')?;
            Some((
                files.get(f.parse::<usize>().ok()?)?.clone(),
                l.parse().ok()?,
            ))
        }
    };
    let opcode = w.next()?.to_string();
    Some((
        offset,
        PcInfo {
            regions,
            kind,
            location,
            opcode,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_reads_back_by_function_and_offset() {
        let text = "ktrace-pcmap 1\nfile 0 /k/a.cu\nfile 1 /inc/ktrace/store.cuh\n\
                    function k\n0000 - u 0:31 LDC\n0010 1,2 u 0:19 S2R\n0030 1 m 1:40 CS2R\n\
                    0040 - ? - EXIT\n";
        let m = PcMap::parse(text).unwrap();
        assert!(m.has_function("k") && !m.has_function("j"));
        let i = m.get("k", 0x10).unwrap();
        assert_eq!(i.regions, [1, 2]);
        assert_eq!(i.location, Some(("/k/a.cu".into(), 19)));
        assert_eq!(m.get("k", 0x30).unwrap().kind, PcKind::Marker);
        assert_eq!(m.get("k", 0x40).unwrap().location, None);
        assert!(m.get("k", 0x20).is_none());
        assert_eq!(m.none, None);
        let none = PcMap::parse("ktrace-pcmap 1\nnone nvdisasm was not found\n").unwrap();
        assert_eq!(none.none.as_deref(), Some("nvdisasm was not found"));
        assert_eq!(PcMap::parse("").unwrap(), PcMap::default());
    }

    #[test]
    fn a_bad_map_is_an_error_naming_its_line() {
        for (text, says) in [
            ("pcmap 2\n", "first line"),
            (
                "ktrace-pcmap 1\n0000 - u - LDC\n",
                "line 2: an instruction before any function",
            ),
            ("ktrace-pcmap 1\nfunction k\n0000 x u - LDC\n", "line 3"),
            ("ktrace-pcmap 1\nfunction k\n0000 - u 4:1 LDC\n", "line 3"),
            ("ktrace-pcmap 1\nfile 1 /a\n", "files out of order"),
        ] {
            let e = PcMap::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
