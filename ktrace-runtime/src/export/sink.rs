//! One shape for the trace writers: a [`TraceSink`] takes launches, each
//! followed by its warps, then finishes the file. Both
//! [`ChromeWriter`](super::chrome::ChromeWriter) and
//! [`PerfettoWriter`](super::perfetto::PerfettoWriter) implement it, each
//! encoding exactly as through its own methods, so an export can drive
//! either through one loop.
//!
//! The writers still differ in what they take where the trait leaves room:
//! a Chrome trace holds one launch, whose regions and time origin its
//! `begin` takes, and ends with an `otherData` object (the
//! [`TraceSink::Trailer`]) known only once every warp is written; a
//! Perfetto trace holds any number of launches and ends with nothing.

use std::io;

use crate::decode::{Decoder, WarpTrace};
use crate::format::regions::Regions;

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

/// A launch as a sink takes it, before its warps.
#[derive(Clone, Copy, Debug)]
pub struct LaunchView<'a> {
    /// The launch's tracks: their names and where its events go on the
    /// output axis (the Perfetto writer's; the Chrome writer has none).
    pub group: &'a LaunchGroup,
    /// The launch's decoder: its shape, its origin and its warps.
    pub decoder: &'a Decoder<'a>,
    /// The names of the launch's regions.
    pub regions: &'a Regions,
}

/// A trace writer: [`TraceSink::begin_launch`] for each launch, followed
/// by [`TraceSink::warp`] for each of its warps, then
/// [`TraceSink::finish`].
pub trait TraceSink {
    /// What the file ends with that only the caller knows once every warp
    /// is written: the Chrome trace's `otherData`; `()` for Perfetto.
    type Trailer: ?Sized;
    /// What [`TraceSink::finish`] hands back: the underlying writer.
    type Output;

    /// Starts a launch. Fails where the format cannot take it (a Chrome
    /// trace takes one launch).
    fn begin_launch(&mut self, launch: &LaunchView<'_>) -> io::Result<()>;

    /// Writes one warp of the current launch.
    fn warp(&mut self, warp: &WarpTrace) -> io::Result<()>;

    /// Spans and marks written so far (the Chrome writer with raw events:
    /// begins, ends and marks).
    fn events_written(&self) -> u64;

    /// Writes what is left, ending with `trailer`, and returns the
    /// underlying writer.
    fn finish(self, trailer: &Self::Trailer) -> io::Result<Self::Output>
    where
        Self: Sized;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::DecodeOptions;
    use crate::export::chrome::{ChromeOptions, ChromeWriter};
    use crate::export::perfetto::{PerfettoOptions, PerfettoWriter};
    use crate::synth::sample_launch;

    /// Writes `launches` through the trait alone; returns the bytes and the
    /// events counted.
    fn drive<S: TraceSink<Output = Vec<u8>>>(
        mut sink: S,
        launches: &[(LaunchGroup, Decoder<'_>)],
        regions: &Regions,
        trailer: &S::Trailer,
    ) -> (Vec<u8>, u64) {
        for (group, dec) in launches {
            let view = LaunchView {
                group,
                decoder: dec,
                regions,
            };
            sink.begin_launch(&view).unwrap();
            for warp in dec.warps() {
                sink.warp(&warp).unwrap();
            }
        }
        let n = sink.events_written();
        (sink.finish(trailer).unwrap(), n)
    }

    fn group(n: u32) -> LaunchGroup {
        LaunchGroup {
            title: format!("launch {n}"),
            device: "GPU 0: test".into(),
            offset_ns: -5,
            host_span_ns: Some((100, 200)),
        }
    }

    #[test]
    fn writers_write_the_same_bytes_through_the_trait() {
        let regions = Regions::from_table(&[(1, "a"), (2, "b")]);
        let captures = [sample_launch(0, 3), sample_launch(1, 1)];
        let decs: Vec<(LaunchGroup, Decoder<'_>)> = captures
            .iter()
            .map(|l| {
                let dec = Decoder::new(l.buffer().unwrap(), &DecodeOptions::default());
                (group(l.shape.launch), dec)
            })
            .collect();

        let opts = PerfettoOptions {
            args: true,
            ..PerfettoOptions::default()
        };
        let mut direct = PerfettoWriter::begin(Vec::new(), opts).unwrap();
        for (g, dec) in &decs {
            direct.launch(g, dec, &regions).unwrap();
            for warp in dec.warps() {
                direct.warp(&warp).unwrap();
            }
        }
        let n = direct.events_written();
        let want = (direct.finish().unwrap(), n);
        let sink = PerfettoWriter::begin(Vec::new(), opts).unwrap();
        assert_eq!(drive(sink, &decs, &regions, &()), want);

        let other = serde_json::json!({"k": 1});
        let mut direct =
            ChromeWriter::begin(Vec::new(), &regions, ChromeOptions::default(), 7).unwrap();
        for warp in decs[0].1.warps() {
            direct.warp(&warp).unwrap();
        }
        let n = direct.events_written();
        let want = (direct.finish(&other).unwrap(), n);
        let sink = ChromeWriter::begin(Vec::new(), &regions, ChromeOptions::default(), 7).unwrap();
        assert_eq!(drive(sink, &decs[..1], &regions, &other), want);
    }

    #[test]
    fn a_chrome_trace_takes_one_launch() {
        let regions = Regions::from_table(&[(1, "a")]);
        let l = sample_launch(0, 1);
        let dec = Decoder::new(l.buffer().unwrap(), &DecodeOptions::default());
        let g = group(0);
        let view = LaunchView {
            group: &g,
            decoder: &dec,
            regions: &regions,
        };
        let mut w = ChromeWriter::begin(Vec::new(), &regions, ChromeOptions::default(), 0).unwrap();
        w.begin_launch(&view).unwrap();
        let e = w.begin_launch(&view).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
