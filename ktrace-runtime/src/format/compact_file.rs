//! A launch's compact buffer read from its capture file straight into the
//! raw buffer, on one thread or several: first each slot's metadata, in
//! file order (it says how many entries the slot stores, so where the next
//! slot starts), then the slots, each thread reading a run of slots into
//! its part of the buffer. Every byte is copied once, from the
//! page cache into the buffer, where reading through a `BufReader` copies
//! it twice; and the copies run on every thread.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;

use super::buffer::stored_entries;
use super::compact::stored_within;
use super::layout::{SlotMeta, EVENT_BYTES, META_BYTES};
use super::shape::LaunchShape;

/// Bytes of entries per reading thread at least.
const BYTES_PER_THREAD: usize = 1 << 20;

/// A slot's stored bytes (metadata and entries): where they go in the
/// buffer, and the file offset they are at.
type Run = (Range<usize>, u64);

/// Reads the compact form of `shape`'s buffer that the bytes `record` of
/// `file` hold (it starts at the start, and takes no more than all) into
/// `raw` (zeroed, as long as the shape needs), on up to `threads` threads,
/// as [`super::compact::read_compact`] does: `too_long(bytes)` where the
/// metadata asks for more, I/O errors as `io_err` makes them. Returns the
/// compact bytes read.
pub(crate) fn read_compact_file<E: Send>(
    file: &File,
    record: Range<u64>,
    raw: &mut [u8],
    shape: &LaunchShape,
    threads: usize,
    io_err: impl Fn(io::Error) -> E + Sync,
    too_long: impl Fn(u64) -> E,
) -> Result<u64, E> {
    let limit = record.end - record.start;
    let (runs, used) = slot_runs(
        file,
        record.start,
        raw.len(),
        shape,
        limit,
        &io_err,
        too_long,
    )?;
    let bytes: usize = runs.iter().map(|(r, _)| r.len()).sum();
    let threads = threads.clamp(1, (bytes / BYTES_PER_THREAD).max(1));
    let groups = split_runs(&runs, threads);
    let mut parts = Vec::with_capacity(groups.len());
    let mut rest = &mut raw[..];
    let mut base = 0;
    for g in &groups {
        let end = g.last().map_or(base, |(r, _)| r.end);
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(end - base);
        parts.push((base, part, *g));
        rest = tail;
        base = end;
    }
    let read = |(base, part, runs): (usize, &mut [u8], &[Run])| {
        for (r, pos) in runs {
            file.read_exact_at(&mut part[r.start - base..r.end - base], *pos)?;
        }
        Ok::<(), io::Error>(())
    };
    let results: Vec<io::Result<()>> = if parts.len() <= 1 {
        parts.into_iter().map(read).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .into_iter()
                .map(|p| s.spawn(move || read(p)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a reading thread panicked"))
                .collect()
        })
    };
    for r in results {
        r.map_err(&io_err)?;
    }
    Ok(used)
}

/// Where each slot's stored bytes (its metadata and its entries, one run
/// in the file as in the buffer) go in a buffer of `raw_len` bytes and
/// where they are in `file` from `start` on, found by reading each slot's
/// metadata (into a scratch array: the buffer's pages are first touched by
/// the threads that fill them); and the bytes stored in all. The checks
/// are [`super::compact::read_compact`]'s, in its order.
fn slot_runs<E>(
    file: &File,
    start: u64,
    raw_len: usize,
    shape: &LaunchShape,
    limit: u64,
    io_err: &impl Fn(io::Error) -> E,
    too_long: impl Fn(u64) -> E,
) -> Result<(Vec<Run>, u64), E> {
    let slot_bytes = shape.slot_bytes() as usize;
    let mut runs: Vec<Run> = Vec::new();
    let mut used = 0u64;
    let need = |n: usize, used: u64| stored_within(used, n, limit, &too_long);
    for off in (0..raw_len).step_by(slot_bytes.max(1)) {
        let at = start + used;
        used = need(META_BYTES, used)?;
        let mut meta = [0u8; META_BYTES];
        file.read_exact_at(&mut meta, at).map_err(io_err)?;
        let n = stored_entries(&SlotMeta::from_bytes(&meta), shape.cap()) as usize * EVENT_BYTES;
        used = need(n, used)?;
        runs.push((off..off + META_BYTES + n, at));
    }
    Ok((runs, used))
}

/// `runs` (in order) cut into at most `n` consecutive groups of about the
/// same number of bytes.
fn split_runs(runs: &[Run], n: usize) -> Vec<&[Run]> {
    let total: usize = runs.iter().map(|(r, _)| r.len()).sum();
    let per = total.div_ceil(n.max(1)).max(1);
    let mut groups = Vec::with_capacity(n);
    let (mut start, mut acc) = (0, 0);
    for (i, (r, _)) in runs.iter().enumerate() {
        acc += r.len();
        if acc >= per && groups.len() + 1 < n {
            groups.push(&runs[start..=i]);
            (start, acc) = (i + 1, 0);
        }
    }
    if start < runs.len() {
        groups.push(&runs[start..]);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::compact::{read_compact, write_compact};
    use crate::synth::{SynthLaunch, SynthWarp};

    #[test]
    fn a_file_reads_as_the_bytes_do_on_any_number_of_threads() {
        // Warps of every kind, many of them, after 100 bytes of something
        // else in the file.
        let mut launch = SynthLaunch::all_traced(256, 128, 2048);
        for block in 0..256 {
            for warp in 0..4 {
                let n = (block * 7 + warp * 13) % 1000;
                let mut w = (0..u64::from(n)).fold(SynthWarp::new(block, warp), |w, i| {
                    w.span(10 + 10 * i, 15 + 10 * i, 1)
                });
                if (block + warp) % 9 == 0 {
                    w = w.never_flushed();
                }
                if (block + warp) % 11 != 5 {
                    launch.write(&w);
                }
            }
        }
        let mut compact = vec![7u8; 100];
        write_compact(&launch.buffer(), &mut compact).unwrap();
        let stored = compact.len() as u64 - 100;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        std::fs::write(&path, &compact).unwrap();
        let file = File::open(&path).unwrap();
        let shape = launch.shape;
        let mut want = vec![0u8; launch.raw.len()];
        let mut from = &compact[100..];
        let used = read_compact(
            &mut want,
            &shape,
            stored,
            |b: &mut [u8]| {
                b.copy_from_slice(&from[..b.len()]);
                from = &from[b.len()..];
                Ok::<(), String>(())
            },
            |n| format!("{n}"),
        )
        .unwrap();
        assert_eq!(used, stored);
        let err = |e: io::Error| e.to_string();
        assert!(
            stored as usize > 3 * BYTES_PER_THREAD,
            "{stored} bytes: room for 3 threads"
        );
        for threads in [1, 2, 3, 8] {
            let mut raw = vec![0u8; launch.raw.len()];
            let got = read_compact_file(
                &file,
                100..100 + stored,
                &mut raw,
                &shape,
                threads,
                err,
                |n| format!("{n}"),
            );
            assert_eq!(got, Ok(stored));
            assert!(raw == want, "{threads} threads");
        }
        // A limit short of what the metadata asks: the same error; a file
        // cut short: an error, not a panic.
        let mut raw = vec![0u8; launch.raw.len()];
        let short = read_compact_file(&file, 100..99 + stored, &mut raw, &shape, 2, err, |n| {
            format!("too long {n}")
        });
        assert_eq!(short, Err(format!("too long {stored}")));
        std::fs::write(dir.path().join("cut"), &compact[..compact.len() - 500]).unwrap();
        let cut = File::open(dir.path().join("cut")).unwrap();
        let got = read_compact_file(&cut, 100..100 + stored, &mut raw, &shape, 2, err, |n| {
            format!("{n}")
        });
        let e = got.unwrap_err();
        assert!(e.contains("fill"), "an end-of-file error: {e}");
    }
}
