//! End-to-end host benchmark: writes synthetic captures of realistic shape
//! (see `benches/common/mod.rs`), times `ktrace export` (Chrome JSON and
//! Perfetto `.pftrace`) on each under
//! `/usr/bin/time -v` (events/s from wall time, peak RSS against the raw
//! buffer), and times capture load and save against plain reads and writes
//! of the same file. Prints markdown tables and the command that reproduces
//! them. `docs/host-performance.md` has the results.
//!
//! ```text
//! cargo build --release -p ktrace-cli
//! cargo build --release -p ktrace-runtime --example host_bench
//! target/release/examples/host_bench --sizes 1M,10M,100M --runs 3
//! ```
//!
//! Options:
//!
//! - `--sizes 1M,10M,100M`: target event counts (k, M suffixes).
//! - `--runs N`: runs of each measurement; tables show the median (default 3).
//! - `--dir DIR`: where captures go (default `target/host-bench`), deleted at
//!   the end unless `--keep`.
//! - `--out-dir DIR`: where `ktrace export` writes (default: `--dir`); a
//!   tmpfs such as `/dev/shm` takes the disk out of the measurement.
//! - `--tool LABEL=DIR`: a build to measure, DIR holding `ktrace` and
//!   `host_bench` (or `examples/host_bench`), e.g. `target/release`; repeat
//!   for before/after (runs alternate between tools). Words after DIR are
//!   passed to its `ktrace export`: `--tool "serial=target/release
//!   --threads 1"`. Default: `current=` the directory of this binary's
//!   `ktrace`.
//! - `--threads 1,2,4`: one tool per thread count, labelled `--threads N`:
//!   this binary's `ktrace` with `--threads N` (after any `--tool`).
//! - `--no-io`: skip the capture load/save measurements.
//! - `--formats chrome,perfetto`: the trace formats exported (default both,
//!   `-o synth-N.json` and `-o synth-N.pftrace`, one after the other in
//!   each run); bytes/event is the trace's size over the recorded events.
//!
//! Internal subcommands, run as child processes so that each has its own
//! peak RSS: `gen EVENTS FILE`, `load FILE [THREADS]`, `save FILE OUT`, `plain-read
//! FILE`, `plain-write FILE OUT`; each prints `seconds=...`.
//!
//! Peak RSS, user and system time come from `/usr/bin/time -v` when it is
//! there (and `--wait4` is not given), else from the same `wait4` resource
//! usage that `time` reads.

#[path = "../benches/common/mod.rs"]
mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use ktrace_runtime::Capture;

fn parse_count(s: &str) -> u64 {
    let s = s.trim();
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1_000),
        Some('m' | 'M') => (&s[..s.len() - 1], 1_000_000),
        Some('g' | 'G') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    let v: f64 = num
        .parse()
        .unwrap_or_else(|_| die(&format!("bad count {s:?}")));
    (v * mul as f64) as u64
}

fn die(msg: &str) -> ! {
    eprintln!("host_bench: {msg}");
    std::process::exit(2)
}

fn seconds(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// Child-process subcommands; each prints `seconds=S`.
fn subcommand(args: &[String]) -> bool {
    let arg = |i: usize| -> &str {
        args.get(i)
            .map(String::as_str)
            .unwrap_or_else(|| die("missing argument"))
    };
    let s = match args.first().map(String::as_str) {
        Some("gen") => {
            let events = parse_count(arg(1));
            let cap = common::capture(events);
            seconds(|| cap.save(arg(2)).unwrap_or_else(|e| die(&e.to_string())))
        }
        Some("load") => {
            // `load FILE [THREADS]`: one thread unless asked.
            let threads = args.get(2).map_or(1, |t| t.parse().unwrap_or(1));
            seconds(|| {
                let cap = Capture::read_on(arg(1), threads).unwrap_or_else(|e| die(&e.to_string()));
                std::hint::black_box(&cap);
            })
        }
        Some("save") => {
            let cap = Capture::read(arg(1)).unwrap_or_else(|e| die(&e.to_string()));
            seconds(|| cap.save(arg(2)).unwrap_or_else(|e| die(&e.to_string())))
        }
        Some("plain-read") => seconds(|| {
            let b = std::fs::read(arg(1)).unwrap_or_else(|e| die(&e.to_string()));
            std::hint::black_box(&b);
        }),
        Some("plain-write") => {
            let b = std::fs::read(arg(1)).unwrap_or_else(|e| die(&e.to_string()));
            seconds(|| {
                let mut f = std::fs::File::create(arg(2)).unwrap_or_else(|e| die(&e.to_string()));
                f.write_all(&b).unwrap_or_else(|e| die(&e.to_string()));
                f.sync_all().unwrap_or_else(|e| die(&e.to_string()));
            })
        }
        _ => return false,
    };
    println!("seconds={s}");
    true
}

/// Wall seconds (as timed here), peak RSS in bytes (from `time -v`) and
/// the `seconds=` a child printed, if any.
struct Run {
    wall: f64,
    rss: u64,
    user: f64,
    sys: f64,
    inner: Option<f64>,
}

/// Set by `--wait4`: no `/usr/bin/time`.
static WAIT4: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn timed(program: &Path, args: &[&Path], scratch: &Path) -> Run {
    if WAIT4.load(std::sync::atomic::Ordering::Relaxed) || !Path::new("/usr/bin/time").exists() {
        return timed_by_wait4(program, args, scratch);
    }
    let tv = scratch.join("time-v.txt");
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg("-o")
        .arg(&tv)
        .arg(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| die(&format!("/usr/bin/time: {e} (apt-get install time)")));
    let wall = t.elapsed().as_secs_f64();
    if !out.status.success() {
        die(&format!(
            "{} {:?} failed: {}{}",
            program.display(),
            args,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let tv_text = std::fs::read_to_string(&tv).unwrap_or_default();
    let field = |name: &str| -> f64 {
        tv_text
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let rss_kb = field("Maximum resident set size (kbytes):") as u64;
    let inner = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("seconds=").and_then(|v| v.parse().ok()));
    Run {
        wall,
        rss: rss_kb * 1024,
        user: field("User time (seconds):"),
        sys: field("System time (seconds):"),
        inner,
    }
}

/// [`timed`] without `/usr/bin/time`: the child's resource usage as
/// `wait4` reports it (what `time -v` prints).
fn timed_by_wait4(program: &Path, args: &[&Path], scratch: &Path) -> Run {
    use std::io::Read;
    let err_path = scratch.join("child-stderr.txt");
    let err = std::fs::File::create(&err_path).unwrap_or_else(|e| die(&e.to_string()));
    let t = Instant::now();
    // Reaped by the wait4 below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| die(&format!("{}: {e}", program.display())));
    let mut stdout = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut stdout);
    }
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our child's, not waited for yet; both pointers
    // are to live locals.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = t.elapsed().as_secs_f64();
    let exited_ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if pid < 0 || !exited_ok {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        die(&format!(
            "{} {:?} failed: {stdout}{err}",
            program.display(),
            args
        ));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Run {
        wall,
        rss: usage.ru_maxrss as u64 * 1024,
        user: secs(usage.ru_utime),
        sys: secs(usage.ru_stime),
        inner: stdout
            .lines()
            .find_map(|l| l.strip_prefix("seconds=").and_then(|v| v.parse().ok())),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn mb(bytes: f64) -> f64 {
    bytes / 1e6
}

fn remove(p: &Path) {
    let _ = std::fs::remove_file(p);
}

struct Tool {
    label: String,
    ktrace: PathBuf,
    host_bench: PathBuf,
    /// Passed to `ktrace export` after the capture and `-o`.
    export_args: Vec<String>,
}

/// One format's `ktrace export` runs.
#[derive(Default, Clone)]
struct ExportSamples {
    wall: Vec<f64>,
    user: Vec<f64>,
    sys: Vec<f64>,
    rss: Vec<f64>,
    /// The trace's size.
    bytes: u64,
}

#[derive(Default)]
struct Samples {
    /// Per format, in the order of `--formats`.
    export: Vec<ExportSamples>,
    load: Vec<f64>,
    load_rss: Vec<f64>,
    save: Vec<f64>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if subcommand(&args) {
        return;
    }
    let mut sizes = vec![1_000_000u64, 10_000_000, 100_000_000];
    let mut runs = 3usize;
    let mut dir = PathBuf::from("target/host-bench");
    let mut out_dir: Option<PathBuf> = None;
    let mut tools: Vec<Tool> = Vec::new();
    let mut keep = false;
    let mut io = true;
    let mut formats = vec!["chrome".to_string(), "perfetto".to_string()];
    let mut threads: Vec<String> = Vec::new();
    let me = std::env::current_exe().unwrap_or_else(|e| die(&e.to_string()));
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| die("missing value"));
        match a.as_str() {
            "--sizes" => sizes = val().split(',').map(parse_count).collect(),
            "--runs" => runs = val().parse().unwrap_or_else(|_| die("bad --runs")),
            "--dir" => dir = PathBuf::from(val()),
            "--out-dir" => out_dir = Some(PathBuf::from(val())),
            "--keep" => keep = true,
            "--no-io" => io = false,
            "--wait4" => WAIT4.store(true, std::sync::atomic::Ordering::Relaxed),
            "--formats" => {
                formats = val().split(',').map(str::to_string).collect();
                if let Some(f) = formats
                    .iter()
                    .find(|f| !["chrome", "perfetto"].contains(&f.as_str()))
                {
                    die(&format!("unknown format {f:?} (chrome, perfetto)"));
                }
            }
            "--tool" => {
                let v = val();
                let (label, rest) = v
                    .split_once('=')
                    .unwrap_or_else(|| die("--tool LABEL=DIR [ARGS]"));
                let mut words = rest.split_whitespace();
                let d = PathBuf::from(words.next().unwrap_or_else(|| die("--tool LABEL=DIR")));
                let mut host_bench = d.join("host_bench");
                if !host_bench.exists() {
                    host_bench = d.join("examples/host_bench");
                }
                tools.push(Tool {
                    label: label.into(),
                    ktrace: d.join("ktrace"),
                    host_bench,
                    export_args: words.map(str::to_string).collect(),
                });
            }
            "--threads" => threads = val().split(',').map(str::to_string).collect(),
            "-h" | "--help" => {
                println!("see the doc comment of ktrace-runtime/examples/host_bench.rs");
                return;
            }
            other => die(&format!("unknown option {other}")),
        }
    }
    // target/release/examples/host_bench -> target/release/ktrace; a
    // folder of both binaries side by side works too.
    let here = me
        .parent()
        .unwrap_or_else(|| die("cannot find the ktrace binary"));
    let release = if here.join("ktrace").exists() {
        here
    } else {
        here.parent()
            .unwrap_or_else(|| die("cannot find the ktrace binary"))
    };
    for n in &threads {
        tools.push(Tool {
            label: format!("--threads {n}"),
            ktrace: release.join("ktrace"),
            host_bench: me.clone(),
            export_args: vec!["--threads".into(), n.clone()],
        });
    }
    if tools.is_empty() {
        tools.push(Tool {
            label: "current".into(),
            ktrace: release.join("ktrace"),
            host_bench: me.clone(),
            export_args: Vec::new(),
        });
    }
    for t in &tools {
        for p in [&t.ktrace, &t.host_bench] {
            if !p.exists() {
                die(&format!(
                    "{} not found (cargo build --release -p ktrace-cli; cargo build --release -p ktrace-runtime --example host_bench)",
                    p.display()
                ));
            }
        }
    }
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| die(&e.to_string()));
    let out_dir = out_dir.unwrap_or_else(|| dir.clone());
    std::fs::create_dir_all(&out_dir).unwrap_or_else(|e| die(&e.to_string()));
    let command = std::iter::once("host_bench".to_string())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");

    let mut export_rows = Vec::new();
    let mut io_rows = Vec::new();
    for &target in &sizes {
        let plan = common::Plan::for_events(target);
        let cap_path = dir.join(format!("synth-{target}.ktrace"));
        eprintln!(
            "generating {} events ({} blocks x {} warps x {} events, cap {}) -> {}",
            plan.events(),
            plan.blocks,
            common::WARPS,
            plan.events_per_warp,
            plan.cap,
            cap_path.display()
        );
        let gen = timed(
            &me,
            &[Path::new("gen"), Path::new(&target.to_string()), &cap_path],
            &dir,
        );
        let file_bytes = std::fs::metadata(&cap_path).map(|m| m.len()).unwrap_or(0);
        let raw_bytes = {
            let shape = common::launch_shape(&plan);
            shape.buffer_bytes().unwrap_or(0)
        };
        eprintln!(
            "  {:.1} MB file, raw buffer {:.1} MB, generated in {:.1} s",
            mb(file_bytes as f64),
            mb(raw_bytes as f64),
            gen.wall
        );
        // The trace of each format; the summary is named the same for both.
        let traces: Vec<PathBuf> = formats
            .iter()
            .map(|f| {
                let ext = if f == "perfetto" { "pftrace" } else { "json" };
                out_dir.join(format!("synth-{target}.{ext}"))
            })
            .collect();
        let summary = out_dir.join(format!("synth-{target}_summary.json"));
        // Capture copies go beside the capture, whatever --out-dir says.
        let copy = dir.join(format!("synth-{target}-copy.ktrace"));
        let mut samples: Vec<Samples> = tools
            .iter()
            .map(|_| Samples {
                export: vec![ExportSamples::default(); formats.len()],
                ..Samples::default()
            })
            .collect();
        let mut plain_read = Vec::new();
        let mut plain_write = Vec::new();
        let mut cp = Vec::new();
        for run in 0..runs {
            for (t, s) in tools.iter().zip(samples.iter_mut()) {
                for ((format, trace), e) in formats.iter().zip(&traces).zip(s.export.iter_mut()) {
                    let mut args = vec![Path::new("export"), &cap_path, Path::new("-o"), trace];
                    args.extend(t.export_args.iter().map(Path::new));
                    let r = timed(&t.ktrace, &args, &dir);
                    e.bytes = std::fs::metadata(trace).map(|m| m.len()).unwrap_or(0);
                    remove(trace);
                    remove(&summary);
                    eprintln!(
                        "  run {run} {} {format}: export {:.2} s ({:.2} user, {:.2} sys), {:.1} M events/s, peak RSS {:.0} MB, {:.1} bytes/event",
                        t.label,
                        r.wall,
                        r.user,
                        r.sys,
                        plan.events() as f64 / r.wall / 1e6,
                        mb(r.rss as f64),
                        e.bytes as f64 / plan.events() as f64,
                    );
                    e.wall.push(r.wall);
                    e.user.push(r.user);
                    e.sys.push(r.sys);
                    e.rss.push(r.rss as f64);
                }
                if io {
                    let r = timed(&t.host_bench, &[Path::new("load"), &cap_path], &dir);
                    s.load.push(r.inner.unwrap_or(r.wall));
                    s.load_rss.push(r.rss as f64);
                    let r = timed(&t.host_bench, &[Path::new("save"), &cap_path, &copy], &dir);
                    s.save.push(r.inner.unwrap_or(r.wall));
                    remove(&copy);
                }
            }
            if io {
                let r = timed(&me, &[Path::new("plain-read"), &cap_path], &dir);
                plain_read.push(r.inner.unwrap_or(r.wall));
                let r = timed(&me, &[Path::new("plain-write"), &cap_path, &copy], &dir);
                plain_write.push(r.inner.unwrap_or(r.wall));
                remove(&copy);
                let t = Instant::now();
                let ok = Command::new("cp")
                    .arg(&cap_path)
                    .arg(&copy)
                    .status()
                    .is_ok_and(|s| s.success());
                cp.push(t.elapsed().as_secs_f64());
                if !ok {
                    die("cp failed");
                }
                remove(&copy);
            }
        }
        for (t, s) in tools.iter().zip(samples) {
            for (format, e) in formats.iter().zip(&s.export) {
                let wall = median(e.wall.clone());
                let rss = median(e.rss.clone());
                let user = median(e.user.clone());
                export_rows.push(format!(
                    "| {} | {} | {:.1} | {} | {:.0} | {:.1} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.0} | {:.2} |",
                    human(target),
                    plan.events(),
                    mb(raw_bytes as f64),
                    format,
                    mb(e.bytes as f64),
                    e.bytes as f64 / plan.events() as f64,
                    t.label,
                    wall,
                    user,
                    median(e.sys.clone()),
                    plan.events() as f64 / wall / 1e6,
                    plan.events() as f64 / user / 1e6,
                    mb(rss),
                    rss / raw_bytes as f64,
                ));
            }
            if io {
                let f = file_bytes as f64;
                io_rows.push(format!(
                    "| {} | {:.1} | {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.0} | {:.0} |",
                    human(target),
                    mb(f),
                    t.label,
                    mb(f) / median(s.load.clone()),
                    mb(median(s.load_rss.clone())),
                    median(s.load_rss) / f,
                    mb(f) / median(s.save.clone()),
                    mb(f) / median(plain_read.clone()),
                    mb(f) / median(plain_write.clone()),
                    mb(f) / median(cp.clone()),
                ));
            }
        }
        if !keep {
            remove(&cap_path);
        }
    }
    let _ = std::fs::remove_file(dir.join("time-v.txt"));
    let _ = std::fs::remove_file(dir.join("child-stderr.txt"));
    println!("`{command}` (median of {runs} runs)\n");
    println!("| target | events | raw MB | format | trace MB | bytes/event | build | wall s | user s | sys s | M events/s (wall) | M events/s (user) | peak RSS MB | RSS / raw |");
    println!("| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &export_rows {
        println!("{r}");
    }
    if io {
        println!();
        println!("| target | file MB | build | load MB/s | load peak RSS MB | RSS / file | save MB/s (fsync) | plain read MB/s | plain write+fsync MB/s | cp MB/s |");
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for r in &io_rows {
            println!("{r}");
        }
    }
}

fn human(n: u64) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{} M", n / 1_000_000)
    } else if n >= 1000 && n % 1000 == 0 {
        format!("{} k", n / 1000)
    } else {
        n.to_string()
    }
}
