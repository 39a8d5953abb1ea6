//! The tracing switch: whether tracing is on (`KTRACE=1`, or
//! [`set_enabled`]), and [`KernelModule`], the traced and untraced builds of
//! a kernel file that it picks between. Nothing here touches the device, so
//! the region table and kernels that `include_ktrace!` brings in compile
//! without the `cuda` feature.

use std::sync::atomic::{AtomicU8, Ordering};

/// `KTRACE`: tracing is on when it is `1`.
pub const ENV_ENABLE: &str = "KTRACE";

/// 0: follow `KTRACE`; 1: forced off; 2: forced on.
static FORCED: AtomicU8 = AtomicU8::new(0);

/// Whether tracing is on: forced through [`set_enabled`], or else `KTRACE=1`.
pub fn enabled() -> bool {
    match FORCED.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => crate::settings::var(ENV_ENABLE).is_some_and(|v| v == "1"),
    }
}

/// Forces tracing on or off for the whole process (`None`: follow `KTRACE`
/// again). Affects sessions and modules created afterwards.
pub fn set_enabled(on: Option<bool>) {
    let v = match on {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    };
    FORCED.store(v, Ordering::Relaxed);
}

/// A kernel file built twice by ktrace-build: with markers (traced) and
/// without (untraced). The generated `ktrace.rs` defines one constant per
/// kernel file.
#[derive(Clone, Copy, Debug)]
pub struct KernelModule {
    /// The kernel file's name.
    pub name: &'static str,
    /// The image built with tracing on: a cubin or fatbin from ktrace-build's
    /// own nvcc run, or PTX text from another builder
    /// (`ktrace_build::Build::generate`).
    pub traced: &'static [u8],
    /// The image built with tracing off.
    pub untraced: &'static [u8],
    /// The traced cubin's instruction → region map, as ktrace-build wrote
    /// it (read by [`crate::format::pc_map::PcMap::parse`]).
    pub traced_map: &'static str,
    /// The untraced cubin's instruction → region map.
    pub untraced_map: &'static str,
}

impl KernelModule {
    /// The cubin for tracing on or off.
    pub fn image(&self, traced: bool) -> &'static [u8] {
        if traced {
            self.traced
        } else {
            self.untraced
        }
    }

    /// The image for tracing on or off as the driver loads it: a cubin or
    /// fatbin as it is, PTX text with the NUL that the driver reads up to
    /// (an image embedded with `include_bytes!` has none).
    pub fn loadable_image(&self, traced: bool) -> Vec<u8> {
        loadable(self.image(traced))
    }

    /// The instruction → region map of the cubin for tracing on or off.
    pub fn map(&self, traced: bool) -> &'static str {
        if traced {
            self.traced_map
        } else {
            self.untraced_map
        }
    }
}

/// ELF's magic: a cubin.
const ELF_MAGIC: &[u8] = b"\x7fELF";
/// A fatbin's magic, little-endian `0xBA55ED50`.
const FATBIN_MAGIC: &[u8] = &[0x50, 0xed, 0x55, 0xba];

/// `image` with a NUL after it when it is text (PTX) not already ending in
/// one; binary images are returned as they are.
fn loadable(image: &[u8]) -> Vec<u8> {
    let mut v = image.to_vec();
    let binary = image.starts_with(ELF_MAGIC) || image.starts_with(FATBIN_MAGIC);
    if !binary && image.last() != Some(&0) {
        v.push(0);
    }
    v
}

#[cfg(test)]
mod image_tests {
    use super::loadable;

    #[test]
    fn ptx_text_gets_its_nul_and_binaries_stay_as_they_are() {
        let ptx = b".version 9.0\n.target sm_90\n";
        let mut want = ptx.to_vec();
        want.push(0);
        assert_eq!(loadable(ptx), want);
        // Already terminated: unchanged.
        assert_eq!(loadable(&want), want);
        let cubin = b"\x7fELF\x02\x01\x01\x33rest";
        assert_eq!(loadable(cubin), cubin.to_vec());
        let fatbin = [0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0];
        assert_eq!(loadable(&fatbin), fatbin.to_vec());
    }
}
