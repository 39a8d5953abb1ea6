//! The Python reader in `docs/capture-format.md` reads every committed
//! capture in `tests/data` (each format and layout version there) and
//! version 3 captures written here, whole and cut, to the same buffers as
//! ktrace's reader.

use std::path::Path;
use std::process::Command;

use ktrace_runtime::format::capture::{Capture, HostStep, LaunchOrigin, SiteRecord, StreamEnd};
use ktrace_runtime::format::stalls::StallSamples;

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[test]
fn the_documented_python_reader_agrees_with_ktrace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = root.join("docs/capture-format.md");
    let data = root.join("tests/data");
    if !doc.exists() || !data.exists() {
        eprintln!("no docs/ or tests/data beside this crate (packaged build); skipped");
        return;
    }
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 not found; skipped");
        return;
    }
    let text = std::fs::read_to_string(&doc).unwrap();
    let start = text.find("```python\n").expect("a python block") + "```python\n".len();
    let code = &text[start..];
    let code = &code[..code.find("```").unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    let v3 = tmp.path().join("v3.ktrace");
    let cut = tmp.path().join("v3_cut.ktrace");
    let bytes = write_v3(&data.join("h200_two_gpus_gpu0.ktrace"), &v3);
    std::fs::write(&cut, &bytes[..bytes.len() - 40]).unwrap();
    // Every committed capture (each format and layout version the
    // fixtures have), and the version 3 files written here.
    let mut committed: Vec<std::path::PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ktrace"))
        .collect();
    committed.sort();
    assert!(committed.len() >= 19, "{committed:?}");
    let files: Vec<std::path::PathBuf> = committed.into_iter().chain([v3, cut]).collect();
    let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let driver = format!(
        "{code}\nfnv = lambda b: __import__('functools').reduce(lambda h, x: ((h ^ x) * 0x100000001b3) % (1 << 64), b, 0xcbf29ce484222325)\n\
         for f in {paths:?}:\n    d, sms, khz, regions, syncs, launches, x = read_capture(f)\n    \
         print(f.rsplit('/', 1)[-1], d, len(syncs), len(launches), len(x['steps']), len(x['sites']), x['end'] and x['end'][0], \
         len(x['stalls']), sum(n for s in x['stalls'] for p in s['pcs'] for r, n in p['counts'] if not s['reasons'][r].endswith('_not_issued')), \
         ' '.join('%s:%d:%s:%s' % (l['kernel'] or '-', fnv(l['raw']), l['origin'] and l['origin'][1], l['origin'] and l['origin'][3]) for l in launches))\n",
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(&driver)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    let want: String = files
        .iter()
        .map(|f| {
            let c = Capture::read(f).unwrap();
            let ls: Vec<String> = c
                .launches
                .iter()
                .map(|l| {
                    let k = if l.kernel.is_empty() { "-" } else { &l.kernel };
                    let epoch = l.origin.map_or("None".to_string(), |o| o.epoch.to_string());
                    let step = l
                        .origin
                        .and_then(|o| o.step)
                        .map_or("None".to_string(), |s| s.to_string());
                    format!("{k}:{}:{epoch}:{step}", fnv(&l.raw))
                })
                .collect();
            let end = match c.stream_end {
                None => "None",
                Some(StreamEnd::Closed) => "closed",
                Some(StreamEnd::Cut { .. }) => "cut",
            };
            let samples: u64 = c.stalls.iter().map(StallSamples::samples).sum();
            format!(
                "{} {} {} {} {} {} {end} {} {samples} {}\n",
                f.file_name().unwrap().to_string_lossy(),
                c.device.name,
                c.clock_syncs.len(),
                c.launches.len(),
                c.steps.len(),
                c.sites.len(),
                c.stalls.len(),
                ls.join(" ")
            )
        })
        .collect();
    assert_eq!(got, want);
}

/// Writes the capture at `from` as version 3 to `to`, with origins, steps
/// and sites (one site twice); returns the bytes.
fn write_v3(from: &Path, to: &Path) -> Vec<u8> {
    let mut c = Capture::read(from).unwrap();
    for (i, l) in c.launches.iter_mut().enumerate() {
        l.origin = (i % 2 == 0).then_some(LaunchOrigin {
            site: 0,
            epoch: 10 + i as u32,
            grid_id: 99,
            step: (i % 4 == 0).then_some(1000 + i as u64),
        });
    }
    let site = SiteRecord {
        site: 0,
        kernel: "k".into(),
        launches: 20,
        kept: 2,
        dropped: 0,
        when_full: Default::default(),
    };
    c.steps = vec![HostStep {
        name: "step".into(),
        index: 0,
        begin_ns: 1,
        end_ns: 2,
    }];
    c.sites = vec![site.clone(), SiteRecord { site: 1, ..site }];
    c.save(to).unwrap();
    std::fs::read(to).unwrap()
}
