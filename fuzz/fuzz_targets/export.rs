//! `cargo fuzz run export`: see `ktrace_fuzz::export` and docs/fuzzing.md.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ktrace_fuzz::export(data));
