//! Per-region tables indexed by region id, sized by one rule for every
//! output (the Chrome writer's cached event text, the summary's durations).

use std::collections::HashMap;

use crate::format::regions::Regions;

/// Ids below this index directly even when the region table is smaller.
const MIN_DIRECT: usize = 64;

/// Maps region ids to indices into per-region tables.
///
/// The table's ids (every id up to its highest, and at least the first 64)
/// are their own index. Any other id (only a corrupt buffer carries one)
/// gets the next index after those, in the order seen, so a stray id like
/// 0xffff adds one entry instead of sizing the tables to 65,536.
#[derive(Clone, Debug)]
pub struct RegionSlots {
    direct: usize,
    others: HashMap<u16, usize>,
}

impl RegionSlots {
    /// The indexing for `regions`.
    pub fn new(regions: &Regions) -> Self {
        RegionSlots {
            direct: regions
                .iter()
                .last()
                .map_or(0, |(id, _)| usize::from(id) + 1)
                .max(MIN_DIRECT),
            others: HashMap::new(),
        }
    }

    /// The index of `region`.
    #[inline]
    pub fn index(&mut self, region: u16) -> usize {
        let i = usize::from(region);
        if i < self.direct {
            i
        } else {
            self.other_index(region)
        }
    }

    #[cold]
    #[inline(never)]
    fn other_index(&mut self, region: u16) -> usize {
        let next = self.direct + self.others.len();
        *self.others.entry(region).or_insert(next)
    }

    /// How many indices are region ids of their own (those below).
    pub fn direct_len(&self) -> usize {
        self.direct
    }

    /// Whether `region` is its own index.
    #[inline]
    pub fn is_direct(&self, region: u16) -> bool {
        usize::from(region) < self.direct
    }

    /// `(region id, index)` of every index below `len`, by region id.
    pub fn by_id(&self, len: usize) -> impl Iterator<Item = (u16, usize)> {
        let direct = (0..len.min(self.direct)).map(|i| (i as u16, i));
        let mut others: Vec<(u16, usize)> = self
            .others
            .iter()
            .map(|(&id, &i)| (id, i))
            .filter(|&(_, i)| i < len)
            .collect();
        others.sort_unstable();
        direct.chain(others)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_ids_index_directly_and_stray_ids_follow_in_order_seen() {
        let mut s = RegionSlots::new(&Regions::from_table(&[(1, "a"), (100, "b")]));
        assert_eq!(s.index(100), 100);
        assert_eq!(s.index(0xffff), 101);
        assert_eq!(s.index(300), 102);
        assert_eq!(s.index(0xffff), 101);
        let ids: Vec<(u16, usize)> = s.by_id(103).filter(|&(id, _)| id >= 100).collect();
        assert_eq!(ids, [(100, 100), (300, 102), (0xffff, 101)]);
        let mut small = RegionSlots::new(&Regions::new());
        assert_eq!(small.index(63), 63);
        assert_eq!(small.index(64), 64);
        assert_eq!(small.index(1000), 65);
    }
}
