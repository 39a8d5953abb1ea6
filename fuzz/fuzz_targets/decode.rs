//! `cargo fuzz run decode`: see `ktrace_fuzz::decode` and docs/fuzzing.md.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[global_allocator]
static ALLOC: ktrace_fuzz::LimitedAlloc = ktrace_fuzz::LimitedAlloc;

fuzz_target!(
    init: ktrace_fuzz::fuzz_mode(),
    |data: &[u8]| ktrace_fuzz::decode(data)
);
