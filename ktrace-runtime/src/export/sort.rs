//! Sorting a region's span durations for the summary's exact percentiles:
//! an LSD radix sort (11-bit digits of `x - min`, as many passes as the
//! range needs), several times faster than a comparison sort on millions
//! of durations, on one thread or several. Sorted values are sorted values:
//! every way gives the same vector.

/// Bits of one digit.
const BITS: u32 = 11;
/// Buckets of one digit.
const BUCKETS: usize = 1 << BITS;
/// Below this many values a comparison sort is as fast.
const RADIX_FROM: usize = 1 << 14;
/// Values per thread at least for the parallel sort to pay for its threads.
const PER_THREAD: usize = 1 << 18;

/// Sorts `d` ascending on one thread. The radix sort needs a second buffer
/// as long as `d` while it runs.
pub(crate) fn sort_durations(d: &mut Vec<u64>) {
    sort_durations_on(d, 1, &mut Vec::new());
}

/// Sorts `d` ascending on up to `threads` threads (1: this one): each
/// thread counts the digits of its part of `d`, then puts its part's
/// values in their places, which a digit's count before it (of the
/// buckets below, and of the threads before in its bucket) gives. The
/// radix sort's second buffer is `scratch`, grown to `d`'s length if
/// shorter, and left for the next sort (fresh pages cost a fault each).
pub(crate) fn sort_durations_on(d: &mut Vec<u64>, threads: usize, scratch: &mut Vec<u64>) {
    if d.len() < RADIX_FROM {
        d.sort_unstable();
        return;
    }
    let threads = threads.clamp(1, (d.len() / PER_THREAD).max(1));
    let part = d.len().div_ceil(threads);
    let (min, max) = on_parts(d, part, |p| {
        p.iter()
            .fold((u64::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)))
    })
    .into_iter()
    .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    let passes = (64 - (max - min).leading_zeros()).div_ceil(BITS);
    if passes == 0 {
        return;
    }
    let mut from = std::mem::take(d);
    let mut to = std::mem::take(scratch);
    to.resize(from.len(), 0);
    if threads == 1 {
        // The counts of every pass in one read: a pass moves the values
        // but keeps how many have each digit.
        let counts = digit_counts(&from, min, 0..passes);
        for (pass, c) in counts.iter().enumerate() {
            let mut places = places(&mut to, std::slice::from_ref(c)).pop();
            if let Some(places) = places.as_mut().filter(|_| !c.contains(&from.len())) {
                scatter(&from, min, pass as u32 * BITS, places);
                std::mem::swap(&mut from, &mut to);
            }
        }
        (*d, *scratch) = (from, to);
        return;
    }
    for pass in 0..passes {
        // Per part, per bucket: how many of the part's values (as the last
        // pass left them) have that digit.
        let counts: Vec<[usize; BUCKETS]> = on_parts(&from, part, |p| {
            digit_counts(p, min, pass..pass + 1).swap_remove(0)
        });
        // Skip a pass whose digit is the same everywhere.
        let same = (0..BUCKETS).any(|b| counts.iter().map(|c| c[b]).sum::<usize>() == from.len());
        if same {
            continue;
        }
        let places = places(&mut to, &counts);
        std::thread::scope(|s| {
            for (p, mut places) in from.chunks(part).zip(places) {
                s.spawn(move || scatter(p, min, pass * BITS, &mut places));
            }
        });
        std::mem::swap(&mut from, &mut to);
    }
    (*d, *scratch) = (from, to);
}

/// `f` of each part of `d` (`part` values each, the last shorter), on a
/// thread each when there is more than one.
fn on_parts<T: Send>(d: &[u64], part: usize, f: impl Fn(&[u64]) -> T + Sync) -> Vec<T> {
    let parts: Vec<&[u64]> = d.chunks(part).collect();
    if parts.len() == 1 {
        return vec![f(parts[0])];
    }
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = parts.iter().map(|p| s.spawn(move || f(p))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a sorting thread panicked"))
            .collect()
    })
}

/// Per pass of `passes`, per bucket: the values of `p` whose digit of
/// `x - min` in that pass is that bucket.
fn digit_counts(p: &[u64], min: u64, passes: std::ops::Range<u32>) -> Vec<[usize; BUCKETS]> {
    let mut counts = vec![[0usize; BUCKETS]; passes.len()];
    for &x in p {
        let v = x - min;
        for (pass, c) in passes.clone().zip(counts.iter_mut()) {
            c[((v >> (pass * BITS)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    counts
}

/// `to` cut into the places of one pass: per part (its digits' counts in
/// `counts`), per bucket, the run of `to` where that part's values with
/// that digit go (bucket by bucket, and within a bucket part by part, so
/// the sort is stable).
fn places<'t>(to: &'t mut [u64], counts: &[[usize; BUCKETS]]) -> Vec<Vec<&'t mut [u64]>> {
    let mut out: Vec<Vec<&mut [u64]>> =
        counts.iter().map(|_| Vec::with_capacity(BUCKETS)).collect();
    let mut rest = to;
    for b in 0..BUCKETS {
        for (k, c) in counts.iter().enumerate() {
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(c[b]);
            out[k].push(run);
            rest = tail;
        }
    }
    out
}

/// Puts each value of `p` at the start of the place of its digit, which
/// then starts after it.
fn scatter(p: &[u64], min: u64, shift: u32, places: &mut [&mut [u64]]) {
    for &x in p {
        let b = (((x - min) >> shift) as usize) & (BUCKETS - 1);
        let place = std::mem::take(&mut places[b]);
        let (first, rest) = place
            .split_first_mut()
            .expect("a place for every value counted");
        *first = x;
        places[b] = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sorts_on_any_number_of_threads_match_sort_unstable() {
        let mut next = crate::synth::xorshift64(0x9e37_79b9_7f4a_7c15);
        // One scratch for every sort, as the summary's finish keeps it.
        let mut scratch = Vec::new();
        for (n, bits) in [
            (20_000, 20),
            (70_000, 36),
            (40_000, 64),
            (30_000, 3),
            (17, 12),
            (600_000, 22),
            (1_100_000, 40),
        ] {
            let d: Vec<u64> = (0..n)
                .map(|_| 1_000 + (next() >> (64 - bits)))
                .chain([u64::MAX >> (64 - bits)])
                .collect();
            let mut sorted = d.clone();
            sorted.sort_unstable();
            for threads in [1, 2, 3, 7] {
                let mut radix = d.clone();
                sort_durations_on(&mut radix, threads, &mut scratch);
                assert_eq!(
                    radix, sorted,
                    "{n} values of {bits} bits, {threads} threads"
                );
            }
        }
        let mut same = vec![5u64; 300_000];
        sort_durations_on(&mut same, 2, &mut scratch);
        assert!(same.iter().all(|&x| x == 5));
    }
}
