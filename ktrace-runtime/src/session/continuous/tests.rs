use super::*;
use crate::format::layout::{SlotMeta, FLUSH_MAGIC};
use crate::format::site::site_bytes;

fn shape(c: &SiteConfig) -> LaunchShape {
    let (g, b) = (c.grid, c.block);
    LaunchShape::new([g.0, g.1, g.2], [b.0, b.1, b.2], c.cap, &c.warps, c.blocks).unwrap()
}

fn flushed(count: u32) -> SlotMeta {
    SlotMeta {
        count,
        flush_magic: FLUSH_MAGIC,
        ..SlotMeta::default()
    }
}

#[test]
fn a_site_whose_warps_record_little_is_told_a_smaller_cap() {
    let mut f = SiteFill {
        cap: 256,
        ..SiteFill::default()
    };
    assert_eq!(f.smaller_cap(), None, "nothing drained");
    f.add(&flushed(7));
    f.add(&SlotMeta {
        flush_magic: 0,
        ..flushed(200)
    }); // never flushed: its count is not known
    assert_eq!((f.fullest, f.overflowed), (7, 0));
    assert_eq!(f.smaller_cap(), Some(32));
    let mut g = SiteFill {
        cap: 256,
        ..SiteFill::default()
    };
    g.add(&flushed(100));
    f.merge(&g);
    assert_eq!(f.smaller_cap(), Some(128));
    // Not half the cap: nothing to say.
    f.add(&flushed(129));
    assert_eq!(f.smaller_cap(), None);
    // A warp over the cap lost entries: a smaller cap is no advice.
    f.add(&flushed(300));
    assert_eq!((f.fullest, f.overflowed), (300, 1));
    assert_eq!(f.smaller_cap(), None);
}

#[test]
fn a_ring_fits_the_arena_and_a_policy_the_site_can_have() {
    let mut c = SiteConfig::new("k", (8, 1, 1), (128, 1, 1));
    c.cap = 32;
    let s = shape(&c);
    let (slabs, bytes) = site_ring(&c, &s, 64 << 20).unwrap();
    assert!(slabs.is_power_of_two() && slabs <= 1024);
    assert!(bytes <= 64 << 20);
    assert_eq!(bytes, site_bytes(&s, slabs).unwrap());
    // Too little arena for the two slabs a site needs at least.
    let small = site_ring(&c, &s, s.buffer_bytes().unwrap()).unwrap_err();
    assert!(small.to_string().contains("larger arena_bytes"), "{small}");
    // Launches that overlap drop new launches when the ring is full.
    c.overlapping = true;
    assert!(site_ring(&c, &s, 64 << 20).is_ok());
    c.when_full = WhenFull::KeepNewest;
    let e = site_ring(&c, &s, 64 << 20).unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
}
