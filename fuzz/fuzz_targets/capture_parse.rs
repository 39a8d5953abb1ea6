//! `cargo fuzz run capture_parse`: see `ktrace_fuzz::capture_parse` and docs/fuzzing.md.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ktrace_fuzz::capture_parse(data));
