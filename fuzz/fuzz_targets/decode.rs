//! `cargo fuzz run decode`: see `ktrace_fuzz::decode` and docs/fuzzing.md.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ktrace_fuzz::decode(data));
