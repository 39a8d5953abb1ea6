//! A launch's warps decoded, summarised and encoded on several threads,
//! written in slot order: the bytes are those of one thread doing it all.
//!
//! The warps are cut into chunks of consecutive slots. A thread takes the
//! next chunk, decodes its warps, applies the filter and fills a part of
//! the summary ([`PassPart`]); then, in chunk order, it asks the writer's
//! *running state* what each kept warp's place in the file is (what the
//! warps before it decided: the Chrome trace's first event and processes
//! already named, the Perfetto trace's sequence ids, SM and block tracks
//! already described); then it encodes the chunk into a byte buffer of its
//! own with a fork of the writer ([`ChunkEncoder`]). The calling thread is
//! one of the threads and the only one that writes: whenever the next
//! chunk in order is done it writes its buffer, merges its part, reports
//! progress after each of its warps as one thread would, and hands the
//! buffer back for reuse; otherwise it takes a chunk itself. No thread
//! takes a chunk more than a few chunks ahead of the writing, so memory
//! stays a few chunks per thread.
//!
//! With one thread (or one warp, or a launch of a few thousand entries)
//! nothing is spawned: the writer encodes each warp itself, as before there
//! were threads.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::ops::Range;
use std::sync::{mpsc, Condvar, Mutex, MutexGuard, PoisonError};

use super::filter::LaunchFilter;
use super::pass::{FilteredPass, PassPart};
use crate::decode::{Decoder, WarpTrace};
use crate::threads::thread_count;

/// Ring entries a chunk holds at most (about 16 warps of 1000 events: a
/// Chrome trace of 1.3 MB).
const CHUNK_ENTRIES: u64 = 1 << 14;
/// Chunks per thread at least, so that threads finish together.
const CHUNKS_PER_THREAD: u64 = 8;
/// Below this many ring entries a launch is decoded on the calling thread:
/// starting threads would take longer (a continuous session's capture may
/// hold a million launches of a few hundred entries).
const PARALLEL_FROM_ENTRIES: u64 = 1 << 12;
/// Chunks a worker may be ahead of the writing, per thread.
const AHEAD_PER_THREAD: usize = 3;
/// The chunks in flight hold at most about this share of a launch's
/// entries (`1 / IN_FLIGHT_SHARE`) when that allows fewer than
/// [`AHEAD_PER_THREAD`] a thread: a chunk in flight takes about 130 bytes
/// an entry (its decoded warps and its Chrome JSON), so the peak stays
/// within 2× the raw buffer on many threads (16 threads exporting 10 M
/// events as Chrome JSON took 2.75× with 3 chunks a thread, 2.21× with 16
/// chunks); no more threads start than chunks may be in flight.
const IN_FLIGHT_SHARE: u64 = 64;

/// Chunks that may be taken beyond those written, for a launch of
/// `entries` ring entries on `threads` threads: [`AHEAD_PER_THREAD`] a
/// thread, fewer when that would hold more than 1 / [`IN_FLIGHT_SHARE`]
/// of the entries, and never fewer than 2.
fn ahead(entries: u64, threads: usize) -> usize {
    let share = entries / (IN_FLIGHT_SHARE * CHUNK_ENTRIES);
    (usize::try_from(share).unwrap_or(usize::MAX)).clamp(2, (threads * AHEAD_PER_THREAD).max(2))
}

/// One chunk's encoding: `bytes[..len]`, and what it counts.
pub(crate) struct Encoded {
    /// The buffer (its bytes after `len` are left over from earlier use).
    pub bytes: Vec<u8>,
    /// Bytes of the chunk.
    pub len: usize,
    /// Spans and marks written (the writer's `events_written`).
    pub events: u64,
    /// Track events written (Perfetto; a span is two).
    pub track_events: u64,
}

/// A writer whose warps can be encoded on other threads.
pub(crate) trait ChunkSink {
    /// What the warps written so far decide for the next ones.
    type Running: Send;
    /// What the running state gives one warp.
    type Order: Send;
    /// What a worker finds out about a warp for [`ChunkSink::order`].
    type Prep: Send;
    /// The encoder of chunks.
    type Fork: ChunkEncoder<Order = Self::Order, Prep = Self::Prep>;

    /// Writes one warp on this thread (the path with one thread).
    fn warp(&mut self, warp: &WarpTrace) -> io::Result<()>;
    /// Takes the running state out, for the workers.
    fn take_running(&mut self) -> Self::Running;
    /// Puts it back once every warp is written.
    fn put_running(&mut self, running: Self::Running);
    /// The place of `warp` in the file, the warps before it (in slot
    /// order) having been given theirs; advances `running`.
    fn order(running: &mut Self::Running, warp: &WarpTrace, prep: Self::Prep) -> Self::Order;
    /// An encoder that writes what this writer would for the same warps
    /// and orders.
    fn fork(&self) -> Self::Fork;
    /// Writes a chunk's bytes after what was written so far.
    fn write_chunk(&mut self, chunk: &Encoded) -> io::Result<()>;
}

/// Encodes warps into a buffer of its own, on a worker.
pub(crate) trait ChunkEncoder: Send {
    /// As [`ChunkSink::Order`].
    type Order;
    /// As [`ChunkSink::Prep`].
    type Prep;
    /// What [`ChunkSink::order`] needs of `warp` that is costly to find.
    fn prepare(&self, warp: &WarpTrace) -> Self::Prep;
    /// Encodes `warp` at its place `order`.
    fn encode(&mut self, warp: &WarpTrace, order: Self::Order) -> io::Result<()>;
    /// The chunk encoded since the last call; `spare` becomes the next
    /// chunk's buffer.
    fn take(&mut self, spare: Vec<u8>) -> Encoded;
}

/// No trace: the pass only fills the summary.
pub(crate) struct NoTrace;

impl ChunkSink for NoTrace {
    type Running = ();
    type Order = ();
    type Prep = ();
    type Fork = NoTrace;
    fn warp(&mut self, _: &WarpTrace) -> io::Result<()> {
        Ok(())
    }
    fn take_running(&mut self) {}
    fn put_running(&mut self, (): ()) {}
    fn order(_: &mut (), _: &WarpTrace, (): ()) {}
    fn fork(&self) -> NoTrace {
        NoTrace
    }
    fn write_chunk(&mut self, _: &Encoded) -> io::Result<()> {
        Ok(())
    }
}

impl ChunkEncoder for NoTrace {
    type Order = ();
    type Prep = ();
    fn prepare(&self, _: &WarpTrace) {}
    fn encode(&mut self, _: &WarpTrace, (): ()) -> io::Result<()> {
        Ok(())
    }
    fn take(&mut self, spare: Vec<u8>) -> Encoded {
        Encoded {
            bytes: spare,
            len: 0,
            events: 0,
            track_events: 0,
        }
    }
}

/// Decodes every warp of `dec`, adds it (and its ring fill) to `pass` and
/// writes what the filter keeps to `sink`, on `threads` threads (0: one
/// per core), calling `progress` with each warp's decoded events after it,
/// in slot order.
pub(crate) fn run_warps<'d, S: ChunkSink>(
    dec: &'d Decoder<'d>,
    threads: usize,
    pass: &mut FilteredPass<'d>,
    sink: &mut S,
    progress: &mut dyn FnMut(u64),
) -> io::Result<()> {
    let threads = thread_count(threads);
    let total: u64 = (0..dec.warp_count())
        .map(|i| u64::from(dec.kept_entries(i)))
        .sum();
    if threads <= 1 || dec.warp_count() < 2 || total < PARALLEL_FROM_ENTRIES {
        for (i, w) in dec.warps().enumerate() {
            pass.part.add_fill(dec, i);
            if let Some(kept) = pass.add_warp(&w) {
                sink.warp(&kept)?;
            }
            progress(w.events.len() as u64);
        }
        return Ok(());
    }
    let chunks = chunks(dec, threads);
    let ahead = ahead(total, threads);
    // A thread beyond the chunks that may be in flight would only wait,
    // holding its fork's buffers.
    let threads = threads.min(chunks.len()).min(ahead);
    let template = pass.part.part();
    let job = Job {
        dec,
        filter: pass.filter.as_ref(),
        template: &template,
        chunks: &chunks,
        ahead,
    };
    let shared = Shared::new(sink.take_running());
    let (tx, rx) = mpsc::channel();
    let result = std::thread::scope(|scope| {
        for _ in 1..threads {
            let (tx, fork, shared, job) = (tx.clone(), sink.fork(), &shared, &job);
            scope.spawn(move || work::<S>(shared, job, fork, tx));
        }
        drop(tx);
        let mut fork = sink.fork();
        let mut writing = Writing {
            part: &mut pass.part,
            sink,
            progress,
            next: 0,
        };
        let r = write_in_order(&shared, &job, &mut fork, &rx, &mut writing);
        if r.is_err() {
            shared.stop();
        }
        r
    });
    let running = shared
        .state
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .running;
    sink.put_running(running);
    result
}

/// Consecutive warps of `dec` in chunks of about the same number of ring
/// entries: at most [`CHUNK_ENTRIES`], and at least
/// [`CHUNKS_PER_THREAD`] chunks per thread when there are enough warps.
fn chunks(dec: &Decoder<'_>, threads: usize) -> Vec<Range<usize>> {
    let n = dec.warp_count();
    let entries: Vec<u64> = (0..n).map(|i| u64::from(dec.kept_entries(i))).collect();
    let total: u64 = entries.iter().sum();
    let target = (total / (threads as u64 * CHUNKS_PER_THREAD)).clamp(1, CHUNK_ENTRIES);
    let mut out = Vec::new();
    let (mut start, mut acc) = (0, 0);
    for (i, &e) in entries.iter().enumerate() {
        acc += e.max(1);
        if acc >= target {
            out.push(start..i + 1);
            (start, acc) = (i + 1, 0);
        }
    }
    if start < n {
        out.push(start..n);
    }
    out
}

/// What every worker reads.
struct Job<'j, 'd> {
    dec: &'d Decoder<'d>,
    filter: Option<&'j LaunchFilter>,
    /// An empty part, to copy.
    template: &'j PassPart<'d>,
    chunks: &'j [Range<usize>],
    /// Chunks taken at most beyond those written.
    ahead: usize,
}

/// A chunk done by a worker.
struct ChunkDone<'d> {
    index: usize,
    part: PassPart<'d>,
    /// Events decoded, per warp.
    events: Vec<u64>,
    encoded: io::Result<Encoded>,
}

/// Where the workers and the writing meet.
struct State<R> {
    /// Chunks taken by workers.
    claimed: usize,
    /// Chunks whose warps have their order.
    ordered: usize,
    /// Chunks written.
    written: usize,
    /// Set when the export fails: workers stop.
    stop: bool,
    running: R,
    /// Buffers written, for the next chunks.
    spare: Vec<Vec<u8>>,
}

struct Shared<R> {
    state: Mutex<State<R>>,
    changed: Condvar,
}

impl<R> Shared<R> {
    fn new(running: R) -> Self {
        Shared {
            state: Mutex::new(State {
                claimed: 0,
                ordered: 0,
                written: 0,
                stop: false,
                running,
                spare: Vec::new(),
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits while `busy` holds (and nobody stopped).
    fn wait_while<'a>(
        &self,
        mut g: MutexGuard<'a, State<R>>,
        mut busy: impl FnMut(&State<R>) -> bool,
    ) -> MutexGuard<'a, State<R>> {
        while !g.stop && busy(&g) {
            g = self.changed.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
        g
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// Stops every worker when the one holding it panics.
struct StopOnPanic<'a, R>(&'a Shared<R>);

impl<R> Drop for StopOnPanic<'_, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// A worker: takes chunks until none is left (or the export stopped).
fn work<'d, S: ChunkSink>(
    shared: &Shared<S::Running>,
    job: &Job<'_, 'd>,
    mut fork: S::Fork,
    tx: mpsc::Sender<ChunkDone<'d>>,
) {
    let _guard = StopOnPanic(shared);
    let n = job.chunks.len();
    loop {
        let index = {
            let mut s = shared.wait_while(shared.lock(), |s| {
                s.claimed < n && s.claimed >= s.written + job.ahead
            });
            if s.stop || s.claimed >= n {
                return;
            }
            s.claimed += 1;
            s.claimed - 1
        };
        let Some(done) = do_chunk::<S>(shared, job, &mut fork, index) else {
            return;
        };
        if tx.send(done).is_err() {
            return;
        }
    }
}

/// Chunk `index`: its warps decoded, added to a part, placed in the file
/// (after the chunks before it) and encoded. `None` when the export
/// stopped meanwhile.
fn do_chunk<'d, S: ChunkSink>(
    shared: &Shared<S::Running>,
    job: &Job<'_, 'd>,
    fork: &mut S::Fork,
    index: usize,
) -> Option<ChunkDone<'d>> {
    let warps: Vec<WarpTrace> = job.chunks[index]
        .clone()
        .filter_map(|i| job.dec.warp(i))
        .collect();
    let mut part = job.template.part();
    for i in job.chunks[index].clone() {
        part.add_fill(job.dec, i);
    }
    let kept: Vec<Cow<'_, WarpTrace>> = warps
        .iter()
        .filter_map(|w| part.add_warp(job.filter, w))
        .collect();
    let preps: Vec<S::Prep> = kept.iter().map(|w| fork.prepare(w)).collect();
    let (orders, spare) = {
        let mut s = shared.wait_while(shared.lock(), |s| s.ordered != index);
        if s.stop {
            return None;
        }
        let orders: Vec<S::Order> = kept
            .iter()
            .zip(preps)
            .map(|(w, p)| S::order(&mut s.running, w, p))
            .collect();
        s.ordered += 1;
        shared.changed.notify_all();
        (orders, s.spare.pop().unwrap_or_default())
    };
    let encoded = kept
        .iter()
        .zip(orders)
        .try_for_each(|(w, o)| fork.encode(w, o))
        .map(|()| fork.take(spare));
    let events = warps.iter().map(|w| w.events.len() as u64).collect();
    Some(ChunkDone {
        index,
        part,
        events,
        encoded,
    })
}

/// The calling thread's side: what it writes to and reports.
struct Writing<'w, 'd, S> {
    part: &'w mut PassPart<'d>,
    sink: &'w mut S,
    progress: &'w mut dyn FnMut(u64),
    /// The next chunk to write.
    next: usize,
}

impl<S: ChunkSink> Writing<'_, '_, S> {
    /// Writes chunk `done` (the next in order): its buffer, its part, its
    /// warps' progress; the buffer goes back for reuse.
    fn write(&mut self, shared: &Shared<S::Running>, done: ChunkDone<'_>) -> io::Result<()> {
        let encoded = done.encoded?;
        self.sink.write_chunk(&encoded)?;
        self.part.merge(done.part);
        for e in done.events {
            (self.progress)(e);
        }
        self.next += 1;
        let mut s = shared.lock();
        s.written = self.next;
        s.spare.push(encoded.bytes);
        shared.changed.notify_all();
        Ok(())
    }
}

/// The calling thread: writes each chunk in order as soon as it is done,
/// and takes chunks itself while the next one to write is not.
fn write_in_order<'d, S: ChunkSink>(
    shared: &Shared<S::Running>,
    job: &Job<'_, 'd>,
    fork: &mut S::Fork,
    rx: &mpsc::Receiver<ChunkDone<'d>>,
    w: &mut Writing<'_, 'd, S>,
) -> io::Result<()> {
    let n = job.chunks.len();
    let stopped = || io::Error::other("an export thread stopped");
    let mut pending = BTreeMap::new();
    while w.next < n {
        pending.extend(rx.try_iter().map(|d| (d.index, d)));
        if let Some(done) = pending.remove(&w.next) {
            w.write(shared, done)?;
            continue;
        }
        let claimed = {
            let mut s = shared.lock();
            let free = !s.stop && s.claimed < n && s.claimed < s.written + job.ahead;
            s.claimed += usize::from(free);
            free.then_some(s.claimed - 1)
        };
        match claimed {
            Some(index) => {
                let done = do_chunk::<S>(shared, job, fork, index).ok_or_else(stopped)?;
                pending.insert(index, done);
            }
            None => {
                let done = rx.recv().map_err(|_| stopped())?;
                pending.insert(done.index, done);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_in_flight_are_bounded_by_a_share_of_the_entries() {
        // 11 M entries (10 M events and their anchors) on 16 threads: 10
        // chunks of 16 Ki, not 48.
        assert_eq!(ahead(11_000_000, 16), 10);
        // 110 M entries: three a thread.
        assert_eq!(ahead(110_000_000, 16), 48);
        assert_eq!(ahead(110_000_000, 2), 6);
        // A small launch: never fewer than 2.
        assert_eq!(ahead(5_000, 2), 2);
        assert_eq!(ahead(5_000, 1), 2);
    }
}
