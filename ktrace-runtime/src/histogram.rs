//! [`Histogram`]: a distribution of durations in fixed memory, however many
//! are added, for statistics across the launches of a long run.

/// Buckets per power of two: a bucket is about 2.2% wide.
const PER_OCTAVE: u32 = 32;
/// Powers of two covered: 1 ns to 2^40 ns (about 18 minutes) and more in
/// the last bucket.
const OCTAVES: u32 = 40;

/// Counts of values (ns) in logarithmic buckets, about 2.2% wide, plus the
/// exact count, sum, least and greatest value. 10 KiB, whatever the count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; (PER_OCTAVE * OCTAVES + 1) as usize],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

fn bucket(v: u64) -> usize {
    if v < 2 {
        return 0;
    }
    let octave = 63 - v.leading_zeros();
    // The bits below the leading one, as a fraction of the octave.
    let frac = if octave >= 5 {
        ((v >> (octave - 5)) & 31) as u32
    } else {
        ((v << (5 - octave)) & 31) as u32
    };
    ((octave * PER_OCTAVE + frac) as usize).min((PER_OCTAVE * OCTAVES) as usize)
}

/// The least value of bucket `b`.
fn bucket_floor(b: usize) -> u64 {
    let octave = b as u32 / PER_OCTAVE;
    let frac = u64::from(b as u32 % PER_OCTAVE);
    if octave >= 5 {
        (1u64 << octave) | (frac << (octave - 5))
    } else {
        (1u64 << octave) | (frac >> (5 - octave))
    }
}

impl Histogram {
    /// Adds one value.
    pub fn add(&mut self, v: u64) {
        self.buckets[bucket(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The least and greatest values added (exact), `None` when empty.
    pub fn range(&self) -> Option<(u64, u64)> {
        (self.count > 0).then_some((self.min, self.max))
    }

    /// The `q`-quantile (0 to 1), within a bucket's width (about 2.2%) and
    /// inside the exact range; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((self.count - 1) as f64 * q.clamp(0.0, 1.0)).round() as u64;
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen > rank {
                return bucket_floor(b).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_bucket_of_the_exact_ones() {
        let mut h = Histogram::default();
        let mut exact: Vec<u64> = (0..10_000u64)
            .map(|i| 1_000 + (i * 7919) % 50_000)
            .collect();
        for &v in &exact {
            h.add(v);
        }
        exact.sort_unstable();
        for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
            let e = exact[((exact.len() - 1) as f64 * q).round() as usize] as f64;
            let got = h.quantile(q) as f64;
            assert!((got - e).abs() <= e * 0.035, "q {q}: {got} against {e}");
        }
        assert_eq!(h.range(), Some((exact[0], exact[9_999])));
        assert_eq!(h.count(), 10_000);
    }

    #[test]
    fn buckets_are_ordered_and_floors_round_trip() {
        let mut last = 0;
        for v in (1..5000u64).chain([1 << 30, u64::MAX]) {
            let b = bucket(v);
            assert!(b >= last, "{v}");
            last = b;
            assert!(
                bucket_floor(b) <= v || b == (PER_OCTAVE * OCTAVES) as usize,
                "{v}"
            );
        }
        assert_eq!(Histogram::default().quantile(0.5), 0);
    }
}
