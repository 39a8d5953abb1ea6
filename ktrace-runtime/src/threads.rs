//! How many threads a request for threads means: the count asked, or one
//! per core for 0. Exports ([`ExportOptions::threads`]) and capture
//! reading ([`Capture::read_on`]) take their counts this way.
//!
//! [`ExportOptions::threads`]: crate::export::ExportOptions::threads
//! [`Capture::read_on`]: crate::format::capture::Capture::read_on

/// The threads that asking for `threads` gives: `threads`, or one per core
/// when 0.
pub fn thread_count(threads: usize) -> usize {
    if threads > 0 {
        threads
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}
