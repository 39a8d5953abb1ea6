//! Finding trace markers in CUDA sources.
//!
//! [`scan_source`] is a small C/C++ lexer: it skips comments, string and
//! character literals (raw strings too) and line continuations, and reports
//! every marker macro invocation with the region name it names. It never
//! runs the preprocessor, so a marker must name its region with one plain
//! string literal.

use std::fmt;
use std::path::{Path, PathBuf};

/// The marker macros whose argument is a region name.
pub const MARKERS: &[&str] = &[
    "KTRACE_B",
    "KTRACE_E",
    "KTRACE_M",
    "KTRACE_SCOPE",
    "KTRACE_B_IF",
    "KTRACE_E_IF",
    "KTRACE_M_IF",
    "KTRACE_B_V",
    "KTRACE_E_V",
    "KTRACE_M_V",
];

/// Longest region name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// One marker found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// The macro, e.g. `KTRACE_B`.
    pub macro_name: &'static str,
    /// The region name (the literal's contents).
    pub name: String,
    /// 1-based line of the macro name.
    pub line: usize,
    /// Byte range of the whole invocation, from the macro name to its `)`.
    pub span: std::ops::Range<usize>,
}

/// What a marker does to its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerRole {
    /// Begins it (`KTRACE_B`, `KTRACE_B_IF`, `KTRACE_B_V`).
    Begin,
    /// Ends it (`KTRACE_E`, `KTRACE_E_IF`, `KTRACE_E_V`).
    End,
    /// Begins it and ends it with the enclosing block (`KTRACE_SCOPE`).
    Scope,
    /// Marks an instant (`KTRACE_M`, `KTRACE_M_IF`, `KTRACE_M_V`).
    Mark,
}

impl Marker {
    /// What the marker does to its region.
    pub fn role(&self) -> MarkerRole {
        match self.macro_name {
            "KTRACE_B" | "KTRACE_B_IF" | "KTRACE_B_V" => MarkerRole::Begin,
            "KTRACE_E" | "KTRACE_E_IF" | "KTRACE_E_V" => MarkerRole::End,
            "KTRACE_SCOPE" => MarkerRole::Scope,
            _ => MarkerRole::Mark,
        }
    }
}

/// A marker that is not acceptable, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    /// The file, as given to the scanner.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// What is wrong and what to do about it.
    pub message: String,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

impl std::error::Error for ScanError {}

/// Whether `c` may appear in a region name. Names become C string literals,
/// JSON strings and Perfetto track names, so they are kept to printable
/// ASCII without quotes, backslashes or control characters.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || " _-.:/+#@<>[]()=,".contains(c)
}

/// What is wrong with a region name, from [`check_name`]. Its `Display`
/// says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] bytes.
    TooLong {
        /// The first 24 characters, to find it by.
        start: String,
        /// Its length in bytes.
        len: usize,
    },
    /// The name starts or ends with a space.
    Space {
        /// The name.
        name: String,
    },
    /// The name holds a character that [`is_name_char`] rejects.
    BadChar {
        /// The name.
        name: String,
        /// The first such character.
        bad: char,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => {
                f.write_str("region name is empty; give the region a name, e.g. KTRACE_B(\"load\")")
            }
            NameError::TooLong { start, len } => write!(
                f,
                "region name \"{start}…\" is {len} bytes long; the limit is {MAX_NAME_LEN}"
            ),
            NameError::Space { name } => write!(
                f,
                "region name \"{name}\" starts or ends with a space; remove it"
            ),
            NameError::BadChar { name, bad } => write!(
                f,
                "region name \"{}\" contains {bad:?}, which cannot appear in a track name; \
                 use ASCII letters, digits, spaces and {}",
                name.escape_default(),
                " _-.:/+#@<>[]()=,".trim()
            ),
        }
    }
}

impl std::error::Error for NameError {}

/// Checks a region name, returning what is wrong with it.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong {
            start: name[..name.char_indices().nth(24).map_or(name.len(), |(i, _)| i)].to_string(),
            len: name.len(),
        });
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return Err(NameError::Space { name: name.into() });
    }
    if let Some(bad) = name.chars().find(|&c| !is_name_char(c)) {
        return Err(NameError::BadChar {
            name: name.into(),
            bad,
        });
    }
    Ok(())
}

/// A lexing error: the line it starts on and what is wrong.
type LexError = (usize, String);

/// An identifier in code: its byte offset, line and text.
struct Ident<'a> {
    start: usize,
    line: usize,
    text: &'a str,
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src: src.as_bytes(),
            pos: 0,
            line: 1,
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// Skips whitespace, comments and line continuations. Returns an error
    /// line for an unterminated block comment.
    fn skip_trivia(&mut self) -> Result<(), LexError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_ascii_whitespace() => {
                    self.bump();
                }
                (Some(b'\\'), Some(b'\n')) => {
                    self.bump();
                    self.bump();
                }
                (Some(b'\\'), Some(b'\r')) if self.peek(2) == Some(b'\n') => {
                    self.pos += 2;
                    self.bump();
                }
                (Some(b'/'), Some(b'/')) => {
                    // A line comment ends at a newline not escaped by '\'.
                    while let Some(c) = self.peek(0) {
                        if c == b'\n' {
                            break;
                        }
                        if c == b'\\' && self.peek(1) == Some(b'\n') {
                            self.bump();
                        }
                        self.bump();
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let start = self.line;
                    self.pos += 2;
                    loop {
                        match self.peek(0) {
                            None => return Err((start, "unterminated /* comment".into())),
                            Some(b'*') if self.peek(1) == Some(b'/') => {
                                self.pos += 2;
                                break;
                            }
                            _ => {
                                self.bump();
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Reads a quoted literal starting at the opening quote `q`; returns its
    /// raw contents (escapes kept).
    fn quoted(&mut self, q: u8) -> Result<String, LexError> {
        let start = self.line;
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.peek(0) {
                None | Some(b'\n') => {
                    let what = if q == b'"' { "string" } else { "character" };
                    return Err((start, format!("unterminated {what} literal")));
                }
                Some(c) if c == q => {
                    self.bump();
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    out.push(b'\\');
                    self.bump();
                    if let Some(c) = self.bump() {
                        out.push(c);
                    }
                }
                Some(c) => {
                    out.push(c);
                    self.bump();
                }
            }
        }
    }

    /// Skips a raw string literal `R"delim( ... )delim"`; `pos` is at `"`.
    fn raw_string(&mut self) -> Result<(), LexError> {
        let start = self.line;
        self.bump();
        let open = self.pos;
        while let Some(c) = self.peek(0) {
            if c == b'(' {
                break;
            }
            self.bump();
        }
        let delim = self.src[open..self.pos].to_vec();
        let mut close = vec![b')'];
        close.extend_from_slice(&delim);
        close.push(b'"');
        while self.pos < self.src.len() {
            if self.src[self.pos..].starts_with(&close) {
                self.pos += close.len();
                return Ok(());
            }
            self.bump();
        }
        Err((start, "unterminated raw string literal".into()))
    }

    fn ident(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek(0) {
            if c.is_ascii_alphanumeric() || c == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("")
    }

    /// Skips a number, digit separators (`1'000`) and suffixes included, so
    /// that a separator is not taken for a character literal.
    fn number(&mut self) {
        while self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'\'')
        {
            self.pos += 1;
        }
    }

    /// Moves past the next identifier in code, skipping whitespace,
    /// comments, literals (with their encoding prefixes: `R"(..)"`, `u8".."`,
    /// `L'x'`), numbers and punctuation. Returns its start, line and text,
    /// `None` at the end, or an error line for an unterminated comment or
    /// literal.
    fn next_ident(&mut self) -> Result<Option<Ident<'a>>, LexError> {
        loop {
            self.skip_trivia()?;
            let Some(c) = self.peek(0) else {
                return Ok(None);
            };
            if c == b'"' || c == b'\'' {
                self.quoted(c)?;
            } else if c.is_ascii_digit() {
                self.number();
            } else if is_ident_start(c) {
                let (start, line) = (self.pos, self.line);
                let id = self.ident();
                let next = self.peek(0);
                if next == Some(b'"') && is_raw_prefix(id) {
                    self.raw_string()?;
                } else if !(matches!(id, "u8" | "u" | "U" | "L")
                    && matches!(next, Some(b'"' | b'\'')))
                {
                    return Ok(Some(Ident {
                        start,
                        line,
                        text: id,
                    }));
                }
            } else {
                self.bump();
            }
        }
    }

    /// Moves past a parenthesised argument list starting at `(`, nested
    /// parentheses and literals included. False when the input ends first.
    fn skip_parens(&mut self) -> bool {
        let mut depth = 0usize;
        loop {
            if self.skip_trivia().is_err() {
                return false;
            }
            match self.peek(0) {
                None => return false,
                Some(q @ (b'"' | b'\'')) => {
                    if self.quoted(q).is_err() {
                        return false;
                    }
                }
                Some(c) => {
                    self.bump();
                    if c == b'(' {
                        depth += 1;
                    } else if c == b')' {
                        depth -= 1;
                        if depth == 0 {
                            return true;
                        }
                    }
                }
            }
        }
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// Scans one source text. `file` is used only in error messages.
///
/// Returns every marker in source order, or every bad marker found.
pub fn scan_source(file: &Path, src: &str) -> Result<Vec<Marker>, Vec<ScanError>> {
    let mut lx = Lexer::new(src);
    let mut markers = Vec::new();
    let mut errors = Vec::new();
    let err = |line: usize, message: String| ScanError {
        file: file.to_path_buf(),
        line,
        message,
    };
    loop {
        let Ident { start, line, text } = match lx.next_ident() {
            Ok(Some(token)) => token,
            Ok(None) => break,
            Err((line, m)) => {
                errors.push(err(line, m));
                break;
            }
        };
        let Some(&macro_name) = MARKERS.iter().find(|&&m| m == text) else {
            continue;
        };
        match marker_args(&mut lx, macro_name) {
            Ok(Some(name)) => match check_name(&name) {
                Ok(()) => markers.push(Marker {
                    macro_name,
                    name,
                    line,
                    span: start..lx.pos,
                }),
                Err(m) => errors.push(err(line, format!("{macro_name}: {m}"))),
            },
            Ok(None) => {}
            Err((l, m)) => {
                errors.push(err(l.max(line), format!("{macro_name}: {m}")));
                if m.starts_with("unterminated") {
                    break;
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(markers)
    } else {
        Err(errors)
    }
}

fn is_raw_prefix(id: &str) -> bool {
    matches!(id, "R" | "u8R" | "uR" | "UR" | "LR")
}

/// Parses the arguments of a marker whose name has just been read. Returns
/// `None` when the identifier is not invoked (e.g. `#ifdef KTRACE_B`).
fn marker_args(lx: &mut Lexer<'_>, macro_name: &str) -> Result<Option<String>, LexError> {
    lx.skip_trivia()?;
    if lx.peek(0) != Some(b'(') {
        return Ok(None);
    }
    let open_line = lx.line;
    lx.bump();
    if macro_name.ends_with("_IF") {
        skip_condition(lx, open_line)?;
    }
    lx.skip_trivia()?;
    let arg_line = lx.line;
    let not_literal = || {
        (
            arg_line,
            "the region name must be one plain string literal, e.g. KTRACE_B(\"load\"); \
             names are read from the source at build time, so a variable, a macro or a \
             concatenation cannot be used"
                .to_string(),
        )
    };
    if lx.peek(0) != Some(b'"') {
        return Err(not_literal());
    }
    let name = lx.quoted(b'"')?;
    lx.skip_trivia()?;
    if macro_name.ends_with("_V") {
        skip_value(lx, open_line, macro_name)?;
    }
    if lx.peek(0) != Some(b')') {
        return Err(not_literal());
    }
    lx.bump();
    if name.contains('\\') {
        return Err((
            arg_line,
            format!("region name \"{name}\" contains an escape sequence; use plain characters"),
        ));
    }
    Ok(Some(name))
}

/// Skips the condition of a `_IF` marker: everything up to the first
/// top-level comma, which it consumes.
fn skip_condition(lx: &mut Lexer<'_>, open_line: usize) -> Result<(), LexError> {
    skip_argument(lx, open_line, true, || {
        "expects a condition and a region name, e.g. \
         KTRACE_B_IF(i % 16 == 0, \"load\")"
            .into()
    })
}

/// Skips the value of a `_V` marker: a comma, then everything up to the
/// closing `)`, which it leaves.
fn skip_value(lx: &mut Lexer<'_>, open_line: usize, macro_name: &str) -> Result<(), LexError> {
    let usage =
        || format!("expects a region name and a value, e.g. {macro_name}(\"tile\", tile_index)");
    if lx.peek(0) != Some(b',') {
        return Err((lx.line, usage()));
    }
    lx.bump();
    skip_argument(lx, open_line, false, usage)
}

/// Skips one macro argument, balancing brackets and skipping literals: up
/// to and including the first top-level comma (`to_comma`), or up to the
/// closing `)` of the invocation, which it leaves (then the argument must
/// not be empty). `usage` says what the marker expects when the argument is
/// missing.
fn skip_argument(
    lx: &mut Lexer<'_>,
    open_line: usize,
    to_comma: bool,
    usage: impl Fn() -> String,
) -> Result<(), LexError> {
    let mut depth = 0usize;
    let mut empty = true;
    loop {
        lx.skip_trivia()?;
        match lx.peek(0) {
            None => return Err((open_line, "unterminated marker: missing ')'".into())),
            Some(b'"') => {
                lx.quoted(b'"')?;
            }
            Some(b'\'') => {
                lx.quoted(b'\'')?;
            }
            Some(b'(' | b'[' | b'{') => {
                depth += 1;
                lx.bump();
            }
            Some(b')') if depth == 0 => {
                return if to_comma || empty {
                    Err((lx.line, usage()))
                } else {
                    Ok(())
                };
            }
            Some(b')' | b']' | b'}') => {
                depth = depth.saturating_sub(1);
                lx.bump();
            }
            Some(b',') if depth == 0 && to_comma => {
                lx.bump();
                return Ok(());
            }
            Some(_) => {
                lx.bump();
            }
        }
        empty = false;
    }
}

/// A scanned source file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as found.
    pub path: PathBuf,
    /// Its markers in source order.
    pub markers: Vec<Marker>,
}

/// Whether a path names a CUDA source or header.
pub fn is_cuda_source(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("cu" | "cuh")
    )
}

/// Lists the `.cu`/`.cuh` files under `dir`, sorted, following no symlinked
/// directories out of the tree.
pub fn find_sources(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            e.into_io_error()
                .unwrap_or_else(|| std::io::Error::other("walk error"))
        })?;
        if entry.file_type().is_file() && is_cuda_source(entry.path()) {
            out.push(entry.path().to_path_buf());
        }
    }
    Ok(out)
}

/// Byte ranges of every invocation `NAME(...)` of the given function-like
/// macros in code (not in comments or literals), parentheses balanced.
/// Used to delete markers and context macros from a source, e.g. to compare
/// a kernel with its marker-free twin.
pub fn invocations(src: &str, names: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut lx = Lexer::new(src);
    let mut out = Vec::new();
    while let Ok(Some(Ident { start, text, .. })) = lx.next_ident() {
        if !names.contains(&text) || lx.skip_trivia().is_err() || lx.peek(0) != Some(b'(') {
            continue;
        }
        if !lx.skip_parens() {
            break;
        }
        out.push(start..lx.pos);
    }
    out
}
