//! Rendering the generated C++ header and Rust file from the templates.
//!
//! Pure functions from the region table (and the list of built modules) to
//! text; writing the text is left to the caller.

use std::fmt;

use handlebars::Handlebars;
use serde::Serialize;

use crate::regions::RegionTable;

/// Template of the C++ region header.
pub const REGIONS_HEADER_TEMPLATE: &str = include_str!("../templates/ktrace_regions.h.hbs");
/// Template of the Rust file.
pub const RUST_TEMPLATE: &str = include_str!("../templates/ktrace.rs.hbs");

/// Name of the generated C++ header, included by `ktrace.cuh`.
pub const REGIONS_HEADER_NAME: &str = "ktrace_regions.h";
/// Name of the generated Rust file, in `OUT_DIR`.
pub const RUST_FILE_NAME: &str = "ktrace.rs";

/// A compiled kernel module, as the Rust file describes it.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleEntry {
    /// Module name: the source file's stem.
    pub name: String,
    /// The Rust constant: the stem in upper snake case.
    pub const_name: String,
    /// The source, for the doc comment.
    pub source: String,
    /// The architectures, for the doc comment.
    pub archs: String,
    /// Path of the traced image, as a Rust string literal (quoted).
    pub traced_path: String,
    /// Path of the untraced image, as a Rust string literal (quoted).
    pub untraced_path: String,
    /// Path of the traced image's instruction → region map, quoted.
    pub traced_map_path: String,
    /// Path of the untraced image's instruction → region map, quoted.
    pub untraced_map_path: String,
}

#[derive(Serialize)]
struct Context<'a> {
    version: &'static str,
    regions: &'a [crate::regions::Region],
    region_count: usize,
    files: &'a [String],
    file_count: usize,
    modules: &'a [ModuleEntry],
}

fn engine() -> Handlebars<'static> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    hb
}

/// A template that did not render, from [`regions_header`] or
/// [`rust_file`].
///
/// Its `Display` ends with handlebars' message (which already holds the
/// reason that handlebars gives as its own source), so `source()` is `None`
/// and no report prints that message twice.
#[derive(Debug)]
pub struct RenderError(handlebars::RenderError);

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rendering a ktrace template failed: {}", self.0)
    }
}

impl std::error::Error for RenderError {}

fn render(template: &str, ctx: &Context<'_>) -> Result<String, RenderError> {
    engine().render_template(template, ctx).map_err(RenderError)
}

/// Renders the C++ header that maps each region name to its id.
pub fn regions_header(table: &RegionTable, files: &[String]) -> Result<String, RenderError> {
    render(
        REGIONS_HEADER_TEMPLATE,
        &Context {
            version: env!("CARGO_PKG_VERSION"),
            regions: table.regions(),
            region_count: table.len(),
            files,
            file_count: files.len(),
            modules: &[],
        },
    )
}

/// Renders the Rust file with the region table and the embedded modules.
pub fn rust_file(table: &RegionTable, modules: &[ModuleEntry]) -> Result<String, RenderError> {
    render(
        RUST_TEMPLATE,
        &Context {
            version: env!("CARGO_PKG_VERSION"),
            regions: table.regions(),
            region_count: table.len(),
            files: &[],
            file_count: 0,
            modules,
        },
    )
}

/// The Rust constant name for a module: `my-kernel` → `MY_KERNEL`.
pub fn const_name(stem: &str) -> String {
    let mut s: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_that_does_not_render_says_so_once() {
        let table = RegionTable::default();
        let ctx = Context {
            version: "0",
            regions: table.regions(),
            region_count: 0,
            files: &[],
            file_count: 0,
            modules: &[],
        };
        let e = render("{{missing}}", &ctx).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("rendering a ktrace template failed: Error rendering"),
            "{text}"
        );
        assert!(text.contains("missing"), "{text}");
        assert!(std::error::Error::source(&e).is_none());
        let build = crate::Error::Render(e);
        assert_eq!(build.to_string(), text);
        assert_eq!(crate::error::report(&build), format!("ktrace: {text}"));
    }
}
