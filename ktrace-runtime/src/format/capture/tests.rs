use super::*;
use crate::synth::continuous_capture;

/// `cap` with only the launches `keep` keeps.
fn filtered(cap: &Capture, keep: impl Fn(&LaunchCapture) -> bool) -> Capture {
    Capture {
        launches: cap.launches.iter().filter(|l| keep(l)).cloned().collect(),
        ..cap.clone()
    }
}

/// Reads `path` whole and with each of a few selections; each selection
/// gives what the whole read gives, less the launches it drops, and sees
/// every launch once, in order.
fn check_selections(path: &Path) {
    let whole = Capture::read(path).unwrap();
    let rules: [&dyn Fn(&LaunchCapture) -> bool; 4] =
        [&|_| true, &|_| false, &|l| l.shape.launch % 2 == 0, &|l| {
            l.shape.launch == whole.launches.last().map_or(0, |l| l.shape.launch)
        }];
    for (i, keep) in rules.into_iter().enumerate() {
        let mut seen = Vec::new();
        let sel = Capture::read_selected(path, |l| {
            seen.push(l.shape.launch);
            keep(l)
        })
        .unwrap();
        assert_eq!(sel, filtered(&whole, keep), "{}: rule {i}", path.display());
        let all: Vec<u32> = whole.launches.iter().map(|l| l.shape.launch).collect();
        assert_eq!(seen, all, "{}: rule {i}", path.display());
    }
}

#[test]
fn read_selected_keeps_the_chosen_launches_of_a_version_3_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("continuous.ktrace");
    let cap = continuous_capture();
    cap.save(&path).unwrap();
    check_selections(&path);
    let gemm = Capture::read_selected(&path, |l| l.kernel == "gemm").unwrap();
    assert_eq!(gemm.launches.len(), 5);
    assert_eq!(gemm.clock_syncs, cap.clock_syncs);
    assert_eq!(gemm.steps, cap.steps);
    assert_eq!(gemm.sites, cap.sites);
    assert_eq!(gemm.stream_end, Some(StreamEnd::Closed));
}

#[test]
fn read_selected_of_a_cut_version_3_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Vec::new();
    continuous_capture().write_to(&mut b).unwrap();
    // Cut inside the end record, and then well inside the launches.
    for cut in [b.len() - 3, b.len() / 2, b.len() / 5] {
        let path = dir.path().join(format!("cut{cut}.ktrace"));
        std::fs::write(&path, &b[..cut]).unwrap();
        let whole = Capture::read(&path).unwrap();
        assert!(
            matches!(whole.stream_end, Some(StreamEnd::Cut { .. })),
            "{cut}"
        );
        check_selections(&path);
        let keep = |l: &LaunchCapture| l.kernel != "gemm";
        assert_eq!(
            Capture::from_bytes_selected(&b[..cut], keep).unwrap(),
            filtered(&whole, keep)
        );
    }
}

#[test]
fn read_selected_of_version_1_and_2_files() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let files = ["sample_v1.ktrace", "h200_two_gpus_gpu0.ktrace"];
    if !data.join(files[1]).exists() {
        eprintln!("no tests/data beside this crate (packaged build); skipped");
        return;
    }
    for f in files {
        let path = data.join(f);
        let head = CaptureStream::open(&path).unwrap().head().format_version;
        assert!(head < 3, "{f}: version {head}");
        check_selections(&path);
    }
}
