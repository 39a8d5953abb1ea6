use super::*;
use crate::format::layout::{FLUSH_MAGIC, OPEN_MAGIC};
use crate::format::shape::{BlockSampling, WarpSampling};

/// Runs one launch of every slot at `s`, every warp opening before any
/// flushes, in the order `order` gives (the order does not matter to
/// the site); each recording warp flushes. Returns the launch and the
/// slab its warps wrote.
fn launch_in(s: &mut SiteModel, order: &[usize]) -> (u32, Option<u32>) {
    let opens: Vec<(u32, Option<u32>)> = order.iter().map(|&w| s.open(w)).collect();
    for o in &opens {
        assert_eq!(o, &opens[0], "the warps of a launch agree");
        if o.1.is_some() {
            s.flush();
        }
    }
    opens[0]
}

fn launch(s: &mut SiteModel) -> (u32, Option<u32>) {
    let order: Vec<usize> = (0..s.counters.len()).collect();
    launch_in(s, &order)
}

/// The kept launches complete after two reads that agree.
fn settled(s: &SiteModel) -> u32 {
    complete_kept(Some(&s.read()), &s.read())
}

#[test]
fn tickets_name_the_launch_and_every_nth_keeps_those_in_order() {
    let mut s = SiteModel::new(3, 4, Keep::Every(3));
    let mut kept = Vec::new();
    for i in 0..30 {
        // Slot 0 opens first, last or in the middle.
        let order = [[0, 1, 2], [2, 1, 0], [1, 0, 2]][i as usize % 3];
        let (n, slab) = launch_in(&mut s, &order);
        assert_eq!(n, i);
        if let Some(slab) = slab {
            kept.push((n, slab));
        }
        // The host drains everything between launches.
        s.site.drained = settled(&s);
    }
    let launches: Vec<u32> = kept.iter().map(|k| k.0).collect();
    assert_eq!(launches, (0..30).step_by(3).collect::<Vec<_>>());
    let slabs: Vec<u32> = kept.iter().map(|k| k.1).collect();
    assert_eq!(slabs, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    assert_eq!(
        (s.read().launches, s.site.drained, s.site.dropped),
        (30, 10, 0)
    );
    assert_eq!(s.counters, [30, 30, 30]);
}

#[test]
fn a_full_ring_drops_new_launches_and_counts_them() {
    let mut s = SiteModel::new(2, 4, Keep::All);
    let slabs: Vec<Option<u32>> = (0..10).map(|_| launch(&mut s).1).collect();
    assert_eq!(&slabs[..4], [Some(0), Some(1), Some(2), Some(3)]);
    assert!(slabs[4..].iter().all(Option::is_none));
    // Six launches of two warps each found their slab waiting.
    assert_eq!(s.site.dropped, 12);
    let complete = settled(&s);
    assert_eq!(complete, 10);
    let plan = drain_plan(s.site.slab_count, s.site.drained, complete, 64, |_| true).unwrap();
    assert_eq!(
        plan,
        DrainPlan {
            copy: vec![0, 1, 2, 3],
            dropped: 6,
            drained: 10
        }
    );
    s.site.drained = plan.drained;
    assert_eq!(launch(&mut s), (10, Some(2)));
}

#[test]
fn a_round_copies_at_most_what_its_memory_holds() {
    let all = |_| true;
    let plan = drain_plan(8, 6, 12, 4, all).unwrap();
    assert_eq!(
        plan,
        DrainPlan {
            copy: vec![6, 7, 0, 1],
            dropped: 0,
            drained: 10
        }
    );
    // Nothing waiting, or a count behind `drained` (a stale read).
    assert_eq!(drain_plan(8, 6, 6, 4, all).unwrap().copy, Vec::<u32>::new());
    assert_eq!(drain_plan(8, 6, 5, 4, all).unwrap().drained, 6);
    assert!(drain_plan(6, 0, 3, 4, all).is_err());
}

#[test]
fn far_behind_the_device_a_round_skips_what_was_dropped() {
    // Launches 0-3 fill a ring of 4; everything after was dropped while
    // the drain copied one slab a round.
    let holds = [true, true, true, true];
    let plan = drain_plan(4, 0, 100, 1, |s| holds[s as usize]).unwrap();
    assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![0], 0, 1));
    // Slabs 0-2 drained since, still holding those launches: slab 3,
    // then the ring is through and launches 4..200 were dropped.
    let holds = [false, false, false, true];
    let plan = drain_plan(4, 3, 200, 1, |s| holds[s as usize]).unwrap();
    assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![3], 196, 200));
    // Two slabs still hold their drained launches: dropped, skipped.
    let holds = [false, true, false, true];
    let plan = drain_plan(4, 8, 12, 1, |s| holds[s as usize]).unwrap();
    assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![1], 2, 11));
    let plan = drain_plan(4, 11, 12, 8, |s| holds[s as usize]).unwrap();
    assert_eq!((plan.copy, plan.dropped, plan.drained), (vec![3], 0, 12));
}

#[test]
fn a_ring_is_a_power_of_two_that_fits() {
    assert_eq!(ring_slabs(0, 1 << 30, 256, 17 << 10), Ok(1024));
    // 33.3 MB slabs in 2 GiB: 30 fit in half of it, so 16.
    assert_eq!(ring_slabs(0, 2 << 30, 256, 34_930_688), Ok(16));
    assert_eq!(ring_slabs(0, 100, 256, 1000), Ok(0));
    assert_eq!(ring_slabs(64, 0, 0, 1), Ok(64));
    assert!(ring_slabs(48, 1 << 30, 256, 1000).is_err());
}

#[test]
fn a_window_keeps_its_launches() {
    let w = Keep::Window {
        from: 5,
        until: 9,
        every: 2,
    };
    let kept: Vec<u32> = (0..20).filter(|&e| w.keeps(e)).collect();
    assert_eq!(kept, [5, 7]);
    assert_eq!(kept_before(&w.rule(), 5), 0);
    assert_eq!(kept_before(&w.rule(), 6), 1);
    assert_eq!(kept_before(&w.rule(), 20), 2);
    let mut s = SiteModel::new(1, 4, w);
    let recorded: Vec<(u32, u32)> = (0..20)
        .filter_map(|_| {
            let (n, slab) = launch(&mut s);
            slab.map(|k| (n, k))
        })
        .collect();
    assert_eq!(recorded, [(5, 0), (7, 1)]);
    assert_eq!(settled(&s), 2);
}

#[test]
fn triggers_keep_the_launches_after_the_next_one_opens() {
    let mut s = SiteModel::new(2, 8, Keep::Triggered);
    assert_eq!(launch(&mut s), (0, None));
    // Asked while launch 0 ran: launch 1's slot 0 grants launches 2
    // and 3.
    s.site.triggers_asked = 2;
    assert_eq!(launch(&mut s), (1, None));
    assert_eq!(launch(&mut s), (2, Some(0)));
    // Asked again before the window's last launch: launch 3 grants one
    // more from launch 4.
    s.site.triggers_asked = 3;
    assert_eq!(launch(&mut s), (3, Some(1)));
    assert_eq!(launch(&mut s), (4, Some(2)));
    assert_eq!(launch(&mut s), (5, None));
    s.site.triggers_asked = 4;
    assert_eq!(launch(&mut s), (6, None));
    assert_eq!(launch(&mut s), (7, Some(3)));
    assert_eq!(launch(&mut s), (8, None));
    assert_eq!(settled(&s), 4);
    assert_eq!(s.site.dropped, 0);
}

#[test]
fn a_request_during_a_long_window_extends_it() {
    let mut s = SiteModel::new(1, 8, Keep::Triggered);
    s.site.triggers_asked = 3;
    assert_eq!(launch(&mut s), (0, None));
    assert_eq!(launch(&mut s), (1, Some(0)));
    // Asked while launches 2 and 3 are still to come: the window grows.
    s.site.triggers_asked = 4;
    let kept: Vec<Option<u32>> = (0..5).map(|_| launch(&mut s).1).collect();
    assert_eq!(kept, [Some(1), Some(2), Some(3), None, None]);
}

#[test]
fn the_newest_kept_launch_completes_only_when_nothing_moves() {
    let mut s = SiteModel::new(2, 8, Keep::All);
    launch(&mut s);
    launch(&mut s);
    // Launch 2: slot 0 opened; launches 0 and 1 have ended.
    assert_eq!(s.open(0), (2, Some(2)));
    assert_eq!((s.site.done_launch, s.site.done_kept), (2, 2));
    assert_eq!(settled(&s), 2);
    // The other warp opens and both flush: all three are complete, but
    // only once two reads agree.
    s.open(1);
    s.flush();
    s.flush();
    let before = s.read();
    assert_eq!(complete_kept(None, &s.read()), 2);
    assert_eq!(complete_kept(Some(&before), &s.read()), 3);
    // Slot 1 opened launch 3 before slot 0: launch 3 is not complete.
    s.open(1);
    assert_eq!(settled(&s), 3);
    // A launch that keeps nothing completes nothing new.
    let mut t = SiteModel::new(
        1,
        8,
        Keep::Window {
            from: 0,
            until: 1,
            every: 1,
        },
    );
    launch(&mut t);
    launch(&mut t);
    assert_eq!(settled(&t), 1);
}

#[test]
fn a_held_window_keeps_the_launches_between_its_open_and_its_close() {
    // The host opens the window before launch 3, closes it before launch
    // 7 and opens it again before launch 9: launches 3..7 and 9..11 are
    // kept, numbered on from one window to the next, and every warp of a
    // launch agrees whether slot 0 opens first, last or in the middle.
    let mut s = SiteModel::new(3, 16, Keep::Steps { from: 0, until: 0 });
    assert_eq!(s.site.triggered, KEEP_HELD_CLOSED);
    let mut kept = Vec::new();
    for i in 0..11u32 {
        match i {
            3 | 9 => s.site.triggered = KEEP_HELD_OPEN,
            7 => s.site.triggered = KEEP_HELD_CLOSED,
            _ => {}
        }
        let order = [[0, 1, 2], [2, 1, 0], [1, 0, 2]][i as usize % 3];
        let (n, slab) = launch_in(&mut s, &order);
        assert_eq!(n, i);
        if let Some(slab) = slab {
            kept.push((n, slab));
        }
    }
    assert_eq!(
        kept,
        [(3, 0), (4, 1), (5, 2), (6, 3), (9, 4), (10, 5)],
        "kept launches and their slabs"
    );
    // The open window ends at the site's last launch: all six complete
    // once nothing moves, and slot 0 counted them as it went.
    assert_eq!(settled(&s), 6);
    assert_eq!((s.site.done_launch, s.site.done_kept), (10, 5));
    assert_eq!(s.site.dropped, 0);
}

#[test]
fn a_held_rule_opens_at_the_launch_that_sees_it_and_closes_before_it() {
    let closed = SiteKeep {
        from: 3,
        until: 7,
        base: 2,
        every: 1,
    };
    let open = held_rule(&closed, KEEP_HELD_OPEN, 9).expect("opens");
    assert_eq!(
        open,
        SiteKeep {
            from: 9,
            until: KEEP_OPEN_END,
            base: 6,
            every: 1
        }
    );
    assert_eq!(kept_number(&open, 9), Some(6));
    // Already open: an open changes nothing; a close ends it before n.
    assert_eq!(held_rule(&open, KEEP_HELD_OPEN, 12), None);
    let shut = held_rule(&open, KEEP_HELD_CLOSED, 12).expect("closes");
    assert_eq!((shut.from, shut.until, shut.base), (9, 12, 6));
    assert_eq!(kept_before(&shut, 20), 9);
    assert_eq!(held_rule(&shut, KEEP_HELD_CLOSED, 13), None);
    // Not a held site: the rule stays.
    assert_eq!(held_rule(&closed, KEEP_TRIGGERED, 9), None);
    assert_eq!(held_rule(&closed, 0, 9), None);
}

#[test]
fn a_site_reads_back_from_its_bytes() {
    let mut s = SiteModel::new(3, 16, Keep::Every(2));
    launch(&mut s);
    let mut b = [0u8; SiteRead::BYTES];
    b[..SITE_BYTES].copy_from_slice(&s.site.to_bytes());
    b[SITE_BYTES..].copy_from_slice(&s.counters[0].to_le_bytes());
    assert_eq!(SiteRead::from_bytes(&b), s.read());
    assert_eq!(site_head_bytes(3), 256);
    assert_eq!(site_head_bytes(33), 128 + 256);
}

fn shape() -> LaunchShape {
    LaunchShape::new(
        [2, 1, 1],
        [64, 1, 1],
        32,
        &WarpSampling::All,
        BlockSampling::All,
    )
    .unwrap()
}

fn put_slot(raw: &mut [u8], shape: &LaunchShape, i: usize, launch: u32, grid: u64) {
    let m = SlotMeta {
        init_globaltimer: 1000 + i as u64,
        final_globaltimer: 2000 + i as u64,
        open_magic: OPEN_MAGIC,
        flush_magic: FLUSH_MAGIC,
        block_linear: (i / 2) as u32,
        warp: (i % 2) as u16,
        launch,
        grid_id: grid,
        ..SlotMeta::default()
    };
    let at = i * shape.slot_bytes() as usize;
    raw[at..at + META_BYTES].copy_from_slice(&m.to_bytes());
}

#[test]
fn a_slab_becomes_a_launch_and_older_slots_are_cleared() {
    let s = shape();
    let mut raw = vec![0u8; s.buffer_bytes().unwrap() as usize];
    for i in 0..3 {
        put_slot(&mut raw, &s, i, 7, 42);
    }
    put_slot(&mut raw, &s, 3, 3, 40); // an older launch of the ring
                                      // Slot 0 wrote step word 6: the launch ran in host step 5.
    let (l, r) = slab_launch(raw.clone(), &s, 2, 11, "gemm", Some(3), 6).unwrap();
    let l = l.expect("a launch");
    assert_eq!(
        l.origin,
        Some(LaunchOrigin {
            site: 2,
            epoch: 7,
            grid_id: 42,
            step: Some(5),
        })
    );
    // Step word 0: the launch ran before the host's first step.
    let (before, _) = slab_launch(raw.clone(), &s, 2, 11, "gemm", Some(3), 0).unwrap();
    assert_eq!(before.unwrap().origin.unwrap().step, None);
    // Slot 0 holds an older launch: the word is not this launch's.
    let mut older = raw.clone();
    put_slot(&mut older, &s, 0, 3, 40);
    let (l0, _) = slab_launch(older, &s, 2, 11, "gemm", Some(3), 6).unwrap();
    let o = l0.unwrap().origin.unwrap();
    assert_eq!((o.epoch, o.step), (7, None));
    assert_eq!((l.shape.launch, l.kernel.as_str()), (11, "gemm"));
    assert_eq!(
        r,
        SlabReport {
            stale_slots: 1,
            extra_grids: 0
        }
    );
    let b = l.buffer().unwrap();
    assert_eq!(b.slots().filter(|s| s.meta().is_opened()).count(), 3);
    // Drained before as launch 7: a dropped launch left it as it was.
    let (none, r) = slab_launch(raw, &s, 2, 12, "gemm", Some(7), 6).unwrap();
    assert!(none.is_none());
    assert_eq!(r.stale_slots, 0);
    assert_eq!(
        gpu_span(&b),
        Some(GpuSpan {
            begin_ns: 1000,
            end_ns: 2002
        })
    );
}

#[test]
fn overlapping_launches_in_one_slab_are_reported() {
    let s = shape();
    let mut raw = vec![0u8; s.buffer_bytes().unwrap() as usize];
    put_slot(&mut raw, &s, 0, 7, 42);
    put_slot(&mut raw, &s, 1, 7, 43);
    let (_, r) = slab_launch(raw, &s, 0, 0, "k", None, 0).unwrap();
    assert_eq!(r.extra_grids, 1);
}

/// What a slab of the simulated device holds: the launch last written
/// into it, a count of writes (every open and flush of a warp writes) and
/// how many of that launch's warps have flushed.
#[derive(Clone, Copy, Default)]
struct SlabTruth {
    launch: Option<u32>,
    writes: u64,
    flushed: u32,
}

/// A tiny deterministic generator for the schedules below.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One device step of the launch in progress (`opened`, `flushed`: its
/// slots' states): a warp that has not opened opens, or one that opened
/// flushes. Returns false once the launch has ended.
fn device_step(
    s: &mut SiteModel,
    truth: &mut [SlabTruth],
    opened: &mut [Option<(u32, Option<u32>)>],
    flushed: &mut [bool],
    rng: &mut Lcg,
) -> bool {
    let warps = opened.len();
    let can: Vec<usize> = (0..warps)
        .filter(|&w| opened[w].is_none() || !flushed[w])
        .collect();
    let Some(&w) = can.get(rng.below(can.len().max(1) as u64) as usize) else {
        return false;
    };
    match opened[w] {
        None => {
            let (n, slab) = s.open(w);
            opened[w] = Some((n, slab));
            if let Some(k) = slab {
                let t = &mut truth[k as usize];
                if t.launch != Some(n) {
                    *t = SlabTruth {
                        launch: Some(n),
                        writes: t.writes,
                        flushed: 0,
                    };
                }
                t.writes += 1;
            }
        }
        Some((_, slab)) => {
            flushed[w] = true;
            if let Some(k) = slab {
                s.flush();
                let t = &mut truth[k as usize];
                t.writes += 1;
                t.flushed += 1;
            }
        }
    }
    true
}

/// Device steps while a round's copies are made: now and then enough for
/// a launch to write over a slab being copied.
fn steps_during_copy(tick: u64, seed: u64) -> u64 {
    (tick.wrapping_mul(2654435761) ^ seed) % 48
}

#[test]
fn keeping_the_newest_hands_over_only_intact_launches_and_counts_the_rest() {
    let (mut any_lost, mut any_caught) = (false, false);
    for seed in 0..40u64 {
        let mut rng = Lcg(seed);
        let warps = 1 + (seed % 3) as usize;
        let ring = [4u32, 8][(seed / 3 % 2) as usize];
        let keep = [Keep::All, Keep::Every(2)][(seed / 6 % 2) as usize];
        let mut s = SiteModel::new(warps as u32, ring, keep).keeping_newest();
        assert!(s.site.keeps_newest() && s.site.ring() == ring);
        let mut truth = vec![SlabTruth::default(); ring as usize];
        let launches = 120u32;
        let mut opened = vec![None; warps];
        let mut flushed = vec![false; warps];
        let (mut drained, mut last) = (0u32, None::<SiteRead>);
        let (mut handed, mut lost) = (Vec::new(), 0u32);
        // The host polls less often for some seeds: the ring overflows.
        let host_every = 2 + seed % 7;
        let mut device_done = false;
        let mut tick = 0u64;
        loop {
            tick += 1;
            // One step of the device; the next launch once one has ended.
            let mut tick_device =
                |s: &mut SiteModel, truth: &mut Vec<SlabTruth>, done: &mut bool| {
                    if !*done && !device_step(s, truth, &mut opened, &mut flushed, &mut rng) {
                        if s.read().launches == launches {
                            *done = true;
                        } else {
                            opened.iter_mut().for_each(|o| *o = None);
                            flushed.iter_mut().for_each(|f| *f = false);
                        }
                    }
                };
            if !device_done && tick % host_every != 0 {
                tick_device(&mut s, &mut truth, &mut device_done);
                continue;
            }
            // A drain round: the plan from one read.
            let now = s.read();
            let complete = complete_kept(last.as_ref(), &now);
            let plan = newest_plan(ring, drained, complete, opened_kept(&now), 3).unwrap();
            let first = drained.wrapping_add(plan.dropped);
            // The copies begin: what each slab holds then.
            let before: Vec<SlabTruth> = plan.copy.iter().map(|&k| truth[k as usize]).collect();
            // The device runs on while they are made.
            for _ in 0..steps_during_copy(tick, seed) {
                tick_device(&mut s, &mut truth, &mut device_done);
            }
            let after = s.read();
            let over = overwritten_during(first, plan.copy.len() as u32, ring, opened_kept(&after));
            for (i, (&k, b)) in plan.copy.iter().zip(&before).enumerate() {
                let intact = truth[k as usize].writes == b.writes && b.flushed == warps as u32;
                if (i as u32) < over {
                    any_caught |= !intact;
                    continue;
                }
                assert!(
                    intact,
                    "seed {seed}: kept launch {} handed over torn",
                    first + i as u32
                );
                let n = b.launch.unwrap();
                let rule = s.site.keep;
                assert_eq!(kept_number(&rule, n), Some(first + i as u32), "seed {seed}");
                handed.push(n);
            }
            lost += plan.dropped + over;
            any_lost |= plan.dropped + over > 0;
            drained = plan.drained;
            s.site.drained = drained;
            last = Some(now);
            if device_done && drained == opened_kept(&s.read()) {
                break;
            }
        }
        let kept = opened_kept(&s.read());
        assert_eq!(
            handed.len() as u32 + lost,
            kept,
            "seed {seed}: every kept launch accounted for"
        );
        assert!(
            handed.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: in order"
        );
        // The newest launches are there: at least the ring less one.
        let newest: Vec<u32> = (0..launches).filter(|&n| keep.keeps(n)).collect();
        let tail = &newest[newest.len() - (ring - 1) as usize..];
        assert_eq!(&handed[handed.len() - tail.len()..], tail, "seed {seed}");
        // The device never drops a launch of a site that keeps the newest.
        assert_eq!(s.site.dropped, 0);
    }
    assert!(
        any_lost && any_caught,
        "the schedules overflow the ring ({any_lost}) and tear a copy ({any_caught})"
    );
}

#[test]
fn a_newest_plan_skips_the_slabs_a_running_launch_may_write() {
    // 8 slabs, kept launches 0..20 ended, 21 opened: 14..=20 are intact
    // (21 writes over 13); 13 may be torn too (the launch after 20 may
    // have begun before slot 0 opened it, and then writes over 13).
    let p = newest_plan(8, 0, 20, 21, 64).unwrap();
    assert_eq!(p.dropped, 14);
    assert_eq!(p.copy, [6, 7, 0, 1, 2, 3]);
    assert_eq!(p.drained, 20);
    // Caught up: nothing skipped, at most `most` copied.
    let p = newest_plan(8, 18, 21, 22, 2).unwrap();
    assert_eq!((p.dropped, p.copy.clone(), p.drained), (0, vec![2, 3], 20));
    // Nothing ended: nothing to do.
    assert_eq!(newest_plan(8, 5, 5, 9, 4).unwrap().copy, Vec::<u32>::new());
    // Never skips past the launches that have ended.
    let p = newest_plan(4, 0, 3, 40, 8).unwrap();
    assert_eq!((p.dropped, p.copy.len(), p.drained), (3, 0, 3));
    // Copies of 14..17 checked after: 23 opened meanwhile writes over 15.
    assert_eq!(overwritten_during(14, 4, 8, 23), 2);
    assert_eq!(overwritten_during(14, 4, 8, 21), 0);
    assert_eq!(overwritten_during(14, 4, 8, 40), 4);
    assert!(newest_plan(6, 0, 1, 1, 1).is_err());
}

fn meta(launch: u32, init: u64, fin: u64) -> SlotMeta {
    SlotMeta {
        init_globaltimer: init,
        final_globaltimer: fin,
        open_magic: OPEN_MAGIC,
        flush_magic: FLUSH_MAGIC,
        launch,
        ..SlotMeta::default()
    }
}

#[test]
fn an_overlapping_slab_is_finished_once_every_warp_of_its_launch_has_flushed() {
    let done = |l| meta(l, 1_000, 2_000);
    assert!(slab_finished(&[done(7), done(7), done(7)]));
    // Slot 1 opened again for launch 7 and still holds the closing pair of
    // the launch before it in this slab, older than its open.
    let running = meta(7, 3_000, 2_500);
    assert!(!slab_finished(&[done(7), running, done(7)]));
    // Opened, its count stored but not yet its timers: as running.
    let no_timers = SlotMeta {
        final_globaltimer: 0,
        ..done(7)
    };
    assert!(!slab_finished(&[no_timers, done(7)]));
    // Never flushed at all.
    let unflushed = SlotMeta {
        flush_magic: 0,
        ..done(7)
    };
    assert!(!slab_finished(&[done(7), unflushed]));
    // A slot that holds an older launch (its warp dropped launch 7) is not
    // waited for; a running slot of the older launch is not either.
    assert!(slab_finished(&[done(7), done(3), meta(3, 3_000, 2_500)]));
    // The newest launch is found across the wrap of the launch counter.
    assert!(!slab_finished(&[done(u32::MAX), meta(0, 3_000, 2_500)]));
    assert!(slab_finished(&[meta(u32::MAX, 3_000, 2_500), done(0)]));
    // No slot opened: no launch in the slab, nothing to wait for.
    assert!(slab_finished(&[SlotMeta::default(), SlotMeta::default()]));
}

#[test]
fn overlapping_launches_end_in_order_at_the_first_one_still_running() {
    // Kept launches 5..9 opened (the next launch's open says so), ring of 4:
    // launch 7 (slab 3) still runs, so 5 and 6 have ended.
    let running = |slab| slab == 3;
    assert_eq!(finished_until(4, 5, 9, |s| !running(s)), 7);
    assert_eq!(finished_until(4, 5, 9, |_| true), 9);
    // The oldest still running: nothing has ended.
    assert_eq!(finished_until(4, 5, 9, |s| s != 1), 5);
    // More than a ring past `drained`: those were dropped whole and have
    // nothing to wait for once the ring's launches have ended.
    assert_eq!(finished_until(4, 0, 10, |_| true), 10);
    assert_eq!(finished_until(4, 0, 10, |s| s != 2), 2);
    // Nothing waiting.
    assert_eq!(finished_until(4, 9, 9, |_| false), 9);
    // Across the wrap of the kept count.
    assert_eq!(finished_until(4, u32::MAX, 2, |s| s != 1), 1);
}

/// A slab of 4 warps at cap 256 whose warp `i` recorded `counts[i]`
/// entries (begin/end pairs of region 1, 10 cycles apart), flushed.
fn recorded_slab(counts: [u32; 4]) -> (LaunchShape, Vec<u8>) {
    use crate::format::layout::EventKind;
    use crate::synth::{SynthLaunch, SynthWarp};
    let mut l = SynthLaunch::all_traced(2, 64, 256);
    for (i, &count) in counts.iter().enumerate() {
        let mut w = SynthWarp::new(i as u32 / 2, i as u32 % 2);
        for e in 0..u64::from(count) {
            let kind = if e % 2 == 0 {
                EventKind::Begin
            } else {
                EventKind::End
            };
            w = w.event(50 + 10 * e, 1, kind);
        }
        l.write(&w.flush_at(10 * u64::from(count) + 100));
    }
    (l.shape, l.raw)
}

#[test]
fn a_fitted_slab_keeps_every_entry_at_the_smallest_capacity_that_holds_them() {
    use crate::decode::{decode, DecodeOptions};
    use crate::format::buffer::LaunchBuffer;
    use crate::format::layout::LAYOUT_VERSION;
    let decoded = |s: &LaunchShape, raw: &[u8]| {
        decode(
            LaunchBuffer::new(raw, s, LAYOUT_VERSION).unwrap(),
            &DecodeOptions::default(),
        )
        .warps
    };
    for (counts, cap) in [
        ([8, 6, 0, 2], 32),
        ([40, 6, 2, 2], 64),
        ([256, 1, 1, 1], 256),
        ([0, 0, 0, 0], 32),
    ] {
        let (s, raw) = recorded_slab(counts);
        let (f, fitted) = fitted_slab(&raw, &s).unwrap();
        assert_eq!(f.cap(), cap, "{counts:?}");
        assert_eq!(
            LaunchShape {
                cap_log2: s.cap_log2,
                ..f
            },
            s,
            "only the cap changes"
        );
        assert_eq!(fitted.len() as u64, f.buffer_bytes().unwrap());
        assert_eq!(decoded(&f, &fitted), decoded(&s, &raw), "{counts:?}");
        let w = decoded(&f, &fitted);
        assert_eq!(w.len(), 4, "every opened warp");
        for (warp, &n) in w.iter().zip(&counts) {
            assert_eq!(warp.events.len(), n as usize, "{counts:?}");
            assert_eq!(warp.spans.len(), n as usize / 2, "{counts:?}");
        }
    }
}

#[test]
fn a_slab_whose_ring_wrapped_or_that_did_not_flush_keeps_its_capacity() {
    let (s, raw) = recorded_slab([300, 2, 2, 2]);
    let (f, fitted) = fitted_slab(&raw, &s).unwrap();
    assert_eq!((f, fitted.as_slice()), (s, raw.as_slice()));
    let (s, mut raw) = recorded_slab([2, 2, 2, 2]);
    let mut m = SlotMeta::from_bytes(raw[..META_BYTES].try_into().unwrap());
    m.flush_magic = 0;
    raw[..META_BYTES].copy_from_slice(&m.to_bytes());
    assert_eq!(fitted_slab(&raw, &s).unwrap().0.cap(), 256);
    let e = fitted_slab(&raw[1..], &s).unwrap_err();
    let whole = raw.len() as u64;
    assert!(
        matches!(e, Error::BufferSize { expected, actual } if expected == whole && actual == whole - 1),
        "{e}"
    );
}
