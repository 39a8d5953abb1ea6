//! The static shared memory of a cubin's kernels, read from its ELF
//! sections, and whether a kernel's traced build breaks the alignment of
//! its dynamic shared memory that the untraced build has.
//!
//! A block's dynamic shared memory starts right after its static shared
//! memory (on sm_90, after the 1 KiB the driver reserves too, which the
//! section's size includes). Kernels whose tiles are 128-byte swizzled for
//! TMA or `wgmma` need those tiles 1,024-byte aligned, and some take the
//! alignment of that start for granted when the untraced build happens to
//! have it. The shared-memory recorders' rings are one 1,024-byte-aligned
//! block whose size is a multiple of 1,024, so wherever the compiler places
//! them beside the kernel's own static shared memory, a start that is
//! aligned untraced stays aligned traced; this check holds the build to
//! that, and says which kernel breaks it if a recorder's layout ever does.

use std::collections::BTreeMap;
use std::path::Path;

/// The alignment a kernel's dynamic shared memory may rely on: 1,024 bytes.
pub const DYNAMIC_SHARED_ALIGN: u64 = 1024;

/// A kernel whose dynamic shared memory starts [`DYNAMIC_SHARED_ALIGN`]-byte
/// aligned in its untraced build and not in its traced build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedShift {
    /// The kernel (its ELF symbol).
    pub function: String,
    /// Bytes of static shared memory of the untraced build (0: none).
    pub untraced: u64,
    /// Bytes of static shared memory of the traced build.
    pub traced: u64,
}

impl SharedShift {
    /// The warning for module `module`.
    pub fn message(&self, module: &str) -> String {
        format!(
            "ktrace: module {module}, kernel {}: the traced build's static shared memory \
             ({} bytes) starts the dynamic shared memory off the {DYNAMIC_SHARED_ALIGN}-byte \
             alignment it has in the untraced build ({} bytes); if the kernel's dynamic \
             shared tiles must be {DYNAMIC_SHARED_ALIGN}-byte aligned (128-byte-swizzled TMA, \
             wgmma), align them in the kernel (as examples/kernels/gemm.cu does) or use the \
             store recorder, which takes no shared memory",
            self.function, self.traced, self.untraced
        )
    }
}

/// Bytes of static shared memory of each kernel of the ELF image `elf`
/// (its `.nv.shared.<kernel>` sections; a kernel without one has none).
pub fn static_shared(elf: &[u8]) -> Result<BTreeMap<String, u64>, String> {
    let u16_at = |at: usize| -> Result<u64, String> {
        elf.get(at..at + 2)
            .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]])))
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    let u32_at = |at: usize| -> Result<u64, String> {
        elf.get(at..at + 4)
            .map(|b| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes"))))
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    let u64_at = |at: usize| -> Result<u64, String> {
        elf.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| format!("truncated at byte {at}"))
    };
    if elf.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 2, 1][..]) {
        return Err("not a 64-bit little-endian ELF image".into());
    }
    let index = |v: u64| usize::try_from(v).map_err(|_| format!("offset {v} out of range"));
    let shoff = index(u64_at(0x28)?)?;
    let entsize = index(u16_at(0x3a)?)?;
    let count = index(u16_at(0x3c)?)?;
    let strndx = index(u16_at(0x3e)?)?;
    if entsize < 64 || strndx >= count {
        return Err(format!(
            "bad section table ({count} entries of {entsize} bytes, names in {strndx})"
        ));
    }
    let header = |i: usize| shoff + i * entsize;
    let names = index(u64_at(header(strndx) + 24)?)?;
    let mut sizes = BTreeMap::new();
    for i in 0..count {
        let at = header(i);
        let name_at = names + index(u32_at(at)?)?;
        let tail = elf
            .get(name_at..)
            .ok_or_else(|| format!("section name at byte {name_at} out of range"))?;
        let end = tail
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| format!("unterminated section name at byte {name_at}"))?;
        let name = String::from_utf8_lossy(&tail[..end]);
        if let Some(kernel) = name.strip_prefix(".nv.shared.") {
            if !kernel.starts_with("reserved.") {
                sizes.insert(kernel.to_string(), u64_at(at + 32)?);
            }
        }
    }
    Ok(sizes)
}

/// The kernels whose dynamic shared memory starts [`DYNAMIC_SHARED_ALIGN`]-byte
/// aligned in the untraced build and not in the traced one, from each
/// build's static shared memory ([`static_shared`]). A start that is not
/// aligned untraced is not one the kernel can rely on, so it is not
/// checked.
pub fn shared_shifts(
    traced: &BTreeMap<String, u64>,
    untraced: &BTreeMap<String, u64>,
) -> Vec<SharedShift> {
    let mut kernels: Vec<&String> = traced.keys().chain(untraced.keys()).collect();
    kernels.sort();
    kernels.dedup();
    kernels
        .into_iter()
        .filter_map(|k| {
            let t = traced.get(k).copied().unwrap_or(0);
            let u = untraced.get(k).copied().unwrap_or(0);
            (u % DYNAMIC_SHARED_ALIGN == 0 && t % DYNAMIC_SHARED_ALIGN != 0).then(|| SharedShift {
                function: k.clone(),
                untraced: u,
                traced: t,
            })
        })
        .collect()
}

/// [`shared_shifts`] of a module's two images; `None` unless both are
/// cubins (a fat binary's images are not read).
pub fn image_shared_shifts(
    traced: &Path,
    untraced: &Path,
) -> Result<Option<Vec<SharedShift>>, String> {
    let cubin = |p: &Path| p.extension().is_some_and(|e| e == "cubin");
    if !cubin(traced) || !cubin(untraced) {
        return Ok(None);
    }
    let read = |p: &Path| -> Result<BTreeMap<String, u64>, String> {
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        static_shared(&bytes).map_err(|e| format!("{}: {e}", p.display()))
    };
    Ok(Some(shared_shifts(&read(traced)?, &read(untraced)?)))
}

#[cfg(test)]
mod tests;
