//! Target `capture_headers`: captures of format versions 2 and 3 whose
//! sizes and counts are rewritten.
//!
//! Arbitrary bytes rarely get past a capture's magic and head, and flipping
//! bytes of a whole file mostly lands in buffers. This target starts from
//! valid files and rewrites only the fields that say how big something is
//! or how many of it follow: the header's launch count, the device name's
//! length, the region count and each name's length, each record's kind and
//! payload length, a version 2 file's sync count, each launch header's
//! shape, `raw_len`, `stored_len`, kernel name length and origin flag, a
//! site's name length, and each slot's `count` and magics. The values are
//! the ones that break readers: 0, 1, powers of two, all ones, the file's
//! length and its neighbours, the field's own value plus or minus a little.
//! The result goes through [`super::capture_parse`], with its checks.

/// A field of a capture file: where it starts and its width in bytes.
type Field = (usize, usize);

/// The bases the target starts from, with the fields of each.
fn bases() -> &'static [(Vec<u8>, Vec<Field>)] {
    static BASES: std::sync::OnceLock<Vec<(Vec<u8>, Vec<Field>)>> = std::sync::OnceLock::new();
    BASES.get_or_init(|| {
        header_bases()
            .into_iter()
            .map(|bytes| {
                let fields = fields(&bytes);
                (bytes, fields)
            })
            .collect()
    })
}

/// The files the target starts from: version 3 files of the sample
/// capture with syncs, kernels and host spans, of a continuous session's
/// capture (sites, steps, origins) and of the capture with PC samples; and
/// the first as version 2.
fn header_bases() -> Vec<Vec<u8>> {
    let v2_like = super::written(&super::v2_capture(&ktrace_runtime::synth::sample_capture()));
    let v2 = as_version_2(&v2_like).expect("the sample converts to version 2");
    vec![
        v2,
        v2_like,
        super::written(&ktrace_runtime::synth::continuous_capture()),
        super::written(&super::v3_capture()),
    ]
}

/// A version 3 file (`v3`, as [`Capture::write_to`] writes it) written as
/// version 2: the head with `format_version` 2 and the launch count, the
/// clock syncs, then each launch record's payload without its 32-byte
/// extension. `None` when `v3` holds a record version 2 cannot (host
/// steps, sites, PC samples) or an origin.
///
/// [`Capture::write_to`]: ktrace_runtime::Capture::write_to
pub fn as_version_2(v3: &[u8]) -> Option<Vec<u8>> {
    let mut fields = Vec::new();
    let head = head_fields(v3, &mut fields)?;
    let (mut syncs, mut launches, mut count) = (Vec::new(), Vec::new(), 0u32);
    let mut at = head;
    while at + 16 <= v3.len() {
        let kind = u32_at(v3, at)?;
        let len = u64_at(v3, at + 8)? as usize;
        let payload = v3.get(at + 16..at + 16 + len)?;
        match kind {
            1 if u32_at(payload, 96)? == 0 => {
                launches.extend_from_slice(&payload[..96]);
                launches.extend_from_slice(&payload[128..]);
                count += 1;
            }
            2 => syncs.extend_from_slice(payload),
            5 => {}
            _ => return None,
        }
        at += 16 + len;
    }
    let mut out = v3[..head].to_vec();
    out[8..10].copy_from_slice(&2u16.to_le_bytes());
    out[12..16].copy_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&((syncs.len() / 32) as u32).to_le_bytes());
    out.extend(syncs);
    out.extend(launches);
    Some(out)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The end of the head (header, device name, region table, device
/// identity) of a valid version 2 or 3 file, and its size and count
/// fields.
fn head_fields(b: &[u8], out: &mut Vec<Field>) -> Option<usize> {
    out.extend([(12, 4), (16, 4), (20, 4), (32, 4)]);
    let name_len = u32_at(b, 32)? as usize;
    let regions_at = 36 + name_len;
    out.push((regions_at, 4));
    let mut at = regions_at + 4;
    for _ in 0..u32_at(b, regions_at)? {
        out.push((at + 2, 2));
        at += 4 + usize::from(u16::from_le_bytes(b.get(at + 2..at + 4)?.try_into().ok()?));
    }
    out.extend([(at, 4), (at + 4, 4)]);
    Some(at + 24)
}

/// The size fields of a launch header at `at` (the 96 bytes that versions
/// 2 and 3 share; `extension` bytes follow it in version 3), and the count
/// and magics of each slot of its compact buffer, which follows the kernel
/// name. Returns where the launch ends.
fn launch_fields(b: &[u8], at: usize, extension: usize, out: &mut Vec<Field>) -> Option<usize> {
    for off in (0..48).step_by(4) {
        out.push((at + off, 4));
    }
    out.extend([(at + 48, 8), (at + 56, 8), (at + 80, 4)]);
    if extension > 0 {
        out.extend([(at + 96, 4), (at + 104, 4)]);
    }
    let raw_len = u64_at(b, at + 48)?;
    let stored = u64_at(b, at + 56)? as usize;
    let name_len = u32_at(b, at + 80)? as usize;
    let buffer_at = at + 96 + extension + name_len;
    let cap = 1u64 << u32_at(b, at + 28)?.min(24);
    let slot_bytes = 64 + 8 * cap;
    // Each slot: 64 bytes of metadata, then its stored entries.
    let mut slot = buffer_at;
    for _ in 0..raw_len / slot_bytes {
        if slot + 64 > buffer_at + stored {
            break;
        }
        out.extend([(slot + 24, 4), (slot + 48, 4), (slot + 52, 4)]);
        let flushed = u32_at(b, slot + 52)? == 0x4652_544b;
        let opened = u32_at(b, slot + 24)? == 0x4f52_544b;
        let n = match (opened, flushed) {
            (false, _) => 0,
            (true, true) => u64::from(u32_at(b, slot + 48)?).min(cap),
            (true, false) => cap,
        };
        slot += 64 + 8 * n as usize;
    }
    Some(buffer_at + stored)
}

/// Every size and count field of a valid version 2 or 3 file.
pub fn fields(b: &[u8]) -> Vec<Field> {
    let mut out = Vec::new();
    let _ = walk(b, &mut out);
    out.retain(|&(at, w)| at + w <= b.len());
    out
}

fn walk(b: &[u8], out: &mut Vec<Field>) -> Option<()> {
    let mut at = head_fields(b, out)?;
    if u16::from_le_bytes(b.get(8..10)?.try_into().ok()?) == 2 {
        out.push((at, 4));
        at += 4 + 32 * u32_at(b, at)? as usize;
        for _ in 0..u32_at(b, 12)? {
            at = launch_fields(b, at, 0, out)?;
        }
        return Some(());
    }
    while at + 16 <= b.len() {
        out.extend([(at, 4), (at + 8, 8)]);
        let kind = u32_at(b, at)?;
        let len = u64_at(b, at + 8)? as usize;
        match kind {
            1 => {
                launch_fields(b, at + 16, 32, out)?;
            }
            4 => out.push((at + 16 + 4, 4)),
            _ => {}
        }
        at += 16 + len;
    }
    Some(())
}

/// The value an edit writes into a field of `width` bytes holding `old`,
/// in a file of `len` bytes.
fn value(op: u8, arg: u8, old: u64, width: usize, len: u64) -> u64 {
    let delta = u64::from(arg & 0x3f);
    let v = match op % 8 {
        0 => 0,
        1 => 1,
        2 => 1u64 << (arg % 64),
        3 => u64::MAX,
        4 => len.wrapping_add(delta).wrapping_sub(32),
        5 => old.wrapping_add(delta + 1),
        6 => old.wrapping_sub(delta + 1),
        _ => old.wrapping_mul(u64::from(arg).max(2)),
    };
    match width {
        2 => v & 0xffff,
        4 => v & 0xffff_ffff,
        _ => v,
    }
}

/// Byte 0 picks the base file; then each 4 bytes are one edit: the field
/// (`u16` LE, modulo the base's fields), the operation and its argument
/// (see [`value`]). An edit whose field index has bit 15 set cuts the file
/// at that field's start instead.
pub fn capture_headers(data: &[u8]) {
    let bases = bases();
    let Some((&pick, edits)) = data.split_first() else {
        return;
    };
    let (base, fields) = &bases[usize::from(pick) % bases.len()];
    let mut bytes = base.clone();
    let mut cut = bytes.len();
    for e in edits.chunks_exact(4) {
        let index = u16::from_le_bytes([e[0], e[1]]);
        if fields.is_empty() {
            break;
        }
        let (at, width) = fields[usize::from(index & 0x7fff) % fields.len()];
        if index & 0x8000 != 0 {
            cut = cut.min(at);
            continue;
        }
        let old = match width {
            2 => u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]])),
            4 => u64::from(u32_at(&bytes, at).unwrap_or(0)),
            _ => u64_at(&bytes, at).unwrap_or(0),
        };
        let v = value(e[2], e[3], old, width, base.len() as u64);
        bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
    }
    bytes.truncate(cut);
    super::capture_parse(&bytes);
}

/// Seeds: each base as it is, and each with one lie of each kind on its
/// first launch's header (`raw_len` all ones, `stored_len` one more, the
/// launch count or the first record's length the file's size) and a cut.
pub fn seeds(out: &mut Vec<super::Seed>) {
    for (i, (_, fields)) in bases().iter().enumerate() {
        let pick = i as u8;
        out.push(("capture_headers", format!("seed-base-{i}"), vec![pick]));
        let n = fields.len() as u16;
        for (name, field, op, arg) in [
            ("launch-count", 0u16, 4u8, 32u8),
            ("name-len", 3, 3, 0),
            ("field-7-grows", 7 % n, 5, 7),
            ("field-20-all-ones", 20 % n, 3, 0),
            ("field-30-halves", 30 % n, 6, 40),
        ] {
            let [lo, hi] = field.to_le_bytes();
            out.push((
                "capture_headers",
                format!("seed-base-{i}-{name}"),
                vec![pick, lo, hi, op, arg],
            ));
        }
        let [lo, hi] = (0x8000u16 | (n / 2)).to_le_bytes();
        out.push((
            "capture_headers",
            format!("seed-base-{i}-cut"),
            vec![pick, lo, hi, 0, 0],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_2_base_reads_as_the_capture_it_came_from() {
        let sample = super::super::v2_capture(&ktrace_runtime::synth::sample_capture());
        let v2 = &bases()[0].0;
        assert_eq!(u16::from_le_bytes([v2[8], v2[9]]), 2);
        let back = ktrace_runtime::Capture::from_bytes(v2).expect("version 2 reads");
        assert_eq!(back.launches.len(), sample.launches.len());
        assert_eq!(back.clock_syncs, sample.clock_syncs);
        for (a, b) in back.launches.iter().zip(&sample.launches) {
            assert_eq!(
                (a.shape, &a.kernel, a.host_span),
                (b.shape, &b.kernel, b.host_span)
            );
            let stored = |l: &ktrace_runtime::format::capture::LaunchCapture| {
                ktrace_runtime::format::capture::stored_part(&l.buffer().expect("a buffer"))
            };
            assert_eq!(stored(a), stored(b));
        }
    }

    #[test]
    fn every_base_parses_and_has_its_fields() {
        for (bytes, fields) in bases() {
            let cap = ktrace_runtime::Capture::from_bytes(bytes).expect("a valid base");
            let slots: usize = cap
                .launches
                .iter()
                .map(|l| l.shape.slot_count() as usize)
                .sum();
            // The head's fields, two per record or the v2 sync count, and
            // per launch at least its header's.
            assert!(
                fields.len() >= 8 + 15 * cap.launches.len(),
                "{}",
                fields.len()
            );
            assert!(slots > 0);
        }
    }
}
