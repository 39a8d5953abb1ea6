//! What the device writes and what a capture file holds: the buffer layout,
//! the launch shape, the region table and the capture format, and the
//! grammars of what names their parts (id lists, region-name patterns).
//! Everything downstream (decoding, export, analysis) reads these types.

pub mod buffer;
pub mod capture;
pub mod clock_sync;
pub mod compact;
mod compact_file;
pub(crate) mod contents;
pub mod ids;
pub mod layout;
pub mod pattern;
pub mod pc_map;
pub(crate) mod reader;
pub mod regions;
pub mod shape;
pub mod site;
pub mod stalls;
pub mod stream;
