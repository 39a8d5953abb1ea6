//! The compact form of a raw buffer in a capture file (format version 2):
//! each slot's 64 bytes of metadata followed by only the ring entries the
//! decoder can read, so a capture costs about 8 bytes per recorded entry
//! plus 64 bytes per traced warp, whatever the ring capacity.
//!
//! Per slot, the entries stored are, from ring index 0:
//!
//! - a slot never opened: none;
//! - a flushed slot: `min(count, cap)` (a ring that wrapped is full);
//! - a slot opened but never flushed: all `cap` (its count is unknown).
//!
//! The count follows from the metadata stored just before, so nothing else
//! is recorded. Reading gives the whole buffer back with the entries not
//! stored as zeros, which is what the device buffer held there (the session
//! zeroes it before every launch); the decoder reads no entry outside those
//! stored, so a compact capture decodes exactly as the buffer it came from.

use std::io::{self, Write};

use crate::format::buffer::{stored_entries, LaunchBuffer};
use crate::format::layout::{SlotMeta, EVENT_BYTES, META_BYTES};
use crate::format::shape::LaunchShape;

/// Calls `f` with each slot's bytes to store (its metadata and stored
/// entries), in slot order.
fn for_each_stored(
    buffer: &LaunchBuffer<'_>,
    mut f: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let slot_bytes = buffer.shape().slot_bytes() as usize;
    let raw = buffer.raw();
    for slot in buffer.slots() {
        let off = slot.index() as usize * slot_bytes;
        let n = slot.stored_entries() as usize;
        f(&raw[off..off + META_BYTES + n * EVENT_BYTES])?;
    }
    Ok(())
}

/// Bytes of the compact form of `buffer`.
pub fn compact_len(buffer: &LaunchBuffer<'_>) -> u64 {
    let mut len = 0u64;
    let _ = for_each_stored(buffer, |b| {
        len += b.len() as u64;
        Ok(())
    });
    len
}

/// Writes the compact form of `buffer`.
pub fn write_compact(buffer: &LaunchBuffer<'_>, w: &mut impl Write) -> io::Result<()> {
    for_each_stored(buffer, |b| w.write_all(b))
}

/// The buffer with every byte the compact form does not store set to zero:
/// what a capture of it reads back as.
pub fn stored_part(buffer: &LaunchBuffer<'_>) -> Vec<u8> {
    let mut out = vec![0u8; buffer.raw().len()];
    let mut off = 0;
    let slot_bytes = buffer.shape().slot_bytes() as usize;
    let _ = for_each_stored(buffer, |b| {
        out[off..off + b.len()].copy_from_slice(b);
        off += slot_bytes;
        Ok(())
    });
    out
}

fn meta_at(raw: &[u8], off: usize) -> SlotMeta {
    SlotMeta::from_bytes(raw[off..off + META_BYTES].try_into().expect("64 bytes"))
}

/// `used` stored bytes and `n` more, or `too_long` of that total when it
/// passes `limit`: the slots' metadata asks for more than the record holds.
pub(crate) fn stored_within<E>(
    used: u64,
    n: usize,
    limit: u64,
    too_long: &impl Fn(u64) -> E,
) -> Result<u64, E> {
    let total = used + n as u64;
    if total > limit {
        Err(too_long(total))
    } else {
        Ok(total)
    }
}

/// Expands a compact form, read slot by slot through `read` (which fills
/// the slice it is given, or fails), into `raw`, a zeroed buffer of the
/// length `shape` needs. Returns the compact bytes read, which the caller
/// checks against what the file declared; `read` is never asked for more
/// than `limit` bytes in all.
pub fn read_compact<E>(
    raw: &mut [u8],
    shape: &LaunchShape,
    limit: u64,
    mut read: impl FnMut(&mut [u8]) -> Result<(), E>,
    too_long: impl Fn(u64) -> E,
) -> Result<u64, E> {
    let slot_bytes = shape.slot_bytes() as usize;
    let cap = shape.cap();
    let mut used = 0u64;
    for off in (0..raw.len()).step_by(slot_bytes.max(1)) {
        let need = |n: usize, used: u64| stored_within(used, n, limit, &too_long);
        used = need(META_BYTES, used)?;
        read(&mut raw[off..off + META_BYTES])?;
        let n = stored_entries(&meta_at(raw, off), cap) as usize * EVENT_BYTES;
        used = need(n, used)?;
        read(&mut raw[off + META_BYTES..off + META_BYTES + n])?;
    }
    Ok(used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthLaunch, SynthWarp};

    #[test]
    fn the_compact_form_keeps_what_the_decoder_reads_and_expands_back_to_the_buffer() {
        // Two blocks of two warps: a flushed warp with 3 spans, one whose
        // ring wrapped, one never flushed and a slot never opened.
        let wrapped = (0..40u64).fold(SynthWarp::new(0, 1), |w, i| {
            w.span(100 + 100 * i, 150 + 100 * i, 0)
        });
        let launch = SynthLaunch::all_traced(2, 64, 32)
            .with(
                SynthWarp::new(0, 0)
                    .span(100, 300, 0)
                    .span(400, 500, 0)
                    .mark(600, 1),
            )
            .with(wrapped)
            .with(SynthWarp::new(1, 0).span(100, 300, 0).never_flushed())
            .into_capture();
        let shape = launch.shape;
        let raw = &launch.raw;
        let buffer = launch.buffer().unwrap();
        let len = compact_len(&buffer);
        // 4 slots of metadata; 5 events; the full ring (32) of the wrapped
        // warp and of the never-flushed one.
        assert_eq!(len, 4 * 64 + (5 + 32 + 32) * 8);
        let mut bytes = Vec::new();
        write_compact(&buffer, &mut bytes).unwrap();
        assert_eq!(bytes.len() as u64, len);
        let expand = |limit: u64| {
            let mut back = vec![0u8; raw.len()];
            let mut src = &bytes[..];
            let used = read_compact(
                &mut back,
                &shape,
                limit,
                |buf: &mut [u8]| {
                    let (head, rest) = src.split_at(buf.len());
                    buf.copy_from_slice(head);
                    src = rest;
                    Ok::<(), u64>(())
                },
                |n| n,
            )?;
            Ok::<_, u64>((used, back))
        };
        let (used, back) = expand(len).unwrap();
        assert_eq!(used, len);
        assert_eq!(&back, raw);
        assert_eq!(&stored_part(&buffer), raw);
        // Bytes the decoder never reads are not stored: an entry past a
        // flushed ring's count, the ring of a slot never opened.
        let mut dirty = raw.clone();
        let slot = shape.slot_bytes() as usize;
        dirty[META_BYTES + 5 * EVENT_BYTES] = 0xaa;
        dirty[3 * slot + META_BYTES] = 0xbb;
        let dirty = LaunchBuffer::new(&dirty, &shape, launch.layout_version).unwrap();
        assert_eq!(compact_len(&dirty), len);
        assert_eq!(&stored_part(&dirty), raw);
        // A limit below what the metadata asks for is refused, never read
        // past.
        let e = expand(len - 1).unwrap_err();
        assert_eq!(e, len);
    }
}
