//! The device headers this crate ships, embedded in it.

/// The device headers shipped with this crate: `(path, contents)`, the
/// path relative to the include directory (`ktrace.cuh` includes its parts
/// from `ktrace/`). They are written to `OUT_DIR/ktrace/include`, which is
/// put on nvcc's include path.
pub const DEVICE_HEADERS: &[(&str, &str)] = &[
    ("ktrace.cuh", include_str!("../include/ktrace.cuh")),
    (
        "ktrace/config.cuh",
        include_str!("../include/ktrace/config.cuh"),
    ),
    (
        "ktrace/common.cuh",
        include_str!("../include/ktrace/common.cuh"),
    ),
    (
        "ktrace/store.cuh",
        include_str!("../include/ktrace/store.cuh"),
    ),
    (
        "ktrace/ring.cuh",
        include_str!("../include/ktrace/ring.cuh"),
    ),
    (
        "ktrace/global.cuh",
        include_str!("../include/ktrace/global.cuh"),
    ),
    (
        "ktrace/smem.cuh",
        include_str!("../include/ktrace/smem.cuh"),
    ),
    (
        "ktrace/newest.cuh",
        include_str!("../include/ktrace/newest.cuh"),
    ),
    ("ktrace/off.cuh", include_str!("../include/ktrace/off.cuh")),
    (
        "ktrace/dispatch.cuh",
        include_str!("../include/ktrace/dispatch.cuh"),
    ),
    (
        "ktrace/markers.cuh",
        include_str!("../include/ktrace/markers.cuh"),
    ),
    (
        "ktrace_layout.h",
        include_str!("../include/ktrace_layout.h"),
    ),
    (
        "ktrace_launcher.h",
        include_str!("../include/ktrace_launcher.h"),
    ),
];
