use super::*;

/// A minimal 64-bit little-endian ELF image with the named sections (name,
/// size), a null section first and the section-name table last.
fn elf(sections: &[(&str, u64)]) -> Vec<u8> {
    let mut names = vec![0u8];
    let mut name_at = Vec::new();
    for (n, _) in sections.iter().chain([(".shstrtab", 0)].iter()) {
        name_at.push(names.len() as u32);
        names.extend_from_slice(n.as_bytes());
        names.push(0);
    }
    let names_off = 64u64;
    let shoff = (names_off + names.len() as u64).next_multiple_of(8);
    let count = sections.len() + 2;
    let mut b = vec![0u8; shoff as usize + count * 64];
    b[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1]);
    b[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    b[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    b[0x3c..0x3e].copy_from_slice(&(count as u16).to_le_bytes());
    b[0x3e..0x40].copy_from_slice(&((count - 1) as u16).to_le_bytes());
    b[names_off as usize..names_off as usize + names.len()].copy_from_slice(&names);
    let mut put = |i: usize, name: u32, offset: u64, size: u64| {
        let at = shoff as usize + i * 64;
        b[at..at + 4].copy_from_slice(&name.to_le_bytes());
        b[at + 24..at + 32].copy_from_slice(&offset.to_le_bytes());
        b[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
    };
    for (i, (_, size)) in sections.iter().enumerate() {
        put(i + 1, name_at[i], 0, *size);
    }
    put(
        count - 1,
        name_at[sections.len()],
        names_off,
        names.len() as u64,
    );
    b
}

fn sizes(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn reads_each_kernels_static_shared_memory() {
    let image = elf(&[
        (".text.gemm", 4096),
        (".nv.shared.gemm", 8192),
        (".nv.shared.reserved.0", 0),
        (".nv.shared.scale", 1124),
        (".nv.constant0.gemm", 600),
    ]);
    assert_eq!(
        static_shared(&image).unwrap(),
        sizes(&[("gemm", 8192), ("scale", 1124)])
    );
}

#[test]
fn bad_images_are_errors() {
    assert!(static_shared(b"not an elf image")
        .unwrap_err()
        .contains("not a 64-bit"));
    let mut image = elf(&[(".nv.shared.k", 64)]);
    image.truncate(image.len() - 40);
    assert!(static_shared(&image).unwrap_err().contains("truncated"));
}

#[test]
fn a_shift_breaks_an_alignment_the_untraced_build_has() {
    // Untraced: the 1 KiB the driver reserves, and for `own` 1 KiB of the
    // kernel's own. Traced: a 3 KiB ring beside them keeps `aligned` and
    // `own` aligned; a ring of 2,112 bytes (not a multiple of 1,024) moves
    // `odd` off; `unaligned` was not aligned untraced, so it is not checked.
    let untraced = sizes(&[
        ("aligned", 1024),
        ("own", 2048),
        ("odd", 1024),
        ("unaligned", 1124),
    ]);
    let traced = sizes(&[
        ("aligned", 4096),
        ("own", 5120),
        ("odd", 3136),
        ("unaligned", 5120),
        ("ring_only", 6144),
    ]);
    assert_eq!(
        shared_shifts(&traced, &untraced),
        vec![SharedShift {
            function: "odd".into(),
            untraced: 1024,
            traced: 3136,
        }]
    );
    // A kernel with no static shared memory untraced starts at 0.
    let ring_only = sizes(&[("ring_only", 2112)]);
    assert_eq!(shared_shifts(&ring_only, &BTreeMap::new())[0].traced, 2112);
    let message = shared_shifts(&traced, &untraced)[0].message("probe");
    assert!(
        message.contains("module probe, kernel odd")
            && message.contains("(3136 bytes)")
            && message.contains("(1024 bytes)"),
        "{message}"
    );
}

#[test]
fn only_two_cubins_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let (t, u) = (
        dir.path().join("k.traced.cubin"),
        dir.path().join("k.untraced.cubin"),
    );
    std::fs::write(&u, elf(&[(".nv.shared.k", 1024)])).unwrap();
    std::fs::write(&t, elf(&[(".nv.shared.k", 3136)])).unwrap();
    let shifts = image_shared_shifts(&t, &u).unwrap().unwrap();
    assert_eq!((shifts[0].traced, shifts[0].untraced), (3136, 1024));
    let fat = dir.path().join("k.traced.fatbin");
    assert_eq!(image_shared_shifts(&fat, &u).unwrap(), None);
    let missing = dir.path().join("gone.untraced.cubin");
    assert!(image_shared_shifts(&t, &missing)
        .unwrap_err()
        .contains("gone.untraced.cubin"));
}
