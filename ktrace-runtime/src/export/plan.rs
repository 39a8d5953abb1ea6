//! One export plan and one executor: which launches go to which file, in
//! which format, on which time axis. The session ([`TraceSession::write`]),
//! `ktrace export` and `ktrace merge` each make a plan and run it, so the
//! rules live here once:
//!
//! - a Perfetto trace is one file holding every launch of the plan, each on
//!   its [`TimelineLaunch::host_axis`];
//! - a Chrome trace is one file per launch: the output name for launch 0
//!   (or for the one launch asked for by number), `NAME_launchN.json` for
//!   launch `N` ([`launch_trace_path`]).
//!
//! Planning is a pure function of the launches and the output asked for;
//! [`TraceFile::write`] decodes and writes.
//!
//! [`TraceSession::write`]: crate::session::TraceSession::write

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::perfetto::PerfettoOptions;
use super::{
    export_perfetto, export_timeline_launch, ExportOptions, ExportProgress, ExportReport,
    TimelineLaunch,
};
use crate::error::{Error, Result};
use crate::output::launch_trace_path;

/// The format of a trace file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Chrome Trace JSON: one launch per file, on its own clock.
    Chrome,
    /// Perfetto protobuf (`.pftrace`): any number of launches on one
    /// timeline.
    Perfetto(PerfettoOptions),
}

/// How the launches of a Chrome export are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChromeNames {
    /// Launch 0 at the output, launch `N` at `NAME_launchN.json`.
    ByLaunch,
    /// The output name as given, for a plan of one launch picked by number.
    Exact,
}

/// One file of a plan: where it goes, its format and the launches it holds.
#[derive(Clone, Debug)]
pub struct TraceFile<'a> {
    /// The trace's path (its summaries go beside it).
    pub path: PathBuf,
    /// Its format.
    pub format: TraceFormat,
    /// Its launches, in order (one for a Chrome trace).
    pub launches: Vec<TimelineLaunch<'a>>,
}

/// Plans the files for `launches` written to `output` in `format`: one
/// Perfetto file with all of them (a timeline with none when there are
/// none), or one Chrome file each, named by `names`.
///
/// Fails when two launches would go to one Chrome file: a capture whose
/// launch records repeat a launch id (the id names the file), or several
/// launches written to one exact name. Nothing is written then, and the
/// error names the id; a Perfetto file keeps every launch.
pub fn plan<'a>(
    launches: Vec<TimelineLaunch<'a>>,
    output: &Path,
    format: TraceFormat,
    names: ChromeNames,
) -> Result<Vec<TraceFile<'a>>> {
    match format {
        TraceFormat::Perfetto(_) => Ok(vec![TraceFile {
            path: output.to_path_buf(),
            format,
            launches,
        }]),
        TraceFormat::Chrome => {
            let files: Vec<TraceFile<'a>> = launches
                .into_iter()
                .map(|l| TraceFile {
                    path: match names {
                        ChromeNames::Exact => output.to_path_buf(),
                        ChromeNames::ByLaunch => launch_trace_path(output, l.launch.shape.launch),
                    },
                    format,
                    launches: vec![l],
                })
                .collect();
            let mut per_path: HashMap<&Path, usize> = HashMap::new();
            for f in &files {
                *per_path.entry(&f.path).or_default() += 1;
            }
            // The first file, in launch order, that another would overwrite.
            if let Some((f, same)) = files
                .iter()
                .map(|f| (f, per_path[f.path.as_path()]))
                .find(|&(_, n)| n > 1)
            {
                return Err(Error::Config(format!(
                    "{same} launch records hold launch {}, and a Chrome trace is one file per \
                     launch ({}): they would overwrite each other. Export them to one Perfetto \
                     trace (a .pftrace output), which keeps each",
                    f.launches[0].launch.shape.launch,
                    f.path.display()
                )));
            }
            Ok(files)
        }
    }
}

impl TraceFile<'_> {
    /// Decodes the file's launches and writes the trace and each launch's
    /// summary; one report per launch, in order. `progress` is called after
    /// each warp.
    pub fn write(
        &self,
        opts: &ExportOptions,
        progress: &mut dyn FnMut(&ExportProgress),
    ) -> Result<Vec<ExportReport>> {
        match &self.format {
            TraceFormat::Perfetto(perfetto) => {
                export_perfetto(&self.launches, &self.path, opts, perfetto, progress)
            }
            TraceFormat::Chrome => self
                .launches
                .iter()
                .map(|t| export_timeline_launch(t, &self.path, opts, progress))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::sample_capture;

    fn views(cap: &crate::format::capture::Capture) -> Vec<TimelineLaunch<'_>> {
        TimelineLaunch::of_capture(cap, &cap.launches, None).collect()
    }

    #[test]
    fn chrome_traces_are_one_file_per_launch_and_perfetto_one_for_all() {
        let cap = sample_capture();
        let out = Path::new("dir/t.json");
        let files = plan(views(&cap), out, TraceFormat::Chrome, ChromeNames::ByLaunch).unwrap();
        let paths: Vec<_> = files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("dir/t.json"),
                PathBuf::from("dir/t_launch1.json")
            ]
        );
        assert!(files.iter().all(|f| f.launches.len() == 1));
        let one = plan(
            views(&cap)[1..].to_vec(),
            out,
            TraceFormat::Chrome,
            ChromeNames::Exact,
        )
        .unwrap();
        assert_eq!(one[0].path, out);
        assert_eq!(one[0].launches[0].launch.shape.launch, 1);
        let pf = TraceFormat::Perfetto(PerfettoOptions::default());
        let files = plan(
            views(&cap),
            Path::new("t.pftrace"),
            pf,
            ChromeNames::ByLaunch,
        )
        .unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].launches.len(), 2);
        let empty = plan(Vec::new(), out, pf, ChromeNames::ByLaunch).unwrap();
        assert_eq!((empty.len(), empty[0].launches.len()), (1, 0));
        assert!(
            plan(Vec::new(), out, TraceFormat::Chrome, ChromeNames::ByLaunch)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn launches_that_share_an_id_are_refused_for_chrome_and_kept_in_perfetto() {
        let mut cap = sample_capture();
        cap.launches[1].shape.launch = 0;
        let out = Path::new("dir/t.json");
        let err = plan(views(&cap), out, TraceFormat::Chrome, ChromeNames::ByLaunch)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("2 launch records hold launch 0"), "{err}");
        assert!(err.contains("dir/t.json"), "{err}");
        let err = plan(views(&cap), out, TraceFormat::Chrome, ChromeNames::Exact)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(err.contains("would overwrite each other"), "{err}");
        let pf = TraceFormat::Perfetto(PerfettoOptions::default());
        let files = plan(
            views(&cap),
            Path::new("t.pftrace"),
            pf,
            ChromeNames::ByLaunch,
        )
        .unwrap();
        assert_eq!(files[0].launches.len(), 2);
    }

    #[test]
    fn a_planned_file_writes_what_the_export_functions_write() {
        let cap = sample_capture();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.json");
        let opts = ExportOptions::default();
        let mut reports = Vec::new();
        for f in plan(
            views(&cap),
            &out,
            TraceFormat::Chrome,
            ChromeNames::ByLaunch,
        )
        .unwrap()
        {
            reports.extend(f.write(&opts, &mut |_| {}).unwrap());
        }
        let direct = dir.path().join("direct.json");
        let l = &cap.launches[1];
        let r = super::super::export_launch(l, &cap.device, &cap.regions, &direct, &opts).unwrap();
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[1].trace_path, dir.path().join("t_launch1.json"));
        assert_eq!(reports[1].events, r.events);
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&reports[1].trace_path), read(&direct));
    }
}

#[cfg(test)]
mod step_tests {
    use super::*;
    use crate::timeline::HostAxis;

    #[test]
    fn a_chrome_trace_on_the_hosts_clock_shows_the_steps_its_launch_overlaps() {
        let cap = crate::synth::continuous_capture();
        let axis = HostAxis::new(&cap.clock_syncs).unwrap();
        let dir = std::env::temp_dir().join(format!("ktrace-steps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        let t = TimelineLaunch {
            launch: &cap.launches[0],
            device: &cap.device,
            regions: &cap.regions,
            host_axis: axis.as_ref(),
            steps: &cap.steps,
        };
        crate::export::export_timeline_launch(&t, &path, &ExportOptions::default(), &mut |_| {})
            .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let events = json["traceEvents"].as_array().unwrap();
        let steps: Vec<&str> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == 1u64 << 40)
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(steps, ["decode 10"]);
        // The step began at host time BASE_GT - 1000 and the GPU is 1000 ns
        // ahead of the host: at GPU time BASE_GT, the launch's start (ts 0
        // within the trace's ns rounding; 2 µs early when the offset's sign
        // was wrong), for 250 µs.
        let step = events
            .iter()
            .find(|e| e["ph"] == "X" && e["pid"] == 1u64 << 40)
            .unwrap();
        let (ts, dur) = (step["ts"].as_f64().unwrap(), step["dur"].as_f64().unwrap());
        assert!(ts.abs() <= 0.0015 && (dur - 250.0).abs() < 1e-6, "{step}");
        assert!(events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "Host steps"));
        // Without the host's axis there is no way to place them.
        let t = TimelineLaunch {
            host_axis: None,
            ..t
        };
        crate::export::export_timeline_launch(&t, &path, &ExportOptions::default(), &mut |_| {})
            .unwrap();
        assert!(!std::fs::read_to_string(&path)
            .unwrap()
            .contains("Host steps"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
