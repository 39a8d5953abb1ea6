//! One launch's place in an exported file: the names of its tracks and
//! where its events go on the output axis. The export builds one per
//! launch of a Perfetto file and the Perfetto writer reads it; it depends
//! on no writer.

/// One launch in an exported file: its tracks' names and where its events
/// go on the output axis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchGroup {
    /// The launch track's name, e.g. "launch 3: gemm_kernel".
    pub title: String,
    /// The device track's name, e.g. "GPU 0: NVIDIA H200". Launches with the
    /// same device name share its track.
    pub device: String,
    /// Added to absolute `%globaltimer` nanoseconds to place events on the
    /// output axis (`CLOCK_REALTIME`); 0 keeps the globaltimer axis.
    pub offset_ns: i64,
    /// The host's enqueue and completion of the launch, in ns on the output
    /// axis: a slice on the launch's "Host" track.
    pub host_span_ns: Option<(u64, u64)>,
}
