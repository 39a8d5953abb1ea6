//! Host and device cannot drift: compiles a C program that includes
//! `ktrace_layout.h` and prints every size, field offset and constant as the
//! C compiler sees them, and compares with the Rust `layout` module.

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

use ktrace_runtime::format::layout::{self, Event, KtraceArg, Site, SiteKeep, SlotMeta};

fn header_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ktrace-build/include");
    dir.join("ktrace_layout.h").exists().then_some(dir)
}

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stddef.h>
#include "ktrace_layout.h"
#define SZ(t) printf("sizeof %s %zu\n", #t, sizeof(t))
#define AL(t) printf("alignof %s %zu\n", #t, _Alignof(t))
#define OFF(t, f) printf("offsetof %s.%s %zu\n", #t, #f, offsetof(t, f))
#define FSZ(t, f) printf("fieldsize %s.%s %zu\n", #t, #f, sizeof(((t*)0)->f))
#define F(t, f) OFF(t, f); FSZ(t, f)
#define DEF(d) printf("define %s %llu\n", #d, (unsigned long long)(d))
int main(void) {
  SZ(ktrace_slot_meta); AL(ktrace_slot_meta);
  F(ktrace_slot_meta, init_globaltimer); F(ktrace_slot_meta, init_clock64);
  F(ktrace_slot_meta, block_linear); F(ktrace_slot_meta, warp);
  F(ktrace_slot_meta, smid); F(ktrace_slot_meta, open_magic);
  F(ktrace_slot_meta, launch); F(ktrace_slot_meta, final_globaltimer);
  F(ktrace_slot_meta, final_clock64); F(ktrace_slot_meta, count);
  F(ktrace_slot_meta, flush_magic); F(ktrace_slot_meta, grid_id);
  SZ(ktrace_event); AL(ktrace_event);
  F(ktrace_event, clock); F(ktrace_event, region); F(ktrace_event, type);
  SZ(ktrace_arg); AL(ktrace_arg);
  F(ktrace_arg, buffer); F(ktrace_arg, warp_mask); F(ktrace_arg, warps_traced);
  F(ktrace_arg, block_stride); F(ktrace_arg, blocks_traced); F(ktrace_arg, cap_log2);
  F(ktrace_arg, launch);
  SZ(ktrace_site); AL(ktrace_site);
  F(ktrace_site, flushed); F(ktrace_site, dropped); F(ktrace_site, warps);
  F(ktrace_site, reserved0); F(ktrace_site, keep); F(ktrace_site, step); F(ktrace_site, reserved1);
  F(ktrace_site, slab_count);
  F(ktrace_site, drained); F(ktrace_site, triggers_asked); F(ktrace_site, triggered);
  F(ktrace_site, done_launch); F(ktrace_site, done_kept); F(ktrace_site, reserved);
  for (unsigned w = 0; w < 70; w += 23) printf("counters %u %llu\n", w, (unsigned long long)KTRACE_SITE_COUNTER_BYTES(w));
  for (unsigned k = 0; k < 70; k += 23) printf("steps %u %llu\n", k, (unsigned long long)KTRACE_SITE_STEP_BYTES(k));
  SZ(ktrace_keep); AL(ktrace_keep);
  F(ktrace_keep, from); F(ktrace_keep, until); F(ktrace_keep, base); F(ktrace_keep, every);
  DEF(KTRACE_ARG_SITE); DEF(KTRACE_ARG_OVERLAP); DEF(KTRACE_SLAB_NONE); DEF(KTRACE_SLAB_NEWEST);
  DEF(KTRACE_LAYOUT_VERSION); DEF(KTRACE_EVENT_BEGIN); DEF(KTRACE_EVENT_END);
  DEF(KTRACE_EVENT_MARK); DEF(KTRACE_OPEN_MAGIC); DEF(KTRACE_OPEN_SHARED_MAGIC); DEF(KTRACE_FLUSH_MAGIC);
  DEF(KTRACE_REGION_UNKNOWN); DEF(KTRACE_MIN_CAP); DEF(KTRACE_MAX_CAP);
  DEF(KTRACE_EVENT_ANCHOR); DEF(KTRACE_ANCHOR_CYCLES_DEFAULT); DEF(KTRACE_EVENT_VALUE);
  DEF(KTRACE_OPEN_STAMP_MAGIC); DEF(KTRACE_STAMP_LOW_BIT); DEF(KTRACE_STAMP_BITS);
  DEF(KTRACE_STAMP_TYPE_BITS);
  return 0;
}
"#;

fn c_view(include: &PathBuf) -> BTreeMap<String, u64> {
    let dir = std::env::temp_dir().join(format!("ktrace-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, PROGRAM).unwrap();
    #[allow(clippy::disallowed_methods)] // the test's own switch, not the crate's
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .arg("-std=c11")
        .arg("-I")
        .arg(include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler `{cc}`: {e}"));
    assert!(
        out.status.success(),
        "compiling the layout probe failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut p = l.split_whitespace();
            let kind = p.next().unwrap();
            let name = p.next().unwrap();
            let v: u64 = p.next().unwrap().parse().unwrap();
            (format!("{kind} {name}"), v)
        })
        .collect()
}

macro_rules! field {
    ($m:ident, $c:literal, $t:ty, $f:ident, $fty:ty) => {
        $m.insert(
            concat!("offsetof ", $c).to_string(),
            offset_of!($t, $f) as u64,
        );
        $m.insert(
            concat!("fieldsize ", $c).to_string(),
            size_of::<$fty>() as u64,
        );
    };
}

fn rust_view() -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: u64| {
        m.insert(k.to_string(), v);
    };
    put("sizeof ktrace_slot_meta", size_of::<SlotMeta>() as u64);
    put(
        "alignof ktrace_slot_meta",
        std::mem::align_of::<SlotMeta>() as u64,
    );
    put("sizeof ktrace_event", size_of::<Event>() as u64);
    put("alignof ktrace_event", std::mem::align_of::<Event>() as u64);
    put("sizeof ktrace_arg", size_of::<KtraceArg>() as u64);
    put(
        "alignof ktrace_arg",
        std::mem::align_of::<KtraceArg>() as u64,
    );
    put(
        "define KTRACE_LAYOUT_VERSION",
        u64::from(layout::LAYOUT_VERSION),
    );
    put("define KTRACE_EVENT_BEGIN", u64::from(layout::EVENT_BEGIN));
    put("define KTRACE_EVENT_END", u64::from(layout::EVENT_END));
    put("define KTRACE_EVENT_MARK", u64::from(layout::EVENT_MARK));
    put("define KTRACE_OPEN_MAGIC", u64::from(layout::OPEN_MAGIC));
    put(
        "define KTRACE_OPEN_SHARED_MAGIC",
        u64::from(layout::OPEN_SHARED_MAGIC),
    );
    put(
        "define KTRACE_OPEN_STAMP_MAGIC",
        u64::from(layout::OPEN_STAMP_MAGIC),
    );
    put(
        "define KTRACE_STAMP_LOW_BIT",
        u64::from(layout::STAMP_LOW_BIT),
    );
    put("define KTRACE_STAMP_BITS", u64::from(layout::STAMP_BITS));
    put(
        "define KTRACE_STAMP_TYPE_BITS",
        u64::from(layout::STAMP_TYPE_BITS),
    );
    put("define KTRACE_FLUSH_MAGIC", u64::from(layout::FLUSH_MAGIC));
    put(
        "define KTRACE_REGION_UNKNOWN",
        u64::from(layout::REGION_UNKNOWN),
    );
    put("define KTRACE_MIN_CAP", u64::from(layout::MIN_CAP));
    put("define KTRACE_MAX_CAP", u64::from(layout::MAX_CAP));
    put(
        "define KTRACE_EVENT_ANCHOR",
        u64::from(layout::EVENT_ANCHOR),
    );
    put(
        "define KTRACE_ANCHOR_CYCLES_DEFAULT",
        u64::from(layout::ANCHOR_CYCLES_DEFAULT),
    );
    put("define KTRACE_EVENT_VALUE", u64::from(layout::EVENT_VALUE));
    field!(
        m,
        "ktrace_slot_meta.init_globaltimer",
        SlotMeta,
        init_globaltimer,
        u64
    );
    field!(
        m,
        "ktrace_slot_meta.init_clock64",
        SlotMeta,
        init_clock64,
        u64
    );
    field!(
        m,
        "ktrace_slot_meta.block_linear",
        SlotMeta,
        block_linear,
        u32
    );
    field!(m, "ktrace_slot_meta.warp", SlotMeta, warp, u16);
    field!(m, "ktrace_slot_meta.smid", SlotMeta, smid, u16);
    field!(m, "ktrace_slot_meta.open_magic", SlotMeta, open_magic, u32);
    field!(m, "ktrace_slot_meta.launch", SlotMeta, launch, u32);
    field!(
        m,
        "ktrace_slot_meta.final_globaltimer",
        SlotMeta,
        final_globaltimer,
        u64
    );
    field!(
        m,
        "ktrace_slot_meta.final_clock64",
        SlotMeta,
        final_clock64,
        u64
    );
    field!(m, "ktrace_slot_meta.count", SlotMeta, count, u32);
    field!(
        m,
        "ktrace_slot_meta.flush_magic",
        SlotMeta,
        flush_magic,
        u32
    );
    field!(m, "ktrace_slot_meta.grid_id", SlotMeta, grid_id, u64);
    field!(m, "ktrace_event.clock", Event, clock, u32);
    field!(m, "ktrace_event.region", Event, region, u16);
    field!(m, "ktrace_event.type", Event, kind, u16);
    field!(m, "ktrace_arg.buffer", KtraceArg, buffer, u64);
    field!(m, "ktrace_arg.warp_mask", KtraceArg, warp_mask, u32);
    field!(m, "ktrace_arg.warps_traced", KtraceArg, warps_traced, u32);
    field!(m, "ktrace_arg.block_stride", KtraceArg, block_stride, u32);
    field!(m, "ktrace_arg.blocks_traced", KtraceArg, blocks_traced, u32);
    field!(m, "ktrace_arg.cap_log2", KtraceArg, cap_log2, u32);
    field!(m, "ktrace_arg.launch", KtraceArg, launch, u32);
    m.insert("sizeof ktrace_site".to_string(), size_of::<Site>() as u64);
    m.insert(
        "alignof ktrace_site".to_string(),
        std::mem::align_of::<Site>() as u64,
    );
    m.insert(
        "define KTRACE_ARG_SITE".to_string(),
        u64::from(layout::ARG_SITE),
    );
    m.insert(
        "define KTRACE_ARG_OVERLAP".to_string(),
        u64::from(layout::ARG_OVERLAP),
    );
    m.insert(
        "define KTRACE_SLAB_NONE".to_string(),
        u64::from(layout::SLAB_NONE),
    );
    m.insert(
        "define KTRACE_SLAB_NEWEST".to_string(),
        u64::from(layout::SLAB_NEWEST),
    );
    field!(m, "ktrace_site.flushed", Site, flushed, u32);
    field!(m, "ktrace_site.dropped", Site, dropped, u32);
    field!(m, "ktrace_site.warps", Site, warps, u32);
    field!(m, "ktrace_site.reserved0", Site, reserved0, u32);
    field!(m, "ktrace_site.keep", Site, keep, SiteKeep);
    field!(m, "ktrace_site.step", Site, step, u64);
    field!(m, "ktrace_site.reserved1", Site, reserved1, [u32; 2]);
    field!(m, "ktrace_site.slab_count", Site, slab_count, u32);
    field!(m, "ktrace_site.drained", Site, drained, u32);
    field!(m, "ktrace_site.triggers_asked", Site, triggers_asked, u32);
    field!(m, "ktrace_site.triggered", Site, triggered, u32);
    field!(m, "ktrace_site.done_launch", Site, done_launch, u32);
    field!(m, "ktrace_site.done_kept", Site, done_kept, u32);
    field!(m, "ktrace_site.reserved", Site, reserved, [u32; 14]);
    for w in (0..70).step_by(23) {
        m.insert(format!("counters {w}"), layout::site_counter_bytes(w));
        m.insert(format!("steps {w}"), layout::site_step_bytes(w));
    }
    m.insert(
        "sizeof ktrace_keep".to_string(),
        size_of::<SiteKeep>() as u64,
    );
    m.insert(
        "alignof ktrace_keep".to_string(),
        std::mem::align_of::<SiteKeep>() as u64,
    );
    field!(m, "ktrace_keep.from", SiteKeep, from, u32);
    field!(m, "ktrace_keep.until", SiteKeep, until, u32);
    field!(m, "ktrace_keep.base", SiteKeep, base, u32);
    field!(m, "ktrace_keep.every", SiteKeep, every, u32);
    m
}

#[test]
fn rust_layout_matches_the_c_header() {
    let Some(dir) = header_dir() else {
        eprintln!("ktrace_layout.h not found beside this crate (packaged build); skipped");
        return;
    };
    let c = c_view(&dir);
    let rust = rust_view();
    let c_keys: Vec<_> = c.keys().collect();
    let rust_keys: Vec<_> = rust.keys().collect();
    assert_eq!(
        c_keys, rust_keys,
        "the probe and the Rust view cover different items"
    );
    for (k, v) in &c {
        assert_eq!(rust[k], *v, "{k}: C says {v}, Rust says {}", rust[k]);
    }
    assert_eq!(layout::META_BYTES as u64, c["sizeof ktrace_slot_meta"]);
    assert_eq!(layout::EVENT_BYTES as u64, c["sizeof ktrace_event"]);
}

#[test]
fn header_mentions_every_field_we_parse() {
    // A new field in the header that the probe above does not list would
    // slip through; the struct sizes catch most of that, this catches the
    // rest by name.
    let Some(dir) = header_dir() else { return };
    let text = std::fs::read_to_string(dir.join("ktrace_layout.h")).unwrap();
    let fields_in = |name: &str| -> Vec<String> {
        let start = text.find(&format!("typedef struct {name} {{")).unwrap();
        let body = &text[start..start + text[start..].find('}').unwrap()];
        body.lines()
            .skip(1)
            .filter_map(|l| {
                let l = l.trim();
                let decl = l.split(';').next()?;
                (l.starts_with("uint") || l.starts_with("ktrace_"))
                    .then(|| decl.split_whitespace().last().unwrap().to_string())
            })
            .collect()
    };
    assert_eq!(fields_in("ktrace_slot_meta").len(), 12);
    assert_eq!(fields_in("ktrace_event"), ["clock", "region", "type"]);
    assert_eq!(
        fields_in("ktrace_site"),
        [
            "flushed",
            "dropped",
            "warps",
            "reserved0",
            "keep",
            "step",
            "reserved1[2]",
            "slab_count",
            "drained",
            "triggers_asked",
            "triggered",
            "done_launch",
            "done_kept",
            "reserved[14]"
        ]
    );
    assert_eq!(fields_in("ktrace_keep"), ["from", "until", "base", "every"]);
    assert_eq!(
        fields_in("ktrace_arg"),
        [
            "buffer",
            "warp_mask",
            "warps_traced",
            "block_stride",
            "blocks_traced",
            "cap_log2",
            "launch"
        ]
    );
}
