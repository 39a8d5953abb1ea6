//! The Python reader in `docs/capture-format.md` reads the committed
//! captures (versions 1 and 2) to the same buffers as ktrace's reader.

use std::path::Path;
use std::process::Command;

use ktrace_runtime::format::capture::Capture;

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
    let files = [
        "sample_v1.ktrace",
        "h200_two_gpus_gpu0.ktrace",
        "h200_gemm2048_anchors.ktrace",
    ];
    let driver = format!(
        "{code}\nfnv = lambda b: __import__('functools').reduce(lambda h, x: ((h ^ x) * 0x100000001b3) % (1 << 64), b, 0xcbf29ce484222325)\n\
         for f in {files:?}:\n    d, sms, khz, regions, syncs, launches = read_capture({dir:?} + '/' + f)\n    \
         print(f, d, len(syncs), len(launches), ' '.join('%s:%d' % (l['kernel'] or '-', fnv(l['raw'])) for l in launches))\n",
        dir = data.display().to_string(),
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
            let c = Capture::read(data.join(f)).unwrap();
            let ls: Vec<String> = c
                .launches
                .iter()
                .map(|l| {
                    let k = if l.kernel.is_empty() { "-" } else { &l.kernel };
                    format!("{k}:{}", fnv(&l.raw))
                })
                .collect();
            format!(
                "{f} {} {} {} {}\n",
                c.device.name,
                c.clock_syncs.len(),
                c.launches.len(),
                ls.join(" ")
            )
        })
        .collect();
    assert_eq!(got, want);
}
