//! Shared pieces of the ktrace examples: the embedded kernels and regions,
//! and small host helpers.

ktrace_runtime::include_ktrace!();
