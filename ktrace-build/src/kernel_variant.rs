//! Kernel variants: a kernel source built again as a module of its own,
//! with preprocessor macros defined for it, declared in build.rs instead of
//! in a wrapper source that defines them and includes the kernel.

use std::path::{Path, PathBuf};

/// A kernel source built again as the module `name`, traced and untraced
/// like any kernel module, with macros defined for its compiles only
/// (another recorder for the same kernel, another register split).
/// Declared with [`crate::Build::variant`], its macros added with
/// [`KernelVariant::define`].
///
/// A macro defined here is an nvcc `-D` flag after those of
/// [`crate::Build::define`], so it is defined before the first line of the
/// source, as a wrapper's `#define` before its `#include` of the source is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelVariant {
    /// The module name: its Rust constant and image file names.
    pub(crate) name: String,
    /// The source nvcc compiles.
    pub(crate) source: PathBuf,
    /// The variant's own `-D` definitions, in the order given.
    pub(crate) defines: Vec<(String, Option<String>)>,
}

impl KernelVariant {
    /// The variant `name` of `source`, with no macros yet.
    pub(crate) fn new(name: &str, source: &Path) -> Self {
        Self {
            name: name.to_string(),
            source: source.to_path_buf(),
            defines: Vec::new(),
        }
    }

    /// Defines the macro `name` in this variant's compiles: as `value`, or,
    /// for `None`, as `-DNAME` does (as 1).
    pub fn define<'a>(&mut self, name: &str, value: impl Into<Option<&'a str>>) -> &mut Self {
        self.defines
            .push((name.to_string(), value.into().map(str::to_string)));
        self
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kernel source it builds.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Its macros, `(name, value)`, in the order defined.
    pub fn defines(&self) -> &[(String, Option<String>)] {
        &self.defines
    }
}
