//! How much a site's consecutive launches ran at the same time: what a
//! kernel launched after itself with programmatic dependent launch is
//! for, read from the launches' GPU spans.

use super::LaunchInfo;

/// The consecutive launches of one site (epochs `n` and `n + 1`, both
/// timed) and how many of them overlapped.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteOverlap<'a> {
    /// The site.
    pub site: u32,
    /// Its kernel's name.
    pub kernel: &'a str,
    /// Pairs of consecutive launches both in the selection and timed.
    pub pairs: usize,
    /// Of those, the pairs whose later launch began before the earlier one
    /// ended.
    pub overlapped: usize,
    /// The median time by which they overlapped, ns (0 when none did).
    pub median_ns: u64,
}

/// Per site of `infos`, in the order of its first launch: its consecutive
/// launches ([`SiteOverlap`]). Launches that came from no site are left
/// out, and so is a site with no consecutive pair.
pub fn site_overlaps<'a>(infos: &[LaunchInfo<'a>]) -> Vec<SiteOverlap<'a>> {
    let mut order: Vec<(u32, &'a str)> = Vec::new();
    let mut spans: Vec<Vec<(u32, u64, u64)>> = Vec::new();
    for i in infos {
        let (Some(o), Some(g)) = (i.origin, i.gpu) else {
            continue;
        };
        let k = match order.iter().position(|&(s, _)| s == o.site) {
            Some(k) => k,
            None => {
                order.push((o.site, i.kernel));
                spans.push(Vec::new());
                order.len() - 1
            }
        };
        spans[k].push((o.epoch, g.begin_ns, g.end_ns));
    }
    order
        .into_iter()
        .zip(spans)
        .filter_map(|((site, kernel), mut s)| {
            s.sort_unstable();
            let mut by: Vec<u64> = Vec::new();
            let mut pairs = 0;
            for w in s.windows(2) {
                let ((e0, _, end0), (e1, begin1, _)) = (w[0], w[1]);
                if e1 != e0.wrapping_add(1) {
                    continue;
                }
                pairs += 1;
                if begin1 < end0 {
                    by.push(end0 - begin1);
                }
            }
            by.sort_unstable();
            (pairs > 0).then(|| SiteOverlap {
                site,
                kernel,
                pairs,
                overlapped: by.len(),
                median_ns: by.get(by.len() / 2).copied().unwrap_or(0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::capture::LaunchOrigin;
    use crate::format::site::GpuSpan;

    fn launch(site: u32, epoch: u32, begin_ns: u64, end_ns: u64) -> LaunchInfo<'static> {
        LaunchInfo {
            launch: epoch,
            kernel: if site == 0 { "a" } else { "b" },
            origin: Some(LaunchOrigin {
                site,
                epoch,
                grid_id: 1,
                step: None,
            }),
            warps: 4,
            flushed: 4,
            gpu: Some(GpuSpan { begin_ns, end_ns }),
            host: None,
        }
    }

    #[test]
    fn consecutive_launches_of_a_site_that_ran_together_are_counted() {
        let infos = [
            launch(0, 0, 0, 100),
            launch(1, 0, 0, 50),
            launch(0, 1, 60, 160),  // 40 ns before 0 ended
            launch(0, 2, 150, 250), // 10 ns
            launch(0, 4, 200, 300), // 3 is missing: no pair
            launch(0, 5, 400, 500), // after 4 ended
            launch(1, 1, 50, 80),   // site 1: began as 0 ended
        ];
        let o = site_overlaps(&infos);
        assert_eq!(
            o,
            vec![
                SiteOverlap {
                    site: 0,
                    kernel: "a",
                    pairs: 3,
                    overlapped: 2,
                    median_ns: 40,
                },
                SiteOverlap {
                    site: 1,
                    kernel: "b",
                    pairs: 1,
                    overlapped: 0,
                    median_ns: 0,
                },
            ]
        );
        // A launch traced alone, or with no span, is in no pair.
        let mut alone = launch(0, 0, 0, 100);
        alone.origin = None;
        let mut untimed = launch(0, 1, 60, 160);
        untimed.gpu = None;
        assert!(site_overlaps(&[alone, untimed]).is_empty());
    }
}
