//! `cargo fuzz run capture_headers`: see `ktrace_fuzz::capture_headers` and docs/fuzzing.md.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[global_allocator]
static ALLOC: ktrace_fuzz::LimitedAlloc = ktrace_fuzz::LimitedAlloc;

fuzz_target!(
    init: ktrace_fuzz::fuzz_mode(),
    |data: &[u8]| ktrace_fuzz::capture_headers(data)
);
