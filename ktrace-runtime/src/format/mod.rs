//! What the device writes and what a capture file holds: the buffer layout,
//! the launch shape, the region table and the capture format. Everything
//! downstream (decoding, export) reads these types.

pub mod buffer;
pub mod capture;
pub mod compact;
pub mod layout;
pub mod regions;
pub mod shape;
