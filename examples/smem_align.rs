//! Where a kernel's dynamic shared memory starts, untraced and traced with
//! each recorder: kernels that swizzle their tiles for TMA and `wgmma`
//! need it 1,024-byte aligned, and the shared-memory recorders' static
//! shared memory, which comes before it, must leave it where it is modulo
//! 1,024. Fails when a traced build moves it.
//!
//! `KTRACE=1 cargo run --release -p ktrace-examples --example smem_align`

use cudarc::driver::{LaunchConfig, PushKernelArg};
use ktrace_examples::{announce, fail, gpu, kernels, trace_config, REGIONS};
use ktrace_runtime::{KernelModule, KtraceArg, TraceSession};

const THREADS: u32 = 128;
const BLOCKS: u32 = 4;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    announce("smem_align");
    let (ctx, stream) = gpu();
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 4096,
    };
    // (name, traced build, the untraced build it is compared with): the
    // last one is the kernel with 100 bytes of static shared memory of its
    // own beside the recorder's.
    let builds: [(&str, &KernelModule, &KernelModule); 4] = [
        ("store recorder", &kernels::SMEM_ALIGN, &kernels::SMEM_ALIGN),
        (
            "newest-N recorder",
            &kernels::SMEM_ALIGN_NEWEST,
            &kernels::SMEM_ALIGN,
        ),
        (
            "shared-memory recorder",
            &kernels::SMEM_ALIGN_SMEM,
            &kernels::SMEM_ALIGN,
        ),
        (
            "newest-N recorder beside the kernel's own 100 bytes",
            &kernels::SMEM_ALIGN_OWN_NEWEST,
            &kernels::SMEM_ALIGN_OWN_NEWEST,
        ),
    ];
    let mut out = stream.alloc_zeros::<u32>(BLOCKS as usize)?;
    let mut base =
        |module: &KernelModule, traced: bool| -> Result<u32, Box<dyn std::error::Error>> {
            let m = ktrace_runtime::load_module_variant(&ctx, module, traced)?;
            let f = m.load_function("smem_align")?;
            let session = if traced {
                Some(TraceSession::new(
                    &stream,
                    trace_config("smem_align", &cfg),
                    REGIONS,
                )?)
            } else {
                None
            };
            let arg = session.as_ref().map_or(KtraceArg::default(), |s| s.arg());
            let mut l = stream.launch_builder(&f);
            l.arg(&mut out).arg(&arg);
            unsafe { l.launch(cfg) }?;
            stream.synchronize()?;
            if let Some(mut s) = session {
                s.finish_launch()?;
                s.discard();
            }
            let bases = stream.clone_dtoh(&out)?;
            if bases.iter().any(|&b| b != bases[0]) {
                fail(&format!(
                    "blocks disagree on the dynamic shared memory's address: {bases:?}"
                ));
            }
            Ok(bases[0])
        };
    let mut moved = Vec::new();
    for (name, module, plain) in builds {
        let untraced = base(plain, false)?;
        let traced = base(module, true)?;
        println!(
            "{name}: dynamic shared memory at 0x{untraced:x} untraced ({} mod 1024), 0x{traced:x} traced ({} mod 1024)",
            untraced % 1024,
            traced % 1024,
        );
        if traced % 1024 != untraced % 1024 {
            moved.push(name);
        }
    }
    if !moved.is_empty() {
        fail(&format!(
            "the {} moved the dynamic shared memory off its alignment",
            moved.join(", ")
        ));
    }
    println!("smem_align: ok");
    Ok(())
}
